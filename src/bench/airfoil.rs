//! `weft bench airfoil`: Airfoil's application file (`examples/apps/airfoil.app`) compiled
//! whole with P = 1, 2, 4 and 8 pipelines per loop, on OP2's NACA0012 C-grid at three sizes.
//!
//! - **Per loop**: elements, schedule slots and no-ops, and the cycles of one run by two models:
//!   the compiler's (from the schedule and the pipeline depths) and seed 002's form, elements / P
//!   plus the pipeline's fill, which knows nothing of the schedule.
//! - **Per iteration**: both models summed over the program's loop runs, and — on the meshes the
//!   built-in simulator takes in seconds — one iteration simulated on the compiled hardware.
//! - **On chip**: the bytes of every memory as compiled (depths rounded up to powers of two) and
//!   what that is in boards; the 720,000-cell mesh's time for OP2's 1000 iterations at stated
//!   clocks, beside OP2's published times.
//! - **The Verilator programs**: the compiler's model of 10 iterations (each started alone) for
//!   the configurations `tests/app_program_cosim.rs` runs in Verilator, which asserts that every
//!   simulated iteration takes exactly the model's cycles.
//! - **rms against OP2** ([`rms_history`]): the 720,000-cell mesh for 1000 iterations in OP2's
//!   sequential order and in the compiled hardware's order, binary64 and binary32, every 100
//!   iterations, beside OP2's published final value.

use serde::Serialize;
use weft_hdl::float::{FloatFormat, FloatOperator};
use weft_hdl::netlist::eval::Evaluator;
use weft_hdl::pipeline::Stages;
use weft_ip::airfoil::naca0012::naca0012;
use weft_ip::app::hardware::{compile_loop_with, loop_shape};
use weft_ip::app::host::{Host, LoopPorts};
use weft_ip::app::sequencer::compile_program_with;
use weft_ip::app::Application;

use crate::Error;

const AIRFOIL: &str = include_str!("../../examples/apps/airfoil.app");

/// NACA0012 grids (I, J): 3·I·J cells; the last is OP2's standard mesh.
pub const MESHES: [(usize, usize); 3] = [(16, 20), (50, 66), (400, 600)];
/// Pipelines per loop.
pub const PIPELINES: [usize; 4] = [1, 2, 4, 8];
/// Meshes up to this many cells are simulated.
const SIMULATED_CELLS: usize = 10_000;
/// Clocks the projection is stated at (not a measured Fmax).
pub const CLOCKS_MHZ: [f64; 3] = [100.0, 200.0, 300.0];
/// OP2's own Airfoil, 720,000 cells, binary64, 1000 iterations, measured with OP2's code.
pub const OP2_SECONDS: [(&str, f64); 3] = [("OP2 CUDA, one NVIDIA H100", 0.455), ("OP2 OpenMP, 16 Xeon threads", 9.49), ("OP2 sequential, one core", 111.0)];
/// On-chip memory of two boards, in bytes: the U280's XCVU37P (70.9 Mb block RAM + 270 Mb
/// UltraRAM) and the 520N's Stratix 10 GX 2800 (229 Mb M20K), from the vendors' product tables.
pub const BOARDS: [(&str, f64); 2] = [("Alveo U280 (XCVU37P)", 340.9e6 / 8.0), ("BittWare 520N (Stratix 10 GX 2800)", 229.0e6 / 8.0)];

/// One parallel loop at one mesh and pipeline count (a row of `loops` in `bench/airfoil.json`).
#[derive(Clone, Debug, Serialize)]
pub struct LoopRow {
    /// The loop's name in the application file.
    pub name: String,
    /// Elements the loop runs over (the schedule's non-empty slots).
    pub elements: usize,
    /// Slots of the loop's schedule: rows of P slots, one row a cycle.
    pub slots: usize,
    /// Empty slots (`slots − elements`): hazards and partly filled rows.
    pub noops: usize,
    /// Runs per iteration.
    pub runs: usize,
    /// Cycles of one run, the compiler's model.
    pub cycles: usize,
    /// Cycles of one run in seed 002's form: elements / P + fill.
    pub seed_model: usize,
}

/// One mesh at one pipeline count (a row of `meshes` in `bench/airfoil.json`).
#[derive(Clone, Debug, Serialize)]
pub struct MeshRow {
    /// The NACA0012 grid (I, J).
    pub grid: (usize, usize),
    /// Cells of the mesh (3·I·J).
    pub cells: usize,
    /// Pipelines per loop, P.
    pub pipelines: usize,
    /// The program's loops.
    pub loops: Vec<LoopRow>,
    /// One iteration (the program with its repeat count 1): the compiler's model.
    pub iteration_cycles: usize,
    /// The same summed in seed 002's form.
    pub iteration_seed_model: usize,
    /// One iteration's cycles on the compiled hardware in the built-in simulator; `None` on
    /// meshes of more than 10,000 cells (not simulated).
    pub iteration_simulated: Option<usize>,
    /// Every memory as compiled (width × depth, depths rounded up to powers of two), bytes.
    pub on_chip_bytes: u64,
}

