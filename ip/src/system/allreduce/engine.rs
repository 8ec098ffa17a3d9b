//! The reduction engine of one node (`allreduce_w<W>`): it owns two IntraNode ports of the
//! router, `a` (partial sums arriving from farther along the chain; its own partials or result
//! copies leave through it) and `b` (results arriving from nearer the root, or at the root the
//! second half's partials; results leave through it away from the root), and the host stream of
//! the node's port `a`.
//!
//! Per beat (`W / bits` lanes of the system's [`ElementType`]): `S = (A ∘ H) ∘ B` per lane, `∘`
//! the operation's [`ReduceOp`](super::element::ReduceOp) (input `op`: the sum in two IEEE adders of [`ADD_STAGES`](super::combine::ADD_STAGES) stages
//! each, RNE, subnormals; or IEEE 754-2019 `minimum`/`maximum`), where `H` is the host's
//! contribution, `A` the partial from port `a` (the operator's identity when `use_a` is clear:
//! −0, +∞ or −∞, which leaves every other operand unchanged) and `B` the partial from port `b`
//! at the root (the identity elsewhere). A node that is not the root sends `S` to
//! `dst_a` with tag [`PARTIAL_TAG`]; the root's `S` is the result. Results (the root's `S`, or a
//! result packet from port `b`) go to the host, to `dst_b` with `fwd_b`, and at the root to `dst_a`
//! with `fwd_a`, all with tag [`RESULT_TAG`]; a beat leaves when every enabled target took it.
//!
//! Contributions, partials and results are packets of the same lengths in the same order on every
//! node (the host splits its vector the same way everywhere); each output packet keeps its input's
//! length. A partial whose packet ends elsewhere than the contribution's is counted in `mismatches`.
//!
//! **Grants.** Partials arrive in a buffer per input (`a`, and `b` for the root) of
//! [`buffer_beats()`] beats, and a node starts a partial packet only when its receiver's buffer
//! has room for all of it: it holds that many beats of credit after reset, spends a packet's beats
//! (header included) as it starts the packet, and gets them back once the receiver's join has used
//! up 64 beats' worth of packets, or has nothing left to join, in a header-only packet of tag
//! [`GRANT_TAG`] to its port `a` whose `user` word counts the beats freed. A partial therefore never waits inside the network for its
//! contribution, and nothing behind it (the butterfly's exchanges, other chains' packets, grants)
//! waits for it: the engine's ports always drain, whatever the hosts send when.
//!
//! **Watchdog.** With `timeout` > 0, an operation in flight (a contribution packet taken whose
//! result has not reached the host) that sees no beat move on any of the engine's six streams
//! for `timeout` cycles is reported once: counter `timeouts` counts it and the host gets a
//! header-only packet with tag [`ERROR_TAG`] between result packets. The engine keeps waiting (a
//! late partial still completes the operation); a node that cannot recover is reset.
//!
//! Ports: `clk`, `rst`; `s_axis_host_*` (packets from the host: a header, whose `length` counts,
//! then the payload), `m_axis_host_*` (result packets); `s_axis_a_*` / `m_axis_a_*` and
//! `s_axis_b_*` / `m_axis_b_*` to the router's ports; `flags` ([`FLAGS`]), `dst_a`, `dst_b` (22 bits
//! as `kernel_port`'s `dst`); `op` (2 bits, [`ReduceOp::code`](super::element::ReduceOp::code)); `timeout` (32 bits, cycles; 0 never); `host_dst` (the same 22 bits: this node's coordinates and the host's
//! port); counters `contributions`, `results`, `mismatches`.
//!
//! A result packet to the host reaches it without passing a router, so the engine writes the
//! whole header as the router would deliver a packet injected at the host's own port: `dst` and
//! `src` both `host_dst`, `hops` 0, the check bits; its last beat's `tkeep` marks the bytes its
//! `length` counts.

use super::combine::{combiner, identity_word};
use super::element::ElementType;
use crate::Error;

use weft_hdl::netlist::{Axis, AxisShape, Design, Netlist, Sig, Source};

use super::packets::{merge_packets, packet_route};
use crate::axis::packetize::{aggregate_with, payloads, sideband, sideband_header};
use crate::router::header::{ecc_netlist, field, last_keep, ECC_LO};

