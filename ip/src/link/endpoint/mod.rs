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

//!
//! The netlist is built in five parts, one file each: `ingress.rs` (user beats into the replay
//! buffer, frame table, link-credit reservation), `bonding.rs` (lane receive, deskew, channel
//! bonding, remote readiness), `receive.rs` (block classification, native flow control in, frames
//! into the virtual-channel buffers), `control.rs` (acknowledgements and credits received) and
//! `transmit.rs` (the scheduler, lane blocks, retransmission, acknowledgement bookkeeping).
//!
//! Pipelined for at most six LUT levels between registers (Yosys `synth_xilinx`): each receive
//! lane registers its aligned block before checking it; the deskewed words are registered once
//! more while their classification, CRC data part and control-block checks are prepared beside
//! them; the next stage checks and commits the frame; acknowledgements are applied from
//! registered copies two cycles after the trailer, and the retransmission timer and go-back see
//! them a cycle after that; the transmit scheduler registers its choice and the next cycle runs
//! the CRC, closes the trailer and scrambles the lanes. Against the unpipelined endpoint a
//! packet takes two cycles longer from one user to the other (the bonded-word register and the
//! scheduler's register).

mod bonding;
mod control;
mod elastic;
mod ingress;
mod receive;
pub mod session;
mod transmit;

use crate::Error;
use weft_hdl::netlist::{Design, Netlist, Reg, Sig};

use super::config::{bits_for, log2, LinkConfig, SEQ_BITS};
use super::crc;

/// Sizes every part uses.
pub(super) struct Sizes {
    pub lanes: usize,
    pub frame_max: u128,
    /// Replay-buffer address bits.
    pub ra: usize,
    /// Virtual-channel buffer address bits.
    pub ba: usize,
    /// Bits of a frame's word count.
    pub fw: usize,
    /// `tkeep` bits.
    pub kw: usize,
    /// Bits of the byte-count field.
    pub nb: usize,
}

/// State the transmit and receive directions share: what the partner acknowledged, the credit
/// limits it advertised, a pending go-back-N, and whether the channel is up.
pub(super) struct Shared<'d> {
    pub acked_seq: Reg<'d>,
    pub acked_addr: Reg<'d>,
    pub limit: [Reg<'d>; 2],
    pub go_back: Reg<'d>,
    pub channel_up: Sig<'d>,
    /// The link session restarts (see [`session`]).
    pub hold: Sig<'d>,
}

/// `state` advanced over `words` (64 bits each) by the CRC-32C update.
pub(super) fn crc_update<'d>(d: &'d Design, state: Sig<'d>, words: &[Sig<'d>]) -> Sig<'d> {
    let wires: Vec<_> = words.iter().map(|s| s.wire).collect();
    let w = crc::update_word(&mut d.net(), state.wire, &wires);
    d.sig(w)
}

/// `value` one cycle later, in a register named `name` (zero after reset).
pub(super) fn registered<'d>(d: &'d Design, name: &str, value: Sig<'d>) -> Sig<'d> {
    let r = d.reg(name, value.width, 0);
    r.next(value);
    r.q
}

/// The CRC state the link keeps is one word ahead: `state` advanced over 64 zero bits. The
/// update over a word, `state·M ^ D(word)`, then holds for it as well (the two shifts commute),
/// with the data part taken one word ahead too; and closing a frame with the trailer's
/// information word is a single XOR: `update(crc, info) = ahead(crc) ^ D(info)`.
pub(super) fn crc_ahead(value: u32) -> u128 {
    crc::update_bits(value, &[0], 64) as u128
}

/// The state part of the CRC update over `words` 64-bit words: `state` advanced over zeros.
pub(super) fn crc_shift<'d>(d: &'d Design, state: Sig<'d>, words: usize) -> Sig<'d> {
    crc_update(d, state, &vec![d.lit(0, 64); words])
}

