//! Loops of an application file compiled to hardware and run in the built-in simulator: the
//! host loads the mesh and data into the loop's memories, starts it, and reads back what it
//! wrote — bit for bit what the application's reference computes visiting the elements in the
//! hardware's schedule, in binary64 and binary32.

use weft_hdl::float::FloatFormat;
use weft_hdl::netlist::eval::Evaluator;
use weft_hdl::pipeline::Stages;
use weft_ip::airfoil::naca0012::naca0012;
use weft_ip::app::graph::graph;
use weft_ip::app::hardware::{compile_loop, compile_loop_with};
use weft_ip::app::host::Host;
use weft_ip::app::schedule;
use weft_ip::app::{Application, Element};

const AIRFOIL: &str = include_str!("../../examples/apps/airfoil.app");
fn bits<T: Element>(v: &[T]) -> Vec<u64> {
    v.iter().map(|x| x.to_lane()).collect()
}

const JACOBI: &str = include_str!("../../examples/apps/jacobi.app");

/// Runs `loops` of the Airfoil file once in software and once each on its compiled hardware
/// (from the same state), comparing what each writes.
fn check<T: Element>(format: FloatFormat, loops: &[(&str, &str)]) {
    let mesh = naca0012(4, 6).unwrap();
    let mut app = Application::<T>::load_as("airfoil.app", AIRFOIL, &mesh.data()).unwrap();
    // A state that is not the free stream everywhere: one corrector step of the software.
    for l in ["save_soln", "adt_calc", "res_calc", "bres_calc"] {
        app.run_loop(l).unwrap();
    }
    app.set_global("rms", &[T::zero()]).unwrap();
    app.run_loop("update").unwrap();
    for (name, written) in loops {
        let compiled = compile_loop(&app, name, &Stages::balanced(format)).unwrap();
        let cycles = compiled.cycles;
        let mut ev = Evaluator::new(compiled.net);
        ev.reset(2);
        let host = Host { app: &app, plan: &compiled.plan, name };
        host.load(&mut ev);
        let took = host.run(&mut ev, 10 * cycles).unwrap();
        assert_eq!(took, cycles, "{name}: cycles from start until busy falls");
        let set = match *name {
            "res_calc" => "edges",
            "bres_calc" => "bedges",
            _ => "cells",
        };
        let size = mesh.data().sets[set];
        assert_eq!(ev.get_output(&format!("{name}_elements")), size as u128, "{name}: one element per member of its set");
        let slots = compiled.plan.schedules[*name].len();
        assert_eq!(ev.get_output(&format!("{name}_noops")), (slots - size) as u128, "{name}: every other slot a no-op");
        let hardware = host.read(&mut ev, written);
        let schedule = &compiled.plan.schedules[*name];
        assert!(schedule::valid(schedule, &app.increments(name).unwrap(), compiled.plan.lambda), "{name}: the plan's schedule breaks the hazard rule");
        app.run_loop_in(name, schedule).unwrap();
        let software = app.dat(written).unwrap();
        let bits = |v: &[T]| v.iter().map(|x| x.to_lane()).collect::<Vec<_>>();
        assert_eq!(bits(&hardware), bits(software), "{name}: {written} differs");
    }
}

#[test]
fn save_soln_and_adt_calc_in_binary64_match_the_reference() {
    check::<f64>(FloatFormat::BINARY64, &[("save_soln", "p_qold"), ("adt_calc", "p_adt")]);
}

#[test]
fn adt_calc_in_binary32_matches_the_reference() {
    check::<f32>(FloatFormat::BINARY32, &[("adt_calc", "p_adt")]);
}

#[test]
fn res_calc_and_bres_calc_increment_through_maps_in_binary64() {
    check::<f64>(FloatFormat::BINARY64, &[("res_calc", "p_res"), ("bres_calc", "p_res")]);
}

#[test]
fn res_calc_and_bres_calc_increment_through_maps_in_binary32() {
    check::<f32>(FloatFormat::BINARY32, &[("res_calc", "p_res"), ("bres_calc", "p_res")]);
}

/// An application that writes through a map: refused, naming the loop, the argument and why.
#[test]
fn loops_the_compiler_does_not_build_yet_are_refused_by_name() {
    let source = "app scatter: f64\nset nodes, edges\nmap ends: edges -> nodes, 2\ndat u: nodes, 1\nloop put over edges\n  a = u via ends[0] write\nkernel\n  a = 1.0\nend\n";
    let data = graph(10, 2, 1);
    let app = Application::<f64>::load("scatter.app", source, &data).unwrap();
    let err = compile_loop(&app, "put", &Stages::balanced(FloatFormat::BINARY64)).err().unwrap().to_string();
    assert!(err.contains("loop `put`, argument 0: Write through a map is not compiled to hardware yet"), "{err}");
}

