//! A reliable link endpoint: user stream in, two virtual-channel streams out, and the lanes of
//! an Aurora 64B/66B channel in both directions.
//!
//! Transmit: user beats (one channel word of `64 * lanes` bits each, `tuser` = virtual channel,
//! fixed for a packet, `tkeep` packed from byte 0) go into a replay buffer and leave as frames of
//! at most `max_frame_words` words, cut through (a frame starts before its last word is in;
//! idles fill the gaps, which Aurora allows inside a frame). A frame on the wire is
//! - a header word (all lanes data blocks; lane 0: seq 5:0, vc 6, nak 7, ack 13:8,
//!   credit limit vc0 31:16, vc1 47:32; other bits and lanes zero),
//! - its payload words (all lanes data blocks),
//! - a separator block on lane 0 with count 6: bytes 2..=5 = CRC-32C (little-endian) of the
//!   header and payload words followed by the 64-bit word holding byte 6; byte 6 = bytes valid
//!   in the last word (bits 5:0) and end-of-packet (bit 7); the other lanes send idles.
//!
//! Receive: frames are written into the virtual channel's buffer and released to the user only
//! when the CRC and the sequence number check (store and forward per frame); anything else is
//! dropped and answered with a negative acknowledgement, and the sender goes back N to the
//! first unacknowledged frame (also after `retransmit_timeout` cycles without progress).
//!
//! Acknowledgements and credits ride in every header; when none is due, a user-K block 0 on lane
//! 0 carries them (byte 1 = ack | nak << 7, bytes 2..=5 = the two credit limits, bytes 6..=7 =
//! low 16 bits of the CRC-32C of bytes 1..=5 followed by three zero bytes).
//!
//! Native flow control (PG074 semantics): `s_axis_nfc_tdata[7:0]` = pause count, bit 8 = XOFF;
//! the message leaves at once as a native-flow-control block on lane 0 (byte 1 = pause count,
//! byte 2 bit 0 = XOFF), interrupting a frame if need be. The partner then sends no frame data
//! for pause + 1 cycles, or until a message without XOFF arrives (all zeros is XON); its
//! acknowledgements still flow and its retransmission timer stops. Received messages appear on
//! `m_axis_nfc_tvalid` / `m_axis_nfc_tdata`.
//!
//! Credits of the consumer behind this endpoint (the next router's input buffers): the consumer
//! pulses `rx_credit_return[v]` for every flit it frees on VC v; the endpoint sends the running
//! totals in user-K block 1 (byte 0 = 0x99, bytes 1..=4 = two 16-bit totals, bytes 5..=7 = low
//! 24 bits of the CRC-32C of bytes 1..=4 followed by four zero bytes), and the partner turns
//! every step of a total into one `tx_credit[v]` pulse for the sender feeding it. Totals are
//! absolute, so a lost block only delays them.
//!
//! Link credits: the receiver advertises, per virtual channel, `limit = words released + buffer
//! words`. The sender reserves `max_frame_words` when a frame's first word enters and gives back
//! what the frame did not use at its last word, so every frame in the replay buffer already has
//! room at the receiver: no flit is sent without buffer space, and a blocked virtual channel
//! never holds up the other.

use weft_hdl::netlist::{Netlist, Register, Wire};

use super::config::{bits_for, log2, LinkConfig, ACK_INTERVAL, BOND_PERIOD, MAX_IN_FLIGHT, SEQ_BITS};
use super::crc;
use super::format::*;
use super::lane;

const ST_IDLE: u128 = 0;
const ST_PAYLOAD: u128 = 1;
const ST_TRAILER: u128 = 2;

