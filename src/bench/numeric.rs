//! `weft bench numeric`: every floating-point operator, compare and conversion at every stage
//! count it supports, and every shipped kernel at its shipped depths — latency in cycles and
//! Yosys `synth_xilinx` LUT/FF/DSP and logic depth. Synthesis runs on two threads (one per
//! core of the reference machine).

use crate::Error;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::Serialize;
use weft_hdl::float::{FloatFormat, FloatOperator, Multiplier};
use weft_ip::fp::{self, convert::CONVERSIONS};
use weft_ip::kernels;
use weft_tools::yosys_synth;

/// One synthesized configuration (a row of `bench/numeric.json`); the Yosys figures are
/// `synth_xilinx` (7-series) and 0 when synthesis failed.
#[derive(Clone, Debug, Serialize)]
pub struct Row {
    /// The module: an operator (`fp32_add`, …), a compare or conversion, or a shipped kernel.
    pub module: String,
    /// How its float multipliers are built (`dsp_shift` or `lut_shift`); none for a module
    /// without one.
    pub multiplier: Option<&'static str>,
    /// Pipeline stages of this configuration (a kernel: its shipped schedule's latency).
    pub stages: usize,
    /// The most stages the module supports.
    pub max_stages: usize,
    /// Latency, cycles from an input beat to its result.
    pub latency: usize,
    /// LUTs.
    pub luts: u64,
    /// Flip-flops.
    pub flip_flops: u64,
    /// DSP blocks.
    pub dsps: u64,
    /// Longest combinational path in cells (Yosys `ltp -noff` over LUT, carry and wide-mux cells).
    pub logic_depth: u64,
    /// Whether this is the stage count weft ships.
    pub shipped: bool,
    /// Why this configuration has no figures (its synthesis failed); the others still run.
    pub failure: Option<String>,
}

struct Job {
    module: String,
    multiplier: Option<&'static str>,
    stages: usize,
    max_stages: usize,
    latency: usize,
    shipped: bool,
    verilog: Box<dyn FnOnce() -> Result<String, Error> + Send>,
}

fn jobs(only: &[String]) -> Result<Vec<Job>, Error> {
    let mut jobs = vec![];
    let wanted = |name: &str| only.is_empty() || only.iter().any(|o| o == name);
    for op in [FloatOperator::Add, FloatOperator::Mul, FloatOperator::Div, FloatOperator::Sqrt] {
        for &multiplier in op.multipliers() {
            let name = fp::module_name_with(op, multiplier);
            if !wanted(&name) {
                continue;
            }
            let max = op.max_stages(FloatFormat::BINARY32);
            let shipped = fp::SHIPPED.iter().find(|(o, _)| *o == op).map(|(_, s)| *s);
            for stages in 0..=max {
                jobs.push(Job {
                    module: name.clone(),
                    multiplier: (op == FloatOperator::Mul).then_some(multiplier.name()),
                    stages,
                    max_stages: max,
                    latency: stages,
                    shipped: shipped == Some(stages),
                    verilog: Box::new(move || fp::operator_verilog(op, stages, multiplier).map_err(Error::from)),
                });
            }
        }
    }
    for (index, c) in CONVERSIONS.iter().enumerate() {
        if !wanted(c.name) {
            continue;
        }
        for stages in 0..=c.max_stages {
            jobs.push(Job {
                module: c.name.into(),
                multiplier: None,
                stages,
                max_stages: c.max_stages,
                latency: stages,
                shipped: stages == c.stages,
                verilog: Box::new(move || fp::convert::verilog(&CONVERSIONS[index], stages).map_err(Error::from)),
            });
        }
    }
    for (name, _) in kernels::SOURCES {
        if !wanted(name) {
            continue;
        }
        // With each multiplier when the kernel has one (the same latency either way).
        let (_, _, schedule) = kernels::build(name)?;
        let has_mul = schedule.operators.contains_key(FloatOperator::Mul.name());
        let multipliers: &[Multiplier] = if has_mul { &Multiplier::ALL } else { &[Multiplier::DspShift] };
        for &multiplier in multipliers {
            jobs.push(Job {
                module: name.into(),
                multiplier: has_mul.then_some(multiplier.name()),
                stages: schedule.latency,
                max_stages: schedule.latency,
                latency: schedule.latency,
                shipped: true,
                verilog: Box::new(move || kernels::verilog_with(name, multiplier).map_err(Error::from)),
            });
        }
    }
    if jobs.is_empty() {
        return Err(Error::Check(format!("no operator or kernel named {}", only.join(", "))));
    }
    Ok(jobs)
}