/// `min` and `max` reductions in hardware against the reference's IEEE 754-2019
/// minimumNumber / maximumNumber order, over values that probe it: NaN (which a number
/// replaces), −0 and +0, infinities, subnormals.
#[test]
fn min_and_max_reductions_follow_the_reference_on_special_values() {
    let source = "app extremes: f64\nset items\ndat v: items, 1 from mesh\nglobal low: 1\nglobal high: 1\nloop scan over items\n  x = v read\n  lo = low min\n  hi = high max\nkernel\n  lo = x\n  hi = x\nend\n";
    let specials = [f64::NAN, -0.0, 0.0, 5e-324, -5e-324, 1.5, -2.25, f64::INFINITY, f64::NEG_INFINITY, 0.0, -0.0];
    let orders: [&[usize]; 4] = [&[0, 1, 2], &[2, 1], &[1, 2, 3, 4], &[0, 5, 6, 7, 8, 9, 10]];
    for (case, order) in orders.iter().enumerate() {
        for start in [f64::NAN, 0.0, -0.0, 1.0] {
            let mut data = weft_ip::app::MeshData::default();
            data.sets.insert("items".into(), order.len());
            data.dats.insert("v".into(), (1, order.iter().map(|i| specials[*i]).collect()));
            let mut app = Application::<f64>::load("extremes.app", source, &data).unwrap();
            app.set_global("low", &[start]).unwrap();
            app.set_global("high", &[start]).unwrap();
            let compiled = compile_loop(&app, "scan", &Stages::balanced(FloatFormat::BINARY64)).unwrap();
            let mut ev = Evaluator::new(compiled.net);
            ev.reset(2);
            let host = Host { app: &app, plan: &compiled.plan, name: "scan" };
            host.load(&mut ev);
            host.run(&mut ev, 10 * compiled.cycles).unwrap();
            let (low, high) = (host.global(&mut ev, "low"), host.global(&mut ev, "high"));
            app.run_loop("scan").unwrap();
            assert_eq!(bits(&low), bits(app.global("low").unwrap()), "case {case}, from {start}: min");
            assert_eq!(bits(&high), bits(app.global("high").unwrap()), "case {case}, from {start}: max");
        }
    }
}

/// One element of `res_calc` moved into the no-op before it: two increments of a cell closer
/// than λ. VALID_SCHEDULE rejects the order, the hardware counts the hazard, and the residuals
/// differ from the reference visiting the elements in that order (one increment is lost).
#[test]
fn breaking_the_hazard_rule_once_is_seen() {
    let mesh = naca0012(4, 6).unwrap();
    let mut app = Application::<f64>::load("airfoil.app", AIRFOIL, &mesh.data()).unwrap();
    app.run_loop("adt_calc").unwrap();
    let mut compiled = compile_loop(&app, "res_calc", &Stages::balanced(FloatFormat::BINARY64)).unwrap();
    let cells = app.increments("res_calc").unwrap();
    let lambda = compiled.plan.lambda;
    let schedule = compiled.plan.schedules.get_mut("res_calc").unwrap();
    let gap = (1..schedule.len() - 1).find(|i| schedule[*i].is_none() && schedule[i + 1].is_some()).expect("the schedule has a no-op");
    schedule.swap(gap, gap + 1);
    assert!(!schedule::valid(schedule, &cells, lambda), "the moved element breaks VALID_SCHEDULE");
    let broken = schedule.clone();
    let mut ev = Evaluator::new(compiled.net);
    ev.reset(2);
    let host = Host { app: &app, plan: &compiled.plan, name: "res_calc" };
    host.load(&mut ev);
    host.run(&mut ev, 10 * compiled.cycles).unwrap();
    ev.settle();
    let hazards = ev.get_output("res_calc_hazards");
    let hardware = host.read(&mut ev, "p_res");
    app.run_loop_in("res_calc", &broken).unwrap();
    assert!(hazards > 0, "the hazard counter sees the broken rule");
    let differ = hardware.iter().zip(app.dat("p_res").unwrap()).filter(|(h, s)| h.to_bits() != s.to_bits()).count();
    eprintln!("element moved from slot {} to {gap}: VALID_SCHEDULE refuses it, {hazards} hazard(s) counted, {differ} residual value(s) differ", gap + 1);
    assert_ne!(hardware.iter().map(|x| x.to_bits()).collect::<Vec<_>>(), app.dat("p_res").unwrap().iter().map(|x| x.to_bits()).collect::<Vec<_>>(), "an increment is lost");
}

/// The second application: Jacobi's `gather` increments `sum` through both ends of every edge.
#[test]
fn jacobi_gather_increments_through_a_map() {
    let data = graph(300, 40, 7);
    let mut app = Application::<f64>::load("jacobi.app", JACOBI, &data).unwrap();
    app.run_loop("degree").unwrap();
    app.set_dat("u", &(0..300).map(|i| (i as f64 * 0.37).sin()).collect::<Vec<_>>()).unwrap();
    let compiled = compile_loop(&app, "gather", &Stages::balanced(FloatFormat::BINARY64)).unwrap();
    let mut ev = Evaluator::new(compiled.net);
    ev.reset(2);
    let host = Host { app: &app, plan: &compiled.plan, name: "gather" };
    host.load(&mut ev);
    assert_eq!(host.run(&mut ev, 10 * compiled.cycles).unwrap(), compiled.cycles);
    let hardware = host.read(&mut ev, "sum");
    app.run_loop_in("gather", &compiled.plan.schedules["gather"]).unwrap();
    assert_eq!(hardware.iter().map(|x| x.to_bits()).collect::<Vec<_>>(), app.dat("sum").unwrap().iter().map(|x| x.to_bits()).collect::<Vec<_>>());
}

