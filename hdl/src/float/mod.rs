//! Floating point: formats, the software reference, and the pipelined operator generators.

use crate::Error;
pub mod convert;
mod format;
pub mod ops;
pub mod reference;

pub use format::FloatFormat;
pub use ops::FloatOperator;
pub mod vectors;

use crate::netlist::{block::feed_forward, Netlist};

/// A stream operator: `s_axis_tdata = {b, a}` (each `format.width()` bits, `a` at bit 0) →
/// `m_axis_tdata = a op b`; single-operand operators read only `a`.
pub fn operator_netlist(op: FloatOperator, format: FloatFormat, stages: usize) -> Result<Netlist, Error> {
    let w = format.width();
    let lanes: Vec<(usize, usize)> = (0..op.operands()).map(|i| (i * w, w)).collect();
    let mut error = None;
    let net = feed_forward(&lanes, |net, inputs| match op.build(net, format, stages, inputs) {
        Ok(result) => vec![(result, 0)],
        Err(e) => {
            error = Some(e);
            vec![]
        }
    });
    match error {
        Some(e) => Err(e),
        None => Ok(net),
    }
}
