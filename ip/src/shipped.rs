//! What a shipped module is: its public spec, how to build its Verilog, and its built-in
//! simulator testbench. Each block's module lists its own; [`crate::catalog`] gathers them.
//! A user's module (a kernel from a DSL file) is described the same way, so the flow treats
//! both alike.

use weft_hdl::export::{ExportError, ModuleSpec};

use crate::Error;

type VerilogFn = dyn Fn(&ModuleSpec) -> Result<String, ExportError> + Send + Sync;
type TestbenchFn = dyn Fn() -> Result<String, Error> + Send + Sync;

/// One module weft ships: its public spec, its Verilog generator and its testbench.
pub struct Shipped {
    /// The module's public description: family, name, summary, parameters and ports.
    pub spec: ModuleSpec,
    /// Builds the module's Verilog file from its spec.
    pub verilog: Box<VerilogFn>,
    /// Runs the built-in-simulator testbench; `Ok` carries a one-line summary.
    pub testbench: Box<TestbenchFn>,
}

impl Shipped {
    /// `testbench` reports an [`Error`], or one of the language layer's.
    pub fn new<E: Into<Error>>(
        spec: ModuleSpec,
        verilog: impl Fn(&ModuleSpec) -> Result<String, ExportError> + Send + Sync + 'static,
        testbench: impl Fn() -> Result<String, E> + Send + Sync + 'static,
    ) -> Self {
        Shipped { spec, verilog: Box::new(verilog), testbench: Box::new(move || testbench().map_err(Into::into)) }
    }

    /// `family/name.v`, relative to the generated folder.
    pub fn relative_path(&self) -> String {
        format!("{}/{}.v", self.spec.family, self.spec.name)
    }
}
