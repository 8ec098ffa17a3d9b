//! `weft bench net`: the shipped systems' generated node RTL in Verilator, one model per node,
//! serial lanes through channel models — the experiments of the multi-FPGA papers, in simulation:
//! b_eff between ring neighbours against this design's analytic model, ping-pong latency of
//! 16-byte messages (same node and neighbour), one-way bandwidth against message size, and
//! latency against offered load under uniform random traffic.
//!
//! The analytic model (per direction, a full-duplex link; `clk` at the configured fabric clock):
//! - bytes per beat: a flit is `width / 8` bytes; a packet of `n` payload bytes is one header
//!   flit and `⌈n / 16⌉` payload flits (`W` words on the link);
//! - framing: the link cuts a packet into frames of at most `max_frame_words` words, each with a
//!   header word and a separator cycle: `W + 2·⌈W / max_frame_words⌉` link cycles per packet;
//! - clock compensation: `cc_burst` blocks every `cc_interval` cycles take the channel;
//! - messages longer than `max_packet_bytes` go as packets of that size;
//! - per-message latency `α`: the measured zero-load latency of a 16-byte neighbour message, plus
//!   the receiver's store-and-forward of the last frame beyond that message's 2 words.
//!
//! A loop of `k` messages of `L` bytes sent back to back takes `α + k·S(L)` cycles, `S(L)` the
//! link cycles of one message; `b_model(L) = k·L / (α + k·S(L))`. Sends and receives overlap
//! (both directions stream at once), unlike the Stratix 10 implementation of seed 001.

use crate::Error;
use std::path::Path;

use serde::Serialize;
use weft_ip::link::LinkConfig;
use weft_sim::network::{Injection, Pattern, Torus, Traffic};
use weft_sim::plot::{Plot, Series};

use crate::system::SystemConfig;

/// b_eff's 21 message sizes: 1 B … 4 KiB, then 4 KiB·2¹ … 4 KiB·2⁸ (1 MiB).
pub fn beff_sizes() -> Vec<usize> {
    let mut v: Vec<usize> = (0..=12).map(|i| 1 << i).collect();
    v.extend((1..=8).map(|i| 4096 << i));
    v
}

/// Messages per loop: enough for ≥ 16 KiB per loop, 2 to 2048 messages.
fn loop_length(bytes: usize) -> usize {
    (16384 / bytes).clamp(2, 2048)
}

/// Runs of each b_eff loop; the fastest counts.
pub const REPETITIONS: usize = 2;
/// Message sizes of the one-way bandwidth sweep, bytes.
pub const BANDWIDTH_SIZES: [usize; 9] = [16, 32, 64, 128, 256, 512, 1024, 2048, 4096];
/// Offered loads of the latency sweep, flits per node per cycle.
pub const LOADS: [f64; 10] = [0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.8, 1.0, 1.2];
/// Payload bytes of every packet of the load sweep.
pub const LOAD_PACKET_BYTES: usize = 256;

/// b_eff at one message size (a row of `beff` in `bench/net.json`): a loop of `k` messages
/// streamed both ways at once between node 0 and its X+ neighbour (port 0).
#[derive(Clone, Debug, Serialize)]
pub struct Beff {
    /// Message size L, bytes (longer than `max_packet_bytes`: several packets).
    pub bytes: usize,
    /// Messages per loop, k.
    pub loop_length: usize,
    /// Best repetition, per direction, bytes per cycle.
    pub measured: f64,
    /// `b_model(L)` for this loop, bytes per cycle per direction ([`model`]).
    pub model: f64,
    /// `measured / model`.
    pub ratio: f64,
}

/// Ping-pong on one path (a row of `ping_pong` in `bench/net.json`): one 16-byte message each
/// way, the network idle.
#[derive(Clone, Debug, Serialize)]
pub struct PingPong {
    /// The path: on one node (port 0 ↔ port 1) or between neighbours (node 0 ↔ node 1, port 0).
    pub path: String,
    /// Each direction's latency: creation of the message to its last beat out, inclusive, cycles.
    pub one_way_cycles: [u64; 2],
    /// The two one-way latencies summed, cycles.
    pub round_trip_cycles: u64,
    /// The round trip in ns at the system's fabric clock.
    pub round_trip_ns: f64,
    /// The same cycles at 100 MHz, TEXTAROSSA's clock.
    pub round_trip_ns_at_100mhz: f64,
}

