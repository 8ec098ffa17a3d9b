//! Every module weft ships: its public spec, how to build its Verilog, and its built-in
//! simulator testbench. `weft generate` and `weft check` walk this list.

pub use crate::shipped::Shipped;

/// All shipped modules, in a fixed order.
pub fn shipped() -> Vec<Shipped> {
    let mut all = crate::axis::shipped();
    all.extend(crate::airfoil::compiled::shipped());
    all.extend(crate::axil::shipped());
    all.extend(crate::axil_crossing::shipped());
    all.extend(crate::fp::shipped());
    all.extend(crate::kernels::shipped());
    all.extend(crate::link::io_link::shipped());
    all.extend(crate::midg::shipped::shipped());
    all.extend(crate::selftest::shipped());
    all.extend(crate::system::allreduce::shipped());
    all.sort_by_key(|a| a.relative_path());
    all
}
