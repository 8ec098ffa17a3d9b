//! Receive: blocks classified, native flow control from the partner, and frames written into
//! the virtual-channel buffers — speculatively, released to the user only when the trailer's
//! CRC and the sequence number check (store and forward per frame).

use weft_hdl::netlist::{Design, Reg, Sig};
use weft_hdl::sig;

use super::super::config::{LinkConfig, SEQ_BITS};
use super::super::crc;
use super::super::format::{BTF_IDLE, BTF_NATIVE_FLOW_CONTROL, BTF_SEPARATOR, BTF_USER_K0, BTF_USER_K1};
use super::bonding::Lanes;
use super::{crc_update, Sizes};

pub(super) struct Received<'d> {
    /// A frame accepted this cycle (intact and in sequence).
    pub good: Sig<'d>,
    /// An intact frame already accepted (its acknowledgement went missing).
    pub duplicate: Sig<'d>,
    pub crc_error: Sig<'d>,
    /// A negative acknowledgement is due (first failure since the last good frame).
    pub nak_now: Sig<'d>,
    pub nak_sent: Reg<'d>,
    /// The next sequence number expected.
    pub expected: Reg<'d>,
    /// The partner asked for a pause (native flow control).
    pub nfc_hold: Sig<'d>,
    /// Lane 0 holds a user-K block 0 (acknowledgements) or 1 (consumer credits).
    pub is_k0: Sig<'d>,
    pub is_k1: Sig<'d>,
    /// The last frame header received.
    pub header: Reg<'d>,
    /// Per virtual channel: the credit limit to advertise, and a word left the buffer.
    pub credit_limit: Vec<Sig<'d>>,
    pub popped: Vec<Sig<'d>>,
}