/// One-way bandwidth at one message size (a row of `bandwidth` in `bench/net.json`):
/// `max(65536 / L, 16)` messages streamed from node 0 to its X+ neighbour, port 0.
#[derive(Clone, Debug, Serialize)]
pub struct Bandwidth {
    /// Message size L, bytes.
    pub bytes: usize,
    /// Payload bytes over the cycles of the whole stream.
    pub bytes_per_cycle: f64,
    /// The same in GB/s at the fabric clock (`bytes_per_cycle · fabric_mhz / 1000`).
    pub gbytes_per_s: f64,
}

/// One offered load on one torus (a row of `load` in `bench/net.json`): uniform random traffic
/// of [`LOAD_PACKET_BYTES`]-byte packets, Bernoulli injection for 3000 cycles, then at most 8000
/// cycles to drain; the figures count the packets created in those 3000 cycles.
#[derive(Clone, Debug, Serialize)]
pub struct LoadPoint {
    /// The system's name.
    pub torus: String,
    /// Offered load, flits (header included) per node per cycle: one of [`LOADS`].
    pub offered: f64,
    /// Flits of the window's packets delivered, per node per cycle of the window.
    pub accepted: f64,
    /// Mean latency of the window's packets, creation to last beat out, cycles.
    pub latency: f64,
    /// Whether every packet sent was delivered.
    pub complete: bool,
}

/// Everything `weft bench net` measures; written to `bench/net.json`.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    /// The system of the b_eff, ping-pong and bandwidth runs.
    pub system: String,
    /// Its fabric clock, MHz: converts cycles to ns and GB/s.
    pub fabric_mhz: f64,
    /// α of the model: the mean of the two one-way neighbour ping latencies, cycles.
    pub alpha_cycles: f64,
    /// b_eff at each of [`beff_sizes`].
    pub beff: Vec<Beff>,
    /// Mean of the sizes' `measured`, bytes per cycle per direction.
    pub beff_measured: f64,
    /// Mean of the sizes' `model`, bytes per cycle per direction.
    pub beff_model: f64,
    /// `beff_measured / beff_model`.
    pub beff_ratio: f64,
    /// `beff_measured` in GB/s per direction at the fabric clock.
    pub beff_gbytes_per_s: f64,
    /// The same-node and the neighbour path.
    pub ping_pong: Vec<PingPong>,
    /// One-way bandwidth at each of [`BANDWIDTH_SIZES`].
    pub bandwidth: Vec<Bandwidth>,
    /// The load sweep on both systems.
    pub load: Vec<LoadPoint>,
}

/// Link cycles to carry one packet of `bytes`.
fn packet_cycles(bytes: usize, flit_bytes: usize, link: &LinkConfig) -> f64 {
    let words = 1 + bytes.div_ceil(flit_bytes);
    let frames = words.div_ceil(link.max_frame_words);
    (words + 2 * frames) as f64 / (1.0 - link.cc_burst as f64 / link.cc_interval as f64)
}

/// The packets of one message of `bytes`.
fn packets(bytes: usize, max: usize) -> Vec<usize> {
    let mut v = vec![max; bytes / max];
    if !bytes.is_multiple_of(max) || bytes == 0 {
        v.push(bytes % max);
    }
    v
}

/// b_model(L) in bytes per cycle per direction.
pub fn model(system: &SystemConfig, alpha: f64, bytes: usize, k: usize) -> f64 {
    let rc = &system.node.router;
    let fb = rc.flit_bytes();
    let link = &system.node.link;
    let ps = packets(bytes, rc.max_packet_bytes);
    let per_message: f64 = ps.iter().map(|&b| packet_cycles(b, fb, link)).sum();
    let last_words = (1 + ps.last().unwrap().div_ceil(fb)).min(link.max_frame_words) as f64;
    let alpha = alpha + (last_words - 2.0).max(0.0);
    (k * bytes) as f64 / (alpha + k as f64 * per_message)
}

