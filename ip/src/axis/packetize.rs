//! Kernel streams to packets and back, as netlists: the aggregator forges a header in front of
//! each kernel frame from its side-band fields, the dispatcher strips the header of each packet
//! and delivers the payload to the kernel channel its `tag` names.
//!
//! Aggregator (`axis_aggregator_w128`): `s_axis_tdata[127:0]`, `tkeep`, `tlast` (a frame of at
//! least one beat), and side-band `s_axis_tuser[51:0]` = `dst_x | dst_y << 6 | dst_z << 12 |
//! dst_port << 18 | tag << 22 | length << 38` ([`SIDEBAND`]), sampled at a frame's first beat.
//! Out: a packet (DESIGN.md packet format) — the header beat, then the frame's beats unchanged. The router
//! fills `src_*`, `hops` and `ecc`, and trusts `length` (it pads or cuts a frame that disagrees).
//!
//! Dispatcher (`axis_dispatcher_w128_c<N>`): packets in; payload beats out on `m_axis_ch<k>_*`
//! for `k = tag` (`tag < N`), with `tlast` and `tkeep` as they came. A packet with a tag of N or
//! more is dropped whole and counted in `dropped`; a header-only packet delivers nothing.

use weft_hdl::netlist::{Netlist, Wire};

use crate::router::header::field;

/// Side-band layout of the aggregator's `s_axis_tuser`: `(name, lo, width)`.
pub const SIDEBAND: [(&str, usize, usize); 6] =
    [("dst_x", 0, 6), ("dst_y", 6, 6), ("dst_z", 12, 6), ("dst_port", 18, 4), ("tag", 22, 16), ("length", 38, 14)];

pub fn sideband_width() -> usize {
    let (_, lo, w) = SIDEBAND[SIDEBAND.len() - 1];
    lo + w
}

/// Builds the aggregator: a header beat in front of every frame.
pub fn aggregator() -> Netlist {
    let mut n = Netlist::new();
    let net = &mut n;
    let data = net.input("s_axis_tdata", 128);
    let keep = net.input("s_axis_tkeep", 16);
    let last = net.input("s_axis_tlast", 1);
    let user = net.input("s_axis_tuser", sideband_width());
    let valid = net.input("s_axis_tvalid", 1);
    let ready = net.input("m_axis_tready", 1);
    // The header goes out in the cycle the frame's first beat is offered; that beat waits.
    let in_frame = net.register("in_frame", 1, 0);
    let out_valid = net.register("out_valid", 1, 0);
    let out_data = net.register("out_data", 128, 0);
    let out_keep = net.register("out_keep", 16, 0);
    let out_last = net.register("out_last", 1, 0);
    let mut header = net.constant(0, 128);
    for (name, lo, w) in SIDEBAND {
        let v = net.slice(user, lo, w);
        let v = net.zext(v, 128);
        let v = net.shl_const(v, field(name).0);
        header = net.or(header, v);
    }
    let free = net.not(out_valid.q);
    let free = net.or(free, ready);
    let head_now = net.not(in_frame.q);
    let head_now = net.and(head_now, valid);
    let load = net.and(valid, free);
    let send_header = net.and(load, head_now);
    let send_beat = net.not(head_now);
    let send_beat = net.and(load, send_beat);
    let s_ready = net.and(free, in_frame.q);
    net.output("s_axis_tready", s_ready);
    let all = net.constant(0xFFFF, 16);
    let zero = net.constant(0, 1);
    let d = net.mux(send_header, header, data);
    let k = net.mux(send_header, all, keep);
    let l = net.mux(send_header, zero, last);
    net.hold_unless(out_data, load, d);
    net.hold_unless(out_keep, load, k);
    net.hold_unless(out_last, load, l);
    let stay = net.not(ready);
    let stay = net.and(out_valid.q, stay);
    let v = net.or(load, stay);
    net.drive(out_valid, v);
    let one = net.constant(1, 1);
    let f = net.mux(send_header, one, in_frame.q);
    let ends = net.and(send_beat, last);
    let f = net.mux(ends, zero, f);
    net.drive(in_frame, f);
    net.output("m_axis_tdata", out_data.q);
    net.output("m_axis_tkeep", out_keep.q);
    net.output("m_axis_tlast", out_last.q);
    net.output("m_axis_tvalid", out_valid.q);
    n
}

