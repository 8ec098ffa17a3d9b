use nom::bytes::complete::{tag, take_until, take_while1};
use nom::character::complete::{digit1, space0, space1};
use nom::combinator::{all_consuming, map_res};
use nom::sequence::{delimited, preceded, tuple};
use nom::IResult;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

use super::{run, ToolError};

/// Resource use of one module after Yosys synthesis for a [`Family`] (flattened; on Xilinx
/// without I/O buffers), and the longest combinational path, in LUT/carry/mux cells, between
/// registers and ports.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SynthReport {
    /// The synthesized top module.
    pub module: String,
    /// The tool and its version as the log states it (`yosys 0.23`).
    pub tool: String,
    /// The family mapped to (`xc7`, `xcup`, `cyclonev`; see [`Family`]).
    pub family: String,
    /// LUTs (Intel: ALUTs, arithmetic ones included).
    pub luts: u64,
    /// Flip-flops (Xilinx: `FD*` cells; Intel: `MISTRAL_FF`).
    pub flip_flops: u64,
    /// Distributed-RAM primitives (RAM32M, RAM64X1D, ...; Intel: MLABs).
    pub lut_rams: u64,
    /// Block RAM in RAMB36 units (a RAMB18 counts one half; Intel: M10K blocks).
    pub brams: f64,
    /// DSP blocks (Xilinx: `DSP*` cells, DSP48E1/DSP48E2; Intel: `MISTRAL_MUL*`).
    pub dsps: u64,
    /// Length of the longest combinational path, as Yosys `ltp -noff` reports it over the LUT,
    /// carry and wide-mux cells (Intel: ALUTs).
    pub logic_depth: u64,
    /// Longest path in LUT levels (LUT1..6 one each, MUXF7/8 and CARRY4 none): see [`super::levels`].
    pub lut_levels: u64,
    /// The nets along that deepest LUT path, first to last (design names where they survive).
    pub lut_path: Vec<String>,
    /// Every cell type Yosys placed, by count.
    pub cells: BTreeMap<String, u64>,
}

/// A device family Yosys maps to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Family {
    /// Xilinx 7-series (`synth_xilinx`, the default): LUT6, CARRY4, DSP48E1. The figure the
    /// reports and the comparisons with reference designs use.
    Xc7,
    /// Xilinx UltraScale+ (`synth_xilinx -family xcup`): the U200/U280 boards.
    Xcup,
    /// Intel Cyclone V ALMs (`synth_intel_alm`): Yosys 0.23 has no Stratix 10 flow, and
    /// Cyclone V's ALM is the nearest architecture it maps to.
    CycloneV,
}

impl Family {
    /// Every family, the default first.
    pub const ALL: [Family; 3] = [Family::Xc7, Family::Xcup, Family::CycloneV];

    /// The family's short name, as [`SynthReport::family`] records it: `xc7`, `xcup` or
    /// `cyclonev`.
    pub fn name(self) -> &'static str {
        match self {
            Family::Xc7 => "xc7",
            Family::Xcup => "xcup",
            Family::CycloneV => "cyclonev",
        }
    }

    /// The Yosys synthesis command for `top` (flattened; on Xilinx without I/O buffers).
    pub fn synth(self, top: &str) -> String {
        match self {
            Family::Xc7 => format!("synth_xilinx -flatten -noiopad -top {top}"),
            Family::Xcup => format!("synth_xilinx -family xcup -flatten -noiopad -top {top}"),
            Family::CycloneV => format!("synth_intel_alm -family cyclonev -top {top}"),
        }
    }

    /// The combinational cells logic depth counts, as a Yosys selection (`t:LUT* …`).
    pub fn comb_cells(self) -> &'static str {
        match self {
            Family::Xc7 | Family::Xcup => "t:LUT* t:CARRY* t:MUXF*",
            Family::CycloneV => "t:MISTRAL_ALUT*",
        }
    }
}

/// Synthesizes `top` from `file` with Yosys for 7-series and parses its statistics: the same
/// as [`yosys_synth_for`] with [`Family::Xc7`].
pub fn yosys_synth(file: &Path, top: &str) -> Result<SynthReport, ToolError> {
    yosys_synth_for(file, top, Family::Xc7)
}

