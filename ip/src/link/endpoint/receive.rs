//! Receive: blocks classified, native flow control from the partner, and frames written into
//! the virtual-channel buffers — speculatively, released to the user only when the trailer's
//! CRC and the sequence number check (store and forward per frame).
//!
//! Two stages. The deskewed block is classified and its trailer check prepared while it is
//! registered beside the bonded word (stage A's inputs are registers only); stage A runs the
//! frame (CRC, buffer writes, the trailer's verdict and the commit). What the verdict sets off
//! beyond the commit (negative acknowledgement, counters, acknowledgement bookkeeping) runs from
//! registered copies a cycle later.

use weft_hdl::netlist::{Design, Reg, Sig};
use weft_hdl::sig;

use super::super::config::{LinkConfig, SEQ_BITS};
use super::super::crc;
use super::super::format::{BTF_IDLE, BTF_NATIVE_FLOW_CONTROL, BTF_SEPARATOR, BTF_USER_K0, BTF_USER_K1};
use super::bonding::Lanes;
use super::{crc_ahead, crc_data_ahead, crc_shift, crc_update, registered, Sizes};

pub(super) struct Received<'d> {
    /// A frame accepted (intact and in sequence), the cycle after its trailer.
    pub good: Sig<'d>,
    /// An intact frame already accepted (its acknowledgement went missing), the cycle after its
    /// trailer.
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
    /// Per virtual channel: a consumer credit to report to the partner (`rx_credit_return`,
    /// except the ones absorbed after a session restart).
    pub freed: Vec<Sig<'d>>,
}

