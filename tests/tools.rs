//! Every shipped module through the external tools of the check flow.

use std::path::Path;

use weft::flow::{check, Stages};
use weft::sim::catalog::shipped;

fn generated() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/generated"))
}

fn stage(stages: Stages) {
    for module in shipped() {
        if let Err(e) = check(&module, generated(), None, stages) {
            panic!("{e}");
        }
    }
}

#[test]
fn verilator_lint_is_clean_on_every_module() {
    stage(Stages { testbench: false, lint: true, synth: false, icarus: false, timing: false });
}

/// A copy of the recorded reports (`weft check` writes them), so the checks below never write
/// into the repository.
fn recorded_reports() -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("weft-reports-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for entry in std::fs::read_dir(generated().join("reports")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "json") {
            std::fs::copy(&path, dir.join(path.file_name().unwrap())).unwrap();
        }
    }
    dir
}

/// Every module synthesizes: Yosys runs on each whose Verilog, Yosys version or script differ
/// from those of its recorded report (the check flow's cache key); a module whose report is
/// current keeps the figures `weft check` recorded for this very file. Heavy modules (the
/// kernels, the Airfoil accelerators: minutes each) are synthesized by `weft check`.
#[test]
fn yosys_synthesizes_every_module_with_plausible_statistics() {
    let reports = recorded_reports();
    for module in shipped() {
        let stages = Stages { testbench: false, lint: false, synth: true, icarus: false, timing: false };
        let report = check(&module, generated(), Some(&reports), stages).unwrap_or_else(|e| panic!("{e}")).synth;
        // Every shipped block is pipelined: it registers at least one 32-bit value — except
        // fp32_cmp, whose one stage holds its comparison flags and tvalid.
        let least = if report.module == "fp32_cmp" { 5 } else { 32 };
        assert!(report.flip_flops >= least, "{}: {} flip-flops", report.module, report.flip_flops);
        assert!(report.logic_depth >= 1, "{}: no logic", report.module);
    }
    std::fs::remove_dir_all(&reports).ok();
}

#[test]
fn icarus_compiles_every_module() {
    stage(Stages { testbench: false, lint: false, synth: false, icarus: true, timing: false });
}

#[test]
fn a_broken_netlist_names_the_tool_and_its_message() {
    let dir = std::env::temp_dir().join(format!("weft-broken-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("broken.v");
    std::fs::write(&file, "module broken(input wire a, output wire b);\nassign b = a & c;\nendmodule\n").unwrap();
    let err = weft::tools::verilator_lint(&file, "broken").unwrap_err().to_string();
    assert!(err.starts_with("verilator failed") && err.contains('c'), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Place and route in the out-of-context harness: the register slice (one LUT level between
/// registers) closes far faster than a chain of eight 32-bit additions between two registers,
/// and the critical path of each runs between the module's own registers.
#[test]
fn place_and_route_times_the_module_between_its_registers() {
    let slice = weft::tools::place_and_route(&generated().join("axis/axis_register_slice_w128.v"), "axis_register_slice_w128").unwrap();
    assert!(slice.critical_from.starts_with("slice_"), "{slice:?}");
    let mut net = weft::hdl::netlist::Netlist::new();
    let x = net.input("x", 32);
    let a = net.history(x, None, None);
    net.name(a, "a_q");
    let mut sum = a;
    for k in 0..8 {
        let c = net.constant(0x1234_5677 * (k + 1), 32);
        let s = net.add(sum, c);
        sum = net.xor(s, a);
    }
    let y = net.history(sum, None, None);
    net.name(y, "y_q");
    net.output("y", y);
    let spec = weft::hdl::export::ModuleSpec { family: "test", name: "adder_chain".into(), summary: "eight additions".into(), parameters: vec![], hidden_ports: vec![] };
    let dir = std::env::temp_dir().join(format!("weft-pnr-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("adder_chain.v");
    std::fs::write(&file, weft::hdl::export::export_netlist(&spec, &net).unwrap()).unwrap();
    let chain = weft::tools::place_and_route(&file, "adder_chain").unwrap();
    assert_eq!((chain.critical_from.starts_with("a_q"), chain.critical_to.starts_with("y_q")), (true, true), "{chain:?}");
    assert!(chain.fmax_mhz < slice.fmax_mhz / 2.0, "chain {} MHz, slice {} MHz", chain.fmax_mhz, slice.fmax_mhz);
    std::fs::remove_dir_all(&dir).ok();
}