/// Tag of the partial sums travelling toward the root.
pub const PARTIAL_TAG: u16 = 0xA11D;
/// Tag of the result packets (to the host and along the broadcast).
pub const RESULT_TAG: u16 = 0xA11E;
/// Tag of the header-only packet that tells the host an operation timed out.
pub const ERROR_TAG: u16 = 0xA11F;
/// Tag of a grant: a header-only packet to a sender's port `a` whose `user` word counts the beats
/// freed in the buffer its partials arrive in.
pub const GRANT_TAG: u16 = 0xA11C;
/// Beats of partials in flight toward one engine input that keep a chain at the links' rate:
/// about a packet's way there and its grant's way back (two hops of some 40 cycles) plus the
/// packet itself.
const ROUND_TRIP_BEATS: usize = 256;
/// Beats freed that make a grant due (a quarter of the smallest buffer); less is granted once the
/// buffer is empty.
const GRANT_BATCH: usize = ROUND_TRIP_BEATS / 4;
/// The bits of the `flags` input, lowest first.
pub const FLAGS: [&str; 6] = ["use_a", "use_b", "root", "fwd_a", "fwd_b", "no_result"];
/// What each of [`FLAGS`] makes the node do (the register map's field descriptions).
pub const FLAG_MEANINGS: [&str; 6] = [
    "combine the partial arriving on port a",
    "at the root: combine the partial arriving on port b",
    "this node is the root: its combination is the result",
    "at the root: send the result to dst_a",
    "send results to dst_b",
    "no result comes back for this node's contributions (a reduce away from its root): the watchdog does not wait for one",
];
/// The engine's counters: host contributions (packets) taken, result packets delivered to
/// the host, joined beats whose partial ended its packet where the contribution did not (or the
/// reverse), operations that timed out, and joined beats whose partial carries another
/// operation id than the contribution.
pub const COUNTERS: [&str; 5] = ["contributions", "results", "mismatches", "timeouts", "id_mismatches"];
/// The engine's module name: `allreduce_w<W>` for binary32 (the shipped module), else
/// `allreduce_<type>_w<W>`.
pub fn module_name(ty: ElementType, width: usize) -> String {
    ty.module_name("allreduce", width)
}

/// Words of each input buffer's memory for packets of up to `max_packet_bytes` (the router's
/// limit): room for the round trip, and for two of the longest packets, header beats included.
fn buffer_depth(width: usize, max_packet_bytes: usize) -> usize {
    let flits = max_packet_bytes.div_ceil(width / 8) + 1;
    (2 * flits).max(ROUND_TRIP_BEATS).next_power_of_two()
}

/// Beats each input buffer holds: its memory's words and two registers; a sender's credit after
/// reset.
pub fn buffer_beats(width: usize, max_packet_bytes: usize) -> usize {
    buffer_depth(width, max_packet_bytes) + 2
}

