//! `weft bench dg`: MIDG2 (`examples/apps/midg.app`, order 3, binary32) split over the eight
//! nodes of `torus_2x2x2` with no host after the load: each node's application module (program,
//! halo engine, reduction bridge) in the built-in simulator on its generated node (Verilator, one
//! model per node, cables as channel models with bit errors; [`weft_sim::network::app_nodes`]).
//! Every run is checked bit for bit against the partitioned software model.
//!
//! - **Cycles per stage**, the busiest node, from its program's outputs (`<loop>_runs`, `sync`):
//!   volume (`derivatives`, `curl`), surface (`flux`, `lift`), update (`update`), each loop's
//!   interval counted from the end of what ran before it (so the sequencer's steps before it are
//!   in it); exchange: each visit of a sync step, where the halo engines swap the face halos,
//!   from the last node's arrival to the last node's departure (a node that arrives earlier waits
//!   for its neighbours: `sync_cycles` includes that). The program, its engine and the fabric run
//!   on one clock here (the fabric's).
//! - **Halo**: the elements (six binary32 fields of one face node) all nodes receive per stage,
//!   their payload (24 bytes each) and their bytes on the wire (two 16-byte beats each, plus a
//!   header a packet); exchange bandwidth is the payload over the busiest node's exchange time.
//! - **GFLOP/s** by MIDG2's FLOP model (28,360 per element and stage at N = 3) over the whole run
//!   at the fabric clock. No place-and-route Fmax of the program is measured here.
//! - **Seed 000's figures**: Tables 6.1/6.2 (IO-channel and MPI+PCIe bandwidths, megabyte
//!   transfers), its in-application bandwidths and halo sizes (Table 6.6), Fmax (Table 6.5).

use std::collections::BTreeMap;
use std::path::Path;

use serde::Serialize;
use weft_ip::app::partition::halo::Halo;
use weft_ip::app::partition::run::{run_in, InMemory};
use weft_ip::app::partition::{partition, Method};
use weft_ip::app::{Application, MeshData};
use weft_ip::midg::nodes::{count as node_count, face_count};
use weft_ip::midg::solver::{cavity_mode, flops_per_element_stage};
use weft_ip::midg::{app, TetMesh};
use weft_ip::system::allreduce::{Collective, ElementType, ReduceOp};
use weft_ip::weft_hdl::float::FloatFormat;
use weft_ip::weft_hdl::pipeline::Stages;
use weft_sim::network::app_nodes::{app_nodes, run_app_nodes, Phase};

use crate::system::SystemConfig;
use crate::Error;

/// Runge–Kutta stages a time step.
pub const STAGES: usize = 5;
/// The meshes `weft bench dg` runs by default (sub-cubes per side).
pub const CUBES: [usize; 2] = [2, 3];
/// Bytes of one halo element's payload: six binary32 fields.
pub const ELEMENT_BYTES: usize = 24;

/// A figure from the thesis, with where it is.
#[derive(Clone, Debug, Serialize)]
pub struct Thesis {
    /// What was measured or computed, and on what.
    pub what: &'static str,
    /// The value.
    pub value: f64,
    /// Its unit.
    pub unit: &'static str,
    /// Where in the thesis.
    pub source: &'static str,
}

