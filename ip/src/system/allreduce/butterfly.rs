//! The latency path for short vectors: recursive doubling (a butterfly) over the torus. With
//! `2^s` nodes, every dimension a power of two, step `k` pairs each node with the node whose
//! coordinates differ in one bit ([`steps()`]: the bits of X from the lowest, then Y, then Z);
//! partners swap their current vectors and both keep `partner ∘ own`. After `s` steps every node
//! holds the reduction of all, with `s` exchanges on the critical path instead of the chain's
//! `P` (on torus_4x2x1, partners 1, 2 and 1 hops away: 4 hops against 8 engine steps).
//!
//! **Order.** Step `k` computes `A ∘ H`, with `A` the partner's vector and `H` this node's. Every operator here is commutative bit for bit (IEEE
//! addition, `minimum`/`maximum` with −0 < +0, the canonical NaN, int32 wrapping sums, OR), so
//! both partners hold the same bits and the result is the same on every node:
//! [`reference()`] folds pairs in step order.
//!
//! **The unit** (`butterfly_w<W>`) takes one contribution packet (at most [`BUTTERFLY_BYTES`])
//! from the host at a time, keeps it, and per step sends it to the partner with tag
//! [`EXCHANGE_TAG`] (its low bit the operation's parity: a partner may be one operation ahead,
//! never two), waits for the partner's packet of that step and parity (kept in its own slot as
//! it arrives, whatever the order), and combines beat by beat. Then the result packet goes to the
//! host with the header as the router would deliver it. Ports: `s_axis_host`/`m_axis_host`,
//! `s_axis_net`/`m_axis_net` (the router's port `a`, packets of [`EXCHANGE_TAG`] only), `op`,
//! `host_dst` (this node's coordinates and port `a`), `timeout`; output `idle`, counters
//! [`super::engine::COUNTERS`]. A partner's packet of another length or operation id is counted
//! (`mismatches`, `id_mismatches`); an operation that waits `timeout` cycles without progress is
//! counted in `timeouts` and reported to the host by a header-only packet of tag
//! [`super::engine::ERROR_TAG`].

use super::combine::combiner;
use super::element::{ElementType, ReduceOp};
use super::engine::{host_header, ERROR_TAG, RESULT_TAG};
use crate::axis::packetize::{sideband, sideband_header};
use crate::router::header::{field, last_keep};
use crate::router::RouterConfig;
use crate::Error;

use weft_hdl::netlist::{Axis, AxisShape, Design, Netlist, Sig, Source};

/// Tag of the exchange packets; the operation's parity is its low bit (`0xA120`, `0xA121`).
pub const EXCHANGE_TAG: u16 = 0xA120;
/// The longest contribution packet the butterfly takes (the unit's buffers hold this much).
pub const BUTTERFLY_BYTES: usize = 256;

/// The butterfly's steps for a torus of `dims`: `(axis, bit)` per step, X's bits from the
/// lowest, then Y's, then Z's; `None` unless every dimension is a power of two.
pub fn steps(dims: [usize; 3]) -> Option<Vec<(usize, usize)>> {
    if !dims.iter().all(|d| d.is_power_of_two()) {
        return None;
    }
    Some((0..3).flat_map(|axis| (0..dims[axis].trailing_zeros() as usize).map(move |bit| (axis, bit))).collect())
}

/// Hops on the butterfly's critical path on a torus of `dims`: the sum over its steps of the
/// partner's distance (bit `b` of a ring of `d` nodes: `min(2^b, d − 2^b)`); `None` where it
/// has no butterfly.
pub fn critical_hops(dims: [usize; 3]) -> Option<usize> {
    Some(steps(dims)?.iter().map(|&(axis, bit)| (1 << bit).min(dims[axis] - (1 << bit))).sum())
}

