//! The link over a board's IO channels: the router's packets and the credits of its two virtual
//! channels carried over `c` flow-controlled 256-bit channels to one neighbour, as the Intel
//! FPGA SDK for OpenCL board support package of the BittWare 520N offers them (one channel per
//! QSFP, 40 Gbit/s, Avalon-ST with back-pressure; seed 001: 256 bits at 156.25 MHz, 520 ns).
//!
//! What the board's link already does and weft's reliable link would do again: the 64B/66B
//! lanes, block lock, deskew, channel bonding, clock compensation and flow control of each
//! channel. What the reliable link adds and this one does not: CRC-32C over every frame and
//! go-back-N retransmission, so a word the board's link corrupts reaches the router (a header
//! error is still caught by the router's SEC-DED check; a payload error is not), and a restart
//! of one side's link. Both ends are reset together, as the board's channels are.
//!
//! A word on the channels is `width` bits (`c = width / 256` channels, word bits `256k+255:256k`
//! on channel k; the receiver takes a word once every channel has its part, so skew between the
//! channels costs nothing). A packet's beats go out unchanged, except its header beat (bits
//! 127:0 the header) carries link fields above the header:
//!
//! | bits | field |
//! | --- | --- |
//! | 128 | 0: a packet's header beat; 1: a credit word (no packet) |
//! | 129 | the packet's virtual channel |
//! | 159:144 | running total of flits freed on VC 0 by the router behind the sender |
//! | 175:160 | the same for VC 1 |
//!
//! The receiver counts the packet's beats from the header's `length` (⌈length / (width/8)⌉
//! payload beats), restores `tlast` and `tkeep` (all ones, the last payload beat's from
//! `length`), clears the link fields and hands each beat to the router, which has room: the
//! sender held its credits. Totals arrive in every header beat; when the router frees flits and
//! no packet starts, a credit word carries them (never inside a packet). Each step of a total
//! becomes one `tx_credit` pulse for the router feeding the sender.
//!
//! Ports: `s_axis_*` (from the router's output, `tuser` = VC) and `tx_credit[1:0]` (to it);
//! `m_axis_*` (into the router's input, always ready) and `rx_credit_return[1:0]` (from it);
//! per channel k `m_axis_ch<k>_tdata[255:0]`/`tvalid`/`tready` (to the channel) and
//! `s_axis_ch<k>_*` (from it);
//! `channel_up` (a word has arrived: the partner is out of reset); counters `packets_sent`,
//! `packets_received`, `credit_words`, `tx_waits` (cycles a word waited for a channel).
//! Latency: two cycles from `s_axis` to the channels, three from the channels to `m_axis`.

use weft_hdl::netlist::{Axis, AxisShape, Design, Netlist, Sig, Source};

use crate::router::header::{field, last_keep};
use crate::Error;

/// Bits of one IO channel.
pub const CHANNEL_BITS: usize = 256;
/// Header-beat bit marking a credit word.
pub const CREDIT_WORD_BIT: usize = 128;
/// Header-beat bit holding the packet's virtual channel.
pub const VC_BIT: usize = 129;
/// Lowest bit of the two 16-bit credit totals (VC 0, then VC 1).
pub const TOTALS_LO: usize = 144;
/// Counters the link exposes, in this order.
pub const COUNTERS: [&str; 4] = ["packets_sent", "packets_received", "credit_words", "tx_waits"];
/// Words each channel's receive FIFO holds beyond its two registers: the skew between channels
/// it absorbs before the channel's own flow control holds the sender.
const RX_DEPTH: usize = 8;
/// Words each channel's transmit FIFO holds beyond its two registers.
const TX_DEPTH: usize = 2;

/// The stream shape of one channel.
pub fn channel_shape() -> AxisShape {
    AxisShape { data: CHANNEL_BITS, keep: false, last: false, user: 0, always_ready: false }
}

