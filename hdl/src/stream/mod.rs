//! AXI4-Stream: the one stream interface every weft block speaks.
//!
//! A stream is a pair of rust-hdl interfaces, [`AxisMaster`] (drives the beat) and [`AxisSlave`]
//! (receives it), joined with one call. Parameters:
//! - `W`: `tdata` width in bits (a multiple of 8).
//! - `K`: `tkeep` width, always `W / 8` (checked when the block is built).
//! - `U`: `tuser` width (default 1). `tid`/`tdest` are not separate signals in weft: routing
//!   information travels in the packet header, and a block that needs more side-band bits widens
//!   `tuser`.
//!
//! `tkeep`, `tlast` and `tuser` are optional at the exported boundary: an [`crate::export`] spec
//! names the side-band signals a module exposes, and the others are tied off.

pub mod async_fifo;
mod beat;
mod fifo;
mod register_slice;

pub use async_fifo::AxisAsyncFifo;
pub use beat::Beat;
pub use fifo::AxisFifo;
pub use register_slice::AxisRegisterSlice;

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

/// Which optional AXI4-Stream signals a port exposes at an exported module's boundary.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sideband {
    pub tkeep: bool,
    pub tlast: bool,
    pub tuser: bool,
}

impl Sideband {
    /// `tdata` only (arithmetic operators).
    pub const DATA: Sideband = Sideband { tkeep: false, tlast: false, tuser: false };
    /// `tdata` and `tlast` (vectors of values).
    pub const LAST: Sideband = Sideband { tkeep: false, tlast: true, tuser: false };
    /// `tdata`, `tkeep`, `tlast` (packets of bytes).
    pub const PACKET: Sideband = Sideband { tkeep: true, tlast: true, tuser: false };
    /// Every signal.
    pub const ALL: Sideband = Sideband { tkeep: true, tlast: true, tuser: true };

    /// Names of the signals this port hides, for a stream port prefix such as `s_axis`.
    pub fn hidden(&self, prefix: &str) -> Vec<String> {
        [("tkeep", self.tkeep), ("tlast", self.tlast), ("tuser", self.tuser)].iter().filter(|(_, shown)| !shown).map(|(name, _)| format!("{prefix}_{name}")).collect()
    }
}
