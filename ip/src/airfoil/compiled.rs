//! Airfoil's loops compiled from `examples/apps/airfoil.app` and shipped as modules, so that
//! `weft check` lints, synthesizes and simulates them like every other block: `adt_calc` (four
//! gathers through cell → node) as `airfoil_adt_calc`, and `res_calc` (gathers through edge →
//! node and edge → cell, increments of both cells) with one and four pipelines as `airfoil_p1`
//! and `airfoil_p4` — seed 002's accelerator, compiled.

use weft_hdl::export::ModuleSpec;
use weft_hdl::float::FloatFormat;
use weft_hdl::netlist::eval::Evaluator;
use weft_hdl::pipeline::Stages;

use super::naca0012::naca0012;
use crate::app::hardware::{compile_loop_with, loop_spec, loop_verilog};
use crate::app::host::Host;
use crate::app::Application;
use crate::shipped::Shipped;
use crate::Error;

/// OP2's NACA0012 C-grid at I = 20, J = 30: 1,800 cells.
const MESH: (usize, usize) = (20, 30);

/// The shipped loops: module, loop, the datum it writes, pipelines.
const LOOPS: [(&str, &str, &str, usize); 3] = [("airfoil_adt_calc", "adt_calc", "p_adt", 1), ("airfoil_p1", "res_calc", "p_res", 1), ("airfoil_p4", "res_calc", "p_res", 4)];

fn airfoil() -> Result<Application<f32>, Error> {
    let mesh = naca0012(MESH.0, MESH.1)?;
    Application::<f32>::load_as("examples/apps/airfoil.app", include_str!("../../../examples/apps/airfoil.app"), &mesh.data())
}

fn stages() -> Stages {
    Stages::balanced(FloatFormat::BINARY32)
}

/// Loop `name` with `pipelines` pipelines on the compiled hardware in the built-in simulator,
/// from a state one software iteration past the free stream (so residuals are not all zero),
/// against the application's reference in the hardware's schedule: `written` bit for bit, the
/// cycles the compiler's model gives.
fn testbench(module: &str, name: &str, written: &str, pipelines: usize) -> Result<String, Error> {
    let mut app = airfoil()?;
    for l in ["save_soln", "adt_calc", "res_calc", "bres_calc", "update"] {
        app.run_loop(l)?;
    }
    let compiled = compile_loop_with(&app, name, &stages(), pipelines)?;
    let cycles = compiled.cycles;
    let mut ev = Evaluator::new(compiled.net);
    ev.reset(2);
    let host = Host { app: &app, plan: &compiled.plan, name };
    host.load(&mut ev);
    let took = host.run(&mut ev, 10 * cycles)?;
    let hardware = host.read(&mut ev, written);
    app.run_loop_in(name, &compiled.plan.schedules[name])?;
    let software = app.dat(written).unwrap_or_default();
    if took != cycles || hardware.len() != software.len() || hardware.iter().zip(software).any(|(h, s)| h.to_bits() != s.to_bits()) {
        return Err(Error::Mismatch(format!("{module}: {took} cycles (model {cycles}); `{written}` differs from the reference")));
    }
    Ok(format!("{}: every value of `{written}` equals the reference, in {took} cycles", 3 * MESH.0 * MESH.1))
}

/// The shipped Airfoil loop modules (`airfoil_adt_calc`, `airfoil_p1`, `airfoil_p4`), each
/// compiled in binary32 on the 20 × 30 NACA0012 grid with its built-in-simulator testbench.
pub fn shipped() -> Vec<Shipped> {
    let app = airfoil().expect("the shipped application loads");
    LOOPS
        .iter()
        .map(|&(module, name, written, pipelines)| {
            let compiled = compile_loop_with(&app, name, &stages(), pipelines).expect("the shipped application compiles");
            let spec = loop_spec(&app, name, module, &compiled);
            let summary = format!("Airfoil's {name} loop from examples/apps/airfoil.app (binary32), NACA0012 grid {}x{} ({} cells)", MESH.0, MESH.1, 3 * MESH.0 * MESH.1);
            Shipped::new(
                ModuleSpec { summary, ..spec },
                move |spec| loop_verilog(&compile_loop_with(&airfoil()?, name, &stages(), pipelines)?, spec).map_err(Into::into),
                move || testbench(module, name, written, pipelines),
            )
        })
        .collect()
}