/// Time of OP2's 1000 iterations on the largest mesh at one stated clock (a row of `projection`
/// in `bench/airfoil.json`).
#[derive(Clone, Debug, Serialize)]
pub struct Projection {
    /// Pipelines per loop, P.
    pub pipelines: usize,
    /// The stated clock, MHz (one of [`CLOCKS_MHZ`]; not a measured Fmax).
    pub clock_mhz: f64,
    /// `1000 · iteration_cycles / clock`, seconds.
    pub seconds_1000_iterations: f64,
}

/// One Airfoil program as the Verilator test runs it (a row of `programs` in
/// `bench/airfoil.json`).
#[derive(Clone, Debug, Serialize)]
pub struct ProgramRow {
    /// Cells of the mesh.
    pub cells: usize,
    /// `binary32` or `binary64`.
    pub precision: String,
    /// Pipelines per loop.
    pub pipelines: usize,
    /// 10 iterations, each started alone: 10 × `Compiled::cycles_with(Some(1))`.
    pub cycles_10_iterations: usize,
    /// The test that runs it in Verilator and asserts each iteration's cycles.
    pub test: String,
}

/// The rms one order and precision prints (a row of `rms` in `bench/airfoil.json`).
#[derive(Clone, Debug, Serialize)]
pub struct RmsRow {
    /// `OP2's sequential order` or `the hardware's order`.
    pub order: String,
    /// `binary64` or `binary32`.
    pub precision: String,
    /// (iteration, rms) every 100 iterations.
    pub printed: Vec<(usize, f64)>,
    /// `100 · (rms / OP2's − 1)` at the last iteration, percent.
    pub percent_from_op2: f64,
}

/// OP2's published rms after 1000 iterations on the 720,000-cell mesh in binary64.
pub const OP2_RMS: f64 = 1.060114637578e-4;

/// The configurations the Verilator test runs: (grid, binary64, pipelines, test name); the first
/// in the default suite, the others with `-- --ignored`.
pub const COSIM: [((usize, usize), bool, usize, &str); 8] = [
    ((16, 20), false, 1, "airfoil_program_on_960_cells_in_binary32_for_10_iterations"),
    ((16, 20), true, 1, "airfoil_program_on_960_cells_in_binary64_for_10_iterations"),
    ((50, 66), false, 1, "airfoil_program_on_9900_cells_in_binary32_for_10_iterations"),
    ((50, 66), true, 1, "airfoil_program_on_9900_cells_in_binary64_for_10_iterations"),
    ((16, 20), false, 4, "airfoil_program_with_four_pipelines_on_960_cells_in_binary32_for_10_iterations"),
    ((16, 20), true, 4, "airfoil_program_with_four_pipelines_on_960_cells_in_binary64_for_10_iterations"),
    ((50, 66), false, 4, "airfoil_program_with_four_pipelines_on_9900_cells_in_binary32_for_10_iterations"),
    ((50, 66), true, 4, "airfoil_program_with_four_pipelines_on_9900_cells_in_binary64_for_10_iterations"),
];

/// Everything `weft bench airfoil` measures; written to `bench/airfoil.json`.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    /// The arithmetic of the compiled hardware: `binary64`.
    pub precision: String,
    /// One row per mesh and pipeline count.
    pub meshes: Vec<MeshRow>,
    /// The largest mesh at each pipeline count and clock.
    pub projection: Vec<Projection>,
    /// [`OP2_SECONDS`]: OP2's times for the same 1000 iterations, seconds.
    pub op2_seconds: Vec<(String, f64)>,
    /// [`BOARDS`]: each board's on-chip memory, bytes.
    pub boards: Vec<(String, f64)>,
    /// The programs of [`COSIM`] (empty unless [`programs`] filled it).
    pub programs: Vec<ProgramRow>,
    /// rms every 100 iterations on the 720,000-cell mesh (empty unless [`rms_history`] filled it).
    pub rms: Vec<RmsRow>,
}

