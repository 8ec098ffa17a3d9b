//! What a shipped module is: its public spec, how to build its Verilog, and its built-in
//! simulator testbench. Each block's module lists its own; [`crate::catalog`] gathers them.
//! A user's module (a kernel from a DSL file) is described the same way, so the flow treats
//! both alike.

use weft_hdl::export::{ExportError, ModuleSpec};

type VerilogFn = dyn Fn(&ModuleSpec) -> Result<String, ExportError> + Send + Sync;
type TestbenchFn = dyn Fn() -> Result<String, String> + Send + Sync;

pub struct Shipped {
    pub spec: ModuleSpec,
    pub verilog: Box<VerilogFn>,
    /// Runs the built-in-simulator testbench; `Ok` carries a one-line summary.
    pub testbench: Box<TestbenchFn>,
}

impl Shipped {
    pub fn new(spec: ModuleSpec, verilog: impl Fn(&ModuleSpec) -> Result<String, ExportError> + Send + Sync + 'static, testbench: impl Fn() -> Result<String, String> + Send + Sync + 'static) -> Self {
        Shipped { spec, verilog: Box::new(verilog), testbench: Box::new(testbench) }
    }

    /// `family/name.v`, relative to the generated folder.
    pub fn relative_path(&self) -> String {
        format!("{}/{}.v", self.spec.family, self.spec.name)
    }
}
