//! `weft bench beff`: seed 001's effective-bandwidth benchmark on a ring of weft nodes, in
//! Verilator on the generated node RTL (one model per node, cables as channel models of the
//! configured latency).
//!
//! The send and receive kernels of seed 001 are the node's self-test generator and checker on
//! IntraNode port 0, programmed over AXI4-Lite only: every node sends to its X+ neighbour and
//! receives from its X− neighbour at the same time. A loop of `looplength` messages of `L` bytes
//! is `looplength · ⌈L / P⌉` packets of `P = min(L, max_packet_bytes)` bytes. A node's time `t`
//! is its generator's cycle counter: from its first header sent until its checker has every
//! packet from its neighbour. As seed 001 defines them: `b(L) = 2 · L · looplength / t` per node
//! (sent and received bytes; the best of the repetitions), `b_eff = Σ_L b(L) / 21`, and a ring of
//! n nodes reports the sum over its nodes.
//!
//! The model beside it is seed 001's, `b_L = 2 · L / (⌈L / (c · 32 B)⌉ / f + 520 ns)`, with `c`
//! the 256-bit channels of one direction of a weft link (`lanes · 64 / 256`) and `f` the fabric
//! clock. It charges the channel latency to every message, as seed 001's kernel does (it sends,
//! then receives, message by message); weft's sender streams messages back to back, so small
//! messages beat the model. `lockstep` sets the self-test window to one message, so each message
//! waits for the neighbour's previous one, as seed 001's kernel.

use crate::Error;
use std::path::Path;

use serde::Serialize;
use weft_ip::axil::{SELFTEST_REGS, SELFTEST_STATUS};
use weft_ip::router::Direction;
use weft_sim::link::VerilatorDevice;
use weft_sim::network::Torus;
use weft_sim::plot::{Plot, Series};

use crate::system::SystemConfig;

/// Seed 001's measurement on one BittWare 520N (message size, b(L) in B/s), and its b_eff.
pub const SEED_001: [(usize, f64); 21] = [
    (1, 1.62150e6),
    (2, 3.24313e6),
    (4, 6.48621e6),
    (8, 1.29722e7),
    (16, 2.59453e7),
    (32, 5.18907e7),
    (64, 1.03781e8),
    (128, 2.05794e8),
    (256, 4.02737e8),
    (512, 7.72389e8),
    (1024, 1.43097e9),
    (2048, 2.50444e9),
    (4096, 3.99620e9),
    (16384, 7.24052e9),
    (32768, 8.37438e9),
    (65536, 9.08229e9),
    (131072, 9.48329e9),
    (262144, 9.69693e9),
    (524288, 9.80814e9),
    (1048576, 9.86474e9),
    (2097152, 9.89317e9),
];
/// Seed 001's b_eff on one 520N, B/s.
pub const SEED_001_BEFF: f64 = 3.95057e9;
/// Seed 001 on eight FPGAs, and its model for them (8 × 4.07 GB/s).
pub const SEED_001_BEFF_8: f64 = 3.13237e10;
/// The card's channel latency in seed 001's model.
pub const CHANNEL_LATENCY_NS: f64 = 520.0;
/// Runs of each loop; the one with the fewest cycles summed over the nodes counts.
pub const REPETITIONS: usize = 2;

/// The message sizes: those seed 001 measured (1 B … 4 KiB, then 16 KiB … 2 MiB; its text
/// defines 8 KiB … 1 MiB above 4 KiB, but its tables and its quoted model use these), so that
/// every row pairs with its measurement.
pub fn sizes() -> Vec<usize> {
    SEED_001.iter().map(|s| s.0).collect()
}

/// Messages per loop: at least 64 KiB (and 2 … 2048 messages), so the cable latency is a small
/// part of a loop up to 32 KiB messages.
fn loop_length(bytes: usize) -> usize {
    (65536 / bytes).clamp(2, 2048)
}

/// One message size L (a row of `sizes` in `bench/beff_<system>_<nodes>[_lockstep].json`).
#[derive(Clone, Debug, Serialize)]
pub struct Size {
    /// Message size L, bytes.
    pub bytes: usize,
    /// Messages per loop (looplength).
    pub loop_length: usize,
    /// Cycles of each node (best repetition).
    pub cycles: Vec<u64>,
    /// Σ over nodes of 2 · L · looplength / t, bytes per second.
    pub measured: f64,
    /// Seed 001's model for one node, times the nodes.
    pub model: f64,
}

