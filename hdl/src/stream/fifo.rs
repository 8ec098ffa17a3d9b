//! Synchronous first-word-fall-through AXI4-Stream FIFO.

use rust_hdl::prelude::*;

use super::{AxisMaster, AxisSlave, StreamWidths};
use crate::memory::DualPortRam;

/// `2^A` beats deep; `A1` must be `A + 1` (Rust cannot compute it in a type: use the
/// [`axis_fifo!`](crate::axis_fifo) macro, which does). The head beat is shown on `m_axis` as
/// soon as it is stored (first word falls through, two cycles after it entered), one beat per
/// cycle in and out, `s_axis_tready` and `fill` come from registers only.
///
/// Storage is a [`DualPortRam`] per field with its registered read port acting as the output
/// register, so deep FIFOs map to block RAM.
#[derive(LogicBlock)]
pub struct AxisFifo<const W: usize, const K: usize, const U: usize, const A: usize, const A1: usize> {
    pub clk: Signal<In, Clock>,
    pub rst: Signal<In, Bit>,
    pub s_axis: AxisSlave<W, K, U>,
    pub m_axis: AxisMaster<W, K, U>,
    /// Beats held, `0 ..= 2^A`.
    pub fill: Signal<Out, Bits<A1>>,
    data: DualPortRam<Bits<W>, A>,
    keep: DualPortRam<Bits<K>, A>,
    last: DualPortRam<Bit, A>,
    user: DualPortRam<Bits<U>, A>,
    write_pointer: DFF<Bits<A1>>,
    read_pointer: DFF<Bits<A1>>,
    held: DFF<Bits<A1>>,
    out_valid: DFF<Bit>,
    depth: Constant<Bits<A1>>,
    // Sized constants keep the Verilog free of 32-bit literals (Verilator WIDTH lint).
    one: Constant<Bits<A1>>,
    zero: Constant<Bits<A1>>,
    push: Signal<Local, Bit>,
    pop: Signal<Local, Bit>,
    load: Signal<Local, Bit>,
}

impl<const W: usize, const K: usize, const U: usize, const A: usize, const A1: usize> Default for AxisFifo<W, K, U, A, A1> {
    fn default() -> Self {
        let () = StreamWidths::<W, K, U>::OK;
        let () = Self::DEPTH_OK;
        Self {
            clk: Default::default(),
            rst: Default::default(),
            s_axis: Default::default(),
            m_axis: Default::default(),
            fill: Default::default(),
            data: Default::default(),
            keep: Default::default(),
            last: Default::default(),
            user: Default::default(),
            write_pointer: Default::default(),
            read_pointer: Default::default(),
            held: Default::default(),
            out_valid: Default::default(),
            depth: Constant::new((1u64 << A).into()),
            one: Constant::new(1u64.into()),
            zero: Constant::new(0u64.into()),
            push: Default::default(),
            pop: Default::default(),
            load: Default::default(),
        }
    }
}

impl<const W: usize, const K: usize, const U: usize, const A: usize, const A1: usize> AxisFifo<W, K, U, A, A1> {
    const DEPTH_OK: () = {
        assert!(A >= 1 && A <= 20, "FIFO depth must be 2 ..= 2^20 beats");
        assert!(A1 == A + 1, "FIFO pointer width A1 must be A + 1");
    };
    /// Capacity in beats.
    pub const DEPTH: usize = 1 << A;
}

/// `axis_fifo!(W, DEPTH)` names the FIFO type for a `W`-bit stream `DEPTH` beats deep
/// (a power of two), computing the derived widths.
#[macro_export]
macro_rules! axis_fifo {
    ($w:expr, $depth:expr) => {
        $crate::stream::AxisFifo<
            $w,
            { $w / 8 },
            1,
            { $crate::rust_hdl::prelude::clog2($depth) },
            { $crate::rust_hdl::prelude::clog2($depth) + 1 },
        >
    };
}

