//! One Aurora 64B/66B lane: the transmit encoder (scrambler + sync header) and the receive side
//! (bit-slip gearbox, block lock, descrambler).

use weft_hdl::netlist::{Netlist, Wire};

use super::format::{descramble, scramble, HEADER_CONTROL, HEADER_DATA, SCRAMBLER_SEED};

/// Block lock (IEEE 802.3 clause 49.2.13.2.2, Figure 49-14, used by Aurora 64B/66B): lock after
/// this many consecutive valid sync headers…
pub const LOCK_HEADERS: u128 = 64;
/// …and lose it when this many invalid headers fall in one window of [`LOCK_HEADERS`].
pub const LOSE_LOCK_INVALID: u128 = 16;
/// Bits of a 64B/66B block: 2 sync-header bits and a 64-bit payload.
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
    /// High while the lane holds block lock.
    pub locked: Wire,
    /// A block with a valid sync header while locked.
    pub valid: Wire,
    /// The block is a control block (sync header `1,0`); low for a data block.
    pub control: Wire,
    /// Descrambled payload.
    pub payload: Wire,
    /// One-cycle pulse when lock is lost.
    pub lock_lost: Wire,
}

/// The receive side of a lane. `raw` is 66 bits of the serial stream per cycle at an unknown
/// bit offset; the gearbox slips one bit at a time until headers line up. Two cycles of latency.
///
/// The gearbox is split around a register: this cycle's and the previous cycle's bits are
/// shifted by `slip` into a 67-bit window (`rx_window`); in the next cycle the block is the
/// window, or the window one bit further if the lane slipped meanwhile (at the wrap from offset
/// 65 to 0 that is bit 66 of the previous word on: the same block), so every block is checked
/// at the offset of its own cycle.
pub fn receive(net: &mut Netlist, lane: usize, raw: Wire) -> Received {
    let prev = net.register(&format!("rx_prev{lane}"), 66, 0);
    net.drive(prev, raw);
    let slip = net.register(&format!("rx_slip{lane}"), 7, 0);
    // Window bit j is bit `j + slip` of {raw, prev}, in two parts of at most 128 bits: bits 62:0
    // from bits 127:0, bits 66:63 from bits 131:63.
    let raw_low = net.slice(raw, 0, 128 - BLOCK_BITS);
    let low_window = net.concat(raw_low, prev.q);
    let low = shift_right(net, low_window, slip.q, 63);
    let prev_top = net.slice(prev.q, 63, BLOCK_BITS - 63);
    let high_window = net.concat(raw, prev_top);
    let high = shift_right(net, high_window, slip.q, BLOCK_BITS + 1 - 63);
    let window = net.concat(high, low);
    let window_reg = net.register(&format!("rx_window{lane}"), BLOCK_BITS + 1, 0);
    net.drive(window_reg, window);
    let slipped = net.register(&format!("rx_slipped{lane}"), 1, 0);
    let at_slip = net.slice(window_reg.q, 0, BLOCK_BITS);
    let one_on = net.slice(window_reg.q, 1, BLOCK_BITS);
    let block = net.mux(slipped.q, one_on, at_slip);
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
    // `count + 1 == LOCK_HEADERS` and `invalid + 1 == LOSE_LOCK_INVALID`, read off the registers.
    let last_count = net.constant(LOCK_HEADERS - 1, 7);
    let window_done = net.eq(count.q, last_count);
    let lose = net.constant(LOSE_LOCK_INVALID - 1, 5);
    let too_many = net.eq(invalid.q, lose);
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
    net.drive(slipped, do_slip);
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

/// The low `out` bits of `value >> amount`, as a tree of four-way selects (two bits of the
/// amount per level, one LUT each).
fn shift_right(net: &mut Netlist, value: Wire, amount: Wire, out: usize) -> Wire {
    let bits = net.width(amount);
    let width = net.width(value);
    let mut v = value;
    let mut level = 0;
    while 2 * level < bits {
        let sel_bits = (bits - 2 * level).min(2);
        let step = 1usize << (2 * level);
        // What the remaining levels can still shift, plus what is kept.
        let reach = out + ((1usize << bits) - 1) - ((1usize << (2 * level + sel_bits)) - 1);
        let keep = reach.min(width);
        let current = net.width(v);
        let option = |net: &mut Netlist, k: usize| -> Wire {
            let shift = k * step;
            if shift >= current {
                net.constant(0, keep)
            } else {
                let avail = (current - shift).min(keep);
                let part = net.slice(v, shift, avail);
                net.zext(part, keep)
            }
        };
        let s0 = net.slice(amount, 2 * level, 1);
        if sel_bits == 1 {
            let a = option(net, 1);
            let b = option(net, 0);
            v = net.mux(s0, a, b);
        } else {
            let s1 = net.slice(amount, 2 * level + 1, 1);
            let o = [option(net, 0), option(net, 1), option(net, 2), option(net, 3)];
            let low = net.mux(s0, o[1], o[0]);
            let high = net.mux(s0, o[3], o[2]);
            v = net.mux(s1, high, low);
        }
        level += 1;
    }
    net.slice(v, 0, out)
}
