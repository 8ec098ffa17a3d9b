//! The fabric's post-route timing beside the reference switch (`bench/timing.json`).

use super::{fixed, load, rows, Sources};
use crate::bench::timing::REFERENCE;
use crate::Error;

/// Fmax per seed, the median and its ratio to the reference switch's median, per module.
pub(super) fn fabric(src: &Sources) -> Result<String, Error> {
    let j = load(&src.bench, "timing.json")?;
    let median = |r: &serde_json::Value| r["median_fmax_mhz"].as_f64();
    let reference = rows(&j).iter().find(|r| r["module"] == REFERENCE).and_then(median);
    let body = rows(&j)
        .iter()
        .map(|r| {
            let seeds: Vec<String> = rows(&r["seeds"]).iter().map(|s| s["timing"]["fmax_mhz"].as_f64().map_or("no route".into(), |m| fixed(m, 1))).collect();
            let ratio = match (median(r), reference) {
                (Some(m), Some(x)) if r["module"] != REFERENCE => format!("{}×", fixed(m / x, 2)),
                _ => "–".into(),
            };
            vec![format!("`{}`", r["module"].as_str().unwrap_or("")), seeds.join(" / "), median(r).map_or("–".into(), |m| fixed(m, 1)), ratio]
        })
        .collect();
    Ok(super::table(
        "Post-route Fmax on a Lattice ECP5-85F (Yosys `synth_ecp5` + nextpnr-ecp5, out-of-context harness), one run per placement seed, in one run of `weft bench timing --reference <verilog-axis> --seeds 3` (bench/timing.json); reference: verilog-axis `axis_switch` (5×5 ports, 128-bit) in the same harness.",
        &["module", "MHz per seed", "median", "median / reference"],
        body,
    ))
}
