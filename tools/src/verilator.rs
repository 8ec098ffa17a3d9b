use std::path::Path;

use super::{run, ToolError};

/// `verilator --lint-only -Wall` on one file with `top` as the top module; any warning fails
/// ([`ToolError::Failed`] with Verilator's messages). Waivers live in the generated file itself,
/// each next to its reason.
pub fn verilator_lint(file: &Path, top: &str) -> Result<(), ToolError> {
    verilator_lint_files(&[file], top)
}

/// `verilator --lint-only -Wall` on files of one folder read together (a top and the modules it
/// instantiates); any warning fails. Paths are given relative to the first file's folder,
/// where Verilator runs.
pub fn verilator_lint_files(files: &[&Path], top: &str) -> Result<(), ToolError> {
    let dir = files[0].parent().unwrap_or(Path::new("."));
    let mut args = vec!["--lint-only".to_string(), "-Wall".into(), "--top-module".into(), top.into()];
    for file in files {
        let relative = file.strip_prefix(dir).map(Path::to_path_buf).unwrap_or_else(|_| std::fs::canonicalize(file).unwrap_or(file.to_path_buf()));
        args.push(relative.to_string_lossy().to_string());
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    run("verilator", "apt-get install verilator", "verilator", &args, dir).map(|_| ())
}
