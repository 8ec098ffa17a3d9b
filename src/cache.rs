//! The check flow's record keeping: the external tools' versions and this executable (what a
//! recorded result depends on besides its inputs), the key a result is recorded under, and the
//! uncommitted cache folder for results that depend on this executable.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// What a recorded result depends on besides its input files: the external tools' versions and
/// this executable (for results computed by weft's own code).
///
/// Each tool's entry is the first non-empty line of its version output, or `<tool> not found`.
pub struct Fingerprints {
    /// `verilator --version`.
    pub verilator: String,
    /// `yosys -V`.
    pub yosys: String,
    /// `iverilog -V`.
    pub iverilog: String,
    /// `fusesoc --version`.
    pub fusesoc: String,
    /// Tcl's `info patchlevel`, as `tclsh` prints it.
    pub tclsh: String,
    /// FNV-1a hash of this executable's bytes (`unknown <pid>` when it cannot be read).
    pub executable: String,
}

/// Asks each tool for its version once per run.
pub fn fingerprints() -> &'static Fingerprints {
    static ONCE: OnceLock<Fingerprints> = OnceLock::new();
    ONCE.get_or_init(|| {
        let version = |program: &str, args: &[&str]| -> String {
            let out = std::process::Command::new(program).args(args).stdin(std::process::Stdio::piped()).output();
            match out {
                Ok(o) => {
                    let text = format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
                    text.lines().find(|l| !l.trim().is_empty()).unwrap_or("").trim().to_string()
                }
                Err(_) => format!("{program} not found"),
            }
        };
        let executable = std::env::current_exe().and_then(std::fs::read).map(|b| verilog_hash(&b)).unwrap_or_else(|_| format!("unknown {}", std::process::id()));
        Fingerprints {
            verilator: version("verilator", &["--version"]),
            yosys: version("yosys", &["-V"]),
            iverilog: version("iverilog", &["-V"]),
            fusesoc: version("fusesoc", &["--version"]),
            tclsh: version("sh", &["-c", "echo 'puts [info patchlevel]' | tclsh"]),
            executable,
        }
    })
}

/// The key a stage's result is recorded under: the FNV hash of what it depends on.
pub fn stage_key(parts: &[&str]) -> String {
    verilog_hash(parts.join("\n").as_bytes())
}

/// The folder of results that depend on this executable: not committed (it holds its own
/// `.gitignore`).
pub fn cache_dir(reports: &Path) -> std::io::Result<PathBuf> {
    let dir = reports.join(".cache");
    std::fs::create_dir_all(&dir)?;
    let ignore = dir.join(".gitignore");
    if !ignore.exists() {
        std::fs::write(ignore, "*\n")?;
    }
    Ok(dir)
}

/// FNV-1a (64-bit) of a file's bytes, as hex: what a recorded result was made from.
pub fn verilog_hash(text: &[u8]) -> String {
    format!("{:016x}", text.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)))
}
