//! Kernel streams to packets and back, as netlists: the aggregator forges a header in front of
//! each kernel frame from its side-band fields, the dispatcher strips the header of each packet
//! and delivers the payload to the kernel channel its `tag` names.
//!
//! Aggregator (`axis_aggregator_w128`): `s_axis_tdata[127:0]`, `tkeep`, `tlast` (a frame of at
//! least one beat), and side-band `s_axis_tuser[51:0]` = `dst_x | dst_y << 6 | dst_z << 12 |
//! dst_port << 18 | tag << 22 | length << 38` ([`SIDEBAND`]), sampled at a frame's first beat.
//! Out: a packet (docs/contract.md, packet format) — the header beat, then the frame's beats unchanged. The router
//! fills `src_*`, `hops` and `ecc`, and trusts `length` (it pads or cuts a frame that disagrees).
//!
//! Dispatcher (`axis_dispatcher_w128_c<N>`): packets in; payload beats out on `m_axis_ch<k>_*`
//! for `k = tag` (`tag < N`), with `tlast` and `tkeep` as they came. A packet with a tag of N or
//! more is dropped whole and counted in `dropped`; a header-only packet delivers nothing.

use crate::Error;
use weft_hdl::netlist::{Axis, AxisShape, Design, Netlist, Sig, Source};
use weft_hdl::sig;

use crate::router::header::field;

/// Side-band layout of the aggregator's `s_axis_tuser`: `(name, lo, width)`.
pub const SIDEBAND: [(&str, usize, usize); 6] = [("dst_x", 0, 6), ("dst_y", 6, 6), ("dst_z", 12, 6), ("dst_port", 18, 4), ("tag", 22, 16), ("length", 38, 14)];

/// The side-band value of a destination (22 bits as the header holds it), a tag and a length.
pub fn sideband<'d>(dst: Sig<'d>, tag: Sig<'d>, length: Sig<'d>) -> Sig<'d> {
    let w = sideband_width();
    dst.zext(w) | tag.zext(w).shl_const(22) | length.zext(w).shl_const(38)
}

/// Width of the aggregator's `s_axis_tuser` in bits: the end of the last [`SIDEBAND`] field
/// (52).
pub fn sideband_width() -> usize {
    let (_, lo, w) = SIDEBAND[SIDEBAND.len() - 1];
    lo + w
}

/// Builds the aggregator: a header beat in front of every frame.
pub fn aggregator() -> Netlist {
    let d = Design::new();
    let frames = d.axis_in("s_axis", AxisShape::data(128).with_keep().with_user(sideband_width()));
    let sideband = frames.0.user.expect("the aggregator's input has tuser");
    let packets = aggregate(&d, "", &frames, sideband);
    d.connect(&packets, &d.axis_out("m_axis", AxisShape::data(128).with_keep())).expect("the aggregator's output has the packets' shape");
    d.finish()
}

/// The aggregator on streams: a header beat built from `sideband` ([`SIDEBAND`] layout, sampled
/// at a frame's first beat) in front of every frame of `frames` (any width of at least one
/// header, with `tkeep` and `tlast`; the header fills the low 128 bits of its beat). The packets
/// leave from registers (`<prefix>out_*`).
pub fn aggregate<'d>(d: &'d Design, prefix: &str, frames: &Source<'d>, sideband: Sig<'d>) -> Source<'d> {
    aggregate_with(d, prefix, frames, |d, width| {
        d.section("header: the side-band fields at their places in the packet header");
        sig!(header = sideband_header(d, sideband, width));
        header
    })
}

/// The header bits the [`SIDEBAND`] fields of `sideband` stand for, in a beat of `width` bits.
pub fn sideband_header<'d>(d: &'d Design, sideband: Sig<'d>, width: usize) -> Sig<'d> {
    SIDEBAND.iter().fold(d.lit(0, width), |h, &(name, lo, w)| h | sideband.bits(lo, w).zext(width).shl_const(field(name).0))
}

