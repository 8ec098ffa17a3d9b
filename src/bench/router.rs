//! `weft bench router`: the router in Verilator on the generated RTL of whole tori —
//! zero-load latency (IntraNode → IntraNode on one node, and per router-to-router hop), latency
//! against offered load and saturation throughput under uniform random, transpose and
//! nearest-neighbour traffic on a 4×4×4 and a 4×2×2 torus, and Yosys figures of the shipped
//! router.

use crate::Error;
use std::path::Path;

use serde::Serialize;
use weft_ip::router::RouterConfig;
use weft_sim::catalog::TORI;
use weft_sim::network::{Injection, Pattern, Torus, Traffic};
use weft_sim::plot::{Plot, Series};
use weft_tools::yosys_synth;

/// The configuration set beside BookSim2's: one IntraNode port per node, 2 VCs of 16 flits,
/// one-flit (header-only) packets.
pub fn booksim_like(dims: [usize; 3]) -> RouterConfig {
    RouterConfig { dims, local_ports: 1, vc_buffer_flits: 16, max_packet_bytes: 64, ..Default::default() }
}

/// Cycles of injection before the measurement window.
pub const WARMUP: u64 = 1000;
/// Cycles of the measurement window: the packets created in it are the ones measured.
pub const WINDOW: u64 = 3000;
/// Cycles after injection ends for the window's packets to arrive.
pub const DRAIN: u64 = 3000;
/// Offered loads, flits per node per cycle (one IntraNode port: at most 1). A sweep stops at
/// the first load the network no longer accepts in full (accepted < 95 % of offered).
pub const LOADS: [f64; 14] = [0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8, 0.9, 1.0];

/// Zero-load latency of one 64-byte packet on a 4×4×4 torus of shipped routers (a row of
/// `zero_load` in `bench/router.json`), in cycles.
#[derive(Clone, Debug, Serialize)]
pub struct ZeroLoad {
    /// The configuration measured, in words.
    pub config: String,
    /// First beat in to first beat out, IntraNode port 0 → port 1 of one node.
    pub local_cycles: u64,
    /// Router-to-router hops of the far path (6).
    pub hops: usize,
    /// First beat in to first beat out, node 0 port 0 → node (2, 2, 2) port 0.
    pub far_cycles: u64,
    /// `(far_cycles − local_cycles) / hops`.
    pub per_hop_cycles: f64,
}

/// One offered load of one traffic pattern on the [`booksim_like`] router (a row of `load` in
/// `bench/router.json`).
#[derive(Clone, Debug, Serialize)]
pub struct LoadPoint {
    /// Torus dimensions, `XxYxZ`.
    pub torus: String,
    /// Traffic pattern: `uniform`, `transpose` or `neighbour`.
    pub pattern: String,
    /// Flits offered and accepted per node per cycle over the measurement window.
    pub offered: f64,
    /// Flits ejected per node per cycle over the measurement window.
    pub accepted: f64,
    /// Mean latency, creation to tail out (source queueing included), of the packets created in
    /// the window that arrived; `complete` says whether all of them arrived.
    pub latency: f64,
    /// Whether every packet created in the window arrived before the drain ended.
    pub complete: bool,
}

/// Saturation of one pattern on one torus (a row of `saturation` in `bench/router.json`).
#[derive(Clone, Debug, Serialize)]
pub struct Saturation {
    /// Torus dimensions, `XxYxZ`.
    pub torus: String,
    /// Traffic pattern: `uniform`, `transpose` or `neighbour`.
    pub pattern: String,
    /// Highest accepted throughput measured, flits per node per cycle.
    pub throughput: f64,
    /// Mean latency at the lowest load, cycles.
    pub zero_load_latency: f64,
}

/// Yosys `synth_xilinx` (7-series) figures of a shipped router (a row of `area` in
/// `bench/router.json`).
#[derive(Clone, Debug, Serialize)]
pub struct Area {
    /// The router module, `router_<X>x<Y>x<Z>`.
    pub module: String,
    /// LUTs.
    pub luts: u64,
    /// Flip-flops.
    pub flip_flops: u64,
    /// Distributed-RAM primitives (LUTRAM).
    pub lut_rams: u64,
    /// Block RAM in RAMB36 units (a RAMB18 counts one half).
    pub brams: f64,
    /// Longest combinational path in cells (LUT, carry and wide-mux cells).
    pub logic_depth: u64,
}

