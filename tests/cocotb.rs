//! The external test benches (cocotb + cocotbext-axi on Icarus), run unmodified against the
//! generated Verilog: AXI4-Stream on the stream primitives, AXI4-Lite on the register window.
//! `scripts/setup.sh` installs cocotb.

use std::process::Command;

#[test]
fn cocotbext_axi_bench_passes_on_register_slice_and_fifo() {
    for module in ["axis_register_slice_w128", "axis_fifo_w128_d32"] {
        cocotb(module, "test_axis", "axis");
    }
}

/// cocotbext-axi's AXI4-Lite master against the register window, stand-alone and inside the
/// 4x2x1 node: ID, scratch and coordinates written and read back, SLVERR on unmapped addresses
/// and on writes to read-only registers.
#[test]
fn cocotbext_axi_lite_master_checks_the_register_window() {
    for (module, family) in [("axil_node_regs", "axil"), ("torus_4x2x1_node", "system")] {
        cocotb(module, "test_axil", family);
    }
}

/// Runs cocotb test module `test` on Icarus against `generated/<family>/<module>.v`.
fn cocotb(module: &str, test: &str, family: &str) {
    let root = env!("CARGO_MANIFEST_DIR");
    let output = Command::new("python3").args([&format!("{root}/tests/cocotb/run.py"), module, test, family]).current_dir(root).output().expect("python3 is needed for the cocotb test bench");
    let log = format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    assert!(
        output.status.success(),
        "{module}: cocotb bench failed (run scripts/setup.sh if cocotb is missing):\n{}",
        log.lines().rev().take(40).collect::<Vec<_>>().into_iter().rev().collect::<Vec<_>>().join("\n")
    );
}
