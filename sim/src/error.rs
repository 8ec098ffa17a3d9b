//! weft-sim's errors: a design that could not be built or verilated, a harness argument out of
//! range, hardware that did not finish within its cycle limit, or a result that differs from
//! its reference.

use std::fmt;

use crate::cosim::CosimError;

/// What went wrong in a simulation: building the design, running it, or checking its result.
/// [`Error::context`] puts where it happened in front of the message; `Display` gives the
/// message alone.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Error {
    /// The block could not be built from its configuration.
    Ip(weft_ip::Error),
    /// The language layer refused the design.
    Hdl(weft_ip::weft_hdl::Error),
    /// Verilator, the C++ compiler or the verilated model failed.
    Cosim(CosimError),
    /// A file the harness writes or reads (a verilated model's sources) could not be used.
    Io(String),
    /// A harness argument outside what the harness supports; the message names it.
    Config(String),
    /// The hardware did not reach what the harness waited for within its cycle limit.
    Stuck(String),
    /// The hardware's result differs from the reference.
    Mismatch(String),
}

impl Error {
    /// The same error with `what` in front of its message.
    pub fn context(self, what: impl fmt::Display) -> Error {
        match self {
            Error::Ip(e) => Error::Ip(e.context(what)),
            Error::Hdl(e) => Error::Hdl(e.context(what)),
            Error::Cosim(e) => Error::Io(format!("{what}: {e}")),
            Error::Io(m) => Error::Io(format!("{what}: {m}")),
            Error::Config(m) => Error::Config(format!("{what}: {m}")),
            Error::Stuck(m) => Error::Stuck(format!("{what}: {m}")),
            Error::Mismatch(m) => Error::Mismatch(format!("{what}: {m}")),
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Ip(e) => write!(f, "{e}"),
            Error::Hdl(e) => write!(f, "{e}"),
            Error::Cosim(e) => write!(f, "{e}"),
            Error::Io(m) | Error::Config(m) | Error::Stuck(m) | Error::Mismatch(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for Error {}

impl From<weft_ip::Error> for Error {
    fn from(e: weft_ip::Error) -> Error {
        Error::Ip(e)
    }
}

impl From<weft_ip::weft_hdl::Error> for Error {
    fn from(e: weft_ip::weft_hdl::Error) -> Error {
        Error::Hdl(e)
    }
}

impl From<CosimError> for Error {
    fn from(e: CosimError) -> Error {
        Error::Cosim(e)
    }
}

impl From<std::io::Error> for Error {
    fn from(e: std::io::Error) -> Error {
        Error::Io(e.to_string())
    }
}

impl From<weft_ip::weft_hdl::export::ExportError> for Error {
    fn from(e: weft_ip::weft_hdl::export::ExportError) -> Error {
        Error::Ip(weft_ip::Error::Config(e.0))
    }
}

/// Callers that report errors as text (the command line, the check flow) take the message.
impl From<Error> for String {
    fn from(e: Error) -> String {
        e.to_string()
    }
}

/// A simulated block's check, as a shipped module's testbench reports it.
impl From<Error> for weft_ip::Error {
    fn from(e: Error) -> weft_ip::Error {
        match e {
            Error::Ip(e) => e,
            Error::Hdl(e) => weft_ip::Error::Hdl(e),
            other => weft_ip::Error::Mismatch(other.to_string()),
        }
    }
}
