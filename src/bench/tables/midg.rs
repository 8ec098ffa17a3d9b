//! The MIDG2 tables (`bench/midg.json`, `bench/dg.json`).

use super::{f, fixed, int, load, rows, table, Sources};
use crate::Error;

pub(super) fn convergence(src: &Sources) -> Result<String, Error> {
    let j = load(&src.bench, "midg.json")?;
    let body = rows(&j["rows"])
        .iter()
        .map(|r| {
            let order = |v: &serde_json::Value| if v.is_null() { "–".to_string() } else { format!("{:.2}", f(v)) };
            vec![
                int(&r["order"]),
                format!("{}³", int(&r["cubes"])),
                int(&r["elements"]),
                int(&r["steps"]),
                format!("{:.3e}", f(&r["error_binary64"])),
                order(&r["order_binary64"]),
                format!("{:.3e}", f(&r["error_binary32"])),
                order(&r["order_binary32"]),
                format!("{:.1e}", f(&r["rounding"])),
            ]
        })
        .collect();
    Ok(table(
        &format!(
            "MIDG2's test case — the cavity mode Ey = sin(πx)·sin(πz)·cos(√2·π·t) in the perfectly conducting unit cube — run by the software model to t = {} with MIDG2's time step; the largest nodal error of any of the six fields against the exact solution, the observed order log2(e_coarse / e_fine) between successive meshes (expected N + 1), in binary64 and binary32, and the largest difference between the two runs at any node (what rounding to binary32 adds; where it nears the error, rounding takes over). `weft bench midg` (bench/midg.json).",
            f(&j["end_time"])
        ),
        &["N", "sub-cubes", "elements", "steps", "error (binary64)", "order", "error (binary32)", "order", "binary32 − binary64"],
        body,
    ))
}

pub(super) fn torus(src: &Sources) -> Result<String, Error> {
    let j = load(&src.bench, "dg.json")?;
    let r = &j["runs"][0];
    let mut body: Vec<Vec<String>> =
        rows(&r["loops"]).iter().map(|l| vec![l["part"].as_str().unwrap_or("").into(), format!("`{}`", l["name"].as_str().unwrap_or("")), int(&l["cycles_per_stage"])]).collect();
    body.push(vec!["exchange".into(), "sync steps (halo refresh)".into(), int(&r["exchange_cycles"])]);
    let caption = format!(
        "MIDG2 N = {} (binary32) on `{}` with no host, {} elements, {} step(s): cycles a Runge–Kutta stage on the busiest node at {} MHz. `weft bench dg` (bench/dg.json); every field equal to the partitioned software model.",
        r["order"],
        r["system"].as_str().unwrap_or(""),
        int(&r["elements"]),
        r["steps"],
        r["fabric_mhz"]
    );
    Ok(table(&caption, &["part", "loop", "cycles a stage"], body))
}

pub(super) fn meshes(src: &Sources) -> Result<String, Error> {
    let j = load(&src.bench, "dg.json")?;
    let body = rows(&j["runs"])
        .iter()
        .map(|r| {
            vec![
                int(&r["elements"]),
                int(&r["volume_cycles"]),
                int(&r["surface_cycles"]),
                int(&r["update_cycles"]),
                int(&r["exchange_cycles"]),
                int(&r["sync_cycles"]),
                int(&r["halo_elements_per_stage"]),
                int(&r["halo_bytes_per_stage"]),
                int(&r["halo_wire_bytes_per_stage"]),
                int(&r["halo_packets_per_stage"]),
                fixed(f(&r["exchange_gb_per_s"]), 2),
                fixed(f(&r["gflops"]), 1),
            ]
        })
        .collect();
    Ok(table(
        "MIDG2 N = 3 (binary32) on `torus_2x2x2` with no host, per mesh: cycles a Runge–Kutta stage on the busiest node (volume: `derivatives` + `curl`; surface: `flux` + `lift`; exchange: each sync step from the last node's arrival to its departure; at sync: the longest a node spent there, waiting for slower neighbours included), the halo all nodes receive a stage (six binary32 values a face node; on the wire two 16-byte beats each and a header a packet), its rate over the exchange, and GFLOP/s over the run by MIDG2's FLOP model (28,360 an element and stage) at the fabric clock. `weft bench dg` (bench/dg.json).",
        &["elements", "volume", "surface", "update", "exchange", "at sync", "halo values", "halo B", "on the wire B", "packets", "GB/s", "GFLOP/s"],
        body,
    ))
}

