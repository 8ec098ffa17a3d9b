//! The two jobs of the tool: write every shipped module's Verilog, and check it.

use crate::Error;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use weft_hdl::export::{export_netlist, ModuleSpec};
use weft_hdl::float::Multiplier;
use weft_hdl::pipeline::{dsl, Stages as PipelineStages};
pub use weft_ip::catalog::Shipped;
use weft_sim::catalog::shipped;
use weft_tools::{icarus_compile, place_and_route, verilator_lint, yosys_synth, Family, SynthReport, TimingReport};

use crate::cache::{cache_dir, fingerprints, stage_key, verilog_hash};

/// A failure in the flow, naming the module and the stage.
#[derive(Debug)]
pub struct FlowError {
    /// The module being generated or checked.
    pub module: String,
    /// The stage: `generate`, `find Verilog`, `built-in testbench`, `verilator lint`,
    /// `yosys synthesis`, `icarus compile`, `place and route` or `write report`.
    pub stage: &'static str,
    /// What the stage or its tool reported.
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
    let system_nodes: Vec<String> = crate::system::shipped().iter().map(|s| format!("{}_node", s.name)).collect();
    let modules: Vec<Shipped> = shipped().into_iter().filter(|m| !system_nodes.contains(&m.spec.name)).collect();
    write_modules(out, &modules)
}

/// Writes each module's Verilog to `out/<family>/<module>.v`; returns the files written.
pub fn write_modules(out: &Path, modules: &[Shipped]) -> Result<Vec<PathBuf>, FlowError> {
    let mut written = vec![];
    for module in modules {
        let text = (module.verilog)(&module.spec).map_err(|e| fail(&module.spec.name, "generate", e))?;
        let path = out.join(module.relative_path());
        std::fs::create_dir_all(path.parent().unwrap()).map_err(|e| fail(&module.spec.name, "generate", e))?;
        std::fs::write(&path, text).map_err(|e| fail(&module.spec.name, "generate", format!("{}: {e}", path.display())))?;
        written.push(path);
    }
    Ok(written)
}

/// A user's kernel (a DSL file) as a module of the flow, read when the command runs (no
/// rebuild), every float product built as `multiplier`: `generate` writes `kernels/<name>.v`
/// from its netlist, `check` runs [`crate::run::testbench`] (random operands against the
/// software model) and the tool stages.
pub fn user_kernel(path: &Path, multiplier: Multiplier) -> Result<Shipped, Error> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::from(e).context(path.display()))?;
    let k = dsl::parse(&text).map_err(|e| Error::from(e).context(path.display()))?;
    if shipped().iter().any(|m| m.spec.name == k.name) {
        return Err(Error::Input(format!("{}: kernel `{}` has the name of a shipped module; give it another name (the `kernel` line)", path.display(), k.name)));
    }
    let stages = PipelineStages::balanced(k.format).with_multiplier(multiplier);
    let (_, schedule) = k.netlist(&stages).map_err(|e| Error::from(e).context(path.display()))?;
    let spec = weft_ip::kernels::kernel_spec(&k, &schedule, &path.display().to_string());
    let (for_verilog, stages_for_verilog) = (k.clone(), stages.clone());
    let verilog = move |spec: &ModuleSpec| {
        let (net, _) = for_verilog.netlist(&stages_for_verilog)?;
        export_netlist(spec, &net)
    };
    Ok(Shipped::new(spec, verilog, move || crate::run::testbench(&k, &stages).map_err(|e| crate::ip::Error::Mismatch(e.to_string()))))
}

/// The modules a `check` selection names: `all`, or one module name.
pub fn select(selection: &str) -> Result<Vec<Shipped>, Error> {
    let all = shipped();
    if selection == "all" {
        return Ok(all);
    }
    let names: Vec<String> = all.iter().map(|m| m.spec.name.clone()).collect();
    let chosen: Vec<Shipped> = all.into_iter().filter(|m| m.spec.name == selection).collect();
    if chosen.is_empty() {
        Err(Error::Input(format!("unknown module `{selection}`; expected `all` or one of: {}", names.join(", "))))
    } else {
        Ok(chosen)
    }
}