pub(crate) fn node_torus(system: &SystemConfig, generated: &Path) -> Result<Torus<weft_sim::link::VerilatorDevice>, Error> {
    let name = format!("{}_node", system.name);
    let file = generated.join("system").join(format!("{name}.v"));
    if !file.exists() {
        return Err(Error::Check(format!("{} does not exist; run `weft generate` first", file.display())));
    }
    let mut torus = Torus::verilated_nodes(&system.node, &file, &name, system.channel_latency)?;
    torus.reset();
    torus.bring_up(20_000)?;
    Ok(torus)
}

fn stream(torus: &mut Torus<weft_sim::link::VerilatorDevice>, src: (usize, usize), dst: (usize, usize), bytes: usize, count: usize, both_ways: bool) -> Result<u64, Error> {
    let traffic = Traffic {
        pattern: Pattern::UniformRandom,
        injection: Injection::Stream { src, dst, bytes, count, both_ways },
        min_bytes: bytes,
        max_bytes: bytes,
        valid_percent: 100,
        ready_percent: 100,
        seed: 1,
    };
    let run = torus.run(&traffic, 20_000)?.map_err(|s| Error::Check(format!("stream of {bytes} B stuck at cycle {}", s.cycle)))?;
    Ok(run.cycles)
}

/// One 16-byte message each way between `a` and `b`, the network idle: one-way latencies.
pub(crate) fn ping(torus: &mut Torus<weft_sim::link::VerilatorDevice>, a: (usize, usize), b: (usize, usize)) -> Result<[u64; 2], Error> {
    let mut out = [0; 2];
    for (i, (src, dst)) in [(a, b), (b, a)].into_iter().enumerate() {
        let traffic = Traffic { pattern: Pattern::UniformRandom, injection: Injection::One { src, dst, bytes: 16 }, min_bytes: 16, max_bytes: 16, valid_percent: 100, ready_percent: 100, seed: 1 };
        let run = torus.run(&traffic, 5_000)?.map_err(|_| Error::Check("ping lost".into()))?;
        let d = &run.deliveries[0];
        out[i] = d.tail_out - d.created + 1;
    }
    Ok(out)
}

