//! The language layer's errors: why a block could not be built, or why a testbench rejected
//! it. Each carries a message that names the parameter, the operand or the part at fault; the
//! kernel language's own errors ([`crate::pipeline::dsl::DslError`]) add the source location.

use std::fmt;

/// Why a block, a kernel or a design could not be built, or why a testbench failed; the kind
/// says which, the message (see [`Error::message`]) says what, naming the parameter or part.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Error {
    /// A parameter outside what a block supports; the message names it and the allowed range.
    Parameter(String),
    /// Operands a kernel operation cannot combine (types, formats, widths).
    Operand(String),
    /// Parts of a design that do not fit together: stream shapes, an unclosed recurrence, a
    /// value crossing clock domains without a synchroniser.
    Design(String),
    /// A testbench saw the design differ from its reference.
    Mismatch(String),
}

impl Error {
    /// The same error with `what` in front of its message (`kernel `x`: …`).
    pub fn context(self, what: impl fmt::Display) -> Error {
        let with = |m: String| format!("{what}: {m}");
        match self {
            Error::Parameter(m) => Error::Parameter(with(m)),
            Error::Operand(m) => Error::Operand(with(m)),
            Error::Design(m) => Error::Design(with(m)),
            Error::Mismatch(m) => Error::Mismatch(with(m)),
        }
    }

    /// The message, without the kind.
    pub fn message(&self) -> &str {
        match self {
            Error::Parameter(m) | Error::Operand(m) | Error::Design(m) | Error::Mismatch(m) => m,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.message())
    }
}

impl std::error::Error for Error {}

/// Callers that report errors as text (the command line, the check flow) take the message.
impl From<Error> for String {
    fn from(e: Error) -> String {
        e.message().to_string()
    }
}
