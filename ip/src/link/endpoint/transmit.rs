//! Transmit: the scheduler (frame header, payload, trailer; go back N on a negative
//! acknowledgement or a timeout), the control blocks it interleaves (acknowledgements in user-K
//! block 0, consumer credits in user-K block 1, native flow control, clock compensation,
//! training idles), the lane blocks, and the acknowledgement bookkeeping.

use weft_hdl::netlist::{Design, Sig};
use weft_hdl::{sig, state_enum};

use super::super::config::{LinkConfig, ACK_INTERVAL, MAX_IN_FLIGHT, SEQ_BITS};
use super::super::crc;
use super::super::format::{idle_payload, BTF_NATIVE_FLOW_CONTROL, BTF_SEPARATOR, BTF_USER_K0, BTF_USER_K1, CHANNEL_BOND, CLOCK_COMPENSATION, IDLE, NOT_READY};
use super::super::lane;
use super::bonding::Lanes;
use super::control::Acks;
use super::ingress::Ingress;
use super::receive::Received;
use super::{crc_check, crc_update, Shared, Sizes};

/// The native-flow-control request stream (`s_axis_nfc_*`).
pub(super) struct NfcIn<'d> {
    pub valid: Sig<'d>,
    pub data: Sig<'d>,
}

pub(super) struct Sent<'d> {
    /// A frame's trailer left for the first time, or again.
    pub fresh: Sig<'d>,
    pub retransmitted: Sig<'d>,
}

state_enum! {
    /// Where the scheduler is in a frame.
    enum Tx { Idle, Payload, Trailer }
}

/// A counter of cycles since an event, stopping at its maximum.
fn since<'d>(d: &'d Design, name: &str, event: Sig<'d>) -> Sig<'d> {
    let r = d.reg(name, 7, 0);
    r.next(r.q.all().mux(r.q, r.q + 1u32)).clear_when(event);
    r.q
}

