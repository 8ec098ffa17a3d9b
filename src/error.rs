//! weft's errors: a description or data file that cannot be used, a file that cannot be read or
//! written, a block, simulation or outside tool that failed, or a check that found a difference.

use std::fmt;

/// Everything a weft command or library call can fail with. It displays as its message alone;
/// [`Error::context`] puts the file, key or step in front.
#[derive(Debug)]
pub enum Error {
    /// A system description, kernel source, option or data file that cannot be used; the message
    /// names the file, the key or line, and what is allowed.
    Input(String),
    /// A file that could not be read or written.
    Io(String),
    /// A block could not be built.
    Ip(weft_ip::Error),
    /// A simulation failed.
    Sim(weft_sim::Error),
    /// The language layer refused a design.
    Hdl(weft_hdl::Error),
    /// An outside tool (Verilator, Yosys, nextpnr, …) is missing or failed.
    Tool(weft_tools::ToolError),
    /// A check found a generated file, a design or a measurement differ from what it must be.
    Check(String),
}

impl Error {
    /// The same error with `what` in front of its message.
    pub fn context(self, what: impl fmt::Display) -> Error {
        match self {
            Error::Input(m) => Error::Input(format!("{what}: {m}")),
            Error::Io(m) => Error::Io(format!("{what}: {m}")),
            Error::Check(m) => Error::Check(format!("{what}: {m}")),
            Error::Ip(e) => Error::Ip(e.context(what)),
            Error::Sim(e) => Error::Sim(e.context(what)),
            Error::Hdl(e) => Error::Hdl(e.context(what)),
            other => Error::Check(format!("{what}: {other}")),
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Input(m) | Error::Io(m) | Error::Check(m) => f.write_str(m),
            Error::Ip(e) => write!(f, "{e}"),
            Error::Sim(e) => write!(f, "{e}"),
            Error::Hdl(e) => write!(f, "{e}"),
            Error::Tool(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for Error {}

impl From<weft_ip::Error> for Error {
    fn from(e: weft_ip::Error) -> Error {
        Error::Ip(e)
    }
}

impl From<weft_sim::Error> for Error {
    fn from(e: weft_sim::Error) -> Error {
        Error::Sim(e)
    }
}

impl From<weft_hdl::Error> for Error {
    fn from(e: weft_hdl::Error) -> Error {
        Error::Hdl(e)
    }
}

impl From<weft_tools::ToolError> for Error {
    fn from(e: weft_tools::ToolError) -> Error {
        Error::Tool(e)
    }
}

impl From<weft_hdl::export::ExportError> for Error {
    fn from(e: weft_hdl::export::ExportError) -> Error {
        Error::Ip(weft_ip::Error::Config(e.0))
    }
}

impl From<weft_sim::cosim::CosimError> for Error {
    fn from(e: weft_sim::cosim::CosimError) -> Error {
        Error::Sim(e.into())
    }
}

/// A kernel source's error: its line and column.
impl From<weft_hdl::pipeline::dsl::DslError> for Error {
    fn from(e: weft_hdl::pipeline::dsl::DslError) -> Error {
        Error::Input(e.to_string())
    }
}

impl From<serde_json::Error> for Error {
    fn from(e: serde_json::Error) -> Error {
        Error::Io(e.to_string())
    }
}

impl From<std::io::Error> for Error {
    fn from(e: std::io::Error) -> Error {
        Error::Io(e.to_string())
    }
}

/// The command line reports errors as text.
impl From<Error> for String {
    fn from(e: Error) -> String {
        e.to_string()
    }
}
