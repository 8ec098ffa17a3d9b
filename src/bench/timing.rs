//! `weft bench timing`: the fabric's timing side by side with a reference switch. For the
//! router, the link, the register window and a node: Yosys synthesis for every family weft's
//! boards need (7-series, the family of the FloPoCo comparison; UltraScale+ for the U200/U280; Cyclone V
//! ALMs, the nearest Yosys 0.23 flow to the 520N's Stratix 10) with LUT levels and the deepest
//! path, and post-route Fmax on an ECP5-85F in the out-of-context harness of `weft check
//! --timing`. With `--reference <verilog-axis checkout>`, verilog-axis's `axis_switch` (5×5 ports,
//! 128-bit data, its default register types) goes through the same synthesis and the same
//! harness in the same run. The reference is read from the user's checkout and never copied into
//! weft. Placement changes Fmax from seed to seed: with several seeds every design, the reference
//! included, is placed and routed once per seed and the median is the figure.

use crate::Error;
use std::path::Path;

use serde::Serialize;
use weft_ip::catalog::Shipped;
use weft_tools::{place_and_route_seed, yosys_synth_for, Family, TimingReport};

/// The modules measured: the fabric's parts and a whole node.
pub const MODULES: [&str; 6] = ["router_4x2x1", "router_2x2x2", "reliable_link_x1", "reliable_link_x2", "axil_node_regs", "torus_4x2x1_node"];

/// The reference's wrapper module: verilog-axis `axis_switch` with 5 inputs, 5 outputs, 128-bit data.
pub const REFERENCE: &str = "axis_switch_5x5_w128";

/// One module's Yosys figures for one device family (an element of `families` in
/// `bench/timing.json`).
#[derive(Clone, Debug, Serialize)]
pub struct Family1 {
    /// The family: `xc7`, `xcup` or `cyclonev`.
    pub family: String,
    /// LUTs (Cyclone V: ALUTs).
    pub luts: u64,
    /// Flip-flops.
    pub flip_flops: u64,
    /// Distributed-RAM primitives (Cyclone V: MLABs).
    pub lut_rams: u64,
    /// Block RAM in RAMB36 units, a RAMB18 counting one half (Cyclone V: M10K blocks).
    pub brams: f64,
    /// Longest path in LUT levels.
    pub lut_levels: u64,
    /// The nets along that path, first to last (design names where they survive).
    pub lut_path: Vec<String>,
}

/// One placement seed's post-route result.
#[derive(Clone, Debug, Serialize)]
pub struct Seeded {
    /// nextpnr's placement seed.
    pub seed: u32,
    /// Post-route timing on the ECP5-85F; `None` with the reason when it did not place or route.
    pub timing: Option<TimingReport>,
    /// Why place and route failed, when it did.
    pub failure: Option<String>,
}

/// One module measured (a row of `bench/timing.json`).
#[derive(Clone, Debug, Serialize)]
pub struct Row {
    /// A shipped module's name, or [`REFERENCE`].
    pub module: String,
    /// Yosys figures per family, in the order 7-series, UltraScale+, Cyclone V.
    pub families: Vec<Family1>,
    /// Place and route once per seed.
    pub seeds: Vec<Seeded>,
    /// The median Fmax of the seeds that routed, MHz.
    pub median_fmax_mhz: Option<f64>,
}