/// Builds the endpoint netlist. Ports: `s_axis_*` (tdata `64·lanes`, tkeep, tlast, tuser = vc),
/// `m_axis_vc0_*`, `m_axis_vc1_*`, `s_axis_nfc_*` / `m_axis_nfc_*` (native flow control),
/// `rx_serial` / `tx_serial` (66 bits per lane, lane k at bits `66k+65:66k`), `lane_up`, `channel_up` and 32-bit counters `frames_sent`,
/// `frames_retransmitted`, `frames_received`, `crc_errors`, `lock_losses`.
pub fn endpoint(config: &LinkConfig) -> Result<Netlist, String> {
    config.validate()?;
    let mut n = Netlist::new();
    let net = &mut n;
    let lanes = config.lanes;
    let frame_max = config.max_frame_words as u128;
    let ra = log2(config.replay_words);
    let ba = log2(config.vc_buffer_words);
    let fw = bits_for(config.max_frame_words);
    let kw = 8 * lanes; // tkeep bits
    let nb = 6; // byte-count field

    // ---------------- ports ----------------
    let s_data: Vec<Wire> = (0..lanes).map(|k| net.input(&format!("s_axis_tdata@{}", 64 * k), 64)).collect();
    let s_keep = net.input("s_axis_tkeep", kw);
    let s_last = net.input("s_axis_tlast", 1);
    let s_vc = net.input("s_axis_tuser", 1);
    let s_valid = net.input("s_axis_tvalid", 1);
    let m_ready: Vec<Wire> = (0..2).map(|v| net.input(&format!("m_axis_vc{v}_tready"), 1)).collect();
    let rx_raw: Vec<Wire> = (0..lanes).map(|k| net.input(&format!("rx_serial@{}", 66 * k), 66)).collect();
    let nfc_valid = net.input("s_axis_nfc_tvalid", 1);
    let nfc_data = net.input("s_axis_nfc_tdata", 16);
    let credit_return = net.input("rx_credit_return", 2);

    let c = |net: &mut Netlist, v: u128, w: usize| net.constant(v, w);
    let one = c(net, 1, 1);
    let zero = c(net, 0, 1);

    // ---------------- state shared by the two directions ----------------
    let acked_seq = net.register("acked_seq", SEQ_BITS, 0);
    let acked_addr = net.register("acked_addr", ra + 1, 0);
    let limit: Vec<Register> = (0..2).map(|v| net.register(&format!("credit_limit{v}"), 16, config.vc_buffer_words as u128)).collect();
    let go_back = net.register("go_back", 1, 0);
    let channel_up = net.forward(1);

    // ---------------- ingress: user beats into the replay buffer ----------------
    let wr = net.register("replay_wr", ra + 1, 0);
    let in_frame = net.register("in_frame", 1, 0);
    let in_words = net.register("in_words", fw, 0);
    let in_vc = net.register("in_vc", 1, 0);
    let in_seq = net.register("in_seq", SEQ_BITS, 0);
    let consumed: Vec<Register> = (0..2).map(|v| net.register(&format!("credit_used{v}"), 16, 0)).collect();

    let first = net.not(in_frame.q);
    let vc_now = net.mux(first, s_vc, in_vc.q);
    let used = net.sub(wr.q, acked_addr.q);
    let r_words = c(net, config.replay_words as u128, ra + 1);
    let space = net.ult(used, r_words);
    let frame_c16 = c(net, frame_max, 16);
    let credit_ok: Vec<Wire> = (0..2)
        .map(|v| {
            let avail = net.sub(limit[v].q, consumed[v].q);
            let short = net.ult(avail, frame_c16);
            net.not(short)
        })
        .collect();
    let credit_now = net.mux(vc_now, credit_ok[1], credit_ok[0]);
    let in_flight = net.sub(in_seq.q, acked_seq.q);
    let max_flight = c(net, MAX_IN_FLIGHT, SEQ_BITS);
    let table_ok = net.ult(in_flight, max_flight);
    let start_ok = net.and(credit_now, table_ok);
    let start_ok = net.or(in_frame.q, start_ok);
    let s_ready = net.and(space, start_ok);
    net.output("s_axis_tready", s_ready);
    let push = net.and(s_valid, s_ready);
    let words1 = net.add_const(in_words.q, 1);
    let t1 = c(net, frame_max, fw);
    let frame_full = net.eq(words1, t1);
    let ends = net.or(s_last, frame_full);
    let end_frame = net.and(push, ends);
    let start_frame = net.and(push, first);

    let wr_low = net.slice(wr.q, 0, ra);
    let replay: Vec<usize> = (0..lanes).map(|k| net.memory(&format!("replay{k}"), 64, config.replay_words)).collect();
    for k in 0..lanes {
        net.memory_write(replay[k], push, wr_low, s_data[k]);
    }
    let wr1 = net.add_const(wr.q, 1);
    net.hold_unless(wr, push, wr1);
    let depth = 1usize << SEQ_BITS;
    // Frame table: start (vc, address) written at the first word, end at the last.
    let start_mem = net.memory("frame_start", ra + 2, depth);
    let start_entry = net.concat(s_vc, wr.q);
    net.memory_write(start_mem, start_frame, in_seq.q, start_entry);
    let end_mem = net.memory("frame_end", ra + nb + 1, depth);
    // Bytes in the last word: tkeep is packed from byte 0, so count its ones.
    let mut count = c(net, 0, nb);
    for b in 0..kw {
        let bit = net.bit(s_keep, b);
        let bit = net.zext(bit, nb);
        count = net.add(count, bit);
    }
    let full_bytes = c(net, kw as u128, nb);
    let bytes = net.mux(s_last, count, full_bytes);
    let end_entry = net.concat(s_last, bytes);
    let end_entry = net.concat(end_entry, wr_low);
    net.memory_write(end_mem, end_frame, in_seq.q, end_entry);
    let not_end = net.not(end_frame);
    let f = net.mux(push, not_end, in_frame.q);
    net.drive(in_frame, f);
    let zero_fw = c(net, 0, fw);
    let w = net.mux(end_frame, zero_fw, words1);
    let w = net.mux(push, w, in_words.q);
    net.drive(in_words, w);
    net.hold_unless(in_vc, start_frame, s_vc);
    let seq1 = net.add_const(in_seq.q, 1);
    net.hold_unless(in_seq, end_frame, seq1);
    let frame_words = net.zext(words1, 16);
    let unused = net.sub(frame_c16, frame_words);
    for v in 0..2 {
        let is_v = if v == 0 { net.not(vc_now) } else { vc_now };
        let reserve = net.and(start_frame, is_v);
        let give_back = net.and(end_frame, is_v);
        let plus = net.add(consumed[v].q, frame_c16);
        let after = net.mux(reserve, plus, consumed[v].q);
        let minus = net.sub(after, unused);
        let next = net.mux(give_back, minus, after);
        net.drive(consumed[v], next);
    }

    // ---------------- receive lanes, deskew and bonding ----------------
    let received: Vec<lane::Received> = (0..lanes).map(|k| lane::receive(net, k, rx_raw[k])).collect();
    let lane_up = {
        let mut acc = received[0].locked;
        for r in &received[1..] {
            acc = net.concat(r.locked, acc);
        }
        acc
    };
    net.output("lane_up", lane_up);
    let lockeds: Vec<Wire> = received.iter().map(|r| r.locked).collect();
    let all_locked = net.and_all(&lockeds);
    let is_cb = |net: &mut Netlist, valid: Wire, control: Wire, payload: Wire| {
        let low = net.slice(payload, 0, 16);
        let cb = c(net, idle_payload(CHANNEL_BOND), 16);
        let m = net.eq(low, cb);
        let m = net.and(m, control);
        net.and(m, valid)
    };
    let bonded = net.register("bonded", 1, 0);
    let phase = net.register("bond_phase", 4, 0);
    let phase1 = net.add_const(phase.q, 1);
    net.drive(phase, phase1);
    let mut have = vec![];
    let mut cb_phase = vec![];
    let mut raw_cb = vec![];
    for (k, r) in received.iter().enumerate() {
        have.push(net.register(&format!("bond_have{k}"), 1, 0));
        cb_phase.push(net.register(&format!("bond_cb_phase{k}"), 4, 0));
        raw_cb.push(is_cb(net, r.valid, r.control, r.payload));
    }
    let haves: Vec<Wire> = have.iter().map(|h| h.q).collect();
    let all_have = net.and_all(&haves);
    // Relative arrival of each lane's bonding block, as a signed 4-bit distance from lane 0.
    let rel: Vec<Wire> = cb_phase.iter().map(|p| net.sub(p.q, cb_phase[0].q)).collect();
    let mut max_rel = rel[0];
    for r in &rel[1..] {
        let less = net.slt(max_rel, *r);
        max_rel = net.mux(less, *r, max_rel);
    }
    let delays: Vec<Register> = (0..lanes).map(|k| net.register(&format!("deskew{k}"), 4, 0)).collect();
    let bond_now = net.not(bonded.q);
    let bond_now = net.and(bond_now, all_have);
    let bond_now = net.and(bond_now, all_locked);
    for k in 0..lanes {
        let d = net.sub(max_rel, rel[k]);
        net.hold_unless(delays[k], bond_now, d);
    }
    // Deskew: lane k's decoded blocks are read `delay` cycles after they were written.
    let deskew_ptr = net.register("deskew_ptr", 4, 0);
    let ptr1 = net.add_const(deskew_ptr.q, 1);
    net.drive(deskew_ptr, ptr1);
    let mut lv = vec![];
    let mut lc = vec![];
    let mut lp = vec![];
    for (k, r) in received.iter().enumerate() {
        let mem = net.memory(&format!("deskew{k}"), 66, 16);
        let word = net.concat(r.valid, r.control);
        let word = net.concat(word, r.payload);
        net.memory_write(mem, one, deskew_ptr.q, word);
        let addr = net.sub(deskew_ptr.q, delays[k].q);
        let old = net.memory_read(mem, addr);
        let direct = net.is_zero(delays[k].q);
        let out = net.mux(direct, word, old);
        lp.push(net.slice(out, 0, 64));
        lc.push(net.bit(out, 64));
        lv.push(net.bit(out, 65));
    }
    let aligned_cb: Vec<Wire> = (0..lanes).map(|k| is_cb(net, lv[k], lc[k], lp[k])).collect();
    let cb_any = net.or_all(&aligned_cb);
    let cb_all = net.and_all(&aligned_cb);
    let not_all = net.not(cb_all);
    let bond_error = net.and(cb_any, not_all);
    let bond_error = net.and(bond_error, bonded.q);
    let unbond = net.not(all_locked);
    let unbond = net.or(unbond, bond_error);
    let b = net.mux(bond_now, one, bonded.q);
    let b = net.mux(unbond, zero, b);
    net.drive(bonded, b);
    for k in 0..lanes {
        let record = net.not(bonded.q);
        let record = net.and(record, all_locked);
        let not_have = net.not(have[k].q);
        let record = net.and(record, not_have);
        let record = net.and(record, raw_cb[k]);
        net.hold_unless(cb_phase[k], record, phase.q);
        let h = net.mux(record, one, have[k].q);
        let clear = net.or(unbond, bond_now);
        let h = net.mux(clear, zero, h);
        net.drive(have[k], h);
    }
    let rx_up = net.and(bonded.q, all_locked);

    // Remote readiness: the partner sends not-ready idles until its own receiver has bonded.
    let btf = net.slice(lp[0], 0, 8);
    let low16 = net.slice(lp[0], 0, 16);
    let v0c = net.and(lv[0], lc[0]);
    let nr = c(net, idle_payload(NOT_READY), 16);
    let is_nr = net.eq(low16, nr);
    let is_nr = net.and(is_nr, v0c);
    let idle = c(net, idle_payload(IDLE), 16);
    let is_idle = net.eq(low16, idle);
    let is_idle = net.and(is_idle, v0c);
    let d0 = net.not(lc[0]);
    let is_data0 = net.and(lv[0], d0);
    let remote_ready = net.register("remote_ready", 1, 0);
    let ready_sign = net.or(is_idle, is_data0);
    let rr = net.mux(ready_sign, one, remote_ready.q);
    let rr = net.mux(is_nr, zero, rr);
    let down = net.not(rx_up);
    let rr = net.mux(down, zero, rr);
    net.drive(remote_ready, rr);
    let up = net.and(rx_up, remote_ready.q);
    net.resolve(channel_up, up);
    net.output("channel_up", channel_up);

    // ---------------- receive: frames into the virtual-channel buffers ----------------
    let datas: Vec<Wire> = (0..lanes)
        .map(|k| {
            let nc = net.not(lc[k]);
            net.and(lv[k], nc)
        })
        .collect();
    let all_data = net.and_all(&datas);
    let all_data = net.and(all_data, rx_up);
    let sep = c(net, (BTF_SEPARATOR as u128) | 6 << 8, 16);
    let is_sep = net.eq(low16, sep);
    let is_sep = net.and(is_sep, v0c);
    let is_sep = net.and(is_sep, rx_up);
    let kbtf = c(net, BTF_USER_K0 as u128, 8);
    let is_k = net.eq(btf, kbtf);
    let is_k = net.and(is_k, v0c);
    let is_k = net.and(is_k, rx_up);
    let ibtf = c(net, BTF_IDLE as u128, 8);
    let is_idle_family = net.eq(btf, ibtf);
    let valids = net.and_all(&lv);
    let nbtf = c(net, BTF_NATIVE_FLOW_CONTROL as u128, 8);
    let is_nfc = net.eq(btf, nbtf);
    let is_nfc = net.and(is_nfc, v0c);
    let is_nfc = net.and(is_nfc, rx_up);
    let known = net.or(is_sep, is_k);
    let known = net.or(known, is_idle_family);
    let known = net.or(known, is_nfc);
    let k1btf = c(net, BTF_USER_K1 as u128, 8);
    let is_k1 = net.eq(btf, k1btf);
    let is_k1 = net.and(is_k1, v0c);
    let is_k1 = net.and(is_k1, rx_up);
    let known = net.or(known, is_k1);
    // Native flow control from the partner: byte 1 = pause count, byte 2 bit 0 = XOFF. Data
    // stops for pause + 1 cycles, or until a message without XOFF; all zeros is XON.
    let nfc_pause = net.slice(lp[0], 8, 8);
    let nfc_xoff_in = net.bit(lp[0], 16);
    let nfc_xoff = net.register("nfc_xoff", 1, 0);
    let nfc_timer = net.register("nfc_timer", 9, 0);
    let pause9 = net.zext(nfc_pause, 9);
    let pause1 = net.add_const(pause9, 1);
    let xon = net.is_zero(nfc_pause);
    let not_xoff_in = net.not(nfc_xoff_in);
    let xon = net.and(xon, not_xoff_in);
    let zero9 = c(net, 0, 9);
    let timer_set = net.mux(xon, zero9, pause1);
    let timer_run = net.add_const(nfc_timer.q, -1);
    let timer_idle = net.is_zero(nfc_timer.q);
    let timer_run = net.mux(timer_idle, zero9, timer_run);
    let tm = net.mux(is_nfc, timer_set, timer_run);
    let down_now = net.not(rx_up);
    let tm = net.mux(down_now, zero9, tm);
    net.drive(nfc_timer, tm);
    let xo = net.mux(is_nfc, nfc_xoff_in, nfc_xoff.q);
    let xo = net.mux(down_now, zero, xo);
    net.drive(nfc_xoff, xo);
    let timer_busy = net.not(timer_idle);
    let nfc_hold = net.or(nfc_xoff.q, timer_busy);
    let rx_nfc_valid = net.register("rx_nfc_valid", 1, 0);
    net.drive(rx_nfc_valid, is_nfc);
    let rx_nfc_word = net.concat(nfc_xoff_in, nfc_pause);
    let rx_nfc_word = net.zext(rx_nfc_word, 16);
    let rx_nfc_data = net.register("rx_nfc_data", 16, 0);
    net.hold_unless(rx_nfc_data, is_nfc, rx_nfc_word);
    net.output("m_axis_nfc_tvalid", rx_nfc_valid.q);
    net.output("m_axis_nfc_tdata", rx_nfc_data.q);
    let any_data = net.or_all(&datas);
    let mixed = net.not(all_data);
    let mixed = net.and(mixed, any_data);
    let bad_ctrl = net.not(known);
    let bad_ctrl = net.and(bad_ctrl, v0c);
    let invalid = net.not(valids);
    let bad_block = net.or(invalid, bad_ctrl);
    let bad_block = net.or(bad_block, mixed);

    let rx_in_frame = net.register("rx_in_frame", 1, 0);
    let rx_bad = net.register("rx_bad", 1, 0);
    let rx_words = net.register("rx_words", fw + 1, 0);
    let rx_crc = net.register("rx_crc", 32, crc::INIT as u128);
    let rx_hdr = net.register("rx_header", 64, 0);
    let expected = net.register("rx_expected", SEQ_BITS, 0);
    let nak_sent = net.register("rx_nak_sent", 1, 0);
    let hdr_vc = net.bit(rx_hdr.q, 6);
    let header_now = net.not(rx_in_frame.q);
    let header_now = net.and(header_now, all_data);
    let payload_now = net.and(rx_in_frame.q, all_data);
    let trailer_now = net.and(rx_in_frame.q, is_sep);
    let t2 = c(net, crc::INIT as u128, 32);
    let crc_in = net.mux(header_now, t2, rx_crc.q);
    let crc_next = crc::update_word(net, crc_in, &lp);
    let took = net.or(header_now, payload_now);
    net.hold_unless(rx_crc, took, crc_next);
    net.hold_unless(rx_hdr, header_now, lp[0]);
    let spec_wr: Vec<Register> = (0..2).map(|v| net.register(&format!("rx_spec_wr{v}"), ba + 1, 0)).collect();
    let commit: Vec<Register> = (0..2).map(|v| net.register(&format!("rx_commit{v}"), ba + 1, 0)).collect();
    let rd: Vec<Register> = (0..2).map(|v| net.register(&format!("rx_rd{v}"), ba + 1, 0)).collect();
    let spec_now = net.mux(hdr_vc, spec_wr[1].q, spec_wr[0].q);
    let rd_now = net.mux(hdr_vc, rd[1].q, rd[0].q);
    let fill = net.sub(spec_now, rd_now);
    let b_words = c(net, config.vc_buffer_words as u128, ba + 1);
    let room = net.ult(fill, b_words);
    let f_words = c(net, frame_max, fw + 1);
    let frame_room = net.ult(rx_words.q, f_words);
    let can_write = net.and(room, frame_room);
    let not_bad = net.not(rx_bad.q);
    let write = net.and(payload_now, can_write);
    let write = net.and(write, not_bad);
    let overflow = net.not(can_write);
    let overflow = net.and(payload_now, overflow);

    // Trailer checks.
    let got_crc = net.slice(lp[0], 16, 32);
    let t3 = c(net, crc::XOR_OUT as u128, 32);
    let info = net.slice(lp[0], 48, 8);
    // The trailer's own information byte is covered too, as one more 64-bit word.
    let info_word = net.zext(info, 64);
    let crc_all = crc::update_word(net, rx_crc.q, &[info_word]);
    let final_crc = net.xor(crc_all, t3);
    let crc_ok = net.eq(got_crc, final_crc);
    let nbytes = net.slice(info, 0, nb);
    let user_last = net.bit(info, 7);
    let hdr_seq = net.slice(rx_hdr.q, 0, SEQ_BITS);
    let seq_ok = net.eq(hdr_seq, expected.q);
    let some_words = net.nonzero(rx_words.q);
    let nb_zero = net.is_zero(nbytes);
    let t4 = c(net, kw as u128, nb);
    let nb_big = net.ult(t4, nbytes);
    let nb_bad = net.or(nb_zero, nb_big);
    let nb_ok = net.not(nb_bad);
    let good = net.and(trailer_now, not_bad);
    let good = net.and(good, crc_ok);
    let good = net.and(good, some_words);
    let good = net.and(good, nb_ok);
    let clean = good; // a frame that arrived intact (maybe a duplicate)
    let good = net.and(good, seq_ok);
    // Behind: a duplicate of an accepted frame (the ack went missing) — acknowledge again.
    let behind_by = net.sub(expected.q, hdr_seq);
    let half = c(net, 1 << (SEQ_BITS - 1), SEQ_BITS);
    let behind = net.ult(behind_by, half);
    let not_ok = net.not(seq_ok);
    let duplicate = net.and(clean, not_ok);
    let duplicate = net.and(duplicate, behind);
    let failed = net.not(good);
    let failed = net.and(trailer_now, failed);
    let not_dup = net.not(duplicate);
    let failed = net.and(failed, not_dup);
    let crc_bad = net.not(crc_ok);
    let crc_error = net.and(trailer_now, crc_bad);

    let fr = net.mux(header_now, one, rx_in_frame.q);
    let fr = net.mux(trailer_now, zero, fr);
    let fr = net.mux(rx_up, fr, zero);
    net.drive(rx_in_frame, fr);
    let marks_bad = net.or(bad_block, overflow);
    let marks_bad = net.and(marks_bad, rx_in_frame.q);
    let bd = net.mux(marks_bad, one, rx_bad.q);
    let bd = net.mux(header_now, zero, bd);
    net.drive(rx_bad, bd);
    let rw1 = net.add_const(rx_words.q, 1);
    let rw = net.mux(write, rw1, rx_words.q);
    let t5 = c(net, 0, fw + 1);
    let rw = net.mux(header_now, t5, rw);
    net.drive(rx_words, rw);
    let e1 = net.add_const(expected.q, 1);
    net.hold_unless(expected, good, e1);
    let nak_now = net.not(nak_sent.q);
    let nak_now = net.and(nak_now, failed);
    let ns = net.mux(nak_now, one, nak_sent.q);
    let ns = net.mux(good, zero, ns);
    net.drive(nak_sent, ns);

    // Virtual-channel buffers: words written speculatively, released at a good trailer.
    let hdr_vc_n = net.not(hdr_vc);
    let mut credit_limit_out = vec![];
    let mut freed_changed = vec![];
    for v in 0..2 {
        let is_v = if v == 0 { hdr_vc_n } else { hdr_vc };
        let wr_v = net.and(write, is_v);
        let spec_low = net.slice(spec_wr[v].q, 0, ba);
        let mems: Vec<usize> = (0..lanes).map(|k| net.memory(&format!("vc{v}_lane{k}"), 64, config.vc_buffer_words)).collect();
        for k in 0..lanes {
            net.memory_write(mems[k], wr_v, spec_low, lp[k]);
        }
        // Side information per word: bytes valid and end of packet; the trailer rewrites the
        // frame's last word.
        let side = net.memory(&format!("vc{v}_side"), nb + 1, config.vc_buffer_words);
        let good_v = net.and(good, is_v);
        let last_addr = net.add_const(spec_wr[v].q, -1);
        let last_low = net.slice(last_addr, 0, ba);
        let side_addr = net.mux(good_v, last_low, spec_low);
        let full_side = c(net, kw as u128, nb + 1);
        let end_side = net.concat(user_last, nbytes);
        let side_data = net.mux(good_v, end_side, full_side);
        let side_we = net.or(wr_v, good_v);
        net.memory_write(side, side_we, side_addr, side_data);
        let s1 = net.add_const(spec_wr[v].q, 1);
        let s = net.mux(wr_v, s1, spec_wr[v].q);
        let t6 = c(net, 1, 1);
        let restart = net.and(header_now, t6);
        let new_vc = net.bit(lp[0], 6);
        let new_is_v = if v == 0 { net.not(new_vc) } else { new_vc };
        let restart = net.and(restart, new_is_v);
        let s = net.mux(restart, commit[v].q, s);
        net.drive(spec_wr[v], s);
        net.hold_unless(commit[v], good_v, spec_wr[v].q);
        // Output stream of this virtual channel.
        let valid = net.eq(rd[v].q, commit[v].q);
        let valid = net.not(valid);
        let rd_low = net.slice(rd[v].q, 0, ba);
        for k in 0..lanes {
            let word = net.memory_read(mems[k], rd_low);
            net.output(&format!("m_axis_vc{v}_tdata@{}", 64 * k), word);
        }
        let side_word = net.memory_read(side, rd_low);
        let count = net.slice(side_word, 0, nb);
        let last = net.bit(side_word, nb);
        let ones = c(net, u128::MAX, kw);
        let shifted = net.shl(ones, count);
        let keep = net.not(shifted);
        net.output(&format!("m_axis_vc{v}_tkeep"), keep);
        net.output(&format!("m_axis_vc{v}_tlast"), last);
        net.output(&format!("m_axis_vc{v}_tvalid"), valid);
        let pop = net.and(valid, m_ready[v]);
        let r1 = net.add_const(rd[v].q, 1);
        net.hold_unless(rd[v], pop, r1);
        let freed = net.register(&format!("rx_freed{v}"), 16, 0);
        let f1 = net.add_const(freed.q, 1);
        net.hold_unless(freed, pop, f1);
        let lim = net.add_const(freed.q, config.vc_buffer_words as i128);
        credit_limit_out.push(lim);
        freed_changed.push(pop);
    }

    // Acknowledgement information received: from a good header, or a checked user-K block.
    let k_info = net.slice(lp[0], 8, 40);
    let k_check = net.slice(lp[0], 48, 16);
    let k_crc = crc::check(net, k_info, 16);
    let k_ok = net.eq(k_crc, k_check);
    let k_ok = net.and(k_ok, is_k);
    let hdr_ack = net.slice(rx_hdr.q, 8, SEQ_BITS);
    let hdr_nak = net.bit(rx_hdr.q, 7);
    let hdr_l0 = net.slice(rx_hdr.q, 16, 16);
    let hdr_l1 = net.slice(rx_hdr.q, 32, 16);
    let k_ack = net.slice(k_info, 0, SEQ_BITS);
    let k_nak = net.bit(k_info, 7);
    let k_l0 = net.slice(k_info, 8, 16);
    let k_l1 = net.slice(k_info, 24, 16);
    // Credits of the partner's consumer (user-K block 1): two absolute 16-bit counts of flits
    // freed per VC, so a lost or rejected block costs nothing but delay. Each step of a count
    // becomes one `tx_credit` pulse here, at most one per VC per cycle.
    let c_info = net.slice(lp[0], 8, 32);
    let c_check = net.slice(lp[0], 40, 24);
    let c_crc = crc::check(net, c_info, 24);
    let c_ok = net.eq(c_crc, c_check);
    let c_ok = net.and(c_ok, is_k1);
    let mut pulses = vec![];
    for v in 0..2 {
        let remote = net.register(&format!("remote_freed{v}"), 16, 0);
        let delivered = net.register(&format!("credits_delivered{v}"), 16, 0);
        let value = net.slice(c_info, 16 * v, 16);
        net.hold_unless(remote, c_ok, value);
        let owed = net.eq(remote.q, delivered.q);
        let owed = net.not(owed);
        let d1 = net.add_const(delivered.q, 1);
        net.hold_unless(delivered, owed, d1);
        pulses.push(owed);
    }
    let tx_credit = net.concat(pulses[1], pulses[0]);
    net.output("tx_credit", tx_credit);
    let info_in = net.or(good, duplicate);
    let info_in = net.or(info_in, k_ok);
    let ack_in = net.mux(k_ok, k_ack, hdr_ack);
    let nak_in = net.mux(k_ok, k_nak, hdr_nak);
    let l0_in = net.mux(k_ok, k_l0, hdr_l0);
    let l1_in = net.mux(k_ok, k_l1, hdr_l1);
    net.hold_unless(limit[0], info_in, l0_in);
    net.hold_unless(limit[1], info_in, l1_in);
    // An acknowledgement may only move forward, to a frame that exists.
    let ahead = net.sub(ack_in, acked_seq.q);
    let t9 = net_ult_gt(net, ahead, in_flight);
    let ack_ok = net.not(t9);
    let ack_ok = net.and(ack_ok, info_in);
    net.hold_unless(acked_seq, ack_ok, ack_in);
    let start_of_acked = net.memory_read(start_mem, ack_in);
    let start_addr = net.slice(start_of_acked, 0, ra + 1);
    let at_head = net.eq(ack_in, in_seq.q);
    let not_started = net.not(in_frame.q);
    let at_head = net.and(at_head, not_started);
    let new_acked_addr = net.mux(at_head, wr.q, start_addr);
    net.hold_unless(acked_addr, ack_ok, new_acked_addr);

    // ---------------- transmit scheduler ----------------
    let state = net.register("tx_state", 2, ST_IDLE);
    let tx_seq = net.register("tx_seq", SEQ_BITS, 0);
    let sent_hw = net.register("tx_sent_high", SEQ_BITS, 0);
    let rdp = net.register("tx_rd", ra + 1, 0);
    let tx_crc = net.register("tx_crc", 32, crc::INIT as u128);
    let timer = net.register("retransmit_timer", 16, 0);
    let cc_timer = net.register("cc_timer", 16, 0);
    let bond_timer = net.register("bond_timer", 4, 0);
    let since_info = net.register("since_ack", 7, 0);
    let dirty = net.register("ack_dirty", 1, 1);
    let urgent = net.register("ack_urgent", 1, 0);

    let cc_t1 = net.add_const(cc_timer.q, 1);
    let t10 = c(net, config.cc_interval as u128, 16);
    let cc_wrap = net.eq(cc_t1, t10);
    let t11 = c(net, 0, 16);
    let cc_t = net.mux(cc_wrap, t11, cc_t1);
    net.drive(cc_timer, cc_t);
    let t12 = c(net, config.cc_burst as u128, 16);
    let send_cc = net.ult(cc_timer.q, t12);
    let bt1 = net.add_const(bond_timer.q, 1);
    net.drive(bond_timer, bt1);
    let bond_slot = net.is_zero(bond_timer.q);
    let _ = BOND_PERIOD;

    let t13 = c(net, ST_IDLE, 2);
    let state_idle = net.eq(state.q, t13);
    let t14 = c(net, ST_PAYLOAD, 2);
    let state_payload = net.eq(state.q, t14);
    let t15 = c(net, ST_TRAILER, 2);
    let state_trailer = net.eq(state.q, t15);
    // Go back N at a frame boundary, or catch up when acknowledgements passed the sender.
    let tx_ahead = net.sub(tx_seq.q, acked_seq.q);
    let stale = net_ult_gt(net, tx_ahead, in_flight);
    let rewind = net.or(go_back.q, stale);
    let rewind = net.and(rewind, state_idle);
    let started = net.eq(tx_seq.q, in_seq.q);
    let started = net.not(started);
    let complete = started;
    let started = net.or(started, in_frame.q);
    let start_read = net.memory_read(start_mem, tx_seq.q);
    let end_read = net.memory_read(end_mem, tx_seq.q);
    let frame_vc = net.bit(start_read, ra + 1);
    let frame_start = net.slice(start_read, 0, ra + 1);
    let end_addr = net.slice(end_read, 0, ra);
    let end_bytes = net.slice(end_read, ra, nb);
    let end_last = net.bit(end_read, ra + nb);
    let not_rewind = net.not(rewind);
    let want_header = net.and(state_idle, started);
    let want_header = net.and(want_header, not_rewind);
    let rd_low = net.slice(rdp.q, 0, ra);
    let have_word = net.eq(rdp.q, wr.q);
    let have_word = net.not(have_word);
    let want_payload = net.and(state_payload, have_word);
    let last_word = net.eq(rd_low, end_addr);
    let last_word = net.and(last_word, complete);
    let want_data = net.or(want_header, want_payload);
    let want_data = net.or(want_data, state_trailer);
    let no_cc = net.not(send_cc);
    let running = net.and(no_cc, channel_up);
    let training = net.not(channel_up);
    let training = net.and(training, no_cc);
    let t16 = c(net, ACK_INTERVAL - 1, 7);
    let overdue = net.ult(t16, since_info.q);
    let send_nfc = net.and(nfc_valid, running);
    net.output("s_axis_nfc_tready", send_nfc);
    let not_data = net.not(want_data);
    let not_data = net.or(not_data, nfc_hold);
    let ack_slot = net.or(not_data, urgent.q);
    let ack_slot = net.or(ack_slot, overdue);
    let not_header = net.not(want_header);
    let send_ack = net.and(dirty.q, not_header);
    let send_ack = net.and(send_ack, ack_slot);
    let send_ack = net.and(send_ack, running);
    let no_nfc = net.not(send_nfc);
    let send_ack = net.and(send_ack, no_nfc);
    // Credits freed by this side's consumer, sent in user-K block 1 when they changed: in an
    // idle slot, or taking a data slot at most every ACK_INTERVAL cycles.
    let freed_total: Vec<Register> = (0..2).map(|v| net.register(&format!("freed_total{v}"), 16, 0)).collect();
    let credit_dirty = net.register("credit_dirty", 1, 0);
    let since_credit = net.register("since_credit", 7, 0);
    for v in 0..2 {
        let r = net.bit(credit_return, v);
        let f1 = net.add_const(freed_total[v].q, 1);
        net.hold_unless(freed_total[v], r, f1);
    }
    let t16c = c(net, ACK_INTERVAL - 1, 7);
    let credit_overdue = net.ult(t16c, since_credit.q);
    let credit_slot = net.or(not_data, credit_overdue);
    let send_credit = net.and(credit_dirty.q, credit_slot);
    let send_credit = net.and(send_credit, not_header);
    let send_credit = net.and(send_credit, running);
    let send_credit = net.and(send_credit, no_nfc);
    let not_ack_now = net.not(send_ack);
    let send_credit = net.and(send_credit, not_ack_now);
    let returned = net.nonzero(credit_return);
    let cd = net.mux(send_credit, zero, credit_dirty.q);
    let cd = net.or(cd, returned);
    net.drive(credit_dirty, cd);
    let sc1 = net.add_const(since_credit.q, 1);
    let sc_cap = net.all_ones(since_credit.q);
    let sc = net.mux(sc_cap, since_credit.q, sc1);
    let zero7 = c(net, 0, 7);
    let sc = net.mux(send_credit, zero7, sc);
    net.drive(since_credit, sc);
    let counts = net.concat(freed_total[1].q, freed_total[0].q);
    let ccheck = crc::check(net, counts, 24);
    let credit_block = net.concat(ccheck, counts);
    let credit_block = net.concat(credit_block, k1btf);
    let no_ack = net.not(send_ack);
    let no_credit = net.not(send_credit);
    let no_ack = net.and(no_ack, no_credit);
    let go = net.and(running, no_ack);
    let go = net.and(go, no_nfc);
    let unpaused = net.not(nfc_hold);
    let go = net.and(go, unpaused);
    let send_header = net.and(go, want_header);
    let send_payload = net.and(go, want_payload);
    let send_trailer = net.and(go, state_trailer);

    // Acknowledgement fields this side advertises.
    let nak_flag = nak_sent.q;
    let t17 = c(net, 0, 7 - SEQ_BITS);
    let ack_fields = net.concat(nak_flag, t17);
    let ack_fields = net.concat(ack_fields, expected.q); // 8 bits: ack | nak << 7
    let limits = net.concat(credit_limit_out[1], credit_limit_out[0]);
    let info40 = net.concat(limits, ack_fields); // bytes 1..=5
    // Header word, lane 0.
    let hdr_low = net.concat(frame_vc, tx_seq.q);
    let hdr_low = net.concat(nak_flag, hdr_low); // bits 7:0
    let t18 = c(net, 0, 8 - SEQ_BITS);
    let hdr_ack = net.concat(t18, expected.q); // bits 15:8
    let hdr = net.concat(hdr_ack, hdr_low);
    let hdr = net.concat(limits, hdr);
    let hdr = net.zext(hdr, 64);
    let zero64 = c(net, 0, 64);
    let words: Vec<Wire> = (0..lanes).map(|k| net.memory_read(replay[k], rd_low)).collect();
    let mut data_lanes = vec![];
    for k in 0..lanes {
        let h = if k == 0 { hdr } else { zero64 };
        data_lanes.push(net.mux(send_header, h, words[k]));
    }
    let t19 = c(net, crc::INIT as u128, 32);
    let crc_base = net.mux(send_header, t19, tx_crc.q);
    let crc_after = crc::update_word(net, crc_base, &data_lanes);
    let advance_crc = net.or(send_header, send_payload);
    net.hold_unless(tx_crc, advance_crc, crc_after);
    // Trailer (separator, count 6) and stand-alone acknowledgement (user-K block 0).
    let t20 = c(net, crc::XOR_OUT as u128, 32);
    let t21 = c(net, 0, 7 - nb);
    let tinfo = net.concat(end_last, t21);
    let tinfo = net.concat(tinfo, end_bytes);
    let tinfo_word = net.zext(tinfo, 64);
    let crc_all = crc::update_word(net, tx_crc.q, &[tinfo_word]);
    let final_tx = net.xor(crc_all, t20);
    let trailer = net.concat(tinfo, final_tx);
    let t22 = c(net, (BTF_SEPARATOR as u128) | 6 << 8, 16);
    let trailer = net.concat(trailer, t22);
    let trailer = net.zext(trailer, 64);
    let check = crc::check(net, info40, 16);
    let kblock = net.concat(check, info40);
    let t25 = c(net, BTF_USER_K0 as u128, 8);
    let kblock = net.concat(kblock, t25);

    // Lane blocks.
    let idle_block = c(net, idle_payload(IDLE), 64);
    let nr_block = c(net, idle_payload(NOT_READY), 64);
    let cb_block = c(net, idle_payload(CHANNEL_BOND), 64);
    let cc_block = c(net, idle_payload(CLOCK_COMPENSATION), 64);
    let training_block = net.mux(rx_up, idle_block, nr_block);
    let training_block = net.mux(bond_slot, cb_block, training_block);
    let data_out = net.or(send_header, send_payload);
    for k in 0..lanes {
        let mut p = idle_block;
        if k == 0 {
            p = net.mux(send_ack, kblock, p);
            p = net.mux(send_trailer, trailer, p);
            let nfc_fields = net.slice(nfc_data, 0, 9);
            let nfc_block = net.concat(nfc_fields, nbtf);
            let nfc_block = net.zext(nfc_block, 64);
            p = net.mux(send_nfc, nfc_block, p);
            p = net.mux(send_credit, credit_block, p);
        }
        p = net.mux(data_out, data_lanes[k], p);
        p = net.mux(training, training_block, p);
        p = net.mux(send_cc, cc_block, p);
        let control = net.not(data_out);
        let control = net.or(control, send_cc);
        let control = net.or(control, training);
        let block = lane::transmit(net, k, control, p);
        let block = net.name(block, &format!("tx_block{k}"));
        net.output(&format!("tx_serial@{}", 66 * k), block);
    }

    // Scheduler state.
    let t26 = c(net, ST_PAYLOAD, 2);
    let s = net.mux(send_header, t26, state.q);
    let to_trailer = net.and(send_payload, last_word);
    let t27 = c(net, ST_TRAILER, 2);
    let s = net.mux(to_trailer, t27, s);
    let t28 = c(net, ST_IDLE, 2);
    let s = net.mux(send_trailer, t28, s);
    net.drive(state, s);
    let next_seq = net.add_const(tx_seq.q, 1);
    let ts = net.mux(send_trailer, next_seq, tx_seq.q);
    let ts = net.mux(rewind, acked_seq.q, ts);
    net.drive(tx_seq, ts);
    let r1 = net.add_const(rdp.q, 1);
    let r = net.mux(send_payload, r1, rdp.q);
    let r = net.mux(send_header, frame_start, r);
    net.drive(rdp, r);
    // A trailer for a frame below the high-water mark is a retransmission.
    let hw_dist = net.sub(sent_hw.q, tx_seq.q);
    let t29 = c(net, 0, SEQ_BITS);
    let resend = net.ult(t29, hw_dist);
    let t30 = c(net, MAX_IN_FLIGHT + 1, SEQ_BITS);
    let t31 = net_ult_gt(net, t30, hw_dist);
    let resend = net.and(resend, t31);
    let retransmitted = net.and(send_trailer, resend);
    let fresh = net.not(resend);
    let fresh = net.and(send_trailer, fresh);
    net.hold_unless(sent_hw, fresh, next_seq);
    // Retransmission timer: runs while frames are unacknowledged, restarts on progress.
    let outstanding = net.eq(acked_seq.q, sent_hw.q);
    let outstanding = net.not(outstanding);
    let progress = ack_ok;
    let t1 = net.add_const(timer.q, 1);
    let t32 = c(net, config.retransmit_timeout as u128, 16);
    let expire = net.eq(t1, t32);
    let t33 = c(net, 0, 16);
    let t = net.mux(outstanding, t1, t33);
    let t34 = c(net, 0, 16);
    let t = net.mux(progress, t34, t);
    let t35 = c(net, 0, 16);
    let t = net.mux(expire, t35, t);
    // Paused by native flow control: the partner cannot acknowledge what was not sent.
    let no_progress = net.not(progress);
    let frozen = net.and(nfc_hold, no_progress);
    let t = net.mux(frozen, timer.q, t);
    net.drive(timer, t);
    let nak_go = net.and(ack_ok, nak_in);
    let timeout_go = net.and(expire, outstanding);
    let timeout_go = net.and(timeout_go, unpaused);
    let gb = net.or(nak_go, timeout_go);
    let gb = net.mux(gb, one, go_back.q);
    let clear_gb = net.and(state_idle, go_back.q);
    let gb = net.mux(clear_gb, zero, gb);
    // A request that arrives in the same cycle as the rewind stays pending.
    let t36 = net.and(nak_go, clear_gb);
    let gb = net.or(gb, t36);
    net.drive(go_back, gb);
    // Acknowledgement bookkeeping.
    let info_sent = net.or(send_header, send_ack);
    let changed = net.or(good, duplicate);
    let changed = net.or(changed, nak_now);
    let changed = net.or(changed, freed_changed[0]);
    let changed = net.or(changed, freed_changed[1]);
    let d = net.mux(info_sent, zero, dirty.q);
    let d = net.or(d, changed);
    net.drive(dirty, d);
    let u = net.mux(info_sent, zero, urgent.q);
    let u = net.or(u, nak_now);
    net.drive(urgent, u);
    let si1 = net.add_const(since_info.q, 1);
    let capped = net.all_ones(since_info.q);
    let si = net.mux(capped, since_info.q, si1);
    let t37 = c(net, 0, 7);
    let si = net.mux(info_sent, t37, si);
    net.drive(since_info, si);

    // ---------------- counters ----------------
    let lost: Vec<Wire> = received.iter().map(|r| net.zext(r.lock_lost, 32)).collect();
    let mut lost_sum = lost[0];
    for l in &lost[1..] {
        lost_sum = net.add(lost_sum, *l);
    }
    let counters = [
        ("frames_sent", fresh),
        ("frames_retransmitted", retransmitted),
        ("frames_received", good),
        ("crc_errors", crc_error),
    ];
    for (name, event) in counters {
        let r = net.register(name, 32, 0);
        let r1 = net.add_const(r.q, 1);
        net.hold_unless(r, event, r1);
        net.output(name, r.q);
    }
    let ll = net.register("lock_losses", 32, 0);
    let ll1 = net.add(ll.q, lost_sum);
    net.drive(ll, ll1);
    net.output("lock_losses", ll.q);
    Ok(n)
}

/// `a > b`, unsigned.
fn net_ult_gt(net: &mut Netlist, a: Wire, b: Wire) -> Wire {
    net.ult(b, a)
}
