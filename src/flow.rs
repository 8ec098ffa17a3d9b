//! The two jobs of the tool: write every shipped module's Verilog, and check it.

use std::fmt;
use std::path::{Path, PathBuf};

use weft_hdl::tools::{icarus_compile, place_and_route, verilator_lint, yosys_synth, SynthReport, TimingReport};
use weft_ip::catalog::Shipped;
use weft_sim::catalog::shipped;

/// A failure in the flow, naming the module and the stage.
#[derive(Debug)]
pub struct FlowError {
    pub module: String,
    pub stage: &'static str,
    pub message: String,
}

impl fmt::Display for FlowError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {} failed: {}", self.module, self.stage, self.message)
    }
}

impl std::error::Error for FlowError {}

fn fail(module: &str, stage: &'static str, message: impl ToString) -> FlowError {
    FlowError { module: module.to_string(), stage, message: message.to_string() }
}

/// Writes every shipped module to `out/<family>/<module>.v`, except the nodes of the shipped
/// systems (the system generator writes those from their TOML); returns the files written.
pub fn generate(out: &Path) -> Result<Vec<PathBuf>, FlowError> {
    let mut written = vec![];
    let system_nodes: Vec<String> = crate::system::shipped().iter().map(|s| format!("{}_node", s.name)).collect();
    for module in shipped().into_iter().filter(|m| !system_nodes.contains(&m.spec.name)) {
        let text = (module.verilog)(&module.spec).map_err(|e| fail(&module.spec.name, "generate", e))?;
        let path = out.join(module.relative_path());
        std::fs::create_dir_all(path.parent().unwrap()).map_err(|e| fail(&module.spec.name, "generate", e))?;
        std::fs::write(&path, text).map_err(|e| fail(&module.spec.name, "generate", format!("{}: {e}", path.display())))?;
        written.push(path);
    }
    Ok(written)
}

/// The modules a `check` selection names: `all`, or one module name.
pub fn select(selection: &str) -> Result<Vec<Shipped>, String> {
    let all = shipped();
    if selection == "all" {
        return Ok(all);
    }
    let names: Vec<String> = all.iter().map(|m| m.spec.name.clone()).collect();
    let chosen: Vec<Shipped> = all.into_iter().filter(|m| m.spec.name == selection).collect();
    if chosen.is_empty() {
        Err(format!("unknown module `{selection}`; expected `all` or one of: {}", names.join(", ")))
    } else {
        Ok(chosen)
    }
}

/// The outcome of checking one module.
pub struct Checked {
    pub module: String,
    pub testbench: String,
    pub synth: SynthReport,
    /// Post-route timing, when the timing stage ran.
    pub timing: Option<TimingReport>,
}

/// Which stages to run (tests run one stage at a time).
#[derive(Clone, Copy, Debug)]
pub struct Stages {
    pub testbench: bool,
    pub lint: bool,
    pub synth: bool,
    pub icarus: bool,
    /// Place and route on ECP5 for Fmax (slow: `weft check --timing` only).
    pub timing: bool,
}

impl Stages {
    /// Every stage but place and route.
    pub const ALL: Stages = Stages { testbench: true, lint: true, synth: true, icarus: true, timing: false };
}

