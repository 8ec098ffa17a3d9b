//! The tables of `weft bench netsim` (`bench/netsim.json`): the measured runs and the model; the
//! load sweeps (`bench/netsim_load.json`) and BookSim2 beside them (`bench/booksim.json`).

use super::{f, fixed, int, load, rows, table, Sources};
use crate::bench::booksim::{BOOKSIM_ROUTER_CYCLES, LINK_CYCLES, ROUTER_CYCLES};
use crate::Error;

fn dims(v: &serde_json::Value) -> String {
    rows(v).iter().map(int).collect::<Vec<_>>().join("×")
}

pub(super) fn runs(src: &Sources) -> Result<String, Error> {
    let j = load(&src.bench, "netsim.json")?;
    let body = rows(&j["runs"])
        .iter()
        .chain(rows(&j["clocks"]).iter())
        .map(|r| {
            let per: Vec<String> = rows(&r["nodes_per_rank"]).iter().map(int).collect();
            let busiest = rows(&r["nodes_per_rank"]).iter().map(f).fold(0.0, f64::max);
            let node_cycle = (f(&r["seconds"]) - f(&r["swap_seconds"])) / (busiest * f(&r["cycles"]));
            let swap = if f(&r["swaps"]) > 0.0 { fixed(f(&r["swap_seconds"]) / f(&r["swaps"]) * 1e6, 1) } else { "–".into() };
            let ppm = r["ppm"].as_u64().unwrap_or(0);
            vec![
                dims(&r["dims"]),
                if ppm == 0 { "one".into() } else { format!("±{ppm} ppm") },
                int(&r["ranks"]),
                per.join(" + "),
                int(&r["cycles"]),
                fixed(f(&r["seconds"]), 1),
                int(&r["cycles_per_second"]),
                fixed(node_cycle * 1e6, 1),
                int(&r["swaps"]),
                swap,
                int(&r["packets"]),
                int(&r["flipped_bits"]),
            ]
        })
        .collect();
    Ok(table(
        "`weft netsim` on this machine (2 cores): the node of `torus_2x2x2` in Verilator on larger tori, bit error rate 10⁻⁶, uniform traffic; cycles include the 16 of the coordinate write and the 1,500 of bring-up; clocks: one for every node, or each node on its own within ±ppm of the nominal frequency. `weft bench netsim` (bench/netsim.json). Every packet arrived once and intact, and the packet logs of one and two ranks are the same.",
        &["torus", "clocks", "ranks", "nodes", "cycles", "seconds", "cycles/s", "µs a node-cycle", "swaps", "µs a swap", "packets", "bits flipped"],
        body,
    ))
}

pub(super) fn model(src: &Sources) -> Result<String, Error> {
    let j = load(&src.bench, "netsim.json")?;
    let mut body = vec![];
    for m in rows(&j["models"]) {
        let strong: Vec<String> =
            rows(&m["strong"]).iter().skip(1).map(|p| format!("P = {}: {} cycles/s ({}×, {} %)", int(&p[0]), int(&p[1]), fixed(f(&p[2]), 1), fixed(100.0 * f(&p[3]), 0))).collect();
        body.push(vec![
            dims(&m["dims"]),
            fixed(f(&m["node_cycle"]) * 1e6, 1),
            fixed(f(&m["wait"]) * 100.0, 1),
            fixed(f(&m["speedup_two"]), 2),
            strong.join("; "),
            format!("{} %", fixed(100.0 * f(&m["weak_efficiency"]), 1)),
        ]);
    }
    Ok(table(
        &format!(
            "The scaling model from those runs: c seconds a node-cycle (the smallest measured, outside swaps), j the time in swaps as a share of compute (the largest of the two-rank runs; mostly waiting for the other rank's window), predictions t(P) = (N/P)·c·(1 + j) + α/W a cycle for P ranks of a cluster with α = {} µs of network latency a window (an assumption). `weft bench netsim` (bench/netsim.json).",
            super::super::netsim::ALPHA * 1e6
        ),
        &["torus", "c (µs)", "j (%)", "2 ranks / 1, measured", "strong scaling, predicted: cycles/s on P ranks (× the model's one rank, efficiency)", "weak scaling, predicted efficiency"],
        body,
    ))
}

pub(super) fn load_sweeps(src: &Sources) -> Result<String, Error> {
    let j = load(&src.bench, "netsim_load.json")?;
    let body = rows(&j)
        .iter()
        .map(|s| {
            let points = rows(&s["points"]);
            let top = points.last().map_or(f64::NAN, |p| f(&p["offered_flits"]));
            vec![dims(&s["dims"]), s["pattern"].as_str().unwrap_or("").to_string(), fixed(f(&s["saturation"]), 3), fixed(f(&s["zero_load_latency"]), 1), points.len().to_string(), fixed(top, 3)]
        })
        .collect();
    Ok(table(
        "Generated nodes (the node of `torus_2x2x2`: routers, reliable links, 16-cycle cables) on larger tori under `weft netsim`: saturation throughput (128-bit flits a node a cycle accepted at the first load the network no longer accepts in full, 95 %) and zero-load latency (cycles from creation to the last beat of a 64-byte packet, 5 flits, at the lowest load), each load measured over the second half of its traffic phase. `weft bench netsim-load` (bench/netsim_load.json).",
        &["torus", "pattern", "saturation", "zero-load latency", "loads run", "highest offered"],
        body,
    ))
}

pub(super) fn booksim(src: &Sources) -> Result<String, Error> {
    let weft = load(&src.bench, "netsim_load.json")?;
    let booksim = load(&src.bench, "booksim.json")?;
    let body = rows(&booksim)
        .iter()
        .map(|b| {
            let ours = rows(&weft).iter().find(|s| s["dims"] == b["dims"] && s["pattern"] == b["pattern"]);
            let pick = |field: &str| ours.map_or("–".to_string(), |s| fixed(f(&s[field]), if field == "saturation" { 3 } else { 1 }));
            vec![
                dims(&b["dims"]),
                b["pattern"].as_str().unwrap_or("").to_string(),
                pick("saturation"),
                fixed(f(&b["saturation"]), 3),
                pick("zero_load_latency"),
                fixed(f(&b["zero_load_latency"]), 1),
                int(&b["channel_latency"]),
            ]
        })
        .collect();
    Ok(table(
        &format!(
            "The generated nodes under `weft netsim` beside BookSim2 configured as the node (its two VCs and their buffer depth, dimension-order routing, 5-flit packets, Bernoulli injection, a hop as long: BookSim2's {BOOKSIM_ROUTER_CYCLES} router stages and its channel for weft's {ROUTER_CYCLES} in the router, {LINK_CYCLES} of link logic and the cable), measured the same way: saturation throughput (flits a node a cycle accepted at the first load not accepted in full, 95 %) and zero-load latency (cycles, creation to last flit, at the lowest load). `weft bench netsim-load` (bench/netsim_load.json) and `weft bench booksim` (bench/booksim.json); BookSim2 built by scripts/booksim.sh."
        ),
        &["torus", "pattern", "weft saturation", "BookSim2 saturation", "weft zero-load latency", "BookSim2 zero-load latency", "BookSim2 channel latency"],
        body,
    ))
}
