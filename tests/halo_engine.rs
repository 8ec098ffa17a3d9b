//! The halo engine's and the reduction bridge's Verilog in the outside tools: node 0's engine of
//! Airfoil split over a 2×2×1 torus (960 cells, METIS; the same tables
//! `-p weft-ip --test app_halo_engine` runs in the built-in simulator) and Airfoil's bridge
//! (the rms, binary64) pass Verilator's lint with -Wall and synthesize with Yosys
//! (synth_xilinx); the figures are printed.

use weft::hdl::export::{export_netlist, ModuleSpec};
use weft::hdl::float::FloatFormat;
use weft::hdl::pipeline::Stages;
use weft::ip::airfoil::naca0012::naca0012;
use weft::ip::app::partition::bridge::{reduction_bridge, BridgeSpec};
use weft::ip::app::partition::engine::{halo_engine, HaloTables};
use weft::ip::app::partition::halo::Halo;
use weft::ip::app::partition::nodes::compile_node;
use weft::ip::app::partition::{partition, Method};
use weft::ip::app::{Application, MeshData};
use weft::ip::router::RouterConfig;
use weft::tools::{verilator_lint, yosys_synth};

#[test]
fn the_halo_engine_lints_and_synthesizes() {
    let mesh = naca0012(16, 20).unwrap().data();
    let load = |m: &MeshData| Application::<f64>::load("airfoil.app", include_str!("../examples/apps/airfoil.app"), m);
    let app = load(&mesh).unwrap();
    let loops = app.loop_args();
    let cells = app.set_id("cells").unwrap();
    let config = RouterConfig { dims: [2, 2, 1], local_ports: 3, ..Default::default() };
    let p = partition(&app.app, &loops, cells, 4, Method::Metis).unwrap();
    let h = Halo::build(&app.app, &loops, &p);
    let (share, _, compiled) = compile_node(&app, &mesh, &p, &h, &Stages::balanced(FloatFormat::BINARY64), &load, 0).unwrap();
    let tables = HaloTables::build(&app, &p, &h, 0, &share, &compiled, &config).unwrap();
    let spec = ModuleSpec { family: "app", name: "halo_engine".into(), summary: "Airfoil's halo engine, node 0 of a 2x2x1 torus".into(), parameters: vec![], hidden_ports: vec![] };
    let text = export_netlist(&spec, &halo_engine(&tables).unwrap()).unwrap();
    let dir = std::env::temp_dir().join(format!("weft-test-halo-engine-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("halo_engine.v");
    std::fs::write(&file, &text).unwrap();
    verilator_lint(&file, "halo_engine").unwrap();
    let report = yosys_synth(&file, "halo_engine").unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    assert!(report.luts > 0 && report.flip_flops > 0);
    println!(
        "halo_engine (node 0 of 4, {} steps, {} packets, {} sends, {} receives): {} LUT, {} FF, {} LUTRAM, {} BRAM",
        tables.steps.len(),
        tables.packets.len(),
        tables.sends.len(),
        tables.recv.len(),
        report.luts,
        report.flip_flops,
        report.lut_rams,
        report.brams
    );
}

#[test]
fn the_reduction_bridge_lints_and_synthesizes() {
    let mesh = naca0012(16, 20).unwrap().data();
    let app = Application::<f64>::load("airfoil.app", include_str!("../examples/apps/airfoil.app"), &mesh).unwrap();
    let bridge = BridgeSpec::build(&app, 128, 1024).unwrap();
    let spec = ModuleSpec { family: "app", name: "reduction_bridge".into(), summary: "Airfoil's reduction bridge (rms, binary64)".into(), parameters: vec![], hidden_ports: vec![] };
    let text = export_netlist(&spec, &reduction_bridge(&bridge).unwrap()).unwrap();
    let dir = std::env::temp_dir().join(format!("weft-test-reduction-bridge-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("reduction_bridge.v");
    std::fs::write(&file, &text).unwrap();
    verilator_lint(&file, "reduction_bridge").unwrap();
    let report = yosys_synth(&file, "reduction_bridge").unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    assert!(report.luts > 0 && report.flip_flops > 0);
    println!("reduction_bridge (1 global of 1 binary64 element): {} LUT, {} FF, {} DSP", report.luts, report.flip_flops, report.dsps);
}
