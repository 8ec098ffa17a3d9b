//! Self-test IP for hardware without a host in the loop: a packet generator and a packet
//! checker, as netlists, configured from ports a register window drives.
//!
//! Generator (`selftest_generator_w128`): on a `start` pulse it sends `count` packets of
//! `length` payload bytes to `dst` (header bits 21:0: dst_x, dst_y, dst_z, dst_port) with `tag`;
//! packet k carries k in the header's `user` field, and payload word w lane i (32 bits) holds
//! [`pattern`]`(seed, k, 4w + i)`. Outputs `busy`, `sent`, and `cycles`: clock cycles from the
//! first header sent until `done_in` rises (the checker's `complete`, for a loop through the
//! fabric) — the performance counter.
//!
//! Checker (`selftest_checker_w128`): always ready; for every packet it recomputes the pattern
//! from the header's `user` field and `seed`, counts `packets`, payload `bytes`, and `errors`
//! (each payload word that differs, and each packet whose beats disagree with its `length`);
//! `complete` is high once `packets` reaches `expected`.

use weft_hdl::netlist::{Netlist, Wire};

use crate::router::header::field;

/// The 32-bit payload lane `index` of packet `packet` for `seed` (the software reference).
pub fn pattern(seed: u32, packet: u32, index: u32) -> u32 {
    seed ^ packet.wrapping_mul(0x9E37_79B9) ^ index.wrapping_mul(0x85EB_CA6B)
}

/// The same pattern as netlist logic, for the four lanes of payload word `word`.
fn pattern_word(net: &mut Netlist, seed: Wire, packet: Wire, word: Wire) -> Wire {
    let k = net.constant(0x9E37_79B9, 32);
    let pk = net.mul(packet, k);
    let pk = net.slice(pk, 0, 32);
    let base = net.xor(seed, pk);
    let m = net.constant(0x85EB_CA6B, 32);
    let w4 = net.shl_const(word, 2);
    let mut lanes = vec![];
    for i in 0..4 {
        let idx = net.add_const(w4, i);
        let im = net.mul(idx, m);
        let im = net.slice(im, 0, 32);
        lanes.push(net.xor(base, im));
    }
    let hi = net.concat(lanes[3], lanes[2]);
    let lo = net.concat(lanes[1], lanes[0]);
    net.concat(hi, lo)
}