/// Runs the check flow on one module whose Verilog is in `generated`: built-in testbench →
/// Verilator lint → Yosys synthesis (report written to `reports/<module>.json`) → Icarus.
pub fn check(module: &Shipped, generated: &Path, reports: Option<&Path>, stages: Stages) -> Result<Checked, FlowError> {
    let name = module.spec.name.as_str();
    let file = generated.join(module.relative_path());
    if !file.exists() {
        return Err(fail(name, "find Verilog", format!("{} does not exist; run `weft generate` first", file.display())));
    }
    let testbench = if stages.testbench { (module.testbench)().map_err(|e| fail(name, "built-in testbench", e))? } else { String::new() };
    if stages.lint {
        verilator_lint(&file, name).map_err(|e| fail(name, "verilator lint", e))?;
    }
    let synth = if stages.synth { yosys_synth(&file, name).map_err(|e| fail(name, "yosys synthesis", e))? } else { SynthReport::default() };
    if stages.icarus {
        icarus_compile(&file, name).map_err(|e| fail(name, "icarus compile", e))?;
    }
    let timing = if stages.timing { Some(timed(&file, name, reports).map_err(|e| fail(name, "place and route", e))?) } else { None };
    if let Some(dir) = reports.filter(|_| stages.synth || stages.timing) {
        write_report(dir, name, stages.synth.then_some(&synth), timing.as_ref()).map_err(|e| fail(name, "write report", e))?;
    }
    Ok(Checked { module: name.to_string(), testbench, synth, timing })
}

/// Post-route timing of `file`: the recorded report when it timed the same Verilog, else a new
/// place and route (minutes per module).
fn timed(file: &Path, name: &str, reports: Option<&Path>) -> Result<TimingReport, String> {
    let text = std::fs::read(file).map_err(|e| format!("{}: {e}", file.display()))?;
    let hash = verilog_hash(&text);
    let recorded = reports
        .and_then(|dir| std::fs::read_to_string(dir.join(format!("{name}.json"))).ok())
        .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
        .and_then(|v| serde_json::from_value::<TimingReport>(v["timing"].clone()).ok())
        .filter(|t| t.verilog_hash == hash);
    if let Some(t) = recorded {
        return Ok(t);
    }
    let mut t = place_and_route(file, name).map_err(|e| e.to_string())?;
    t.verilog_hash = hash;
    Ok(t)
}

/// FNV-1a (64-bit) of a Verilog file's bytes, as hex: what a recorded timing report was made from.
fn verilog_hash(text: &[u8]) -> String {
    format!("{:016x}", text.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)))
}

/// Writes `reports/<module>.json`: the synthesis figures and the post-route timing; a stage
/// that did not run keeps what the file already had.
fn write_report(dir: &Path, name: &str, synth: Option<&SynthReport>, timing: Option<&TimingReport>) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let path = dir.join(format!("{name}.json"));
    let mut report: serde_json::Map<String, serde_json::Value> =
        std::fs::read_to_string(&path).ok().and_then(|t| serde_json::from_str(&t).ok()).unwrap_or_default();
    if let Some(s) = synth {
        let old_timing = report.remove("timing");
        report = serde_json::to_value(s).unwrap().as_object().unwrap().clone();
        report.extend(old_timing.map(|t| ("timing".to_string(), t)));
    }
    if let Some(t) = timing {
        report.insert("timing".into(), serde_json::to_value(t).unwrap());
    }
    std::fs::write(path, serde_json::to_string_pretty(&report).unwrap() + "\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timing_is_reused_only_for_the_same_verilog() {
        let dir = std::env::temp_dir().join(format!("weft-timed-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("m.v");
        std::fs::write(&file, "module m(); endmodule\n").unwrap();
        // A report recorded for this text.
        let hash = verilog_hash(&std::fs::read(&file).unwrap());
        let recorded = TimingReport { device: "d".into(), tool: "t".into(), fmax_mhz: 123.0, critical_from: "a".into(), critical_to: "b".into(), critical_ns: 1.0, routing_ns: 0.5, verilog_hash: hash };
        write_report(&dir, "m", None, Some(&recorded)).unwrap();
        assert_eq!(timed(&file, "m", Some(&dir)).unwrap(), recorded);
        // Changed Verilog: the recorded figure is not reused (place and route runs and, on this
        // empty module, fails or gives a new report — either way not the recorded one).
        std::fs::write(&file, "module m(); wire x; endmodule\n").unwrap();
        assert_ne!(timed(&file, "m", Some(&dir)).ok(), Some(recorded));
        std::fs::remove_dir_all(&dir).ok();
    }
}
