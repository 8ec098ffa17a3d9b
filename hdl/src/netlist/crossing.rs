//! Streams between clock domains: an asynchronous FIFO whose storage is written on one clock
//! and read on the other, with Gray-coded pointers crossing through two-flop synchronisers (the
//! only values [`Netlist::check_domains`](super::Netlist::check_domains) lets cross besides the storage itself).

use super::signal::{Design, Sig};
use super::stream::{Axis, Source};

/// The Gray code of a binary count.
pub fn gray<'d>(binary: Sig<'d>) -> Sig<'d> {
    binary ^ binary.shr(binary.lit(1, binary.width))
}

/// The binary count of a Gray code: bit i is the XOR of gray bits i and above.
pub fn binary<'d>(gray: Sig<'d>) -> Sig<'d> {
    let w = gray.width;
    let mut bits = vec![gray.bit(w - 1)];
    for i in (0..w - 1).rev() {
        let above = *bits.last().unwrap();
        bits.push(above ^ gray.bit(i));
    }
    bits.iter().copied().reduce(|hi, lo| hi.cat(lo)).unwrap()
}

impl Design {
    /// `input` (in domain `from`) into domain `to` through a FIFO of `depth` entries (a power of
    /// two, at least 4): every field of the stream is stored; the output is read combinationally
    /// from the storage (distributed RAM). A word becomes visible to the reader 2–3 reader cycles
    /// after it is written; with `depth` ≥ 8 a stream passes at one word per cycle of the slower
    /// clock. Registers are named `<name>_*`.
    pub fn stream_crossing<'d>(&'d self, name: &str, depth: usize, input: &Source<'d>, from: usize, to: usize) -> Source<'d> {
        assert!(depth.is_power_of_two() && depth >= 4, "stream crossing {name}: depth {depth} is not a power of two ≥ 4");
        let a = &input.0;
        let ab = depth.trailing_zeros() as usize;
        let fields: Vec<Sig<'d>> = [a.data].into_iter().chain(a.keep).chain(a.last).chain(a.user).collect();
        let back = self.net().set_domain(from);
        let wr = self.reg(&format!("{name}_wr"), ab + 1, 0);
        let wr_gray = self.reg(&format!("{name}_wr_gray"), ab + 1, 0);
        let mems: Vec<_> = fields.iter().enumerate().map(|(k, f)| self.memory(&format!("{name}_mem{k}"), f.width, depth)).collect();
        self.net().set_domain(to);
        let rd = self.reg(&format!("{name}_rd"), ab + 1, 0);
        let rd_gray = self.reg(&format!("{name}_rd_gray"), ab + 1, 0);

        self.net().set_domain(from);
        let rd_seen = self.net().synchronize(rd_gray.q.wire, 2, &format!("{name}_rd_gray"));
        let rd_seen = self.sig(rd_seen);
        // Full: the writer is a whole lap ahead (Gray: the top two bits differ, the rest agree).
        let lap = self.lit(0b11 << (ab - 1), ab + 1);
        let full = wr_gray.q.eq(rd_seen ^ lap);
        input.ready(!full);
        let push = a.valid & !full;
        let wr_next = push.mux(wr.q + 1u32, wr.q);
        wr.next(wr_next);
        wr_gray.next(gray(wr_next));
        for (mem, f) in mems.iter().zip(&fields) {
            mem.write(push, wr.q.bits(0, ab), *f);
            self.net().crossing_memory(mem.index);
        }

        self.net().set_domain(to);
        let wr_seen = self.net().synchronize(wr_gray.q.wire, 2, &format!("{name}_wr_gray"));
        let wr_seen = self.sig(wr_seen);
        let valid = rd_gray.q.ne(wr_seen);
        let ready = self.later(1);
        let rd_next = (valid & ready).mux(rd.q + 1u32, rd.q);
        rd.next(rd_next);
        rd_gray.next(gray(rd_next));
        let mut out = mems.iter().map(|m| m.read(rd.q.bits(0, ab)));
        let data = out.next().unwrap();
        let keep = a.keep.map(|_| out.next().unwrap());
        let last = a.last.map(|_| out.next().unwrap());
        let user = a.user.map(|_| out.next().unwrap());
        self.net().set_domain(back);
        Source(Axis { name: name.to_string(), shape: a.shape, data, keep, last, user, valid, ready: Some(ready) })
    }
}
