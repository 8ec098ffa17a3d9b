//! `weft bench numeric --compare`: weft's FP32 add, mul (both multipliers), div and sqrt at their
//! shipped depths beside the open-source operators practitioners use, in one table: Yosys 0.23 `synth_xilinx`
//! LUT, FF, DSP, logic depth and LUT levels, latency, and post-route Fmax on the ECP5-85F
//! harness of `weft check --timing`.
//!
//! The anchor rows are reference figures measured outside weft with the same Yosys flow (`synth_xilinx -flatten -noiopad`, the same depth and LUT-level metrics) on
//! FloPoCo's generated operators (FPAdd at a 300 MHz target, FPMult, FPDiv and FPSqrt at 500 MHz;
//! no subnormals) and Berkeley HardFloat release 1 Verilog (addRecFN / mulRecFN, combinational,
//! with the IEEE-to-recoded conversions). They carry no Fmax: those designs are not run here.

use crate::Error;
use std::path::Path;

use serde::Serialize;
use weft_hdl::float::FloatOperator;
use weft_ip::fp;
use weft_tools::{place_and_route, yosys_synth};

/// One row of the comparison (a row of `bench/numeric_compare.json`); the resource figures are
/// Yosys `synth_xilinx` (7-series).
#[derive(Clone, Debug, Serialize)]
pub struct CompareRow {
    /// The operation: `add`, `mul`, `div` or `sqrt` (binary32).
    pub op: String,
    /// weft's module or the reference operator, with its settings.
    pub implementation: String,
    /// Latency, cycles.
    pub latency: usize,
    /// LUTs.
    pub luts: u64,
    /// Flip-flops.
    pub flip_flops: u64,
    /// DSP blocks.
    pub dsps: u64,
    /// Longest combinational path in cells (LUT, carry and wide-mux cells).
    pub logic_depth: u64,
    /// Longest path in LUT levels (LUT1..6 count one; MUXF7/8 and CARRY4 none).
    pub lut_levels: u64,
    /// Whether subnormal inputs and results are handled (not flushed to zero).
    pub subnormals: bool,
    /// Post-route Fmax on the ECP5-85F harness, MHz; `None` for the reference rows.
    pub fmax_mhz: Option<f64>,
    /// Where the figures come from.
    pub source: String,
}

const FLOPOCO: &str = "FloPoCo generated operator, Yosys 0.23 synth_xilinx, reference figures not run here";
const HARDFLOAT: &str = "Berkeley HardFloat release 1 Verilog, Yosys 0.23 synth_xilinx, reference figures not run here";

/// The published side: (op, implementation, latency, LUT, FF, DSP, depth, LUT levels, subnormals, source).
#[allow(clippy::type_complexity)]
const ANCHORS: [(&str, &str, usize, u64, u64, u64, u64, u64, bool, &str); 6] = [
    ("add", "FloPoCo FPAdd (300 MHz target)", 6, 476, 218, 0, 13, 7, false, FLOPOCO),
    ("add", "HardFloat addRecFN (combinational + IEEE conversions)", 1, 1006, 33, 0, 67, 25, true, HARDFLOAT),
    ("mul", "FloPoCo FPMult", 4, 176, 181, 2, 9, 4, false, FLOPOCO),
    ("mul", "HardFloat mulRecFN (combinational)", 1, 632, 33, 2, 46, 23, true, HARDFLOAT),
    ("div", "FloPoCo FPDiv (500 MHz target)", 15, 1945, 1009, 0, 21, 5, false, FLOPOCO),
    ("sqrt", "FloPoCo FPSqrt (500 MHz target)", 16, 702, 468, 0, 15, 4, false, FLOPOCO),
];

const OPS: [(FloatOperator, &str); 4] = [(FloatOperator::Add, "add"), (FloatOperator::Mul, "mul"), (FloatOperator::Div, "div"), (FloatOperator::Sqrt, "sqrt")];