/// Synthesizes `top` from `file` with Yosys for `family` and parses its statistics, logic depth
/// and LUT levels ([`levels::deepest_path`](crate::levels::deepest_path) on the netlist Yosys
/// writes). Runs in the file's folder; fails with [`ToolError::Missing`] when Yosys is not
/// installed, [`ToolError::Failed`] when it rejects the design, and [`ToolError::Unreadable`]
/// when its log or netlist lacks the figures.
pub fn yosys_synth_for(file: &Path, top: &str, family: Family) -> Result<SynthReport, ToolError> {
    let dir = file.parent().unwrap_or(Path::new("."));
    let name = file.file_name().unwrap().to_string_lossy();
    // One file a run: threads may synthesize the same top at once (one per stage count).
    static RUNS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let run_id = RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let json_name = std::env::temp_dir().join(format!("weft-synth-{top}-{}-{}-{run_id}.json", family.name(), std::process::id()));
    // Logic depth counts only combinational primitives (LUTs, carry chains, wide muxes): the
    // registers, RAMs and DSPs after techmapping are vendor cells `ltp -noff` cannot tell apart.
    let script = format!(
        "read_verilog {name}; {synth}; stat; select -set comb {comb}; ltp -noff @comb w:*; write_json {json}",
        synth = family.synth(top),
        comb = family.comb_cells(),
        json = json_name.display()
    );
    let output = run("yosys", "apt-get install yosys", "yosys", &["-p", &script], dir)?;
    let log = String::from_utf8_lossy(&output.stdout);
    let mut report = parse_synth_log(&log, top)?;
    report.family = family.name().into();
    let json = std::fs::read_to_string(&json_name).map_err(|e| ToolError::Failed { tool: "yosys", message: e.to_string() })?;
    std::fs::remove_file(&json_name).ok();
    (report.lut_levels, report.lut_path) = super::levels::deepest_path(&json, top)?;
    Ok(report)
}

fn number(input: &str) -> IResult<&str, u64> {
    map_res(digit1, str::parse)(input)
}

/// `     LUT6    12` inside a `stat` block.
fn cell_line(input: &str) -> IResult<&str, (&str, u64)> {
    all_consuming(tuple((preceded(space1, take_while1(|c: char| c.is_ascii_alphanumeric() || c == '_' || c == '$')), preceded(space1, number))))(input.trim_end())
}

/// `=== name ===`
fn section_header(input: &str) -> IResult<&str, &str> {
    delimited(tag("=== "), take_until(" ==="), tag(" ==="))(input.trim())
}

/// `Longest topological path in name (length=7):`
fn longest_path(input: &str) -> IResult<&str, u64> {
    preceded(tuple((space0, tag("Longest topological path in "), take_until(" (length="), tag(" (length="))), number)(input)
}

/// `Yosys 0.23 (git sha1 ...)`
fn version(input: &str) -> IResult<&str, &str> {
    preceded(tag("Yosys "), take_while1(|c: char| !c.is_whitespace()))(input.trim())
}

/// Parses the statistics of module `top` (the last `stat` block for it) and the `ltp` result
/// from a Yosys log. [`SynthReport::family`], [`SynthReport::lut_levels`] and
/// [`SynthReport::lut_path`] are left empty: they come from the command and the netlist, not
/// the log. A log without an `ltp` result, or without statistics for `top`, is
/// [`ToolError::Unreadable`].
///
/// ```
/// let log = "\
/// Yosys 0.23 (git sha1 7ce5011c24b)
/// === adder ===
///    Number of cells:                  5
///      CARRY4                          1
///      FDRE                            8
///      LUT2                            4
///      RAMB18E1                        1
///
/// Longest topological path in adder (length=3):
/// ";
/// let report = weft_tools::parse_synth_log(log, "adder").unwrap();
/// assert_eq!((report.luts, report.flip_flops, report.logic_depth), (4, 8, 3));
/// assert_eq!(report.brams, 0.5); // a RAMB18 is half a RAMB36
/// assert_eq!(report.tool, "yosys 0.23");
/// assert!(weft_tools::parse_synth_log(log, "other").is_err());
/// ```
pub fn parse_synth_log(log: &str, top: &str) -> Result<SynthReport, ToolError> {
    synth_log_report(log, top).map_err(crate::unreadable("the Yosys log"))
}

