#![warn(missing_docs)]

//! weft-tools: runners for the external tools of the check flow: Verilator (lint), Yosys (synthesis, with
//! its statistics parsed), Icarus (compile) and nextpnr (place and route for timing). A missing
//! tool is an error that says how to install it; a failing tool is an error that carries the
//! tool's own message.
//!
//! The readers of the tools' reports ([`parse_synth_log`], [`levels`], [`ports`]) need no tool
//! installed: they work on text a tool wrote earlier.

mod icarus;
pub mod levels;
mod nextpnr;
pub mod ports;
mod verilator;
mod yosys;

pub use icarus::{icarus_compile, icarus_compile_files};
pub use nextpnr::{ooc_harness, place_and_route, place_and_route_seed, TimingReport};
pub use verilator::{verilator_lint, verilator_lint_files};
pub use yosys::{parse_synth_log, yosys_synth, yosys_synth_for, Family, SynthReport};

use std::fmt;
use std::path::Path;
use std::process::{Command, Output};

/// Why running an outside tool, or reading what it wrote, failed. Its `Display` text is the
/// message for the user.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolError {
    /// The program is not installed (or not on `PATH`).
    Missing {
        /// The tool's name (`verilator`, `yosys`, `iverilog`, `nextpnr-ecp5`).
        tool: &'static str,
        /// The command that installs it (`apt-get install yosys`, …).
        install: &'static str,
    },
    /// The program ran and reported a problem (a non-zero exit, or a file it should have
    /// written is missing).
    Failed {
        /// The tool's name.
        tool: &'static str,
        /// The last lines of the tool's own output (stderr, then stdout), or the I/O error.
        message: String,
    },
    /// A report or file could not be read (`what`: the Yosys log, the nextpnr report, the
    /// ports of a Verilog module, …).
    Unreadable {
        /// What was being read.
        what: &'static str,
        /// What in it could not be read.
        message: String,
    },
}

/// Callers that report errors as text take the message.
impl From<ToolError> for String {
    fn from(e: ToolError) -> String {
        e.to_string()
    }
}

/// Wraps a reader's message as [`ToolError::Unreadable`].
fn unreadable(what: &'static str) -> impl Fn(String) -> ToolError {
    move |message| ToolError::Unreadable { what, message }
}

impl fmt::Display for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ToolError::Missing { tool, install } => {
                write!(f, "`{tool}` is not installed or not on PATH; install it with `{install}`")
            }
            ToolError::Failed { tool, message } => write!(f, "{tool} failed:\n{message}"),
            ToolError::Unreadable { what, message } => write!(f, "{what}: {message}"),
        }
    }
}

impl std::error::Error for ToolError {}

/// Runs `program` with `args` in `dir` and returns its output; a program that cannot be found
/// becomes [`ToolError::Missing`] (naming `tool` and its `install` command), any other spawn
/// failure or a non-zero exit [`ToolError::Failed`] with the last 40 lines of the tool's stderr
/// and stdout.
pub fn run(tool: &'static str, install: &'static str, program: &str, args: &[&str], dir: &Path) -> Result<Output, ToolError> {
    let output = Command::new(program).args(args).current_dir(dir).output().map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => ToolError::Missing { tool, install },
        _ => ToolError::Failed { tool, message: e.to_string() },
    })?;
    if output.status.success() {
        Ok(output)
    } else {
        Err(ToolError::Failed { tool, message: tail(&output) })
    }
}

/// The last lines of a tool's output, enough to show its error.
fn tail(output: &Output) -> String {
    let text = format!("{}{}", String::from_utf8_lossy(&output.stderr), String::from_utf8_lossy(&output.stdout));
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(40)..].join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_program_is_reported_with_its_install_command() {
        let err = run("sometool", "apt-get install sometool", "weft-no-such-program", &[], Path::new(".")).unwrap_err();
        assert_eq!(err, ToolError::Missing { tool: "sometool", install: "apt-get install sometool" });
        assert!(err.to_string().contains("install it with `apt-get install sometool`"));
    }

    #[test]
    fn a_failing_program_carries_its_output() {
        let err = run("sh", "apt-get install dash", "sh", &["-c", "echo broken >&2; exit 3"], Path::new(".")).unwrap_err();
        assert!(matches!(&err, ToolError::Failed { message, .. } if message.contains("broken")), "{err}");
    }
}
