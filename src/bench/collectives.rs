//! `weft bench collectives`: every collective of the engine
//! ([`weft_ip::system::allreduce::Collective`]) from 1 to 65,536 binary32 elements per node on a
//! system's generated nodes in Verilator, on the collective unit alone (the butterfly where it
//! takes the vector, else the chain) and striped over the torus's chains (one engine each,
//! [`weft_ip::system::allreduce::stripes`]), each run checked against its reference, beside a
//! lower bound per collective.
//!
//! **Bounds.** With S the bytes of one node's vector, P nodes, L inbound links a node carrying B
//! payload bytes a cycle each, and D·h the diameter's hops (B and h measured on the same fabric,
//! [`super::allreduce::fabric_rates`]), a collective whose busiest node must receive R bytes
//! takes at least ⌈R / (L·B)⌉ + D·h cycles:
//!
//! | collective | R | why |
//! | --- | --- | --- |
//! | allreduce | 2·(P − 1)/P · S | per element, at least 2·(P − 1) one-way transfers let every node hear from all (gossip); the busiest node receives at least the average |
//! | reduce | S | the root's result depends on every other node's vector |
//! | broadcast | S | every other node must receive the root's vector |
//! | allgather | (P − 1) · S | every node must receive every other node's vector |
//! | reduce-scatter | (P − 1)/P · S | per element, P − 1 transfers bring every value to one node; the average again |
//! | barrier | 0 | only the farthest node's signal: D·h |
//!
//! Each bound assumes every inbound link busy the whole time and no framing beyond the measured
//! rate. Reduce and broadcast are rooted at node 0.

use crate::bench::allreduce::{engine_ports, fabric_rates, striped_torus, verilate, Fabric, PACKET_BYTES, PORTS};
use crate::system::SystemConfig;
use crate::Error;
use serde::Serialize;
use std::path::Path;

use weft_ip::system::allreduce::check::operand;
use weft_ip::system::allreduce::{stripes, Collective, ElementType, ReduceOp};
use weft_ip::weft_hdl::testbench::Rng;
use weft_sim::plot::{Plot, Series};

/// Vector lengths of the benchmark (elements per node).
pub const LENGTHS: [usize; 5] = [1, 16, 256, 4096, 65536];

/// The collectives measured, reduce and broadcast rooted at node 0.
pub const MEASURED: [Collective; 6] = [Collective::Allreduce, Collective::Reduce { root: 0 }, Collective::Broadcast { root: 0 }, Collective::Allgather, Collective::ReduceScatter, Collective::Barrier];

/// One collective at one length (a row of `points` in `bench/collectives_<system>.json`).
#[derive(Clone, Debug, Serialize)]
pub struct Point {
    /// `allreduce`, `reduce`, `broadcast`, `allgather`, `reduce-scatter`, `barrier`.
    pub collective: String,
    /// Elements of each node's vector (a barrier: 1).
    pub elements: usize,
    /// On the collective unit alone: first contribution beat offered to the last result beat
    /// taken.
    pub cycles: u64,
    /// Striped over the torus's chains, one engine each (none for the barrier).
    pub striped_cycles: Option<u64>,
    /// The chains the striped run used.
    pub stripes: usize,
    /// The faster of the two.
    pub best_cycles: u64,
    /// The best in µs at the system's fabric clock.
    pub microseconds: f64,
    /// One node's vector bytes over the best time: bytes/s.
    pub bytes_per_second: f64,
    /// The lower bound of the module's table, cycles.
    pub bound_cycles: u64,
    /// `best_cycles / bound_cycles`.
    pub to_bound: f64,
}

/// Everything `weft bench collectives` measures on one system.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    /// The system's name.
    pub system: String,
    /// Torus dimensions [X, Y, Z].
    pub dims: [usize; 3],
    /// Fabric clock, MHz.
    pub fabric_mhz: f64,
    /// h, B, L and D, measured on the same fabric.
    #[serde(flatten)]
    pub fabric: Fabric,
    /// One point per collective and length.
    pub points: Vec<Point>,
}

/// Bytes the busiest node must receive for `c` with vectors of `s` bytes on `p` nodes.
pub fn received(c: Collective, s: f64, p: usize) -> f64 {
    let p1 = (p - 1) as f64;
    match c {
        Collective::Allreduce => 2.0 * p1 / p as f64 * s,
        Collective::Reduce { .. } | Collective::Broadcast { .. } => s,
        Collective::Allgather => p1 * s,
        Collective::ReduceScatter => p1 / p as f64 * s,
        Collective::Barrier => 0.0,
    }
}