fn synth_log_report(log: &str, top: &str) -> Result<SynthReport, String> {
    let mut cells = BTreeMap::new();
    let mut in_top = false;
    let mut depth = None;
    let mut tool = String::from("yosys");
    for line in log.lines() {
        if let Ok((_, v)) = version(line) {
            tool = format!("yosys {v}");
        }
        if let Ok((_, name)) = section_header(line) {
            in_top = name == top;
            if in_top {
                cells.clear();
            }
            continue;
        }
        if let Ok((_, length)) = longest_path(line) {
            depth = Some(length);
            in_top = false;
        }
        if in_top {
            if let Ok((_, (cell, count))) = cell_line(line) {
                cells.insert(cell.to_string(), count);
            }
        }
    }
    let logic_depth = depth.ok_or_else(|| format!("no `ltp` result for {top} in the Yosys log"))?;
    if cells.is_empty() && !log.contains(&format!("=== {top} ===")) {
        return Err(format!("no statistics for {top} in the Yosys log"));
    }
    let sum = |pred: &dyn Fn(&str) -> bool| cells.iter().filter(|(c, _)| pred(c)).map(|(_, n)| n).sum::<u64>();
    let intel = cells.keys().any(|c| c.starts_with("MISTRAL_"));
    let (luts, flip_flops, lut_rams, brams, dsps) = if intel {
        (
            sum(&|c| c.starts_with("MISTRAL_ALUT")),
            sum(&|c| c == "MISTRAL_FF"),
            sum(&|c| c.starts_with("MISTRAL_MLAB")),
            sum(&|c| c.starts_with("MISTRAL_M10K")) as f64,
            sum(&|c| c.starts_with("MISTRAL_MUL")),
        )
    } else {
        (
            sum(&|c| c.starts_with("LUT")),
            sum(&|c| c.starts_with("FD")),
            sum(&|c| c.starts_with("RAM") && !c.starts_with("RAMB")),
            sum(&|c| c.starts_with("RAMB36")) as f64 + sum(&|c| c.starts_with("RAMB18")) as f64 / 2.0,
            sum(&|c| c.starts_with("DSP")),
        )
    };
    Ok(SynthReport { module: top.to_string(), tool, family: String::new(), luts, flip_flops, lut_rams, brams, dsps, logic_depth, lut_levels: 0, lut_path: vec![], cells })
}

#[cfg(test)]
mod tests {
    use super::*;

    // An excerpt in the shape Yosys 0.23 prints (`stat` after `synth_xilinx`, then `ltp`).
    const LOG: &str = "\
Yosys 0.23 (git sha1 7ce5011c24b)
=== sub ===
   Number of cells:                  3
     LUT2                            3

=== top ===

   Number of wires:                 31
   Number of cells:                 27
     CARRY4                          2
     FDRE                           10
     FDSE                            1
     LUT2                            4
     LUT6                            5
     RAM32M                          3
     RAMB18E1                        1
     RAMB36E1                        2
     DSP48E1                         4

   Estimated number of LCs:          9

Longest topological path in top (length=6):
";

    #[test]
    fn counts_each_resource_class_of_the_top_module() {
        let r = parse_synth_log(LOG, "top").unwrap();
        assert_eq!((r.luts, r.flip_flops, r.lut_rams, r.dsps, r.logic_depth), (9, 11, 3, 4, 6));
        assert_eq!(r.brams, 2.5);
        assert_eq!(r.cells["CARRY4"], 2);
        assert!(!r.cells.contains_key("Number"));
        assert_eq!(r.tool, "yosys 0.23");
    }

    #[test]
    fn a_log_without_the_path_length_is_an_error() {
        assert!(parse_synth_log("=== top ===\n     LUT2   1\n", "top").is_err());
    }
}
