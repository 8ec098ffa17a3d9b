//! Full-throughput AXI4-Stream register slice (skid buffer).

use rust_hdl::prelude::*;

use super::{AxisMaster, AxisSlave, StreamWidths};

/// Registers every forward signal and `tready`: one beat per cycle sustained, and no
/// combinational path from `m_axis_tready` to `s_axis_tready` (or from `s_axis` to `m_axis`).
/// When the output stalls, the beat already accepted waits in a skid register, which is why
/// `s_axis_tready` can be a register.
#[derive(LogicBlock)]
pub struct AxisRegisterSlice<const W: usize, const K: usize, const U: usize = 1> {
    pub clk: Signal<In, Clock>,
    pub rst: Signal<In, Bit>,
    pub s_axis: AxisSlave<W, K, U>,
    pub m_axis: AxisMaster<W, K, U>,
    out_valid: DFF<Bit>,
    out_data: DFF<Bits<W>>,
    out_keep: DFF<Bits<K>>,
    out_last: DFF<Bit>,
    out_user: DFF<Bits<U>>,
    skid_valid: DFF<Bit>,
    skid_data: DFF<Bits<W>>,
    skid_keep: DFF<Bits<K>>,
    skid_last: DFF<Bit>,
    skid_user: DFF<Bits<U>>,
}

impl<const W: usize, const K: usize, const U: usize> Default for AxisRegisterSlice<W, K, U> {
    fn default() -> Self {
        let () = StreamWidths::<W, K, U>::OK;
        Self {
            clk: Default::default(),
            rst: Default::default(),
            s_axis: Default::default(),
            m_axis: Default::default(),
            out_valid: Default::default(),
            out_data: Default::default(),
            out_keep: Default::default(),
            out_last: Default::default(),
            out_user: Default::default(),
            skid_valid: Default::default(),
            skid_data: Default::default(),
            skid_keep: Default::default(),
            skid_last: Default::default(),
            skid_user: Default::default(),
        }
    }
}

impl<const W: usize, const K: usize, const U: usize> Logic for AxisRegisterSlice<W, K, U> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clk, out_valid, out_data, out_keep, out_last, out_user, skid_valid, skid_data, skid_keep, skid_last, skid_user);
        self.s_axis.tready.next = !self.skid_valid.q.val();
        self.m_axis.tvalid.next = self.out_valid.q.val();
        self.m_axis.tdata.next = self.out_data.q.val();
        self.m_axis.tkeep.next = self.out_keep.q.val();
        self.m_axis.tlast.next = self.out_last.q.val();
        self.m_axis.tuser.next = self.out_user.q.val();
        if self.m_axis.tready.val() | !self.out_valid.q.val() {
            // The output register is free this cycle: fill it from the skid register first.
            if self.skid_valid.q.val() {
                self.out_valid.d.next = true;
                self.out_data.d.next = self.skid_data.q.val();
                self.out_keep.d.next = self.skid_keep.q.val();
                self.out_last.d.next = self.skid_last.q.val();
                self.out_user.d.next = self.skid_user.q.val();
                self.skid_valid.d.next = false;
            } else {
                self.out_valid.d.next = self.s_axis.tvalid.val();
                self.out_data.d.next = self.s_axis.tdata.val();
                self.out_keep.d.next = self.s_axis.tkeep.val();
                self.out_last.d.next = self.s_axis.tlast.val();
                self.out_user.d.next = self.s_axis.tuser.val();
            }
        } else if self.s_axis.tvalid.val() & !self.skid_valid.q.val() {
            // Output stalled: park the beat accepted this cycle.
            self.skid_valid.d.next = true;
            self.skid_data.d.next = self.s_axis.tdata.val();
            self.skid_keep.d.next = self.s_axis.tkeep.val();
            self.skid_last.d.next = self.s_axis.tlast.val();
            self.skid_user.d.next = self.s_axis.tuser.val();
        }
        if self.rst.val() {
            self.out_valid.d.next = false;
            self.skid_valid.d.next = false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testbench::{check_stream_block, StreamPorts, StreamStimulus};

    type Slice = AxisRegisterSlice<128, 16, 4>;
    const PORTS: StreamPorts<Slice, 128, 16, 4> = StreamPorts { clk: |b| &mut b.clk, rst: |b| &mut b.rst, input: |b| &mut b.s_axis, output: |b| &mut b.m_axis };

    #[test]
    fn random_handshakes_keep_order_without_loss_or_duplication() {
        for (seed, valid, ready) in [(1, 50, 50), (2, 90, 30), (3, 30, 90), (4, 100, 70)] {
            let stimulus = StreamStimulus { beats: 600, valid_percent: valid, ready_percent: ready, seed };
            check_stream_block(Slice::default(), &PORTS, stimulus, true).unwrap();
        }
    }

    #[test]
    fn moves_one_beat_per_cycle_when_both_sides_are_ready() {
        let stimulus = StreamStimulus { beats: 500, valid_percent: 100, ready_percent: 100, seed: 7 };
        let run = check_stream_block(Slice::default(), &PORTS, stimulus, true).unwrap();
        let first = run.first_out.unwrap();
        assert_eq!(first, 1, "one register stage of latency");
        // The last beat leaves `beats - 1` cycles after the first one; 8 drain cycles follow.
        assert_eq!(run.cycles, first + 500 + 8);
    }
}
