//! Every module weft ships: its public spec, how to build its Verilog, and its built-in
//! simulator testbench. `weft generate` and `weft check` walk this list.

use weft_hdl::export::{ExportError, ModuleSpec};

pub struct Shipped {
    pub spec: ModuleSpec,
    pub verilog: fn(&ModuleSpec) -> Result<String, ExportError>,
    /// Runs the built-in-simulator testbench; `Ok` carries a one-line summary.
    pub testbench: fn() -> Result<String, String>,
}

impl Shipped {
    /// `family/name.v`, relative to the generated folder.
    pub fn relative_path(&self) -> String {
        format!("{}/{}.v", self.spec.family, self.spec.name)
    }
}

/// All shipped modules, in a fixed order.
pub fn shipped() -> Vec<Shipped> {
    let mut all = crate::axis::shipped();
    all.extend(crate::axil::shipped());
    all.extend(crate::fp::shipped());
    all.extend(crate::kernels::shipped());
    all.extend(crate::selftest::shipped());
    all.sort_by(|a, b| a.relative_path().cmp(&b.relative_path()));
    all
}