/// Builds the generator.
pub fn generator() -> Netlist {
    let mut n = Netlist::new();
    let net = &mut n;
    let start = net.input("start", 1);
    let count = net.input("count", 32);
    let length = net.input("length", 14);
    let dst = net.input("dst", 22);
    let tag = net.input("tag", 16);
    let seed = net.input("seed", 32);
    let done_in = net.input("done_in", 1);
    let ready = net.input("m_axis_tready", 1);
    let busy = net.register("busy", 1, 0);
    let sent = net.register("sent", 32, 0);
    let word = net.register("word", 10, 0); // 0 = header, then payload words
    let timing = net.register("timing", 1, 0);
    let cycles = net.register("cycles", 32, 0);
    let one = net.constant(1, 1);
    let zero = net.constant(0, 1);
    // Payload words of a packet: ceil(length / 16).
    let l15 = net.zext(length, 15);
    let l15 = net.add_const(l15, 15);
    let four = net.constant(4, 4);
    let words = net.shr(l15, four);
    let words = net.slice(words, 0, 10);
    let at_header = net.is_zero(word.q);
    let last_word = net.eq(word.q, words);
    let idle = net.not(busy.q);
    let go = net.and(start, idle);
    let nothing = net.is_zero(count);
    let not_nothing = net.not(nothing);
    let go = net.and(go, not_nothing);
    let valid = busy.q;
    let take = net.and(valid, ready);
    let packet_ends = net.and(take, last_word);
    // Header: destination, tag, length, packet index in `user`; the router fills the rest.
    let mut header = net.zext(dst, 128);
    for (name, value) in [("tag", tag), ("length", length), ("user", sent.q)] {
        let v = net.zext(value, 128);
        let v = net.shl_const(v, field(name).0);
        header = net.or(header, v);
    }
    let payload_index = net.add_const(word.q, -1);
    let payload_index = net.zext(payload_index, 32);
    let payload = pattern_word(net, seed, sent.q, payload_index);
    let data = net.mux(at_header, header, payload);
    // Keep: all bytes but in the last payload word, where length mod 16 (16 when it divides).
    let rem = net.slice(length, 0, 4);
    let ones = net.constant(0xFFFF, 16);
    let shifted = net.shl(ones, rem);
    let partial = net.not(shifted);
    let whole = net.is_zero(rem);
    let last_keep = net.mux(whole, ones, partial);
    let payload_last = net.not(at_header);
    let payload_last = net.and(payload_last, last_word);
    let keep = net.mux(payload_last, last_keep, ones);
    net.output("m_axis_tdata", data);
    net.output("m_axis_tkeep", keep);
    net.output("m_axis_tlast", last_word);
    net.output("m_axis_tvalid", valid);
    let w1 = net.add_const(word.q, 1);
    let zero10 = net.constant(0, 10);
    let w = net.mux(packet_ends, zero10, w1);
    let w = net.mux(take, w, word.q);
    let w = net.mux(go, zero10, w);
    net.drive(word, w);
    let s1 = net.add_const(sent.q, 1);
    let zero32 = net.constant(0, 32);
    let s = net.mux(packet_ends, s1, sent.q);
    let s = net.mux(go, zero32, s);
    net.drive(sent, s);
    let finishing = net.add_const(sent.q, 1);
    let finishing = net.eq(finishing, count);
    let finishing = net.and(packet_ends, finishing);
    let b = net.mux(go, one, busy.q);
    let b = net.mux(finishing, zero, b);
    net.drive(busy, b);
    // Performance counter: from the first header accepted until done_in.
    let first = net.and(take, at_header);
    let no_packet_yet = net.is_zero(sent.q);
    let first = net.and(first, no_packet_yet);
    let not_done = net.not(done_in);
    let t = net.mux(first, one, timing.q);
    let t = net.and(t, not_done);
    let t = net.mux(go, zero, t);
    net.drive(timing, t);
    let c1 = net.add_const(cycles.q, 1);
    let counting = net.or(timing.q, first);
    let counting = net.and(counting, not_done);
    let c = net.mux(counting, c1, cycles.q);
    let c = net.mux(go, zero32, c);
    net.drive(cycles, c);
    net.output("busy", busy.q);
    net.output("sent", sent.q);
    net.output("cycles", cycles.q);
    n
}

/// Builds the checker.
pub fn checker() -> Netlist {
    let mut n = Netlist::new();
    let net = &mut n;
    let data = net.input("s_axis_tdata", 128);
    let keep = net.input("s_axis_tkeep", 16);
    let last = net.input("s_axis_tlast", 1);
    let valid = net.input("s_axis_tvalid", 1);
    let seed = net.input("seed", 32);
    let expect = net.input("expected", 32);
    let clear = net.input("clear", 1);
    let one = net.constant(1, 1);
    net.output("s_axis_tready", one);
    let in_packet = net.register("in_packet", 1, 0);
    let index = net.register("packet_index", 32, 0);
    let word = net.register("word", 10, 0);
    let words_expected = net.register("words_expected", 10, 0);
    let packets = net.register("packets", 32, 0);
    let errors = net.register("errors", 32, 0);
    let bytes = net.register("bytes", 32, 0);
    let (user_lo, _) = field("user");
    let (len_lo, _) = field("length");
    let head = net.not(in_packet.q);
    let head = net.and(head, valid);
    let body = net.and(in_packet.q, valid);
    let h_user = net.slice(data, user_lo, 32);
    let h_len = net.slice(data, len_lo, 14);
    let l15 = net.zext(h_len, 15);
    let l15 = net.add_const(l15, 15);
    let four = net.constant(4, 4);
    let h_words = net.shr(l15, four);
    let h_words = net.slice(h_words, 0, 10);
    let word_index = net.zext(word.q, 32);
    let want = pattern_word(net, seed, index.q, word_index);
    // Compare only the bytes tkeep marks.
    let mut mask = None;
    for b in (0..16).rev() {
        let k = net.bit(keep, b);
        let ff = net.constant(0xFF, 8);
        let z = net.constant(0, 8);
        let byte = net.mux(k, ff, z);
        mask = Some(match mask {
            None => byte,
            Some(m) => net.concat(m, byte),
        });
    }
    let mask = mask.unwrap();
    let diff = net.xor(data, want);
    let diff = net.and(diff, mask);
    let wrong = net.nonzero(diff);
    let word_error = net.and(body, wrong);
    // Length: the packet must end exactly at its last payload word (or at the header).
    let header_only = net.is_zero(h_words);
    let head_len_bad = net.xor(last, header_only);
    let head_len_bad = net.and(head, head_len_bad);
    let w1 = net.add_const(word.q, 1);
    let at_end = net.eq(w1, words_expected.q);
    let body_len_bad = net.xor(last, at_end);
    let body_len_bad = net.and(body, body_len_bad);
    let len_bad = net.or(head_len_bad, body_len_bad);
    let e_now = net.or(word_error, len_bad);
    let e1 = net.add_const(errors.q, 1);
    let zero32 = net.constant(0, 32);
    let e = net.mux(e_now, e1, errors.q);
    let e = net.mux(clear, zero32, e);
    net.drive(errors, e);
    let not_last = net.not(last);
    let opens = net.and(head, not_last);
    let closes = net.and(body, last);
    let zero = net.constant(0, 1);
    let p = net.mux(opens, one, in_packet.q);
    let p = net.mux(closes, zero, p);
    let p = net.mux(clear, zero, p);
    net.drive(in_packet, p);
    net.hold_unless(index, head, h_user);
    net.hold_unless(words_expected, head, h_words);
    let zero10 = net.constant(0, 10);
    let wn = net.mux(body, w1, word.q);
    let wn = net.mux(head, zero10, wn);
    net.drive(word, wn);
    let ended = net.and(head, last);
    let ended = net.or(ended, closes);
    let p1 = net.add_const(packets.q, 1);
    let pk = net.mux(ended, p1, packets.q);
    let pk = net.mux(clear, zero32, pk);
    net.drive(packets, pk);
    // Payload bytes: the ones in tkeep.
    let mut count = net.constant(0, 32);
    for b in 0..16 {
        let k = net.bit(keep, b);
        let k = net.zext(k, 32);
        count = net.add(count, k);
    }
    let zero32b = net.constant(0, 32);
    let add = net.mux(body, count, zero32b);
    let by = net.add(bytes.q, add);
    let by = net.mux(clear, zero32, by);
    net.drive(bytes, by);
    let complete = net.eq(packets.q, expect);
    net.output("packets", packets.q);
    net.output("errors", errors.q);
    net.output("bytes", bytes.q);
    net.output("complete", complete);
    n
}