#[allow(clippy::too_many_arguments)]
pub(super) fn transmit<'d>(d: &'d Design, config: &LinkConfig, z: &Sizes, sh: &Shared<'d>, ing: &Ingress<'d>, l: &Lanes<'d>, rx: &Received<'d>, acks: &Acks<'d>, nfc: &NfcIn<'d>, credit_return: Sig<'d>) -> Sent<'d> {
    d.section("transmit scheduler");
    let state = d.state::<Tx>("tx_state");
    let tx_seq = d.reg("tx_seq", SEQ_BITS, 0);
    let sent_hw = d.reg("tx_sent_high", SEQ_BITS, 0);
    let rdp = d.reg("tx_rd", z.ra + 1, 0);
    let tx_crc = d.reg("tx_crc", 32, crc::INIT as u128);
    let timer = d.reg("retransmit_timer", 16, 0);
    let cc_timer = d.reg("cc_timer", 16, 0);
    let bond_timer = d.reg("bond_timer", 4, 0);
    let dirty = d.reg("ack_dirty", 1, 1);
    let urgent = d.reg("ack_urgent", 1, 0);

    let cc_next = cc_timer.q + 1u32;
    cc_timer.next(cc_next).clear_when(cc_next.eq(config.cc_interval));
    sig!(send_cc = cc_timer.q.lt(config.cc_burst));
    bond_timer.next(bond_timer.q + 1u32);
    sig!(bond_slot = bond_timer.q.is_zero());

    sig!(idle = state.is(Tx::Idle), in_payload = state.is(Tx::Payload), in_trailer = state.is(Tx::Trailer));
    // Go back N at a frame boundary, or catch up when acknowledgements passed the sender.
    let stale = (tx_seq.q - sh.acked_seq.q).gt(ing.in_flight);
    sig!(rewind = (sh.go_back.q | stale) & idle);
    sig!(complete = tx_seq.q.ne(ing.in_seq.q));
    let started = complete | ing.in_frame.q;
    let start_read = ing.frame_start.read(tx_seq.q);
    let end_read = ing.frame_end.read(tx_seq.q);
    let frame_vc = start_read.bit(z.ra + 1);
    let end_addr = end_read.bits(0, z.ra);
    let end_bytes = end_read.bits(z.ra, z.nb);
    let end_last = end_read.bit(z.ra + z.nb);
    sig!(want_header = idle & started & !rewind);
    let rd_low = rdp.q.bits(0, z.ra);
    sig!(want_payload = in_payload & rdp.q.ne(ing.wr.q));
    sig!(last_word = rd_low.eq(end_addr) & complete);
    let want_data = want_header | want_payload | in_trailer;
    sig!(running = !send_cc & sh.channel_up, training = !sh.channel_up & !send_cc);

    d.section("control blocks: native flow control, acknowledgements, consumer credits");
    let since_info = d.later(7);
    let overdue = since_info.gt(ACK_INTERVAL - 1);
    sig!(send_nfc = nfc.valid & running);
    d.output("s_axis_nfc_tready", send_nfc);
    sig!(no_data_slot = !want_data | rx.nfc_hold);
    sig!(send_ack = dirty.q & !want_header & (no_data_slot | urgent.q | overdue) & running & !send_nfc);
    // Credits freed by this side's consumer, sent in user-K block 1 when they changed: in an
    // idle slot, or taking a data slot at most every ACK_INTERVAL cycles.
    let freed_total = [0, 1].map(|v| d.reg(&format!("freed_total{v}"), 16, 0));
    for (v, total) in freed_total.iter().enumerate() {
        total.next_when(credit_return.bit(v), total.q + 1u32);
    }
    let credit_dirty = d.reg("credit_dirty", 1, 0);
    let since_credit = d.later(7);
    sig!(send_credit = credit_dirty.q & (no_data_slot | since_credit.gt(ACK_INTERVAL - 1)) & !want_header & running & !send_nfc & !send_ack);
    credit_dirty.clear_when(send_credit).set_when(credit_return.any());
    since_credit.define(since(d, "since_credit", send_credit));
    let counts = freed_total[1].q.cat(freed_total[0].q);
    let credit_block = d.cat(&[crc_check(d, counts, 24), counts, d.lit(BTF_USER_K1 as u128, 8)]);
    sig!(go = running & !send_ack & !send_credit & !send_nfc & !rx.nfc_hold);
    sig!(send_header = go & want_header, send_payload = go & want_payload, send_trailer = go & in_trailer);

    d.section("frame words: header, payload from the replay buffer, trailer");
    // Acknowledgement fields this side advertises: ack | nak << 7, then the two credit limits.
    let nak_flag = rx.nak_sent.q;
    let ack_fields = d.cat(&[nak_flag, d.lit(0, 7 - SEQ_BITS), rx.expected.q]);
    let limits = rx.credit_limit[1].cat(rx.credit_limit[0]);
    sig!(info40 = limits.cat(ack_fields));
    let hdr = d.cat(&[limits, d.lit(0, 8 - SEQ_BITS), rx.expected.q, nak_flag, frame_vc, tx_seq.q]).zext(64).named("header_word");
    let data_lanes: Vec<Sig> = (0..z.lanes)
        .map(|k| {
            let word = ing.replay[k].read(rd_low);
            send_header.mux(if k == 0 { hdr } else { d.lit(0, 64) }, word)
        })
        .collect();
    let crc_after = crc_update(d, send_header.mux(crc::INIT as u128, tx_crc.q), &data_lanes);
    tx_crc.next_when(send_header | send_payload, crc_after);
    // Trailer (separator, count 6) and stand-alone acknowledgement (user-K block 0).
    let tinfo = d.cat(&[end_last, d.lit(0, 7 - z.nb), end_bytes]);
    let final_tx = crc_update(d, tx_crc.q, &[tinfo.zext(64)]) ^ crc::XOR_OUT as u128;
    let trailer = d.cat(&[tinfo, final_tx, d.lit(BTF_SEPARATOR as u128 | 6 << 8, 16)]).zext(64).named("trailer_word");
    let ack_block = d.cat(&[crc_check(d, info40, 16), info40, d.lit(BTF_USER_K0 as u128, 8)]);

    d.section("lane blocks");
    let block = |kind: u8| d.lit(idle_payload(kind), 64);
    let training_block = bond_slot.mux(block(CHANNEL_BOND), l.rx_up.mux(block(IDLE), block(NOT_READY)));
    sig!(data_out = send_header | send_payload);
    for k in 0..z.lanes {
        let mut p = block(IDLE);
        if k == 0 {
            let nfc_block = nfc.data.bits(0, 9).cat(d.lit(BTF_NATIVE_FLOW_CONTROL as u128, 8)).zext(64);
            p = send_ack.mux(ack_block, p);
            p = send_trailer.mux(trailer, p);
            p = send_nfc.mux(nfc_block, p);
            p = send_credit.mux(credit_block, p);
        }
        p = data_out.mux(data_lanes[k], p);
        p = training.mux(training_block, p);
        p = send_cc.mux(block(CLOCK_COMPENSATION), p);
        let control = !data_out | send_cc | training;
        let serial = lane::transmit(&mut d.net(), k, control.wire, p.wire);
        let serial = d.sig(serial).named(&format!("tx_block{k}"));
        d.output(&format!("tx_serial@{}", 66 * k), serial);
    }

    d.section("scheduler state and retransmission");
    state.go_when(send_header, Tx::Payload).go_when(send_payload & last_word, Tx::Trailer).go_when(send_trailer, Tx::Idle);
    let next_seq = tx_seq.q + 1u32;
    tx_seq.next_when(send_trailer, next_seq).next_when(rewind, sh.acked_seq.q);
    rdp.next_when(send_payload, rdp.q + 1u32).next_when(send_header, start_read.bits(0, z.ra + 1));
    // A trailer for a frame below the high-water mark is a retransmission.
    let hw_dist = sent_hw.q - tx_seq.q;
    sig!(resend = hw_dist.gt(0u32) & hw_dist.lt(MAX_IN_FLIGHT + 1));
    sig!(retransmitted = send_trailer & resend, fresh = send_trailer & !resend);
    sent_hw.next_when(fresh, next_seq);
    // Retransmission timer: runs while frames are unacknowledged, restarts on progress; paused
    // by native flow control (the partner cannot acknowledge what was not sent).
    sig!(outstanding = sh.acked_seq.q.ne(sent_hw.q));
    let tick = timer.q + 1u32;
    sig!(expire = tick.eq(config.retransmit_timeout));
    timer.next(outstanding.mux(tick, 0)).clear_when(acks.ack_ok).clear_when(expire).next_when(rx.nfc_hold & !acks.ack_ok, timer.q);
    let nak_go = acks.ack_ok & acks.nak_in;
    let timeout_go = expire & outstanding & !rx.nfc_hold;
    let clear_go_back = idle & sh.go_back.q;
    // A request that arrives in the same cycle as the rewind stays pending.
    sh.go_back.set_when(nak_go | timeout_go).clear_when(clear_go_back).set_when(nak_go & clear_go_back);

    d.section("acknowledgement bookkeeping");
    let info_sent = send_header | send_ack;
    let changed = rx.good | rx.duplicate | rx.nak_now | rx.popped[0] | rx.popped[1];
    dirty.clear_when(info_sent).set_when(changed);
    urgent.clear_when(info_sent).set_when(rx.nak_now);
    since_info.define(since(d, "since_ack", info_sent));
    Sent { fresh, retransmitted }
}
