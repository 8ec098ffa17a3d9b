//! `weft bench allreduce`: the in-network allreduce ([`weft_ip::system::allreduce`]) on a
//! system's torus, in Verilator on the generated node RTL (one model per node, cables as channel
//! models of the configured latency), beside the gather-then-broadcast baseline on the same
//! fabric without the engine, and beside the torus's lower bound.
//!
//! Every run is checked: each node's result must equal [`reference()`] bit for bit (random binary32
//! vectors, magnitudes 2^−4 … 2^4 with random signs, so the summation order shows).
//!
//! - **Time**: from the first contribution beat offered to the last result beat taken by the last
//!   host (every host offers its vector from the same cycle, at full rate); on the chain alone
//!   (packets of `packet_bytes`), and selected by size (the butterfly for a vector of at most
//!   the collectives' `small_bytes`, one packet; else the chain, packets as
//!   [`Collective::packets`] splits them).
//! - **Baseline**: every other node sends its vector from port 0 to the root's port `n mod ports`;
//!   once all has arrived, the root sends the sum to port 0 of every other node, node `j`'s copy
//!   from the root's port `j mod ports` (the sum itself is charged nothing). Both phases run on
//!   the node without the engine, checked packet by packet.
//! - **Endpoint ring** (ACCL's allreduce: reduce-scatter then allgather, reduction at the
//!   endpoints): the vector in P chunks; 2·(P − 1) steps in which every node sends one chunk from
//!   port 0 to port 0 of its successor on the snake ring (consecutive nodes neighbours), each step
//!   starting when the previous one has been delivered; the additions are charged nothing.
//! - **Lower bound** (any algorithm, reduction anywhere): every node's result depends on every
//!   node's element, so for each element the nodes must together receive at least 2·(P − 1)
//!   values — the minimum number of one-way messages that lets each of P nodes hear from all
//!   the others (the gossip problem; a partial result carries no more than the values it
//!   combines). The busiest node receives at least the average, 2·(P − 1)/P · S bytes for
//!   S = bytes per vector, through its L inbound links (two per dimension of two or more nodes:
//!   4 on 4×2×1, 6 on 2×2×2, 2 on a ring), each at B payload bytes a cycle (measured here:
//!   packets of `max_packet_bytes` streamed to a neighbour, first header in to last beat out);
//!   and the farthest node's contribution needs the torus diameter D (`Σ ⌊dim / 2⌋`) hops of h
//!   cycles (a one-hop packet at zero load, first header beat in to first out, the fastest of
//!   three): ⌈2·(P − 1)·S / (P·L·B)⌉ + D·h. Reduce-scatter + allgather at the endpoints moves
//!   exactly these bytes, so the bound holds for them too. It assumes every inbound link busy for
//!   the whole operation and no framing beyond the measured rate.
//! - **Arrival bound** (weaker, reported beside it): each result byte reaching each node once,
//!   ⌈S / (L·B)⌉ + D·h.
//! - The lower bound at the links' raw rate (`lanes · 8` bytes a cycle, no framing) is reported
//!   beside them.

use crate::Error;
use std::path::Path;

use serde::Serialize;
use weft_ip::router::Direction;
use weft_ip::system::allreduce::check::operand;
use weft_ip::system::allreduce::{packet_sizes, reference, stripes, Collective, ElementType, ReduceOp, MAX_STRIPES};
use weft_ip::system::Allreduce;
use weft_ip::weft_hdl::testbench::Rng;
use weft_sim::link::VerilatorDevice;
use weft_sim::network::{Injection, Pattern, Torus, Traffic};
use weft_sim::plot::{Plot, Series};

use crate::system::SystemConfig;

/// Vector lengths of the benchmark (elements).
pub const LENGTHS: [usize; 8] = [1, 7, 16, 64, 256, 1000, 1024, 4096];
/// The in-network runs' packets: 256 bytes (16 flits of 128 bits). Measured on torus_4x2x1 at
/// 4096 elements: 128 B 1843 cycles, 256 B 1715, 512 B 1746, 1024 B 1969 (longer packets carry
/// less framing but fill the chain more slowly and wait on buffer credits).
pub const PACKET_BYTES: usize = 256;
/// The engine's ports: `a` (host side and partials), `b`.
pub const PORTS: [usize; 2] = [0, 1];
/// The ports of the further chain engines of a striped allreduce ([`stripes`]).
pub const STRIPE_PORTS: [[usize; 2]; MAX_STRIPES - 1] = [[2, 3], [4, 5]];

