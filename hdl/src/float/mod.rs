//! Floating point: formats, the software reference, and the pipelined operator generators.

use crate::Error;
pub mod convert;
mod format;
pub mod ops;
pub mod reference;

pub use format::FloatFormat;
pub use ops::{FloatOperator, Multiplier};
pub mod vectors;

use crate::netlist::{block::feed_forward, Netlist};

/// A stream operator: `s_axis_tdata = {b, a}` (each `format.width()` bits, `a` at bit 0) →
/// `m_axis_tdata = a op b`; single-operand operators read only `a`.
pub fn operator_netlist(op: FloatOperator, format: FloatFormat, stages: usize) -> Result<Netlist, Error> {
    operator_netlist_with(op, format, stages, Multiplier::DspShift)
}

/// [`operator_netlist`] with `multiplier` the implementation of `Mul`.
pub fn operator_netlist_with(op: FloatOperator, format: FloatFormat, stages: usize, multiplier: Multiplier) -> Result<Netlist, Error> {
    let w = format.width();
    let lanes: Vec<(usize, usize)> = (0..op.operands()).map(|i| (i * w, w)).collect();
    let mut error = None;
    let net = feed_forward(&lanes, |net, inputs| match op.build_with(net, format, stages, inputs, multiplier) {
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