/// Every node's result (indexed by node number), from each node's vector, in the butterfly's
/// order: at step `k` node `n` keeps `v_partner ∘ v_n`.
pub fn reference(config: &RouterConfig, vectors: &[Vec<u128>], ty: ElementType, op: ReduceOp) -> Vec<Vec<u128>> {
    let steps = steps(config.dims).expect("butterfly: every dimension a power of two");
    let mut v = vectors.to_vec();
    for (axis, bit) in steps {
        v = (0..v.len())
            .map(|n| {
                let mut c = config.coords(n);
                c[axis] ^= 1 << bit;
                let partner = &v[config.node(c)];
                v[n].iter().zip(partner).map(|(h, a)| op.apply(ty, *a, *h)).collect()
            })
            .collect();
    }
    v
}

/// The unit's module name: `butterfly_w<W>` for binary32, else `butterfly_<type>_w<W>`.
pub fn module_name(ty: ElementType, width: usize) -> String {
    ty.module_name("butterfly", width)
}

/// Bits of a count in `0..=n` (at least 1).
fn bits_for(n: usize) -> usize {
    (usize::BITS - n.max(1).leading_zeros()) as usize
}

/// Builds the unit for `width`-bit ports, elements of `ty` and a torus of `dims`; dimensions that
/// are not powers of two are an error naming them.
pub fn butterfly(width: usize, ty: ElementType, dims: [usize; 3]) -> Result<Netlist, Error> {
    let steps = steps(dims).ok_or_else(|| Error::Config(format!("butterfly: dimensions {dims:?}: every one must be a power of two")))?;
    let s = steps.len().max(1);
    let bytes = width / 8;
    let beats = BUTTERFLY_BYTES / bytes;
    let (ib, kb, cb) = (bits_for(beats - 1), bits_for(s - 1), bits_for(beats));
    let d = Design::new();
    let host = d.axis_in("s_axis_host", AxisShape::data(width));
    let net_in = d.axis_in("s_axis_net", AxisShape::data(width).with_keep());
    let op = d.input("op", 2);
    let host_dst = d.input("host_dst", 22);
    let timeout = d.input("timeout", 32);
    let all = d.lit((1u128 << bytes) - 1, bytes);

    d.section("state: idle, loading the contribution, sending to the step's partner, waiting for its packet, combining, delivering");
    const IDLE: u32 = 0;
    const LOAD: u32 = 1;
    const SEND: u32 = 2;
    const WAIT: u32 = 3;
    const COMBINE: u32 = 4;
    const DELIVER: u32 = 5;
    let state = d.reg("state", 3, IDLE as u128);
    let at = |v: u32| state.q.eq(v).named(&format!("in_{}", ["idle", "load", "send", "wait", "combine", "deliver"][v as usize]));
    let (idle, loading, sending, waiting, combining, delivering) = (at(IDLE), at(LOAD), at(SEND), at(WAIT), at(COMBINE), at(DELIVER));
    let length = d.reg("length", 14, 0);
    let op_id = d.reg("op_id", 32, 0);
    let step = d.reg("step", kb, 0);
    let parity = d.reg("parity", 1, 0);
    let issue = d.reg("issue_beat", cb, 0);
    let back = d.reg("written_beat", cb, 0);
    let out_beat = d.reg("out_beat", cb, 0);
    let nb = (length.q.zext(15) + (bytes as u32 - 1)).bits(bytes.trailing_zeros() as usize, cb).named("payload_beats");
    let last_step = step.q.eq((s - 1) as u32).named("last_step");
    let buf = d.memory("vector", width, 1 << ib);

    d.section("the contribution: one packet from the host (header, then at most BUTTERFLY_BYTES)");
    host.ready(idle | loading);
    let header_length = host.0.data.bits(field("length").0, 14);
    let taken_header = (idle & host.fire()).named("contribution_header");
    let host_last = host.0.last.unwrap();
    length.next_when(taken_header, header_length);
    op_id.next_when(taken_header, host.0.data.bits(field("user").0, 32));
    let loaded = (loading & host.fire() & host_last).named("contribution_loaded");
    let load_beat = d.reg("load_beat", cb, 0);
    load_beat.next_when(loading & host.fire(), load_beat.q + 1u32).clear_when(taken_header);
    d.counter("contributions", taken_header);

    d.section("the exchange: this node's vector to the step's partner (its coordinate bit flipped), port a");
    let flips: Vec<Sig> = steps.iter().map(|&(axis, bit)| d.lit(1u128 << (6 * axis + bit), 22)).collect();
    let flip = flips.iter().enumerate().skip(1).fold(flips.first().copied().unwrap_or(d.lit(0, 22)), |acc, (k, f)| step.q.eq(k as u32).mux(*f, acc));
    let partner = (host_dst ^ flip).named("partner");
    let tag = d.lit(EXCHANGE_TAG as u128, 16) | parity.q.zext(16);
    let exchange_header = sideband_header(&d, sideband(partner, tag, length.q), width) | op_id.q.zext(width).shl_const(field("user").0);
    let out_at_header = out_beat.q.is_zero();
    let beat_data = buf.read((out_beat.q - 1u32).bits(0, ib));
    let out_last = out_beat.q.eq(nb).named("out_last");
    let net_ready = d.later(1);
    let net_out = Source(Axis {
        name: "exchange".into(),
        shape: AxisShape::data(width),
        data: out_at_header.mux(exchange_header.named("exchange_header"), beat_data),
        keep: None,
        last: Some(out_last),
        user: None,
        valid: sending,
        ready: Some(net_ready),
    });
    let sent = (sending & net_ready & out_last).named("exchange_sent");

    d.section("received exchanges: each packet into the slot of its parity and step (the step from the source coordinate that differs)");
    let (in_head, in_beat, slot) = (d.reg("net_in_packet", 1, 0), d.reg("net_in_beat", cb, 0), d.reg("net_in_slot", 1 + kb, 0));
    net_in.ready(d.lit(1, 1));
    let head = (net_in.0.valid & !in_head.q).named("exchange_head");
    let src = net_in.0.data.bits(field("src_x").0, 18);
    let differs = (src ^ host_dst.bits(0, 18)).named("differs");
    let found = steps.iter().enumerate().fold(d.lit(0, kb), |acc, (k, &(axis, bit))| differs.bit(6 * axis + bit).mux(d.lit(k as u128, kb), acc));
    let in_parity = net_in.0.data.bit(field("tag").0);
    let head_slot = in_parity.cat(found).named("arriving_slot");
    in_head.next_when(net_in.fire(), !net_in.0.last.unwrap());
    slot.next_when(head, head_slot);
    in_beat.next_when(net_in.fire(), (in_beat.q + 1u32).bits(0, cb)).clear_when(head);
    let rx = d.memory("received", width, 1 << (1 + kb + ib));
    let payload_in = (net_in.fire() & in_head.q).named("exchange_payload");
    rx.write(payload_in, slot.q.cat(in_beat.q.bits(0, ib)), net_in.0.data);
    let meta = d.memory("received_header", 46, 1 << (1 + kb));
    meta.write(head, head_slot, net_in.0.data.bits(field("user").0, 32).cat(net_in.0.data.bits(field("length").0, 14)));
    let arrived = (net_in.fire() & net_in.0.last.unwrap()).named("exchange_arrived");
    let arrived_slot = in_head.q.mux(slot.q, head_slot);
    let present = d.reg("present", 1 << (1 + kb), 0);
    let own_slot = parity.q.cat(step.q).named("own_slot");
    let have = present.q.shr(own_slot).bit(0).named("partner_here");

    d.section(&format!("combining: partner op own, beat by beat; {} lanes", width / ty.bits()));
    let fire_ok = d.later(1);
    let fire = (combining & issue.q.lt(nb) & fire_ok).named("combine_fire");
    let a = rx.read(own_slot.cat(issue.q.bits(0, ib)));
    let h = buf.read(issue.q.bits(0, ib));
    let sum = combiner(&d, "combiner", ty, width, op, (a, h, None), fire, (issue.q + 1u32).bits(0, cb).eq(nb), d.lit(1, 1))?;
    fire_ok.define(sum.ready);
    issue.next_when(fire, issue.q + 1u32);
    back.next_when(sum.valid, back.q + 1u32);
    let combined = ((combining & sum.valid & sum.last) | (waiting & have & nb.is_zero())).named("step_combined");
    let start_combine = (waiting & have & nb.any()).named("start_combine");
    issue.clear_when(start_combine);
    back.clear_when(start_combine);
    let header_of_partner = meta.read(own_slot);
    d.counter("mismatches", start_combine & header_of_partner.bits(0, 14).ne(length.q));
    d.counter("id_mismatches", (start_combine | (waiting & have & nb.is_zero())) & header_of_partner.bits(14, 32).ne(op_id.q));
    let used = combined.zext(1 << (1 + kb)).shl(own_slot);
    let filled = arrived.zext(1 << (1 + kb)).shl(arrived_slot);
    present.next((present.q | filled) & !used);
    // The vector's one write port: the host's beats while loading, the combiner's results.
    buf.write((loading & host.fire() & load_beat.q.lt(beats as u32)) | sum.valid, loading.mux(load_beat.q.bits(0, ib), back.q.bits(0, ib)), loading.mux(host.0.data, sum.data));

    d.section("the result to the host, with the header the router would deliver");
    let host_ready = d.later(1);
    let result_header = host_header(&d, host_dst, length.q, d.lit(RESULT_TAG as u128, 16), op_id.q, width).named("result_header");
    let delivered = (delivering & host_ready & out_last).named("result_delivered");
    d.counter("results", delivered);

    d.section("watchdog: an operation that makes no progress for `timeout` cycles is reported");
    let progress = (host.fire() | net_in.fire() | (sending & net_ready) | (delivering & host_ready) | sum.valid).named("progress");
    let idle_cycles = d.reg("idle_cycles", 32, 0);
    let reported = d.reg("timeout_reported", 1, 0);
    let stalled = (timeout.any() & !idle & !progress).named("stalled");
    idle_cycles.next(stalled.mux(idle_cycles.q + 1u32, d.lit(0, 32)));
    let expired = (stalled & !reported.q & (idle_cycles.q + 1u32).eq(timeout)).named("timed_out");
    reported.set_when(expired).clear_when(progress | idle);
    d.counter("timeouts", expired);
    let error_pending = d.reg("error_pending", 1, 0);
    let send_error = (error_pending.q & !delivering).named("send_error");
    error_pending.clear_when(send_error & host_ready).set_when(expired);
    let error_header = host_header(&d, host_dst, d.lit(0, 14), d.lit(ERROR_TAG as u128, 16), op_id.q, width).named("error_header");
    let host_out = Source(Axis {
        name: "result".into(),
        shape: AxisShape::data(width).with_keep(),
        data: send_error.mux(error_header, out_at_header.mux(result_header, beat_data)),
        keep: Some(send_error.mux(all, (out_last & !out_at_header).mux(last_keep(&d, length.q, bytes), all))),
        last: Some(send_error | out_last),
        user: None,
        valid: send_error | delivering,
        ready: Some(host_ready),
    });
    let out_fire = ((sending & net_ready) | (delivering & !send_error & host_ready)).named("out_fire");
    out_beat.next_when(out_fire, out_beat.q + 1u32).clear_when(sent | delivered);

    d.section("the state's moves");
    let to_send = d.lit(SEND as u128, 3);
    let after_steps = if steps.is_empty() { d.lit(DELIVER as u128, 3) } else { to_send };
    state
        .next_when(taken_header, host_last.mux(after_steps, d.lit(LOAD as u128, 3)))
        .next_when(loaded, after_steps)
        .next_when(sent, d.lit(WAIT as u128, 3))
        .next_when(start_combine, d.lit(COMBINE as u128, 3))
        .next_when(combined, last_step.mux(d.lit(DELIVER as u128, 3), to_send))
        .next_when(delivered, d.lit(IDLE as u128, 3));
    step.next_when(combined, (step.q + 1u32).bits(0, kb)).clear_when(delivered);
    parity.next_when(delivered, !parity.q);
    d.output("idle", idle);

    d.connect(&net_out, &d.axis_out("m_axis_net", AxisShape::data(width)))?;
    d.connect(&host_out, &d.axis_out("m_axis_host", AxisShape::data(width).with_keep()))?;
    Ok(d.finish())
}
