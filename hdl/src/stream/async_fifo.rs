//! AXI4-Stream FIFO between two clock domains.

use crate::Error;
use rust_hdl::prelude::*;

use super::{AxisMaster, AxisSlave, StreamWidths};
use crate::memory::TwoClockRam;

/// `2^A` beats deep (`A1` = `A + 1`: use [`axis_async_fifo!`](crate::axis_async_fifo)), written
/// on `s_clk`, read on `m_clk`, any clock ratio. Each side counts in binary and publishes its
/// pointer in Gray code (one bit changes per step), which the other side samples through two
/// flip-flops: a sampled pointer is always one the other side really held, only late. Full:
/// the write pointer equals the synchronized read pointer with its two top bits inverted;
/// empty: the read pointer equals the synchronized write pointer. Both flags err on the safe
/// side while the other domain's news is in flight. `s_axis_tready` and `m_axis_tvalid` come
/// from registers; the RAM's registered read port is the output register (first word falls
/// through). Each side has its own synchronous reset; reset both before use.
#[derive(LogicBlock)]
pub struct AxisAsyncFifo<const W: usize, const K: usize, const U: usize, const A: usize, const A1: usize> {
    pub s_clk: Signal<In, Clock>,
    pub s_rst: Signal<In, Bit>,
    pub s_axis: AxisSlave<W, K, U>,
    pub m_clk: Signal<In, Clock>,
    pub m_rst: Signal<In, Bit>,
    pub m_axis: AxisMaster<W, K, U>,
    data: TwoClockRam<Bits<W>, A>,
    keep: TwoClockRam<Bits<K>, A>,
    last: TwoClockRam<Bit, A>,
    user: TwoClockRam<Bits<U>, A>,
    // Write domain.
    write_binary: DFF<Bits<A1>>,
    write_gray: DFF<Bits<A1>>,
    read_gray_sync1: DFF<Bits<A1>>,
    read_gray_sync2: DFF<Bits<A1>>,
    // Read domain.
    read_binary: DFF<Bits<A1>>,
    read_gray: DFF<Bits<A1>>,
    write_gray_sync1: DFF<Bits<A1>>,
    write_gray_sync2: DFF<Bits<A1>>,
    out_valid: DFF<Bit>,
    full_mask: Constant<Bits<A1>>,
    one: Constant<Bits<A1>>,
    zero: Constant<Bits<A1>>,
    push: Signal<Local, Bit>,
    load: Signal<Local, Bit>,
    write_next: Signal<Local, Bits<A1>>,
    read_next: Signal<Local, Bits<A1>>,
}

/// `axis_async_fifo!(W, DEPTH)` names the FIFO type for a `W`-bit stream `DEPTH` beats deep.
#[macro_export]
macro_rules! axis_async_fifo {
    ($w:expr, $depth:expr) => {
        $crate::stream::AxisAsyncFifo<
            $w,
            { $w / 8 },
            1,
            { $crate::rust_hdl::prelude::clog2($depth) },
            { $crate::rust_hdl::prelude::clog2($depth) + 1 },
        >
    };
}

impl<const W: usize, const K: usize, const U: usize, const A: usize, const A1: usize> Default for AxisAsyncFifo<W, K, U, A, A1> {
    fn default() -> Self {
        let () = StreamWidths::<W, K, U>::OK;
        let () = Self::DEPTH_OK;
        Self {
            s_clk: Default::default(),
            s_rst: Default::default(),
            s_axis: Default::default(),
            m_clk: Default::default(),
            m_rst: Default::default(),
            m_axis: Default::default(),
            data: Default::default(),
            keep: Default::default(),
            last: Default::default(),
            user: Default::default(),
            write_binary: Default::default(),
            write_gray: Default::default(),
            read_gray_sync1: Default::default(),
            read_gray_sync2: Default::default(),
            read_binary: Default::default(),
            read_gray: Default::default(),
            write_gray_sync1: Default::default(),
            write_gray_sync2: Default::default(),
            out_valid: Default::default(),
            full_mask: Constant::new((3u64 << (A1 - 2)).into()),
            one: Constant::new(1u64.into()),
            zero: Constant::new(0u64.into()),
            push: Default::default(),
            load: Default::default(),
            write_next: Default::default(),
            read_next: Default::default(),
        }
    }
}

impl<const W: usize, const K: usize, const U: usize, const A: usize, const A1: usize> AxisAsyncFifo<W, K, U, A, A1> {
    const DEPTH_OK: () = {
        assert!(A >= 2 && A <= 16, "asynchronous FIFO depth must be 4 ..= 2^16 beats");
        assert!(A1 == A + 1, "FIFO pointer width A1 must be A + 1");
    };
    /// Capacity in beats.
    pub const DEPTH: usize = 1 << A;
}