/// Every engine's ports on a [`striped_torus`]: the unit's ([`PORTS`]), then the stripes'.
pub fn engine_ports() -> Vec<[usize; 2]> {
    std::iter::once(PORTS).chain(STRIPE_PORTS).collect()
}

/// One vector length (a row of `points` in `bench/allreduce_<system>.json`), in fabric-clock
/// cycles. Without the fabric-alone runs ([`Options::baseline`] false) the baselines are `None`
/// and the bounds and `to_bound` 0.
#[derive(Clone, Debug, Serialize)]
pub struct Point {
    /// Vector length, elements per node.
    pub elements: usize,
    /// The in-network allreduce on the chain alone: first contribution beat offered to the last
    /// result beat taken.
    pub cycles: u64,
    /// The in-network allreduce with selection by size ([`Collective::Allreduce`]'s programs):
    /// the butterfly for a vector of at most `small_bytes`, else the chain.
    pub selected_cycles: u64,
    /// Whether the selection ran the vector on the butterfly.
    pub butterfly: bool,
    /// The allreduce striped over the torus's chains ([`stripes`]), one slice per engine.
    pub striped_cycles: u64,
    /// The chains the striped run used (1: the plain chain).
    pub stripes: usize,
    /// Selection by size with the stripes: the butterfly up to `small_bytes` (as
    /// `selected_cycles`), else striped (as `striped_cycles`).
    pub best_cycles: u64,
    /// Gather-then-broadcast on the fabric without the engine, both phases.
    pub baseline_cycles: Option<u64>,
    /// The endpoint ring on the same fabric, all 2·(P − 1) steps.
    pub ring_cycles: Option<u64>,
    /// 2·(P − 1)/P of the vector's bytes over every inbound link at the measured payload rate,
    /// plus diameter × hop (the module's derivation).
    pub lower_bound_cycles: u64,
    /// The vector's bytes once over every inbound link, plus diameter × hop (weaker).
    pub arrival_bound_cycles: u64,
    /// The lower bound at the links' raw rate (`lanes · 8` bytes a cycle).
    pub raw_bound_cycles: u64,
    /// `best_cycles / lower_bound_cycles`.
    pub to_bound: f64,
}

/// Everything `weft bench allreduce` measures on one system; written to
/// `bench/allreduce_<system>.json`.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    /// The system's name.
    pub system: String,
    /// Torus dimensions [X, Y, Z].
    pub dims: [usize; 3],
    /// Fabric clock, MHz: converts the cycles to ns.
    pub fabric_mhz: f64,
    /// Bytes per packet of the in-network runs (the option rounded down to a multiple of the
    /// element's bytes, at most `max_packet_bytes`).
    pub packet_bytes: usize,
    /// Bit error rate on every cable during the engine's runs.
    pub bit_error_rate: f64,
    /// Bits flipped on the cables during the engine's runs.
    pub flipped_bits: u64,
    /// h, B, L and D (h and B 0 without the fabric-alone runs).
    #[serde(flatten)]
    pub fabric: Fabric,
    /// One point per vector length.
    pub points: Vec<Point>,
}

/// What a collective's lower bound is made of; the reports' JSON holds the fields in place.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Fabric {
    /// h: one hop at zero load, first header beat in to first out, the fastest of three, cycles.
    pub hop_cycles: u64,
    /// B: payload bytes a cycle one link carries, packets of `max_packet_bytes` streamed.
    pub link_bytes_per_cycle: f64,
    /// L: links into each node, two per dimension of two or more nodes.
    pub inbound_links: usize,
    /// D: the torus diameter in hops, `Σ ⌊dim / 2⌋`.
    pub diameter: usize,
}

