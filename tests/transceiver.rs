//! The transceiver wrapper's Verilog in the outside tools: for the shipped links' two lanes it
//! passes Verilator's lint with -Wall and synthesizes with Yosys (synth_xilinx); the figures are
//! printed. Its behaviour on the gearbox model: `cargo test --release -p weft-sim --test transceiver`.

use weft::hdl::export::{export_netlist, ModuleSpec};
use weft::ip::link::gt::gt_wrapper;
use weft::tools::{verilator_lint, yosys_synth};

#[test]
fn the_transceiver_wrapper_lints_and_synthesizes() {
    let spec = ModuleSpec { family: "link", name: "gt_wrapper_x2".into(), summary: "two lanes on a 64B/66B transceiver gearbox".into(), parameters: vec![], hidden_ports: vec![] };
    let text = export_netlist(&spec, &gt_wrapper(2).unwrap()).unwrap();
    let dir = std::env::temp_dir().join(format!("weft-test-gt-wrapper-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("gt_wrapper_x2.v");
    std::fs::write(&file, &text).unwrap();
    verilator_lint(&file, "gt_wrapper_x2").unwrap();
    let report = yosys_synth(&file, "gt_wrapper_x2").unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    assert!(report.luts > 0 && report.flip_flops > 0);
    println!("gt_wrapper_x2: {} LUT, {} FF, {} LUT levels", report.luts, report.flip_flops, report.logic_depth);
}
