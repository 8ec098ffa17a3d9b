//! Airfoil's loops compiled from `examples/apps/airfoil.app` and shipped as modules, so that
//! `weft check` lints, synthesizes and simulates them like every other block.

use weft_hdl::export::ModuleSpec;
use weft_hdl::float::FloatFormat;
use weft_hdl::netlist::eval::Evaluator;
use weft_hdl::pipeline::Stages;

use super::naca0012::naca0012;
use crate::app::hardware::{compile_loop, loop_spec, loop_verilog};
use crate::app::host::Host;
use crate::app::Application;
use crate::shipped::Shipped;
use crate::Error;

/// OP2's NACA0012 C-grid at I = 20, J = 30: 1,800 cells.
const MESH: (usize, usize) = (20, 30);

fn airfoil() -> Result<Application<f32>, Error> {
    let mesh = naca0012(MESH.0, MESH.1)?;
    Application::<f32>::load_as("examples/apps/airfoil.app", include_str!("../../../examples/apps/airfoil.app"), &mesh.data())
}

/// The loop on the free-stream state, on the compiled hardware in the built-in simulator,
/// against the application's reference.
fn testbench() -> Result<String, Error> {
    let mut app = airfoil()?;
    let compiled = compile_loop(&app, "adt_calc", &Stages::balanced(FloatFormat::BINARY32))?;
    let cycles = compiled.cycles;
    let mut ev = Evaluator::new(compiled.net);
    ev.reset(2);
    let host = Host { app: &app, plan: &compiled.plan, name: "adt_calc" };
    host.load(&mut ev);
    let took = host.run(&mut ev, 10 * cycles)?;
    let hardware = host.read(&mut ev, "p_adt");
    app.run_loop("adt_calc")?;
    let software = app.dat("p_adt").unwrap_or_default();
    if took != cycles || hardware.iter().zip(software).any(|(h, s)| h.to_bits() != s.to_bits()) {
        return Err(Error::Mismatch(format!("airfoil_adt_calc: {took} cycles (model {cycles}); the time-step factors differ from the reference")));
    }
    Ok(format!("{} cells: every time-step factor equals the reference, in {took} cycles", hardware.len()))
}

pub fn shipped() -> Vec<Shipped> {
    let stages = Stages::balanced(FloatFormat::BINARY32);
    let spec = airfoil().and_then(|app| compile_loop(&app, "adt_calc", &stages).map(|c| loop_spec(&app, "adt_calc", "airfoil_adt_calc", &c))).expect("the shipped application compiles");
    vec![Shipped::new(
        ModuleSpec { summary: format!("Airfoil's adt_calc loop from examples/apps/airfoil.app (binary32), NACA0012 grid {}x{} ({} cells)", MESH.0, MESH.1, 3 * MESH.0 * MESH.1), ..spec },
        |spec| {
            let app = airfoil()?;
            let compiled = compile_loop(&app, "adt_calc", &Stages::balanced(FloatFormat::BINARY32))?;
            loop_verilog(&compiled, spec).map_err(Into::into)
        },
        testbench,
    )]
}
