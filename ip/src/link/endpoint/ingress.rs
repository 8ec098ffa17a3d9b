//! Ingress: user beats into the replay buffer, cut into frames of at most `max_frame_words`
//! words; the frame table (start and end of every frame by sequence number); link credits
//! reserved for a whole frame when its first word enters and the unused part given back at its
//! last word.

use weft_hdl::netlist::{Design, Mem, Reg, Sig};
use weft_hdl::sig;

use super::super::config::{LinkConfig, MAX_IN_FLIGHT, SEQ_BITS};
use super::{registered, Shared, Sizes};

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
    /// Per virtual channel: a beat taken from the user (written, or discarded after a restart).
    pub taken: [Sig<'d>; 2],
    /// Per virtual channel: a beat taken and discarded (the rest of a packet cut by a restart).
    pub discarded: [Sig<'d>; 2],
    /// Replay-buffer write pointer (one bit above the address).
    pub wr: Reg<'d>,
    pub in_frame: Reg<'d>,
    /// Sequence number of the frame being written.
    pub in_seq: Reg<'d>,
    /// Frames written and not yet acknowledged.
    pub in_flight: Sig<'d>,
    /// A frame's last word entered in the previous cycle (`in_seq` has just moved on).
    pub ended: Sig<'d>,
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

    // Whether a beat may enter, decided from registers only: flags computed a cycle ahead from
    // the state of that cycle, each with the margin for what that cycle's push could change.
    // - space: at most one word enters per cycle.
    let space = registered(d, "ingress_space", (wr.q - sh.acked_addr.q).lt(config.replay_words as u128 - 1));
    // - a frame starts only with a whole frame of credit on its virtual channel; a frame that
    //   started and ended in the flag's cycle keeps one word of it.
    let credit_ok = [0, 1].map(|v| registered(d, &format!("ingress_credit_ok{v}"), (sh.limit[v].q - consumed[v].q).ge(z.frame_max + 1)));
    // - at most MAX_IN_FLIGHT frames unacknowledged; a frame that ended in the flag's cycle is
    //   one more.
    sig!(in_flight = in_seq.q - sh.acked_seq.q);
    let below = registered(d, "ingress_below_max", in_flight.lt(MAX_IN_FLIGHT));
    let below1 = registered(d, "ingress_below_max1", in_flight.lt(MAX_IN_FLIGHT - 1));
    let ended = d.reg("ingress_ended", 1, 0);
    sig!(first = !in_frame.q, vc_now = first.mux(s.vc, in_vc.q));
    sig!(start_ok = in_frame.q | vc_now.mux(credit_ok[1], credit_ok[0]) & ended.q.mux(below1, below));
    // After a restart of the partner, the rest of a packet cut in the middle is taken and
    // dropped; no other beat enters while the session restarts.
    let discard = d.reg("ingress_discard", 1, 0);
    sig!(ready = discard.q | space & start_ok & !sh.hold, take = s.valid & ready, push = take & !discard.q);
    discard.clear_when(take & s.last).set_when(sh.hold & in_frame.q);
    let vc_is = [!s.vc, s.vc];
    let taken = vc_is.map(|is_v| take & is_v);
    let discarded = vc_is.map(|is_v| take & discard.q & is_v);
    sig!(words1 = in_words.q + 1u32);
    sig!(end_frame = push & (s.last | in_words.q.eq(z.frame_max - 1)), start_frame = push & first);
    ended.next(end_frame);

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
    // The three changes are formed from registers beside the push that picks one: a start adds a
    // frame; an end gives back `frame_max - words1`; a one-word frame (both) keeps one word.
    for (v, used) in consumed.iter().enumerate() {
        let is_v = if v == 0 { !vc_now } else { vc_now };
        let (start_v, end_v) = (start_frame & is_v, end_frame & is_v);
        let given_back = used.q + words1.zext(16) - z.frame_max;
        used.next_when(start_v, used.q + z.frame_max).next_when(end_v, given_back).next_when(start_v & end_v, used.q + words1.zext(16));
    }

    // A session restart: numbering and credits start again (the frames left are dropped).
    for r in [in_seq, in_frame, in_words, ended, consumed[0], consumed[1]] {
        r.clear_when(sh.hold);
    }
    Ingress { ready, taken, discarded, wr, in_frame, in_seq, in_flight, ended: ended.q, replay, frame_start, frame_end }
}
