//! The generated reliable-link Verilog in Verilator: two endpoints joined by the channel model
//! (skew, bit misalignment, random bit errors both ways plus sync-header hits), 10⁴ random packets
//! with random back-pressure, each delivered exactly once, intact and in order per virtual
//! channel — the same harness and checks as the built-in simulator run.

use std::path::Path;

use weft::sim::catalog::{link_config, LINKS};
use weft::sim::channel::ChannelConfig;
use weft::sim::link::{LinkPair, Traffic, VerilatorDevice};

#[test]
fn generated_link_delivers_exactly_once_under_bit_errors() {
    let (lanes, name) = LINKS[1];
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("generated/link/{name}.v"));
    let config = link_config(lanes);
    let ends = [VerilatorDevice::new(&file, name).unwrap(), VerilatorDevice::new(&file, name).unwrap()];
    let mut ch = ChannelConfig::clean(lanes, 16);
    ch.bit_offset = vec![11, 50];
    ch.skew = vec![0, 4];
    let back = ChannelConfig { seed: 1234, skew: vec![3, 0], bit_offset: vec![65, 1], ..ch.clone() };
    let mut pair = LinkPair::new(config, ends, [ch, back]);
    pair.reset();
    pair.train(50_000).expect("channel up");
    for c in pair.channels.iter_mut() {
        c.config_mut().bit_error_rate = 1e-5;
    }
    let now = pair.cycle;
    for i in 0..300u64 {
        let dir = (i % 2) as usize;
        pair.channels[dir].scheduled.push((now + 100 + 97 * i, (i % 4 / 2) as usize, (i % 3) as usize));
    }
    let traffic = Traffic { packets: 5000, min_bytes: 1, max_bytes: 256, valid_percent: 80, ready_percent: 60, both_ways: true, seed: 99 };
    let run = pair.run(&traffic, 50_000).unwrap();
    eprintln!("{run:?}");
    let counter = |n: &str| run.counters.iter().find(|c| c.0 == n).unwrap().1;
    assert_eq!(run.delivered, [5000, 5000]);
    assert!(counter("crc_errors").iter().sum::<u64>() > 0);
    assert!(counter("frames_retransmitted").iter().sum::<u64>() > 0);
}

/// Two boards: A's oscillator at 6.400 ns, B's at 6.402 ns (312 ppm apart, beyond the ±100 ppm
/// of real oscillators), each endpoint receiving on the clock recovered from its partner (its
/// `rx_clk` is the partner's `clk`), bit errors both ways, random packets both ways for more than
/// 10⁶ cycles: every packet exactly once, intact and in order; A's elastic buffer runs dry (its
/// receive clock is 312 ppm slower) and B's fills (312 ppm faster), each slipping once per word
/// the clocks drift apart.
#[test]
fn generated_link_between_independent_clocks_loses_nothing() {
    let (lanes, name) = LINKS[1];
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("generated/link/{name}.v"));
    let config = link_config(lanes);
    let ends = [VerilatorDevice::new(&file, name).unwrap(), VerilatorDevice::new(&file, name).unwrap()];
    let mut ch = ChannelConfig::clean(lanes, 16);
    ch.bit_offset = vec![7, 40];
    ch.skew = vec![2, 0];
    let back = ChannelConfig { seed: 4321, skew: vec![0, 5], bit_offset: vec![60, 3], ..ch.clone() };
    let mut pair = LinkPair::new(config, ends, [ch, back]).with_periods([6400, 6402]).unwrap();
    pair.reset();
    pair.train(50_000).expect("channel up");
    for c in pair.channels.iter_mut() {
        c.config_mut().bit_error_rate = 1e-6;
    }
    let start = pair.cycles;
    let traffic = Traffic { packets: PPM_PACKETS, min_bytes: 1, max_bytes: 512, valid_percent: 90, ready_percent: 90, both_ways: true, seed: 5 };
    let run = pair.run(&traffic, 50_000).unwrap();
    let counter = |n: &str| run.counters.iter().find(|c| c.0 == n).unwrap().1;
    let drift = (pair.cycles[0] - start[0]).abs_diff(pair.cycles[1] - start[1]);
    eprintln!("{} cycles of A, {} of B, drift {drift} words, counters {:?}", pair.cycles[0] - start[0], pair.cycles[1] - start[1], run.counters);
    assert_eq!(run.delivered, [PPM_PACKETS, PPM_PACKETS]);
    assert!(run.cycles >= 1_000_000, "{} cycles", run.cycles);
    assert!(counter("crc_errors").iter().sum::<u64>() > 0, "bit errors were on");
    for s in counter("slips") {
        assert!(s.abs_diff(drift) <= 16, "slips {:?} against a drift of {drift} words", counter("slips"));
    }
}

/// Packets each way: enough for more than 10⁶ cycles at 90 % valid and ready.
const PPM_PACKETS: usize = 55_000;
