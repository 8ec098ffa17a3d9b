//! The in-network allreduce on both shipped tori, in Verilator on the generated node RTL: every
//! node's result is bit-exact to the software reference of the documented order, for 1, 7, 16
//! and 1000 binary32 elements (16 packets of 256 bytes), with bit errors on every cable and
//! random gaps and back-pressure on every host stream; sums on one torus, maxima on the other (the operator is a
//! register, so the same hardware runs both). The other collectives run on the same nodes in
//! `tests/collectives_stress.rs`.

use weft::bench::allreduce::{run, Options};
use weft::ip::system::allreduce::{ElementType, ReduceOp};

fn tori_reduce_bit_exact_under_errors(which: usize, op: ReduceOp) {
    let system = &weft::system::shipped()[which];
    let options = Options { lengths: vec![1, 7, 16, 1000], bit_error_rate: 2e-6, pressure: Some(0xBAD), baseline: false, packet_bytes: 256, element: ElementType::F32, op };
    let work = std::env::temp_dir().join(format!("weft-test-allreduce-{}-{}", system.name, std::process::id()));
    let report = run(system, &options, &work, &mut |line| eprintln!("{line}"));
    let _ = std::fs::remove_dir_all(&work);
    let report = report.unwrap();
    assert!(report.flipped_bits > 0, "{}: no bit was flipped on the cables", system.name);
    eprintln!("{}: {} bits flipped", system.name, report.flipped_bits);
}

#[test]
fn torus_4x2x1_sums_bit_exact_under_errors_and_back_pressure() {
    tori_reduce_bit_exact_under_errors(0, ReduceOp::Sum);
}

#[test]
fn torus_2x2x2_takes_maxima_bit_exact_under_errors_and_back_pressure() {
    tori_reduce_bit_exact_under_errors(1, ReduceOp::Max);
}
