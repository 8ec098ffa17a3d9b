//! What a shipped module is: its public spec, how to build its Verilog, and its built-in
//! simulator testbench. Each block's module lists its own; [`crate::catalog`] gathers them.

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
