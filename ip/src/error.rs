//! weft-ip's errors: why a block could not be built from its configuration, why an input file
//! could not be read, or why a check found a block differ from its reference.

use std::fmt;

use weft_hdl::pipeline::dsl::DslError;

/// Every failure weft-ip reports: a bad configuration, a refused design, an unreadable input
/// file, a kernel or application source error, or a check that found a mismatch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Error {
    /// A configuration field outside what the block supports; the message names the field and
    /// the allowed range.
    Config(String),
    /// The language layer refused the design.
    Hdl(weft_hdl::Error),
    /// An input file that could not be read: what it is, and the line (from 1) where known.
    Input {
        /// What was being read (a file name or the kind of input).
        what: &'static str,
        /// The line, counted from 1, where the problem was found, if known.
        line: Option<usize>,
        /// What is wrong.
        message: String,
    },
    /// A check saw the block differ from its reference.
    Mismatch(String),
    /// A kernel's source (`origin`: its file or the shipped kernel's name) does not parse or
    /// type-check; the error carries the line and column.
    Kernel {
        /// The kernel file, or the shipped kernel's name.
        origin: String,
        /// The parse or type error, with its line and column.
        error: DslError,
    },
    /// An application file (`origin`) does not parse or does not fit its mesh; the error
    /// carries the line and column.
    Source {
        /// The application file.
        origin: String,
        /// The parse or mesh error, with its line and column.
        error: DslError,
    },
}

impl Error {
    /// The same error with `what` in front of its message (`node: …`).
    pub fn context(self, what: impl fmt::Display) -> Error {
        match self {
            Error::Config(m) => Error::Config(format!("{what}: {m}")),
            Error::Hdl(e) => Error::Hdl(e.context(what)),
            Error::Input { what: w, line, message } => Error::Input { what: w, line, message: format!("{what}: {message}") },
            Error::Mismatch(m) => Error::Mismatch(format!("{what}: {m}")),
            Error::Kernel { origin, error } => Error::Kernel { origin: format!("{what}: {origin}"), error },
            Error::Source { origin, error } => Error::Source { origin: format!("{what}: {origin}"), error },
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Config(m) | Error::Mismatch(m) => f.write_str(m),
            Error::Hdl(e) => write!(f, "{e}"),
            Error::Input { what, line: Some(line), message } => write!(f, "{what}:{line}: {message}"),
            Error::Input { what, line: None, message } => write!(f, "{what}: {message}"),
            Error::Kernel { origin, error } | Error::Source { origin, error } => write!(f, "{origin}: {error}"),
        }
    }
}

impl std::error::Error for Error {}

impl From<weft_hdl::Error> for Error {
    fn from(e: weft_hdl::Error) -> Error {
        Error::Hdl(e)
    }
}

impl Error {
    /// A kernel source error at `origin`.
    pub fn kernel(origin: impl fmt::Display) -> impl Fn(DslError) -> Error {
        let origin = origin.to_string();
        move |error| Error::Kernel { origin: origin.clone(), error }
    }
}

/// Callers that report errors as text (the command line, the check flow) take the message.
impl From<Error> for String {
    fn from(e: Error) -> String {
        e.to_string()
    }
}

impl From<Error> for weft_hdl::export::ExportError {
    fn from(e: Error) -> Self {
        weft_hdl::export::ExportError(e.to_string())
    }
}