impl Fabric {
    /// L and D of the torus `rc`, with h and B as measured.
    pub fn of(rc: &weft_ip::router::RouterConfig, hop_cycles: u64, link_bytes_per_cycle: f64) -> Fabric {
        Fabric { hop_cycles, link_bytes_per_cycle, inbound_links: 2 * rc.dims.iter().filter(|d| **d > 1).count(), diameter: rc.dims.iter().map(|d| d / 2).sum() }
    }

    /// ⌈bytes / (L·B)⌉ + D·h: the busiest node receiving `bytes` over every inbound link.
    pub fn bound(&self, bytes: f64) -> u64 {
        self.bound_at(bytes, self.link_bytes_per_cycle)
    }

    /// [`Fabric::bound`] with each link carrying `rate` bytes a cycle.
    pub fn bound_at(&self, bytes: f64, rate: f64) -> u64 {
        (bytes / (self.inbound_links as f64 * rate)).ceil() as u64 + self.diameter as u64 * self.hop_cycles
    }
}

/// How to run.
#[derive(Clone, Debug)]
pub struct Options {
    /// Vector lengths, elements per node (the command allows 1..=65536).
    pub lengths: Vec<usize>,
    /// Bit error rate on every cable during the engine's runs (the command allows 0 ..= 1e-3).
    pub bit_error_rate: f64,
    /// A seed: random gaps in the hosts' streams and back-pressure on their results.
    pub pressure: Option<u64>,
    /// Also measure the fabric without the engine: a hop, a link's bandwidth (so the lower
    /// bound), and the gather-then-broadcast baseline.
    pub baseline: bool,
    /// Bytes per packet (a multiple of the element's bytes, at most `max_packet_bytes`).
    pub packet_bytes: usize,
    /// The engine's element type (the node is generated with it).
    pub element: ElementType,
    /// The operator every operation of the run uses.
    pub op: ReduceOp,
}

/// One hop at zero load (first header beat in to first out, the fastest of three, after the
/// links' first frames) and one link's payload bytes a cycle (packets of `max_packet_bytes`
/// streamed to the X+ neighbour, first header in to last beat out), between IntraNode ports
/// `port` of nodes that carry no other traffic.
pub fn fabric_rates(plain: &mut Torus<VerilatorDevice>, rc: &weft_ip::router::RouterConfig, port: usize) -> Result<(u64, f64), Error> {
    let next = rc.neighbour(0, Direction { dim: 0, plus: true });
    let mut hop_cycles = u64::MAX;
    for _ in 0..3 {
        let one = plain.run(&traffic(Injection::One { src: (0, port), dst: (next, port), bytes: 16 }), 10_000)?.map_err(|s| Error::Check(format!("one hop: stuck at {s:?}")))?;
        let d = one.deliveries[0];
        hop_cycles = hop_cycles.min(d.head_out - d.head_in);
        plain.idle(200);
    }
    let (count, bytes) = (64, rc.max_packet_bytes);
    let stream = plain.run(&traffic(Injection::Stream { src: (0, port), dst: (next, port), bytes, count, both_ways: false }), 10_000)?.map_err(|s| Error::Check(format!("stream: stuck at {s:?}")))?;
    let first = stream.deliveries.iter().map(|d| d.head_in).min().unwrap();
    let end = stream.deliveries.iter().map(|d| d.tail_out).max().unwrap();
    let link_bytes_per_cycle = (count * bytes) as f64 / (end - first) as f64;
    Ok((hop_cycles, link_bytes_per_cycle))
}

/// One packet of `max_packet_bytes` to the X+ neighbour at zero load, first header beat in to
/// last beat out, between IntraNode ports `port` (the fastest of three).
pub fn packet_cycles(plain: &mut Torus<VerilatorDevice>, rc: &weft_ip::router::RouterConfig, port: usize) -> Result<u64, Error> {
    let next = rc.neighbour(0, Direction { dim: 0, plus: true });
    let mut best = u64::MAX;
    for _ in 0..3 {
        let one = plain.run(&traffic(Injection::One { src: (0, port), dst: (next, port), bytes: rc.max_packet_bytes }), 10_000)?.map_err(|s| Error::Check(format!("one packet: stuck at {s:?}")))?;
        let d = one.deliveries[0];
        best = best.min(d.tail_out - d.head_in);
        plain.idle(200);
    }
    Ok(best)
}

