//! Self-test IP for hardware without a host in the loop: a packet generator and a packet
//! checker, as netlists, configured from ports a register window drives.
//!
//! Generator (`selftest_generator_w128`): on a `start` pulse it sends `count` packets of
//! `length` payload bytes to `dst` (header bits 21:0: dst_x, dst_y, dst_z, dst_port) with `tag`;
//! packet k carries k in the header's `user` field, and payload word w lane i (32 bits) holds
//! [`pattern`]`(seed, k, 4w + i)`. Outputs `busy`, `sent`, and `cycles`: clock cycles from the
//! first header sent until `done_in` rises (the checker's `complete`, for a loop through the
//! fabric) — the performance counter. With `window` > 0 the packets go out in messages of
//! `window` packets, and a message starts only once `received` (the local checker's packet
//! count) has reached the packets sent before it: each message waits for the whole of the
//! neighbour's previous one, as seed 001's send-then-receive kernel does.
//!
//! Checker (`selftest_checker_w128`): always ready; for every packet it recomputes the pattern
//! from the header's `user` field and `seed`, counts `packets`, payload `bytes`, and `errors`
//! (each payload word that differs, and each packet whose beats disagree with its `length`);
//! `complete` is high once `packets` reaches `expected`.

use crate::Error;
use weft_hdl::netlist::{Design, Netlist, Sig};
use weft_hdl::sig;

use crate::axil::byte_mask;
use crate::axis::gearbox::from_words;
use crate::router::header::field;

/// The 32-bit payload lane `index` of packet `packet` for `seed` (the software reference).
pub fn pattern(seed: u32, packet: u32, index: u32) -> u32 {
    seed ^ packet.wrapping_mul(0x9E37_79B9) ^ index.wrapping_mul(0x85EB_CA6B)
}

/// The same pattern as netlist logic for payload word `word` of `lanes` 32-bit lanes (lane 0
/// least significant).
fn pattern_word<'d>(d: &'d Design, seed: Sig<'d>, packet: Sig<'d>, word: Sig<'d>, lanes: usize) -> Sig<'d> {
    let times = |x: Sig<'d>, k: u128| x.mul(d.lit(k, 32)).bits(0, 32);
    let base = seed ^ times(packet, 0x9E37_79B9);
    let first = word.shl_const(lanes.trailing_zeros() as usize);
    let values: Vec<Sig> = (0..lanes as u32).map(|i| base ^ times(first + i, 0x85EB_CA6B)).collect();
    from_words(d, &values)
}

/// Payload words of `width` bits in a packet of `length` bytes: ceil(length · 8 / width), in 10 bits.
fn payload_words(length: Sig, width: usize) -> Sig {
    let bytes = width / 8;
    let shift = bytes.trailing_zeros() as usize;
    (length.zext((shift + 10).max(15)) + (bytes as u32 - 1)).bits(shift, 10)
}

fn check_width(width: usize) {
    assert!([128, 256, 512].contains(&width), "self-test width {width}: 128, 256 or 512");
}

