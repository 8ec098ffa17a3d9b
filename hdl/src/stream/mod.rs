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

// rust-hdl's `LogicInterface` derive adds an undocumented `join` method to both interfaces.
#[allow(missing_docs)]
mod axis;
mod beat;

pub use axis::{AxisMaster, AxisSlave};
pub use beat::Beat;

/// Compile-time check of a stream's widths; blocks evaluate it in their constructors, so a
/// stream with a wrong `tkeep` width fails when the design is built, not in simulation.
pub struct StreamWidths<const W: usize, const K: usize, const U: usize>;

impl<const W: usize, const K: usize, const U: usize> StreamWidths<W, K, U> {
    /// Evaluating it fails compilation unless `W` is a non-zero multiple of 8, `K == W / 8`
    /// and `U >= 1` (`let () = StreamWidths::<W, K, U>::OK;`).
    pub const OK: () = {
        assert!(W >= 8 && W.is_multiple_of(8), "AXI4-Stream tdata width must be a non-zero multiple of 8");
        assert!(K == W / 8, "AXI4-Stream tkeep width must be tdata width / 8");
        assert!(U >= 1, "AXI4-Stream tuser width must be at least 1");
    };
}
