//! A virtual channel's buffer: a FIFO whose first three entries sit in registers (head, second,
//! third) in front of a memory read through a registered port (block-RAM mappable). The
//! allocator reads the head and the second entry one cycle ahead; a word landing from the
//! memory always goes into a register first and is never a candidate the cycle it lands (the
//! memory's output is on no allocation path). The memory is read whenever the landing word will
//! find one of the three registers free, so while it holds entries the head and second registers
//! are full: the allocator sees the same entries as with an ideal FIFO (a flit pushed now is
//! the head next cycle, pops can follow at every cycle). "The memory holds entries" is a
//! register rather than a pointer compare in the cycle that needs it. [`Design::queue`] is the
//! general-purpose queue with two registers.

use weft_hdl::netlist::{Design, Sig};

/// A VC buffer made by [`vc_buffer`].
pub(super) struct Buffer<'d> {
    /// The head is valid; its fields (registers).
    pub valid: Sig<'d>,
    pub head: Vec<Sig<'d>>,
    /// The memory has room for one more entry, and for two: the buffer holds fewer than depth + 3
    /// entries, and fewer than depth + 2.
    pub space: Sig<'d>,
    pub space2: Sig<'d>,
    /// The entry behind the head (registers) and whether it holds one.
    pub second_valid: Sig<'d>,
    pub second: Vec<Sig<'d>>,
}

/// A FIFO of `fields` (pushed together when `push` is high), `depth` entries of memory (a power
/// of two) plus the read register and the head, second and third registers; `pop` takes the
/// head (only while valid). `rewrite` (load, value) replaces the head's first field while the
/// head stays (no pop).
pub(super) fn vc_buffer<'d>(d: &'d Design, name: &str, depth: usize, push: Sig<'d>, fields: &[Sig<'d>], pop: Sig<'d>, rewrite: Option<(Sig<'d>, Sig<'d>)>) -> Buffer<'d> {
    assert!(depth.is_power_of_two(), "buffer {name}: depth {depth} is not a power of two");
    let ab = depth.trailing_zeros() as usize;
    let wr = d.reg(&format!("{name}_wr"), ab + 1, 0);
    let rd = d.reg(&format!("{name}_rd"), ab + 1, 0);
    // The memory holds entries (wr ≠ rd), registered.
    let stored = d.reg(&format!("{name}_stored"), 1, 0);
    // A word read from the memory lands in its read register this cycle.
    let landed = d.reg(&format!("{name}_landed"), 1, 0);
    // Valid bits of the three registers, a thermometer (head, second, third).
    let v = [d.reg(&format!("{name}_valid"), 1, 0), d.reg(&format!("{name}_second_valid"), 1, 0), d.reg(&format!("{name}_third_valid"), 1, 0)];
    let (v0, v1, v2) = (v[0].q, v[1].q, v[2].q);
    // Registers in use after this cycle's pop, as a thermometer.
    let k0 = pop.mux(v1, v0);
    let k1 = pop.mux(v2, v1);
    let k2 = !pop & v2;
    // A push skips the memory while the memory is empty and a register is free for it behind
    // the kept entries and a word landing now.
    let full = k2 | k1 & landed.q;
    let direct = push & !stored.q & !full;
    // Read when the word will find a free register the cycle it lands, whatever that cycle's pop.
    let fetch = stored.q & !full;
    let arriving = landed.q | direct;
    let both = landed.q & direct;
    let (mut head, mut seconds) = (vec![], vec![]);
    for (k, field) in fields.iter().enumerate() {
        let mem = d.memory(&format!("{name}_mem{k}"), field.width, depth);
        mem.write(push & !direct, wr.q.bits(0, ab), *field);
        let read = mem.read_registered(fetch, rd.q.bits(0, ab), &format!("{name}_read{k}"));
        // The first arriving word is the landing one when there is one.
        let first = landed.q.mux(read, *field);
        let second = d.later(field.width);
        let third = d.later(field.width);
        // Head: the second entry when the head leaves, else the first arriving word.
        let (mut h_next, mut h_load) = ((pop & v1).mux(second, first), pop | !v0);
        if let (0, Some((load, value))) = (k, rewrite) {
            (h_next, h_load) = (load.mux(value, h_next), h_load | load);
        }
        // Second: the third entry when the head leaves and a third is kept, the first arriving
        // word behind one kept entry, else the push (behind a landing word into an empty
        // buffer; without one the second stays invalid, so the select needs no push and no
        // input valid reaches these hundreds of muxes).
        let s_next = (pop & v2).mux(third, k0.mux(first, *field));
        let s_load = pop & v2 | !k1;
        // Third: the first arriving word behind two kept entries, else the push behind a
        // landing word.
        let t_next = k1.mux(first, *field);
        let t_load = !k2;
        let h = d.net().reg(h_next.wire, Some(h_load.wire), None);
        let s = d.net().reg(s_next.wire, Some(s_load.wire), None);
        let t = d.net().reg(t_next.wire, Some(t_load.wire), None);
        let s = d.sig(s).named(&format!("{name}_second{k}"));
        second.define(s);
        third.define(d.sig(t).named(&format!("{name}_third{k}")));
        seconds.push(s);
        head.push(d.sig(h).named(&format!("{name}_head{k}")));
    }
    let mempush = push & !direct;
    wr.next(wr.q + mempush.zext(ab + 1));
    rd.next(rd.q + fetch.zext(ab + 1));
    // Still holding entries: one was written, or more than one was there or none read.
    let single = (wr.q - rd.q).eq(1u32);
    stored.next(mempush | stored.q & !(fetch & single));
    landed.next(fetch);
    v[0].next(k0 | arriving);
    v[1].next(k1 | k0 & arriving | both);
    v[2].next(k2 | k1 & arriving | k0 & both);
    let used = wr.q - rd.q;
    Buffer { valid: v0, head, space: used.lt(depth as u128), space2: used.lt(depth as u128 - 1), second_valid: v1, second: seconds }
}