/// Builds the engine for ports of `width` bits (a multiple of 128), elements of `ty`, and
/// packets of at most `max_packet_bytes` (the router's limit; it sizes the input buffers).
pub fn engine(width: usize, ty: ElementType, max_packet_bytes: usize) -> Result<Netlist, Error> {
    let bits = ty.bits();
    let d = Design::new();
    let host = d.axis_in("s_axis_host", AxisShape::data(width));
    let from_a = d.axis_in("s_axis_a", AxisShape::data(width).with_keep());
    let from_b = d.axis_in("s_axis_b", AxisShape::data(width).with_keep());
    let flags = d.input("flags", FLAGS.len());
    let flag = |name: &str| flags.bit(FLAGS.iter().position(|f| *f == name).unwrap()).named(name);
    let (use_a, use_b, root, fwd_a, fwd_b, no_result) = (flag("use_a"), flag("use_b"), flag("root"), flag("fwd_a"), flag("fwd_b"), flag("no_result"));
    let (dst_a, dst_b) = (d.input("dst_a", 22), d.input("dst_b", 22));
    let host_dst = d.input("host_dst", 22);
    let op = d.input("op", 2);
    let timeout = d.input("timeout", 32);

    d.section("grants arriving on port a: credit for the beats of our partials the receiver has used up");
    let a_tag = from_a.0.data.bits(field("tag").0, 16);
    let (to_grants, _) = packet_route(&d, "a_grant", &from_a, a_tag.eq(GRANT_TAG as u32));
    let [grants_in, partials_in] = d.steer(&from_a, to_grants);
    grants_in.ready(d.lit(1, 1));
    let user_lo = field("user").0;
    let capacity = buffer_beats(width, max_packet_bytes);
    let credit_bits = (usize::BITS - capacity.leading_zeros()) as usize;
    let granted = grants_in.fire().mux(from_a.0.data.bits(user_lo, credit_bits), d.lit(0, credit_bits)).named("beats_granted");

    d.section("input buffers: a partial is sent only when all of it fits, so both ports always drain");
    let depth = buffer_depth(width, max_packet_bytes);
    let (a_buffered, a_fill) = d.stream_fifo("a_buffer", depth, &partials_in);
    let (b_buffered, b_fill) = d.stream_fifo("b_buffer", depth, &from_b);

    d.section("payloads, each beat with its packet's length and operation id (the header's user word)");
    let (h, h_head) = payloads(&d, "host_", &host);
    let (a, a_head) = payloads(&d, "a_", &a_buffered);
    let (b, b_head) = payloads(&d, "b_", &b_buffered);
    let id_of = |name: &str, packets: &Source<'_>, head: Sig<'_>| -> Sig<'_> {
        let id = d.reg(name, 32, 0);
        id.next_when(head, packets.0.data.bits(user_lo, 32));
        id.q
    };
    let (h_id, a_id, b_id) = (id_of("host_op_id", &host, h_head), id_of("a_op_id", &a_buffered, a_head), id_of("b_op_id", &b_buffered, b_head));
    // A result arriving on port b keeps its operation id: side-band {id, length}.
    let b = Source(Axis { shape: b.0.shape.with_user(46), user: Some(b_id.cat(b.0.user.unwrap())), ..b.0.clone() });
    d.counter("contributions", h_head);
    let [b_join, b_result] = d.steer(&b, root);
    let join_b = (root & use_b).named("join_b");

    d.section(&format!("join: one beat of each input in use, into {} lanes of (a op h) op b", width / bits));
    let pop = d.later(1);
    let header_length = host.0.data.bits(field("length").0, 14);
    let header_id = host.0.data.bits(user_lo, 32).named("packet_op_id");
    // Each contribution's length waits beside the adders for the packet's sums (its last beat
    // leaves with the adders' `tlast`); a header with no payload has no sums and no entry.
    let lengths = d.queue("lengths", 16, h_head & header_length.ne(0u32), &[header_length.named("packet_length"), header_id], pop);
    let a_ok = a.0.valid | !use_a;
    let b_ok = b_join.0.valid | !join_b;
    let k_ready = d.later(1);
    // A node that sends partials starts a packet only with credit for all its beats (the root
    // sends none).
    let beats_of = |length| packet_beats(length, width, credit_bits);
    let credit = d.reg("credit", credit_bits, capacity as u128);
    let in_packet = d.reg("join_in_packet", 1, 0);
    let h_beats = beats_of(h.0.user.unwrap()).named("partial_beats");
    let room = (root | in_packet.q | credit.q.ge(h_beats)).named("partial_has_room");
    let take = (k_ready & lengths.space & room).named("join_take");
    h.ready(take & a_ok & b_ok);
    a.ready(use_a & take & h.0.valid & b_ok);
    b_join.ready(join_b & take & h.0.valid & a_ok);
    let fire = (take & h.0.valid & a_ok & b_ok).named("join_fire");
    in_packet.next_when(fire, !h.0.last.unwrap());
    let spent = (fire & !in_packet.q & !root).mux(h_beats, d.lit(0, credit_bits)).named("credit_spent");
    credit.next(credit.q + granted - spent);
    d.counter("mismatches", fire & use_a & (a.0.last.unwrap() ^ h.0.last.unwrap()));
    d.counter("id_mismatches", fire & ((use_a & a_id.ne(h_id)) | (join_b & b_id.ne(h_id))));
    // An operand a node does not have is the operator's identity.
    let identity = identity_word(&d, ty, width, op);
    let words = (use_a.mux(a.0.data, identity), h.0.data, Some(join_b.mux(b_join.0.data, identity)));
    let out_ready = d.later(1);
    let sum = combiner(&d, "adders", ty, width, op, words, fire, h.0.last.unwrap(), out_ready & lengths.valid)?;
    k_ready.define(sum.ready);
    let out_valid = sum.valid & lengths.valid;
    let out_last = sum.last;
    pop.define(out_valid & out_ready & out_last);
    // A packet's last beat keeps the bytes its length counts, as the router delivers packets.
    let bytes = width / 8;
    let all = d.lit((1u128 << bytes) - 1, bytes);
    let last_keep = last_keep(&d, lengths.head[0], bytes).named("sum_last_keep");
    let s = Source(Axis {
        name: "sum".into(),
        shape: AxisShape::data(width).with_keep().with_user(46),
        data: sum.data,
        keep: Some(out_last.mux(last_keep, all)),
        last: Some(out_last),
        user: Some(lengths.head[1].cat(lengths.head[0])),
        valid: out_valid,
        ready: Some(out_ready),
    });

    d.section("the root's sum is the result; elsewhere it is a partial for dst_a");
    let [s_root, s_partial] = d.steer(&s, root);
    let result = d.choose(root, &s_root, &b_result);
    let [to_host, to_b, copy_a]: [Source; 3] = d.fork("result", &result, &[d.lit(1, 1), fwd_b, root & fwd_a]).try_into().unwrap();
    let to_a = d.choose(root, &copy_a, &s_partial);

    d.section("headers: destination, tag, the packet's length and operation id");
    let result_tag = d.lit(RESULT_TAG as u128, 16);
    let packets_a = forged(&d, "a_out_", &to_a, dst_a, root.mux(result_tag, d.lit(PARTIAL_TAG as u128, 16)));
    let packets_b = forged(&d, "b_out_", &to_b, dst_b, result_tag);

    d.section("grants out: the beats of every partial packet the join has used up, to its sender's port a");
    // The sender into port a is dst_b's node (at the root dst_a's); into the root's port b, dst_b's.
    let zero = d.lit(0, credit_bits);
    let freed_a = (a.fire() & a.0.last.unwrap()).mux(beats_of(a.0.user.unwrap()), zero).named("a_beats_freed");
    let freed_b = (b_join.fire() & b_join.0.last.unwrap()).mux(beats_of(b_join.0.user.unwrap().bits(0, 14)), zero).named("b_beats_freed");
    let owed_a = d.reg("owed_a", credit_bits, 0);
    let owed_b = d.reg("owed_b", credit_bits, 0);
    // A grant's count is fixed when it starts, and held until the router takes it.
    let sending = d.reg("grant_valid", 1, 0);
    let count = d.reg("grant_beats", credit_bits, 0);
    let to_b = d.reg("grant_to_b", 1, 0);
    // Grants share the links with the results going the same way: one per GRANT_BATCH beats
    // freed, and whatever is owed once the buffer is empty and no contribution waits.
    let settled = (!host.0.valid).named("no_contribution_waiting");
    let due_a = (owed_a.q.ge(GRANT_BATCH as u32) | (owed_a.q.any() & a_fill.is_zero() & settled)).named("grant_due_a");
    let due_b = (owed_b.q.ge(GRANT_BATCH as u32) | (owed_b.q.any() & b_fill.is_zero() & settled)).named("grant_due_b");
    let start = (!sending.q & (due_a | due_b)).named("grant_start");
    let pick_b = (!due_a).named("grant_pick_b");
    count.next_when(start, pick_b.mux(owed_b.q, owed_a.q));
    to_b.next_when(start, pick_b);
    owed_a.next(owed_a.q + freed_a - (start & !pick_b).mux(owed_a.q, zero));
    owed_b.next(owed_b.q + freed_b - (start & pick_b).mux(owed_b.q, zero));
    let sender = to_b.q.mux(dst_b, root.mux(dst_a, dst_b));
    let grant_dst = host_dst.bits(18, 4).cat(sender.bits(0, 18)).named("grant_dst");
    let grant_ready = d.later(1);
    let grant_header = sideband_header(&d, sideband(grant_dst, d.lit(GRANT_TAG as u128, 16), d.lit(0, 14)), width) | count.q.zext(width).shl_const(user_lo);
    let grant_out =
        Source(Axis { name: "grant".into(), shape: AxisShape::data(width), data: grant_header, keep: None, last: Some(d.lit(1, 1)), user: None, valid: sending.q, ready: Some(grant_ready) });
    sending.set_when(start).clear_when(sending.q & grant_ready);
    let packets_a = merge_packets(&d, "a_out", &grant_out, &packets_a);
    let host_user = to_host.0.user.unwrap();
    let packets_host = aggregate_with(&d, "host_out_", &strip_user(&to_host), |d, width| {
        d.section("the host's header: from and to this node's host port, no hops, check bits");
        host_header(d, host_dst, host_user.bits(0, 14), result_tag, host_user.bits(14, 32), width).named("host_header")
    });
    d.connect(&packets_a, &d.axis_out("m_axis_a", AxisShape::data(width)))?;
    d.connect(&packets_b, &d.axis_out("m_axis_b", AxisShape::data(width)))?;

    d.section("watchdog: an operation that makes no progress for `timeout` cycles is reported");
    // Outstanding: contribution packets (with payload) whose result has not reached the host. A
    // result nothing awaits (a broadcast's, at a node that contributed nothing) counts nothing.
    let host_ready = d.later(1);
    let outstanding = d.reg("outstanding", 16, 0);
    let delivered = (packets_host.fire() & packets_host.0.last.unwrap()).named("result_delivered");
    let contributed = (h_head & header_length.ne(0u32) & !no_result).named("contributed");
    let awaited = (delivered & (outstanding.q.any() | contributed)).named("awaited_result");
    outstanding.next(outstanding.q + contributed.zext(16) - awaited.zext(16));
    d.output("idle", outstanding.q.is_zero());
    let moved = [host.fire(), from_a.fire(), from_b.fire(), packets_a.fire(), packets_b.fire(), packets_host.fire()];
    let progress = moved.iter().skip(1).fold(moved[0], |acc, f| acc | *f).named("progress");
    let idle = d.reg("idle_cycles", 32, 0);
    let reported = d.reg("timeout_reported", 1, 0);
    let waiting = (timeout.any() & outstanding.q.any() & !progress).named("waiting");
    idle.next(waiting.mux(idle.q + 1u32, d.lit(0, 32)));
    let expired = (waiting & !reported.q & (idle.q + 1u32).eq(timeout)).named("timed_out");
    reported.set_when(expired).clear_when(progress);
    d.counter("timeouts", expired);
    // The error packet: one header beat (length 0, tag ERROR_TAG), between result packets.
    let error_pending = d.reg("error_pending", 1, 0);
    let mid_packet = d.reg("host_mid_packet", 1, 0);
    let send_error = (error_pending.q & !mid_packet.q).named("send_error");
    packets_host.ready(host_ready & !send_error);
    let error_header = host_header(&d, host_dst, d.lit(0, 14), d.lit(ERROR_TAG as u128, 16), h_id, width).named("error_header");
    let out_fire = (host_ready & send_error.mux(d.lit(1, 1), packets_host.0.valid)).named("host_out_fire");
    let out_last = send_error.mux(d.lit(1, 1), packets_host.0.last.unwrap());
    error_pending.clear_when(send_error & host_ready).set_when(expired);
    mid_packet.next_when(out_fire, !out_last);
    d.counter("results", delivered);
    let all = d.lit((1u128 << (width / 8)) - 1, width / 8);
    let host_out = Source(Axis {
        name: "host_out".into(),
        shape: AxisShape::data(width).with_keep(),
        data: send_error.mux(error_header, packets_host.0.data),
        keep: Some(send_error.mux(all, packets_host.0.keep.unwrap())),
        last: Some(out_last),
        user: None,
        valid: send_error | packets_host.0.valid,
        ready: Some(host_ready),
    });
    d.connect(&host_out, &d.axis_out("m_axis_host", AxisShape::data(width).with_keep()))?;
    Ok(d.finish())
}

