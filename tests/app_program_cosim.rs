//! Airfoil's whole five-loop program compiled to hardware and run in Verilator with no host in
//! the loop: the host loads the mesh, sets the iteration count, starts the program, and after
//! it reads q, qold, adt, res and rms — bit for bit what the application reference computes
//! running the same program with each loop in the hardware's schedule and the reductions in its
//! order, in the cycles the compiler's model gives.

use weft::hdl::float::{FloatFormat, FloatOperator};
use weft::hdl::pipeline::Stages;
use weft::ip::airfoil::naca0012::naca0012;
use weft::ip::app::host::{Host, LoopPorts};
use weft::ip::app::sequencer::{compile_program_with, program_verilog};
use weft::ip::app::{Application, Element};
use weft::sim::cosim::Model;

const AIRFOIL: &str = include_str!("../examples/apps/airfoil.app");

fn bits<T: Element>(v: &[T]) -> Vec<u64> {
    v.iter().map(|x| x.to_lane()).collect()
}

/// Airfoil on the NACA0012 grid `grid` (3·I·J cells) for `iterations` iterations with
/// `pipelines` pipelines per loop.
fn airfoil<T: Element>(format: FloatFormat, grid: (usize, usize), iterations: usize, pipelines: usize) {
    let mesh = naca0012(grid.0, grid.1).unwrap();
    let stages = Stages::balanced(format);
    let app = Application::<T>::load_as("examples/apps/airfoil.app", AIRFOIL, &mesh.data()).unwrap();
    let compiled = compile_program_with(&app, &stages, pipelines).unwrap();
    let module = format!("airfoil_{}_p{pipelines}", T::PRECISION.name());
    let dir = std::env::temp_dir().join(format!("weft-app-program-{}-{module}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join(format!("{module}.v"));
    std::fs::write(&file, program_verilog(&app, &module, &compiled).unwrap()).unwrap();
    weft::tools::verilator_lint(&file, &module).unwrap();
    let mut sim = Model::build(&file, &module).unwrap();
    let rst = sim.port("rst").unwrap();
    sim.set(rst, 1);
    sim.tick();
    sim.tick();
    sim.set(rst, 0);
    let host = Host { app: &app, plan: &compiled.plan, name: "" };
    host.load_program(&mut sim, &compiled.loops);
    LoopPorts::set(&mut sim, "iterations", &iterations.into());
    let took = host.run(&mut sim, 100_000_000).unwrap();
    let mut reference = Application::<T>::load_as("examples/apps/airfoil.app", AIRFOIL, &mesh.data()).unwrap();
    reference.app.set_interleave(Some(stages.of(FloatOperator::Add)));
    reference.app.set_pipelines(pipelines);
    reference.run_as(Some(&compiled.plan.schedules), Some(iterations), &mut |_, _| {}).unwrap();
    for dat in ["p_q", "p_qold", "p_adt", "p_res"] {
        assert_eq!(bits(&host.read(&mut sim, dat)), bits(reference.dat(dat).unwrap()), "{dat} after {iterations} iterations");
    }
    assert_eq!(bits(&host.read_global(&mut sim, "rms")), bits(reference.global("rms").unwrap()), "rms after {iterations} iterations");
    assert_eq!(took, compiled.cycles_with(Some(iterations)), "cycles: the compiler's model");
    eprintln!("{module}: {} cells, {pipelines} pipeline(s), {iterations} iterations in {took} cycles", 3 * grid.0 * grid.1);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn airfoil_program_on_960_cells_in_binary32_for_10_iterations() {
    airfoil::<f32>(FloatFormat::BINARY32, (16, 20), 10, 1);
}

// Opt-in (each verilates a larger design for minutes): `cargo test --release --test
// app_program_cosim -- --ignored`.

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
