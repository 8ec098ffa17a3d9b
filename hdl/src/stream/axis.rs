//! The two sides of an AXI4-Stream interface as rust-hdl signals.

use rust_hdl::prelude::*;

/// The driving side of an AXI4-Stream (a block's output, `m_axis_*`). `join(&mut slave)`
/// connects every signal to the receiving [`AxisSlave`] (and `AxisSlave::join` the reverse).
#[derive(Clone, Debug, Default, LogicInterface)]
#[join = "AxisSlave"]
pub struct AxisMaster<const W: usize, const K: usize, const U: usize = 1> {
    /// Payload, `W` bits; byte 0 is bits 7:0.
    pub tdata: Signal<Out, Bits<W>>,
    /// One bit per `tdata` byte: the byte is valid.
    pub tkeep: Signal<Out, Bits<K>>,
    /// Last beat of a packet.
    pub tlast: Signal<Out, Bit>,
    /// Side-band bits, `U` wide.
    pub tuser: Signal<Out, Bits<U>>,
    /// The beat is valid; a beat transfers when `tvalid && tready`.
    pub tvalid: Signal<Out, Bit>,
    /// The receiver accepts the beat (input to the driving side).
    pub tready: Signal<In, Bit>,
}

/// The receiving side of an AXI4-Stream (a block's input, `s_axis_*`).
#[derive(Clone, Debug, Default, LogicInterface)]
#[join = "AxisMaster"]
pub struct AxisSlave<const W: usize, const K: usize, const U: usize = 1> {
    /// Payload, `W` bits; byte 0 is bits 7:0.
    pub tdata: Signal<In, Bits<W>>,
    /// One bit per `tdata` byte: the byte is valid.
    pub tkeep: Signal<In, Bits<K>>,
    /// Last beat of a packet.
    pub tlast: Signal<In, Bit>,
    /// Side-band bits, `U` wide.
    pub tuser: Signal<In, Bits<U>>,
    /// The sender's beat is valid.
    pub tvalid: Signal<In, Bit>,
    /// This side accepts the beat (output of the receiving side).
    pub tready: Signal<Out, Bit>,
}
