//! The shipped stream buffers in the built-in simulator: every beat intact, in order, once,
//! under random handshakes (and, for the clock-crossing FIFO, at several clock ratios); the
//! FIFO's `fill` equals the beats inside it; the register slice's `tready` is registered.

use weft_ip::axis::buffers;

#[test]
fn register_slice_passes_every_beat_with_a_registered_ready() {
    buffers::register_slice_testbench(128).unwrap();
    buffers::register_slice_testbench(64).unwrap();
}

#[test]
fn fifo_counts_and_passes_every_beat() {
    buffers::fifo_testbench(128, 32).unwrap();
    buffers::fifo_testbench(32, 4).unwrap();
}

#[test]
fn clock_crossing_fifo_passes_every_beat_at_any_ratio() {
    buffers::async_fifo_testbench(128, 64).unwrap();
    buffers::async_fifo_testbench(64, 8).unwrap();
}
