//! A gearbox between stream widths: frames of 32-bit words in, at `A` words a beat, out again
//! at `B` words a beat, packed (no gaps between beats of one frame) — how a kernel of any lane
//! count meets a port of 128 or 256 bits.
//!
//! An input beat holds as many words as its `tkeep` marks (a word counts when its first byte is
//! kept; streams without `tkeep` hold `A`). The last output beat of a frame holds what is left:
//! its missing words are zero and `tkeep` marks the words it holds. One frame is in the gearbox
//! at a time, so a frame's first beat waits until the one before has left (a bubble of about one
//! output beat per frame). The buffer holds `2A + B − 1` words: enough for one input beat a cycle
//! while the output takes one a cycle, with `tready` in decided from registers only.

use weft_hdl::netlist::{Axis, AxisShape, Design, Sig, Source};
use weft_hdl::sig;

/// The words of a stream beat and how many of them the beat holds.
fn words<'d>(d: &'d Design, s: &Axis<'d>) -> (Vec<Sig<'d>>, Sig<'d>) {
    let a = s.shape.data / 32;
    let words: Vec<Sig> = (0..a).map(|j| s.data.bits(32 * j, 32)).collect();
    let count_width = usize::BITS as usize - a.leading_zeros() as usize;
    let count = match s.keep {
        Some(keep) => (0..a).fold(d.lit(0, count_width), |n, j| n + keep.bit(4 * j).zext(count_width)),
        None => d.lit(a as u128, count_width),
    };
    (words, count)
}

/// Repacks `frames` (data a multiple of 32 bits, with `tlast`) into beats of `out_words` words
/// with `tkeep` and `tlast`; `user`, sampled at each frame's first input beat, is the output's
/// `tuser` for that frame. Names its registers `<name>_*`.
pub fn gearbox<'d>(d: &'d Design, name: &str, frames: &Source<'d>, out_words: usize, user: Option<Sig<'d>>) -> Source<'d> {
    let f = &frames.0;
    assert!(f.shape.data.is_multiple_of(32) && f.shape.data > 0, "gearbox {name}: {}-bit input is not whole 32-bit words", f.shape.data);
    let (a, b) = (f.shape.data / 32, out_words);
    let capacity = 2 * a + b - 1;
    let nw = usize::BITS as usize - capacity.leading_zeros() as usize;
    let (in_words, in_count) = words(d, f);
    let in_last = f.last.expect("gearbox frames carry tlast");
    let buf: Vec<_> = (0..capacity).map(|i| d.reg(&format!("{name}_word{i}"), 32, 0)).collect();
    let held = d.reg(&format!("{name}_held"), nw, 0);
    let has_last = d.reg(&format!("{name}_has_last"), 1, 0);
    let started = d.reg(&format!("{name}_started"), 1, 0);
    let ready = d.later(1);

    d.section(&format!("{name}: out, {b} words a beat; the frame's last beat takes what is left"));
    let n = held.q;
    sig!(full_beat = n.ge(b));
    sig!(out_valid = full_beat | has_last.q & n.ne(0usize));
    sig!(out_last = has_last.q & n.le(b));
    sig!(out_count = full_beat.mux(d.lit(b as u128, nw), n));
    sig!(pop = out_valid & ready);
    sig!(kept = pop.mux(n - out_count, n));

    d.section(&format!("{name}: in, {a} words a beat, behind the words kept"));
    sig!(in_ready = !has_last.q & n.le(capacity - a));
    frames.ready(in_ready);
    sig!(take = f.valid & in_ready);
    held.next(take.mux(kept + in_count.zext(nw), kept));
    has_last.set_when(take & in_last).clear_when(pop & out_last);
    started.set_when(take).clear_when(take & in_last);
    for (i, word) in buf.iter().enumerate() {
        let shifted = if i + b < capacity { pop.mux(buf[i + b].q, word.q) } else { word.q };
        // Input word j lands at `kept + j`.
        let landing = (0..a.min(i + 1)).fold(shifted, |acc, j| (take & kept.eq(i - j)).mux(in_words[j], acc));
        word.next(landing);
    }
    let user = user.map(|u| {
        let r = d.reg(&format!("{name}_user"), u.width, 0);
        r.next_when(take & !started.q, u);
        // The first beat's own value while it is the only one taken so far.
        r.q
    });
    Source(Axis {
        name: name.to_string(),
        shape: AxisShape::data(32 * b).with_keep().with_user(user.map_or(0, |u| u.width)),
        data: from_words(d, &(0..b).map(|j| n.gt(j).mux(buf[j].q, 0u32)).collect::<Vec<_>>()),
        keep: Some(d.cat(&(0..b).rev().map(|j| n.gt(j).mux(d.lit(0xF, 4), d.lit(0, 4))).collect::<Vec<_>>())),
        last: Some(out_last),
        user,
        valid: out_valid,
        ready: Some(ready),
    })
}

/// 32-bit words as one value, least significant first.
pub fn from_words<'d>(d: &'d Design, words: &[Sig<'d>]) -> Sig<'d> {
    d.cat(&words.iter().rev().copied().collect::<Vec<_>>())
}