impl<const W: usize, const K: usize, const U: usize, const A: usize, const A1: usize> Logic for AxisFifo<W, K, U, A, A1> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clk, write_pointer, read_pointer, held, out_valid);
        self.data.clk.next = self.clk.val();
        self.keep.clk.next = self.clk.val();
        self.last.clk.next = self.clk.val();
        self.user.clk.next = self.clk.val();

        self.s_axis.tready.next = self.held.q.val() != self.depth.val();
        self.push.next = self.s_axis.tvalid.val() & (self.held.q.val() != self.depth.val());
        self.pop.next = self.out_valid.q.val() & self.m_axis.tready.val();
        // Move the oldest stored beat into the output register when it is empty or leaving.
        self.load.next = (self.write_pointer.q.val() != self.read_pointer.q.val()) & (!self.out_valid.q.val() | self.m_axis.tready.val());

        self.data.write_enable.next = self.push.val();
        self.data.write_address.next = self.write_pointer.q.val().get_bits::<A>(0);
        self.data.write_data.next = self.s_axis.tdata.val();
        self.keep.write_enable.next = self.push.val();
        self.keep.write_address.next = self.write_pointer.q.val().get_bits::<A>(0);
        self.keep.write_data.next = self.s_axis.tkeep.val();
        self.last.write_enable.next = self.push.val();
        self.last.write_address.next = self.write_pointer.q.val().get_bits::<A>(0);
        self.last.write_data.next = self.s_axis.tlast.val();
        self.user.write_enable.next = self.push.val();
        self.user.write_address.next = self.write_pointer.q.val().get_bits::<A>(0);
        self.user.write_data.next = self.s_axis.tuser.val();

        self.data.read_enable.next = self.load.val();
        self.data.read_address.next = self.read_pointer.q.val().get_bits::<A>(0);
        self.keep.read_enable.next = self.load.val();
        self.keep.read_address.next = self.read_pointer.q.val().get_bits::<A>(0);
        self.last.read_enable.next = self.load.val();
        self.last.read_address.next = self.read_pointer.q.val().get_bits::<A>(0);
        self.user.read_enable.next = self.load.val();
        self.user.read_address.next = self.read_pointer.q.val().get_bits::<A>(0);

        self.m_axis.tvalid.next = self.out_valid.q.val();
        self.m_axis.tdata.next = self.data.read_data.val();
        self.m_axis.tkeep.next = self.keep.read_data.val();
        self.m_axis.tlast.next = self.last.read_data.val();
        self.m_axis.tuser.next = self.user.read_data.val();
        self.fill.next = self.held.q.val();

        if self.push.val() {
            self.write_pointer.d.next = self.write_pointer.q.val() + self.one.val();
        }
        if self.load.val() {
            self.read_pointer.d.next = self.read_pointer.q.val() + self.one.val();
            self.out_valid.d.next = true;
        } else if self.pop.val() {
            self.out_valid.d.next = false;
        }
        if self.push.val() & !self.pop.val() {
            self.held.d.next = self.held.q.val() + self.one.val();
        }
        if !self.push.val() & self.pop.val() {
            self.held.d.next = self.held.q.val() - self.one.val();
        }
        if self.rst.val() {
            self.write_pointer.d.next = self.zero.val();
            self.read_pointer.d.next = self.zero.val();
            self.held.d.next = self.zero.val();
            self.out_valid.d.next = false;
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::testbench::{check_stream_block, Bench, StreamPorts, StreamStimulus};

    type Fifo = crate::axis_fifo!(128, 32);
    const PORTS: StreamPorts<Fifo, 128, 16, 1> = StreamPorts { clk: |b| &mut b.clk, rst: |b| &mut b.rst, input: |b| &mut b.s_axis, output: |b| &mut b.m_axis };

    #[test]
    fn random_handshakes_keep_order_without_loss_or_duplication() {
        for (seed, valid, ready) in [(11, 50, 50), (12, 95, 20), (13, 20, 95), (14, 100, 60)] {
            let stimulus = StreamStimulus { beats: 800, valid_percent: valid, ready_percent: ready, seed };
            check_stream_block(Fifo::default(), &PORTS, stimulus, true).unwrap();
        }
    }

    #[test]
    fn moves_one_beat_per_cycle_when_both_sides_are_ready() {
        let stimulus = StreamStimulus { beats: 500, valid_percent: 100, ready_percent: 100, seed: 5 };
        let run = check_stream_block(Fifo::default(), &PORTS, stimulus, true).unwrap();
        assert_eq!(run.first_out, Some(2), "write, then load into the output register");
        assert_eq!(run.cycles, 2 + 500 + 8);
    }

    #[test]
    fn fills_to_exactly_its_depth_and_reports_the_level() {
        let mut bench = Bench::new(Fifo::default(), |b| &mut b.clk).unwrap();
        bench.uut.rst.next = true;
        bench.tick();
        bench.uut.rst.next = false;
        bench.uut.m_axis.tready.next = false;
        bench.uut.s_axis.tvalid.next = true;
        let mut accepted = 0;
        for _ in 0..40 {
            bench.settle();
            assert_eq!(bench.uut.fill.val().index(), accepted);
            if bench.uut.s_axis.tready.val() {
                accepted += 1;
            }
            bench.tick();
        }
        assert_eq!(accepted, Fifo::DEPTH);
        bench.uut.s_axis.tvalid.next = false;
        bench.uut.m_axis.tready.next = true;
        let mut drained = 0;
        for _ in 0..40 {
            bench.settle();
            if bench.uut.m_axis.tvalid.val() {
                drained += 1;
            }
            bench.tick();
        }
        assert_eq!(drained, Fifo::DEPTH);
        bench.settle();
        assert_eq!(bench.uut.fill.val().index(), 0);
    }
}