/// Runs the benchmark in binary64 (OP2's published precision) on each NACA0012 grid of `grids`
/// with each of `pipeline_counts`; the projection is of the last grid. `log` hears one line per
/// mesh and pipeline count. A mesh or program the compiler refuses is an error.
pub fn run(grids: &[(usize, usize)], pipeline_counts: &[usize], log: &mut dyn FnMut(String)) -> Result<Report, Error> {
    let stages = Stages::balanced(FloatFormat::BINARY64);
    let mut meshes = vec![];
    for &grid in grids {
        let mesh = naca0012(grid.0, grid.1)?;
        let app = Application::<f64>::load("examples/apps/airfoil.app", AIRFOIL, &mesh.data())?;
        for &pipelines in pipeline_counts {
            let compiled = compile_program_with(&app, &stages, pipelines)?;
            let runs = |name: &str| if name == "save_soln" { 1 } else { 2 };
            let mut loops = vec![];
            for name in &compiled.loops {
                let one = compile_loop_with(&app, name, &stages, pipelines)?;
                let slots = &compiled.plan.schedules[name];
                let elements = slots.iter().flatten().count();
                let seed_model = elements.div_ceil(pipelines) + fill(&app, name, &stages, compiled.plan.lambda, pipelines)?;
                loops.push(LoopRow { name: name.clone(), elements, slots: slots.len(), noops: slots.len() - elements, runs: runs(name), cycles: one.cycles, seed_model });
            }
            let iteration_cycles = compiled.cycles_with(Some(1));
            let iteration_seed_model = loops.iter().map(|l| l.runs * l.seed_model).sum();
            let iteration_simulated = if mesh.cells.len() <= SIMULATED_CELLS {
                let mut ev = Evaluator::new(compiled.net.clone());
                ev.reset(2);
                let host = Host { app: &app, plan: &compiled.plan, name: "" };
                host.load_program(&mut ev, &compiled.loops);
                LoopPorts::set(&mut ev, "iterations", &1u8.into());
                Some(host.run(&mut ev, 100 * iteration_cycles)?)
            } else {
                None
            };
            let row = MeshRow { grid, cells: mesh.cells.len(), pipelines, loops, iteration_cycles, iteration_seed_model, iteration_simulated, on_chip_bytes: on_chip_bytes(&compiled.net) };
            log(format!("{} cells, {pipelines} pipeline(s): {} cycles an iteration (model), simulated {:?}", row.cells, row.iteration_cycles, row.iteration_simulated));
            meshes.push(row);
        }
    }
    let largest = grids[grids.len() - 1];
    let projection = meshes
        .iter()
        .filter(|m| m.grid == largest)
        .flat_map(|m| CLOCKS_MHZ.iter().map(move |&f| Projection { pipelines: m.pipelines, clock_mhz: f, seconds_1000_iterations: 1000.0 * m.iteration_cycles as f64 / (f * 1e6) }))
        .collect();
    Ok(Report {
        precision: "binary64".into(),
        meshes,
        projection,
        op2_seconds: OP2_SECONDS.iter().map(|(n, s)| (n.to_string(), *s)).collect(),
        boards: BOARDS.iter().map(|(n, b)| (n.to_string(), *b)).collect(),
        programs: vec![],
        rms: vec![],
    })
}

/// The compiler's model of 10 iterations for each configuration of [`COSIM`].
pub fn programs() -> Result<Vec<ProgramRow>, Error> {
    fn model<T: weft_ip::app::Element>(grid: (usize, usize), format: FloatFormat, pipelines: usize) -> Result<(usize, usize), Error> {
        let mesh = naca0012(grid.0, grid.1)?;
        let app = Application::<T>::load_as("examples/apps/airfoil.app", AIRFOIL, &mesh.data())?;
        let compiled = compile_program_with(&app, &Stages::balanced(format), pipelines)?;
        Ok((mesh.cells.len(), 10 * compiled.cycles_with(Some(1))))
    }
    COSIM
        .iter()
        .map(|&(grid, double, pipelines, test)| {
            let (cells, cycles) = if double { model::<f64>(grid, FloatFormat::BINARY64, pipelines)? } else { model::<f32>(grid, FloatFormat::BINARY32, pipelines)? };
            let precision = if double { "binary64" } else { "binary32" };
            Ok(ProgramRow { cells, precision: precision.into(), pipelines, cycles_10_iterations: cycles, test: test.into() })
        })
        .collect()
}