/// Builds the dispatcher for `channels` kernel streams (1..=16).
pub fn dispatcher(channels: usize) -> Result<Netlist, String> {
    if !(1..=16).contains(&channels) {
        return Err(format!("dispatcher `channels` = {channels}: allowed range is 1 ..= 16"));
    }
    let mut n = Netlist::new();
    let net = &mut n;
    let data = net.input("s_axis_tdata", 128);
    let keep = net.input("s_axis_tkeep", 16);
    let last = net.input("s_axis_tlast", 1);
    let valid = net.input("s_axis_tvalid", 1);
    let readies: Vec<Wire> = (0..channels).map(|k| net.input(&format!("m_axis_ch{k}_tready"), 1)).collect();
    let (tag_lo, _) = field("tag");
    let in_packet = net.register("in_packet", 1, 0);
    let channel = net.register("channel", 5, 0);
    let dropping = net.register("dropping", 1, 0);
    let dropped = net.register("dropped", 32, 0);
    let tag = net.slice(data, tag_lo, 16);
    let limit = net.constant(channels as u128, 16);
    let known = net.ult(tag, limit);
    let head = net.not(in_packet.q);
    let head = net.and(head, valid);
    // Payload beats wait for their channel; the header and dropped beats are taken at once.
    let mut ready_sel = net.constant(0, 1);
    for (k, r) in readies.iter().enumerate() {
        let kc = net.constant(k as u128, 5);
        let here = net.eq(channel.q, kc);
        let t = net.and(here, *r);
        ready_sel = net.or(ready_sel, t);
    }
    let passes = net.not(dropping.q);
    let passes = net.and(in_packet.q, passes);
    let take_payload = net.and(passes, ready_sel);
    let discard = net.and(in_packet.q, dropping.q);
    let s_ready = net.or(take_payload, discard);
    let s_ready = net.or(s_ready, head);
    let not_packet = net.not(in_packet.q);
    let s_ready = net.or(s_ready, not_packet);
    net.output("s_axis_tready", s_ready);
    let took = net.and(valid, s_ready);
    // State: a header opens a packet unless it is also its last beat.
    let not_last = net.not(last);
    let opens = net.and(head, not_last);
    let body_end = net.and(took, last);
    let body_end = net.and(body_end, in_packet.q);
    let one = net.constant(1, 1);
    let zero = net.constant(0, 1);
    let p = net.mux(opens, one, in_packet.q);
    let p = net.mux(body_end, zero, p);
    net.drive(in_packet, p);
    let tag5 = net.slice(tag, 0, 5);
    net.hold_unless(channel, head, tag5);
    let unknown = net.not(known);
    net.hold_unless(dropping, head, unknown);
    let drop_event = net.and(head, unknown);
    let d1 = net.add_const(dropped.q, 1);
    net.hold_unless(dropped, drop_event, d1);
    net.output("dropped", dropped.q);
    for k in 0..channels {
        let kc = net.constant(k as u128, 5);
        let here = net.eq(channel.q, kc);
        let v = net.and(passes, valid);
        let v = net.and(v, here);
        let m = format!("m_axis_ch{k}");
        net.output(&format!("{m}_tdata"), data);
        net.output(&format!("{m}_tkeep"), keep);
        net.output(&format!("{m}_tlast"), last);
        net.output(&format!("{m}_tvalid"), v);
    }
    Ok(n)
}




type Beats = Vec<(u128, u128, bool)>;

/// Built-in-simulator check of the aggregator: `frames` random frames with random side-band
/// under random back-pressure; each must leave as the header the side-band describes, then its
/// beats unchanged.
pub fn check_aggregator(frames: usize, seed: u64) -> Result<String, String> {
    use crate::router::header::Header;
    use weft_hdl::testbench::Rng;
    let mut e = weft_hdl::netlist::eval::Evaluator::new(aggregator());
    e.reset(2);
    let mut rng = Rng::new(seed);
    let frames: Vec<(u128, Vec<(u128, u128)>)> = (0..frames)
        .map(|_| {
            let side = (rng.next_u64() as u128 | (rng.next_u64() as u128) << 64) & ((1 << sideband_width()) - 1);
            let beats = (0..1 + rng.below(5)).map(|_| ((rng.next_u64() as u128) << 64 | rng.next_u64() as u128, rng.below(1 << 16) as u128)).collect();
            (side, beats)
        })
        .collect();
    let mut expected: Beats = vec![];
    for (side, beats) in &frames {
        let field_of = |name: &str| {
            let (_, lo, w) = SIDEBAND.iter().find(|f| f.0 == name).unwrap();
            (side >> lo) as usize & ((1 << w) - 1)
        };
        let h = Header { dst: [field_of("dst_x"), field_of("dst_y"), field_of("dst_z")], dst_port: field_of("dst_port"), tag: field_of("tag") as u16, length: field_of("length"), ..Default::default() };
        expected.push((h.pack() & ((1 << 120) - 1), 0xFFFF, false));
        for (i, (d, k)) in beats.iter().enumerate() {
            expected.push((*d, *k, i + 1 == beats.len()));
        }
    }
    let (mut frame, mut beat, mut got, mut cycle) = (0usize, 0usize, 0usize, 0u64);
    while got < expected.len() {
        cycle += 1;
        if cycle > 100 * expected.len() as u64 + 100 {
            return Err(format!("seed {seed}: timed out after {got} of {} beats", expected.len()));
        }
        let offering = frame < frames.len() && rng.chance(70);
        let ready = rng.chance(60);
        if offering {
            let (side, beats) = &frames[frame];
            e.set_input("s_axis_tdata", beats[beat].0);
            e.set_input("s_axis_tkeep", beats[beat].1);
            e.set_input("s_axis_tlast", (beat + 1 == beats.len()) as u128);
            e.set_input("s_axis_tuser", *side);
        }
        e.set_input("s_axis_tvalid", offering as u128);
        e.set_input("m_axis_tready", ready as u128);
        e.settle();
        if offering && e.get_output("s_axis_tready") == 1 {
            beat += 1;
            if beat == frames[frame].1.len() {
                frame += 1;
                beat = 0;
            }
        }
        if ready && e.get_output("m_axis_tvalid") == 1 {
            let out = (e.get_output("m_axis_tdata"), e.get_output("m_axis_tkeep"), e.get_output("m_axis_tlast") == 1);
            if out != expected[got] {
                return Err(format!("seed {seed}, cycle {cycle}: beat {got} is {out:x?}, want {:x?}", expected[got]));
            }
            got += 1;
        }
        e.clock(false);
    }
    Ok(format!("{} frames ({} beats out) in {cycle} cycles, random valid 70 % / ready 60 %", frames.len(), expected.len()))
}