/// Runs every collective of [`MEASURED`] at `lengths` on `system`, building in `work`.
pub fn run(system: &SystemConfig, lengths: &[usize], work: &Path, progress: &mut dyn FnMut(&str)) -> Result<Report, Error> {
    let rc = system.node.router.clone();
    let nodes = rc.nodes();
    let ty = ElementType::F32;
    let (hop_cycles, link_bytes_per_cycle) = {
        let mut plain = verilate(system, &work.join("plain"), progress)?;
        fabric_rates(&mut plain, &rc, 0)?
    };
    progress(&format!("one hop {hop_cycles} cycles; a link carries {link_bytes_per_cycle:.2} payload bytes a cycle"));
    let fabric = Fabric::of(&rc, hop_cycles, link_bytes_per_cycle);
    let mut torus = striped_torus(system, ty, &work.join("engine"), progress)?;
    let engines = engine_ports();
    let mut rng = Rng::new(0xC011);
    let mut points = vec![];
    for c in MEASURED {
        for &n in lengths {
            let elements = if c == Collective::Barrier { 1 } else { n };
            if c == Collective::Barrier && n != lengths[0] {
                continue;
            }
            let vectors: Vec<Vec<u128>> = (0..nodes).map(|_| (0..elements).map(|_| operand(ty, &mut rng)).collect()).collect();
            let differs = |run: &[Vec<u128>], want: &[Vec<u128>], how: &str| match (0..nodes).find(|&k| run[k] != want[k]) {
                Some(k) => Err(Error::Check(format!("{}: {} of {elements} elements {how}: node {k} differs from the reference", system.name, c.name()))),
                None => Ok(()),
            };
            let limit = 400_000 + 40 * (nodes * elements) as u64;
            let r = torus.collective(c, PORTS, ty, ReduceOp::Sum, &vectors, PACKET_BYTES, None, limit)?;
            differs(&r.results, &c.reference(&rc, &vectors, ty, ReduceOp::Sum, PACKET_BYTES), "on the unit")?;
            let (mut striped_cycles, mut chains) = (None, 0);
            if c != Collective::Barrier {
                let (striping, s) = torus.collective_striped(c, &engines, ty, ReduceOp::Sum, &vectors, PACKET_BYTES, None, limit)?;
                differs(&s.results, &stripes::collective_reference(&rc, &striping, c, &vectors, ty, ReduceOp::Sum), "striped")?;
                (striped_cycles, chains) = (Some(s.cycles), striping.chains.len());
            }
            let best = striped_cycles.map_or(r.cycles, |s| s.min(r.cycles));
            let s = (ty.bytes() * elements) as f64;
            let bound = fabric.bound(received(c, s, nodes));
            let microseconds = best as f64 / system.fabric_mhz;
            let striped_text = striped_cycles.map_or(String::new(), |x| format!(", striped over {chains} chains {x}"));
            progress(&format!("{} of {elements} elements: unit {} cycles{striped_text} ({:.2}× the bound), every node bit-exact", c.name(), r.cycles, best as f64 / bound as f64));
            points.push(Point {
                collective: c.name().into(),
                elements,
                cycles: r.cycles,
                striped_cycles,
                stripes: chains,
                best_cycles: best,
                microseconds,
                bytes_per_second: s / (microseconds * 1e-6),
                bound_cycles: bound,
                to_bound: best as f64 / bound as f64,
            });
        }
    }
    Ok(Report { system: system.name.clone(), dims: rc.dims, fabric_mhz: system.fabric_mhz, fabric, points })
}

/// The report as a Markdown table.
pub fn table(r: &Report) -> String {
    let mut t = format!(
        "collectives on {} ({}×{}×{}, {} MHz): one hop {} cycles, diameter {}, {} inbound links a node at {:.2} payload bytes a cycle\n",
        r.system, r.dims[0], r.dims[1], r.dims[2], r.fabric_mhz, r.fabric.hop_cycles, r.fabric.diameter, r.fabric.inbound_links, r.fabric.link_bytes_per_cycle
    );
    t.push_str("| collective | elements | unit cycles | striped cycles (chains) | best | µs | MB/s | bound cycles | best / bound |\n| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
    for p in &r.points {
        let striped = p.striped_cycles.map_or("–".into(), |x| format!("{x} ({})", p.stripes));
        t.push_str(&format!(
            "| {} | {} | {} | {striped} | {} | {:.2} | {:.0} | {} | {:.2} |\n",
            p.collective,
            p.elements,
            p.cycles,
            p.best_cycles,
            p.microseconds,
            p.bytes_per_second / 1e6,
            p.bound_cycles,
            p.to_bound
        ));
    }
    t
}

/// SVG plot of each collective's cycles over its bound against the vector length.
pub fn plot(r: &Report) -> String {
    let series: Vec<Series> = MEASURED
        .iter()
        .filter(|c| **c != Collective::Barrier)
        .map(|c| Series { name: c.name().into(), points: r.points.iter().filter(|p| p.collective == c.name()).map(|p| (p.elements as f64, p.to_bound)).collect() })
        .collect();
    let y_max = series.iter().flat_map(|s| s.points.iter().map(|p| p.1)).fold(0.0, f64::max) * 1.1;
    Plot { title: format!("collectives on {}: cycles / lower bound", r.system), x_label: "elements per node (binary32)".into(), y_label: "cycles / bound".into(), log2_x: true, y_max, series }.svg()
}