/// [`aggregate`] with the header beat built by `header(d, width)` (sampled at a frame's first
/// beat): for a block that delivers packets without a router on the way, and so fills every
/// field itself.
pub fn aggregate_with<'d>(d: &'d Design, prefix: &str, frames: &Source<'d>, header: impl FnOnce(&'d Design, usize) -> Sig<'d>) -> Source<'d> {
    let f = &frames.0;
    let width = f.shape.data;

    let in_frame = d.reg(&format!("{prefix}in_frame"), 1, 0);
    let out_valid = d.reg(&format!("{prefix}out_valid"), 1, 0);
    let out_data = d.reg(&format!("{prefix}out_data"), width, 0);
    let out_keep = d.reg(&format!("{prefix}out_keep"), width / 8, 0);
    let out_last = d.reg(&format!("{prefix}out_last"), 1, 0);
    let ready = d.later(1);
    let (valid, keep, last) = (f.valid, f.keep.expect("frames carry tkeep"), f.last.expect("frames carry tlast"));

    let header = header(d, width);

    d.section("the header goes out in the cycle a frame's first beat is offered; that beat waits");
    sig!(free = !out_valid.q | ready);
    sig!(head_now = !in_frame.q & valid);
    sig!(load = valid & free);
    sig!(send_header = load & head_now, send_beat = load & !head_now);
    frames.ready(free & in_frame.q);
    out_data.next_when(load, send_header.mux(header, f.data));
    out_keep.next_when(load, send_header.mux(d.lit((1u128 << (width / 8)) - 1, width / 8), keep));
    out_last.next_when(load, send_header.mux(0, last));
    out_valid.clear_when(ready).set_when(load);
    in_frame.set_when(send_header).clear_when(send_beat & last);
    Source(Axis {
        name: format!("{prefix}aggregator"),
        shape: AxisShape::data(width).with_keep(),
        data: out_data.q,
        keep: Some(out_keep.q),
        last: Some(out_last.q),
        user: None,
        valid: out_valid.q,
        ready: Some(ready),
    })
}

/// Builds the dispatcher for `channels` kernel streams (1..=16).
pub fn dispatcher(channels: usize) -> Result<Netlist, Error> {
    if !(1..=16).contains(&channels) {
        return Err(Error::Config(format!("dispatcher `channels` = {channels}: allowed range is 1 ..= 16")));
    }
    let d = Design::new();
    let packets = d.axis_in("s_axis", AxisShape::data(128).with_keep());
    let tags: Vec<u16> = (0..channels as u16).collect();
    for (k, payload) in dispatch(&d, "", &packets, &tags).0.into_iter().enumerate() {
        d.connect(&payload, &d.axis_out(&format!("m_axis_ch{k}"), AxisShape::data(128).with_keep()))?;
    }
    Ok(d.finish())
}

/// The dispatcher on streams: the payload of each packet of `packets` (any width, with `tkeep`
/// and `tlast`) goes to stream `k` when its tag is `tags[k]`; a packet with another tag is
/// dropped whole and counted in the 32-bit output `<prefix>dropped`; a header-only packet
/// delivers nothing. The payload streams are combinational from `packets`. Also returns the
/// signal that is high in the cycle a header is taken (its fields are on `packets` then).
pub fn dispatch<'d>(d: &'d Design, prefix: &str, packets: &Source<'d>, tags: &[u16]) -> (Vec<Source<'d>>, Sig<'d>) {
    let p = &packets.0;
    let (valid, keep, last) = (p.valid, p.keep.expect("packets carry tkeep"), p.last.expect("packets carry tlast"));
    let readies: Vec<Sig> = tags.iter().map(|_| d.later(1)).collect();
    let in_packet = d.reg(&format!("{prefix}in_packet"), 1, 0);
    let channel = d.reg(&format!("{prefix}channel"), 5, 0);
    let dropping = d.reg(&format!("{prefix}dropping"), 1, 0);

    d.section("header: the channel a packet's tag names, or dropping for a tag no channel takes");
    sig!(tag = p.data.bits(field("tag").0, 16));
    // Tags 0 … n−1 (the stand-alone dispatcher's) name their channel directly.
    let (known, index) = if tags.iter().enumerate().all(|(k, t)| *t as usize == k) {
        (tag.lt(tags.len()), tag.bits(0, 5))
    } else {
        let matches: Vec<Sig> = tags.iter().map(|t| tag.eq(*t as usize)).collect();
        (matches.iter().fold(d.lit(0, 1), |any, m| any | *m), matches.iter().enumerate().fold(d.lit(0, 5), |acc, (k, m)| m.mux(d.lit(k as u128, 5), acc)))
    };
    let (known, index) = (known.named("known"), index.named("index"));
    sig!(head = !in_packet.q & valid);
    // Payload beats wait for their channel; the header and dropped beats are taken at once.
    let is_channel = |k: usize| channel.q.eq(k);
    sig!(ready_sel = readies.iter().enumerate().fold(d.lit(0, 1), |any, (k, r)| any | (is_channel(k) & *r)));
    sig!(passes = in_packet.q & !dropping.q);
    sig!(s_ready = (passes & ready_sel) | (in_packet.q & dropping.q) | head | !in_packet.q);
    packets.ready(s_ready);
    sig!(took = valid & s_ready);
    // A header opens a packet unless it is also its last beat.
    in_packet.set_when(head & !last).clear_when(took & last & in_packet.q);
    channel.next_when(head, index);
    dropping.next_when(head, !known);
    d.counter(&format!("{prefix}dropped"), head & !known);

    d.section("payload beats to the packet's channel");
    let channels = readies
        .iter()
        .enumerate()
        .map(|(k, r)| {
            Source(Axis {
                name: format!("{prefix}channel{k}"),
                shape: AxisShape::data(p.shape.data).with_keep(),
                data: p.data,
                keep: Some(keep),
                last: Some(last),
                user: None,
                valid: passes & valid & is_channel(k),
                ready: Some(*r),
            })
        })
        .collect();
    // The header is taken the cycle it is offered.
    (channels, head)
}