/// The generator against the software [`pattern`], then the checker fed by it with random
/// back-pressure: `count` packets of `length` bytes; `flip` flips one payload bit in flight.
/// Returns (packets sent, packets checked, errors, bytes, cycles counted).
pub fn loopback(count: u32, length: usize, seed: u32, flip: Option<(u32, usize)>, ready_percent: u64) -> Result<(u128, u128, u128, u128, u128), String> {
    use weft_hdl::netlist::eval::Evaluator;
    use weft_hdl::testbench::Rng;
    let mut g = Evaluator::new(generator());
    let mut c = Evaluator::new(checker());
    g.reset(2);
    c.reset(2);
    let dst = 0x15_4321u128 & ((1 << 22) - 1);
    for (name, v) in [("count", count as u128), ("length", length as u128), ("dst", dst), ("tag", 0xBEEF), ("seed", seed as u128)] {
        g.set_input(name, v);
    }
    c.set_input("seed", seed as u128);
    c.set_input("expected", count as u128);
    c.set_input("clear", 0);
    let mut rng = Rng::new(seed as u64);
    let (mut packet, mut word) = (0u32, 0usize);
    let words = length.div_ceil(16);
    for cycle in 0..(count as usize * (words + 1) * 20 + 100) {
        g.set_input("start", (cycle == 1) as u128);
        c.set_input("s_axis_tvalid", 0);
        c.settle();
        g.set_input("done_in", c.get_output("complete"));
        let ready = rng.chance(ready_percent);
        g.set_input("m_axis_tready", ready as u128);
        g.settle();
        if ready && g.get_output("m_axis_tvalid") == 1 {
            let mut data = g.get_output("m_axis_tdata");
            let last = g.get_output("m_axis_tlast");
            let keep = g.get_output("m_axis_tkeep");
            // The software reference: header fields, then the pattern, and the last flit's keep.
            if word == 0 {
                let h = crate::router::header::Header::unpack(data);
                if (h.length, h.tag, h.user, data & dst) != (length, 0xBEEF, packet, dst) {
                    return Err(format!("packet {packet}: header {h:?}"));
                }
            } else {
                for i in 0..4 {
                    let lane = (data >> (32 * i)) as u32;
                    let want = pattern(seed, packet, 4 * (word as u32 - 1) + i as u32);
                    let valid_bytes = if word == words && length % 16 != 0 { length % 16 } else { 16 };
                    let lane_bytes = valid_bytes.saturating_sub(4 * i).min(4);
                    let m = if lane_bytes == 4 { u32::MAX } else { (1u32 << (8 * lane_bytes)) - 1 };
                    if lane & m != want & m {
                        return Err(format!("packet {packet} word {word} lane {i}: {lane:#x}, pattern says {want:#x}"));
                    }
                }
                let valid_bytes = if word == words && length % 16 != 0 { length % 16 } else { 16 };
                if keep != (1u128 << valid_bytes) - 1 {
                    return Err(format!("packet {packet} word {word}: tkeep {keep:#x}"));
                }
            }
            if (last == 1) != (word == words) {
                return Err(format!("packet {packet}: tlast at word {word} of {words}"));
            }
            if flip == Some((packet, word)) {
                data ^= 1 << 77;
            }
            c.set_input("s_axis_tdata", data);
            c.set_input("s_axis_tkeep", keep);
            c.set_input("s_axis_tlast", last);
            c.set_input("s_axis_tvalid", 1);
            word += 1;
            if last == 1 {
                packet += 1;
                word = 0;
            }
        }
        c.settle();
        g.clock(false);
        c.clock(false);
    }
    g.settle();
    c.settle();
    Ok((g.get_output("sent"), c.get_output("packets"), c.get_output("errors"), c.get_output("bytes"), g.get_output("cycles")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generator_follows_the_pattern_and_checker_counts_clean_packets() {
        for (count, length, ready) in [(40, 100, 60), (30, 16, 100), (20, 0, 50), (10, 1024, 80)] {
            let (sent, checked, errors, bytes, cycles) = loopback(count, length, 0x1234_5678, None, ready).unwrap();
            assert_eq!((sent, checked, errors, bytes), (count as u128, count as u128, 0, (count as usize * length) as u128), "{count} x {length} B");
            // One beat per cycle when ready: the counter covers at least every beat sent.
            let beats = count as u128 * (1 + length.div_ceil(16)) as u128;
            assert!(cycles >= beats, "{cycles} cycles for {beats} beats");
        }
    }

    #[test]
    fn checker_counts_a_flipped_payload_bit() {
        let (_, checked, errors, _, _) = loopback(20, 64, 7, Some((5, 2)), 70).unwrap();
        assert_eq!((checked, errors), (20, 1));
    }
}

fn summary((sent, checked, errors, bytes, cycles): (u128, u128, u128, u128, u128)) -> String {
    format!("{sent} sent, {checked} checked, {errors} errors, {bytes} bytes, {cycles} cycles")
}

/// The shipped self-test blocks.
pub fn shipped() -> Vec<crate::catalog::Shipped> {
    use weft_hdl::export::{export_netlist, ModuleSpec};
    let spec = |name: &str, summary: &str| ModuleSpec {
        family: "selftest",
        name: name.into(),
        summary: summary.into(),
        parameters: vec![("data_width".into(), "128".into()), ("pattern".into(), "lane = seed ^ k*0x9E3779B9 ^ index*0x85EBCA6B (k = packet, in header user)".into())],
        hidden_ports: vec![],
    };
    vec![
        crate::catalog::Shipped {
            spec: spec("selftest_generator_w128", "self-test packet generator: count, size, destination, tag and pattern seed from ports; cycles from first send to done"),
            verilog: |spec| export_netlist(spec, &generator()),
            testbench: || {
                let clean = loopback(50, 200, 0xC0FFEE, None, 70)?;
                if clean.2 != 0 || clean.1 != 50 {
                    return Err(format!("loopback: {clean:?}"));
                }
                Ok(format!("50 packets of 200 B against the software pattern: {}", summary(clean)))
            },
        },
        crate::catalog::Shipped {
            spec: spec("selftest_checker_w128", "self-test packet checker: recomputes the generator's pattern, counts packets, bytes and errors"),
            verilog: |spec| export_netlist(spec, &checker()),
            testbench: || {
                let flipped = loopback(30, 100, 99, Some((7, 3)), 60)?;
                if (flipped.1, flipped.2) != (30, 1) {
                    return Err(format!("one flipped payload bit: {flipped:?}"));
                }
                Ok(format!("one flipped payload bit in 30 packets: {}", summary(flipped)))
            },
        },
    ]
}