/// `system`'s nodes with the engine on [`PORTS`] for elements of `ty`, generated and built in
/// Verilator in `work`, links up.
pub fn engine_torus(system: &SystemConfig, ty: ElementType, work: &Path, progress: &mut dyn FnMut(&str)) -> Result<Torus<VerilatorDevice>, Error> {
    verilate(&with_engines(system, ty, &[]), work, progress)
}

/// [`engine_torus`] with the stripes' engines on [`STRIPE_PORTS`] too (the node widened to six
/// IntraNode ports).
pub fn striped_torus(system: &SystemConfig, ty: ElementType, work: &Path, progress: &mut dyn FnMut(&str)) -> Result<Torus<VerilatorDevice>, Error> {
    verilate(&with_engines(system, ty, &STRIPE_PORTS), work, progress)
}

/// The engine on [`PORTS`] and stripe engines on `stripes`.
pub(crate) fn with_engines(system: &SystemConfig, ty: ElementType, stripes: &[[usize; 2]]) -> SystemConfig {
    let mut engine_system = system.clone();
    let used: Vec<usize> = PORTS.iter().chain(stripes.iter().flatten()).copied().collect();
    let local_ports = engine_system.node.router.local_ports.max(used.iter().max().unwrap() + 1);
    engine_system.node.router.local_ports = local_ports;
    engine_system.node.allreduce = Some(Allreduce { stripes: stripes.to_vec(), ..Allreduce::new(PORTS, ty) });
    // The engines' ports are their own: no shell clock crossing or kernel on them.
    engine_system.ports.retain(|p| !used.contains(&p.index));
    engine_system
}

/// `system`'s nodes generated and built in Verilator in `work`, links up.
pub fn verilate(system: &SystemConfig, work: &Path, progress: &mut dyn FnMut(&str)) -> Result<Torus<VerilatorDevice>, Error> {
    let generated = work.join("generated");
    crate::system::generate(system, &generated, &work.join("constraints"))?;
    let name = format!("{}_node", system.name);
    progress(&format!("building {name} in Verilator"));
    let mut torus = Torus::verilated_nodes(&system.node, &generated.join("system").join(format!("{name}.v")), &name, system.channel_latency)?;
    torus.reset();
    let up = torus.bring_up(100_000)?;
    progress(&format!("{} nodes, links up after {up} cycles", system.node.router.nodes()));
    Ok(torus)
}

fn traffic(injection: Injection) -> Traffic {
    Traffic { pattern: Pattern::UniformRandom, injection, min_bytes: 0, max_bytes: 0, valid_percent: 100, ready_percent: 100, seed: 1 }
}