/// The outcome of checking one module.
pub struct Checked {
    /// The module's name.
    pub module: String,
    /// The built-in testbench's one-line summary (empty when it did not run).
    pub testbench: String,
    /// Yosys `synth_xilinx` figures: LUTs, flip-flops, DSPs, logic depth, LUT levels (all zero
    /// when synthesis did not run).
    pub synth: SynthReport,
    /// Post-route timing, when the timing stage ran.
    pub timing: Option<TimingReport>,
    /// The stages whose recorded result was reused instead of run (same Verilog, same tools).
    pub reused: Vec<&'static str>,
    /// The stages that ran.
    pub ran: Vec<&'static str>,
}

/// Which stages to run (tests run one stage at a time).
#[derive(Clone, Copy, Debug)]
pub struct Stages {
    /// The built-in testbench: the module's netlist in the built-in simulator against its model.
    pub testbench: bool,
    /// Verilator `--lint-only -Wall`.
    pub lint: bool,
    /// Yosys `synth_xilinx` (7-series) with logic depth and LUT levels.
    pub synth: bool,
    /// Icarus Verilog compile (`-g2005 -Wall`).
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
/// With `reports`, a stage that passed before on the same Verilog with the same tool is not run
/// again (see [`check_with`]).
pub fn check(module: &Shipped, generated: &Path, reports: Option<&Path>, stages: Stages) -> Result<Checked, FlowError> {
    check_with(module, generated, reports, stages, false)
}

/// [`check`], choosing whether to reuse recorded results. Each stage's result is recorded under a
/// key: the FNV hash of the stage, the tool's version (`verilator --version`, `yosys -V`,
/// `iverilog -V`), the exact synthesis script, and the Verilog's own hash; the built-in testbench,
/// which runs this program's netlist rather than the file, is keyed by this executable's hash.
/// Lint, synthesis and Icarus keys live in `reports/<module>.json` under `checked` beside the
/// figures they produced; testbench results in `reports/.cache/` (not committed). `force`
/// runs every stage and records the new results.
pub fn check_with(module: &Shipped, generated: &Path, reports: Option<&Path>, stages: Stages, force: bool) -> Result<Checked, FlowError> {
    let name = module.spec.name.as_str();
    let file = generated.join(module.relative_path());
    if !file.exists() {
        return Err(fail(name, "find Verilog", format!("{} does not exist; run `weft generate` first", file.display())));
    }
    let text = std::fs::read(&file).map_err(|e| fail(name, "find Verilog", format!("{}: {e}", file.display())))?;
    let hash = verilog_hash(&text);
    let recorded = reports.map(|dir| read_report(dir, name)).unwrap_or_default();
    let mut ledger = Ledger {
        recorded: recorded.get("checked").and_then(|v| v.as_object()).cloned().unwrap_or_default(),
        keys: serde_json::Map::new(),
        reused: vec![],
        ran: vec![],
        enabled: reports.is_some() && !force,
    };
    let tools = fingerprints();

    let testbench = if stages.testbench {
        let key = stage_key(&["testbench", name, &tools.executable]);
        let old = reports.filter(|_| ledger.enabled).and_then(|dir| cached_testbench(dir, name, &key));
        ledger.note("testbench", old.is_some());
        match old {
            Some(result) => result,
            None => {
                let result = (module.testbench)().map_err(|e| fail(name, "built-in testbench", e))?;
                if let Some(dir) = reports {
                    record_testbench(dir, name, &key, &result).map_err(|e| fail(name, "write report", e))?;
                }
                result
            }
        }
    } else {
        String::new()
    };
    if stages.lint && !ledger.reuse("lint", stage_key(&["lint", &tools.verilator, "--lint-only -Wall", name, &hash]), true) {
        verilator_lint(&file, name).map_err(|e| fail(name, "verilator lint", e))?;
    }
    let mut synth = SynthReport::default();
    if stages.synth {
        let script = format!("{}; ltp -noff {}", Family::Xc7.synth(name), Family::Xc7.comb_cells());
        let old = serde_json::from_value::<SynthReport>(serde_json::Value::Object(recorded.clone())).ok().filter(|r| r.module == name);
        let hit = ledger.reuse("synth", stage_key(&["synth", &tools.yosys, &script, &hash]), old.is_some());
        synth = match old.filter(|_| hit) {
            Some(old) => old,
            None => yosys_synth(&file, name).map_err(|e| fail(name, "yosys synthesis", e))?,
        };
    }
    if stages.icarus && !ledger.reuse("icarus", stage_key(&["icarus", &tools.iverilog, "-g2005 -Wall", name, &hash]), true) {
        icarus_compile(&file, name).map_err(|e| fail(name, "icarus compile", e))?;
    }
    let timing = if stages.timing {
        let (t, reused) = timed(&file, name, reports, force).map_err(|e| fail(name, "place and route", e))?;
        ledger.note("place and route", reused);
        Some(t)
    } else {
        None
    };
    let Ledger { keys, reused, ran, .. } = ledger;
    if let Some(dir) = reports {
        write_report(dir, name, stages.synth.then_some(&synth), timing.as_ref(), &keys).map_err(|e| fail(name, "write report", e))?;
    }
    Ok(Checked { module: name.to_string(), testbench, synth, timing, reused, ran })
}

/// The stages of one module check: which were reused, which ran, and the keys to record.
struct Ledger {
    /// The keys recorded by earlier runs (`checked` in the report).
    recorded: serde_json::Map<String, serde_json::Value>,
    keys: serde_json::Map<String, serde_json::Value>,
    reused: Vec<&'static str>,
    ran: Vec<&'static str>,
    /// Reuse allowed: there is a report folder and no `--force`.
    enabled: bool,
}

impl Ledger {
    /// Whether `stage` passed before under `key` and its result is `available`; records the key
    /// (the caller runs the stage when this says no, and a failure returns before the report is
    /// written).
    fn reuse(&mut self, stage: &'static str, key: String, available: bool) -> bool {
        let hit = self.enabled && available && self.recorded.get(stage).and_then(|v| v.as_str()) == Some(key.as_str());
        self.keys.insert(stage.to_string(), key.into());
        self.note(stage, hit);
        hit
    }

