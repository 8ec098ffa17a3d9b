use std::path::Path;

use super::{run, ToolError};

/// Icarus Verilog compiles the file (Verilog-2005) with `top` as root.
pub fn icarus_compile(file: &Path, top: &str) -> Result<(), ToolError> {
    let dir = std::env::temp_dir().join(format!("weft-iverilog-{}-{top}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| ToolError::Failed { tool: "iverilog", message: e.to_string() })?;
    let out = dir.join("a.vvp");
    let file = std::fs::canonicalize(file).map_err(|e| ToolError::Failed { tool: "iverilog", message: e.to_string() })?;
    let result = run(
        "iverilog",
        "apt-get install iverilog",
        "iverilog",
        &["-g2005", "-Wall", "-s", top, "-o", &out.to_string_lossy(), &file.to_string_lossy()],
        &dir,
    );
    let _ = std::fs::remove_dir_all(&dir);
    result.map(|_| ())
}
