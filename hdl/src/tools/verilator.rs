use std::path::Path;

use super::{run, ToolError};

/// `verilator --lint-only -Wall` on one file; any warning fails. Waivers live in the generated
/// file itself, each next to its reason.
pub fn verilator_lint(file: &Path, top: &str) -> Result<(), ToolError> {
    let dir = file.parent().unwrap_or(Path::new("."));
    let name = file.file_name().unwrap().to_string_lossy();
    run("verilator", "apt-get install verilator", "verilator", &["--lint-only", "-Wall", "--top-module", top, &name], dir)
        .map(|_| ())
}
