//! `weft bench airfoil --nodes 1,2,4,8,16,64`: Airfoil (binary64) split over N nodes of a torus —
//! strong scaling on one mesh in simulation, a model of it, and the model projected for OP2's
//! 720,000-cell mesh.
//!
//! - **Simulated.** N = 1 is the whole program compiled for one node. For N > 1 the cells are
//!   split by METIS, each node's share compiled ([`compile_node`]) and simulated in the built-in
//!   simulator; the generated nodes of an N-node torus (Verilator, the collective engine on
//!   IntraNode ports 0 and 1) carry the halo refreshes as packets on port 2 and the global
//!   reductions through the engine. A stretch between sync steps lasts as long as its slowest
//!   node; at a sync step the fabric's work follows (exchanges do not overlap compute: the next
//!   loop reads what the exchange brings). The hosts' reads and writes of the nodes' memories
//!   are not counted.
//! - **The model** knows only the compiler's schedules and figures measured on the same fabric
//!   before the application runs: one hop of a header (h), one packet of the router's largest
//!   size M over one hop, first beat in to last out (T), one link's payload bytes a cycle (B),
//!   one one-element allreduce (R). Compute: per stretch, the slowest node's
//!   [`weft_ip::app::hardware::Compiled::phases`]. A refresh of a dat: the first packet's T, h
//!   for every further hop of the farthest packet, and the busiest node's other bytes (sent or
//!   received, whichever is more) at B: (hops − 1)·h + T + (bytes − M)/B. A reduction: R.
//! - **Projection.** The same model on the 720,000-cell mesh split over 4…64 nodes (tori of
//!   [`SHAPES`]), h and B from the largest simulated torus, R from a straight line through the
//!   simulated tori's allreduces against the hops on the butterfly's critical path
//!   ([`weft_ip::system::allreduce::butterfly::critical_hops`]: a global of one value runs on the
//!   butterfly, whose steps grow with log₂ N).

use std::path::Path;

use serde::Serialize;
use weft_hdl::float::FloatFormat;
use weft_hdl::netlist::eval::Evaluator;
use weft_hdl::pipeline::Stages;
use weft_ip::airfoil::naca0012::naca0012;
use weft_ip::app::host::{Host, LoopPorts};
use weft_ip::app::partition::halo::Halo;
use weft_ip::app::partition::nodes::{compile_node, nodes, run_nodes};
use weft_ip::app::partition::{partition, Method, Partition};
use weft_ip::app::sequencer::compile_program_with;
use weft_ip::app::{Application, MeshData};
use weft_ip::router::RouterConfig;
use weft_ip::system::allreduce::{Collective, ElementType, ReduceOp};
use weft_sim::network::mesh_app::TorusFabric;

use crate::bench::allreduce::{engine_torus, fabric_rates, packet_cycles, PORTS};

mod model;
use crate::Error;
use model::{compute_model, fit, steps};

const AIRFOIL: &str = include_str!("../../../examples/apps/airfoil.app");

/// The simulated mesh: NACA0012 50 × 66, 9,900 cells.
pub const GRID: (usize, usize) = (50, 66);
/// OP2's mesh, for the projection.
pub const PROJECTED_GRID: (usize, usize) = (400, 600);
/// Node counts of the projection.
pub const PROJECTED_NODES: [usize; 5] = [4, 8, 16, 32, 64];
/// The torus for each node count.
pub const SHAPES: [(usize, [usize; 3]); 6] = [(2, [2, 1, 1]), (4, [2, 2, 1]), (8, [4, 2, 1]), (16, [4, 2, 2]), (32, [4, 4, 2]), (64, [4, 4, 4])];
/// Iterations simulated per node count.
pub const ITERATIONS: usize = 2;
/// The halo packets' IntraNode port.
const HALO_PORT: usize = 2;
/// Bytes of a binary64 value.
const VALUE_BYTES: usize = 8;

/// Per iteration, cycles.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Split {
    /// Loops, the slowest node per stretch between sync steps.
    pub compute: f64,
    /// Halo refreshes.
    pub exchange: f64,
    /// Global reductions.
    pub reduction: f64,
    /// All three.
    pub iteration: f64,
}

impl Split {
    fn new(compute: f64, exchange: f64, reduction: f64) -> Split {
        Split { compute, exchange, reduction, iteration: compute + exchange + reduction }
    }
}