/// Everything `weft bench beff` measures on one ring; written to
/// `bench/beff_<system>_<nodes>[_lockstep].json`.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    /// The system's name.
    pub system: String,
    /// Nodes in the ring.
    pub nodes: usize,
    /// Each message waits for the neighbour's previous one (seed 001's kernel).
    pub lockstep: bool,
    /// c: 256-bit channels of one direction of a link (`lanes · 64 / 256`).
    pub channels: f64,
    /// Fabric clock, MHz: converts the cycle counters to seconds.
    pub fabric_mhz: f64,
    /// Cable latency of the channel models, cycles (`sim.channel_latency`).
    pub channel_latency_cycles: usize,
    /// One row per message size.
    pub sizes: Vec<Size>,
    /// b_eff: the mean of the sizes' `measured`, B/s summed over the ring's nodes.
    pub beff: f64,
    /// The mean of the sizes' `model`, B/s.
    pub beff_model: f64,
    /// `beff / beff_model`.
    pub ratio: f64,
}

/// Seed 001's model for one node (one kernel pair), bytes per second.
pub fn model(bytes: usize, channels: f64, mhz: f64) -> f64 {
    let beats = (bytes as f64 / (channels * 32.0)).ceil();
    2.0 * bytes as f64 / (beats / (mhz * 1e6) + CHANNEL_LATENCY_NS * 1e-9)
}

fn reg(name: &str) -> u32 {
    SELFTEST_REGS.iter().find(|r| r.1 == name).map(|r| r.0).expect("self-test register")
}

/// One loop of `count` packets of `length` bytes from every node to its X+ neighbour; returns
/// each node's cycles.
fn exchange(torus: &mut Torus<VerilatorDevice>, count: u32, length: u32, window: u32) -> Result<Vec<u64>, Error> {
    let config = torus.config.clone();
    let nodes = config.nodes();
    for n in 0..nodes {
        let c = config.coords(config.neighbour(n, Direction { dim: 0, plus: true }));
        let dst = (c[0] | c[1] << 6 | c[2] << 12) as u32; // port 0
                                                          // One pattern seed everywhere: each checker recomputes its neighbour's pattern.
        for (name, value) in [("count", count), ("length", length), ("dst", dst), ("tag", 1), ("seed", 0x5EED), ("expected", count), ("window", window), ("control", 0b101)] {
            torus.axil_write(n, reg(name), value)?;
        }
        torus.axil_write(n, reg("control"), 0b001)?;
    }
    for n in 0..nodes {
        torus.axil_write(n, reg("control"), 0b011)?;
    }
    let flits = 1 + (length as u64).div_ceil(config.flit_bytes() as u64);
    let expected = count as u64 * flits;
    let step = (expected / 8).clamp(64, 4096);
    let status = |t: &mut Torus<VerilatorDevice>, n: usize, i: u32| t.axil_read(n, SELFTEST_STATUS + 4 * i).map(|r| r.0 as u64);
    let mut waited = 0;
    loop {
        torus.idle(step);
        waited += step;
        let mut done = true;
        for n in 0..nodes {
            done &= status(torus, n, 2)? == 0b10;
            if !done {
                break;
            }
        }
        if done {
            break;
        }
        // A lockstep message also waits a cable round.
        let rounds = count.checked_div(window).map_or(0, |r| r as u64 * 1000);
        if waited > 20 * expected + rounds + 100_000 {
            return Err(Error::Check(format!("{count} packets of {length} B: not complete after {waited} cycles")));
        }
    }
    let mut cycles = vec![];
    for n in 0..nodes {
        let [sent, t, _, packets, bytes, errors] = [0, 1, 2, 3, 4, 5].map(|i| status(torus, n, i).unwrap_or(u64::MAX));
        if (sent, packets, bytes, errors) != (count as u64, count as u64, count as u64 * length as u64, 0) {
            return Err(Error::Check(format!("node {n}: sent {sent}, received {packets} packets, {bytes} bytes, {errors} errors; want {count} packets of {length} B, no error")));
        }
        cycles.push(t);
    }
    Ok(cycles)
}

