//! Packet-aware AXI4-Stream multiplexer.

use rust_hdl::prelude::*;

use super::{AxisMaster, AxisRegisterSlice, AxisSlave, RoundRobinArbiter, StreamWidths};

/// Merges `N` input streams into one. A packet (beats up to `tlast`) is never interleaved with
/// another; between packets a [`RoundRobinArbiter`] picks the next input. The output passes
/// through an [`AxisRegisterSlice`], so it sustains one beat per cycle and `m_axis_tready`
/// reaches no input combinationally.
#[derive(LogicBlock)]
pub struct AxisMux<const W: usize, const K: usize, const U: usize, const N: usize> {
    pub clk: Signal<In, Clock>,
    pub rst: Signal<In, Bit>,
    pub s_axis: [AxisSlave<W, K, U>; N],
    pub m_axis: AxisMaster<W, K, U>,
    arbiter: RoundRobinArbiter<N>,
    output: AxisRegisterSlice<W, K, U>,
    locked: DFF<Bit>,
    locked_input: DFF<Bits<8>>,
    select: Signal<Local, Bits<8>>,
    active: Signal<Local, Bit>,
}

impl<const W: usize, const K: usize, const U: usize, const N: usize> Default for AxisMux<W, K, U, N> {
    fn default() -> Self {
        let () = StreamWidths::<W, K, U>::OK;
        Self {
            clk: Default::default(),
            rst: Default::default(),
            s_axis: std::array::from_fn(|_| Default::default()),
            m_axis: Default::default(),
            arbiter: Default::default(),
            output: Default::default(),
            locked: Default::default(),
            locked_input: Default::default(),
            select: Default::default(),
            active: Default::default(),
        }
    }
}

impl<const W: usize, const K: usize, const U: usize, const N: usize> Logic for AxisMux<W, K, U, N> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clk, locked, locked_input);
        self.arbiter.clk.next = self.clk.val();
        self.arbiter.rst.next = self.rst.val();
        self.output.clk.next = self.clk.val();
        self.output.rst.next = self.rst.val();
        AxisMaster::<W, K, U>::link(&mut self.m_axis, &mut self.output.m_axis);

        // Inside a packet keep its input; between packets take the arbiter's choice.
        if self.locked.q.val() {
            self.select.next = self.locked_input.q.val();
            self.active.next = true;
        } else {
            self.select.next = self.arbiter.grant.val();
            self.active.next = self.arbiter.grant_valid.val();
        }
        self.output.s_axis.tvalid.next = false;
        self.output.s_axis.tdata.next = 0.into();
        self.output.s_axis.tkeep.next = 0.into();
        self.output.s_axis.tlast.next = false;
        self.output.s_axis.tuser.next = 0.into();
        for i in 0..N {
            self.arbiter.request[i].next = self.s_axis[i].tvalid.val();
            self.s_axis[i].tready.next = false;
            if self.active.val() & (self.select.val().index() == i) {
                self.s_axis[i].tready.next = self.output.s_axis.tready.val();
                self.output.s_axis.tvalid.next = self.s_axis[i].tvalid.val();
                self.output.s_axis.tdata.next = self.s_axis[i].tdata.val();
                self.output.s_axis.tkeep.next = self.s_axis[i].tkeep.val();
                self.output.s_axis.tlast.next = self.s_axis[i].tlast.val();
                self.output.s_axis.tuser.next = self.s_axis[i].tuser.val();
            }
        }
        self.arbiter.advance.next = false;
        if self.output.s_axis.tvalid.val() & self.output.s_axis.tready.val() {
            self.locked.d.next = !self.output.s_axis.tlast.val();
            self.locked_input.d.next = self.select.val();
            self.arbiter.advance.next = !self.locked.q.val();
        }
        if self.rst.val() {
            self.locked.d.next = false;
        }
    }
}