/// The fabric's figures the model uses, measured before the application runs.
#[derive(Clone, Debug, Serialize)]
pub struct Calibration {
    /// One hop of a header at zero load between halo ports, cycles.
    pub hop_cycles: u64,
    /// One packet of the router's largest size over one hop, first beat in to last out, cycles.
    pub packet_cycles: u64,
    /// The router's largest packet, payload bytes.
    pub packet_bytes: usize,
    /// One link's payload bytes a cycle, packets of the router's largest size.
    pub link_bytes_per_cycle: f64,
    /// One allreduce of one binary64 element through the collective engine, cycles.
    pub allreduce_cycles: u64,
}

/// One node count on the simulated mesh.
#[derive(Clone, Debug, Serialize)]
pub struct Row {
    /// Nodes, N.
    pub nodes: usize,
    /// The torus (N = 1: none).
    pub dims: [usize; 3],
    /// The most cells a node executes (owned and exec halo).
    pub cells_max: usize,
    /// Halo payload bytes an iteration, all nodes.
    pub halo_bytes: usize,
    /// Halo refreshes and reductions an iteration.
    pub refreshes: usize,
    /// Global reductions an iteration.
    pub reductions: usize,
    /// What the model was given (N > 1).
    pub calibration: Option<Calibration>,
    /// Simulated, per iteration.
    pub simulated: Split,
    /// The model, per iteration.
    pub model: Split,
    /// `100 · (model / simulated − 1)` of the iteration.
    pub model_error_percent: f64,
    /// The exchange's share of the simulated iteration, percent.
    pub exchange_percent: f64,
    /// Whether the exchange overlaps compute (it does not: the next loop reads its values).
    pub overlaps_compute: bool,
    /// The simulated iteration at the fabric clock, µs.
    pub us_at_fabric_clock: f64,
    /// The single node's simulated iteration over this one.
    pub speedup: f64,
}

/// One node count on the 720,000-cell mesh, by the model.
#[derive(Clone, Debug, Serialize)]
pub struct Projected {
    /// Nodes.
    pub nodes: usize,
    /// The torus.
    pub dims: [usize; 3],
    /// The most cells a node executes.
    pub cells_max: usize,
    /// Halo payload bytes an iteration, all nodes.
    pub halo_bytes: usize,
    /// The model, per iteration.
    pub model: Split,
    /// 1000 iterations at the fabric clock, seconds.
    pub seconds_1000_at_fabric_clock: f64,
}

/// Everything `weft bench airfoil --nodes` measures; written to `bench/airfoil_nodes.json`.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    /// `binary64`.
    pub precision: String,
    /// The simulated mesh and its cells.
    pub grid: (usize, usize),
    /// Cells of the simulated mesh.
    pub cells: usize,
    /// Iterations simulated per node count.
    pub iterations: usize,
    /// The fabric clock of the shipped tori, MHz.
    pub fabric_mhz: f64,
    /// One row per simulated node count.
    pub rows: Vec<Row>,
    /// The projection's allreduce: cycles = `.0 + .1 · H`, H the hops on the butterfly's critical
    /// path, fitted to the simulated tori.
    pub allreduce_line: (f64, f64),
    /// The projected mesh's cells.
    pub projected_cells: usize,
    /// The 720,000-cell mesh by the model.
    pub projection: Vec<Projected>,
    /// OP2's published times for 1000 binary64 iterations on that mesh, seconds.
    pub op2_seconds: Vec<(String, f64)>,
}

fn load(m: &MeshData) -> Result<Application<f64>, weft_ip::Error> {
    Application::<f64>::load("examples/apps/airfoil.app", AIRFOIL, m)
}

fn stages() -> Stages {
    Stages::balanced(FloatFormat::BINARY64)
}

fn shape(n: usize) -> Result<[usize; 3], Error> {
    SHAPES.iter().find(|s| s.0 == n).map(|s| s.1).ok_or_else(|| Error::Input(format!("--nodes {n}: allowed are 1 and {}", SHAPES.iter().map(|s| s.0.to_string()).collect::<Vec<_>>().join(", "))))
}