/// Runs the benchmark on `system` with its X dimension set to `nodes` (a ring), in `work`.
/// With `lockstep`, a node sends message i + 1 only once its neighbour's message i has arrived
/// (the self-test window is one message), as seed 001's kernel sends, then receives. A ring the
/// node refuses is an error; a loop that does not complete, or a checker that counts other
/// packets, bytes or any error, is an [`Error::Check`].
pub fn run(system: &SystemConfig, nodes: usize, lockstep: bool, sizes: &[usize], work: &Path, progress: &mut dyn FnMut(&str)) -> Result<Report, Error> {
    let mut system = system.clone();
    system.node.router.dims = [nodes, 1, 1];
    system.node.validate().map_err(|e| Error::from(e).context(format!("a ring of {nodes}")))?;
    let generated = work.join("generated");
    crate::system::generate(&system, &generated, &work.join("constraints"))?;
    let name = format!("{}_node", system.name);
    let file = generated.join("system").join(format!("{name}.v"));
    progress(&format!("building {name} in Verilator"));
    let mut torus = Torus::verilated_nodes(&system.node, &file, &name, system.channel_latency)?;
    torus.reset();
    let up = torus.bring_up(50_000)?;
    progress(&format!("{nodes} nodes, links up after {up} cycles"));
    let mhz = system.fabric_mhz;
    let channels = (64 * system.node.link.lanes) as f64 / 256.0;
    let max = system.node.router.max_packet_bytes;
    let mut rows = vec![];
    for &bytes in sizes {
        // A lockstep message costs a cable round: 256 of them measure it well enough.
        let k = if lockstep { loop_length(bytes).min(256) } else { loop_length(bytes) };
        let (length, count) = if bytes > max { (max, k * bytes.div_ceil(max)) } else { (bytes, k) };
        let mut best: Option<Vec<u64>> = None;
        for _ in 0..REPETITIONS {
            let window = if lockstep { (count / k) as u32 } else { 0 };
            let cycles = exchange(&mut torus, count as u32, length as u32, window)?;
            if best.as_ref().is_none_or(|b| cycles.iter().sum::<u64>() < b.iter().sum::<u64>()) {
                best = Some(cycles);
            }
        }
        let cycles = best.unwrap();
        let measured: f64 = cycles.iter().map(|&t| 2.0 * (bytes * k) as f64 / (t as f64 / (mhz * 1e6))).sum();
        let m = nodes as f64 * model(bytes, channels, mhz);
        progress(&format!("L = {bytes} B × {k}: {:.3} GB/s, model {:.3} ({:.1} %)", measured / 1e9, m / 1e9, 100.0 * measured / m));
        rows.push(Size { bytes, loop_length: k, cycles, measured, model: m });
    }
    let beff = rows.iter().map(|s| s.measured).sum::<f64>() / rows.len() as f64;
    let beff_model = rows.iter().map(|s| s.model).sum::<f64>() / rows.len() as f64;
    Ok(Report { system: system.name.clone(), nodes, lockstep, channels, fabric_mhz: mhz, channel_latency_cycles: system.channel_latency, sizes: rows, beff, beff_model, ratio: beff / beff_model })
}

/// The table: weft's b(L) beside seed 001's model and seed 001's measurement (one FPGA) at
/// the same size.
pub fn table(r: &Report) -> String {
    let mut t = format!(
        "b_eff on {}: a ring of {} nodes, {}, {} channel(s) of 256 bits each way, {} MHz, cable {} cycles ({:.1} ns)\n",
        r.system,
        r.nodes,
        if r.lockstep { "each message after the neighbour's previous one (lockstep)" } else { "messages streamed back to back" },
        r.channels,
        r.fabric_mhz,
        r.channel_latency_cycles,
        r.channel_latency_cycles as f64 * 1000.0 / r.fabric_mhz
    );
    t.push_str("| L (B) | looplength | weft b(L) GB/s | seed 001 model GB/s | weft / model | seed 001 measured GB/s (1 FPGA) |\n| ---: | ---: | ---: | ---: | ---: | ---: |\n");
    for s in &r.sizes {
        let seed = SEED_001.iter().find(|m| m.0 == s.bytes).map_or(f64::NAN, |m| m.1);
        t.push_str(&format!("| {} | {} | {:.3} | {:.3} | {:.3} | {:.3} |\n", s.bytes, s.loop_length, s.measured / 1e9, s.model / 1e9, s.measured / s.model, seed / 1e9));
    }
    t.push_str(&format!(
        "b_eff: weft {:.2} GB/s, seed 001's model for these channels {:.2} GB/s ({:.1} %); seed 001 measured {:.2} GB/s on one FPGA, {:.2} GB/s on eight\n",
        r.beff / 1e9,
        r.beff_model / 1e9,
        100.0 * r.ratio,
        SEED_001_BEFF / 1e9,
        SEED_001_BEFF_8 / 1e9
    ));
    t
}

/// b(L): weft, seed 001's model, seed 001's measurement (scaled by the ring's nodes).
pub fn plot(r: &Report) -> String {
    let n = r.nodes as f64;
    Plot {
        title: format!("b_eff, ring of {} ({}{})", r.nodes, r.system, if r.lockstep { ", lockstep" } else { "" }),
        x_label: "message bytes".into(),
        y_label: "GB/s".into(),
        log2_x: true,
        y_max: r.sizes.iter().map(|s| s.measured.max(s.model)).fold(0.0, f64::max) / 1e9 * 1.15,
        series: vec![
            Series { name: "weft".into(), points: r.sizes.iter().map(|s| (s.bytes as f64, s.measured / 1e9)).collect() },
            Series { name: "seed 001 model".into(), points: r.sizes.iter().map(|s| (s.bytes as f64, s.model / 1e9)).collect() },
            Series { name: format!("seed 001 ×{}", r.nodes), points: SEED_001.iter().map(|(l, b)| (*l as f64, n * b / 1e9)).collect() },
        ],
    }
    .svg()
}
