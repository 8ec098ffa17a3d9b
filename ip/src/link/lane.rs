//! One Aurora 64B/66B lane: the transmit encoder (scrambler + sync header) and the receive side
//! (bit-slip gearbox, block lock, descrambler).

use weft_hdl::netlist::{Netlist, Wire};

use super::format::{descramble, scramble, HEADER_CONTROL, HEADER_DATA, SCRAMBLER_SEED};

/// Block lock (IEEE 802.3 clause 49.2.13.2.2, Figure 49-14, used by Aurora 64B/66B): lock after
/// this many consecutive valid sync headers…
pub const LOCK_HEADERS: u128 = 64;
/// …and lose it when this many invalid headers fall in one window of [`LOCK_HEADERS`].
pub const LOSE_LOCK_INVALID: u128 = 16;
pub const BLOCK_BITS: usize = 66;

/// The 66-bit block for a payload: registered scrambler state, header unscrambled.
pub fn transmit(net: &mut Netlist, lane: usize, control: Wire, payload: Wire) -> Wire {
    let history = net.register(&format!("tx_scrambler{lane}"), 58, SCRAMBLER_SEED);
    let (scrambled, next) = scramble(net, payload, history.q);
    net.drive(history, next);
    let data = net.constant(HEADER_DATA, 2);
    let ctrl = net.constant(HEADER_CONTROL, 2);
    let header = net.mux(control, ctrl, data);
    net.concat(scrambled, header)
}

/// What a receive lane hands the channel each cycle.
pub struct Received {
    pub locked: Wire,
    /// A block with a valid sync header while locked.
    pub valid: Wire,
    pub control: Wire,
    /// Descrambled payload.
    pub payload: Wire,
    /// One-cycle pulse when lock is lost.
    pub lock_lost: Wire,
}

/// The receive side of a lane. `raw` is 66 bits of the serial stream per cycle at an unknown
/// bit offset; the gearbox slips one bit at a time until headers line up. Two cycles of latency.
pub fn receive(net: &mut Netlist, lane: usize, raw: Wire) -> Received {
    let cur = net.register(&format!("rx_raw{lane}"), 66, 0);
    net.drive(cur, raw);
    let prev = net.register(&format!("rx_prev{lane}"), 66, 0);
    net.drive(prev, cur.q);
    let slip = net.register(&format!("rx_slip{lane}"), 7, 0);
    // The block starting `slip` bits into the previous word.
    let low = net.shr(prev.q, slip.q);
    let w66 = net.constant(66, 7);
    let up = net.sub(w66, slip.q);
    let high = net.shl(cur.q, up);
    let block = net.or(low, high);
    let header = net.slice(block, 0, 2);
    let h0 = net.bit(header, 0);
    let h1 = net.bit(header, 1);
    let header_ok = net.xor(h0, h1);
    let control = h0;
    let scrambled = net.slice(block, 2, 64);

    let locked = net.register(&format!("rx_locked{lane}"), 1, 0);
    let count = net.register(&format!("rx_sh_count{lane}"), 7, 0);
    let invalid = net.register(&format!("rx_sh_invalid{lane}"), 5, 0);
    let count1 = net.add_const(count.q, 1);
    let invalid1 = net.add_const(invalid.q, 1);
    let lock_count = net.constant(LOCK_HEADERS, 7);
    let window_done = net.eq(count1, lock_count);
    let lose = net.constant(LOSE_LOCK_INVALID, 5);
    let too_many = net.eq(invalid1, lose);
    let bad = net.not(header_ok);
    let unlocked = net.not(locked.q);
    // Not locked: an invalid header slips one bit and restarts the count.
    let slip_hunting = net.and(unlocked, bad);
    let gain = net.and(unlocked, header_ok);
    let gain = net.and(gain, window_done);
    // Locked: the invalid count reaching the threshold inside a window loses lock.
    let lose_now = net.and(locked.q, bad);
    let lose_now = net.and(lose_now, too_many);
    let do_slip = net.or(slip_hunting, lose_now);
    let last_offset = net.constant(65, 7);
    let wrap = net.eq(slip.q, last_offset);
    let slip1 = net.add_const(slip.q, 1);
    let zero7 = net.constant(0, 7);
    let slip_next = net.mux(wrap, zero7, slip1);
    net.hold_unless(slip, do_slip, slip_next);
    let one = net.constant(1, 1);
    let zero = net.constant(0, 1);
    let l = net.mux(gain, one, locked.q);
    let l = net.mux(lose_now, zero, l);
    net.drive(locked, l);
    // Count: restart on a slip, on gaining lock and at every window end.
    let restart = net.or(do_slip, window_done);
    let restart = net.or(restart, gain);
    let c = net.mux(restart, zero7, count1);
    net.drive(count, c);
    let zero5 = net.constant(0, 5);
    let counted = net.and(locked.q, bad);
    let i = net.mux(counted, invalid1, invalid.q);
    let i = net.mux(restart, zero5, i);
    let i = net.mux(unlocked, zero5, i);
    net.drive(invalid, i);

    let history = net.register(&format!("rx_descrambler{lane}"), 58, 0);
    let (payload, next) = descramble(net, scrambled, history.q);
    net.drive(history, next);
    let valid = net.and(locked.q, header_ok);
    // Registered outputs.
    let out_valid = net.register(&format!("rx_valid{lane}"), 1, 0);
    net.drive(out_valid, valid);
    let out_control = net.register(&format!("rx_control{lane}"), 1, 0);
    net.drive(out_control, control);
    let out_payload = net.register(&format!("rx_payload{lane}"), 64, 0);
    net.drive(out_payload, payload);
    let lost = net.register(&format!("rx_lock_lost{lane}"), 1, 0);
    net.drive(lost, lose_now);
    Received { locked: locked.q, valid: out_valid.q, control: out_control.q, payload: out_payload.q, lock_lost: lost.q }
}