/// A mesh split over `n` nodes: the partition and its halos.
fn split(app: &Application<f64>, n: usize) -> Result<(Partition, Halo), Error> {
    let loops = app.loop_args();
    let cells = app.set_id("cells").ok_or_else(|| Error::Input("airfoil.app has no set `cells`".into()))?;
    let p = partition(&app.app, &loops, cells, n, Method::Metis)?;
    let h = Halo::build(&app.app, &loops, &p);
    Ok((p, h))
}

fn cells_max(app: &Application<f64>, p: &Partition, h: &Halo) -> usize {
    let cells = app.set_id("cells").expect("cells");
    (0..p.parts).map(|q| p.owned(cells, q).len() + h.exec[q][cells.index()].len()).max().unwrap_or(0)
}

/// The single node: the whole program in the built-in simulator for [`ITERATIONS`].
fn single(app: &Application<f64>, log: &mut dyn FnMut(String)) -> Result<(f64, f64), Error> {
    let compiled = compile_program_with(app, &stages(), 1)?;
    let mut ev = Evaluator::new(compiled.net.clone());
    ev.reset(2);
    let host = Host { app, plan: &compiled.plan, name: "" };
    host.load_program(&mut ev, &compiled.loops);
    LoopPorts::set(&mut ev, "iterations", &(ITERATIONS as u32).into());
    let model = compiled.cycles_with(Some(ITERATIONS));
    let simulated = host.run(&mut ev, 2 * model)?;
    log(format!("1 node: {simulated} cycles for {ITERATIONS} iterations (model {model})"));
    Ok((simulated as f64 / ITERATIONS as f64, model as f64 / ITERATIONS as f64))
}

/// `n` nodes on their torus (built in `work`): calibration, then the application.
fn on_torus(app: &Application<f64>, mesh: &MeshData, n: usize, work: &Path, log: &mut dyn FnMut(String)) -> Result<(Row, Calibration), Error> {
    let dims = shape(n)?;
    // torus_4x2x1's node (a U280: four links over its two QSFP28 cages) while the torus has two
    // dimensions; a third needs six links, which torus_2x2x2's node (a 520N) has, with the same
    // router and link.
    let base = if dims.iter().all(|&d| d >= 2) { "torus_2x2x2" } else { "torus_4x2x1" };
    let mut system = crate::system::shipped_named(base)?;
    system.name = format!("torus_{}x{}x{}", dims[0], dims[1], dims[2]);
    system.node.router.dims = dims;
    system.node.router.local_ports = 3;
    let rc = system.node.router.clone();
    let (p, h) = split(app, n)?;
    let mut built = nodes(app, mesh, &p, &h, &stages(), &load, &|c| {
        let mut e = Evaluator::new(c.net.clone());
        e.reset(2);
        e
    })?;
    let mut torus = engine_torus(&system, ElementType::F64, work, &mut |line| log(line.to_string()))?;
    let (hop_cycles, link_bytes_per_cycle) = fabric_rates(&mut torus, &rc, HALO_PORT)?;
    let packet_cycles = packet_cycles(&mut torus, &rc, HALO_PORT)?;
    let one: Vec<Vec<u128>> = (0..n).map(|k| vec![(k as f64 + 0.5).to_bits() as u128]).collect();
    let allreduce = torus.collective(Collective::Allreduce, PORTS, ElementType::F64, ReduceOp::Sum, &one, 256, None, 100_000).map_err(|e| Error::Check(format!("calibration allreduce: {e}")))?;
    let calibration = Calibration { hop_cycles, packet_cycles, packet_bytes: rc.max_packet_bytes, link_bytes_per_cycle, allreduce_cycles: allreduce.cycles };
    log(format!(
        "{n} nodes: h = {hop_cycles} cycles, T = {packet_cycles} cycles for {} bytes, B = {link_bytes_per_cycle:.2} bytes a cycle, a one-element allreduce {} cycles",
        rc.max_packet_bytes, allreduce.cycles
    ));

    let mut fabric = TorusFabric::new(&mut torus, PORTS, HALO_PORT, 2_000_000);
    let run = run_nodes(app, &mut built, &p, &h, &mut fabric, ITERATIONS as u32, 100_000_000)?;
    let traffic = fabric.traffic.clone();
    let it = ITERATIONS as f64;
    let compute: u64 = run.phases.iter().map(|s| s.iter().copied().max().unwrap_or(0)).sum();
    let simulated = Split::new(compute as f64 / it, traffic.refresh_cycles as f64 / it, traffic.reduction_cycles as f64 / it);

    let compiled: Vec<_> = built.iter().map(|b| &b.compiled).collect();
    let (compute_model, ids) = compute_model(&compiled, ITERATIONS);
    let s = steps(app, &ids, &p, &h, &rc);
    if s.refreshes.len() != traffic.refreshes || s.reductions != traffic.reductions {
        return Err(Error::Check(format!(
            "{n} nodes: the model counts {} refreshes and {} reductions, the run made {} and {}",
            s.refreshes.len(),
            s.reductions,
            traffic.refreshes,
            traffic.reductions
        )));
    }
    let model = Split::new(compute_model / it, s.exchange_model(&calibration) / it, (s.reductions as u64 * calibration.allreduce_cycles) as f64 / it);
    log(format!(
        "{n} nodes: simulated {:.0} cycles an iteration ({:.0} compute, {:.0} exchange, {:.0} reduction), model {:.0}",
        simulated.iteration, simulated.compute, simulated.exchange, simulated.reduction, model.iteration
    ));
    let row = Row {
        nodes: n,
        dims,
        cells_max: cells_max(app, &p, &h),
        halo_bytes: s.halo_bytes() / ITERATIONS,
        refreshes: s.refreshes.len() / ITERATIONS,
        reductions: s.reductions / ITERATIONS,
        calibration: Some(calibration.clone()),
        model_error_percent: 100.0 * (model.iteration / simulated.iteration - 1.0),
        exchange_percent: 100.0 * simulated.exchange / simulated.iteration,
        overlaps_compute: false,
        us_at_fabric_clock: 0.0,
        speedup: 0.0,
        simulated,
        model,
    };
    Ok((row, calibration))
}

