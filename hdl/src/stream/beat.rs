//! One AXI4-Stream beat as software sees it: the reference side of every testbench.

use num_bigint::BigUint;
use rust_hdl::prelude::*;

use super::{AxisMaster, AxisSlave};

/// A transfer on an AXI4-Stream, with `tdata` of any width.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Beat {
    /// `tdata`.
    pub data: BigUint,
    /// `tkeep`, one bit per byte (up to 64 bytes of `tdata`).
    pub keep: u64,
    /// `tlast`.
    pub last: bool,
    /// `tuser` (up to 64 bits).
    pub user: u64,
}

impl Beat {
    /// A beat from its fields.
    pub fn new(data: impl Into<BigUint>, keep: u64, last: bool, user: u64) -> Beat {
        Beat { data: data.into(), keep, last, user }
    }

    /// Drives this beat's `tdata`, `tkeep`, `tlast` and `tuser` onto a block's input port (used by
    /// testbenches standing in for a source; `tvalid` is left to the caller).
    pub fn drive<const W: usize, const K: usize, const U: usize>(&self, port: &mut AxisSlave<W, K, U>) {
        port.tdata.next = Bits::<W>::from(self.data.clone());
        port.tkeep.next = Bits::<K>::from(self.keep);
        port.tlast.next = self.last;
        port.tuser.next = Bits::<U>::from(self.user);
    }

    /// Sample the beat currently presented by a master port.
    pub fn sample<const W: usize, const K: usize, const U: usize>(port: &AxisMaster<W, K, U>) -> Beat {
        Beat { data: port.tdata.val().into(), keep: port.tkeep.val().to_u64(), last: port.tlast.val(), user: port.tuser.val().to_u64() }
    }
}