/// Seed 000's figures this benchmark is set beside.
pub fn thesis() -> Vec<Thesis> {
    let gb = |what, value, source| Thesis { what, value, unit: "GB/s", source };
    vec![
        gb("MPI+PCIe peak (store and forward: PCIe 7.88, Omni-Path 12.5, PCIe 7.88)", 2.995, "Table 6.1, eq. 6.1"),
        gb("IO channels, within node, 1 channel (40 Gbit/s), peak", 5.0, "Table 6.1"),
        gb("IO channels, fully connected (3 channels), peak", 15.0, "Table 6.1"),
        gb("IO channels, within node, 1 channel, measured", 4.96, "Table 6.2"),
        gb("IO channels, fully connected, measured", 14.88, "Table 6.2"),
        gb("MPI+PCIe, 4 nodes, measured", 1.78, "Table 6.2"),
        gb("MIDG2 in application, MPI, 2 nodes, 200k elements, halo of ncommon = 4 (the largest)", 0.76, "§6.2.3, Fig. 6.10"),
        gb("MIDG2 in application, IO channels within node, same", 3.50, "§6.2.3, Fig. 6.10"),
        gb("MIDG2 in application, IO channels fully connected, same", 6.09, "§6.2.3, Fig. 6.10"),
        Thesis { what: "MIDG2 halo a transfer, 4 nodes, 1,052 elements, ncommon = 3", value: 14.44, unit: "KB", source: "Table 6.6" },
        Thesis { what: "MIDG2 halo a transfer, 4 nodes, 203,163 elements, ncommon = 3", value: 595.13, unit: "KB", source: "Table 6.6" },
        Thesis { what: "MIDG2 kernels' Fmax, Stratix 10 (lowest, fully connected)", value: 223.36, unit: "MHz", source: "Table 6.5" },
        Thesis { what: "MIDG2 kernels' Fmax, Stratix 10 (highest, MPI)", value: 312.3, unit: "MHz", source: "Table 6.5" },
    ]
}

/// How to run.
#[derive(Clone, Debug)]
pub struct Options {
    /// Sub-cubes per side of the unit cube (six tetrahedra each; 2..=4).
    pub cubes: usize,
    /// Time steps (1..=10).
    pub steps: usize,
    /// Bit error rate on every cable (0 ..= 1e-3).
    pub bit_error_rate: f64,
}

/// One loop of the program (a row of `loops`).
#[derive(Clone, Debug, Serialize)]
pub struct Loop {
    /// The loop's name in `midg.app`.
    pub name: String,
    /// volume, surface or update.
    pub part: &'static str,
    /// Cycles of one run, the busiest node, averaged over the run's stages.
    pub cycles_per_stage: f64,
}

/// Everything the bench measures; written to `bench/dg.json`.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    /// The system's name.
    pub system: String,
    /// Fabric clock, MHz: the program, its engine and the fabric run on it here.
    pub fabric_mhz: f64,
    /// Polynomial order N.
    pub order: usize,
    /// Sub-cubes per side.
    pub cubes: usize,
    /// Elements of the mesh.
    pub elements: usize,
    /// Elements each node owns.
    pub elements_per_node: Vec<usize>,
    /// Time steps run.
    pub steps: usize,
    /// Bit error rate on every cable.
    pub bit_error_rate: f64,
    /// Bits the cables flipped.
    pub flipped_bits: u64,
    /// Field values that differ from the partitioned software model (the run fails unless 0).
    pub mismatches: usize,
    /// Torus cycles of the whole run.
    pub cycles: u64,
    /// The loops, busiest node.
    pub loops: Vec<Loop>,
    /// Cycles a stage, busiest node: volume, surface, update, exchange.
    pub volume_cycles: f64,
    /// See `volume_cycles`.
    pub surface_cycles: f64,
    /// See `volume_cycles`.
    pub update_cycles: f64,
    /// The sync steps (halo refreshes), each from the last node's arrival to the last node's
    /// departure.
    pub exchange_cycles: f64,
    /// The longest time a node spent at sync steps a stage, waiting for its neighbours included.
    pub sync_cycles: f64,
    /// Halo elements all nodes receive a stage.
    pub halo_elements_per_stage: usize,
    /// Their payload, bytes.
    pub halo_bytes_per_stage: usize,
    /// Their bytes on the wire: beats of the datapath and one header a packet.
    pub halo_wire_bytes_per_stage: usize,
    /// Halo packets a stage, all nodes.
    pub halo_packets_per_stage: usize,
    /// Payload over the busiest node's exchange time, all nodes together, GB/s.
    pub exchange_gb_per_s: f64,
    /// MIDG2's FLOP model per element and stage.
    pub flops_per_element_stage: usize,
    /// FLOPs of the run over its time at the fabric clock, GFLOP/s.
    pub gflops: f64,
}