/// Runs the study for `counts` (each 1 or a node count of [`SHAPES`]), building the tori
/// in `work`.
pub fn run(counts: &[usize], work: &Path, log: &mut dyn FnMut(String)) -> Result<Report, Error> {
    for &n in counts.iter().filter(|&&n| n != 1) {
        shape(n)?;
    }
    let fabric_mhz = crate::system::shipped()[0].fabric_mhz;
    let mesh = naca0012(GRID.0, GRID.1)?.data();
    let app = load(&mesh)?;
    let mut rows = vec![];
    let mut calibrations = vec![];
    for &n in counts {
        if n == 1 {
            let (simulated, model) = single(&app, log)?;
            let (simulated, model) = (Split::new(simulated, 0.0, 0.0), Split::new(model, 0.0, 0.0));
            let cells = app.app.set_size(app.set_id("cells").expect("cells"));
            let model_error_percent = 100.0 * (model.iteration / simulated.iteration - 1.0);
            rows.push(Row {
                nodes: 1,
                dims: [1, 1, 1],
                cells_max: cells,
                halo_bytes: 0,
                refreshes: 0,
                reductions: 0,
                calibration: None,
                simulated,
                model,
                model_error_percent,
                exchange_percent: 0.0,
                overlaps_compute: false,
                us_at_fabric_clock: 0.0,
                speedup: 0.0,
            });
        } else {
            let (row, c) = on_torus(&app, &mesh, n, &work.join(format!("nodes{n}")), log)?;
            calibrations.push((n, c));
            rows.push(row);
        }
    }
    let single = rows.iter().find(|r| r.nodes == 1).map(|r| r.simulated.iteration);
    for r in &mut rows {
        r.us_at_fabric_clock = r.simulated.iteration / fabric_mhz;
        r.speedup = single.map_or(f64::NAN, |s| s / r.simulated.iteration);
    }
    let (projection, allreduce_line, projected_cells) = project(&calibrations, fabric_mhz, log)?;
    Ok(Report {
        precision: "binary64".into(),
        grid: GRID,
        cells: app.app.set_size(app.set_id("cells").expect("cells")),
        iterations: ITERATIONS,
        fabric_mhz,
        rows,
        allreduce_line,
        projected_cells,
        projection,
        op2_seconds: crate::bench::airfoil::OP2_SECONDS.iter().map(|(n, s)| (n.to_string(), *s)).collect(),
    })
}

/// Hops on the butterfly's critical path on the torus of `n` nodes ([`SHAPES`]).
fn hops(n: usize) -> Result<usize, Error> {
    weft_ip::system::allreduce::butterfly::critical_hops(shape(n)?).ok_or_else(|| Error::Input(format!("{n} nodes: the torus has no butterfly")))
}

