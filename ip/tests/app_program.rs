//! Whole programs compiled to hardware and run in the built-in simulator with no host in the
//! loop: the host loads the mesh, starts the program and reads the state and the globals it
//! logged — bit for bit what the application's reference computes running the same program
//! with each loop in the hardware's schedule and reductions in its order.

use weft_hdl::float::{FloatFormat, FloatOperator};
use weft_hdl::netlist::eval::Evaluator;
use weft_hdl::pipeline::Stages;
use weft_ip::airfoil::naca0012::naca0012;
use weft_ip::app::host::Host;
use weft_ip::app::sequencer::{compile_program, compile_program_with};
use weft_ip::app::{Application, Element};

const AIRFOIL: &str = include_str!("../../examples/apps/airfoil.app");

fn bits<T: Element>(v: &[T]) -> Vec<u64> {
    v.iter().map(|x| x.to_lane()).collect()
}

/// Airfoil for `iterations` iterations on the compiled program with `pipelines` pipelines per
/// loop and on the reference.
fn airfoil<T: Element>(format: FloatFormat, iterations: usize, pipelines: usize) {
    let mesh = naca0012(4, 6).unwrap();
    let stages = Stages::balanced(format);
    let app = Application::<T>::load_as("airfoil.app", AIRFOIL, &mesh.data()).unwrap();
    let compiled = compile_program_with(&app, &stages, pipelines).unwrap();
    let model = compiled.cycles_with(Some(iterations));
    let mut ev = Evaluator::new(compiled.net);
    ev.reset(2);
    let host = Host { app: &app, plan: &compiled.plan, name: "" };
    host.load_program(&mut ev, &compiled.loops);
    ev.set_input("iterations", iterations as u128);
    let took = host.run(&mut ev, 10_000_000).unwrap();
    assert_eq!(took, model, "cycles: the model from the schedules and pipeline depths");
    let mut reference = Application::<T>::load_as("airfoil.app", AIRFOIL, &mesh.data()).unwrap();
    reference.app.set_interleave(Some(stages.of(FloatOperator::Add)));
    reference.app.set_pipelines(pipelines);
    reference.run_as(Some(&compiled.plan.schedules), Some(iterations), &mut |_, _| {}).unwrap();
    for dat in ["p_q", "p_qold", "p_adt", "p_res"] {
        assert_eq!(bits(&host.read(&mut ev, dat)), bits(reference.dat(dat).unwrap()), "{dat} after {iterations} iterations");
    }
    ev.settle();
    assert_eq!(ev.get_output("iteration"), iterations as u128);
    // Per iteration: save_soln once, the other loops twice (predictor and corrector).
    let sets = &mesh.data().sets;
    for (name, set, runs) in [("save_soln", "cells", 1), ("adt_calc", "cells", 2), ("res_calc", "edges", 2), ("bres_calc", "bedges", 2), ("update", "cells", 2)] {
        assert_eq!(ev.get_output(&format!("{name}_runs")), (runs * iterations) as u128, "{name}: runs");
        assert_eq!(ev.get_output(&format!("{name}_elements")), (runs * iterations * sets[set]) as u128, "{name}: elements");
        let noops = compiled.plan.schedules[name].len() - sets[set];
        assert_eq!(ev.get_output(&format!("{name}_noops")), (runs * iterations * noops) as u128, "{name}: no-op slots");
    }
    let rms = T::from_lane(ev.get_output("rms_value") as u64);
    assert_eq!(rms.to_lane(), reference.global("rms").unwrap()[0].to_lane(), "rms after {iterations} iterations");
    eprintln!("{pipelines} pipeline(s): {iterations} iterations in {took} cycles");
}

#[test]
fn airfoil_program_in_binary64_matches_the_reference() {
    airfoil::<f64>(FloatFormat::BINARY64, 3, 1);
}

/// Four pipelines a loop: rows of four slots, a row's increments in four different banks of
/// eight, `rms` summed per row in a tree before the interleaved partials.
#[test]
fn airfoil_program_with_four_pipelines_in_binary64_and_binary32() {
    airfoil::<f64>(FloatFormat::BINARY64, 3, 4);
    airfoil::<f32>(FloatFormat::BINARY32, 3, 4);
}

/// The second application, written only as a file: Jacobi on an unstructured graph (an edge loop
/// incrementing both ends through a map, a node loop with a global `max`), its whole program —
/// 40 iterations, the largest change printed every 10 — on the compiled hardware.
#[test]
fn jacobi_program_matches_the_reference_and_prints_what_it_prints() {
    let data = weft_ip::app::graph::graph(200, 60, 11);
    let stages = Stages::balanced(FloatFormat::BINARY64);
    let app = Application::<f64>::load("jacobi.app", include_str!("../../examples/apps/jacobi.app"), &data).unwrap();
    let compiled = compile_program(&app, &stages).unwrap();
    let model = compiled.cycles;
    let mut ev = Evaluator::new(compiled.net);
    ev.reset(2);
    let host = Host { app: &app, plan: &compiled.plan, name: "" };
    host.load_program(&mut ev, &compiled.loops);
    assert_eq!(host.run(&mut ev, 10_000_000).unwrap(), model, "cycles: the model from the schedules and pipeline depths");
    let mut reference = Application::<f64>::load("jacobi.app", include_str!("../../examples/apps/jacobi.app"), &data).unwrap();
    let mut printed = vec![];
    reference.run_as(Some(&compiled.plan.schedules), None, &mut |i, v| printed.push((i, v.to_bits()))).unwrap();
    assert_eq!(bits(&host.read(&mut ev, "u")), bits(reference.dat("u").unwrap()), "u after the program");
    let logged: Vec<(usize, u64)> = host.prints(&mut ev).iter().map(|p| (p.iteration, app.print_value(p.step, &p.values).unwrap().to_bits())).collect();
    assert_eq!(printed.len(), 4);
    assert_eq!(logged, printed, "the printed iterations and values");
}
