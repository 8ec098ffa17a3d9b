//! Packet-aware AXI4-Stream demultiplexer.

use rust_hdl::prelude::*;

use super::{AxisMaster, AxisRegisterSlice, AxisSlave, StreamWidths};

/// Steers each packet of one input stream to one of `N` outputs. `select` (an output index) is
/// sampled with a packet's first beat and holds for the whole packet; a packet whose `select`
/// is `N` or more is consumed and dropped (counted on `dropped`). Each output passes through an
/// [`AxisRegisterSlice`], so no `m_axis_tready` reaches `s_axis_tready` combinationally through
/// more than the selected slice's registered ready.
#[derive(LogicBlock)]
pub struct AxisDemux<const W: usize, const K: usize, const U: usize, const N: usize> {
    pub clk: Signal<In, Clock>,
    pub rst: Signal<In, Bit>,
    pub s_axis: AxisSlave<W, K, U>,
    pub select: Signal<In, Bits<8>>,
    pub m_axis: [AxisMaster<W, K, U>; N],
    /// High for one cycle for every beat dropped because `select` named no output.
    pub dropped: Signal<Out, Bit>,
    outputs: [AxisRegisterSlice<W, K, U>; N],
    locked: DFF<Bit>,
    locked_output: DFF<Bits<8>>,
    route: Signal<Local, Bits<8>>,
}

impl<const W: usize, const K: usize, const U: usize, const N: usize> Default for AxisDemux<W, K, U, N> {
    fn default() -> Self {
        let () = StreamWidths::<W, K, U>::OK;
        let () = Self::SIZE_OK;
        Self {
            clk: Default::default(),
            rst: Default::default(),
            s_axis: Default::default(),
            select: Default::default(),
            m_axis: std::array::from_fn(|_| Default::default()),
            dropped: Default::default(),
            outputs: std::array::from_fn(|_| Default::default()),
            locked: Default::default(),
            locked_output: Default::default(),
            route: Default::default(),
        }
    }
}

impl<const W: usize, const K: usize, const U: usize, const N: usize> AxisDemux<W, K, U, N> {
    const SIZE_OK: () = assert!(N >= 1 && N <= 255, "demux outputs must be 1 ..= 255");
}

impl<const W: usize, const K: usize, const U: usize, const N: usize> Logic for AxisDemux<W, K, U, N> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clk, locked, locked_output);
        if self.locked.q.val() {
            self.route.next = self.locked_output.q.val();
        } else {
            self.route.next = self.select.val();
        }
        // No output matches: accept and drop.
        self.s_axis.tready.next = true;
        self.dropped.next = self.s_axis.tvalid.val();
        for i in 0..N {
            self.outputs[i].clk.next = self.clk.val();
            self.outputs[i].rst.next = self.rst.val();
            self.outputs[i].s_axis.tdata.next = self.s_axis.tdata.val();
            self.outputs[i].s_axis.tkeep.next = self.s_axis.tkeep.val();
            self.outputs[i].s_axis.tlast.next = self.s_axis.tlast.val();
            self.outputs[i].s_axis.tuser.next = self.s_axis.tuser.val();
            self.outputs[i].s_axis.tvalid.next = false;
            if self.route.val().index() == i {
                self.outputs[i].s_axis.tvalid.next = self.s_axis.tvalid.val();
                self.s_axis.tready.next = self.outputs[i].s_axis.tready.val();
                self.dropped.next = false;
            }
            self.m_axis[i].tdata.next = self.outputs[i].m_axis.tdata.val();
            self.m_axis[i].tkeep.next = self.outputs[i].m_axis.tkeep.val();
            self.m_axis[i].tlast.next = self.outputs[i].m_axis.tlast.val();
            self.m_axis[i].tuser.next = self.outputs[i].m_axis.tuser.val();
            self.m_axis[i].tvalid.next = self.outputs[i].m_axis.tvalid.val();
            self.outputs[i].m_axis.tready.next = self.m_axis[i].tready.val();
        }
        if self.s_axis.tvalid.val() & self.s_axis.tready.val() {
            self.locked.d.next = !self.s_axis.tlast.val();
            self.locked_output.d.next = self.route.val();
        }
        if self.rst.val() {
            self.locked.d.next = false;
        }
    }
}
