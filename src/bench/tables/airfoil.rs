//! The Airfoil tables: the compiled program on one node (`bench/airfoil.json`) and split over
//! the nodes of a torus (`bench/airfoil_nodes.json`).

use super::{f, fixed, int, load, rows, table, Sources};
use crate::Error;

pub(super) fn meshes(src: &Sources) -> Result<String, Error> {
    let j = load(&src.bench, "airfoil.json")?;
    let body = rows(&j["meshes"])
        .iter()
        .map(|m| {
            vec![
                int(&m["cells"]),
                int(&m["pipelines"]),
                if m["iteration_simulated"].is_null() { "–".into() } else { int(&m["iteration_simulated"]) },
                int(&m["iteration_cycles"]),
                int(&m["iteration_seed_model"]),
                fixed(f(&m["on_chip_bytes"]) / 1e6, 2),
            ]
        })
        .collect();
    Ok(table(
        &format!(
            "Cycles of one Airfoil iteration ({}; NACA0012 meshes), compiled from examples/apps/airfoil.app. `weft bench airfoil` (bench/airfoil.json). Simulated: the compiled hardware in the built-in simulator; compiler's model: `Compiled::cycles_with`, from the schedules; seed 002's form: per loop, elements / pipelines + the pipeline's fill.",
            j["precision"].as_str().unwrap_or("")
        ),
        &["cells", "pipelines", "simulated", "compiler's model", "seed 002's form", "on chip (MB)"],
        body,
    ))
}

pub(super) fn projection(src: &Sources) -> Result<String, Error> {
    let j = load(&src.bench, "airfoil.json")?;
    let mut body: Vec<Vec<String>> = rows(&j["projection"])
        .iter()
        .map(|p| vec![format!("weft, {} pipeline(s) at {} MHz (a stated clock, not a measured Fmax)", int(&p["pipelines"]), f(&p["clock_mhz"])), fixed(f(&p["seconds_1000_iterations"]), 2)])
        .collect();
    for o in rows(&j["op2_seconds"]) {
        body.push(vec![format!("{} (published)", o[0].as_str().unwrap_or("")), fixed(f(&o[1]), 2)]);
    }
    Ok(table(
        "1,000 iterations on the 720,000-cell mesh, seconds: the compiler's model at a stated clock beside OP2's published figures. `weft bench airfoil` (bench/airfoil.json).",
        &["what", "seconds"],
        body,
    ))
}

pub(super) fn programs(src: &Sources) -> Result<String, Error> {
    let j = load(&src.bench, "airfoil.json")?;
    let body = rows(&j["programs"])
        .iter()
        .map(|p| vec![int(&p["cells"]), p["precision"].as_str().unwrap_or("?").to_string(), int(&p["pipelines"]), int(&p["cycles_10_iterations"]), format!("`{}`", p["test"].as_str().unwrap_or("?"))])
        .collect();
    Ok(table(
        "Airfoil's whole program, 10 iterations each started alone: cycles by the compiler's model (`Compiled::cycles_with`); the named test of `tests/app_program_cosim.rs` runs it in Verilator, compares q, qold, adt, res and rms after every iteration with the hardware-order reference, and asserts every iteration's cycles equal the model's (the first in the default suite, the others with `-- --ignored`). `weft bench airfoil` (bench/airfoil.json).",
        &["cells", "precision", "pipelines", "cycles (10 iterations)", "Verilator test"],
        body,
    ))
}

pub(super) fn rms(src: &Sources) -> Result<String, Error> {
    let j = load(&src.bench, "airfoil.json")?;
    let runs = rows(&j["rms"]);
    let mut header = vec!["order".to_string(), "precision".to_string()];
    header.extend(runs.first().map_or(&[][..], |r| rows(&r["printed"])).iter().map(|p| int(&p[0])));
    header.push("% from OP2 at 1000".into());
    let body = runs
        .iter()
        .map(|r| {
            let mut row = vec![r["order"].as_str().unwrap_or("?").to_string(), r["precision"].as_str().unwrap_or("?").to_string()];
            row.extend(rows(&r["printed"]).iter().map(|p| format!("{:.5e}", f(&p[1]))));
            row.push(format!("{:+.1e}", f(&r["percent_from_op2"])));
            row
        })
        .collect();
    let header: Vec<&str> = header.iter().map(|h| h.as_str()).collect();
    Ok(table(
        "Airfoil on OP2's 720,000-cell mesh: rms every 100 iterations, and the distance from OP2's published 1.060114637578e-4 at iteration 1000 (OP2's own pass criterion: 1e-5 %). `weft bench airfoil` (bench/airfoil.json); `cargo test --release -p weft-ip --test airfoil_op2` holds the binary64 runs to the criterion.",
        &header,
        body,
    ))
}

/// The node counts `weft bench airfoil --nodes` simulated, as its option: `1,2,4,8`.
fn node_counts(j: &serde_json::Value) -> String {
    rows(&j["rows"]).iter().map(|r| int(&r["nodes"])).collect::<Vec<_>>().join(",")
}

/// The router's median Fmax over the placement seeds of `weft bench timing`
/// (`bench/timing.json`, `router_4x2x1` on the ECP5-85F), MHz: the slowest block of the node with
/// a measured Fmax (the binary64 accelerator has none).
fn router_fmax(src: &Sources) -> Result<f64, Error> {
    let timing = load(&src.bench, "timing.json")?;
    rows(&timing)
        .iter()
        .find(|r| r["module"] == "router_4x2x1")
        .and_then(|r| r["median_fmax_mhz"].as_f64())
        .ok_or_else(|| Error::Input("bench/timing.json: no `median_fmax_mhz` for router_4x2x1 (run `weft bench timing`)".into()))
}