pub(super) fn resources(src: &Sources) -> Result<String, Error> {
    let j = load(&src.bench, "dg.json")?;
    let body = rows(&j["resources"])
        .iter()
        .map(|r| {
            vec![
                int(&r["order"]),
                r["matrix"].as_str().unwrap_or("").into(),
                format!("{} × {}", r["rows"], r["cols"]),
                int(&r["lanes"]),
                int(&r["cycles_per_element"]),
                int(&r["luts"]),
                int(&r["flip_flops"]),
                int(&r["dsps"]),
                int(&r["lut_rams"]),
            ]
        })
        .collect();
    Ok(table(
        "MIDG2's element-local dense operators in binary32, per order N and lanes P: cycles an element with nothing waiting (C·max(⌈R/P⌉, adder stages) plus the pipeline's fill) and Yosys `synth_xilinx` resources. `weft bench dg` (bench/dg.json).",
        &["N", "matrix", "R × C", "lanes", "cycles an element", "LUT", "FF", "DSP", "LUTRAM"],
        body,
    ))
}

pub(super) fn timing(src: &Sources) -> Result<String, Error> {
    let t = load(&src.bench, "dg_timing.json")?;
    let runs = load(&src.bench, "dg.json")?;
    let mhz = |v: &serde_json::Value| if v.is_null() { "–".to_string() } else { fixed(f(v), 1) };
    let modules = rows(&t);
    let mut body: Vec<Vec<String>> = modules
        .iter()
        .map(|r| {
            let seeds: Vec<String> = rows(&r["fmax_mhz"]).iter().map(mhz).collect();
            let failure = r["failure"].as_str().unwrap_or("");
            let fmax = match (failure.strip_prefix("does not fit the ECP5-85F: ").map(String::from).or_else(|| crate::bench::dg_timing::over_capacity(failure)), r["median_mhz"].is_null()) {
                (Some(over), true) => format!("does not fit: {over}"),
                _ => seeds.join(" / "),
            };
            vec![format!("`{}`", r["module"].as_str().unwrap_or("")), r["what"].as_str().unwrap_or("").into(), fmax, mhz(&r["median_mhz"])]
        })
        .collect();
    for (module, what) in crate::bench::dg_timing::MODULES.iter().filter(|(m, _)| !modules.iter().any(|r| r["module"].as_str() == Some(m))) {
        body.push(vec![format!("`{module}`"), (*what).into(), "not measured".into(), "–".into()]);
    }
    let seeds: Vec<String> = modules.first().map(|r| rows(&r["seeds"]).iter().map(int).collect()).unwrap_or_default();
    let slowest = modules.iter().filter(|r| !r["median_mhz"].is_null()).map(|r| f(&r["median_mhz"])).fold(f64::INFINITY, f64::min);
    if slowest.is_finite() {
        for r in rows(&runs["runs"]) {
            let at = f(&r["gflops"]) * slowest / f(&r["fabric_mhz"]);
            body.push(vec![format!("{} elements", int(&r["elements"])), format!("GFLOP/s at {slowest:.1} MHz (the run's cycles, `weft bench dg`)"), String::new(), fixed(at, 2)]);
        }
    }
    Ok(table(
        &format!(
            "MIDG2 N = 3 (binary32): each compute module of the program placed and routed alone on an ECP5-85F (nextpnr-ecp5, out-of-context harness, seeds {}), Fmax per seed and the median; the slowest median of those measured bounds the program's clock (its sequencer, memories and halo engine are not in these figures), and the last rows give each mesh's GFLOP/s by MIDG2's FLOP model at that clock. `weft bench dg-timing` (bench/dg_timing.json).",
            seeds.join(" / ")
        ),
        &["module", "computes", "Fmax per seed, MHz", "median, MHz"],
        body,
    ))
}