/// `bench/dg.json`: one run per mesh, the dense operators' resources and the thesis's figures.
#[derive(Clone, Debug, Serialize)]
pub struct Bench {
    /// The runs, one per mesh.
    pub runs: Vec<Report>,
    /// The dense operators' resources per order and lanes ([`super::dg_resources`]).
    pub resources: Vec<super::dg_resources::Resource>,
    /// [`thesis()`].
    pub thesis: Vec<Thesis>,
}

fn part(name: &str) -> &'static str {
    match name {
        "derivatives" | "curl" => "volume",
        "flux" | "lift" => "surface",
        _ => "update",
    }
}

/// Runs MIDG2 for `options.steps` time steps on `system` (a 2×2×2 torus), building it in `work`.
/// Options out of range and other tori are refused; a field that differs from the partitioned
/// model is an [`Error::Check`].
pub fn run(system: &SystemConfig, options: &Options, work: &Path, progress: &mut dyn FnMut(&str)) -> Result<Report, Error> {
    if !(2..=4).contains(&options.cubes) {
        return Err(Error::Check(format!("`cubes` = {} is out of range: allowed 2..=4", options.cubes)));
    }
    if !(1..=10).contains(&options.steps) {
        return Err(Error::Check(format!("`steps` = {} is out of range: allowed 1..=10", options.steps)));
    }
    if !(0.0..=1e-3).contains(&options.bit_error_rate) {
        return Err(Error::Check(format!("`ber` = {} is out of range: allowed 0 ..= 1e-3", options.bit_error_rate)));
    }
    if system.node.router.dims != [2, 2, 2] {
        return Err(Error::Check(format!("{}: the MIDG2 benchmark is for the 2×2×2 torus, this system is {:?}", system.name, system.node.router.dims)));
    }
    let mut system = system.clone();
    system.node.router.local_ports = system.node.router.local_ports.max(3);
    let rc = system.node.router.clone();
    let mesh = TetMesh::unit_cube(options.cubes)?;
    let (data, dt) = app::mesh_data(&mesh, app::ORDER, &|x, y, z| cavity_mode(x, y, z, 0.0))?;
    let load = |m: &MeshData| -> Result<Application<f32>, weft_ip::Error> {
        let mut a = Application::<f32>::load("examples/apps/midg.app", app::SOURCE, m)?;
        a.set_global("dt", &[dt as f32])?;
        Ok(a)
    };
    let a = load(&data)?;
    let loops = a.loop_args();
    let elements = a.set_id("elements").ok_or_else(|| Error::Check("midg.app has no set `elements`".into()))?;
    let p = partition(&a.app, &loops, elements, rc.nodes(), Method::Metis)?;
    let h = Halo::build(&a.app, &loops, &p);
    drop(loops);
    let stages = Stages::balanced(FloatFormat::BINARY32);
    progress(&format!("building {}'s nodes with the collective engine in Verilator", system.name));
    let mut torus = crate::bench::allreduce::engine_torus(&system, ElementType::F32, work, progress)?;
    progress("compiling MIDG2 for each node");
    let mut nodes = app_nodes("midg", &a, &data, &p, &h, &stages, &torus, &load)?;
    let orders: Vec<_> = nodes.iter().map(|n| n.share.global_orders(&a, &n.compiled.plan.schedules)).collect();
    let mut reference = load(&data)?;
    let want = run_in(&mut reference, &p, &h, &mut InMemory { config: &rc }, Some(&orders), Some(options.steps), &mut |_, _| {})?;

    torus.program_collective(Collective::Allreduce, crate::bench::allreduce::PORTS, ReduceOp::Sum)?;
    torus.set_bit_error_rate(options.bit_error_rate);
    progress(&format!("running {} time step(s) on {} elements", options.steps, mesh.elements.len()));
    let run = run_app_nodes(&mut torus, &mut nodes, crate::bench::allreduce::PORTS, options.steps as u32, None, 50_000_000)?;

    let (_, set, dim) = a.app.dat_info(a.dat_id("p_u").ok_or_else(|| Error::Check("midg.app has no dat `p_u`".into()))?);
    let w = want.assembled(&a, &p, "p_u").ok_or_else(|| Error::Check("the partitioned model has no `p_u`".into()))?;
    let mut mismatches = 0;
    for (q, n) in nodes.iter_mut().enumerate() {
        let values = n.read("p_u");
        for (l, &e) in n.share.globals[set.index()].iter().enumerate() {
            if p.owner[set.index()][e as usize] as usize == q {
                mismatches += (0..dim).filter(|&c| values[l * dim + c].to_bits() != w[e as usize * dim + c].to_bits()).count();
            }
        }
    }
    if mismatches > 0 {
        return Err(Error::Check(format!("MIDG2 on {}: {mismatches} field values differ from the partitioned model", system.name)));
    }

    let runs = (STAGES * options.steps) as f64;
    // Per node: cycles in each loop and in sync steps over the run.
    let mut per_loop: BTreeMap<String, u64> = BTreeMap::new();
    let (mut volume, mut surface, mut update, mut waiting) = (0u64, 0u64, 0u64, 0u64);
    for timeline in &run.timeline {
        let mut mine: BTreeMap<String, u64> = BTreeMap::new();
        let mut sync = 0;
        for i in timeline {
            match &i.what {
                Phase::Loop(name) => *mine.entry(name.clone()).or_default() += i.to - i.from,
                Phase::Sync(_) => sync += i.to - i.from,
            }
        }
        let sum = |which: &str| mine.iter().filter(|(n, _)| part(n) == which).map(|(_, c)| c).sum::<u64>();
        volume = volume.max(sum("volume"));
        surface = surface.max(sum("surface"));
        update = update.max(sum("update"));
        waiting = waiting.max(sync);
        for (name, c) in mine {
            let e = per_loop.entry(name).or_default();
            *e = (*e).max(c);
        }
    }
    // The exchange proper: each visit of a sync step from the last node's arrival to the last
    // node's departure (a node that arrives earlier waits for its neighbours' tokens, which is
    // load imbalance, not communication).
    let visits: Vec<Vec<(u64, u64)>> = run.timeline.iter().map(|t| t.iter().filter(|i| matches!(i.what, Phase::Sync(_))).map(|i| (i.from, i.to)).collect()).collect();
    let count = visits.iter().map(Vec::len).min().unwrap_or(0);
    let exchange: u64 = (0..count).map(|v| visits.iter().map(|x| x[v].1).max().unwrap_or(0) - visits.iter().map(|x| x[v].0).max().unwrap_or(0)).sum();
    let loops: Vec<Loop> = nodes[0].compiled.loops.iter().map(|name| Loop { name: name.clone(), part: part(name), cycles_per_stage: per_loop.get(name).copied().unwrap_or(0) as f64 / runs }).collect();
    let received: u64 = run.received.iter().sum();
    let halo_elements_per_stage = (received as f64 / runs).round() as usize;
    let halo_packets_per_stage: usize = nodes.iter().map(|n| n.tables.packets.len()).sum();
    let beat_bytes = rc.width / 8;
    let wire_per_element = (8 * ELEMENT_BYTES).div_ceil(rc.width) * beat_bytes;
    let halo_wire_bytes_per_stage = halo_elements_per_stage * wire_per_element + halo_packets_per_stage * beat_bytes;
    let exchange_per_stage = exchange as f64 / runs;
    let flops = flops_per_element_stage(node_count(app::ORDER), face_count(app::ORDER));
    let elements_per_node: Vec<usize> = (0..rc.nodes()).map(|q| p.owner[elements.index()].iter().filter(|&&o| o as usize == q).count()).collect();
    let seconds = run.cycles as f64 / (system.fabric_mhz * 1e6);
    let report = Report {
        system: system.name.clone(),
        fabric_mhz: system.fabric_mhz,
        order: app::ORDER,
        cubes: options.cubes,
        elements: mesh.elements.len(),
        elements_per_node,
        steps: options.steps,
        bit_error_rate: options.bit_error_rate,
        flipped_bits: torus.flipped_bits(),
        mismatches,
        cycles: run.cycles,
        loops,
        volume_cycles: volume as f64 / runs,
        surface_cycles: surface as f64 / runs,
        update_cycles: update as f64 / runs,
        exchange_cycles: exchange_per_stage,
        sync_cycles: waiting as f64 / runs,
        halo_elements_per_stage,
        halo_bytes_per_stage: halo_elements_per_stage * ELEMENT_BYTES,
        halo_wire_bytes_per_stage,
        halo_packets_per_stage,
        exchange_gb_per_s: (halo_elements_per_stage * ELEMENT_BYTES) as f64 / (exchange_per_stage / system.fabric_mhz * 1e3),
        flops_per_element_stage: flops,
        gflops: (mesh.elements.len() * flops) as f64 * runs / seconds / 1e9,
    };
    progress(&format!("{} cycles, {} bits flipped, every field equal to the partitioned model", run.cycles, report.flipped_bits));
    Ok(report)
}

