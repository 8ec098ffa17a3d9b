//! Loops of an application file compiled to hardware and run in the built-in simulator: the
//! host loads the mesh and data into the loop's memories, starts it, and reads back what it
//! wrote — bit for bit what the application's reference computes, in binary64 and binary32.

use weft_hdl::float::FloatFormat;
use weft_hdl::netlist::eval::Evaluator;
use weft_hdl::pipeline::Stages;
use weft_ip::airfoil::naca0012::naca0012;
use weft_ip::app::hardware::{compile_loop, Host};
use weft_ip::app::{Application, Element};

const AIRFOIL: &str = include_str!("../../examples/apps/airfoil.app");

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
        let (net, cycles) = compile_loop(&app, name, &Stages::balanced(format)).unwrap();
        let mut ev = Evaluator::new(net);
        ev.reset(2);
        let host = Host { app: &app, name };
        host.load(&mut ev);
        let took = host.run(&mut ev, 10 * cycles).unwrap();
        assert_eq!(took, cycles, "{name}: cycles from start until busy falls");
        let hardware = host.read(&mut ev, written);
        app.run_loop(name).unwrap();
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
fn loops_the_compiler_does_not_build_yet_are_refused_by_name() {
    let mesh = naca0012(4, 6).unwrap();
    let app = Application::<f64>::load("airfoil.app", AIRFOIL, &mesh.data()).unwrap();
    let err = compile_loop(&app, "res_calc", &Stages::balanced(FloatFormat::BINARY64)).err().unwrap().to_string();
    assert!(err.contains("loop `res_calc`, argument 6: Inc through a map is not compiled to hardware yet"), "{err}");
    let err = compile_loop(&app, "update", &Stages::balanced(FloatFormat::BINARY64)).err().unwrap().to_string();
    assert!(err.contains("globals are not compiled to hardware yet"), "{err}");
}
