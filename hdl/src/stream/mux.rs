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
    out_slice: AxisRegisterSlice<W, K, U>,
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
            out_slice: Default::default(),
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
        self.out_slice.clk.next = self.clk.val();
        self.out_slice.rst.next = self.rst.val();
        AxisMaster::<W, K, U>::link(&mut self.m_axis, &mut self.out_slice.m_axis);

        // Inside a packet keep its input; between packets take the arbiter's choice.
        if self.locked.q.val() {
            self.select.next = self.locked_input.q.val();
            self.active.next = true;
        } else {
            self.select.next = self.arbiter.grant.val();
            self.active.next = self.arbiter.grant_valid.val();
        }
        self.out_slice.s_axis.tvalid.next = false;
        self.out_slice.s_axis.tdata.next = 0.into();
        self.out_slice.s_axis.tkeep.next = 0.into();
        self.out_slice.s_axis.tlast.next = false;
        self.out_slice.s_axis.tuser.next = 0.into();
        for i in 0..N {
            self.arbiter.request[i].next = self.s_axis[i].tvalid.val();
            self.s_axis[i].tready.next = false;
            if self.active.val() & (self.select.val().index() == i) {
                self.s_axis[i].tready.next = self.out_slice.s_axis.tready.val();
                self.out_slice.s_axis.tvalid.next = self.s_axis[i].tvalid.val();
                self.out_slice.s_axis.tdata.next = self.s_axis[i].tdata.val();
                self.out_slice.s_axis.tkeep.next = self.s_axis[i].tkeep.val();
                self.out_slice.s_axis.tlast.next = self.s_axis[i].tlast.val();
                self.out_slice.s_axis.tuser.next = self.s_axis[i].tuser.val();
            }
        }
        self.arbiter.advance.next = false;
        if self.out_slice.s_axis.tvalid.val() & self.out_slice.s_axis.tready.val() {
            self.locked.d.next = !self.out_slice.s_axis.tlast.val();
            self.locked_input.d.next = self.select.val();
            self.arbiter.advance.next = !self.locked.q.val();
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

    /// Four sources send numbered packets; the merged stream must carry every packet whole
    /// (no interleaving), each source's packets in order, none lost or duplicated.
    #[test]
    fn merges_whole_packets_fairly_under_random_handshakes() {
        const N: usize = 4;
        for (seed, valid, ready) in [(31u64, 60u64, 50u64), (32, 100, 100), (33, 30, 90)] {
            let mut bench = Bench::new(AxisMux::<64, 8, 1, N>::default(), |b| &mut b.clk).unwrap();
            let mut rng = Rng::new(seed);
            bench.uut.rst.next = true;
            bench.tick();
            bench.uut.rst.next = false;
            // Beat data: source << 48 | packet << 16 | beat index.
            let mut queues: Vec<VecDeque<Beat>> = (0..N)
                .map(|s| {
                    (0..40u64)
                        .flat_map(|p| {
                            let len = 1 + (p * 7 + s as u64) % 5;
                            (0..len).map(move |b| Beat::new((s as u64) << 48 | p << 16 | b, 0xFF, b + 1 == len, 0))
                        })
                        .collect()
                })
                .collect();
            let total: usize = queues.iter().map(|q| q.len()).sum();
            let mut offered = [false; N];
            let mut next_packet = [0u64; N];
            let mut current: Option<(u64, u64, u64)> = None; // (source, packet, next beat)
            let mut received = 0;
            let mut cycles = 0u64;
            while received < total {
                cycles += 1;
                assert!(cycles < 20_000, "seed {seed}: stuck with {received}/{total}");
                for s in 0..N {
                    if !offered[s] && !queues[s].is_empty() && rng.chance(valid) {
                        offered[s] = true;
                    }
                    bench.uut.s_axis[s].tvalid.next = offered[s];
                    if let Some(beat) = queues[s].front() {
                        beat.drive(&mut bench.uut.s_axis[s]);
                    }
                }
                let ready = rng.chance(ready);
                bench.uut.m_axis.tready.next = ready;
                bench.settle();
                for s in 0..N {
                    if offered[s] && bench.uut.s_axis[s].tready.val() {
                        queues[s].pop_front();
                        offered[s] = false;
                    }
                }
                if ready && bench.uut.m_axis.tvalid.val() {
                    let beat = Beat::sample(&bench.uut.m_axis);
                    let word: u64 = beat.data.iter_u64_digits().next().unwrap_or(0);
                    let (s, p, b) = (word >> 48, (word >> 16) & 0xFFFF_FFFF, word & 0xFFFF);
                    match current {
                        None => {
                            assert_eq!(b, 0, "seed {seed}: packet must start at beat 0");
                            assert_eq!(p, next_packet[s as usize], "seed {seed}: source {s} out of order");
                        }
                        Some(c) => assert_eq!((s, p, b), c, "seed {seed}: interleaved or lost beat"),
                    }
                    current = if beat.last {
                        next_packet[s as usize] += 1;
                        None
                    } else {
                        Some((s, p, b + 1))
                    };
                    received += 1;
                }
                bench.tick();
            }
            assert_eq!(next_packet, [40; N], "seed {seed}");
        }
    }
}