/// Builds the generator for a `width`-bit port (128, 256 or 512).
pub fn generator(width: usize) -> Netlist {
    check_width(width);
    let (lanes, bytes) = (width / 32, width / 8);
    let d = Design::new();
    let start = d.input("start", 1);
    let count = d.input("count", 32);
    let length = d.input("length", 14);
    let dst = d.input("dst", 22);
    let tag = d.input("tag", 16);
    let seed = d.input("seed", 32);
    let done_in = d.input("done_in", 1);
    let window = d.input("window", 32);
    let received = d.input("received", 32);
    let ready = d.input("m_axis_tready", 1);
    let busy = d.reg("busy", 1, 0);
    let sent = d.reg("sent", 32, 0);
    let word = d.reg("word", 10, 0); // 0 = header, then payload words
    let timing = d.reg("timing", 1, 0);
    let cycles = d.reg("cycles", 32, 0);
    let boundary = d.reg("message_start", 32, 0); // index of the next message's first packet

    d.section("packets: a start pulse sends `count` of them, one beat per accepted cycle");
    sig!(words = payload_words(length, width));
    sig!(at_header = word.q.is_zero(), last_word = word.q.eq(words));
    sig!(go = start & !busy.q & count.any());
    // Messages of `window` packets (0: no limit): the first packet of a message waits until every
    // packet sent before it has been matched by one received — send, then receive, as seed 001.
    sig!(message_first = window.any() & sent.q.eq(boundary.q));
    sig!(may_start = !message_first | !received.lt(sent.q));
    sig!(valid = busy.q & (!at_header | may_start));
    sig!(take = valid & ready, packet_ends = take & last_word);
    boundary.next_when(take & at_header & message_first, boundary.q + window).clear_when(go);
    sig!(finishing = packet_ends & (sent.q + 1u32).eq(count));
    word.next_when(take, word.q + 1u32).clear_when(packet_ends).clear_when(go);
    sent.next_when(packet_ends, sent.q + 1u32).clear_when(go);
    busy.set_when(go).clear_when(finishing);

    d.section("beats: the header, then the pattern");
    // Header: destination, tag, length, packet index in `user`; the router fills the rest.
    let fields = [("tag", tag), ("length", length), ("user", sent.q)];
    sig!(header = fields.iter().fold(dst.zext(128), |h, (name, v)| h | v.zext(128).shl_const(field(name).0)));
    let payload = pattern_word(&d, seed, sent.q, (word.q - 1u32).zext(32), lanes).named("payload");
    d.output("m_axis_tdata", at_header.mux(header.zext(width), payload));
    // Keep: all bytes but in the last payload word, where length mod bytes (all when it divides).
    let all = d.lit((1u128 << bytes) - 1, bytes);
    sig!(tail_bytes = length.bits(0, bytes.trailing_zeros() as usize));
    let last_keep = tail_bytes.is_zero().mux(all, !all.shl(tail_bytes));
    d.output("m_axis_tkeep", (!at_header & last_word).mux(last_keep, all));
    d.output("m_axis_tlast", last_word);
    d.output("m_axis_tvalid", valid);

    d.section("performance counter: from the first header accepted until done_in");
    sig!(first = take & at_header & sent.q.is_zero());
    timing.set_when(first).clear_when(done_in).clear_when(go);
    cycles.next_when((timing.q | first) & !done_in, cycles.q + 1u32).clear_when(go);
    d.output("busy", busy.q);
    d.output("sent", sent.q);
    d.output("cycles", cycles.q);
    d.finish()
}

/// Builds the checker for a `width`-bit port (128, 256 or 512).
pub fn checker(width: usize) -> Netlist {
    check_width(width);
    let (lanes, bytes) = (width / 32, width / 8);
    let d = Design::new();
    let data = d.input("s_axis_tdata", width);
    let keep = d.input("s_axis_tkeep", bytes);
    let last = d.input("s_axis_tlast", 1);
    let valid = d.input("s_axis_tvalid", 1);
    let seed = d.input("seed", 32);
    let expect = d.input("expected", 32);
    let clear = d.input("clear", 1);
    d.output("s_axis_tready", d.lit(1, 1));
    let in_packet = d.reg("in_packet", 1, 0);
    let index = d.reg("packet_index", 32, 0);
    let word = d.reg("word", 10, 0);
    let words_expected = d.reg("words_expected", 10, 0);
    let packets = d.reg("packets", 32, 0);
    let errors = d.reg("errors", 32, 0);
    let bytes_seen = d.reg("bytes", 32, 0);

    d.section("packet framing: a header beat, then payload beats");
    sig!(head = !in_packet.q & valid, body = in_packet.q & valid);
    let h_user = data.bits(field("user").0, 32);
    sig!(h_words = payload_words(data.bits(field("length").0, 14), width));
    sig!(next_word = word.q + 1u32);
    sig!(opens = head & !last, closes = body & last);
    in_packet.set_when(opens).clear_when(closes).clear_when(clear);
    index.next_when(head, h_user);
    words_expected.next_when(head, h_words);
    word.next_when(body, next_word).clear_when(head);

    d.section("errors: payload against the pattern, packet length against the header");
    let want = pattern_word(&d, seed, index.q, word.q.zext(32), lanes).named("want");
    // Compare only the bytes tkeep marks.
    let mask = byte_mask(&d, keep).named("keep_mask");
    let differs = ((data ^ want) & mask).any();
    sig!(word_error = body & differs);
    // Length: the packet must end exactly at its last payload word (or at the header).
    sig!(head_len_bad = head & (last ^ h_words.is_zero()));
    sig!(body_len_bad = body & (last ^ next_word.eq(words_expected.q)));
    errors.next_when(word_error | head_len_bad | body_len_bad, errors.q + 1u32).clear_when(clear);

    d.section("packets and payload bytes (the ones in tkeep)");
    packets.next_when((head & last) | closes, packets.q + 1u32).clear_when(clear);
    let keep_ones = (0..bytes).map(|b| keep.bit(b).zext(32)).fold(d.lit(0, 32), |a, b| a + b);
    bytes_seen.next_when(body, bytes_seen.q + keep_ones).clear_when(clear);
    d.output("packets", packets.q);
    d.output("errors", errors.q);
    d.output("bytes", bytes_seen.q);
    d.output("complete", packets.q.eq(expect));
    d.finish()
}