/// The link for a router of `width` bits (256 or 512: one or two channels).
pub fn io_link(width: usize) -> Result<Netlist, Error> {
    if width != 256 && width != 512 {
        return Err(Error::Config(format!("io link: `width` = {width}: allowed 256 or 512 (bits; one 256-bit IO channel per 256 bits)")));
    }
    let channels = width / CHANNEL_BITS;
    let bytes = width / 8;
    let d = Design::new();
    let (len_lo, len_bits) = field("length");

    d.section("transmit: the router's beats, credit totals in header beats and credit words");
    let s = d.axis_in("s_axis", AxisShape::data(width).with_keep().with_user(1));
    let returned = d.input("rx_credit_return", 2);
    let local: Vec<_> = (0..2).map(|v| d.reg(&format!("tx_freed_vc{v}"), 16, 0)).collect();
    let sent: Vec<_> = (0..2).map(|v| d.reg(&format!("tx_told_vc{v}"), 16, 0)).collect();
    for (v, r) in local.iter().enumerate() {
        r.next(r.q + returned.bit(v).zext(16));
    }
    let announced = d.reg("tx_announced", 1, 0);
    let in_packet = d.reg("tx_in_packet", 1, 0);
    let start = !in_packet.q;
    let owed = (local[0].q.ne(sent[0].q) | local[1].q.ne(sent[1].q) | !announced.q).named("tx_credit_owed");
    let credit_only = (start & !s.0.valid & owed).named("tx_credit_word");
    let word_valid = s.0.valid | credit_only;
    let spaces: Vec<Sig> = (0..channels).map(|_| d.later(1)).collect();
    let all_space = spaces.iter().copied().reduce(|a, b| a & b).unwrap();
    let fire = (word_valid & all_space).named("tx_fire");
    s.ready(all_space);
    in_packet.next_when(s.fire(), !s.0.last.unwrap());
    let totals = local[1].q.cat(local[0].q);
    let above = d.lit(0, width - TOTALS_LO - 32).cat(totals).cat(d.lit(0, TOTALS_LO - VC_BIT - 1));
    let header_beat = above.cat(s.0.user.unwrap()).cat(d.lit(0, 1)).cat(s.0.data.bits(0, CREDIT_WORD_BIT));
    let credit_word = above.cat(d.lit(0, 1)).cat(d.lit(1, 1)).cat(d.lit(0, CREDIT_WORD_BIT));
    let word = start.mux(s.0.valid.mux(header_beat, credit_word), s.0.data).named("tx_word");
    let told = start & fire;
    for (r, l) in sent.iter().zip(&local) {
        r.next_when(told, l.q);
    }
    announced.set_when(told);
    for (k, space) in spaces.iter().enumerate() {
        let ready = d.later(1);
        let shape = channel_shape();
        let part = Source(Axis { name: format!("tx_ch{k}_part"), shape, data: word.bits(CHANNEL_BITS * k, CHANNEL_BITS), keep: None, last: None, user: None, valid: fire, ready: Some(ready) });
        let (out, _) = d.stream_fifo(&format!("tx_ch{k}_fifo"), TX_DEPTH, &part);
        space.define(ready);
        d.connect(&out, &d.axis_out(&format!("m_axis_ch{k}"), shape))?;
    }
    d.counter("packets_sent", s.fire() & start);
    d.counter("credit_words", credit_only & all_space);
    d.counter("tx_waits", word_valid & !all_space);

    d.section("receive: a word once every channel has its part, beats counted from the header's length");
    let parts: Vec<Source> = (0..channels).map(|k| d.stream_fifo(&format!("rx_ch{k}_fifo"), RX_DEPTH, &d.axis_in(&format!("s_axis_ch{k}"), channel_shape())).0).collect();
    let take = parts.iter().map(|p| p.0.valid).reduce(|a, b| a & b).unwrap().named("rx_take");
    for p in &parts {
        p.ready(take);
    }
    let rword = parts.iter().rev().map(|p| p.0.data).reduce(|hi, lo| hi.cat(lo)).unwrap().named("rx_word");
    let rb = len_bits + 1 - bytes.trailing_zeros() as usize;
    let remaining = d.reg("rx_remaining", rb, 0);
    let rstart = remaining.q.is_zero().named("rx_start");
    let is_credit = rword.bit(CREDIT_WORD_BIT);
    let length = rword.bits(len_lo, len_bits);
    let payload_beats = (length.zext(len_bits + 1) + (bytes as u128 - 1)).bits(bytes.trailing_zeros() as usize, rb);
    let head = (take & rstart & !is_credit).named("rx_head");
    remaining.next_when(take, rstart.mux(is_credit.mux(d.lit(0, rb), payload_beats), remaining.q - 1u32));
    let keep_last = d.reg("rx_last_keep", bytes, 0);
    keep_last.next_when(head, last_keep(&d, length, bytes));
    let vc = d.reg("rx_vc", 1, 0);
    vc.next_when(head, rword.bit(VC_BIT));
    let ending = remaining.q.eq(remaining.q.lit(1, rb));
    let ones = d.lit(u128::MAX, bytes);
    let remote: Vec<_> = (0..2).map(|v| d.reg(&format!("rx_freed_vc{v}"), 16, 0)).collect();
    for (v, r) in remote.iter().enumerate() {
        r.next_when(take & rstart, rword.bits(TOTALS_LO + 16 * v, 16));
    }
    let up = d.reg("rx_heard", 1, 0);
    up.set_when(take);
    d.output("channel_up", up.q);
    d.counter("packets_received", head);

    d.section("into the router: one register stage");
    let out_valid = d.reg("m_valid", 1, 0);
    out_valid.next(take & !(rstart & is_credit));
    let fields = [
        ("tdata", rstart.mux(d.lit(0, width - CREDIT_WORD_BIT).cat(rword.bits(0, CREDIT_WORD_BIT)), rword)),
        ("tkeep", rstart.mux(ones, ending.mux(keep_last.q, ones))),
        ("tlast", rstart.mux(length.is_zero(), ending)),
        ("tuser", rstart.mux(rword.bit(VC_BIT), vc.q)),
    ];
    for (name, value) in fields {
        let r = d.reg(&format!("m_{name}"), value.width, 0);
        r.next_when(take, value);
        d.output(&format!("m_axis_{name}"), r.q);
    }
    d.output("m_axis_tvalid", out_valid.q);

    d.section("credits for the router feeding the sender: one pulse per step of each total");
    let pulses: Vec<Sig> = remote
        .iter()
        .enumerate()
        .map(|(v, r)| {
            let given = d.reg(&format!("tx_credit_given_vc{v}"), 16, 0);
            let pulse = r.q.ne(given.q);
            given.next(given.q + pulse.zext(16));
            pulse
        })
        .collect();
    d.output("tx_credit", pulses[1].cat(pulses[0]));
    Ok(d.finish())
}