/// Synthesizes every configuration (those named in `only`, or all; with `shipped_only`, only the
/// stage counts weft ships) in `work`; returns the rows in a stable order.
pub fn run(only: &[String], shipped_only: bool, work: &Path, threads: usize) -> Result<Vec<Row>, Error> {
    let jobs = jobs(only)?.into_iter().filter(|j| j.shipped || !shipped_only);
    let queue = Mutex::new(jobs.enumerate().collect::<Vec<_>>());
    let rows = Mutex::new(vec![]);
    std::thread::scope(|scope| {
        for _ in 0..threads.max(1) {
            scope.spawn(|| loop {
                let Some((index, job)) = queue.lock().unwrap().pop() else { break };
                let dir: PathBuf = work.join(format!("{}_{}_s{}", job.module, job.multiplier.unwrap_or("none"), job.stages));
                let result = (|| -> Result<_, Error> {
                    let text = (job.verilog)()?;
                    std::fs::create_dir_all(&dir)?;
                    let file = dir.join(format!("{}.v", job.module));
                    std::fs::write(&file, text)?;
                    Ok(yosys_synth(&file, &job.module)?)
                })();
                let figures = result.as_ref().ok();
                if let Err(e) = &result {
                    eprintln!("  {} at {} stages: synthesis failed: {e}", job.module, job.stages);
                } else if let Some(s) = figures {
                    eprintln!("  {} at {} stages: {} LUT, {} FF", job.module, job.stages, s.luts, s.flip_flops);
                }
                let row = Row {
                    module: job.module,
                    multiplier: job.multiplier,
                    stages: job.stages,
                    max_stages: job.max_stages,
                    latency: job.latency,
                    luts: figures.map_or(0, |s| s.luts),
                    flip_flops: figures.map_or(0, |s| s.flip_flops),
                    dsps: figures.map_or(0, |s| s.dsps),
                    logic_depth: figures.map_or(0, |s| s.logic_depth),
                    shipped: job.shipped,
                    failure: result.err().map(|e| e.to_string().lines().next().unwrap_or_default().to_string()),
                };
                rows.lock().unwrap().push((index, row));
            });
        }
    });
    let mut rows = rows.into_inner().unwrap();
    rows.sort_by_key(|(i, _)| *i);
    Ok(rows.into_iter().map(|(_, r)| r).collect())
}

/// The rows as a Markdown table (the README's form).
pub fn table(rows: &[Row]) -> String {
    let mut text = String::from("| module | stages | latency | LUT | FF | DSP | logic depth |\n| --- | --- | --- | --- | --- | --- | --- |\n");
    for r in rows {
        let mark = if r.shipped { " (shipped)" } else { "" };
        if let Some(why) = &r.failure {
            text += &format!("| `{}` | {} of {}{mark} | {} | synthesis failed: {why} | | | |\n", r.module, r.stages, r.max_stages, r.latency);
            continue;
        }
        text += &format!("| `{}` | {} of {}{mark} | {} | {} | {} | {} | {} |\n", r.module, r.stages, r.max_stages, r.latency, r.luts, r.flip_flops, r.dsps, r.logic_depth);
    }
    text
}
