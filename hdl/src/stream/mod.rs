//! AXI4-Stream on the rust-hdl side: the interfaces a rust-hdl block uses to carry a stream
//! ([`AxisMaster`] drives the beat, [`AxisSlave`] receives it, joined with one call) — what a
//! netlist design speaks inside a rust-hdl block ([`crate::netlist::block::NetlistStream`]) and
//! what the rust-hdl testbenches drive — and [`Beat`], one transfer as software sees it.
//! Parameters:
//! - `W`: `tdata` width in bits (a multiple of 8).
//! - `K`: `tkeep` width, always `W / 8` (checked when the block is built).
//! - `U`: `tuser` width (default 1). `tid`/`tdest` are not separate signals in weft: routing
//!   information travels in the packet header, and a block that needs more side-band bits widens
//!   `tuser`.

mod beat;

pub use beat::Beat;

use rust_hdl::prelude::*;

/// The driving side of an AXI4-Stream (a block's output, `m_axis_*`).
#[derive(Clone, Debug, Default, LogicInterface)]
#[join = "AxisSlave"]
pub struct AxisMaster<const W: usize, const K: usize, const U: usize = 1> {
    pub tdata: Signal<Out, Bits<W>>,
    pub tkeep: Signal<Out, Bits<K>>,
    pub tlast: Signal<Out, Bit>,
    pub tuser: Signal<Out, Bits<U>>,
    pub tvalid: Signal<Out, Bit>,
    pub tready: Signal<In, Bit>,
}

/// The receiving side of an AXI4-Stream (a block's input, `s_axis_*`).
#[derive(Clone, Debug, Default, LogicInterface)]
#[join = "AxisMaster"]
pub struct AxisSlave<const W: usize, const K: usize, const U: usize = 1> {
    pub tdata: Signal<In, Bits<W>>,
    pub tkeep: Signal<In, Bits<K>>,
    pub tlast: Signal<In, Bit>,
    pub tuser: Signal<In, Bits<U>>,
    pub tvalid: Signal<In, Bit>,
    pub tready: Signal<Out, Bit>,
}

/// Compile-time check of a stream's widths; blocks evaluate it in their constructors, so a
/// stream with a wrong `tkeep` width fails when the design is built, not in simulation.
pub struct StreamWidths<const W: usize, const K: usize, const U: usize>;

impl<const W: usize, const K: usize, const U: usize> StreamWidths<W, K, U> {
    pub const OK: () = {
        assert!(W >= 8 && W.is_multiple_of(8), "AXI4-Stream tdata width must be a non-zero multiple of 8");
        assert!(K == W / 8, "AXI4-Stream tkeep width must be tdata width / 8");
        assert!(U >= 1, "AXI4-Stream tuser width must be at least 1");
    };
}