/// A word as 128-bit pieces, low first.
type Word = Vec<u128>;

/// One direction of one channel between the two links under test: words arrive `latency`
/// cycles after they leave (never overtaking), into a receive buffer of [`TB_BUFFER`] words
/// whose free entries the sender needs (credits come back `latency` cycles after a word is
/// taken), as the board's flow-controlled channel; the sender is also stalled at random.
struct TbChannel {
    latency: u64,
    credits: usize,
    flight: std::collections::VecDeque<(u64, u128, u128)>,
    buffer: std::collections::VecDeque<(u128, u128)>,
    returns: std::collections::VecDeque<u64>,
    /// The receiver is being offered the buffer's head (it stays offered until taken).
    offered: bool,
    ready: bool,
}

/// Receive buffer of a channel model, words.
const TB_BUFFER: usize = 6;
/// Flits of each virtual channel's buffer in the routers the test bench plays.
const TB_CREDITS: usize = 24;

/// Built-in-simulator check of [`io_link`]: two links back to back, each direction over its
/// channel models (a different latency per channel, random stalls of the sender and the
/// receiver, a receive buffer of six words per channel), each side playing the routers: a
/// sender that starts a packet only with credits for all its flits (random lengths, random
/// virtual channel, random gaps, random bits above the header in header beats) and a receiver
/// that frees flits at random. Every packet must arrive once, in order, beat for beat with the
/// header beat's link bits cleared, `tkeep` and `tlast` from the header's length and `tuser` the
/// virtual channel; no virtual channel's buffer may overflow; at the end every credit is back.
pub fn testbench(width: usize, packets: usize, seed: u64) -> Result<String, Error> {
    use crate::router::header::Header;
    use weft_hdl::netlist::eval::Evaluator;
    use weft_hdl::testbench::Rng;
    let channels = width / CHANNEL_BITS;
    let bytes = width / 8;
    let pieces = width / 128;
    let net = io_link(width)?;
    let mut ends = [Evaluator::new(net.clone()), Evaluator::new(net)];
    let mut rng = Rng::new(seed);
    let fail = |what: String| Error::Mismatch(format!("io link w{width}, seed {seed}: {what}"));
    // Per direction (0: end 0 to end 1): packets to send (beats, vc), what the sender is doing,
    // credits, beats delivered, buffer occupancy at the receiver.
    let mut queue: [std::collections::VecDeque<(Vec<Word>, usize)>; 2] = Default::default();
    let mut expected: [std::collections::VecDeque<(Vec<Word>, usize)>; 2] = Default::default();
    for (dir, q) in queue.iter_mut().enumerate() {
        for _ in 0..packets {
            let length = rng.below((TB_CREDITS as u64 - 1) * bytes as u64 + 1) as usize;
            let h = Header { dst: [rng.below(4) as usize, 0, 0], src: [dir, 0, 0], length, tag: rng.below(1 << 16) as u16, user: rng.next_u64() as u32, ..Header::default() };
            let mut head: Word = (0..pieces).map(|_| (rng.next_u64() as u128) << 64 | rng.next_u64() as u128).collect();
            head[0] = h.pack();
            let mut beats = vec![head];
            for _ in 0..length.div_ceil(bytes) {
                beats.push((0..pieces).map(|_| (rng.next_u64() as u128) << 64 | rng.next_u64() as u128).collect());
            }
            q.push_back((beats, rng.below(2) as usize));
        }
    }
    for (dir, q) in queue.iter().enumerate() {
        for (beats, vc) in q {
            let mut b = beats.clone();
            b[0] = std::iter::once(b[0][0]).chain(std::iter::repeat_n(0, pieces - 1)).collect();
            expected[dir].push_back((b, *vc));
        }
    }
    let mut chans: Vec<Vec<TbChannel>> = (0..2)
        .map(|dir| {
            (0..channels)
                .map(|k| TbChannel {
                    latency: 3 + 4 * k as u64 + 2 * dir as u64,
                    credits: TB_BUFFER,
                    flight: Default::default(),
                    buffer: Default::default(),
                    returns: Default::default(),
                    offered: false,
                    ready: false,
                })
                .collect()
        })
        .collect();
    let mut sending: [Option<(Vec<Word>, usize, usize)>; 2] = [None, None];
    let mut credits = [[TB_CREDITS; 2]; 2];
    let mut occupancy = [[0usize; 2]; 2];
    let mut arriving: [Vec<Word>; 2] = [vec![], vec![]];
    let mut arriving_vc = [0usize; 2];
    let mut offering = [false; 2];
    for e in ends.iter_mut() {
        for name in ["s_axis_tvalid", "rx_credit_return"] {
            e.set_input(name, 0);
        }
        for k in 0..channels {
            e.set_input(&format!("m_axis_ch{k}_tready"), 0);
            e.set_input(&format!("s_axis_ch{k}_tvalid"), 0);
        }
        e.reset(3);
    }
    let limit = 200 * packets as u64 * TB_CREDITS as u64 + 10_000;
    let mut now = 0u64;
    let mut stalls = 0u64;
    let done = |expected: &[std::collections::VecDeque<(Vec<Word>, usize)>; 2], credits: &[[usize; 2]; 2]| expected.iter().all(|q| q.is_empty()) && credits.iter().all(|c| *c == [TB_CREDITS; 2]);
    while !done(&expected, &credits) {
        now += 1;
        if now > limit {
            return Err(fail(format!("stuck after {now} cycles: {} and {} packets still to arrive", expected[0].len(), expected[1].len())));
        }
        // Drive the inputs: each sender's beat, each channel's ready and delivered word, the
        // receivers' freed flits.
        let mut freed = [[false; 2]; 2];
        for dir in 0..2 {
            let e = &mut ends[dir];
            if sending[dir].is_none() && !offering[dir] {
                if let Some((beats, vc)) = queue[dir].front() {
                    if credits[dir][*vc] >= beats.len() && rng.below(4) != 0 {
                        let (beats, vc) = queue[dir].pop_front().unwrap();
                        credits[dir][vc] -= beats.len();
                        sending[dir] = Some((beats, vc, 0));
                    }
                }
            }
            // A packet under way may pause between beats, but a beat offered stays offered.
            offering[dir] = match &sending[dir] {
                Some(_) if offering[dir] => true,
                Some(_) => rng.below(5) != 0,
                None => false,
            };
            if let (Some((beats, vc, i)), true) = (&sending[dir], offering[dir]) {
                for (p, v) in beats[*i].iter().enumerate() {
                    e.set_input_bits("s_axis_tdata", 128 * p, 128, *v);
                }
                e.set_input("s_axis_tkeep", u128::MAX >> (128 - bytes));
                e.set_input("s_axis_tlast", (*i + 1 == beats.len()) as u128);
                e.set_input("s_axis_tuser", *vc as u128);
            }
            e.set_input("s_axis_tvalid", offering[dir] as u128);
            // The receiver behind end `dir` frees flits of the other direction's packets.
            let other = 1 - dir;
            for vc in 0..2 {
                freed[other][vc] = occupancy[other][vc] > 0 && rng.below(2) == 0;
            }
            e.set_input("rx_credit_return", freed[other][0] as u128 | (freed[other][1] as u128) << 1);
            for k in 0..channels {
                let tx = &mut chans[dir][k];
                tx.ready = tx.credits > 0 && rng.below(10) < 7;
                e.set_input(&format!("m_axis_ch{k}_tready"), tx.ready as u128);
                let rx = &mut chans[other][k];
                rx.offered = rx.offered || !rx.buffer.is_empty() && rng.below(10) < 8;
                if let Some((lo, hi)) = rx.buffer.front().filter(|_| rx.offered) {
                    e.set_input_bits(&format!("s_axis_ch{k}_tdata"), 0, 128, *lo);
                    e.set_input_bits(&format!("s_axis_ch{k}_tdata"), 128, 128, *hi);
                }
                e.set_input(&format!("s_axis_ch{k}_tvalid"), rx.offered as u128);
            }
        }
        for e in ends.iter_mut() {
            e.settle();
        }
        // What moved at this edge.
        for dir in 0..2 {
            let other = 1 - dir;
            let e = &ends[dir];
            if offering[dir] && e.get_output("s_axis_tready") == 1 {
                let (beats, _, i) = sending[dir].as_mut().unwrap();
                *i += 1;
                offering[dir] = false;
                if *i == beats.len() {
                    sending[dir] = None;
                }
            } else if offering[dir] {
                stalls += 1;
            }
            for vc in 0..2 {
                credits[dir][vc] += e.get_output_bits("tx_credit", vc, 1) as usize;
                if credits[dir][vc] > TB_CREDITS {
                    return Err(fail(format!("end {dir} was given more credits for VC {vc} than the receiver's {TB_CREDITS} flits")));
                }
                if freed[other][vc] {
                    occupancy[other][vc] -= 1;
                }
            }
            for k in 0..channels {
                let tx = &mut chans[dir][k];
                if tx.ready && e.get_output(&format!("m_axis_ch{k}_tvalid")) == 1 {
                    let at = tx.flight.back().map_or(0, |f| f.0).max(now + tx.latency + rng.below(3));
                    tx.flight.push_back((at, e.get_output_bits(&format!("m_axis_ch{k}_tdata"), 0, 128), e.get_output_bits(&format!("m_axis_ch{k}_tdata"), 128, 128)));
                    tx.credits -= 1;
                }
                let rx = &mut chans[other][k];
                if rx.offered && e.get_output(&format!("s_axis_ch{k}_tready")) == 1 {
                    rx.buffer.pop_front();
                    rx.offered = false;
                    rx.returns.push_back(now + rx.latency);
                }
            }
            // A beat into the router behind end `dir`: the other direction's packets.
            if e.get_output("m_axis_tvalid") == 1 {
                let beat: Word = (0..pieces).map(|p| e.get_output_bits("m_axis_tdata", 128 * p, 128)).collect();
                let (keep, last, vc) = (e.get_output("m_axis_tkeep"), e.get_output("m_axis_tlast") == 1, e.get_output("m_axis_tuser") as usize);
                if arriving[other].is_empty() {
                    arriving_vc[other] = vc;
                }
                occupancy[other][vc] += 1;
                if occupancy[other][vc] > TB_CREDITS {
                    return Err(fail(format!("VC {vc} of the receiver holds {} flits, more than its {TB_CREDITS}", occupancy[other][vc])));
                }
                arriving[other].push(beat);
                let Some((want, want_vc)) = expected[other].front() else { return Err(fail(format!("a beat arrived after every packet, cycle {now}"))) };
                let n = arriving[other].len();
                let length = Header::unpack(want[0][0]).length;
                let rem = length % bytes;
                let want_keep = if n == 1 || n < want.len() || rem == 0 { u128::MAX >> (128 - bytes) } else { (1u128 << rem) - 1 };
                if n > want.len() || arriving[other][n - 1] != want[n - 1] || keep != want_keep || last != (n == want.len()) || vc != *want_vc || arriving_vc[other] != vc {
                    return Err(fail(format!(
                        "direction {other}, beat {} of a {}-beat packet on VC {want_vc}: got keep {keep:#x} last {last} VC {vc}, data as sent: {}",
                        n - 1,
                        want.len(),
                        n <= want.len() && arriving[other][n - 1] == want[n - 1]
                    )));
                }
                if last {
                    expected[other].pop_front();
                    arriving[other].clear();
                }
            }
        }
        for e in ends.iter_mut() {
            e.clock(false);
        }
        // Channels move: words whose latency has passed enter the receive buffer, credits
        // come back.
        for ch in chans.iter_mut().flatten() {
            while ch.flight.front().is_some_and(|f| f.0 <= now) {
                let (_, lo, hi) = ch.flight.pop_front().unwrap();
                ch.buffer.push_back((lo, hi));
            }
            while ch.returns.front().is_some_and(|&t| t <= now) {
                ch.returns.pop_front();
                ch.credits += 1;
            }
        }
    }
    for (n, e) in ends.iter_mut().enumerate() {
        e.settle();
        if e.get_output("channel_up") != 1 {
            return Err(fail(format!("end {n}: channel_up low after traffic")));
        }
        let (sent, received) = (e.get_output("packets_sent"), e.get_output("packets_received"));
        if (sent, received) != (packets as u128, packets as u128) {
            return Err(fail(format!("end {n}: counters say {sent} packets sent, {received} received; {packets} each way")));
        }
    }
    Ok(format!("{packets} packets each way over {channels} channel(s) in {now} cycles ({stalls} cycles a beat waited), every beat as sent, every credit back"))
}