/// Runs ping-pong, b_eff and bandwidth on `system`, then the load sweep on `system` and `other`,
/// from the node Verilog in `generated/system/`; `progress` hears one line per point. A missing
/// node file (run `weft generate`), a lost ping or a stuck run is an [`Error::Check`].
pub fn run(system: &SystemConfig, other: &SystemConfig, generated: &Path, progress: &mut dyn FnMut(&str)) -> Result<Report, Error> {
    let mut torus = node_torus(system, generated)?;
    let mhz = system.fabric_mhz;
    let neighbour = system.node.router.neighbour(0, weft_ip::router::Direction { dim: 0, plus: true });

    let mut ping_pong = vec![];
    for (path, a, b) in [("local (node 0, port 0 ↔ port 1)", (0, 0), (0, 1)), ("neighbour (node 0 ↔ node 1, port 0)", (0, 0), (neighbour, 0))] {
        let one_way = ping(&mut torus, a, b)?;
        let rt = one_way[0] + one_way[1];
        progress(&format!("ping-pong {path}: {one_way:?} cycles one way"));
        ping_pong.push(PingPong { path: path.into(), one_way_cycles: one_way, round_trip_cycles: rt, round_trip_ns: rt as f64 * 1000.0 / mhz, round_trip_ns_at_100mhz: rt as f64 * 10.0 });
    }
    let alpha = ping_pong[1].one_way_cycles.iter().sum::<u64>() as f64 / 2.0;

    let mut beff = vec![];
    let max = system.node.router.max_packet_bytes;
    for bytes in beff_sizes() {
        let k = loop_length(bytes);
        let (packet, count) = if bytes > max { (max, k * bytes / max) } else { (bytes, k) };
        let mut best = u64::MAX;
        for _ in 0..REPETITIONS {
            best = best.min(stream(&mut torus, (0, 0), (neighbour, 0), packet, count, true)?);
        }
        let measured = (k * bytes) as f64 / best as f64;
        let m = model(system, alpha, bytes, k);
        progress(&format!("b_eff {bytes} B × {k}: {measured:.3} B/cycle, model {m:.3} ({:.1} %)", 100.0 * measured / m));
        beff.push(Beff { bytes, loop_length: k, measured, model: m, ratio: measured / m });
    }
    let beff_measured = beff.iter().map(|b| b.measured).sum::<f64>() / beff.len() as f64;
    let beff_model = beff.iter().map(|b| b.model).sum::<f64>() / beff.len() as f64;

    let mut bandwidth = vec![];
    for bytes in BANDWIDTH_SIZES {
        let k = (65536 / bytes).max(16);
        let (packet, count) = if bytes > max { (max, k * bytes / max) } else { (bytes, k) };
        let cycles = stream(&mut torus, (0, 0), (neighbour, 0), packet, count, false)?;
        let bpc = (k * bytes) as f64 / cycles as f64;
        progress(&format!("bandwidth {bytes} B: {bpc:.3} B/cycle"));
        bandwidth.push(Bandwidth { bytes, bytes_per_cycle: bpc, gbytes_per_s: bpc * mhz / 1000.0 });
    }

    let mut load = vec![];
    for s in [system, other] {
        let mut t = if s.name == system.name { None } else { Some(node_torus(s, generated)?) };
        let torus = t.as_mut().unwrap_or(&mut torus);
        let flits = (1 + LOAD_PACKET_BYTES.div_ceil(s.node.router.flit_bytes())) as f64;
        for offered in LOADS {
            let (cycles, drain) = (3000u64, 8000u64);
            let traffic = Traffic {
                pattern: Pattern::UniformRandom,
                injection: Injection::Bernoulli { rate: offered / flits, cycles, drain },
                min_bytes: LOAD_PACKET_BYTES,
                max_bytes: LOAD_PACKET_BYTES,
                valid_percent: 100,
                ready_percent: 100,
                seed: 11,
            };
            let start = torus.cycle;
            let run = torus.run(&traffic, drain)?;
            let (run, complete) = match run {
                Ok(r) => (r, true),
                Err(_) => return Err(Error::Check(format!("{}: load {offered} stuck", s.name))),
            };
            let window: Vec<_> = run.deliveries.iter().filter(|d| d.created - start < cycles).collect();
            let complete = complete && run.deliveries.len() == run.sent;
            let latency = window.iter().map(|d| (d.tail_out - d.created) as f64).sum::<f64>() / window.len().max(1) as f64;
            let accepted = window.iter().map(|d| d.flits as f64).sum::<f64>() / (cycles as f64 * s.node.router.nodes() as f64);
            progress(&format!("{} load {offered}: accepted {accepted:.3}, latency {latency:.1} cycles", s.name));
            load.push(LoadPoint { torus: s.name.clone(), offered, accepted, latency, complete });
        }
    }
    Ok(Report {
        system: system.name.clone(),
        fabric_mhz: mhz,
        alpha_cycles: alpha,
        beff_gbytes_per_s: beff_measured * mhz / 1000.0,
        beff_ratio: beff_measured / beff_model,
        beff_measured,
        beff_model,
        beff,
        ping_pong,
        bandwidth,
        load,
    })
}