/// The wrapper instantiating the reference switch, with weft-style port lines the harness reads.
fn reference_wrapper() -> String {
    let (n, w, k, dest) = (5, 128, 16, 4);
    format!(
        "module {REFERENCE}(clk, rst, s_axis_tdata, s_axis_tkeep, s_axis_tvalid, s_axis_tready, s_axis_tlast, s_axis_tdest, s_axis_tuser,\n\
         \x20   m_axis_tdata, m_axis_tkeep, m_axis_tvalid, m_axis_tready, m_axis_tlast, m_axis_tdest, m_axis_tuser);\n\
         input wire clk;\ninput wire rst;\n\
         input wire [{d}:0] s_axis_tdata;\ninput wire [{kk}:0] s_axis_tkeep;\ninput wire [{c}:0] s_axis_tvalid;\noutput wire [{c}:0] s_axis_tready;\n\
         input wire [{c}:0] s_axis_tlast;\ninput wire [{sd}:0] s_axis_tdest;\ninput wire [{c}:0] s_axis_tuser;\n\
         output wire [{d}:0] m_axis_tdata;\noutput wire [{kk}:0] m_axis_tkeep;\noutput wire [{c}:0] m_axis_tvalid;\ninput wire [{c}:0] m_axis_tready;\n\
         output wire [{c}:0] m_axis_tlast;\noutput wire [{c}:0] m_axis_tdest;\noutput wire [{c}:0] m_axis_tuser;\n\
         axis_switch #(.S_COUNT({n}), .M_COUNT({n}), .DATA_WIDTH({w}), .KEEP_ENABLE(1), .KEEP_WIDTH({k}), .ID_ENABLE(0), .M_DEST_WIDTH(1), .S_DEST_WIDTH({dest}), .USER_ENABLE(1), .USER_WIDTH(1)) switch (\n\
         \x20   .clk(clk), .rst(rst), .s_axis_tdata(s_axis_tdata), .s_axis_tkeep(s_axis_tkeep), .s_axis_tvalid(s_axis_tvalid), .s_axis_tready(s_axis_tready),\n\
         \x20   .s_axis_tlast(s_axis_tlast), .s_axis_tid(0), .s_axis_tdest(s_axis_tdest), .s_axis_tuser(s_axis_tuser),\n\
         \x20   .m_axis_tdata(m_axis_tdata), .m_axis_tkeep(m_axis_tkeep), .m_axis_tvalid(m_axis_tvalid), .m_axis_tready(m_axis_tready),\n\
         \x20   .m_axis_tlast(m_axis_tlast), .m_axis_tid(), .m_axis_tdest(m_axis_tdest), .m_axis_tuser(m_axis_tuser));\n\
         endmodule\n",
        d = n * w - 1,
        kk = n * k - 1,
        c = n - 1,
        sd = n * dest - 1,
    )
}

/// One file holding the reference switch and its wrapper, in `work`.
fn reference_file(checkout: &Path, work: &Path) -> Result<std::path::PathBuf, Error> {
    let mut text = String::new();
    for part in ["axis_switch.v", "axis_register.v", "arbiter.v", "priority_encoder.v"] {
        let path = checkout.join("rtl").join(part);
        let source = std::fs::read_to_string(&path).map_err(|e| Error::Io(format!("{}: {e} (give --reference the root of a verilog-axis checkout)", path.display())))?;
        // Yosys 0.23 rejects the `%m`, `%08x` and `%b` of the messages the parameter checks in
        // `initial` blocks print; nothing else is touched.
        text.push_str(&source.replace(" %m", "").replace("%08x", "%x").replace("%b", "%x"));
        text.push('\n');
    }
    text.push_str(&reference_wrapper());
    let file = work.join(format!("{REFERENCE}.v"));
    std::fs::write(&file, text)?;
    Ok(file)
}

fn measure(file: &Path, top: &str, seeds: &[u32], jobs: usize, progress: &mut dyn FnMut(&str)) -> Result<Row, Error> {
    let mut families = vec![];
    for family in Family::ALL {
        let s = yosys_synth_for(file, top, family)?;
        progress(&format!("{top} {}: {} LUT, {} FF, {} levels", family.name(), s.luts, s.flip_flops, s.lut_levels));
        families.push(Family1 { family: family.name().into(), luts: s.luts, flip_flops: s.flip_flops, lut_rams: s.lut_rams, brams: s.brams, lut_levels: s.lut_levels, lut_path: s.lut_path });
    }
    // `jobs` seeds at once, one nextpnr (single-threaded, its own folder) each.
    let report = |seed: u32, result: &Result<TimingReport, _>| match result {
        Ok(t) => format!("{top}, seed {seed}: {} MHz on the ECP5-85F, {} -> {}", t.fmax_mhz, t.critical_from, t.critical_to),
        Err(e) => format!("{top}, seed {seed}: place and route failed: {e}"),
    };
    let results = crate::flow::parallel(seeds, jobs, |&seed| place_and_route_seed(file, top, seed), |i, r| progress(&report(seeds[i], r)));
    let runs: Vec<Seeded> = seeds
        .iter()
        .zip(results)
        .map(|(&seed, r)| match r {
            Ok(t) => Seeded { seed, timing: Some(t), failure: None },
            Err(e) => Seeded { seed, timing: None, failure: Some(e.to_string()) },
        })
        .collect();
    let routed: Vec<f64> = runs.iter().filter_map(|r| r.timing.as_ref().map(|t| t.fmax_mhz)).collect();
    Ok(Row { module: top.into(), families, median_fmax_mhz: median(&routed), seeds: runs })
}