/// Everything `weft bench router` measures; written to `bench/router.json`.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    /// Zero-load latency of the shipped router.
    pub zero_load: Vec<ZeroLoad>,
    /// Every load point of every sweep; a sweep ends with its first saturated point.
    pub load: Vec<LoadPoint>,
    /// One row per torus and pattern.
    pub saturation: Vec<Saturation>,
    /// One row per shipped router.
    pub area: Vec<Area>,
}

fn one_packet(config: &RouterConfig, work: &Path, src: (usize, usize), dst: (usize, usize)) -> Result<u64, Error> {
    let mut torus = Torus::verilated(config, work)?;
    torus.reset();
    let t = Traffic { pattern: Pattern::UniformRandom, injection: Injection::One { src, dst, bytes: 64 }, min_bytes: 0, max_bytes: 0, valid_percent: 100, ready_percent: 100, seed: 1 };
    let run = torus.run(&t, 1000)?.map_err(|_| Error::Check("a single packet did not arrive".into()))?;
    let d = run.deliveries[0];
    Ok(d.head_out - d.head_in)
}

pub(crate) fn zero_load(work: &Path) -> Result<ZeroLoad, Error> {
    let config = RouterConfig { dims: [4, 4, 4], ..Default::default() };
    let local_cycles = one_packet(&config, work, (0, 0), (0, 1))?;
    // Node (2, 2, 2): six hops.
    let far = config.node([2, 2, 2]);
    let far_cycles = one_packet(&config, work, (0, 0), (far, 0))?;
    Ok(ZeroLoad { config: "4x4x4, 2 IntraNode ports, 64-byte packet".into(), local_cycles, hops: 6, far_cycles, per_hop_cycles: (far_cycles - local_cycles) as f64 / 6.0 })
}

fn load_point(torus: &mut Torus<weft_sim::link::VerilatorDevice>, pattern: Pattern, load: f64) -> Result<LoadPoint, Error> {
    let config = torus.config.clone();
    torus.reset();
    let start = torus.cycle;
    let t = Traffic { pattern, injection: Injection::Bernoulli { rate: load, cycles: WARMUP + WINDOW, drain: DRAIN }, min_bytes: 0, max_bytes: 0, valid_percent: 100, ready_percent: 100, seed: 11 };
    let run = torus.run(&t, DRAIN)?.map_err(|s| Error::Check(format!("stuck at cycle {}", s.cycle)))?;
    let nodes = config.nodes() as f64;
    let window = |c: u64| (start + WARMUP..start + WARMUP + WINDOW).contains(&c);
    let ejected: u64 = run.ejected_flits[WARMUP as usize..(WARMUP + WINDOW) as usize].iter().map(|f| *f as u64).sum();
    let measured: Vec<_> = run.deliveries.iter().filter(|d| window(d.created)).collect();
    let created_in_window = run.created.iter().filter(|c| window(**c)).count();
    let latency = measured.iter().map(|d| (d.tail_out - d.created) as f64).sum::<f64>() / measured.len().max(1) as f64;
    Ok(LoadPoint {
        torus: format!("{}x{}x{}", config.dims[0], config.dims[1], config.dims[2]),
        pattern: pattern.name().into(),
        offered: created_in_window as f64 / nodes / WINDOW as f64,
        accepted: ejected as f64 / nodes / WINDOW as f64,
        latency,
        complete: measured.len() == created_in_window,
    })
}

