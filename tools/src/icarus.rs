use std::path::{Path, PathBuf};

use super::{run, ToolError};

/// Icarus Verilog compiles the file (`iverilog -g2005 -Wall`) with `top` as root; a compile
/// error is [`ToolError::Failed`] with its messages. Nothing is kept: the compiled file goes
/// to a temporary folder.
pub fn icarus_compile(file: &Path, top: &str) -> Result<(), ToolError> {
    icarus_compile_files(&[file], top)
}

/// Icarus Verilog compiles the files together (Verilog-2005) with `top` as root.
pub fn icarus_compile_files(files: &[&Path], top: &str) -> Result<(), ToolError> {
    let failed = |e: std::io::Error| ToolError::Failed { tool: "iverilog", message: e.to_string() };
    let dir = std::env::temp_dir().join(format!("weft-iverilog-{}-{top}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(failed)?;
    let out = dir.join("a.vvp");
    let files: Vec<PathBuf> = files.iter().map(std::fs::canonicalize).collect::<Result<_, _>>().map_err(failed)?;
    let mut args = vec!["-g2005".to_string(), "-Wall".into(), "-s".into(), top.into(), "-o".into(), out.to_string_lossy().into()];
    args.extend(files.iter().map(|f| f.to_string_lossy().to_string()));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let result = run("iverilog", "apt-get install iverilog", "iverilog", &args, &dir);
    let _ = std::fs::remove_dir_all(&dir);
    result.map(|_| ())
}
