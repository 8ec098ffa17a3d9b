//! Receive lanes into one channel: per-lane block lock and descrambling ([`super::super::lane`]),
//! deskew (each lane's blocks delayed so the bonding blocks line up, then registered), channel
//! bonding, and the partner's readiness (it sends not-ready idles until its own receiver has bonded)
//! and restarts (its training blocks carry a restart mark after a reset).
//!
//! With a receive clock (`LinkConfig::rx_clock`), everything up to the deskewed words runs on
//! `rx_clk` and the words cross into `clk` through the [`super::elastic`] buffer; the lock and
//! bonding status cross through synchronisers.

use weft_hdl::netlist::{Design, Sig};
use weft_hdl::sig;

use super::super::format::{idle_payload, CHANNEL_BOND, CLOCK_COMPENSATION, IDLE, NOT_READY, RESTART_MARK};
use super::super::lane;
use super::{registered, Sizes};

/// One channel word per lane: `valid`, `control` and the 64-bit `payload`.
pub(super) struct Words<'d> {
    pub valid: Vec<Sig<'d>>,
    pub control: Vec<Sig<'d>>,
    pub payload: Vec<Sig<'d>>,
}

/// The bonded channel: per lane, the aligned 64-bit `payload`, registered after the deskew (its
/// `valid` and `control` bits reach the receive side as the flags it registers from `ahead`).
pub(super) struct Lanes<'d> {
    pub payload: Vec<Sig<'d>>,
    /// The same words one cycle earlier, straight out of the deskew (not registered): what the
    /// receive side classifies and checks into registers of its own beside the bonded words.
    pub ahead: Words<'d>,
    /// Lane k locked, at bit k.
    pub lane_up: Sig<'d>,
    /// Every lane locked and the lanes bonded; and the same a cycle ago, for the registered words.
    pub rx_up: Sig<'d>,
    pub words_up: Sig<'d>,
    /// `rx_up` and the partner ready.
    pub channel_up: Sig<'d>,
    /// Lane 0 of the registered words carries a control block (`valid & control`).
    pub control0: Sig<'d>,
    /// Per lane, a pulse when block lock is lost.
    pub lock_lost: Vec<Sig<'d>>,
    /// A clock-compensation block inserted or deleted by the elastic buffer (zero without one).
    pub slip: Sig<'d>,
    /// This endpoint restarted (reset) and the partner has not yet seen it: its training blocks
    /// carry the restart mark until the partner echoes it.
    pub fresh: Sig<'d>,
    /// The partner's last training block carried its restart mark (echoed in ours).
    pub partner_marking: Sig<'d>,
    /// The link session is being restarted: while high, every sequence number, acknowledgement
    /// and credit count of the link goes back to its start (see [`super::session`]).
    pub hold: Sig<'d>,
    /// The partner restarted while this side was running (first cycle of its marks).
    pub partner_restart: Sig<'d>,
}

/// A channel-bonding idle block.
fn is_cb<'d>(valid: Sig<'d>, control: Sig<'d>, payload: Sig<'d>) -> Sig<'d> {
    payload.bits(0, 16).eq(idle_payload(CHANNEL_BOND)) & control & valid
}