pub(super) fn receive<'d>(d: &'d Design, config: &LinkConfig, z: &Sizes, l: &Lanes<'d>, m_ready: &[Sig<'d>], credit_return: Sig<'d>) -> Received<'d> {
    d.section("receive: the aligned block classified, registered beside the bonded word");
    let a0 = l.ahead.payload[0];
    let a_btf = a0.bits(0, 8);
    let sep_c = registered(d, "rx_is_sep6", a0.bits(0, 16).eq(BTF_SEPARATOR as u128 | 6 << 8));
    let k0_c = registered(d, "rx_is_btf_k0", a_btf.eq(BTF_USER_K0));
    let k1_c = registered(d, "rx_is_btf_k1", a_btf.eq(BTF_USER_K1));
    let nfc_c = registered(d, "rx_is_btf_nfc", a_btf.eq(BTF_NATIVE_FLOW_CONTROL));
    let known_c =
        registered(d, "rx_is_known", a_btf.eq(BTF_IDLE) | a_btf.eq(BTF_USER_K0) | a_btf.eq(BTF_USER_K1) | a_btf.eq(BTF_NATIVE_FLOW_CONTROL) | a0.bits(0, 16).eq(BTF_SEPARATOR as u128 | 6 << 8));
    let a_datas: Vec<Sig> = (0..z.lanes).map(|k| l.ahead.valid[k] & !l.ahead.control[k]).collect();
    let all_data_c = registered(d, "rx_all_data", a_datas.iter().copied().reduce(|a, b| a & b).unwrap());
    let any_data_c = registered(d, "rx_any_data", a_datas.iter().copied().reduce(|a, b| a | b).unwrap());
    let valids_c = registered(d, "rx_all_valid", l.ahead.valid.iter().copied().reduce(|a, b| a & b).unwrap());
    // Trailer: bytes valid in 1 ..= word bytes; and what the frame CRC must equal. With the
    // state kept a word ahead (`crc_ahead`), `update(crc, info) ^ XOR_OUT == received` reads
    // `state == received ^ XOR_OUT ^ D(info)`, the right side taken from the block alone.
    let a_info = a0.bits(48, 8);
    let a_nbytes = a_info.bits(0, z.nb);
    let nb_ok = registered(d, "rx_nbytes_ok", !(a_nbytes.is_zero() | a_nbytes.gt(z.kw)));
    // The side information of the word written beside this block: the trailer's, when this
    // block is one (so the frame's last word, written right before its trailer, gets it at once).
    let a_sep = a0.bits(0, 16).eq(BTF_SEPARATOR as u128 | 6 << 8) & l.ahead.valid[0] & l.ahead.control[0];
    // Kept as `tkeep` (not the byte count), so the read side has no shifter behind the memory.
    let keep_of = |nbytes: Sig<'d>| !d.lit(u128::MAX, z.kw).shl(nbytes);
    let ahead_side = a_sep.mux(a_info.bit(7).cat(keep_of(a_nbytes)), d.lit(0, 1).cat(d.lit(u128::MAX, z.kw)));
    let info_part = crc_update(d, d.lit(0, 32), &[a_info.zext(64)]);
    let crc_target = registered(d, "rx_crc_target", a0.bits(16, 32) ^ info_part ^ crc::XOR_OUT as u128);
    // The data part of the frame CRC's update over this word.
    let crc_data = registered(d, "rx_crc_data", crc_data_ahead(d, &l.ahead.payload));

    d.section("receive: block classification");
    let lp0 = l.payload[0];
    // Nothing is received while the session restarts.
    sig!(live = l.words_up & !l.hold);
    sig!(all_data = all_data_c & live);
    let control = l.control0 & live;
    sig!(is_sep = sep_c & control);
    sig!(is_k0 = k0_c & control);
    sig!(is_nfc = nfc_c & control);
    sig!(is_k1 = k1_c & control);

    d.section("native flow control from the partner: data stops for pause + 1 cycles, or until XON");
    let nfc_pause = lp0.bits(8, 8);
    let nfc_xoff_in = lp0.bit(16);
    let nfc_xoff = d.reg("nfc_xoff", 1, 0);
    let nfc_timer = d.reg("nfc_timer", 9, 0);
    sig!(xon = nfc_pause.is_zero() & !nfc_xoff_in);
    sig!(timer_idle = nfc_timer.q.is_zero());
    let timer_run = timer_idle.mux(0, nfc_timer.q - 1u32);
    nfc_timer.next(is_nfc.mux(xon.mux(0, nfc_pause.zext(9) + 1u32), timer_run)).clear_when(!live);
    nfc_xoff.next_when(is_nfc, nfc_xoff_in).clear_when(!live);
    // `xoff | timer != 0`, registered: looked up for the next values of both.
    let nfc_hold = registered(d, "nfc_hold", live & is_nfc.mux(!xon, nfc_xoff.q | nfc_timer.q.gt(1u32)));
    let rx_nfc_valid = d.reg("rx_nfc_valid", 1, 0);
    rx_nfc_valid.next(is_nfc);
    let rx_nfc_data = d.reg("rx_nfc_data", 16, 0);
    rx_nfc_data.next_when(is_nfc, nfc_xoff_in.cat(nfc_pause).zext(16));
    d.output("m_axis_nfc_tvalid", rx_nfc_valid.q);
    d.output("m_axis_nfc_tdata", rx_nfc_data.q);
    sig!(bad_block = !valids_c | !known_c & l.control0 | !all_data_c & any_data_c);

    d.section("receive: frames");
    let in_frame = d.reg("rx_in_frame", 1, 0);
    let bad = d.reg("rx_bad", 1, 0);
    let words = d.reg("rx_words", z.fw + 1, 0);
    // The CRC state (kept a word ahead) is INIT whenever no frame is open, so a header needs no
    // select.
    let init = crc_ahead(crc::INIT);
    let rx_crc = d.reg("rx_crc", 32, init);
    let header = d.reg("rx_header", 64, 0);
    let expected = d.reg("rx_expected", SEQ_BITS, 0);
    let nak_sent = d.reg("rx_nak_sent", 1, 0);
    let hdr_vc = header.q.bit(6);
    sig!(header_now = !in_frame.q & all_data, payload_now = in_frame.q & all_data, trailer_now = in_frame.q & is_sep);
    rx_crc.next_when(all_data, crc_shift(d, rx_crc.q, z.lanes) ^ crc_data);
    rx_crc.next_when(!all_data & (trailer_now | !in_frame.q) | !live, init);
    header.next_when(header_now, lp0);
    let spec_wr = [0, 1].map(|v| d.reg(&format!("rx_spec_wr{v}"), z.ba + 1, 0));
    let commit = [0, 1].map(|v| d.reg(&format!("rx_commit{v}"), z.ba + 1, 0));
    let rd = [0, 1].map(|v| d.reg(&format!("rx_rd{v}"), z.ba + 1, 0));
    let room = [0, 1].map(|v| (spec_wr[v].q - rd[v].q).lt(config.vc_buffer_words));
    sig!(can_write = hdr_vc.mux(room[1], room[0]) & words.q.lt(z.frame_max));
    sig!(write = payload_now & can_write & !bad.q, overflow = payload_now & !can_write);
    let wrote = registered(d, "rx_wrote", write);

    d.section("trailer checks");
    sig!(crc_ok = rx_crc.q.eq(crc_target));
    let info = lp0.bits(48, 8);
    let nbytes = info.bits(0, z.nb);
    let user_last = info.bit(7);
    // The sequence checks, registered: header and `expected` hold still from the cycle after a
    // frame's header (which a clean frame's trailer follows by a payload word at least) and from
    // the cycle after the previous trailer.
    let hdr_seq = header.q.bits(0, SEQ_BITS);
    let seq_ok = registered(d, "rx_seq_ok", hdr_seq.eq(expected.q));
    // Behind: a duplicate of an accepted frame (the ack went missing) — acknowledge again.
    let behind = registered(d, "rx_seq_behind", (expected.q - hdr_seq).lt(1u128 << (SEQ_BITS - 1)));
    let has_words = d.reg("rx_has_words", 1, 0);
    sig!(clean = trailer_now & !bad.q & crc_ok & has_words.q & nb_ok);
    sig!(good_now = clean & seq_ok);
    sig!(duplicate_now = clean & !seq_ok & behind);

    d.section("trailer verdicts, a cycle later: negative acknowledgement, counters, acknowledgements");
    let good = registered(d, "rx_good", good_now);
    let duplicate = registered(d, "rx_duplicate", duplicate_now);
    let was_trailer = registered(d, "rx_was_trailer", trailer_now);
    let was_crc_ok = registered(d, "rx_was_crc_ok", crc_ok);
    sig!(failed = was_trailer & !good & !duplicate, crc_error = was_trailer & !was_crc_ok);

    in_frame.set_when(header_now).clear_when(trailer_now).clear_when(!live);
    bad.set_when((bad_block | overflow) & in_frame.q).clear_when(header_now);
    words.next_when(write, words.q + 1u32).clear_when(header_now);
    has_words.set_when(write).clear_when(header_now);
    expected.next_when(good_now, expected.q + 1u32).clear_when(l.hold);
    sig!(nak_now = !nak_sent.q & failed);
    nak_sent.set_when(nak_now).clear_when(good).clear_when(l.hold);

    let mut credit_limit = vec![];
    let mut popped = vec![];
    let mut freed = vec![];
    for v in 0..2 {
        d.section(&format!("virtual channel {v}: words written speculatively, released at a good trailer"));
        let is_v = if v == 0 { !hdr_vc } else { hdr_vc };
        let write_v = write & is_v;
        let spec_low = spec_wr[v].q.bits(0, z.ba);
        let mems: Vec<_> = (0..z.lanes).map(|k| d.memory(&format!("vc{v}_lane{k}"), 64, config.vc_buffer_words)).collect();
        for (mem, word) in mems.iter().zip(&l.payload) {
            mem.write(write_v, spec_low, *word);
        }
        // Side information per word: `tkeep` and end of packet, written with the word (the
        // trailer's for the word right before it). When idles came between a frame's last word
        // and its trailer, the trailer rewrites the last word's, and the frame is released a
        // cycle later, so that no word is read in the cycle its side information is written.
        let side = d.memory(&format!("vc{v}_side"), z.kw + 1, config.vc_buffer_words);
        let good_v = good_now & is_v;
        let fix_v = good_v & !wrote;
        let late = registered(d, &format!("rx_commit_late{v}"), fix_v);
        let last_low = (spec_wr[v].q - 1u32).bits(0, z.ba);
        side.write(write_v | fix_v, fix_v.mux(last_low, spec_low), fix_v.mux(user_last.cat(keep_of(nbytes)), ahead_side));
        let new_vc = lp0.bit(6);
        let restart = header_now & !late & if v == 0 { !new_vc } else { new_vc };
        spec_wr[v].next_when(write_v, spec_wr[v].q + 1u32).next_when(restart, commit[v].q).next_when(l.hold, commit[v].q);
        commit[v].next_when(good_v & wrote | late, spec_wr[v].q);
        // Output stream of this virtual channel. The words and their side information are read
        // asynchronously, or a cycle earlier at the read pointer's next value into a register (a
        // synchronous read port).
        // After a session restart, words of the new session wait until the consumer has freed
        // every flit of the old one (see `session`): `old` words are still to leave, `absorb`
        // flits of the old session (in the buffer or the consumer) still to be freed.
        let old = d.reg(&format!("rx_old_words{v}"), z.ba + 1, 0);
        let absorb = d.reg(&format!("credit_absorb{v}"), 16, 0);
        sig!(absorbing = absorb.q.any());
        // The stream's valid sees `absorb` is not zero through a register set from its next
        // value (and held set through a restart, which loads `absorb`): never clear while
        // `absorb` is not zero, so no 16-bit OR stands in front of the valid.
        let may_absorb = d.reg(&format!("credit_may_absorb{v}"), 1, 0);
        let valid = rd[v].q.ne(commit[v].q) & (old.q.any() | !may_absorb.q);
        let pop = valid & m_ready[v];
        let rd_low = rd[v].q.bits(0, z.ba);
        let rd_after = pop.mux(rd[v].q + 1u32, rd[v].q);
        let rd_next = rd_after.bits(0, z.ba);
        let returned = credit_return.bit(v);
        let popped_all = d.reg(&format!("flits_popped{v}"), 16, 0);
        let returned_all = d.reg(&format!("credits_returned{v}"), 16, 0);
        popped_all.next_when(pop, popped_all.q + 1u32);
        returned_all.next_when(returned, returned_all.q + 1u32);
        // Words left after this cycle's pop: the difference is taken before the pop, which
        // only subtracts at the end.
        let stored_now = commit[v].q - rd[v].q;
        let left = stored_now - pop.zext(z.ba + 1);
        old.next_when(pop & old.q.any(), old.q - 1u32).next_when(l.hold, left);
        // Popped (with this cycle's pop) plus words left (commit − rd after the pop): the pop
        // cancels (a pop needs a word, so commit − rd ≥ 1 and nothing wraps), and the sum is
        // taken without it, so the merge behind the stream and the pop are not on its path.
        let held = popped_all.q + stored_now.zext(16) - returned_all.q - returned.zext(16);
        let absorb_after = (returned & absorbing).mux(absorb.q - 1u32, absorb.q);
        absorb.next(l.hold.mux(held, absorb_after));
        may_absorb.next(l.hold | absorb_after.any());
        freed.push(returned & !absorbing);
        let mut lanes: Vec<Sig> =
            mems.iter().enumerate().map(|(k, mem)| if config.registered_reads { mem.read(rd_next).delayed().named(&format!("vc{v}_read{k}")) } else { mem.read(rd_low) }).collect();
        lanes.reverse();
        d.output(&format!("m_axis_vc{v}_tdata"), d.cat(&lanes));
        let side_word = if config.registered_reads { side.read(rd_next).delayed().named(&format!("vc{v}_side_read")) } else { side.read(rd_low) };
        d.output(&format!("m_axis_vc{v}_tkeep"), side_word.bits(0, z.kw));
        d.output(&format!("m_axis_vc{v}_tlast"), side_word.bit(z.kw));
        d.output(&format!("m_axis_vc{v}_tvalid"), valid);
        rd[v].next_when(pop, rd[v].q + 1u32);
        // The limit advertised: words released plus the buffer.
        let limit = d.reg(&format!("rx_credit_limit{v}"), 16, config.vc_buffer_words as u128);
        limit.next_when(pop, limit.q + 1u32).next_when(l.hold, d.lit(config.vc_buffer_words as u128, 16) - stored_now.zext(16) + pop.zext(16));
        credit_limit.push(limit.q);
        popped.push(pop);
    }
    Received { good, duplicate, crc_error, nak_now, nak_sent, expected, nfc_hold, is_k0, is_k1, header, credit_limit, popped, freed }
}