/// The model on the 720,000-cell mesh; `calibrations` from the simulated tori (at least one).
fn project(calibrations: &[(usize, Calibration)], fabric_mhz: f64, log: &mut dyn FnMut(String)) -> Result<(Vec<Projected>, (f64, f64), usize), Error> {
    let Some((_, largest)) = calibrations.iter().max_by_key(|c| c.0) else {
        return Ok((vec![], (f64::NAN, f64::NAN), 0));
    };
    let line = fit(&calibrations.iter().map(|(n, c)| Ok((hops(*n)? as f64, c.allreduce_cycles as f64))).collect::<Result<Vec<_>, Error>>()?);
    let mesh = naca0012(PROJECTED_GRID.0, PROJECTED_GRID.1)?.data();
    let app = load(&mesh)?;
    let mut out = vec![];
    for n in PROJECTED_NODES {
        let dims = shape(n)?;
        let rc = RouterConfig { dims, ..Default::default() };
        let (p, h) = split(&app, n)?;
        let compiled: Vec<_> = (0..n).map(|q| compile_node(&app, &mesh, &p, &h, &stages(), &load, q).map(|c| c.2)).collect::<Result<_, _>>()?;
        let (compute, ids) = compute_model(&compiled.iter().collect::<Vec<_>>(), 1);
        let s = steps(&app, &ids, &p, &h, &rc);
        let c = Calibration { allreduce_cycles: (line.0 + line.1 * hops(n)? as f64).round() as u64, ..largest.clone() };
        let model = Split::new(compute, s.exchange_model(&c), (s.reductions as u64 * c.allreduce_cycles) as f64);
        log(format!("720,000 cells on {n} nodes: {:.0} cycles an iteration by the model ({:.0} compute)", model.iteration, model.compute));
        out.push(Projected { nodes: n, dims, cells_max: cells_max(&app, &p, &h), halo_bytes: s.halo_bytes(), seconds_1000_at_fabric_clock: 1000.0 * model.iteration / (fabric_mhz * 1e6), model });
    }
    Ok((out, line, app.app.set_size(app.set_id("cells").expect("cells"))))
}

/// The tables.
pub fn table(r: &Report) -> String {
    let mut t = format!("Airfoil over N nodes, {}, NACA0012 {}x{} ({} cells), {} iterations simulated; cycles an iteration\n", r.precision, r.grid.0, r.grid.1, r.cells, r.iterations);
    t += "  N  torus    cells/node  halo B/it   compute  exchange  reduction  iteration   model (error)   exchange %  speedup  us @fabric\n";
    for w in &r.rows {
        t += &format!(
            "  {:<2} {}x{}x{} {:>12} {:>10} {:>9.0} {:>9.0} {:>10.0} {:>10.0} {:>8.0} ({:+.2} %) {:>9.1} {:>8.2} {:>11.1}\n",
            w.nodes,
            w.dims[0],
            w.dims[1],
            w.dims[2],
            w.cells_max,
            w.halo_bytes,
            w.simulated.compute,
            w.simulated.exchange,
            w.simulated.reduction,
            w.simulated.iteration,
            w.model.iteration,
            w.model_error_percent,
            w.exchange_percent,
            w.speedup,
            w.us_at_fabric_clock
        );
    }
    t += &format!("\n{} cells by the model (allreduce {:.0} + {:.1}·H cycles, H the butterfly's hops):\n", r.projected_cells, r.allreduce_line.0, r.allreduce_line.1);
    t += "  N   torus   cells/node  halo B/it   compute  exchange  reduction  iteration  1000 it @fabric\n";
    for p in &r.projection {
        t += &format!(
            "  {:<3} {}x{}x{} {:>11} {:>10} {:>9.0} {:>9.0} {:>10.0} {:>10.0} {:>14.3} s\n",
            p.nodes, p.dims[0], p.dims[1], p.dims[2], p.cells_max, p.halo_bytes, p.model.compute, p.model.exchange, p.model.reduction, p.model.iteration, p.seconds_1000_at_fabric_clock
        );
    }
    for (n, s) in &r.op2_seconds {
        t += &format!("  {n}: {s} s\n");
    }
    t
}
