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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stream::Beat;
    use crate::testbench::{Bench, Rng};
    use std::collections::VecDeque;

    /// Random packets to random outputs (including an index that names no output, which must be
    /// dropped): each output receives exactly its packets, whole and in order.
    #[test]
    fn steers_whole_packets_and_drops_unroutable_ones() {
        const N: usize = 3;
        for (seed, valid, ready) in [(41u64, 70u64, 50u64), (42, 100, 100), (43, 40, 80)] {
            let mut bench = Bench::new(AxisDemux::<32, 4, 1, N>::default(), |b| &mut b.clk).unwrap();
            let mut rng = Rng::new(seed);
            bench.uut.rst.next = true;
            bench.tick();
            bench.uut.rst.next = false;
            let mut input: VecDeque<(u64, Beat)> = VecDeque::new();
            let mut expected: Vec<VecDeque<Beat>> = vec![VecDeque::new(); N + 1];
            for p in 0..150u64 {
                let dest = rng.below(N as u64 + 1);
                let len = 1 + rng.below(4);
                for b in 0..len {
                    let beat = Beat::new(p << 8 | b, 0xF, b + 1 == len, 0);
                    expected[dest as usize].push_back(beat.clone());
                    input.push_back((dest, beat));
                }
            }
            let dropped_beats = expected[N].len();
            let (mut offered, mut dropped, mut cycles) = (false, 0, 0);
            while input.len() + expected[..N].iter().map(|q| q.len()).sum::<usize>() > 0 {
                cycles += 1;
                assert!(cycles < 20_000, "seed {seed}: stuck");
                if !offered && !input.is_empty() && rng.chance(valid) {
                    offered = true;
                }
                bench.uut.s_axis.tvalid.next = offered;
                if let Some((dest, beat)) = input.front() {
                    beat.drive(&mut bench.uut.s_axis);
                    bench.uut.select.next = (*dest).into();
                }
                let ready: Vec<bool> = (0..N).map(|_| rng.chance(ready)).collect();
                for o in 0..N {
                    bench.uut.m_axis[o].tready.next = ready[o];
                }
                bench.settle();
                if bench.uut.dropped.val() {
                    dropped += 1;
                }
                if offered && bench.uut.s_axis.tready.val() {
                    input.pop_front();
                    offered = false;
                }
                for o in 0..N {
                    if ready[o] && bench.uut.m_axis[o].tvalid.val() {
                        let want = expected[o].pop_front().expect("unexpected beat");
                        assert_eq!(Beat::sample(&bench.uut.m_axis[o]), want, "seed {seed}, output {o}");
                    }
                }
                bench.tick();
            }
            assert_eq!(dropped, dropped_beats, "seed {seed}");
        }
    }
}
