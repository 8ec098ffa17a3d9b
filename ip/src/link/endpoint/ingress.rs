//! Ingress: user beats into the replay buffer, cut into frames of at most `max_frame_words`
//! words; the frame table (start and end of every frame by sequence number); link credits
//! reserved for a whole frame when its first word enters and the unused part given back at its
//! last word.

use weft_hdl::netlist::{Design, Mem, Reg, Sig};
use weft_hdl::sig;

use super::super::config::{LinkConfig, MAX_IN_FLIGHT, SEQ_BITS};
use super::{Shared, Sizes};

/// The user stream (`s_axis_*`).
pub(super) struct UserIn<'d> {
    pub data: Vec<Sig<'d>>,
    pub keep: Sig<'d>,
    pub last: Sig<'d>,
    pub vc: Sig<'d>,
    pub valid: Sig<'d>,
}

pub(super) struct Ingress<'d> {
    pub ready: Sig<'d>,
    /// Replay-buffer write pointer (one bit above the address).
    pub wr: Reg<'d>,
    pub in_frame: Reg<'d>,
    /// Sequence number of the frame being written.
    pub in_seq: Reg<'d>,
    /// Frames written and not yet acknowledged.
    pub in_flight: Sig<'d>,
    pub replay: Vec<Mem<'d>>,
    /// Per sequence number: `{vc, start address}` and `{last, bytes, end address}`.
    pub frame_start: Mem<'d>,
    pub frame_end: Mem<'d>,
}

pub(super) fn ingress<'d>(d: &'d Design, config: &LinkConfig, z: &Sizes, sh: &Shared<'d>, s: &UserIn<'d>) -> Ingress<'d> {
    d.section("ingress: user beats into the replay buffer");
    let wr = d.reg("replay_wr", z.ra + 1, 0);
    let in_frame = d.reg("in_frame", 1, 0);
    let in_words = d.reg("in_words", z.fw, 0);
    let in_vc = d.reg("in_vc", 1, 0);
    let in_seq = d.reg("in_seq", SEQ_BITS, 0);
    let consumed = [0, 1].map(|v| d.reg(&format!("credit_used{v}"), 16, 0));

    sig!(first = !in_frame.q, vc_now = first.mux(s.vc, in_vc.q));
    sig!(space = (wr.q - sh.acked_addr.q).lt(config.replay_words as u128));
    // A frame starts only with a whole frame of credit on its virtual channel.
    let credit_ok = [0, 1].map(|v| (sh.limit[v].q - consumed[v].q).ge(z.frame_max));
    sig!(in_flight = in_seq.q - sh.acked_seq.q);
    sig!(start_ok = in_frame.q | vc_now.mux(credit_ok[1], credit_ok[0]) & in_flight.lt(MAX_IN_FLIGHT));
    sig!(ready = space & start_ok, push = s.valid & ready);
    sig!(words1 = in_words.q + 1u32);
    sig!(end_frame = push & (s.last | words1.eq(z.frame_max)), start_frame = push & first);

    let wr_low = wr.q.bits(0, z.ra);
    let replay: Vec<Mem> = (0..z.lanes).map(|k| d.memory(&format!("replay{k}"), 64, config.replay_words)).collect();
    for (mem, data) in replay.iter().zip(&s.data) {
        mem.write(push, wr_low, *data);
    }
    wr.next_when(push, wr.q + 1u32);

    d.section("frame table");
    let depth = 1usize << SEQ_BITS;
    let frame_start = d.memory("frame_start", z.ra + 2, depth);
    frame_start.write(start_frame, in_seq.q, s.vc.cat(wr.q));
    let frame_end = d.memory("frame_end", z.ra + z.nb + 1, depth);
    // Bytes in the last word: tkeep is packed from byte 0, so count its ones.
    let ones = (0..z.kw).map(|b| s.keep.bit(b).zext(z.nb)).reduce(|a, b| a + b).unwrap();
    let bytes = s.last.mux(ones, z.kw);
    frame_end.write(end_frame, in_seq.q, s.last.cat(bytes).cat(wr_low));
    in_frame.next_when(push, !end_frame);
    in_words.next_when(push, end_frame.mux(0, words1));
    in_vc.next_when(start_frame, s.vc);
    in_seq.next_when(end_frame, in_seq.q + 1u32);

    d.section("link credits: a frame's worth reserved at its start, the rest given back at its end");
    let unused = d.lit(z.frame_max, 16) - words1.zext(16);
    for (v, used) in consumed.iter().enumerate() {
        let is_v = if v == 0 { !vc_now } else { vc_now };
        let after = (start_frame & is_v).mux(used.q + z.frame_max, used.q);
        used.next((end_frame & is_v).mux(after - unused, after));
    }
    Ingress { ready, wr, in_frame, in_seq, in_flight, replay, frame_start, frame_end }
}