/// Beats of a packet of `length` bytes on `width`-bit ports, its header included, in `bits` bits.
fn packet_beats(length: Sig<'_>, width: usize, bits: usize) -> Sig<'_> {
    let shift = (width / 8).trailing_zeros() as usize;
    ((length.zext(16) + (width / 8 - 1) as u32).bits(shift, bits) + 1u32).bits(0, bits)
}

/// A header as the router delivers a packet injected at the host's own port: `dst` and `src`
/// both `host_dst`, no hops, `length`, `tag` and the operation id in `user`, the check bits.
pub(super) fn host_header<'d>(d: &'d Design, host_dst: Sig<'d>, length: Sig<'d>, tag: Sig<'d>, id: Sig<'d>, width: usize) -> Sig<'d> {
    fn at<'d>(name: &str, v: Sig<'d>) -> Sig<'d> {
        v.zext(ECC_LO).shl_const(field(name).0)
    }
    let data = at("dst_x", host_dst) | at("src_x", host_dst) | at("length", length) | at("tag", tag) | at("user", id);
    let ecc = ecc_netlist(&mut d.net(), data.wire);
    let ecc = d.sig(ecc);
    ecc.cat(data).zext(width)
}

/// Packets of `s` (side-band {operation id, length}) behind a header toward `dst` with `tag`,
/// the length and the operation id in the header's user word.
fn forged<'d>(d: &'d Design, prefix: &str, s: &Source<'d>, dst: Sig<'d>, tag: Sig<'d>) -> Source<'d> {
    let user = s.0.user.unwrap();
    aggregate_with(d, prefix, &strip_user(s), |d, width| sideband_header(d, sideband(dst, tag, user.bits(0, 14)), width) | user.bits(14, 32).zext(width).shl_const(field("user").0))
}

fn strip_user<'d>(s: &Source<'d>) -> Source<'d> {
    Source(Axis { shape: s.0.shape.with_user(0), user: None, ..s.0.clone() })
}
