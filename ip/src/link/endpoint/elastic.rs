//! The elastic buffer: bonded channel words from the receive clock (`rx_clk`, recovered from the
//! partner's transmitter) into the fabric clock (`clk`), absorbing the difference between the two
//! oscillators (PG074 "Clock Compensation").
//!
//! The receive side writes every deskewed word while its lanes are bonded; the write pointer
//! crosses in Gray code through a two-flop synchroniser. Everything else runs on `clk`, from the
//! level it sees (synchronised write pointer minus read pointer):
//! - a word is read every cycle while the buffer holds one;
//! - empty (the receive clock is slower): a clock-compensation block is inserted on every lane
//!   instead, which the receiver ignores like the ones the partner sends;
//! - `DELETE_LEVEL` or more words (the receive clock is faster) and the word at the head is a
//!   clock-compensation block on every lane: it is dropped and the word behind it read instead.
//!   The level deletion looks at is a lower bound two cycles old (writes only add; see the
//!   code), so the synchroniser reaches the read through an equality of Gray codes only and no
//!   conversion or subtraction sits in the cycle that reads.
//!
//! The partner sends `cc_burst` such blocks every `cc_interval` cycles, so the buffer absorbs up
//! to `cc_burst / cc_interval` of frequency difference (1,600 ppm with PG074's 8 per 4,992);
//! oscillators within ±100 ppm need 200 ppm. Every insertion and deletion counts as a slip.
//! At `OVERFLOW_LEVEL` words (no clock compensation arrived for far too long) any word is
//! dropped: the frame it belonged to fails its CRC and is retransmitted.
//!
//! The level a zero-difference channel settles at is one word, so the buffer adds the
//! synchroniser's delay and its output register (4 cycles) to the latency. While the receive side is not bonded the
//! read pointer follows the write pointer (the buffer restarts empty after every retrain).

use weft_hdl::netlist::crossing::{binary, gray};
use weft_hdl::netlist::{Design, Sig};
use weft_hdl::sig;

use super::super::format::{idle_payload, CLOCK_COMPENSATION};
use super::{registered, Sizes};

/// Entries: a power of two, deep enough for the synchroniser's delay and the words that arrive
/// between two clock-compensation bursts at the largest supported difference.
const DEPTH: usize = 16;
const ADDRESS_BITS: usize = 4;
pub(super) const DELETE_LEVEL: u128 = 4;
pub(super) const OVERFLOW_LEVEL: u128 = 12;

/// The buffer's output on `clk`: the words (one per lane, as written) and a pulse per slip.
pub(super) struct Crossed<'d> {
    pub words: Vec<Sig<'d>>,
    pub slip: Sig<'d>,
}

/// A clock-compensation block on one lane, as the words carry it (valid, control, payload).
pub(super) const CC_BLOCK: u128 = 0b11u128 << 64 | idle_payload(CLOCK_COMPENSATION);

/// `words` (66 bits per lane: valid, control, payload; `cc`: each lane's word is [`CC_BLOCK`])
/// written on the receive domain `rx` while `write` is high; read on `clk` (domain 0) while `up`
/// (already on `clk`) is high.
pub(super) fn elastic<'d>(d: &'d Design, z: &Sizes, rx: usize, words: &[Sig<'d>], cc: &[Sig<'d>], write: Sig<'d>, up: Sig<'d>) -> Crossed<'d> {
    d.section("elastic buffer, write side (rx_clk)");
    let clk = d.net().set_domain(rx);
    let wr = d.reg("eb_wr", ADDRESS_BITS + 1, 0);
    let wr_next = write.mux(wr.q + 1u32, wr.q);
    wr.next(wr_next);
    let wr_gray = d.reg("eb_wr_gray", ADDRESS_BITS + 1, 0);
    wr_gray.next(gray(wr_next));
    let mems: Vec<_> = (0..z.lanes).map(|k| d.memory(&format!("eb_lane{k}"), 66, DEPTH)).collect();
    for (mem, word) in mems.iter().zip(words) {
        mem.write(write, wr.q.bits(0, ADDRESS_BITS), *word);
        d.net().crossing_memory(mem.index);
    }
    // Whether a word is clock compensation on every lane, worked out as it is written, so the
    // read side looks up one bit.
    let cc_word = CC_BLOCK;
    let is_cc = d.memory("eb_is_cc", 1, DEPTH);
    is_cc.write(write, wr.q.bits(0, ADDRESS_BITS), cc.iter().copied().reduce(|a, b| a & b).unwrap());
    d.net().crossing_memory(is_cc.index);

    d.section("elastic buffer, read side (clk): read, insert or delete clock compensation");
    d.net().set_domain(clk);
    let synced = d.net().synchronize(wr_gray.q.wire, 2, "eb_wr_gray");
    let synced = d.sig(synced);
    let rd = d.reg("eb_rd", ADDRESS_BITS + 1, 0);
    // Empty from the Gray codes alone: the read pointer keeps its Gray code beside it, so no
    // conversion or subtraction stands between the synchroniser and the read.
    let rd_gray = d.reg("eb_rd_gray", ADDRESS_BITS + 1, 0);
    sig!(empty = synced.eq(rd_gray.q));
    // Deletion needs only a lower bound of the level, and writes only add: the write pointer a
    // cycle old (registered from the synchroniser) less the read pointer, compared in the
    // previous cycle against each threshold plus each amount that cycle may read (0, 1 or 2
    // words), the one it did read picked now.
    let wr_seen = binary(synced);
    let wr_before = registered(d, "eb_wr_before", wr_seen);
    sig!(level_before = wr_before - rd.q);
    let read = d.reg("eb_read", 2, 0);
    let at_least = |name: &str, threshold: u128| {
        let flags: Vec<Sig> = (0..3u128).map(|c| registered(d, &format!("eb_{name}_after{c}"), up & level_before.ge(threshold + c))).collect();
        read.q.eq(0u32).mux(flags[0], read.q.eq(1u32).mux(flags[1], flags[2]))
    };
    let (full_enough, overflowing) = (at_least("deletable", DELETE_LEVEL), at_least("overflowing", OVERFLOW_LEVEL));
    let head: Vec<Sig> = mems.iter().map(|m| m.read(rd.q.bits(0, ADDRESS_BITS))).collect();
    let behind: Vec<Sig> = mems.iter().map(|m| m.read((rd.q + 1u32).bits(0, ADDRESS_BITS))).collect();
    let head_cc = is_cc.read(rd.q.bits(0, ADDRESS_BITS));
    sig!(delete = !empty & (full_enough & head_cc | overflowing));
    let rd_next = up.mux(delete.mux(rd.q + 2u32, empty.mux(rd.q, rd.q + 1u32)), wr_seen);
    rd.next(rd_next);
    rd_gray.next(up.mux(delete.mux(gray(rd.q + 2u32), empty.mux(rd_gray.q, gray(rd.q + 1u32))), synced));
    read.next(delete.mux(read.q.lit(2, 2), (!empty).zext(2)));
    // Registered, so the receive side's checks start from a register.
    let words: Vec<Sig> = head.iter().zip(&behind).enumerate().map(|(k, (h, b))| registered(d, &format!("eb_out{k}"), empty.mux(d.lit(cc_word, 66), delete.mux(*b, *h)))).collect();
    Crossed { words, slip: registered(d, "eb_slip", up & (empty | delete)) }
}