/// `update` with its global `inc` of rms: q and res as the reference writes them, and rms as the
/// reference sums it in the hardware's interleaved order — which, in binary64 on this mesh,
/// differs from the sequential sum, so the test sees the order.
fn update_with_reduction<T: Element>(format: FloatFormat, cells: (usize, usize), order_shows: bool) {
    let mesh = naca0012(cells.0, cells.1).unwrap();
    let mut app = Application::<T>::load_as("airfoil.app", AIRFOIL, &mesh.data()).unwrap();
    for l in ["save_soln", "adt_calc", "res_calc", "bres_calc"] {
        app.run_loop(l).unwrap();
    }
    let stages = Stages::balanced(format);
    let compiled = compile_loop(&app, "update", &stages).unwrap();
    let cycles = compiled.cycles;
    let mut ev = Evaluator::new(compiled.net);
    ev.reset(2);
    // A global that already holds a value: the reduction adds into it.
    app.set_global("rms", &[T::from_f64(0.125)]).unwrap();
    let host = Host { app: &app, plan: &compiled.plan, name: "update" };
    host.load(&mut ev);
    assert_eq!(host.run(&mut ev, 10 * cycles).unwrap(), cycles, "cycles from start until busy falls");
    let (q, res, rms) = (host.read(&mut ev, "p_q"), host.read(&mut ev, "p_res"), host.global(&mut ev, "rms"));
    let mut sequential = Application::<T>::load_as("airfoil.app", AIRFOIL, &mesh.data()).unwrap();
    for l in ["save_soln", "adt_calc", "res_calc", "bres_calc"] {
        sequential.run_loop(l).unwrap();
    }
    sequential.set_global("rms", &[T::from_f64(0.125)]).unwrap();
    sequential.run_loop("update").unwrap();
    app.app.set_interleave(Some(stages.of(weft_hdl::float::FloatOperator::Add)));
    app.run_loop("update").unwrap();
    let bits = |v: &[T]| v.iter().map(|x| x.to_lane()).collect::<Vec<_>>();
    assert_eq!(bits(&q), bits(app.dat("p_q").unwrap()));
    assert_eq!(bits(&res), bits(app.dat("p_res").unwrap()));
    assert_eq!(bits(&rms), bits(app.global("rms").unwrap()), "rms in the interleaved order");
    if order_shows {
        assert_ne!(bits(&rms), bits(sequential.global("rms").unwrap()), "the interleaved sum differs from the sequential one on this mesh");
    }
}

#[test]
fn update_with_its_rms_reduction_in_binary64() {
    update_with_reduction::<f64>(FloatFormat::BINARY64, (12, 16), true);
}

#[test]
fn update_with_its_rms_reduction_in_binary32() {
    update_with_reduction::<f32>(FloatFormat::BINARY32, (12, 16), false);
}

/// Loops with two and four pipelines (rows of P slots, a row's writes and increments in
/// different banks) from a state none of them leaves unchanged: what each writes equals the
/// reference visiting the elements in the plan's rows, in the cycles the compiler's model gives.
#[test]
fn loops_with_several_pipelines_match_the_reference() {
    let mesh = naca0012(4, 6).unwrap();
    let state = || {
        let mut app = Application::<f64>::load("airfoil.app", AIRFOIL, &mesh.data()).unwrap();
        for l in ["save_soln", "adt_calc", "res_calc", "bres_calc"] {
            app.run_loop(l).unwrap();
        }
        app.set_dat("p_adt", &vec![0.5; mesh.cells.len()]).unwrap();
        app
    };
    for (name, written) in [("adt_calc", "p_adt"), ("res_calc", "p_res"), ("bres_calc", "p_res"), ("update", "p_q")] {
        for pipelines in [2, 4] {
            let app = state();
            let compiled = compile_loop_with(&app, name, &Stages::balanced(FloatFormat::BINARY64), pipelines).unwrap();
            let cycles = compiled.cycles;
            let mut ev = Evaluator::new(compiled.net);
            ev.reset(2);
            let host = Host { app: &app, plan: &compiled.plan, name };
            host.load(&mut ev);
            assert_eq!(host.run(&mut ev, 10 * cycles).unwrap(), cycles, "{name}, {pipelines} pipelines: cycles");
            let hardware = host.read(&mut ev, written);
            let mut reference = state();
            assert_eq!(compiled.plan.schedules[name].len() % pipelines, 0);
            reference.run_loop_in(name, &compiled.plan.schedules[name]).unwrap();
            assert_eq!(bits(&hardware), bits(reference.dat(written).unwrap()), "{name}, {pipelines} pipelines: {written}");
        }
    }
}
