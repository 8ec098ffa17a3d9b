//! Transmit: the scheduler (frame header, payload, trailer; go back N on a negative
//! acknowledgement or a timeout), the control blocks it interleaves (acknowledgements in user-K
//! block 0, consumer credits in user-K block 1, native flow control, clock compensation,
//! training idles), the lane blocks, and the acknowledgement bookkeeping.
//!
//! Two stages: the scheduler picks what leaves and registers it (the control words built, the
//! replay buffer read); the next cycle runs the CRC over header and payload, closes the trailer
//! and scrambles the lanes.

use weft_hdl::netlist::{Design, Sig};
use weft_hdl::{sig, state_enum};

use super::super::config::{LinkConfig, ACK_INTERVAL, BOND_PERIOD, MAX_IN_FLIGHT, SEQ_BITS};
use super::super::crc;
use super::super::format::{idle_payload, BTF_NATIVE_FLOW_CONTROL, BTF_SEPARATOR, BTF_USER_K0, BTF_USER_K1, CHANNEL_BOND, CLOCK_COMPENSATION, IDLE, NOT_READY, RESTART_MARK};
use super::super::lane;
use super::bonding::Lanes;
use super::control::Acks;
use super::ingress::Ingress;
use super::receive::Received;
use super::{crc_ahead, crc_check, crc_data_ahead, crc_shift, crc_update, registered, Shared, Sizes};

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
pub(super) fn transmit<'d>(d: &'d Design, config: &LinkConfig, z: &Sizes, sh: &Shared<'d>, ing: &Ingress<'d>, l: &Lanes<'d>, rx: &Received<'d>, acks: &Acks<'d>, nfc: &NfcIn<'d>) -> Sent<'d> {
    d.section("transmit scheduler");
    let state = d.state::<Tx>("tx_state");
    let tx_seq = d.reg("tx_seq", SEQ_BITS, 0);
    let sent_hw = d.reg("tx_sent_high", SEQ_BITS, 0);
    let rdp = d.reg("tx_rd", z.ra + 1, 0);
    let tx_crc = d.reg("tx_crc", 32, crc_ahead(crc::INIT));
    let timer = d.reg("retransmit_timer", 16, 0);
    // The scheduler chooses the block of the next cycle: its clock-compensation timer runs a
    // cycle ahead (from 1), and `send_cc` (registered) is whether the next cycle is in a burst.
    let cc_timer = d.reg("cc_timer", 16, 1);
    let bond_timer = d.reg("bond_timer", BOND_PERIOD.trailing_zeros() as usize, 0);
    let dirty = d.reg("ack_dirty", 1, 1);
    let urgent = d.reg("ack_urgent", 1, 0);

    let cc_next = cc_timer.q + 1u32;
    let cc_wrap = cc_next.eq(config.cc_interval);
    cc_timer.next(cc_next).clear_when(cc_wrap);
    let send_cc = d.reg("send_cc", 1, (1 < config.cc_burst) as u128);
    send_cc.next(cc_wrap | cc_next.lt(config.cc_burst));
    let send_cc = send_cc.q;
    // The link carries frames and control blocks (`running`), or trains (channel as of now).
    sig!(running = !send_cc & l.channel_up, training = !send_cc & !l.channel_up);
    bond_timer.next(bond_timer.q + 1u32);
    sig!(bond_slot = bond_timer.q.is_zero());

    sig!(idle = state.is(Tx::Idle), in_payload = state.is(Tx::Payload), in_trailer = state.is(Tx::Trailer));
    // What the scheduler asks of the frame at `tx_seq`, from registers: each flag is looked up a
    // cycle ahead for the next `tx_seq` and `tx_rd` (below, once the choice is made) against that
    // cycle's acknowledgement and ingress state, which stays valid a cycle longer:
    // - `acked`: the scheduler's copy of `acked_seq`, a cycle behind it;
    // - `stale`: acknowledgements passed the sender (`tx_seq` outside acked ..= in_seq: it
    //   catches up); `in_seq` a cycle old gives the same answer, as `tx_seq` never passes it;
    // - `complete`: frame `tx_seq` was complete a cycle ago, or (`ended`) just became so;
    // - `avail`: a word to read at `tx_rd` (written a cycle ago; later words wait a cycle).
    let acked = registered(d, "tx_acked", sh.acked_seq.q);
    let stale = d.reg("tx_stale", 1, 0);
    let complete_before = d.reg("tx_complete", 1, 0);
    let avail = d.reg("tx_avail", 1, 0);
    sig!(rewind = (sh.go_back.q | stale.q) & idle);
    sig!(complete = complete_before.q | ing.ended);
    let started = complete | ing.in_frame.q;
    let start_read = ing.frame_start.read(tx_seq.q);
    let end_read = ing.frame_end.read(tx_seq.q);
    let frame_vc = start_read.bit(z.ra + 1);
    let end_addr = end_read.bits(0, z.ra);
    let end_bytes = end_read.bits(z.ra, z.nb);
    let end_last = end_read.bit(z.ra + z.nb);
    sig!(want_header = idle & started & !sh.go_back.q & !stale.q);
    let rd_low = rdp.q.bits(0, z.ra);
    sig!(want_payload = in_payload & avail.q);
    sig!(last_word = rd_low.eq(end_addr) & complete);
    // A payload word or the trailer is due (the header is apart: it carries the acknowledgement).
    sig!(want_data = want_payload | in_trailer);

    d.section("control blocks: native flow control, acknowledgements, consumer credits");
    // Priorities, written flat: native flow control first; an acknowledgement in a slot without
    // frame words (never instead of a header), or before frame words when urgent, overdue or
    // held back by the partner's flow control; consumer credits likewise after it; frame words.
    let since_info = d.later(7);
    let overdue = since_info.gt(ACK_INTERVAL - 1);
    // A native-flow-control request not served in this cycle keeps the next one free for its
    // block (below).
    let nfc_slot = d.reg("tx_nfc_slot", 1, 0);
    sig!(slot = running & !(nfc.valid & !nfc_slot.q));
    let ack_pushes = rx.nfc_hold | urgent.q | overdue;
    sig!(send_ack = slot & dirty.q & !want_header & (!want_data | ack_pushes));
    // Credits freed by this side's consumer, sent in user-K block 1 when they changed: in an
    // idle slot, or taking a data slot at most every ACK_INTERVAL cycles.
    let freed_total = [0, 1].map(|v| d.reg(&format!("freed_total{v}"), 16, 0));
    for (total, freed) in freed_total.iter().zip(&rx.freed) {
        total.next_when(*freed, total.q + 1u32).clear_when(sh.hold);
    }
    let credit_dirty = d.reg("credit_dirty", 1, 0);
    let since_credit = d.later(7);
    let credit_pushes = rx.nfc_hold | since_credit.gt(ACK_INTERVAL - 1);
    sig!(send_credit = slot & credit_dirty.q & !want_header & !(dirty.q & (!want_data | ack_pushes)) & (!want_data | credit_pushes));
    credit_dirty.clear_when(send_credit).set_when(rx.freed[0] | rx.freed[1]).clear_when(sh.hold);
    since_credit.define(since(d, "since_credit", send_credit));
    let counts = freed_total[1].q.cat(freed_total[0].q);
    let credit_block = d.cat(&[crc_check(d, counts, 24), counts, d.lit(BTF_USER_K1 as u128, 8)]);
    // Frame words go unless flow control holds them or an acknowledgement or credits go first.
    sig!(go = slot & !rx.nfc_hold);
    sig!(go_data = go & !(dirty.q & (urgent.q | overdue)) & !(credit_dirty.q & since_credit.gt(ACK_INTERVAL - 1)));
    sig!(send_header = go & want_header, send_payload = go_data & want_payload, send_trailer = go_data & in_trailer);

    d.section("frame words: chosen here, registered, and sent in the next cycle");
    // Acknowledgement fields this side advertises: ack | nak << 7, then the two credit limits.
    let nak_flag = rx.nak_sent.q;
    let ack_fields = d.cat(&[nak_flag, d.lit(0, 7 - SEQ_BITS), rx.expected.q]);
    let limits = rx.credit_limit[1].cat(rx.credit_limit[0]);
    sig!(info40 = limits.cat(ack_fields));
    let hdr = d.cat(&[limits, d.lit(0, 8 - SEQ_BITS), rx.expected.q, nak_flag, frame_vc, tx_seq.q]).zext(64).named("header_word");
    let ack_block = d.cat(&[crc_check(d, info40, 16), info40, d.lit(BTF_USER_K0 as u128, 8)]);
    let block = |kind: u8| d.lit(idle_payload(kind), 64);
    sig!(data_out = send_header | send_payload);
    // The read pointer's next value: the frame's first word after a header, one on after a
    // payload word.
    let start_addr = start_read.bits(0, z.ra + 1);
    let next_rd = rdp.q + 1u32;
    sig!(rd_next = send_header.mux(start_addr, send_payload.mux(next_rd, rdp.q)));
    // Per lane, the word unless it comes from the replay buffer, is the trailer or a training
    // block: the header (zeros beside it), a control block, or an idle. After reset: clock
    // compensation.
    let mut words = vec![];
    let mut replayed = vec![];
    for k in 0..z.lanes {
        let mut p = block(IDLE);
        if k == 0 {
            p = send_ack.mux(ack_block, p);
            p = send_credit.mux(credit_block, p);
        }
        p = send_header.mux(if k == 0 { hdr } else { d.lit(0, 64) }, p);
        p = send_cc.mux(block(CLOCK_COMPENSATION), p);
        let word = d.reg(&format!("tx_word{k}"), 64, idle_payload(CLOCK_COMPENSATION));
        word.next(p);
        words.push(word.q);
        // The replay buffer word at `tx_rd`: read asynchronously, or read a cycle earlier at the
        // pointer's next value into a register (a synchronous read port).
        let read = if config.registered_reads { ing.replay[k].read(rd_next.bits(0, z.ra)).delayed().named(&format!("tx_replay_read{k}")) } else { ing.replay[k].read(rd_low) };
        replayed.push(read.delayed().named(&format!("tx_replay{k}")));
    }
    // The data part of the CRC update over the chosen frame word, one word ahead (see
    // `crc_ahead`): the header's registered beside it; a payload word's taken from the
    // registered replay word, so no logic follows the replay memory's (block RAM) output.
    let header_lanes: Vec<Sig> = (0..z.lanes).map(|k| if k == 0 { hdr } else { d.lit(0, 64) }).collect();
    let crc_header = registered(d, "tx_crc_header", crc_data_ahead(d, &header_lanes));
    let is_header = registered(d, "tx_is_header", send_header);
    let crc_data = is_header.mux(crc_header, crc_data_ahead(d, &replayed)).named("tx_crc_data");
    let is_payload = registered(d, "tx_is_payload", send_payload);
    let is_trailer = registered(d, "tx_is_trailer", send_trailer);
    let is_training = registered(d, "tx_is_training", training);
    let is_control = d.reg("tx_is_control", 1, 1);
    is_control.next(!data_out | send_cc | training);
    let is_control = is_control.q;
    // A plain idle while running: a native-flow-control block may take its place.
    nfc_slot.next(running & !data_out & !send_trailer & !send_ack & !send_credit);
    let nfc_slot = nfc_slot.q;
    let tinfo = registered(d, "tx_trailer_info", d.cat(&[end_last, end_bytes.zext(7)]));

    d.section("the word sent: CRC over header and payload, trailer");
    let data_lanes: Vec<Sig> = (0..z.lanes).map(|k| is_payload.mux(replayed[k], words[k])).collect();
    let state_part = is_header.mux(crc_shift(d, d.lit(crc_ahead(crc::INIT), 32), z.lanes), crc_shift(d, tx_crc.q, z.lanes));
    tx_crc.next_when(is_header | is_payload, state_part ^ crc_data);
    // Trailer (separator, count 6): the CRC closed with its information word.
    let final_tx = tx_crc.q ^ crc_update(d, d.lit(0, 32), &[tinfo.zext(64)]) ^ crc::XOR_OUT as u128;
    let trailer = d.cat(&[tinfo, final_tx, d.lit(BTF_SEPARATOR as u128 | 6 << 8, 16)]).zext(64).named("trailer_word");

    d.section("lane blocks: training blocks of this cycle, native flow control at once");
    // The partner's bonding and readiness see the training blocks exactly as they are now; byte 2
    // carries the restart mark and its echo (see `session`).
    let mark = d.lit(RESTART_MARK, 16);
    let marks = d.cat(&[l.partner_marking.mux(mark, 0), l.fresh.mux(mark, 0), d.lit(0, 16)]).zext(64);
    let training_block = bond_slot.mux(block(CHANNEL_BOND), l.rx_up.mux(block(IDLE), block(NOT_READY)) | marks);
    // A native-flow-control message leaves at once in a free slot (one the scheduler keeps free
    // for it a cycle after it asks, interrupting a frame if need be).
    sig!(send_nfc = nfc.valid & nfc_slot);
    d.output("s_axis_nfc_tready", send_nfc);
    let nfc_block = nfc.data.bits(0, 9).cat(d.lit(BTF_NATIVE_FLOW_CONTROL as u128, 8)).zext(64);
    let control = is_control | send_nfc;
    let mut serial_lanes = vec![];
    for (k, word) in data_lanes.iter().enumerate() {
        let mut p = is_training.mux(training_block, *word);
        if k == 0 {
            p = is_trailer.mux(trailer, p);
            p = send_nfc.mux(nfc_block, p);
        }
        let serial = lane::transmit(&mut d.net(), k, control.wire, p.wire);
        let serial = d.sig(serial).named(&format!("tx_block{k}"));
        serial_lanes.push(serial);
    }
    serial_lanes.reverse();
    d.output("tx_serial", d.cat(&serial_lanes));

    d.section("scheduler state and retransmission");
    state.go_when(send_header, Tx::Payload).go_when(send_payload & last_word, Tx::Trailer).go_when(send_trailer, Tx::Idle);
    let next_seq = tx_seq.q + 1u32;
    tx_seq.next_when(send_trailer, next_seq).next_when(rewind, acked);
    rdp.next(rd_next);
    // The look-ups, one per choice, picked like the registers they follow.
    let in_flight = ing.in_flight;
    let outside = |seq: Sig<'d>| (seq - sh.acked_seq.q).gt(in_flight);
    stale.next(outside(tx_seq.q)).next_when(send_trailer, outside(next_seq)).next_when(rewind, outside(acked));
    let behind = |seq: Sig<'d>| seq.ne(ing.in_seq.q);
    complete_before.next(behind(tx_seq.q)).next_when(send_trailer, behind(next_seq)).next_when(rewind, behind(acked));
    let unread = |addr: Sig<'d>| addr.ne(ing.wr.q);
    avail.next(unread(rdp.q)).next_when(send_payload, unread(next_rd)).next_when(send_header, unread(start_addr));
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

    d.section("a session restart: the scheduler starts again at frame 0 (see `session`)");
    for r in [tx_seq, sent_hw, timer, urgent] {
        r.clear_when(sh.hold);
    }
    state.go_when(sh.hold, Tx::Idle);
    rdp.next_when(sh.hold, ing.wr.q);
    tx_crc.next_when(sh.hold, crc_ahead(crc::INIT));
    sh.go_back.clear_when(sh.hold);

    d.section("acknowledgement bookkeeping");
    let info_sent = send_header | send_ack;
    let changed = rx.good | rx.duplicate | rx.nak_now | rx.popped[0] | rx.popped[1];
    dirty.clear_when(info_sent).set_when(changed | sh.hold);
    urgent.clear_when(info_sent).set_when(rx.nak_now);
    since_info.define(since(d, "since_ack", info_sent));
    Sent { fresh, retransmitted }
}