#[cfg(test)]
mod tests {
    use std::collections::VecDeque;

    use weft_hdl::netlist::eval::Evaluator;
    use weft_hdl::netlist::Design;
    use weft_hdl::testbench::Rng;

    use super::vc_buffer;

    /// The buffer against an ideal FIFO: under random pushes (up to the depth + 3 entries
    /// `space` allows) and pops, every cycle the head and the entry behind it are the model's
    /// first two entries, valid exactly when the model holds them, and `space` / `space2` say
    /// whether it holds fewer than depth + 3 / depth + 2.
    fn matches_ideal_fifo(depth: usize, push_percent: u64, pop_percent: u64, seed: u64) {
        let d = Design::new();
        let (push, data, pop) = (d.input("push", 1), d.input("data", 16), d.input("pop", 1));
        let b = vc_buffer(&d, "b", depth, push, &[data], pop, None);
        d.output("valid", b.valid);
        d.output("head", b.head[0]);
        d.output("second_valid", b.second_valid);
        d.output("second", b.second[0]);
        d.output("space", b.space);
        d.output("space2", b.space2);
        let mut e = Evaluator::new(d.finish());
        e.reset(2);
        let mut rng = Rng::new(seed);
        let mut model: VecDeque<u128> = VecDeque::new();
        let mut next = 1u128;
        for cycle in 0..20_000 {
            e.settle();
            let at = format!("depth {depth}, seed {seed}, cycle {cycle}, model {:?}", model.iter().take(3).collect::<Vec<_>>());
            assert_eq!(e.get_output("valid") == 1, !model.is_empty(), "head valid, {at}");
            assert_eq!(e.get_output("second_valid") == 1, model.len() >= 2, "second valid, {at}");
            // An IntraNode input writes while `space` says so: a buffer of depth + 3 entries.
            assert_eq!(e.get_output("space") == 1, model.len() < depth + 3, "space, {at}");
            assert_eq!(e.get_output("space2") == 1, model.len() < depth + 2, "space for two, {at}");
            if let Some(h) = model.front() {
                assert_eq!(e.get_output("head"), *h, "head, {at}");
            }
            if let Some(s) = model.get(1) {
                assert_eq!(e.get_output("second"), *s, "second, {at}");
            }
            // Bursts of pops and pauses drain and fill the memory.
            let phase = (cycle / 500) % 3;
            let popping = !model.is_empty() && rng.chance(if phase == 0 { 10 } else { pop_percent });
            let pushing = model.len() - (popping as usize) < depth + 3 && rng.chance(if phase == 1 { 100 } else { push_percent });
            e.set_input("pop", popping as u128);
            e.set_input("push", pushing as u128);
            e.set_input("data", next);
            e.settle();
            e.clock(false);
            if popping {
                model.pop_front();
            }
            if pushing {
                model.push_back(next);
                next = next % 0xffff + 1;
            }
        }
    }

    #[test]
    fn head_and_second_follow_an_ideal_fifo() {
        for (seed, (push, pop)) in [(90, 90), (50, 50), (100, 100), (70, 95), (95, 60)].into_iter().enumerate() {
            matches_ideal_fifo(8, push, pop, seed as u64 + 1);
            matches_ideal_fifo(16, push, pop, seed as u64 + 11);
        }
    }
}