/// Airfoil on the 720,000-cell mesh for 1000 iterations, four ways (OP2's sequential order and
/// the compiled hardware's order — its schedules and reduction lanes —, binary64 and binary32),
/// printed every 100 iterations. A few minutes on one core.
pub fn rms_history(log: &mut dyn FnMut(String)) -> Result<Vec<RmsRow>, Error> {
    use weft_ip::airfoil::solver::{iteration, iteration_in, Constants, Order, State};
    let m = naca0012(400, 600)?;
    let app = Application::<f64>::load("airfoil.app", AIRFOIL, &m.data())?;
    let lanes = Stages::balanced(FloatFormat::BINARY64).of(FloatOperator::Add);
    let plan = weft_ip::app::plan::Plan::new(&app, lanes)?;
    let order = Order { edges: &plan.schedules["res_calc"], bedges: &plan.schedules["bres_calc"], lanes };
    let (c64, c32) = (Constants::<f64>::default(), Constants::<f32>::default());
    let (mut s64, mut s32, mut h64, mut h32) = (State::free_stream(&m, &c64), State::free_stream(&m, &c32), State::free_stream(&m, &c64), State::free_stream(&m, &c32));
    let mut printed = [vec![], vec![], vec![], vec![]];
    for it in 1..=1000 {
        let rms = [iteration(&m, &mut s64, &c64), iteration(&m, &mut s32, &c32) as f64, iteration_in(&m, &mut h64, &c64, &order), iteration_in(&m, &mut h32, &c32, &order) as f64];
        if it % 100 == 0 {
            log(format!("iteration {it}: rms {:.6e} {:.6e} {:.6e} {:.6e} (OP2's order binary64, binary32; the hardware's order binary64, binary32)", rms[0], rms[1], rms[2], rms[3]));
            for (p, r) in printed.iter_mut().zip(rms) {
                p.push((it, r));
            }
        }
    }
    let names = [("OP2's sequential order", "binary64"), ("OP2's sequential order", "binary32"), ("the hardware's order", "binary64"), ("the hardware's order", "binary32")];
    Ok(names
        .iter()
        .zip(printed)
        .map(|(&(order, precision), printed)| {
            let last = printed.last().map_or(f64::NAN, |p| p.1);
            RmsRow { order: order.into(), precision: precision.into(), printed, percent_from_op2: 100.0 * (last / OP2_RMS - 1.0) }
        })
        .collect())
}

/// Seed 002's fill of a loop's pipeline: the schedule read and the two gather reads, the kernel,
/// the accumulator's λ when it increments, the row's adder tree and the reduction's fold (A
/// steps of A + 1 cycles after A cycles for the last partial) when it sums a global, and the step
/// that starts it.
fn fill(app: &Application<f64>, name: &str, stages: &Stages, lambda: usize, pipelines: usize) -> Result<usize, Error> {
    let (latency, incs, reduces) = loop_shape(app, name, stages)?;
    let a = stages.of(FloatOperator::Add).max(1);
    let tree = pipelines.next_power_of_two().trailing_zeros() as usize * a;
    Ok(1 + 3 + latency + 1 + if incs { lambda } else { 0 } + if reduces { tree + a + a * (a + 1) } else { 0 })
}

/// Bytes of every memory of `net` (width × depth).
fn on_chip_bytes(net: &weft_hdl::netlist::Netlist) -> u64 {
    net.memories.iter().map(|m| (m.width * m.depth) as u64).sum::<u64>() / 8
}

/// The tables.
pub fn table(r: &Report) -> String {
    let mut t = String::from("Airfoil compiled from examples/apps/airfoil.app, binary64\n\n");
    for m in r.meshes.iter().filter(|m| m.pipelines == 1 || m.pipelines == 4) {
        t += &format!("NACA0012 {}x{}: {} cells, {} pipeline(s), on chip {:.1} MB\n", m.grid.0, m.grid.1, m.cells, m.pipelines, m.on_chip_bytes as f64 / 1e6);
        t += "  loop         elements    slots  no-ops  runs  cycles (model)  seed 002 form\n";
        for l in &m.loops {
            t += &format!("  {:<11} {:>9} {:>8} {:>7} {:>5} {:>15} {:>14}\n", l.name, l.elements, l.slots, l.noops, l.runs, l.cycles, l.seed_model);
        }
        t += "\n";
    }
    t += "an iteration, cycles:\n  cells    P  simulated       model  seed 002 form\n";
    for m in &r.meshes {
        let err = |x: usize| m.iteration_simulated.map_or(String::new(), |s| format!(" ({:+.2} %)", 100.0 * (x as f64 / s as f64 - 1.0)));
        let sim = m.iteration_simulated.map_or("-".to_string(), |s| s.to_string());
        t += &format!("  {:>6} {:>3} {:>10} {:>11}{} {:>10}{}\n", m.cells, m.pipelines, sim, m.iteration_cycles, err(m.iteration_cycles), m.iteration_seed_model, err(m.iteration_seed_model));
    }
    if let Some(big) = r.meshes.iter().rev().find(|m| m.pipelines == 1) {
        t += &format!("\n{} cells, 1000 iterations at a stated clock (not a measured Fmax):\n", big.cells);
        for p in &r.projection {
            t += &format!("  P = {} at {:>3.0} MHz: {:.2} s\n", p.pipelines, p.clock_mhz, p.seconds_1000_iterations);
        }
        for (n, s) in &r.op2_seconds {
            t += &format!("  {n}: {s} s\n");
        }
        for (n, b) in &r.boards {
            t += &format!("  on chip (P = 1) {:.1} MB: at least {} {n} boards ({:.1} MB each)\n", big.on_chip_bytes as f64 / 1e6, (big.on_chip_bytes as f64 / b).ceil(), b / 1e6);
        }
    }
    t
}