/// Runs zero-load latency, the load sweeps on 4×4×4 and 4×2×2 (transpose only where the node
/// count is a power of four) and Yosys on each shipped router, with the builds in `work`;
/// `progress` hears one line per point. A packet that does not arrive, or a stuck network, is
/// an [`Error::Check`].
pub fn run(work: &Path, progress: &mut dyn FnMut(&str)) -> Result<Report, Error> {
    let mut report = Report { zero_load: vec![zero_load(work)?], load: vec![], saturation: vec![], area: vec![] };
    let z = &report.zero_load[0];
    progress(&format!("zero load: local {} cycles, {} hops {} cycles ({:.2} per hop)", z.local_cycles, z.hops, z.far_cycles, z.per_hop_cycles));
    for dims in [[4, 4, 4], [4, 2, 2]] {
        let config = booksim_like(dims);
        let mut torus = Torus::verilated(&config, work)?;
        for pattern in [Pattern::UniformRandom, Pattern::Transpose, Pattern::NearestNeighbour] {
            if pattern == Pattern::Transpose && !(config.nodes().is_power_of_two() && config.nodes().trailing_zeros().is_multiple_of(2)) {
                continue;
            }
            let mut points: Vec<LoadPoint> = vec![];
            for load in LOADS {
                let p = load_point(&mut torus, pattern, load)?;
                progress(&format!("{} {}: offered {:.3} accepted {:.3} latency {:.1}{}", p.torus, p.pattern, p.offered, p.accepted, p.latency, if p.complete { "" } else { " (saturated)" }));
                let saturated = !p.complete || p.accepted < 0.95 * p.offered;
                points.push(p);
                if saturated {
                    break;
                }
            }
            report.saturation.push(Saturation {
                torus: points[0].torus.clone(),
                pattern: pattern.name().into(),
                throughput: points.iter().map(|p| p.accepted).fold(0.0, f64::max),
                zero_load_latency: points[0].latency,
            });
            report.load.extend(points);
        }
    }
    for dims in TORI {
        let (name, text) = weft_sim::catalog::router_verilog_for(&weft_sim::catalog::router_config(dims))?;
        let file = work.join(format!("{name}.v"));
        std::fs::write(&file, text)?;
        let s = yosys_synth(&file, &name)?;
        progress(&format!("{name}: {} LUT, {} FF, {} LUTRAM, {} BRAM, depth {}", s.luts, s.flip_flops, s.lut_rams, s.brams, s.logic_depth));
        report.area.push(Area { module: name, luts: s.luts, flip_flops: s.flip_flops, lut_rams: s.lut_rams, brams: s.brams, logic_depth: s.logic_depth });
    }
    Ok(report)
}

/// The report as Markdown tables: zero-load latency, saturation, latency against load, area.
pub fn table(report: &Report) -> String {
    let mut out = String::from("Zero-load latency (Verilator, first beat in to first beat out):\n\n| configuration | local (p0 → p1) | hops | far | per hop |\n| --- | ---: | ---: | ---: | ---: |\n");
    for z in &report.zero_load {
        out.push_str(&format!("| {} | {} | {} | {} | {:.2} |\n", z.config, z.local_cycles, z.hops, z.far_cycles, z.per_hop_cycles));
    }
    out.push_str("\nSaturation (1 IntraNode port per node, 2 VCs of 16 flits, 1-flit packets; flits/node/cycle):\n\n| torus | pattern | saturation throughput | zero-load latency (cycles) |\n| --- | --- | ---: | ---: |\n");
    for s in &report.saturation {
        out.push_str(&format!("| {} | {} | {:.3} | {:.1} |\n", s.torus, s.pattern, s.throughput, s.zero_load_latency));
    }
    out.push_str("\nLatency vs offered load:\n\n| torus | pattern | offered | accepted | mean latency |\n| --- | --- | ---: | ---: | ---: |\n");
    for p in &report.load {
        out.push_str(&format!("| {} | {} | {:.3} | {:.3} | {:.1}{} |\n", p.torus, p.pattern, p.offered, p.accepted, p.latency, if p.complete { "" } else { " (saturated)" }));
    }
    out.push_str("\nYosys synth_xilinx:\n\n| module | LUT | FF | LUTRAM | BRAM | logic depth |\n| --- | ---: | ---: | ---: | ---: | ---: |\n");
    for a in &report.area {
        out.push_str(&format!("| {} | {} | {} | {} | {} | {} |\n", a.module, a.luts, a.flip_flops, a.lut_rams, a.brams, a.logic_depth));
    }
    out
}

/// `router_latency.svg`: mean latency against offered load, one series per torus and pattern,
/// up to 60 cycles.
pub fn plot(report: &Report) -> String {
    let mut series = vec![];
    for s in &report.saturation {
        series.push(Series {
            name: format!("{} {}", s.torus, s.pattern),
            points: report.load.iter().filter(|p| p.torus == s.torus && p.pattern == s.pattern && p.latency <= Y_MAX).map(|p| (p.offered, p.latency)).collect(),
        });
    }
    // Past saturation latency grows without bound: the plot shows the curve up to its knee.
    const Y_MAX: f64 = 60.0;
    let y_max = Y_MAX;
    Plot { title: "router latency vs offered load (Verilator)".into(), x_label: "offered flits/node/cycle".into(), y_label: "mean latency (cycles)".into(), log2_x: false, y_max, series }.svg()
}