impl<const W: usize, const K: usize, const U: usize, const A: usize, const A1: usize> Logic for AxisAsyncFifo<W, K, U, A, A1> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, s_clk, write_binary, write_gray, read_gray_sync1, read_gray_sync2);
        dff_setup!(self, m_clk, read_binary, read_gray, write_gray_sync1, write_gray_sync2, out_valid);
        self.data.write_clk.next = self.s_clk.val();
        self.keep.write_clk.next = self.s_clk.val();
        self.last.write_clk.next = self.s_clk.val();
        self.user.write_clk.next = self.s_clk.val();
        self.data.read_clk.next = self.m_clk.val();
        self.keep.read_clk.next = self.m_clk.val();
        self.last.read_clk.next = self.m_clk.val();
        self.user.read_clk.next = self.m_clk.val();

        // Write domain.
        self.read_gray_sync1.d.next = self.read_gray.q.val();
        self.read_gray_sync2.d.next = self.read_gray_sync1.q.val();
        self.s_axis.tready.next = self.write_gray.q.val() != (self.read_gray_sync2.q.val() ^ self.full_mask.val());
        self.push.next = self.s_axis.tvalid.val() & (self.write_gray.q.val() != (self.read_gray_sync2.q.val() ^ self.full_mask.val()));
        self.write_next.next = self.write_binary.q.val() + self.one.val();
        self.data.write_enable.next = self.push.val();
        self.data.write_address.next = self.write_binary.q.val().get_bits::<A>(0);
        self.data.write_data.next = self.s_axis.tdata.val();
        self.keep.write_enable.next = self.push.val();
        self.keep.write_address.next = self.write_binary.q.val().get_bits::<A>(0);
        self.keep.write_data.next = self.s_axis.tkeep.val();
        self.last.write_enable.next = self.push.val();
        self.last.write_address.next = self.write_binary.q.val().get_bits::<A>(0);
        self.last.write_data.next = self.s_axis.tlast.val();
        self.user.write_enable.next = self.push.val();
        self.user.write_address.next = self.write_binary.q.val().get_bits::<A>(0);
        self.user.write_data.next = self.s_axis.tuser.val();
        if self.push.val() {
            self.write_binary.d.next = self.write_next.val();
            self.write_gray.d.next = self.write_next.val() ^ (self.write_next.val() >> 1);
        }
        if self.s_rst.val() {
            self.write_binary.d.next = self.zero.val();
            self.write_gray.d.next = self.zero.val();
            self.read_gray_sync1.d.next = self.zero.val();
            self.read_gray_sync2.d.next = self.zero.val();
        }

        // Read domain: move the oldest beat into the RAM's read register when it is free.
        self.write_gray_sync1.d.next = self.write_gray.q.val();
        self.write_gray_sync2.d.next = self.write_gray_sync1.q.val();
        self.load.next = (self.read_gray.q.val() != self.write_gray_sync2.q.val()) & (!self.out_valid.q.val() | self.m_axis.tready.val());
        self.read_next.next = self.read_binary.q.val() + self.one.val();
        self.data.read_enable.next = self.load.val();
        self.data.read_address.next = self.read_binary.q.val().get_bits::<A>(0);
        self.keep.read_enable.next = self.load.val();
        self.keep.read_address.next = self.read_binary.q.val().get_bits::<A>(0);
        self.last.read_enable.next = self.load.val();
        self.last.read_address.next = self.read_binary.q.val().get_bits::<A>(0);
        self.user.read_enable.next = self.load.val();
        self.user.read_address.next = self.read_binary.q.val().get_bits::<A>(0);
        self.m_axis.tvalid.next = self.out_valid.q.val();
        self.m_axis.tdata.next = self.data.read_data.val();
        self.m_axis.tkeep.next = self.keep.read_data.val();
        self.m_axis.tlast.next = self.last.read_data.val();
        self.m_axis.tuser.next = self.user.read_data.val();
        if self.load.val() {
            self.read_binary.d.next = self.read_next.val();
            self.read_gray.d.next = self.read_next.val() ^ (self.read_next.val() >> 1);
            self.out_valid.d.next = true;
        } else if self.out_valid.q.val() & self.m_axis.tready.val() {
            self.out_valid.d.next = false;
        }
        if self.m_rst.val() {
            self.read_binary.d.next = self.zero.val();
            self.read_gray.d.next = self.zero.val();
            self.write_gray_sync1.d.next = self.zero.val();
            self.write_gray_sync2.d.next = self.zero.val();
            self.out_valid.d.next = false;
        }
    }
}

/// What a clock-crossing run measured.
#[derive(Clone, Copy, Debug)]
pub struct CrossingRun {
    pub beats: usize,
    /// Beats moved per read-clock cycle while both sides were always willing, or less.
    pub write_cycles: u64,
    pub read_cycles: u64,
}