/// Synthesizes and places and routes weft's operators at their shipped depths in `work`, and
/// returns them with the anchor rows, op by op. `progress` hears each step.
pub fn run(work: &Path, progress: &dyn Fn(&str)) -> Result<Vec<CompareRow>, Error> {
    let mut rows = vec![];
    for (op, short) in OPS {
        let stages = fp::SHIPPED.iter().find(|(o, _)| *o == op).map(|(_, s)| *s).ok_or_else(|| Error::Input("operator not shipped".into()))?;
        for &multiplier in op.multipliers() {
            let name = fp::module_name_with(op, multiplier);
            let dir = work.join(&name);
            std::fs::create_dir_all(&dir)?;
            let file = dir.join(format!("{name}.v"));
            std::fs::write(&file, fp::operator_verilog(op, stages, multiplier)?)?;
            progress(&format!("{name} ({stages} stages): synthesis"));
            let s = yosys_synth(&file, &name)?;
            progress(&format!("{name}: {} LUT, {} levels; place and route", s.luts, s.lut_levels));
            let timing = place_and_route(&file, &name)?;
            progress(&format!("{name}: {:.1} MHz", timing.fmax_mhz));
            rows.push(CompareRow {
                op: short.into(),
                implementation: format!("weft `{name}`"),
                latency: stages,
                luts: s.luts,
                flip_flops: s.flip_flops,
                dsps: s.dsps,
                logic_depth: s.logic_depth,
                lut_levels: s.lut_levels,
                subnormals: true,
                fmax_mhz: Some(timing.fmax_mhz),
                source: "measured by this command".into(),
            });
        }
        for a in ANCHORS.iter().filter(|a| a.0 == short) {
            rows.push(CompareRow {
                op: a.0.into(),
                implementation: a.1.into(),
                latency: a.2,
                luts: a.3,
                flip_flops: a.4,
                dsps: a.5,
                logic_depth: a.6,
                lut_levels: a.7,
                subnormals: a.8,
                fmax_mhz: None,
                source: a.9.into(),
            });
        }
    }
    Ok(rows)
}

/// Whether weft's row meets the bar against FloPoCo's: LUTs and LUT levels no
/// more than FloPoCo's, at a latency at most two cycles above.
fn verdict(rows: &[CompareRow], r: &CompareRow) -> String {
    let Some(f) = rows.iter().find(|a| a.op == r.op && a.implementation.starts_with("FloPoCo")) else { return String::new() };
    let checks = [(r.luts <= f.luts, "LUT"), (r.lut_levels <= f.lut_levels, "levels"), (r.latency <= f.latency + 2, "latency")];
    let missed: Vec<&str> = checks.iter().filter(|c| !c.0).map(|c| c.1).collect();
    // DSPs are not part of the bar, but a design that trades LUTs for them says so.
    let dsps = if r.dsps > f.dsps { format!(" ({} DSP against {})", r.dsps, f.dsps) } else { String::new() };
    if missed.is_empty() {
        format!("meets FloPoCo's{dsps}")
    } else {
        format!("above FloPoCo's in {}{dsps}", missed.join(", "))
    }
}

/// The rows as a Markdown table, with an Fmax column and, for weft's
/// rows, the verdict against FloPoCo's.
pub fn table(rows: &[CompareRow]) -> String {
    let mut text = String::from("| op | implementation | latency | LUT | FF | DSP | depth | LUT levels | subnormals | ECP5 Fmax (MHz) | against FloPoCo |\n| --- | --- | --: | --: | --: | --: | --: | --: | --- | --: | --- |\n");
    for r in rows {
        let fmax = r.fmax_mhz.map_or("–".into(), |f| format!("{f:.1}"));
        let verdict = if r.implementation.starts_with("weft") { verdict(rows, r) } else { String::new() };
        text += &format!(
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {fmax} | {verdict} |\n",
            r.op,
            r.implementation,
            r.latency,
            r.luts,
            r.flip_flops,
            r.dsps,
            r.logic_depth,
            r.lut_levels,
            if r.subnormals { "yes" } else { "no" }
        );
    }
    text + "\nAnchor rows: " + FLOPOCO + "; " + HARDFLOAT + ".\n"
}