/// `rx`: the receive clock's domain, or none when the receive side runs on `clk`.
pub(super) fn bonding<'d>(d: &'d Design, z: &Sizes, rx_serial: &[Sig<'d>], rx: Option<usize>) -> Lanes<'d> {
    let clk = rx.map(|rx| d.net().set_domain(rx));
    d.section("receive lanes");
    let received: Vec<lane::Received> = rx_serial.iter().enumerate().map(|(k, raw)| lane::receive(&mut d.net(), k, raw.wire)).collect();
    let locked: Vec<Sig> = received.iter().map(|r| d.sig(r.locked)).collect();
    let lane_up = locked[1..].iter().fold(locked[0], |acc, l| l.cat(acc));
    sig!(all_locked = locked.iter().copied().reduce(|a, b| a & b).unwrap());

    d.section("channel bonding: each lane's bonding block, relative to lane 0");
    let bonded = d.reg("bonded", 1, 0);
    let phase = d.reg("bond_phase", 4, 0);
    phase.next(phase.q + 1u32);
    let have: Vec<_> = (0..z.lanes).map(|k| d.reg(&format!("bond_have{k}"), 1, 0)).collect();
    let cb_phase: Vec<_> = (0..z.lanes).map(|k| d.reg(&format!("bond_cb_phase{k}"), 4, 0)).collect();
    let raw_cb: Vec<Sig> = received.iter().map(|r| is_cb(d.sig(r.valid), d.sig(r.control), d.sig(r.payload))).collect();
    let all_have = have.iter().map(|h| h.q).reduce(|a, b| a & b).unwrap();
    // Relative arrival of each lane's bonding block, as a signed 4-bit distance from lane 0.
    let rel: Vec<Sig> = cb_phase.iter().map(|p| p.q - cb_phase[0].q).collect();
    let max_rel = rel[1..].iter().fold(rel[0], |m, r| m.slt(*r).mux(*r, m));
    let delays: Vec<_> = (0..z.lanes).map(|k| d.reg(&format!("deskew{k}"), 4, 0)).collect();
    sig!(bond_now = !bonded.q & all_have & all_locked);
    for (delay, r) in delays.iter().zip(&rel) {
        delay.next_when(bond_now, max_rel - *r);
    }

    d.section("deskew: lane k's blocks are read `delay` cycles after they were written, then registered");
    let deskew_ptr = d.reg("deskew_ptr", 4, 0);
    deskew_ptr.next(deskew_ptr.q + 1u32);
    // Each block's "clock compensation" bit travels beside it, worked out before the deskew, so
    // the elastic buffer behind it only ANDs the lanes' bits.
    let (mut deskewed, mut deskewed_cc) = (vec![], vec![]);
    for (k, r) in received.iter().enumerate() {
        let mem = d.memory(&format!("deskew{k}"), 67, 16);
        let word = d.cat(&[d.sig(r.valid), d.sig(r.control), d.sig(r.payload)]);
        let tagged = word.eq(super::elastic::CC_BLOCK).cat(word);
        mem.write(d.lit(1, 1), deskew_ptr.q, tagged);
        let old = mem.read(deskew_ptr.q - delays[k].q);
        let out = delays[k].q.is_zero().mux(tagged, old);
        deskewed.push(out.bits(0, 66));
        deskewed_cc.push(out.bit(66));
    }
    // Bonding holds while every lane's bonding blocks stay aligned (checked on the deskewed
    // words, registered: the same cycle as checking the registered words).
    let aligned_cb: Vec<Sig> = deskewed.iter().map(|w| is_cb(w.bit(65), w.bit(64), w.bits(0, 64))).collect();
    let cb_any = registered(d, "bond_cb_any", aligned_cb.iter().copied().reduce(|a, b| a | b).unwrap());
    let cb_all = registered(d, "bond_cb_all", aligned_cb.iter().copied().reduce(|a, b| a & b).unwrap());
    sig!(bond_error = cb_any & !cb_all & bonded.q, unbond = !all_locked | bond_error);
    bonded.set_when(bond_now).clear_when(unbond);
    for k in 0..z.lanes {
        let record = !bonded.q & all_locked & !have[k].q & raw_cb[k];
        cb_phase[k].next_when(record, phase.q);
        have[k].set_when(record).clear_when(unbond | bond_now);
    }
    sig!(rx_up = bonded.q & all_locked);
    let lock_lost: Vec<Sig> = received.iter().map(|r| d.sig(r.lock_lost)).collect();

    // Into `clk`: the words through the elastic buffer, the status through synchronisers (lane
    // lock and bonding are levels; a lock loss toggles a flag whose every change is one loss —
    // losses are at least a lock window apart).
    let (ahead_words, rx_up, lane_up, lock_lost, slip) = match clk {
        None => (deskewed, rx_up, lane_up, lock_lost, d.lit(0, 1)),
        Some(clk) => {
            let toggles: Vec<_> = lock_lost
                .iter()
                .enumerate()
                .map(|(k, lost)| {
                    let t = d.reg(&format!("lock_lost_toggle{k}"), 1, 0);
                    t.next_when(*lost, !t.q);
                    t.q
                })
                .collect();
            d.net().set_domain(clk);
            let sync = |value: Sig<'d>, name: &str| {
                let q = d.net().synchronize(value.wire, 2, name);
                d.sig(q)
            };
            let rx_up_clk = sync(rx_up, "rx_up");
            let lane_up_clk = sync(lane_up, "lane_up");
            let lost_clk: Vec<Sig> = toggles
                .iter()
                .enumerate()
                .map(|(k, t)| {
                    let now = sync(*t, &format!("lock_lost_toggle{k}"));
                    now ^ registered(d, &format!("lock_lost_seen{k}"), now)
                })
                .collect();
            let crossed = d.unit("elastic", "elastic", || super::elastic::elastic(d, z, rx.unwrap(), &deskewed, &deskewed_cc, rx_up, rx_up_clk));
            (crossed.words, rx_up_clk, lane_up_clk, lost_clk, crossed.slip)
        }
    };
    let mut ahead = Words { valid: vec![], control: vec![], payload: vec![] };
    let (mut valid, mut control, mut payload) = (vec![], vec![], vec![]);
    for (k, out) in ahead_words.iter().enumerate() {
        ahead.payload.push(out.bits(0, 64));
        ahead.control.push(out.bit(64));
        ahead.valid.push(out.bit(65));
        let bonded_word = d.reg(&format!("bonded_word{k}"), 66, 0);
        bonded_word.next(*out);
        payload.push(bonded_word.q.bits(0, 64));
        control.push(bonded_word.q.bit(64));
        valid.push(bonded_word.q.bit(65));
    }
    // The same for the registered words (the first word after bonding was deskewed before).
    let words_up = registered(d, "rx_words_up", rx_up);

    d.section("remote readiness and restarts (from the deskewed block, as it leaves the deskew)");
    let low16 = ahead.payload[0].bits(0, 16);
    let ahead_control0 = ahead.valid[0] & ahead.control[0];
    let is_nr = low16.eq(idle_payload(NOT_READY)) & ahead_control0;
    let is_idle = low16.eq(idle_payload(IDLE)) & ahead_control0;
    let is_data0 = ahead.valid[0] & !ahead.control[0];
    // Training blocks (idle, not ready) carry the restart mark and its echo (see `session`);
    // the partner's readiness counts only blocks that carry no mark at all.
    let mark = |at: usize, value: u128| ahead.payload[0].bits(at, 16).eq(value);
    sig!(is_train = is_nr | is_idle);
    sig!(mark_in = is_train & mark(16, RESTART_MARK), echo_in = is_train & mark(32, RESTART_MARK), unmarked = mark(16, 0));
    let fresh = d.reg("session_fresh", 1, 1);
    fresh.clear_when(echo_in);
    // Whether the partner's last block (clock compensation and bonding aside) was a marked one.
    let is_cc = low16.eq(idle_payload(CLOCK_COMPENSATION)) & ahead_control0;
    let partner_marking = d.reg("partner_marking", 1, 0);
    partner_marking.next_when(ahead.valid[0] & !is_cc & !is_cb(ahead.valid[0], ahead.control[0], ahead.payload[0]), mark_in).clear_when(!rx_up);
    let remote_ready = d.reg("remote_ready", 1, 0);
    remote_ready.set_when(is_idle & unmarked | is_data0).clear_when(is_nr | mark_in).clear_when(!rx_up);
    sig!(channel_up = rx_up & remote_ready.q & !fresh.q);
    sig!(control0 = valid[0] & control[0]);
    sig!(hold = fresh.q | partner_marking.q);
    // A restart is counted when the marks begin after the channel was up (a start of both
    // sides is none, and a mark lost to a bit error does not count twice).
    let marking_before = registered(d, "partner_marking_before", partner_marking.q);
    let up_since = d.reg("session_up_since_restart", 1, 0);
    sig!(partner_restart = partner_marking.q & !marking_before & up_since.q);
    up_since.set_when(channel_up).clear_when(partner_restart);
    Lanes { payload, ahead, lane_up, rx_up, words_up, channel_up, control0, lock_lost, slip, fresh: fresh.q, partner_marking: partner_marking.q, hold, partner_restart }
}