/// Runs the allreduce of every length on `system` (its node given the engine on [`PORTS`]),
/// generating and building the nodes in `work`; with [`Options::baseline`], also the fabric
/// alone. A result that differs from [`reference()`] or a stuck run is an [`Error::Check`].
pub fn run(system: &SystemConfig, options: &Options, work: &Path, progress: &mut dyn FnMut(&str)) -> Result<Report, Error> {
    let rc = system.node.router.clone();
    let nodes = rc.nodes();
    let (ty, size) = (options.element, options.element.bytes());
    let packet_bytes = options.packet_bytes.min(rc.max_packet_bytes) / size * size;
    let lanes = system.node.link.lanes;
    let mut torus = striped_torus(system, ty, &work.join("engine"), progress)?;
    torus.set_bit_error_rate(options.bit_error_rate);
    let engines = engine_ports();
    let mut rng = Rng::new(0xA11);
    let mut points = vec![];
    for &elements in &options.lengths {
        let vectors: Vec<Vec<u128>> = (0..nodes).map(|_| (0..elements).map(|_| operand(ty, &mut rng)).collect()).collect();
        let want = reference(&rc, &vectors, ty, options.op);
        let limit = 200_000 + 50 * elements as u64;
        torus.program_allreduce(PORTS, options.op)?;
        let r = torus.allreduce(PORTS[0], ty.bits(), &vectors, &packet_sizes(size * elements, packet_bytes), options.pressure.map(|s| s ^ elements as u64), limit)?;
        for (n, got) in r.results.iter().enumerate() {
            if let Some(k) = (0..elements).find(|&k| got[k] != want[k]) {
                return Err(Error::Check(format!(
                    "{}: {elements} elements of {} ({}): node {n} element {k} is {:#x}, the reference {:#x}",
                    system.name,
                    ty.name(),
                    options.op.name(),
                    got[k],
                    want[k]
                )));
            }
        }
        let all = Collective::Allreduce;
        let selected = torus.collective(all, PORTS, ty, options.op, &vectors, packet_bytes, options.pressure.map(|s| s ^ elements as u64 ^ 1), limit)?;
        if selected.results != all.reference(&rc, &vectors, ty, options.op, packet_bytes) {
            return Err(Error::Check(format!("{}: {elements} elements of {} ({}), selected by size: a node differs from the reference", system.name, ty.name(), options.op.name())));
        }
        let butterfly = size * elements <= all.small_bytes(&rc) as usize;
        let (striping, striped) = torus.collective_striped(all, &engines, ty, options.op, &vectors, packet_bytes, options.pressure.map(|s| s ^ elements as u64 ^ 2), limit)?;
        if striped.results.iter().any(|got| *got != stripes::reduction(&rc, &striping, all, &vectors, ty, options.op)) {
            return Err(Error::Check(format!("{}: {elements} elements of {} ({}), striped: a node differs from the reference", system.name, ty.name(), options.op.name())));
        }
        progress(&format!(
            "{elements} elements: chain {} cycles, selected ({}) {} cycles, striped over {} chains {} cycles, every node bit-exact",
            r.cycles,
            if butterfly { "butterfly" } else { "chain" },
            selected.cycles,
            striping.chains.len(),
            striped.cycles
        ));
        points.push(Point {
            elements,
            cycles: r.cycles,
            selected_cycles: selected.cycles,
            butterfly,
            striped_cycles: striped.cycles,
            stripes: striping.chains.len(),
            best_cycles: if butterfly { selected.cycles } else { striped.cycles },
            baseline_cycles: None,
            ring_cycles: None,
            lower_bound_cycles: 0,
            arrival_bound_cycles: 0,
            raw_bound_cycles: 0,
            to_bound: 0.0,
        });
    }
    let flipped_bits = torus.flipped_bits();
    drop(torus);

    if !options.baseline {
        return Ok(Report {
            system: system.name.clone(),
            dims: rc.dims,
            fabric_mhz: system.fabric_mhz,
            packet_bytes,
            bit_error_rate: options.bit_error_rate,
            flipped_bits,
            fabric: Fabric::of(&rc, 0, 0.0),
            points,
        });
    }
    // The fabric alone: one hop's latency, a link's bandwidth, and the baseline.
    let mut plain = verilate(system, &work.join("plain"), progress)?;
    let (hop_cycles, link_bytes_per_cycle) = fabric_rates(&mut plain, &rc, 0)?;
    progress(&format!("one hop {hop_cycles} cycles; a link carries {link_bytes_per_cycle:.2} payload bytes a cycle (raw {})", 8 * lanes));
    let fabric = Fabric::of(&rc, hop_cycles, link_bytes_per_cycle);
    for p in points.iter_mut() {
        let bytes = (size * p.elements) as f64;
        let received = 2.0 * (nodes - 1) as f64 * bytes / nodes as f64;
        p.raw_bound_cycles = fabric.bound_at(received, 8.0 * lanes as f64);
        p.lower_bound_cycles = fabric.bound(received);
        p.arrival_bound_cycles = fabric.bound(bytes);
        p.to_bound = p.best_cycles as f64 / p.lower_bound_cycles as f64;
        {
            let bytes = size * p.elements;
            let mut cycles = 0;
            // The baseline's packets are as long as the fabric allows (its best; see the README).
            let packet = rc.max_packet_bytes;
            for injection in [Injection::Gather { root: 0, bytes, packet }, Injection::Broadcast { root: 0, bytes, packet }] {
                let r = plain.run(&traffic(injection), 100_000)?.map_err(|s| Error::Check(format!("baseline: stuck at {s:?}")))?;
                cycles += r.cycles;
            }
            progress(&format!("{} elements: baseline {cycles} cycles", p.elements));
            p.baseline_cycles = Some(cycles);
        }
        {
            let chunk = size * p.elements.div_ceil(nodes);
            let mut cycles = 0;
            for _ in 0..2 * (nodes - 1) {
                let r = plain.run(&traffic(Injection::Ring { bytes: chunk, packet: rc.max_packet_bytes }), 100_000)?.map_err(|s| Error::Check(format!("ring: stuck at {s:?}")))?;
                cycles += r.cycles;
            }
            progress(&format!("{} elements: endpoint ring {cycles} cycles", p.elements));
            p.ring_cycles = Some(cycles);
        }
    }
    Ok(Report { system: system.name.clone(), dims: rc.dims, fabric_mhz: system.fabric_mhz, packet_bytes, bit_error_rate: options.bit_error_rate, flipped_bits, fabric, points })
}