/// The median of `values` (the mean of the middle two for an even count).
pub fn median(values: &[f64]) -> Option<f64> {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => None,
        n if n % 2 == 1 => Some(v[n / 2]),
        n => Some((v[n / 2 - 1] + v[n / 2]) / 2.0),
    }
}

/// Measures `modules` (shipped module names whose Verilog is under `generated`) and, when given,
/// the reference switch from a verilog-axis checkout, placing and routing each once per seed,
/// `jobs` seeds at a time.
pub fn run(modules: &[String], generated: &Path, reference: Option<&Path>, seeds: &[u32], jobs: usize, work: &Path, progress: &mut dyn FnMut(&str)) -> Result<Vec<Row>, Error> {
    let shipped: Vec<Shipped> = weft_sim::catalog::shipped();
    let mut rows = vec![];
    if let Some(checkout) = reference {
        let file = reference_file(checkout, work)?;
        rows.push(measure(&file, REFERENCE, seeds, jobs, progress)?);
    }
    for name in modules {
        let module = shipped.iter().find(|m| &m.spec.name == name).ok_or_else(|| Error::Input(format!("unknown module `{name}`")))?;
        let file = generated.join(module.relative_path());
        if !file.exists() {
            return Err(Error::Check(format!("{} does not exist; run `weft generate` first", file.display())));
        }
        rows.push(measure(&file, name, seeds, jobs, progress)?);
    }
    Ok(rows)
}

/// The rows as a Markdown table (LUTs and LUT levels per family, Fmax per seed and the median,
/// the critical path of the median's seed, or the first seed's failure), then each module's
/// deepest 7-series LUT path.
pub fn table(rows: &[Row]) -> String {
    let mut out = String::from("| module | xc7 LUT | xc7 levels | xcup LUT | xcup levels | Cyclone V ALUT | ALUT levels | ECP5-85F Fmax per seed (MHz) | median | critical path |\n| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- | ---: | --- |\n");
    for r in rows {
        let f = |name: &str| r.families.iter().find(|f| f.family == name);
        let cell = |name: &str| f(name).map_or("–".to_string(), |f| format!("{} | {}", f.luts, f.lut_levels));
        let per_seed: Vec<String> = r.seeds.iter().map(|s| s.timing.as_ref().map_or("–".into(), |t| format!("{:.1}", t.fmax_mhz))).collect();
        let median = r.median_fmax_mhz.map_or("–".into(), |m| format!("{m:.1}"));
        // The path of the seed nearest the median, else why the first seed failed.
        let nearest = r.median_fmax_mhz.and_then(|m| r.seeds.iter().filter_map(|s| s.timing.as_ref()).min_by(|a, b| (a.fmax_mhz - m).abs().total_cmp(&(b.fmax_mhz - m).abs())));
        let path = match (nearest, r.seeds.iter().find_map(|s| s.failure.as_ref())) {
            (Some(t), _) => format!("{} → {}", t.critical_from, t.critical_to),
            (None, Some(e)) => e.lines().next().unwrap_or("").to_string(),
            _ => String::new(),
        };
        out.push_str(&format!("| {} | {} | {} | {} | {} | {median} | {path} |\n", r.module, cell("xc7"), cell("xcup"), cell("cyclonev"), per_seed.join(" / ")));
    }
    out.push_str("\nDeepest 7-series LUT path of each (start register, design names on the way, end):\n\n");
    for r in rows {
        if let Some(f) = r.families.iter().find(|f| f.family == "xc7") {
            out.push_str(&format!("- {}: {}\n", r.module, f.lut_path.join(" → ")));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reference_wrapper_declares_the_ports_the_harness_reads() {
        let ports = weft_tools::ports::ports(&reference_wrapper(), REFERENCE).unwrap();
        let width = |n: &str| ports.iter().find(|p| p.name == n).map(|p| p.width);
        assert_eq!((width("s_axis_tdata"), width("m_axis_tdata"), width("s_axis_tdest"), width("m_axis_tready")), (Some(640), Some(640), Some(20), Some(5)));
        assert_eq!(ports.iter().filter(|p| p.input).count(), 9);
    }
}
