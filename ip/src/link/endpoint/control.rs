//! Acknowledgements and credits received: from a good frame header or a checked user-K block 0
//! (acknowledgement, negative acknowledgement, the two credit limits), and the consumer credits
//! of user-K block 1, turned into one `tx_credit` pulse per step of each absolute total.

use weft_hdl::netlist::{Design, Sig};
use weft_hdl::sig;

use super::super::config::SEQ_BITS;
use super::bonding::Lanes;
use super::ingress::Ingress;
use super::receive::Received;
use super::{crc_check, Shared, Sizes};

pub(super) struct Acks<'d> {
    /// An acknowledgement moved forward this cycle.
    pub ack_ok: Sig<'d>,
    /// It was a negative acknowledgement.
    pub nak_in: Sig<'d>,
}

pub(super) fn control<'d>(d: &'d Design, z: &Sizes, sh: &Shared<'d>, ing: &Ingress<'d>, l: &Lanes<'d>, rx: &Received<'d>) -> Acks<'d> {
    d.section("acknowledgements received");
    let lp0 = l.payload[0];
    let k_info = lp0.bits(8, 40);
    sig!(k_ok = crc_check(d, k_info, 16).eq(lp0.bits(48, 16)) & rx.is_k0);
    let hdr = rx.header.q;

    d.section("consumer credits received (user-K block 1): one tx_credit pulse per step of a total");
    let c_info = lp0.bits(8, 32);
    sig!(c_ok = crc_check(d, c_info, 24).eq(lp0.bits(40, 24)) & rx.is_k1);
    let pulses: Vec<Sig> = (0..2)
        .map(|v| {
            let remote = d.reg(&format!("remote_freed{v}"), 16, 0);
            let delivered = d.reg(&format!("credits_delivered{v}"), 16, 0);
            remote.next_when(c_ok, c_info.bits(16 * v, 16));
            let owed = remote.q.ne(delivered.q);
            delivered.next_when(owed, delivered.q + 1u32);
            owed
        })
        .collect();
    d.output("tx_credit", pulses[1].cat(pulses[0]));

    d.section("acknowledgement and credit limits taken");
    sig!(info_in = rx.good | rx.duplicate | k_ok);
    sig!(ack_in = k_ok.mux(k_info.bits(0, SEQ_BITS), hdr.bits(8, SEQ_BITS)));
    sig!(nak_in = k_ok.mux(k_info.bit(7), hdr.bit(7)));
    sh.limit[0].next_when(info_in, k_ok.mux(k_info.bits(8, 16), hdr.bits(16, 16)));
    sh.limit[1].next_when(info_in, k_ok.mux(k_info.bits(24, 16), hdr.bits(32, 16)));
    // An acknowledgement may only move forward, to a frame that exists.
    sig!(ack_ok = !(ack_in - sh.acked_seq.q).gt(ing.in_flight) & info_in);
    sh.acked_seq.next_when(ack_ok, ack_in);
    let start_addr = ing.frame_start.read(ack_in).bits(0, z.ra + 1);
    let at_head = ack_in.eq(ing.in_seq.q) & !ing.in_frame.q;
    sh.acked_addr.next_when(ack_ok, at_head.mux(ing.wr.q, start_addr));
    Acks { ack_ok, nak_in }
}
