//! The 66-bit block of Aurora 64B/66B and the scrambler, as netlist builders.
//!
//! Bit order (IEEE 802.3 clause 49, which Aurora 64B/66B SP011 follows): a block is a 66-bit
//! value whose bit 0 is transmitted first. Bits 1:0 are the sync header, bits 65:2 the 64-bit
//! payload; payload byte `k` is payload bits `8k+7:8k`, transmitted least-significant bit first,
//! so byte 0 (the block type field of a control block) goes out right after the header.
//!
//! Sync header (in transmission order): `0,1` = data block, `1,0` = control block; `0,0` and
//! `1,1` are invalid and count against block lock. As a 2-bit number (bit 0 first):
//! data = `0b10`, control = `0b01`.
//!
//! Control block types used here (SP011, as in Xilinx's PG074 symbol decoder):
//! - `0x78` idle family, byte 1 says which: `0x10` idle, `0x30` not ready, `0x40` channel
//!   bonding, `0x80` clock compensation (bytes 2..=5 of idle and not ready: the reliable link's
//!   restart mark and its echo);
//! - `0x1E` separator: byte 1 = count of valid bytes (0..=6) in bytes 2..;
//! - `0xE1` separator-7: 7 valid bytes in bytes 1..=7;
//! - `0xAA` native flow control;
//! - `0xD2` user-K block 0, which the reliable link uses for stand-alone acknowledgements;
//! - `0x99` user-K block 1, which carries the credits of the consumer behind the link.

use weft_hdl::netlist::{Netlist, Wire};

/// Sync header of a data block, block bits 1:0 (`0,1` in transmission order).
pub const HEADER_DATA: u128 = 0b10;
/// Sync header of a control block, block bits 1:0 (`1,0` in transmission order).
pub const HEADER_CONTROL: u128 = 0b01;

/// Block type of the idle family; payload byte 1 says which kind.
pub const BTF_IDLE: u8 = 0x78;
/// Idle-family kind: idle.
pub const IDLE: u8 = 0x10;
/// Idle-family kind: not ready (the lane or channel is still training).
pub const NOT_READY: u8 = 0x30;
/// Idle-family kind: channel bonding, sent every [`super::config::BOND_PERIOD`] cycles while
/// training.
pub const CHANNEL_BOND: u8 = 0x40;
/// Idle-family kind: clock compensation, which an elastic buffer may delete or insert.
pub const CLOCK_COMPENSATION: u8 = 0x80;
/// Block type of a separator: byte 1 = valid bytes (0..=6) in bytes 2.., ending a frame.
pub const BTF_SEPARATOR: u8 = 0x1E;
/// Block type of a separator-7: 7 valid bytes in bytes 1..=7, ending a frame.
pub const BTF_SEPARATOR7: u8 = 0xE1;
/// Block type of a native flow control block.
pub const BTF_NATIVE_FLOW_CONTROL: u8 = 0xAA;
/// Block type of user-K block 0: a stand-alone acknowledgement.
pub const BTF_USER_K0: u8 = 0xD2;
/// Block type of user-K block 1: credits of the consumer behind the link.
pub const BTF_USER_K1: u8 = 0x99;
/// The restart mark (bytes 2..=3 of an idle or not-ready block) and its echo (bytes 4..=5), see
/// the link's `session`: eight bits set, so the bit errors of one block (the descrambler makes
/// three of each line error) cannot forge it from zeros.
pub const RESTART_MARK: u128 = 0x5AC3;

/// Scrambler polynomial x⁵⁸ + x³⁹ + 1 (clause 49.2.6): `s[n] = d[n] ^ s[n-39] ^ s[n-58]`.
pub const SCRAMBLER_TAPS: (usize, usize) = (39, 58);
/// The scrambler starts from all ones; the receiver synchronises itself after 58 bits.
pub const SCRAMBLER_SEED: u128 = (1 << 58) - 1;

/// Payload of an idle-family control block.
pub const fn idle_payload(kind: u8) -> u128 {
    BTF_IDLE as u128 | (kind as u128) << 8
}

/// Scrambles one 64-bit payload. `history` holds the previous 58 scrambled bits (bit 57 the most
/// recent). Returns the scrambled payload and the next history.
///
/// Parallel form: with `t = d ^ h ^ (h >> 19)` (the taps that reach into the previous block),
/// the taps inside this block give `s = t ^ (t << 39) ^ (t << 58)`, because every in-block tap
/// lands on a bit (< 25) that itself only depends on the history.
pub fn scramble(net: &mut Netlist, data: Wire, history: Wire) -> (Wire, Wire) {
    let h = net.zext(history, 64);
    let h19 = net.constant(19, 7);
    let h_far = net.shr(h, h19);
    let t = net.xor(data, h);
    let t = net.xor(t, h_far);
    let t39 = net.shl_const(t, 39);
    let t58 = net.shl_const(t, 58);
    let s = net.xor(t, t39);
    let s = net.xor(s, t58);
    let next = net.slice(s, 6, 58);
    (s, next)
}

/// Descrambles one 64-bit payload given the previous 58 received (scrambled) bits; the next
/// history is the top 58 bits of `scrambled`.
pub fn descramble(net: &mut Netlist, scrambled: Wire, history: Wire) -> (Wire, Wire) {
    let h = net.zext(history, 64);
    let h19 = net.constant(19, 7);
    let h_far = net.shr(h, h19);
    let s39 = net.shl_const(scrambled, 39);
    let s58 = net.shl_const(scrambled, 58);
    let d = net.xor(scrambled, s39);
    let d = net.xor(d, s58);
    let d = net.xor(d, h);
    let d = net.xor(d, h_far);
    let next = net.slice(scrambled, 6, 58);
    (d, next)
}