/// The generator against the software [`pattern`], then the checker fed by it with random
/// back-pressure: `count` packets of `length` bytes; `flip` flips one payload bit in flight.
/// Returns (packets sent, packets checked, errors, bytes, cycles counted).
pub fn loopback(width: usize, count: u32, length: usize, seed: u32, flip: Option<(u32, usize)>, ready_percent: u64) -> Result<(u128, u128, u128, u128, u128), Error> {
    use weft_hdl::netlist::eval::Evaluator;
    use weft_hdl::testbench::Rng;
    let mut g = Evaluator::new(generator(width));
    let mut c = Evaluator::new(checker(width));
    let (lanes, bytes) = (width / 32, width / 8);
    g.reset(2);
    c.reset(2);
    let dst = 0x15_4321u128 & ((1 << 22) - 1);
    for (name, v) in [("count", count as u128), ("length", length as u128), ("dst", dst), ("tag", 0xBEEF), ("seed", seed as u128), ("window", 0), ("received", 0)] {
        g.set_input(name, v);
    }
    c.set_input("seed", seed as u128);
    c.set_input("expected", count as u128);
    c.set_input("clear", 0);
    let mut rng = Rng::new(seed as u64);
    let (mut packet, mut word) = (0u32, 0usize);
    let words = length.div_ceil(bytes);
    for cycle in 0..(count as usize * (words + 1) * 20 + 100) {
        g.set_input("start", (cycle == 1) as u128);
        c.set_input("s_axis_tvalid", 0);
        c.settle();
        g.set_input("done_in", c.get_output("complete"));
        let ready = rng.chance(ready_percent);
        g.set_input("m_axis_tready", ready as u128);
        g.settle();
        if ready && g.get_output("m_axis_tvalid") == 1 {
            let mut beat = g.get_output_big("m_axis_tdata");
            let data = g.get_output_bits("m_axis_tdata", 0, 128);
            let last = g.get_output("m_axis_tlast");
            let keep = g.get_output("m_axis_tkeep");
            // The software reference: header fields, then the pattern, and the last flit's keep.
            if word == 0 {
                let h = crate::router::header::Header::unpack(data);
                if (h.length, h.tag, h.user, data & dst) != (length, 0xBEEF, packet, dst) {
                    return Err(Error::Mismatch(format!("packet {packet}: header {h:?}")));
                }
            } else {
                for i in 0..lanes {
                    let lane = g.get_output_bits("m_axis_tdata", 32 * i, 32) as u32;
                    let want = pattern(seed, packet, (lanes * (word - 1) + i) as u32);
                    let valid_bytes = if word == words && !length.is_multiple_of(bytes) { length % bytes } else { bytes };
                    let lane_bytes = valid_bytes.saturating_sub(4 * i).min(4);
                    let m = if lane_bytes == 4 { u32::MAX } else { (1u32 << (8 * lane_bytes)) - 1 };
                    if lane & m != want & m {
                        return Err(Error::Mismatch(format!("packet {packet} word {word} lane {i}: {lane:#x}, pattern says {want:#x}")));
                    }
                }
                let valid_bytes = if word == words && !length.is_multiple_of(bytes) { length % bytes } else { bytes };
                if keep != (1u128 << valid_bytes) - 1 {
                    return Err(Error::Mismatch(format!("packet {packet} word {word}: tkeep {keep:#x}")));
                }
            }
            if (last == 1) != (word == words) {
                return Err(Error::Mismatch(format!("packet {packet}: tlast at word {word} of {words}")));
            }
            if flip == Some((packet, word)) {
                beat ^= num_bigint::BigUint::from(1u8) << (width - 128 + 77);
            }
            c.set_big(c.input("s_axis_tdata").unwrap(), &beat);
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

fn summary((sent, checked, errors, bytes, cycles): (u128, u128, u128, u128, u128)) -> String {
    format!("{sent} sent, {checked} checked, {errors} errors, {bytes} bytes, {cycles} cycles")
}

/// The shipped self-test blocks.
pub fn shipped() -> Vec<crate::shipped::Shipped> {
    use weft_hdl::export::{export_netlist, ModuleSpec};
    let spec = |name: &str, summary: &str| ModuleSpec {
        family: "selftest",
        name: name.into(),
        summary: summary.into(),
        parameters: vec![("data_width".into(), "128".into()), ("pattern".into(), "lane = seed ^ k*0x9E3779B9 ^ index*0x85EBCA6B (k = packet, in header user)".into())],
        hidden_ports: vec![],
    };
    vec![
        crate::shipped::Shipped::new(
            spec("selftest_generator_w128", "self-test packet generator: count, size, destination, tag and pattern seed from ports; cycles from first send to done"),
            |spec| export_netlist(spec, &generator(128)),
            || {
                let clean = loopback(128, 50, 200, 0xC0FFEE, None, 70)?;
                if clean.2 != 0 || clean.1 != 50 {
                    return Err(Error::Mismatch(format!("loopback: {clean:?}")));
                }
                Ok(format!("50 packets of 200 B against the software pattern: {}", summary(clean)))
            },
        ),
        crate::shipped::Shipped::new(
            spec("selftest_checker_w128", "self-test packet checker: recomputes the generator's pattern, counts packets, bytes and errors"),
            |spec| export_netlist(spec, &checker(128)),
            || {
                let flipped = loopback(128, 30, 100, 99, Some((7, 3)), 60)?;
                if (flipped.1, flipped.2) != (30, 1) {
                    return Err(Error::Mismatch(format!("one flipped payload bit: {flipped:?}")));
                }
                Ok(format!("one flipped payload bit in 30 packets: {}", summary(flipped)))
            },
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generator_follows_the_pattern_and_checker_counts_clean_packets() {
        for width in [128, 256, 512] {
            for (count, length, ready) in [(40, 100, 60), (30, 16, 100), (20, 0, 50), (10, 1024, 80), (12, 33, 70)] {
                let (sent, checked, errors, bytes, cycles) = loopback(width, count, length, 0x1234_5678, None, ready).unwrap();
                assert_eq!((sent, checked, errors, bytes), (count as u128, count as u128, 0, (count as usize * length) as u128), "{width} bits: {count} x {length} B");
                // One beat per cycle when ready: the counter covers at least every beat sent.
                let beats = count as u128 * (1 + length.div_ceil(width / 8)) as u128;
                assert!(cycles >= beats, "{cycles} cycles for {beats} beats");
            }
        }
    }

    /// With a window of 2 the generator sends messages of two packets, and starts each message
    /// only once every packet sent before it has been matched by one received.
    #[test]
    fn generator_waits_for_whole_messages() {
        use weft_hdl::netlist::eval::Evaluator;
        let mut g = Evaluator::new(generator(256));
        g.reset(2);
        for (name, v) in [("count", 10), ("length", 40), ("dst", 1), ("tag", 0), ("seed", 3), ("window", 2), ("received", 0), ("done_in", 0), ("m_axis_tready", 1)] {
            g.set_input(name, v);
        }
        let mut packets = 0;
        for cycle in 0..260 {
            let received = cycle / 50;
            g.set_input("start", (cycle == 1) as u128);
            g.set_input("received", received as u128);
            g.settle();
            if g.get_output("m_axis_tvalid") == 1 && g.get_output("m_axis_tlast") == 1 {
                packets += 1;
            }
            // Message m (packets 2m, 2m + 1) may start once `received` >= 2m.
            assert!(packets <= 2 * (received / 2 + 1), "cycle {cycle}: {packets} packets sent with {received} received");
            g.clock(false);
        }
        // Received reaches 0, 2 and 4 (at cycles 0, 100, 200): three messages of two packets.
        assert_eq!(packets, 6, "one message per two packets received");
    }

    #[test]
    fn checker_counts_a_flipped_payload_bit() {
        for width in [128, 256, 512] {
            let (_, checked, errors, _, _) = loopback(width, 20, 96, 7, Some((5, 1)), 70).unwrap();
            assert_eq!((checked, errors), (20, 1), "{width} bits");
        }
    }
}
