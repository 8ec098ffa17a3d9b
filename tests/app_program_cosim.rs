//! Mesh application programs compiled to hardware and run in Verilator with no host in the
//! loop: the host loads the mesh, sets the iteration count, starts the program and reads the
//! data back — bit for bit what the application reference computes running the same program
//! with each loop in the hardware's schedule and the reductions in its order, in the cycles the
//! compiler's model gives. Airfoil is compared after every iteration (q, qold, adt, res, rms);
//! Jacobi runs its whole program once, repeats and prints included.

use weft::hdl::float::{FloatFormat, FloatOperator};
use weft::hdl::pipeline::Stages;
use weft::ip::airfoil::naca0012::naca0012;
use weft::ip::app::hardware::Compiled;
use weft::ip::app::host::{Host, LoopPorts};
use weft::ip::app::sequencer::{compile_program_with, program_verilog};
use weft::ip::app::{Application, Element};
use weft::sim::cosim::Model;

const AIRFOIL: &str = include_str!("../examples/apps/airfoil.app");
const JACOBI: &str = include_str!("../examples/apps/jacobi.app");

fn bits<T: Element>(v: &[T]) -> Vec<u64> {
    v.iter().map(|x| x.to_lane()).collect()
}

/// `compiled` written as Verilog module `module`, lint-checked, verilated and out of reset; the
/// directory to remove afterwards.
fn verilated<T: Element>(app: &Application<T>, module: &str, compiled: &Compiled) -> (Model, std::path::PathBuf) {
    let dir = std::env::temp_dir().join(format!("weft-app-program-{}-{module}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join(format!("{module}.v"));
    std::fs::write(&file, program_verilog(app, module, compiled).unwrap()).unwrap();
    weft::tools::verilator_lint(&file, module).unwrap();
    let mut sim = Model::build(&file, module).unwrap();
    let rst = sim.port("rst").unwrap();
    sim.set(rst, 1);
    sim.tick();
    sim.tick();
    sim.set(rst, 0);
    (sim, dir)
}

/// Airfoil on the NACA0012 grid `grid` (3·I·J cells) for `iterations` iterations with
/// `pipelines` pipelines per loop, started one iteration at a time and compared after each.
fn airfoil<T: Element>(format: FloatFormat, grid: (usize, usize), iterations: usize, pipelines: usize) {
    let mesh = naca0012(grid.0, grid.1).unwrap();
    let stages = Stages::balanced(format);
    let app = Application::<T>::load_as("examples/apps/airfoil.app", AIRFOIL, &mesh.data()).unwrap();
    let compiled = compile_program_with(&app, &stages, pipelines).unwrap();
    let module = format!("airfoil_{}_p{pipelines}", T::PRECISION.name());
    let (mut sim, dir) = verilated(&app, &module, &compiled);
    let host = Host { app: &app, plan: &compiled.plan, name: "" };
    host.load_program(&mut sim, &compiled.loops);
    LoopPorts::set(&mut sim, "iterations", &1u32.into());
    let mut reference = Application::<T>::load_as("examples/apps/airfoil.app", AIRFOIL, &mesh.data()).unwrap();
    reference.app.set_interleave(Some(stages.of(FloatOperator::Add)));
    reference.app.set_pipelines(pipelines);
    let mut total = 0;
    for iteration in 1..=iterations {
        let took = host.run(&mut sim, 100_000_000).unwrap();
        reference.run_as(Some(&compiled.plan.schedules), Some(1), &mut |_, _| {}).unwrap();
        for dat in ["p_q", "p_qold", "p_adt", "p_res"] {
            assert_eq!(bits(&host.read(&mut sim, dat)), bits(reference.dat(dat).unwrap()), "{dat} after iteration {iteration}");
        }
        assert_eq!(bits(&host.read_global(&mut sim, "rms")), bits(reference.global("rms").unwrap()), "rms after iteration {iteration}");
        assert_eq!(took, compiled.cycles_with(Some(1)), "cycles of iteration {iteration}: the compiler's model");
        total += took;
    }
    eprintln!("{module}: {} cells, {pipelines} pipeline(s), {iterations} iterations in {total} cycles", 3 * grid.0 * grid.1);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Jacobi's whole program (40 sweeps, a print every 10) on a random graph with `pipelines`
/// pipelines: u, the global max and every printed value as the reference computes them.
fn jacobi(pipelines: usize) {
    let data = weft::ip::app::graph::graph(300, 120, 5);
    let stages = Stages::balanced(FloatFormat::BINARY64);
    let app = Application::<f64>::load_as("examples/apps/jacobi.app", JACOBI, &data).unwrap();
    let compiled = compile_program_with(&app, &stages, pipelines).unwrap();
    let module = format!("jacobi_p{pipelines}");
    let (mut sim, dir) = verilated(&app, &module, &compiled);
    let host = Host { app: &app, plan: &compiled.plan, name: "" };
    host.load_program(&mut sim, &compiled.loops);
    let took = host.run(&mut sim, 10_000_000).unwrap();
    let mut reference = Application::<f64>::load_as("examples/apps/jacobi.app", JACOBI, &data).unwrap();
    reference.app.set_interleave(Some(stages.of(FloatOperator::Add)));
    reference.app.set_pipelines(pipelines);
    let mut printed = vec![];
    reference.run_as(Some(&compiled.plan.schedules), None, &mut |i, v| printed.push((i, v.to_bits()))).unwrap();
    for dat in ["u", "diag", "sum"] {
        assert_eq!(bits(&host.read(&mut sim, dat)), bits(reference.dat(dat).unwrap()), "{dat} after the program");
    }
    assert_eq!(bits(&host.read_global(&mut sim, "change")), bits(reference.global("change").unwrap()), "change after the program");
    let logged: Vec<(usize, u64)> = host.prints(&mut sim).iter().map(|p| (p.iteration, app.print_value(p.step, &p.values).unwrap().to_bits())).collect();
    assert_eq!(printed.len(), 4, "40 sweeps print every 10");
    assert_eq!(logged, printed, "the printed iterations and values");
    assert_eq!(took, compiled.cycles, "cycles: the compiler's model");
    eprintln!("{module}: 300 nodes, {} edges, {pipelines} pipeline(s), 40 sweeps in {took} cycles", 300 + 120);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn jacobi_program_with_one_pipeline_in_binary64() {
    jacobi(1);
}

#[test]
fn jacobi_program_with_two_pipelines_in_binary64() {
    jacobi(2);
}

// Opt-in (each verilates a larger design for minutes; the default run covers whole programs in
// Verilator with Jacobi, and Airfoil's loops with `--test app_cosim`): `cargo test --release
// --test app_program_cosim -- --ignored`.

#[test]
#[ignore]
fn airfoil_program_on_960_cells_in_binary32_for_10_iterations() {
    airfoil::<f32>(FloatFormat::BINARY32, (16, 20), 10, 1);
}

#[test]
#[ignore]
fn airfoil_program_on_960_cells_in_binary64_for_10_iterations() {
    airfoil::<f64>(FloatFormat::BINARY64, (16, 20), 10, 1);
}

#[test]
#[ignore]
fn airfoil_program_on_9900_cells_in_binary32_for_10_iterations() {
    airfoil::<f32>(FloatFormat::BINARY32, (50, 66), 10, 1);
}

#[test]
#[ignore]
fn airfoil_program_on_9900_cells_in_binary64_for_10_iterations() {
    airfoil::<f64>(FloatFormat::BINARY64, (50, 66), 10, 1);
}

#[test]
#[ignore]
fn airfoil_program_with_four_pipelines_on_960_cells_in_binary32_for_10_iterations() {
    airfoil::<f32>(FloatFormat::BINARY32, (16, 20), 10, 4);
}

#[test]
#[ignore]
fn airfoil_program_with_four_pipelines_on_960_cells_in_binary64_for_10_iterations() {
    airfoil::<f64>(FloatFormat::BINARY64, (16, 20), 10, 4);
}

#[test]
#[ignore]
fn airfoil_program_with_four_pipelines_on_9900_cells_in_binary32_for_10_iterations() {
    airfoil::<f32>(FloatFormat::BINARY32, (50, 66), 10, 4);
}

#[test]
#[ignore]
fn airfoil_program_with_four_pipelines_on_9900_cells_in_binary64_for_10_iterations() {
    airfoil::<f64>(FloatFormat::BINARY64, (50, 66), 10, 4);
}

/// MIDG2's program (`examples/apps/midg.app`, N = 3, binary32) on one node of 6 elements in
/// Verilator: after one time step every field at every node equals the solver model's
/// (`midg::solver::Maxwell`) bit for bit, in the compiler's modelled cycles.
#[test]
#[ignore]
fn midg2_program_on_one_node_is_the_solver_model() {
    use weft::ip::app::sequencer::compile_program;
    use weft::ip::midg::solver::{cavity_mode, Maxwell};
    use weft::ip::midg::{app, Geometry, Operators, TetMesh};
    let mesh = TetMesh::unit_cube(1).unwrap();
    let op = Operators::new(app::ORDER);
    let g = Geometry::new(&mesh, &mesh.connect().unwrap(), &op).unwrap();
    let initial = |x: f64, y: f64, z: f64| cavity_mode(x, y, z, 0.0);
    let mut model = Maxwell::<f32>::from_parts(&op, &g, mesh.elements.len(), &initial);
    let data = app::from_parts(&op, &g, mesh.elements.len(), &initial);
    let mut a = Application::<f32>::load("examples/apps/midg.app", include_str!("../examples/apps/midg.app"), &data).unwrap();
    a.set_global("dt", &[model.dt as f32]).unwrap();
    let compiled = compile_program(&a, &Stages::balanced(FloatFormat::BINARY32)).unwrap();
    let (mut sim, dir) = verilated(&a, "midg", &compiled);
    let host = Host { app: &a, plan: &compiled.plan, name: "" };
    host.load_program(&mut sim, &compiled.loops);
    LoopPorts::set(&mut sim, "iterations", &1u32.into());
    let took = host.run(&mut sim, 10_000_000).unwrap();
    model.step();
    let u = host.read(&mut sim, "p_u");
    let want: Vec<u64> = (0..model.k * model.np).flat_map(|i| (0..6).map(move |c| (i, c))).map(|(i, c)| model.fields[c][i].to_lane()).collect();
    assert_eq!(bits(&u), want, "every field after one step");
    assert_eq!(took, compiled.cycles_with(Some(1)), "cycles: the compiler's model");
    eprintln!("midg: {} elements, one step in {took} cycles", model.k);
    let _ = std::fs::remove_dir_all(&dir);
}
