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
    stage(Stages { testbench: false, lint: true, synth: false, icarus: false });
}

#[test]
fn yosys_synthesizes_every_module_with_plausible_statistics() {
    for module in shipped() {
        let stages = Stages { testbench: false, lint: false, synth: true, icarus: false };
        let report = check(&module, generated(), None, stages).unwrap_or_else(|e| panic!("{e}")).synth;
        // Every shipped block is pipelined: it registers at least one 32-bit value — except
        // fp32_cmp, whose one stage holds its comparison flags and tvalid.
        let least = if report.module == "fp32_cmp" { 5 } else { 32 };
        assert!(report.flip_flops >= least, "{}: {} flip-flops", report.module, report.flip_flops);
        assert!(report.logic_depth >= 1, "{}: no logic", report.module);
    }
}

#[test]
fn icarus_compiles_every_module() {
    stage(Stages { testbench: false, lint: false, synth: false, icarus: true });
}

#[test]
fn a_broken_netlist_names_the_tool_and_its_message() {
    let dir = std::env::temp_dir().join(format!("weft-broken-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("broken.v");
    std::fs::write(&file, "module broken(input wire a, output wire b);\nassign b = a & c;\nendmodule\n").unwrap();
    let err = weft::hdl::tools::verilator_lint(&file, "broken").unwrap_err().to_string();
    assert!(err.starts_with("verilator failed") && err.contains('c'), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}
