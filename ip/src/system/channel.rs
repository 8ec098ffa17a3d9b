//! The serial channel between two nodes in the simulation tops: `lanes` lanes of 66-bit blocks
//! delivered a fixed number of cycles after they leave, a payload bit flipped on `inject_err`,
//! random bits while `cut` (a pulled cable). The software model with skew, bit offsets and
//! random errors is `weft_sim::channel::Channel`; with none of those it delivers the same blocks.

use weft_hdl::netlist::{Axis, Design, Netlist, Sig, Source};

use crate::Error;

/// Payload bit that `inject_err` flips (block bit `2 + INJECT_PAYLOAD_BIT`).
pub const INJECT_PAYLOAD_BIT: usize = 40;

/// The channel: ports `tx` and `rx` (`66·lanes` bits, lane k at bits 66k…), `inject_err` (bit k
/// high in a cycle flips payload bit [`INJECT_PAYLOAD_BIT`] of lane k's block entering in that
/// cycle) and `cut` (while high, the channel takes random bits instead of blocks: a 64-bit
/// xorshift generator, lane k its two header bits and the word rotated by 8k bits; declared
/// `tri0`, so a test bench that leaves it undriven has no cut). A block entering at an edge
/// leaves `latency + 1` edges later; zeros until the channel has filled once after reset.
pub fn channel(lanes: usize, latency: usize) -> Result<Netlist, Error> {
    if !(1..=8).contains(&lanes) {
        return Err(Error::Config(format!("channel: lanes = {lanes}; allowed 1 to 8")));
    }
    if !(1..=4096).contains(&latency) {
        return Err(Error::Config(format!("channel: latency = {latency} cycles; allowed 1 to 4096")));
    }
    let w = 66 * lanes;
    let depth = latency + 1;
    let d = Design::new();
    let tx = d.input("tx", w);
    let inject = d.input("inject_err", lanes);
    let cut = d.input("cut", 1);

    d.section("errors injected on request");
    let flips: Vec<Sig> = (0..lanes).rev().map(|k| d.lit(0, 65 - 2 - INJECT_PAYLOAD_BIT).cat(inject.bit(k)).cat(d.lit(0, 2 + INJECT_PAYLOAD_BIT))).collect();
    let flip = d.cat(&flips).named("flip");

    d.section("noise while cut: a 64-bit xorshift generator");
    let noise = d.reg("noise", 64, 0x9E37_79B9_7F4A_7C15);
    let n = noise.q;
    let a = (n ^ n.shl_const(13)).named("noise_a");
    let b = (a ^ a.shr(a.lit(7, 6))).named("noise_b");
    noise.next(b ^ b.shl_const(17));
    let lanes_noise: Vec<Sig> = (0..lanes)
        .rev()
        .map(|k| {
            let word = if k == 0 { n } else { n.bits(0, 8 * k).cat(n.bits(8 * k, 64 - 8 * k)) };
            word.cat(n.bits(2 * k, 2))
        })
        .collect();
    let noise_blocks = d.cat(&lanes_noise).named("noise_blocks");

    d.section("a ring of latency + 1 blocks");
    // Each cycle writes the entering block at `ptr` and reads the one written `depth` cycles
    // ago there: no shift over the storage, which Verilator cannot schedule for long channels.
    let pw = (usize::BITS - (depth - 1).max(1).leading_zeros()) as usize;
    // Storage of a power of two words, of which the ring uses `depth`.
    let stage = d.memory("stage", w, 1 << pw);
    let ptr = d.reg("ptr", pw, 0);
    let filled = d.reg("filled", 1, 0);
    let wrap = ptr.q.eq(ptr.q.lit((depth - 1) as u128, pw));
    ptr.next(wrap.mux(ptr.q.lit(0, pw), ptr.q + 1));
    filled.set_when(wrap);
    stage.write(d.lit(1, 1), ptr.q, cut.mux(noise_blocks, tx ^ flip));
    d.output("rx", filled.q.mux(stage.read(ptr.q), d.lit(0, w)));
    let mut net = d.finish();
    net.pulled_down.push("cut".into());
    Ok(net)
}

/// The board's IO channel between two nodes in the simulation tops (the 520N's OpenCL channels,
/// under nodes with `LinkConfig::io_channels`): `s_axis_tdata[255:0]`/`tvalid`/`tready` from the
/// sender, `m_axis_*` to the receiver, and `cut` (while high the receiver is offered nothing; the
/// words wait). A word taken at an edge can be taken by the receiver `latency + 1` edges later at
/// the earliest, into a receive buffer of `buffer` words (a power of two) whose free entries the
/// sender needs: `s_axis_tready` is low while every entry is taken or in flight, and an entry
/// comes back `latency` edges after the receiver takes a word, as the board's own flow control
/// over the cable. The software model is `weft_sim::io_channel::IoChannel`.
pub fn io_channel(latency: usize, buffer: usize) -> Result<Netlist, Error> {
    use crate::link::io_link::{channel_shape, CHANNEL_BITS};
    if !(2..=4096).contains(&latency) {
        return Err(Error::Config(format!("io channel: latency = {latency} cycles; allowed 2 to 4096")));
    }
    if !buffer.is_power_of_two() || !(4..=4096).contains(&buffer) {
        return Err(Error::Config(format!("io channel: buffer = {buffer} words; allowed a power of two from 4 to 4096")));
    }
    let d = Design::new();
    let input = d.axis_in("s_axis", channel_shape());
    let cut = d.input("cut", 1);
    let cb = (usize::BITS - buffer.leading_zeros()) as usize;
    let credits = d.reg("credits", cb, buffer as u128);
    let ready = !credits.q.is_zero();
    input.ready(ready);
    let sent = input.fire();

    d.section("the cable: a ring of `latency` words and of as many returned entries");
    let pw = (usize::BITS - (latency - 1).leading_zeros()) as usize;
    let ptr = d.reg("ptr", pw, 0);
    let wrap = ptr.q.eq(ptr.q.lit((latency - 1) as u128, pw));
    ptr.next(wrap.mux(ptr.q.lit(0, pw), ptr.q + 1));
    let filled = d.reg("filled", 1, 0);
    filled.set_when(wrap);
    let words = d.memory("words", CHANNEL_BITS + 1, 1 << pw);
    words.write(d.lit(1, 1), ptr.q, sent.cat(input.0.data));
    let returns = d.memory("returns", 1, 1 << pw);
    let arriving = filled.q.mux(words.read(ptr.q), d.lit(0, CHANNEL_BITS + 1));
    let returned = filled.q & returns.read(ptr.q);

    d.section("the receive buffer");
    let ready_in = d.later(1);
    let into = Source(Axis {
        name: "arriving".into(),
        shape: channel_shape(),
        data: arriving.bits(0, CHANNEL_BITS),
        keep: None,
        last: None,
        user: None,
        valid: arriving.bit(CHANNEL_BITS),
        ready: Some(ready_in),
    });
    let (held, _) = d.stream_fifo("buffer", buffer, &into);
    let out = d.axis_out("m_axis", channel_shape());
    out.0.data.define(held.0.data);
    out.0.valid.define(held.0.valid & !cut);
    held.ready(out.ready() & !cut);
    let taken = held.fire();
    returns.write(d.lit(1, 1), ptr.q, taken);
    credits.next(credits.q - sent.zext(cb) + returned.zext(cb));
    let mut net = d.finish();
    net.pulled_down.push("cut".into());
    Ok(net)
}