/// Built-in-simulator check of the dispatcher: random packets with tags inside and outside the
/// channel range, random readiness per channel; every channel must get exactly the payloads
/// tagged for it, in order, and the others must be dropped whole and counted.
pub fn check_dispatcher(channels: usize, packets: usize, seed: u64) -> Result<String, String> {
    use crate::router::header::Header;
    use weft_hdl::testbench::Rng;
    let mut e = weft_hdl::netlist::eval::Evaluator::new(dispatcher(channels)?);
    e.reset(2);
    let mut rng = Rng::new(seed);
    let packets: Vec<(usize, Vec<(u128, u128)>)> = (0..packets)
        .map(|_| {
            let tag = rng.below(channels as u64 + 2) as usize;
            let beats = (0..rng.below(5)).map(|_| ((rng.next_u64() as u128) << 64 | rng.next_u64() as u128, rng.below(1 << 16) as u128)).collect();
            (tag, beats)
        })
        .collect();
    let mut stream: Beats = vec![];
    let mut want: Vec<Beats> = vec![vec![]; channels];
    for (tag, beats) in &packets {
        let h = Header { tag: *tag as u16, length: 16 * beats.len(), ..Default::default() }.pack();
        stream.push((h, 0xFFFF, beats.is_empty()));
        for (i, (d, k)) in beats.iter().enumerate() {
            stream.push((*d, *k, i + 1 == beats.len()));
            if *tag < channels {
                want[*tag].push((*d, *k, i + 1 == beats.len()));
            }
        }
    }
    let mut got: Vec<Beats> = vec![vec![]; channels];
    let (mut sent, mut cycle) = (0, 0u64);
    while sent < stream.len() || got.iter().map(|g| g.len()).sum::<usize>() < want.iter().map(|w| w.len()).sum::<usize>() {
        cycle += 1;
        if cycle > 100 * stream.len() as u64 + 100 {
            return Err(format!("seed {seed}: timed out with {sent} of {} beats in", stream.len()));
        }
        let offering = sent < stream.len() && rng.chance(70);
        if offering {
            e.set_input("s_axis_tdata", stream[sent].0);
            e.set_input("s_axis_tkeep", stream[sent].1);
            e.set_input("s_axis_tlast", stream[sent].2 as u128);
        }
        e.set_input("s_axis_tvalid", offering as u128);
        let readies: Vec<bool> = (0..channels).map(|_| rng.chance(50)).collect();
        for (k, r) in readies.iter().enumerate() {
            e.set_input(&format!("m_axis_ch{k}_tready"), *r as u128);
        }
        e.settle();
        if offering && e.get_output("s_axis_tready") == 1 {
            sent += 1;
        }
        for k in 0..channels {
            if readies[k] && e.get_output(&format!("m_axis_ch{k}_tvalid")) == 1 {
                let m = format!("m_axis_ch{k}");
                got[k].push((e.get_output(&format!("{m}_tdata")), e.get_output(&format!("{m}_tkeep")), e.get_output(&format!("{m}_tlast")) == 1));
            }
        }
        e.clock(false);
    }
    if got != want {
        return Err(format!("seed {seed}: a channel got other beats than the packets tagged for it"));
    }
    let dropped = packets.iter().filter(|p| p.0 >= channels).count() as u128;
    e.settle();
    if e.get_output("dropped") != dropped {
        return Err(format!("seed {seed}: dropped counter {} for {dropped} packets with unknown tags", e.get_output("dropped")));
    }
    Ok(format!("{} packets to {channels} channels ({dropped} with unknown tags dropped) in {cycle} cycles", packets.len()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aggregator_forges_the_header_and_keeps_the_frame() {
        check_aggregator(300, 3).unwrap();
    }

    #[test]
    fn dispatcher_delivers_by_tag_and_drops_unknown_tags() {
        check_dispatcher(3, 400, 8).unwrap();
        check_dispatcher(1, 100, 9).unwrap();
        assert!(dispatcher(17).unwrap_err().contains("1 ..= 16"));
    }
}