/// The runs and resources as the tables `weft bench dg` prints.
pub fn table(b: &Bench) -> String {
    let mut t = String::new();
    for r in &b.runs {
        t.push_str(&format!(
            "MIDG2 N = {} (binary32) on {} with no host: {} elements ({:?} a node), {} step(s), fabric {} MHz, bit error rate {:e} ({} bits flipped); every field equal to the partitioned model\n",
            r.order, r.system, r.elements, r.elements_per_node, r.steps, r.fabric_mhz, r.bit_error_rate, r.flipped_bits
        ));
        t.push_str("| part | loop | cycles a stage (busiest node) |\n| --- | --- | ---: |\n");
        for l in &r.loops {
            t.push_str(&format!("| {} | {} | {:.0} |\n", l.part, l.name, l.cycles_per_stage));
        }
        t.push_str(&format!(
            "\nA stage: volume {:.0}, surface {:.0}, update {:.0}, exchange {:.0} cycles. Halo a stage: {} elements, {} B payload, {} B on the wire in {} packets, {:.2} GB/s. {} FLOP an element and stage: {:.3} GFLOP/s over the run.\n\n",
            r.volume_cycles, r.surface_cycles, r.update_cycles, r.exchange_cycles, r.halo_elements_per_stage, r.halo_bytes_per_stage, r.halo_wire_bytes_per_stage, r.halo_packets_per_stage, r.exchange_gb_per_s, r.flops_per_element_stage, r.gflops
        ));
    }
    if !b.resources.is_empty() {
        t.push_str("Dense operators (binary32, Yosys synth_xilinx):\n| N | matrix | R × C | lanes | cycles an element | LUT | FF | DSP |\n| ---: | --- | --- | ---: | ---: | ---: | ---: | ---: |\n");
        for x in &b.resources {
            t.push_str(&format!("| {} | {} | {} × {} | {} | {} | {} | {} | {} |\n", x.order, x.matrix, x.rows, x.cols, x.lanes, x.cycles_per_element, x.luts, x.flip_flops, x.dsps));
        }
    }
    t.push_str("\nSeed 000:\n| figure | value | where |\n| --- | ---: | --- |\n");
    for f in &b.thesis {
        t.push_str(&format!("| {} | {} {} | {} |\n", f.what, f.value, f.unit, f.source));
    }
    t
}