    fn note(&mut self, stage: &'static str, reused: bool) {
        if reused {
            self.reused.push(stage);
        } else {
            self.ran.push(stage);
        }
    }
}

/// Runs `work` on every item, `jobs` at a time on as many threads, calling `done` on this thread
/// as each finishes (in completion order); returns the results in the items' order.
pub fn parallel<T: Sync, R: Send>(items: &[T], jobs: usize, work: impl Fn(&T) -> R + Sync, mut done: impl FnMut(usize, &R)) -> Vec<R> {
    let next = AtomicUsize::new(0);
    let mut results: Vec<Option<R>> = items.iter().map(|_| None).collect();
    std::thread::scope(|scope| {
        let (tx, rx) = std::sync::mpsc::channel();
        for _ in 0..jobs.clamp(1, items.len().max(1)) {
            let (tx, next, work) = (tx.clone(), &next, &work);
            scope.spawn(move || loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(item) = items.get(i) else { break };
                if tx.send((i, work(item))).is_err() {
                    break;
                }
            });
        }
        drop(tx);
        for (i, r) in rx {
            done(i, &r);
            results[i] = Some(r);
        }
    });
    results.into_iter().map(|r| r.expect("a worker thread panicked")).collect()
}

fn cached_testbench(reports: &Path, name: &str, key: &str) -> Option<String> {
    let text = std::fs::read_to_string(reports.join(".cache").join(format!("{name}.testbench.json"))).ok()?;
    let v: serde_json::Value = serde_json::from_str(&text).ok()?;
    (v["key"].as_str() == Some(key)).then(|| v["result"].as_str().map(String::from)).flatten()
}

fn record_testbench(reports: &Path, name: &str, key: &str, result: &str) -> std::io::Result<()> {
    let path = cache_dir(reports)?.join(format!("{name}.testbench.json"));
    std::fs::write(path, serde_json::json!({ "key": key, "result": result }).to_string() + "\n")
}