/// The report as Markdown tables: b_eff beside the model, ping-pong, bandwidth, load sweep.
pub fn table(r: &Report) -> String {
    let mut t = format!("b_eff on {} (node 0 ↔ its X+ neighbour, both directions at once; per direction, {} MHz):\n", r.system, r.fabric_mhz);
    t.push_str("| message | loop | measured B/cycle | model B/cycle | measured / model |\n| ---: | ---: | ---: | ---: | ---: |\n");
    for b in &r.beff {
        t.push_str(&format!("| {} B | {} | {:.3} | {:.3} | {:.1} % |\n", b.bytes, b.loop_length, b.measured, b.model, 100.0 * b.ratio));
    }
    t.push_str(&format!(
        "b_eff = {:.3} B/cycle = {:.3} GB/s per direction; model {:.3} B/cycle; measured / model = {:.1} % (α = {:.1} cycles)\n\n",
        r.beff_measured,
        r.beff_gbytes_per_s,
        r.beff_model,
        100.0 * r.beff_ratio,
        r.alpha_cycles
    ));
    t.push_str("Ping-pong, 16-byte messages:\n| path | one way (cycles) | round trip (cycles) | round trip (ns) | at 100 MHz (ns) |\n| --- | ---: | ---: | ---: | ---: |\n");
    for p in &r.ping_pong {
        t.push_str(&format!("| {} | {} / {} | {} | {:.0} | {:.0} |\n", p.path, p.one_way_cycles[0], p.one_way_cycles[1], p.round_trip_cycles, p.round_trip_ns, p.round_trip_ns_at_100mhz));
    }
    t.push_str("\nOne-way bandwidth, node 0 → neighbour:\n| message | B/cycle | GB/s |\n| ---: | ---: | ---: |\n");
    for b in &r.bandwidth {
        t.push_str(&format!("| {} B | {:.3} | {:.3} |\n", b.bytes, b.bytes_per_cycle, b.gbytes_per_s));
    }
    t.push_str(&format!(
        "\nUniform random traffic, {LOAD_PACKET_BYTES}-byte packets:\n| torus | offered (flits/node/cycle) | accepted | mean latency (cycles) | all arrived |\n| --- | ---: | ---: | ---: | --- |\n"
    ));
    for l in &r.load {
        t.push_str(&format!("| {} | {:.2} | {:.3} | {:.1} | {} |\n", l.torus, l.offered, l.accepted, l.latency, l.complete));
    }
    t
}

/// Three SVG plots: b_eff measured and model, bandwidth against size, latency against load.
pub fn plots(r: &Report) -> [(String, String); 3] {
    let beff = Plot {
        title: format!("b_eff, {} neighbours, both directions", r.system),
        x_label: "message bytes".into(),
        y_label: "bytes / cycle / direction".into(),
        log2_x: true,
        y_max: 16.0,
        series: vec![
            Series { name: "measured".into(), points: r.beff.iter().map(|b| (b.bytes as f64, b.measured)).collect() },
            Series { name: "model".into(), points: r.beff.iter().map(|b| (b.bytes as f64, b.model)).collect() },
        ],
    };
    let bw = Plot {
        title: format!("one-way bandwidth at {} MHz", r.fabric_mhz),
        x_label: "message bytes".into(),
        y_label: "GB/s".into(),
        log2_x: true,
        y_max: (r.bandwidth.iter().map(|b| b.gbytes_per_s).fold(0.0, f64::max) * 1.2).max(0.1),
        series: vec![Series { name: "measured".into(), points: r.bandwidth.iter().map(|b| (b.bytes as f64, b.gbytes_per_s)).collect() }],
    };
    let mut toruses: Vec<String> = r.load.iter().map(|l| l.torus.clone()).collect();
    toruses.dedup();
    let lat = Plot {
        title: "latency vs offered load, uniform random".into(),
        x_label: "offered flits / node / cycle".into(),
        y_label: "mean latency (cycles)".into(),
        log2_x: false,
        y_max: r.load.iter().map(|l| l.latency).fold(0.0, f64::max) * 1.2,
        series: toruses.iter().map(|t| Series { name: t.clone(), points: r.load.iter().filter(|l| &l.torus == t).map(|l| (l.offered, l.latency)).collect() }).collect(),
    };
    [("net_beff".into(), beff.svg()), ("net_bandwidth".into(), bw.svg()), ("net_latency".into(), lat.svg())]
}