/// The shipped link over two IO channels (`io_link_w512`: the 520N's two QSFPs to one
/// neighbour, under a 512-bit node).
pub fn shipped() -> Vec<crate::shipped::Shipped> {
    use weft_hdl::export::{export_netlist, ModuleSpec};
    let spec = ModuleSpec {
        family: "link",
        name: "io_link_w512".into(),
        summary: "link over a board's flow-controlled 256-bit IO channels: packets and two virtual channels' credits for a 512-bit router over two channels, no CRC or retransmission".into(),
        parameters: vec![
            ("width".into(), "512".into()),
            ("channels".into(), "2 × 256 bits".into()),
            ("rx_fifo".into(), format!("{} words per channel", RX_DEPTH + 2)),
            ("tx_fifo".into(), format!("{} words per channel", TX_DEPTH + 2)),
        ],
        hidden_ports: vec![],
    };
    vec![crate::shipped::Shipped::new(spec, |spec| export_netlist(spec, &io_link(512)?), || testbench(512, 400, 17))]
}

#[cfg(test)]
mod tests {
    #[test]
    fn packets_and_credits_cross_both_ways() {
        for (width, seed) in [(256, 1), (512, 2)] {
            let summary = super::testbench(width, 60, seed).unwrap();
            assert!(summary.contains("every credit back"), "{summary}");
        }
    }

    #[test]
    fn only_whole_channels() {
        assert!(super::io_link(128).unwrap_err().to_string().contains("`width` = 128: allowed 256 or 512"));
    }
}