/// The report as a Markdown table: cycles and ns of each method, speed-ups over the baselines,
/// and the bounds.
pub fn table(r: &Report) -> String {
    let ns = |c: u64| c as f64 * 1000.0 / r.fabric_mhz;
    let mut t = format!(
        "allreduce on {} ({}×{}×{}, {} MHz, packets of {} B): one hop {} cycles, diameter {}, {} inbound links a node, each carrying {:.2} payload bytes a cycle\n",
        r.system, r.dims[0], r.dims[1], r.dims[2], r.fabric_mhz, r.packet_bytes, r.fabric.hop_cycles, r.fabric.diameter, r.fabric.inbound_links, r.fabric.link_bytes_per_cycle
    );
    t.push_str("| elements | chain cycles | unit by size | cycles | striped (chains) | best | ns | gather-broadcast cycles | ns | speed-up | endpoint ring cycles | speed-up | lower bound cycles | best / bound | arrival bound | bound at raw link rate |\n| ---: | ---: | :--- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
    for p in &r.points {
        let (b, bns, up) = match p.baseline_cycles {
            Some(b) => (b.to_string(), format!("{:.0}", ns(b)), format!("{:.2}×", b as f64 / p.best_cycles as f64)),
            None => ("–".into(), "–".into(), "–".into()),
        };
        let (ring, ring_up) = match p.ring_cycles {
            Some(c) => (c.to_string(), format!("{:.2}×", c as f64 / p.best_cycles as f64)),
            None => ("–".into(), "–".into()),
        };
        t.push_str(&format!(
            "| {} | {} | {} | {} | {} ({}) | {} | {:.0} | {b} | {bns} | {up} | {ring} | {ring_up} | {} | {:.2} | {} | {} |\n",
            p.elements,
            p.cycles,
            if p.butterfly { "butterfly" } else { "chain" },
            p.selected_cycles,
            p.striped_cycles,
            p.stripes,
            p.best_cycles,
            ns(p.best_cycles),
            p.lower_bound_cycles,
            p.to_bound,
            p.arrival_bound_cycles,
            p.raw_bound_cycles
        ));
    }
    t
}

/// SVG plot of cycles against vector length: in-network, both baselines and both bounds.
pub fn plot(r: &Report) -> String {
    let pts = |f: &dyn Fn(&Point) -> Option<u64>| r.points.iter().filter_map(|p| f(p).map(|c| (p.elements as f64, c as f64))).collect();
    let series = vec![
        Series { name: "chain".into(), points: pts(&|p| Some(p.cycles)) },
        Series { name: "unit by size".into(), points: pts(&|p| Some(p.selected_cycles)) },
        Series { name: "striped".into(), points: pts(&|p| Some(p.striped_cycles)) },
        Series { name: "gather + broadcast".into(), points: pts(&|p| p.baseline_cycles) },
        Series { name: "endpoint ring".into(), points: pts(&|p| p.ring_cycles) },
        Series { name: "lower bound".into(), points: pts(&|p| Some(p.lower_bound_cycles)) },
        Series { name: "arrival bound".into(), points: pts(&|p| Some(p.arrival_bound_cycles)) },
    ];
    let y_max = series.iter().flat_map(|s| s.points.iter().map(|p| p.1)).fold(0.0, f64::max) * 1.1;
    Plot { title: format!("allreduce on {}", r.system), x_label: "elements (binary32)".into(), y_label: "cycles".into(), log2_x: true, y_max, series }.svg()
}