pub(super) fn receive<'d>(d: &'d Design, config: &LinkConfig, z: &Sizes, l: &Lanes<'d>, m_ready: &[Sig<'d>]) -> Received<'d> {
    d.section("receive: block classification");
    let lp0 = l.payload[0];
    let datas: Vec<Sig> = (0..z.lanes).map(|k| l.valid[k] & !l.control[k]).collect();
    sig!(all_data = datas.iter().copied().reduce(|a, b| a & b).unwrap() & l.rx_up);
    let btf = lp0.bits(0, 8);
    let control = l.control0 & l.rx_up;
    sig!(is_sep = lp0.bits(0, 16).eq(BTF_SEPARATOR as u128 | 6 << 8) & control);
    sig!(is_k0 = btf.eq(BTF_USER_K0) & control);
    sig!(is_nfc = btf.eq(BTF_NATIVE_FLOW_CONTROL) & control);
    sig!(is_k1 = btf.eq(BTF_USER_K1) & control);
    let known = is_sep | is_k0 | btf.eq(BTF_IDLE) | is_nfc | is_k1;
    let valids = l.valid.iter().copied().reduce(|a, b| a & b).unwrap();

    d.section("native flow control from the partner: data stops for pause + 1 cycles, or until XON");
    let nfc_pause = lp0.bits(8, 8);
    let nfc_xoff_in = lp0.bit(16);
    let nfc_xoff = d.reg("nfc_xoff", 1, 0);
    let nfc_timer = d.reg("nfc_timer", 9, 0);
    sig!(xon = nfc_pause.is_zero() & !nfc_xoff_in);
    sig!(timer_idle = nfc_timer.q.is_zero());
    let timer_run = timer_idle.mux(0, nfc_timer.q - 1u32);
    nfc_timer.next(is_nfc.mux(xon.mux(0, nfc_pause.zext(9) + 1u32), timer_run)).clear_when(!l.rx_up);
    nfc_xoff.next_when(is_nfc, nfc_xoff_in).clear_when(!l.rx_up);
    sig!(nfc_hold = nfc_xoff.q | !timer_idle);
    let rx_nfc_valid = d.reg("rx_nfc_valid", 1, 0);
    rx_nfc_valid.next(is_nfc);
    let rx_nfc_data = d.reg("rx_nfc_data", 16, 0);
    rx_nfc_data.next_when(is_nfc, nfc_xoff_in.cat(nfc_pause).zext(16));
    d.output("m_axis_nfc_tvalid", rx_nfc_valid.q);
    d.output("m_axis_nfc_tdata", rx_nfc_data.q);
    let any_data = datas.iter().copied().reduce(|a, b| a | b).unwrap();
    sig!(bad_block = !valids | !known & l.control0 | !all_data & any_data);

    d.section("receive: frames");
    let in_frame = d.reg("rx_in_frame", 1, 0);
    let bad = d.reg("rx_bad", 1, 0);
    let words = d.reg("rx_words", z.fw + 1, 0);
    let rx_crc = d.reg("rx_crc", 32, crc::INIT as u128);
    let header = d.reg("rx_header", 64, 0);
    let expected = d.reg("rx_expected", SEQ_BITS, 0);
    let nak_sent = d.reg("rx_nak_sent", 1, 0);
    let hdr_vc = header.q.bit(6);
    sig!(header_now = !in_frame.q & all_data, payload_now = in_frame.q & all_data, trailer_now = in_frame.q & is_sep);
    let crc_next = crc_update(d, header_now.mux(crc::INIT as u128, rx_crc.q), &l.payload);
    rx_crc.next_when(header_now | payload_now, crc_next);
    header.next_when(header_now, lp0);
    let spec_wr = [0, 1].map(|v| d.reg(&format!("rx_spec_wr{v}"), z.ba + 1, 0));
    let commit = [0, 1].map(|v| d.reg(&format!("rx_commit{v}"), z.ba + 1, 0));
    let rd = [0, 1].map(|v| d.reg(&format!("rx_rd{v}"), z.ba + 1, 0));
    let fill = hdr_vc.mux(spec_wr[1].q, spec_wr[0].q) - hdr_vc.mux(rd[1].q, rd[0].q);
    sig!(can_write = fill.lt(config.vc_buffer_words) & words.q.lt(z.frame_max));
    sig!(write = payload_now & can_write & !bad.q, overflow = payload_now & !can_write);

    d.section("trailer checks");
    let info = lp0.bits(48, 8);
    // The trailer's own information byte is covered too, as one more 64-bit word.
    let crc_all = crc_update(d, rx_crc.q, &[info.zext(64)]);
    sig!(crc_ok = lp0.bits(16, 32).eq(crc_all ^ crc::XOR_OUT as u128));
    let nbytes = info.bits(0, z.nb);
    let user_last = info.bit(7);
    let hdr_seq = header.q.bits(0, SEQ_BITS);
    sig!(seq_ok = hdr_seq.eq(expected.q));
    let nb_ok = !(nbytes.is_zero() | nbytes.gt(z.kw));
    sig!(clean = trailer_now & !bad.q & crc_ok & words.q.any() & nb_ok);
    sig!(good = clean & seq_ok);
    // Behind: a duplicate of an accepted frame (the ack went missing) — acknowledge again.
    sig!(duplicate = clean & !seq_ok & (expected.q - hdr_seq).lt(1u128 << (SEQ_BITS - 1)));
    sig!(failed = trailer_now & !good & !duplicate, crc_error = trailer_now & !crc_ok);

    in_frame.set_when(header_now).clear_when(trailer_now).clear_when(!l.rx_up);
    bad.set_when((bad_block | overflow) & in_frame.q).clear_when(header_now);
    words.next_when(write, words.q + 1u32).clear_when(header_now);
    expected.next_when(good, expected.q + 1u32);
    sig!(nak_now = !nak_sent.q & failed);
    nak_sent.set_when(nak_now).clear_when(good);

    let mut credit_limit = vec![];
    let mut popped = vec![];
    for v in 0..2 {
        d.section(&format!("virtual channel {v}: words written speculatively, released at a good trailer"));
        let is_v = if v == 0 { !hdr_vc } else { hdr_vc };
        let write_v = write & is_v;
        let spec_low = spec_wr[v].q.bits(0, z.ba);
        let mems: Vec<_> = (0..z.lanes).map(|k| d.memory(&format!("vc{v}_lane{k}"), 64, config.vc_buffer_words)).collect();
        for (mem, word) in mems.iter().zip(&l.payload) {
            mem.write(write_v, spec_low, *word);
        }
        // Side information per word: bytes valid and end of packet; the trailer rewrites the
        // frame's last word.
        let side = d.memory(&format!("vc{v}_side"), z.nb + 1, config.vc_buffer_words);
        let good_v = good & is_v;
        let last_low = (spec_wr[v].q - 1u32).bits(0, z.ba);
        side.write(write_v | good_v, good_v.mux(last_low, spec_low), good_v.mux(user_last.cat(nbytes), z.kw));
        let new_vc = lp0.bit(6);
        let restart = header_now & if v == 0 { !new_vc } else { new_vc };
        spec_wr[v].next_when(write_v, spec_wr[v].q + 1u32).next_when(restart, commit[v].q);
        commit[v].next_when(good_v, spec_wr[v].q);
        // Output stream of this virtual channel.
        let valid = rd[v].q.ne(commit[v].q);
        let rd_low = rd[v].q.bits(0, z.ba);
        for (k, mem) in mems.iter().enumerate() {
            d.output(&format!("m_axis_vc{v}_tdata@{}", 64 * k), mem.read(rd_low));
        }
        let side_word = side.read(rd_low);
        let keep = !d.lit(u128::MAX, z.kw).shl(side_word.bits(0, z.nb));
        d.output(&format!("m_axis_vc{v}_tkeep"), keep);
        d.output(&format!("m_axis_vc{v}_tlast"), side_word.bit(z.nb));
        d.output(&format!("m_axis_vc{v}_tvalid"), valid);
        let pop = valid & m_ready[v];
        rd[v].next_when(pop, rd[v].q + 1u32);
        let freed = d.reg(&format!("rx_freed{v}"), 16, 0);
        freed.next_when(pop, freed.q + 1u32);
        credit_limit.push(freed.q + config.vc_buffer_words);
        popped.push(pop);
    }
    Received { good, duplicate, crc_error, nak_now, nak_sent, expected, nfc_hold, is_k0, is_k1, header, credit_limit, popped }
}
