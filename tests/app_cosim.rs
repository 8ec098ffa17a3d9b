//! A loop of an application file compiled to hardware, in Verilator: Airfoil's `adt_calc`
//! (binary32; four gathers through the cell → node map) written as Verilog, verilated, loaded by
//! the same host as in the built-in simulator; the time-step factors it writes equal the
//! application reference's bit for bit, in the same number of cycles.

use weft::hdl::float::FloatFormat;
use weft::hdl::pipeline::Stages;
use weft::ip::airfoil::naca0012::naca0012;
use weft::ip::app::hardware::{compile_loop, loop_spec, loop_verilog};
use weft::ip::app::host::Host;
use weft::ip::app::Application;
use weft::sim::cosim::Model;

#[test]
fn compiled_adt_calc_in_verilator_matches_the_reference() {
    let mesh = naca0012(4, 6).unwrap();
    let mut app = Application::<f32>::load_as("airfoil.app", include_str!("../examples/apps/airfoil.app"), &mesh.data()).unwrap();
    let compiled = compile_loop(&app, "adt_calc", &Stages::balanced(FloatFormat::BINARY32)).unwrap();
    let cycles = compiled.cycles;
    let dir = std::env::temp_dir().join(format!("weft-app-cosim-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("airfoil_adt_calc.v");
    let spec = loop_spec(&app, "adt_calc", "airfoil_adt_calc", &compiled);
    std::fs::write(&file, loop_verilog(&compiled, &spec).unwrap()).unwrap();
    weft::tools::verilator_lint(&file, "airfoil_adt_calc").unwrap();
    let mut sim = Model::build(&file, "airfoil_adt_calc").unwrap();
    let rst = sim.port("rst").unwrap();
    sim.set(rst, 1);
    sim.tick();
    sim.tick();
    sim.set(rst, 0);
    let host = Host { app: &app, plan: &compiled.plan, name: "adt_calc" };
    host.load(&mut sim);
    assert_eq!(host.run(&mut sim, 10 * cycles).unwrap(), cycles);
    let hardware: Vec<u32> = host.read(&mut sim, "p_adt").iter().map(|x| x.to_bits()).collect();
    app.run_loop("adt_calc").unwrap();
    let software: Vec<u32> = app.dat("p_adt").unwrap().iter().map(|x| x.to_bits()).collect();
    assert_eq!(hardware, software);
    let _ = std::fs::remove_dir_all(&dir);
}