fn read_report(dir: &Path, name: &str) -> serde_json::Map<String, serde_json::Value> {
    std::fs::read_to_string(dir.join(format!("{name}.json"))).ok().and_then(|t| serde_json::from_str(&t).ok()).unwrap_or_default()
}

/// Post-route timing of `file`: the recorded report when it timed the same Verilog (unless
/// `force`), else a new place and route (minutes per module); says whether it was reused.
fn timed(file: &Path, name: &str, reports: Option<&Path>, force: bool) -> Result<(TimingReport, bool), Error> {
    let text = std::fs::read(file).map_err(|e| Error::from(e).context(file.display()))?;
    let hash = verilog_hash(&text);
    let recorded = reports.filter(|_| !force).and_then(|dir| serde_json::from_value::<TimingReport>(read_report(dir, name).get("timing")?.clone()).ok()).filter(|t| t.verilog_hash == hash);
    if let Some(t) = recorded {
        return Ok((t, true));
    }
    let mut t = place_and_route(file, name)?;
    t.verilog_hash = hash;
    Ok((t, false))
}

/// Writes `reports/<module>.json`: the synthesis figures, the post-route timing and the keys of
/// the stages that passed (`checked`); a stage that did not run keeps what the file already had.
fn write_report(dir: &Path, name: &str, synth: Option<&SynthReport>, timing: Option<&TimingReport>, keys: &serde_json::Map<String, serde_json::Value>) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let path = dir.join(format!("{name}.json"));
    let mut report = read_report(dir, name);
    let mut checked = report.remove("checked").and_then(|v| v.as_object().cloned()).unwrap_or_default();
    checked.extend(keys.clone());
    if let Some(s) = synth {
        let old_timing = report.remove("timing");
        report = serde_json::to_value(s).unwrap().as_object().unwrap().clone();
        report.extend(old_timing.map(|t| ("timing".to_string(), t)));
    }
    if let Some(t) = timing {
        report.insert("timing".into(), serde_json::to_value(t).unwrap());
    }
    if !checked.is_empty() {
        report.insert("checked".into(), checked.into());
    }
    std::fs::write(path, serde_json::to_string_pretty(&report).unwrap() + "\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parallel_runs_every_item_once_and_keeps_their_order() {
        let items: Vec<u64> = (0..25).collect();
        let mut seen = vec![];
        let squares = parallel(&items, 3, |i| i * i, |i, r| seen.push((i, *r)));
        assert_eq!(squares, items.iter().map(|i| i * i).collect::<Vec<_>>());
        seen.sort();
        assert_eq!(seen, items.iter().map(|&i| (i as usize, i * i)).collect::<Vec<_>>());
        assert!(parallel(&[] as &[u8], 4, |_| (), |_, _| ()).is_empty());
    }

    #[test]
    fn timing_is_reused_only_for_the_same_verilog() {
        let dir = std::env::temp_dir().join(format!("weft-timed-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("m.v");
        std::fs::write(&file, "module m(); endmodule\n").unwrap();
        // A report recorded for this text.
        let hash = verilog_hash(&std::fs::read(&file).unwrap());
        let recorded = TimingReport {
            device: "d".into(),
            tool: "t".into(),
            fmax_mhz: 123.0,
            critical_from: "a".into(),
            critical_to: "b".into(),
            critical_ns: 1.0,
            routing_ns: 0.5,
            path: vec![],
            verilog_hash: hash,
        };
        write_report(&dir, "m", None, Some(&recorded), &Default::default()).unwrap();
        assert_eq!(timed(&file, "m", Some(&dir), false).unwrap(), (recorded.clone(), true));
        // Changed Verilog: the recorded figure is not reused (place and route runs and, on this
        // empty module, fails or gives a new report — either way not the recorded one).
        std::fs::write(&file, "module m(); wire x; endmodule\n").unwrap();
        assert_ne!(timed(&file, "m", Some(&dir), false).ok().map(|t| t.0), Some(recorded));
        std::fs::remove_dir_all(&dir).ok();
    }
}
