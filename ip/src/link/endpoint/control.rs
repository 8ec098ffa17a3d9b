//! Acknowledgements and credits received: from a good frame header or a checked user-K block 0
//! (acknowledgement, negative acknowledgement, the two credit limits), and the consumer credits
//! of user-K block 1, turned into one `tx_credit` pulse per step of each absolute total.
//!
//! Pipelined with the receive stages: the user-K checks are prepared from the deskewed block
//! (their syndromes registered beside the bonded word), the acknowledgement taken in stage A is
//! registered, checked against the frames in flight and applied in the next cycle, and the
//! retransmission logic sees the result (`ack_ok`) one cycle after that.

use weft_hdl::netlist::{Design, Sig};
use weft_hdl::sig;

use super::super::config::SEQ_BITS;
use super::bonding::Lanes;
use super::ingress::Ingress;
use super::receive::Received;
use super::{crc_check, registered, Shared, Sizes};

pub(super) struct Acks<'d> {
    /// An acknowledgement moved forward (registered: the cycle after `acked_seq` took it).
    pub ack_ok: Sig<'d>,
    /// It was a negative acknowledgement.
    pub nak_in: Sig<'d>,
    /// The partner's credit limits have arrived since the link last (re)started: frames can go.
    pub limits_known: Sig<'d>,
}

pub(super) fn control<'d>(d: &'d Design, z: &Sizes, sh: &Shared<'d>, ing: &Ingress<'d>, l: &Lanes<'d>, rx: &Received<'d>) -> Acks<'d> {
    d.section("user-K checks: the CRC syndromes of the deskewed block, registered");
    let a0 = l.ahead.payload[0];
    let k_syndrome = registered(d, "rx_k0_syndrome", crc_check(d, a0.bits(8, 40), 16) ^ a0.bits(48, 16));
    let c_syndrome = registered(d, "rx_k1_syndrome", crc_check(d, a0.bits(8, 32), 24) ^ a0.bits(40, 24));

    d.section("acknowledgements received");
    let lp0 = l.payload[0];
    let k_info = lp0.bits(8, 40);
    sig!(k_ok = k_syndrome.is_zero() & rx.is_k0);
    let hdr = rx.header.q;

    d.section("consumer credits received (user-K block 1): one tx_credit pulse per step of a total");
    let c_info = lp0.bits(8, 32);
    sig!(c_ok = c_syndrome.is_zero() & rx.is_k1);
    // After a restart of the partner (see `session`), every flit taken and not yet credited is
    // refunded, and every beat discarded as well: a pulse per cycle when none is owed.
    let pulses: Vec<Sig> = (0..2)
        .map(|v| {
            let remote = d.reg(&format!("remote_freed{v}"), 16, 0);
            let delivered = d.reg(&format!("credits_delivered{v}"), 16, 0);
            // Whether a pulse is owed (the totals differ), registered from both totals' next
            // values: the same flag a cycle sooner, so no 16-bit compare leads into the refund.
            let owed_reg = d.reg(&format!("credits_owed{v}"), 1, 0);
            let owed = owed_reg.q;
            let zero = d.lit(0, 16);
            let remote_next = sh.hold.mux(zero, c_ok.mux(c_info.bits(16 * v, 16), remote.q));
            let delivered_next = sh.hold.mux(zero, owed.mux(delivered.q + 1u32, delivered.q));
            remote.next(remote_next);
            delivered.next(delivered_next);
            owed_reg.next(remote_next.ne(delivered_next));
            let taken = d.reg(&format!("flits_taken{v}"), 16, 0);
            let given = d.reg(&format!("credits_given{v}"), 16, 0);
            let refund = d.reg(&format!("credit_refund{v}"), 16, 0);
            sig!(refund_now = !owed & refund.q.any());
            let pulse = owed | refund_now;
            // Beats taken and discarded, counted a cycle late (registered), so the user side's
            // handshake is not on the counters' paths; a beat taken in the last cycle of a
            // restart is one discarded, and reaches the refund that way.
            let took = registered(d, &format!("credit_took{v}"), ing.taken[v]);
            let dropped = registered(d, &format!("credit_dropped{v}"), ing.discarded[v]);
            taken.next_when(took, taken.q + 1u32);
            given.next_when(pulse, given.q + 1u32);
            let outstanding = taken.q + took.zext(16) - given.q - pulse.zext(16);
            refund.next(refund.q - refund_now.zext(16) + dropped.zext(16)).next_when(sh.hold, outstanding);
            pulse
        })
        .collect();
    // Registered: the pulses' compares end here, not in the credit counters of the router
    // they feed (one cycle more in the credit loop).
    d.output("tx_credit", registered(d, "credit_pulses", pulses[1].cat(pulses[0])));

    d.section("acknowledgement and credit limits taken (beside the trailer verdicts, then registered), checked and applied");
    // The frame's header holds still the cycle after its trailer (see receive).
    let k_was_ok = registered(d, "k0_was_ok", k_ok);
    let k_info = registered(d, "k0_info", k_info);
    let info_in = registered(d, "info_in", rx.good | rx.duplicate | k_was_ok);
    let ack_in = registered(d, "ack_in", k_was_ok.mux(k_info.bits(0, SEQ_BITS), hdr.bits(8, SEQ_BITS)));
    let nak_in = registered(d, "nak_in", k_was_ok.mux(k_info.bit(7), hdr.bit(7)));
    let limit_in = [0, 1].map(|v| registered(d, &format!("limit_in{v}"), k_was_ok.mux(k_info.bits(8 + 16 * v, 16), hdr.bits(16 + 16 * v, 16))));
    for (limit, value) in sh.limit.iter().zip(limit_in) {
        limit.next_when(info_in, value).clear_when(sh.hold);
    }
    let limits_known = d.reg("limits_known", 1, 0);
    limits_known.set_when(info_in).clear_when(sh.hold);
    // An acknowledgement may only move forward, to a frame that exists.
    sig!(ack_ok = !(ack_in - sh.acked_seq.q).gt(ing.in_flight) & info_in);
    sh.acked_seq.next_when(ack_ok, ack_in);
    let start_addr = ing.frame_start.read(ack_in).bits(0, z.ra + 1);
    let at_head = ack_in.eq(ing.in_seq.q) & !ing.in_frame.q;
    sh.acked_addr.next_when(ack_ok, at_head.mux(ing.wr.q, start_addr));
    // A session restart drops every frame written (see `session`).
    sh.acked_seq.clear_when(sh.hold);
    sh.acked_addr.next_when(sh.hold, ing.wr.q);
    let ack_taken = registered(d, "ack_taken", ack_ok);
    let nak_taken = registered(d, "nak_taken", nak_in);
    Acks { ack_ok: ack_taken, nak_in: nak_taken, limits_known: limits_known.q }
}