/// The payload of every packet of `packets` (any width, `tkeep` kept when present), each beat
/// with its packet's `length` (14 bits) in `tuser`; a header-only packet delivers nothing. The
/// header is taken the cycle it is offered; also returns the signal high in that cycle.
pub fn payloads<'d>(d: &'d Design, prefix: &str, packets: &Source<'d>) -> (Source<'d>, Sig<'d>) {
    let p = &packets.0;
    let last = p.last.expect("packets carry tlast");
    let in_packet = d.reg(&format!("{prefix}in_packet"), 1, 0);
    let length = d.reg(&format!("{prefix}length"), 14, 0);
    let ready = d.later(1);
    let head = (!in_packet.q & p.valid).named(&format!("{prefix}head"));
    packets.ready(in_packet.q.mux(ready, 1u32));
    in_packet.set_when(head & !last).clear_when(in_packet.q & p.valid & ready & last);
    length.next_when(head, p.data.bits(field("length").0, 14));
    let payload = Source(Axis { name: format!("{prefix}payload"), shape: p.shape.with_user(14), user: Some(length.q), valid: in_packet.q & p.valid, ready: Some(ready), ..p.clone() });
    (payload, head)
}

type Beats = Vec<(u128, u128, bool)>;

/// Built-in-simulator check of the aggregator: `frames` random frames with random side-band
/// under random back-pressure; each must leave as the header the side-band describes, then its
/// beats unchanged.
pub fn check_aggregator(frames: usize, seed: u64) -> Result<String, Error> {
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
        let h =
            Header { dst: [field_of("dst_x"), field_of("dst_y"), field_of("dst_z")], dst_port: field_of("dst_port"), tag: field_of("tag") as u16, length: field_of("length"), ..Default::default() };
        expected.push((h.pack() & ((1 << 120) - 1), 0xFFFF, false));
        for (i, (d, k)) in beats.iter().enumerate() {
            expected.push((*d, *k, i + 1 == beats.len()));
        }
    }
    let (mut frame, mut beat, mut got, mut cycle) = (0usize, 0usize, 0usize, 0u64);
    while got < expected.len() {
        cycle += 1;
        if cycle > 100 * expected.len() as u64 + 100 {
            return Err(Error::Mismatch(format!("seed {seed}: timed out after {got} of {} beats", expected.len())));
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
                return Err(Error::Mismatch(format!("seed {seed}, cycle {cycle}: beat {got} is {out:x?}, want {:x?}", expected[got])));
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
pub fn check_dispatcher(channels: usize, packets: usize, seed: u64) -> Result<String, Error> {
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
            return Err(Error::Mismatch(format!("seed {seed}: timed out with {sent} of {} beats in", stream.len())));
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
        return Err(Error::Mismatch(format!("seed {seed}: a channel got other beats than the packets tagged for it")));
    }
    let dropped = packets.iter().filter(|p| p.0 >= channels).count() as u128;
    e.settle();
    if e.get_output("dropped") != dropped {
        return Err(Error::Mismatch(format!("seed {seed}: dropped counter {} for {dropped} packets with unknown tags", e.get_output("dropped"))));
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
        assert!(dispatcher(17).unwrap_err().to_string().contains("1 ..= 16"));
    }
}