/// Runs `beats` random beats through an asynchronous FIFO whose write clock has period
/// `s_period` and read clock `m_period` (any units, any ratio, with a phase offset), with random
/// `tvalid`/`tready`, and checks against a software queue that every beat leaves intact, in
/// order, exactly once, that a stalled output beat stays unchanged, and that nothing extra
/// leaves once the queue is empty.
pub fn check_clock_crossing<const W: usize, const K: usize, const A: usize, const A1: usize>(
    s_period: u64,
    m_period: u64,
    beats: usize,
    valid_percent: u64,
    ready_percent: u64,
    seed: u64,
) -> Result<CrossingRun, Error> {
    use crate::stream::Beat;
    use crate::testbench::Rng;
    use std::collections::VecDeque;
    let fail = |what: String| Error::Mismatch(format!("seed {seed}, clocks {s_period}:{m_period}: {what}"));
    let mut uut = AxisAsyncFifo::<W, K, 1, A, A1>::default();
    uut.connect_all();
    check_all(&uut).map_err(|e| fail(format!("structural check: {e:?}")))?;
    let settle = |uut: &mut AxisAsyncFifo<W, K, 1, A, A1>| {
        assert!(rust_hdl::core::simulate::simulate(uut, 1000), "combinational logic did not settle");
    };
    let mut rng = Rng::new(seed);
    let (mut next_s, mut next_m) = (0u64, m_period / 3 + 1);
    let (mut s_cycles, mut m_cycles) = (0u64, 0u64);
    let mut expected: VecDeque<Beat> = VecDeque::new();
    let mut offered: Option<Beat> = None;
    let mut stalled: Option<Beat> = None;
    let (mut sent, mut received) = (0usize, 0usize);
    let mut ready = false;
    let mut idle_after_done = 0;
    let limit = 200 + beats as u64 * 100_000 / (valid_percent.min(ready_percent).max(1).pow(2));
    uut.s_rst.next = true;
    uut.m_rst.next = true;
    settle(&mut uut);
    loop {
        let write_edge = next_s <= next_m;
        if write_edge {
            // Write domain: sample the handshake, then the rising edge, then new stimulus.
            settle(&mut uut);
            if s_cycles >= 4 && offered.is_some() && uut.s_axis.tready.val() {
                expected.push_back(offered.take().unwrap());
                sent += 1;
            }
            uut.s_clk.next = Clock { clk: true };
            settle(&mut uut);
            uut.s_clk.next = Clock { clk: false };
            s_cycles += 1;
            uut.s_rst.next = s_cycles < 4;
            if s_cycles >= 4 && offered.is_none() && sent < beats && rng.chance(valid_percent) {
                offered = Some(Beat::new(rng.bits(W), rng.next_u64() & ((1u128 << K) - 1) as u64, rng.chance(20), 0));
            }
            uut.s_axis.tvalid.next = offered.is_some();
            if let Some(b) = &offered {
                b.drive(&mut uut.s_axis);
            }
            next_s += s_period;
        } else {
            settle(&mut uut);
            let valid = uut.m_axis.tvalid.val();
            if let Some(previous) = stalled.take() {
                if !valid || Beat::sample(&uut.m_axis) != previous {
                    return Err(fail(format!("read cycle {m_cycles}: output beat changed or vanished while stalled")));
                }
            }
            if m_cycles >= 4 && valid {
                let beat = Beat::sample(&uut.m_axis);
                if ready {
                    match expected.pop_front() {
                        Some(want) if want == beat => received += 1,
                        Some(want) => return Err(fail(format!("beat {received}: got {beat:?}, want {want:?}"))),
                        None => return Err(fail(format!("read cycle {m_cycles}: a beat that was never sent (duplicate)"))),
                    }
                } else {
                    stalled = Some(beat);
                }
            }
            uut.m_clk.next = Clock { clk: true };
            settle(&mut uut);
            uut.m_clk.next = Clock { clk: false };
            m_cycles += 1;
            uut.m_rst.next = m_cycles < 4;
            ready = m_cycles >= 4 && (received >= beats || rng.chance(ready_percent));
            uut.m_axis.tready.next = ready;
            next_m += m_period;
            if received == beats {
                idle_after_done += 1;
                if idle_after_done > 16 {
                    break;
                }
            }
        }
        if s_cycles.max(m_cycles) > limit {
            return Err(fail(format!("timed out: {received} of {beats} beats out, {} in flight", expected.len())));
        }
    }
    Ok(CrossingRun { beats: received, write_cycles: s_cycles, read_cycles: m_cycles })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Write clock slower, equal, faster, and with awkward ratios; random handshakes.
    #[test]
    fn random_clock_ratios_lose_duplicate_or_reorder_nothing() {
        for (s, m) in [(10, 10), (10, 7), (7, 10), (10, 31), (31, 10), (13, 17), (100, 9), (9, 100)] {
            for (valid, ready) in [(60, 60), (100, 30), (30, 100)] {
                check_clock_crossing::<128, 16, 6, 7>(s, m, 400, valid, ready, s * 1000 + m + valid).unwrap();
            }
        }
    }

    /// With both sides always willing, the slower clock sets the pace: one beat per cycle of it.
    #[test]
    fn moves_a_beat_per_cycle_of_the_slower_clock() {
        for (s, m) in [(10, 10), (10, 23), (23, 10)] {
            let run = check_clock_crossing::<128, 16, 6, 7>(s, m, 2000, 100, 100, 3).unwrap();
            let slower = if s >= m { run.write_cycles } else { run.read_cycles };
            assert!(slower <= 2000 + 40, "{s}:{m}: {} beats took {slower} cycles of the slower clock", run.beats);
        }
    }
}