/// What the Fmax columns say they use.
const FMAX_SOURCE: &str =
    "the median over placement seeds of router_4x2x1 on a Lattice ECP5-85F (bench/timing.json), the slowest block of the node with a measured Fmax; the binary64 accelerator has none";

pub(super) fn nodes(src: &Sources) -> Result<String, Error> {
    let j = load(&src.bench, "airfoil_nodes.json")?;
    let fmax = router_fmax(src)?;
    let body = rows(&j["rows"])
        .iter()
        .map(|r| {
            let (s, m) = (&r["simulated"], &r["model"]);
            let dims = rows(&r["dims"]).iter().map(int).collect::<Vec<_>>().join("×");
            let err = |k: &str| if f(&s[k]) > 0.0 { format!(" ({:+.1} %)", 100.0 * (f(&m[k]) / f(&s[k]) - 1.0)) } else { String::new() };
            vec![
                int(&r["nodes"]),
                if r["nodes"].as_u64() == Some(1) { "–".into() } else { dims },
                int(&r["cells_max"]),
                int(&r["halo_bytes"]),
                int(&s["compute"]),
                format!("{}{}", int(&s["exchange"]), err("exchange")),
                format!("{}{}", int(&s["reduction"]), err("reduction")),
                int(&s["iteration"]),
                format!("{} ({:+.2} %)", int(&m["iteration"]), f(&r["model_error_percent"])),
                fixed(f(&r["exchange_percent"]), 1),
                fixed(f(&r["speedup"]), 2),
                fixed(f(&r["us_at_fabric_clock"]), 0),
                fixed(f(&s["iteration"]) / fmax, 0),
            ]
        })
        .collect();
    Ok(table(
        &format!(
            "Airfoil ({}) on NACA0012 {}×{} ({} cells) split over N nodes, cycles an iteration ({} iterations simulated): each node's compiled program in the built-in simulator, halos and reductions over the generated nodes of the torus in Verilator (the exchange does not overlap compute: the next loop reads what it brings). Model: compute from the compiler's schedules (slowest node per stretch between sync steps), exchange and reduction from a hop, a packet, a link's bandwidth and one allreduce measured on the same fabric before the run; in brackets the model's error. µs at the fabric clock ({} MHz) and at the router's measured Fmax ({} MHz, {}). `weft bench airfoil --nodes {}` (bench/airfoil_nodes.json).",
            j["precision"].as_str().unwrap_or(""),
            int(&j["grid"][0]),
            int(&j["grid"][1]),
            int(&j["cells"]),
            int(&j["iterations"]),
            f(&j["fabric_mhz"]),
            fmax,
            FMAX_SOURCE,
            node_counts(&j)
        ),
        &["N", "torus", "cells / node", "halo bytes", "compute", "exchange", "reduction", "iteration", "model", "exchange %", "speedup", "µs (fabric clock)", "µs (Fmax)"],
        body,
    ))
}

pub(super) fn nodes_projection(src: &Sources) -> Result<String, Error> {
    let j = load(&src.bench, "airfoil_nodes.json")?;
    let fmax = router_fmax(src)?;
    let mut body: Vec<Vec<String>> = rows(&j["projection"])
        .iter()
        .map(|p| {
            let m = &p["model"];
            vec![
                format!("weft, {} nodes ({})", int(&p["nodes"]), rows(&p["dims"]).iter().map(int).collect::<Vec<_>>().join("×")),
                int(&p["cells_max"]),
                int(&p["halo_bytes"]),
                int(&m["compute"]),
                int(&m["exchange"]),
                int(&m["reduction"]),
                int(&m["iteration"]),
                fixed(f(&p["seconds_1000_at_fabric_clock"]), 3),
                fixed(1000.0 * f(&m["iteration"]) / (fmax * 1e6), 3),
            ]
        })
        .collect();
    for o in rows(&j["op2_seconds"]) {
        let none = || "–".to_string();
        body.push(vec![format!("{} (published)", o[0].as_str().unwrap_or("")), none(), none(), none(), none(), none(), none(), fixed(f(&o[1]), 3), none()]);
    }
    Ok(table(
        &format!(
            "Airfoil on OP2's {}-cell mesh split over 4–64 nodes by the model checked in the table above (compute from each node's compiled schedules; a hop, a packet and a link's bandwidth from the largest simulated torus; the allreduce {:.0} + {:.1}·H cycles, H the hops on the butterfly's critical path, a line through the simulated tori's), cycles an iteration and seconds for OP2's 1,000 iterations at the fabric clock and at the router's median Fmax ({:.1} MHz, bench/timing.json), beside OP2's published times for the same run. `weft bench airfoil --nodes {}` (bench/airfoil_nodes.json).",
            int(&j["projected_cells"]),
            f(&j["allreduce_line"][0]),
            f(&j["allreduce_line"][1]),
            fmax,
            node_counts(&j)
        ),
        &["what", "cells / node", "halo bytes", "compute", "exchange", "reduction", "iteration", "s (fabric clock)", "s (Fmax)"],
        body,
    ))
}