/// The data part of the CRC update over `words`, one word ahead (followed by a zero word).
pub(super) fn crc_data_ahead<'d>(d: &'d Design, words: &[Sig<'d>]) -> Sig<'d> {
    let mut all = words.to_vec();
    all.push(d.lit(0, 64));
    crc_update(d, d.lit(0, 32), &all)
}

/// The low `bits` bits of the CRC-32C of `info` followed by zero bytes (control-block check).
pub(super) fn crc_check<'d>(d: &'d Design, info: Sig<'d>, bits: usize) -> Sig<'d> {
    let w = crc::check(&mut d.net(), info.wire, bits);
    d.sig(w)
}

/// Builds the endpoint netlist. Ports: `s_axis_*` (tdata `64·lanes`, tkeep, tlast, tuser = vc),
/// `m_axis_vc0_*`, `m_axis_vc1_*`, `s_axis_nfc_*` / `m_axis_nfc_*` (native flow control),
/// `rx_serial` / `tx_serial` (66 bits per lane, lane k at bits `66k+65:66k`), `lane_up`,
/// `channel_up` and 32-bit counters `frames_sent`, `frames_retransmitted`, `frames_received`,
/// `crc_errors`, `lock_losses`, `retrains` (the channel came up again after its first training)
/// and `up_cycles` (cycles since the channel last came up, 0 while down). With `config.rx_clock`, `rx_serial` is synchronous to its own
/// clock `rx_clk` (reset `rx_rst`), every other port to `clk`, and a counter `slips` (clock
/// compensation inserted or deleted) joins the others.
pub fn endpoint(config: &LinkConfig) -> Result<Netlist, Error> {
    config.validate()?;
    let d = Design::new();
    let lanes = config.lanes;
    let z = Sizes {
        lanes,
        frame_max: config.max_frame_words as u128,
        ra: log2(config.replay_words),
        ba: log2(config.vc_buffer_words),
        fw: bits_for(config.max_frame_words),
        kw: 8 * lanes,
        nb: bits_for(8 * lanes).max(6),
    };
    let tdata = d.input("s_axis_tdata", 64 * lanes);
    let user = ingress::UserIn {
        data: (0..lanes).map(|k| tdata.bits(64 * k, 64)).collect(),
        keep: d.input("s_axis_tkeep", z.kw),
        last: d.input("s_axis_tlast", 1),
        vc: d.input("s_axis_tuser", 1),
        valid: d.input("s_axis_tvalid", 1),
    };
    let m_ready: Vec<Sig> = (0..2).map(|v| d.input(&format!("m_axis_vc{v}_tready"), 1)).collect();
    let rx_all = d.input("rx_serial", 66 * lanes);
    let rx_serial: Vec<Sig> = (0..lanes).map(|k| rx_all.bits(66 * k, 66)).collect();
    let nfc = transmit::NfcIn { valid: d.input("s_axis_nfc_tvalid", 1), data: d.input("s_axis_nfc_tdata", 16) };
    let credit_return = d.input("rx_credit_return", 2);

    d.section("state shared by the two directions");
    let shared = Shared {
        acked_seq: d.reg("acked_seq", SEQ_BITS, 0),
        acked_addr: d.reg("acked_addr", z.ra + 1, 0),
        limit: [0, 1].map(|v| d.reg(&format!("credit_limit{v}"), 16, config.vc_buffer_words as u128)),
        go_back: d.reg("go_back", 1, 0),
        channel_up: d.later(1),
        hold: d.later(1),
    };
    // Each part of the endpoint is a module of its own in the Verilog.
    let ing = d.unit("ingress", "ingress", || ingress::ingress(&d, config, &z, &shared, &user));
    d.output("s_axis_tready", ing.ready);
    let rx_domain = config.rx_clock.then(|| d.net().domain_named("rx_clk"));
    let lanes_in = d.unit("bonding", "bonding", || bonding::bonding(&d, &z, &rx_serial, rx_domain));
    d.output("lane_up", lanes_in.lane_up);
    shared.channel_up.define(lanes_in.channel_up);
    shared.hold.define(lanes_in.hold);
    // Up for the user once a frame can go (defined below, once the credit limits are known).
    let up = d.later(1);
    d.output("channel_up", up);
    let rx = d.unit("receive", "receive", || receive::receive(&d, config, &z, &lanes_in, &m_ready, credit_return));
    let acks = d.unit("control", "control", || control::control(&d, &z, &shared, &ing, &lanes_in, &rx));
    let tx = d.unit("transmit", "transmit", || transmit::transmit(&d, config, &z, &shared, &ing, &lanes_in, &rx, &acks, &nfc));
    d.section("channel up for the user: trained, the partner ready, its credit limits in");
    // Until the limits arrive, about a round trip after training, the ingress takes no frame.
    up.define((shared.channel_up & acks.limits_known).named("channel_ready"));

    d.section("counters");
    for (name, event) in [("frames_sent", tx.fresh), ("frames_retransmitted", tx.retransmitted), ("frames_received", rx.good), ("crc_errors", rx.crc_error)] {
        let r = d.reg(name, 32, 0);
        r.next_when(event, r.q + 1u32);
        d.output(name, r.q);
    }
    let lost = lanes_in.lock_lost.iter().map(|l| l.zext(32)).reduce(|a, b| a + b).unwrap();
    let lock_losses = d.reg("lock_losses", 32, 0);
    lock_losses.next(lock_losses.q + lost);
    d.output("lock_losses", lock_losses.q);
    if config.rx_clock {
        d.counter("slips", lanes_in.slip);
    }
    // Restarts of the partner seen while running, and the frames they cost: those written and
    // not acknowledged, and the one being written (the rest of its packet is discarded).
    d.counter("partner_restarts", lanes_in.partner_restart);
    let dropped = d.reg("frames_dropped", 32, 0);
    let unacked = (ing.in_seq.q - shared.acked_seq.q).zext(32) + ing.in_frame.q.zext(32);
    dropped.next_when(lanes_in.partner_restart, dropped.q + unacked);
    d.output("frames_dropped", dropped.q);
    // Link health: how often the channel came back after its first training, and how long it
    // has been up (zero while down).
    let was_up = registered(&d, "channel_was_up", up);
    let ever_up = d.reg("channel_ever_up", 1, 0);
    ever_up.set_when(up);
    d.counter("retrains", up & !was_up & ever_up.q);
    let up_cycles = d.reg("up_cycles", 32, 0);
    up_cycles.next(up.mux(up_cycles.q + 1u32, 0));
    d.output("up_cycles", up_cycles.q);
    Ok(d.finish())
}

#[cfg(test)]
mod tests {
    use super::*;
    use weft_hdl::netlist::eval::Evaluator;
    use weft_hdl::testbench::Rng;

    /// Two endpoints on oscillators 312 ppm apart (periods 6,400 and 6,402), each receiving on
    /// the other's clock: both come up, and each elastic buffer slips exactly as often as the
    /// clocks drift apart (the faster side's words pile up and clock compensation is deleted; the
    /// slower side's buffer runs dry and compensation is inserted).
    #[test]
    fn elastic_buffers_absorb_the_clock_difference() {
        use weft_hdl::netlist::eval::Clocks;
        let config = LinkConfig { lanes: 2, rx_clock: true, max_frame_words: 8, replay_words: 64, vc_buffer_words: 32, ..Default::default() };
        let mut ends: Vec<Evaluator> = (0..2).map(|_| Evaluator::new(endpoint(&config).unwrap())).collect();
        let rx = ends[0].domain("rx_clk").unwrap();
        let periods = [6400u64, 6402];
        let mut clocks = Clocks::new(&periods, &[0, 1000]);
        let mut edges = [0u64; 2];
        while edges[0] < 200_000 {
            let rising = clocks.advance();
            for e in ends.iter_mut() {
                e.settle();
            }
            let reset = edges[0] < 3;
            for &i in &rising {
                // The partner's receive side samples this end's blocks on this end's clock.
                let blocks = ends[i].get_output_big("tx_serial");
                let rx = ends[1 - i].input("rx_serial").unwrap();
                ends[1 - i].set_big(rx, &blocks);
                ends[1 - i].settle();
            }
            for (i, e) in ends.iter_mut().enumerate() {
                let mut doms = vec![];
                if rising.contains(&i) {
                    doms.push((0, reset));
                }
                if rising.contains(&(1 - i)) {
                    doms.push((rx, reset));
                }
                e.clock_domains(&doms);
            }
            for &i in &rising {
                edges[i] += 1;
            }
        }
        for e in ends.iter_mut() {
            e.settle();
            assert_eq!(e.get_output("channel_up"), 1);
        }
        // Words each side read beyond those its partner sent, over the run.
        let drift = (edges[0] as f64 - edges[1] as f64).abs();
        let slips = [ends[0].get_output("slips") as f64, ends[1].get_output("slips") as f64];
        assert!(drift > 50.0, "{edges:?}");
        for s in slips {
            assert!((s - drift).abs() <= 8.0, "slips {slips:?} against a drift of {drift} words");
        }
    }

    /// Registered reads cost no cycle: an endpoint looped back on itself (its lanes into its own
    /// receiver a cycle later) under random traffic, back-pressure, credit returns and native
    /// flow control gives the same outputs, cycle for cycle, with either kind of read.
    #[test]
    fn registered_reads_change_no_cycle() {
        for lanes in [1, 2] {
            let base = LinkConfig { lanes, max_frame_words: 8, replay_words: 64, vc_buffer_words: 32, ..Default::default() };
            let mut ends: Vec<Evaluator> = [false, true].iter().map(|&r| Evaluator::new(endpoint(&LinkConfig { registered_reads: r, ..base.clone() }).unwrap())).collect();
            let names: Vec<String> = ends[0].netlist().outputs.iter().map(|o| o.name.clone()).collect();
            for e in ends.iter_mut() {
                e.reset(3);
            }
            let mut rng = Rng::new(lanes as u64);
            let mut serial = vec![vec![0u128; lanes]; 2];
            let mut delivered = 0;
            // Native flow control: short pauses (the endpoint pauses itself), each held until taken.
            let mut nfc: Option<u128> = None;
            let mut nfc_sent = 0;
            // The consumer frees each flit it took, later (a credit per flit, as the contract says).
            let mut held = [0usize; 2];
            for cycle in 0..5000 {
                if nfc.is_none() && cycle > 300 && rng.chance(2) {
                    nfc = Some(rng.below(16) as u128);
                }
                let last = rng.chance(30);
                let bytes = if last { 1 + rng.below(8 * lanes as u64) as usize } else { 8 * lanes };
                let data: Vec<u128> = (0..lanes).map(|_| rng.next_u64() as u128).collect();
                let frees: Vec<bool> = (0..2).map(|v| held[v] > 0 && rng.chance(50)).collect();
                let inputs = [
                    ("s_axis_tkeep", (1u128 << bytes) - 1),
                    ("s_axis_tlast", last as u128),
                    ("s_axis_tuser", rng.below(2) as u128),
                    ("s_axis_tvalid", (cycle > 300 && rng.chance(70)) as u128),
                    ("m_axis_vc0_tready", rng.chance(60) as u128),
                    ("m_axis_vc1_tready", rng.chance(60) as u128),
                    ("s_axis_nfc_tvalid", nfc.is_some() as u128),
                    ("s_axis_nfc_tdata", nfc.unwrap_or(0)),
                    ("rx_credit_return", frees[0] as u128 | (frees[1] as u128) << 1),
                ];
                let mut seen = vec![];
                for (i, e) in ends.iter_mut().enumerate() {
                    for (name, value) in inputs {
                        e.set_input(name, value);
                    }
                    for k in 0..lanes {
                        e.set_input_bits("s_axis_tdata", 64 * k, 64, data[k]);
                        e.set_input_bits("rx_serial", 66 * k, 66, serial[i][k]);
                    }
                    e.settle();
                    seen.push(names.iter().map(|n| e.get_output_big(n)).collect::<Vec<_>>());
                    serial[i] = (0..lanes).map(|k| e.get_output_bits("tx_serial", 66 * k, 66)).collect();
                    e.clock(false);
                }
                let out = |name: &str| weft_hdl::netlist::eval::low128(&seen[0][names.iter().position(|n| n == name).unwrap()]);
                for (n, name) in names.iter().enumerate() {
                    // A virtual channel's beat only counts while it is valid.
                    let beat = (0..2).find(|v| name.starts_with(&format!("m_axis_vc{v}_t")) && !name.ends_with("tvalid"));
                    if beat.is_some_and(|v| out(&format!("m_axis_vc{v}_tvalid")) == 0) {
                        continue;
                    }
                    assert_eq!(seen[0][n], seen[1][n], "lanes {lanes}, cycle {cycle}: output {name}");
                }
                let popped = [out("m_axis_vc0_tvalid") & inputs[4].1, out("m_axis_vc1_tvalid") & inputs[5].1];
                for v in 0..2 {
                    held[v] = held[v] + popped[v] as usize - frees[v] as usize;
                }
                delivered += (popped[0] + popped[1]) as usize;
                if nfc.is_some() && out("s_axis_nfc_tready") == 1 {
                    nfc = None;
                    nfc_sent += 1;
                }
            }
            assert!(delivered > 1000, "lanes {lanes}: only {delivered} words delivered");
            assert!(nfc_sent > 20, "lanes {lanes}: only {nfc_sent} flow-control messages sent");
        }
    }
}
