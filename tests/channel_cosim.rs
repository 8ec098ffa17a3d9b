//! The simulation tops' channel in Verilator and in the built-in simulator against the software
//! channel model: the same random blocks and the same `inject_err` pulses give the same received
//! blocks, cycle for cycle.

use weft::hdl::testbench::Rng;
use weft::ip::system::channel::channel;
use weft::sim::channel::{Channel, ChannelConfig, INJECT_PAYLOAD_BIT};
use weft::sim::cosim::Model;

fn verilog(name: &str, lanes: usize, latency: usize) -> String {
    weft::hdl::netlist::verilog::module(&channel(lanes, latency).unwrap(), name)
}

#[test]
fn verilog_channel_matches_the_rust_model() {
    for (lanes, latency) in [(1, 1), (2, 12), (4, 5)] {
        let name = format!("channel_x{lanes}_l{latency}");
        let dir = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/weft-channel");
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join(format!("{name}.v"));
        std::fs::write(&file, format!("`timescale 1ns/1ps\n{}", verilog(&name, lanes, latency))).unwrap();
        let mut model = Model::build(&file, &name).unwrap();
        let (tx, inject, rx, rst) = (model.port("tx").unwrap(), model.port("inject_err").unwrap(), model.port("rx").unwrap(), model.port("rst").unwrap());
        model.set(rst, 1);
        model.tick();
        model.set(rst, 0);
        let mut reference = Channel::new(ChannelConfig::clean(lanes, latency));
        let mut rng = Rng::new(lanes as u64 * 100 + latency as u64);
        let mut flips = 0;
        for cycle in 0..3000u64 {
            let blocks: Vec<u128> = (0..lanes).map(|_| ((rng.next_u64() as u128) << 2 | rng.below(4) as u128) & ((1 << 66) - 1)).collect();
            let pulses = rng.below(1 << lanes) & if rng.chance(10) { u64::MAX } else { 0 };
            for k in 0..lanes {
                if pulses >> k & 1 == 1 {
                    reference.scheduled.push((cycle, k, 2 + INJECT_PAYLOAD_BIT));
                    flips += 1;
                }
            }
            let mut words = vec![0u32; (66 * lanes).div_ceil(32)];
            for (k, b) in blocks.iter().enumerate() {
                for bit in 0..66 {
                    if b >> bit & 1 == 1 {
                        let i = 66 * k + bit;
                        words[i / 32] |= 1 << (i % 32);
                    }
                }
            }
            model.set_words(tx, &words);
            model.set(inject, pulses);
            model.eval();
            let got = model.get_words(rx).to_vec();
            let want = reference.step(&blocks);
            for (k, w) in want.iter().enumerate() {
                let g = (0..66).fold(0u128, |acc, bit| {
                    let i = 66 * k + bit;
                    acc | ((got[i / 32] >> (i % 32) & 1) as u128) << bit
                });
                assert_eq!(g, *w, "{name}: lane {k} at cycle {cycle}");
            }
            model.tick();
        }
        assert!(flips > 100, "{name}: only {flips} flips injected");
    }
}

/// `cut` (a pulled cable): while it is high the channel delivers random bits — about half the
/// sync headers invalid, as noise gives — and a latency after it falls, the blocks again.
#[test]
fn a_cut_channel_delivers_noise_then_blocks_again() {
    let (lanes, latency) = (2, 3);
    let name = "channel_cut_x2";
    let dir = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/weft-channel");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join(format!("{name}.v"));
    std::fs::write(&file, format!("`timescale 1ns/1ps\n{}", verilog(name, lanes, latency))).unwrap();
    let mut model = Model::build(&file, name).unwrap();
    let (tx, cut, rx, rst) = (model.port("tx").unwrap(), model.port("cut").unwrap(), model.port("rx").unwrap(), model.port("rst").unwrap());
    model.set(rst, 1);
    model.tick();
    model.set(rst, 0);
    // Every block a data block (header 0b10) with a counting payload.
    let mut sent: Vec<Vec<u32>> = vec![];
    let (mut invalid, mut cut_blocks, mut clean) = (0, 0, 0);
    for cycle in 0..2000usize {
        let mut words = vec![0u32; (66 * lanes).div_ceil(32)];
        for k in 0..lanes {
            let block = 0b10u128 | ((cycle * lanes + k) as u128) << 2;
            for bit in 0..66 {
                if block >> bit & 1 == 1 {
                    let i = 66 * k + bit;
                    words[i / 32] |= 1 << (i % 32);
                }
            }
        }
        model.set_words(tx, &words);
        model.set(cut, (500..1500).contains(&cycle) as u64);
        model.eval();
        let got = model.get_words(rx).to_vec();
        // What left the sender `latency + 1` edges ago (the channel's stages).
        let sent_then = cycle.checked_sub(latency + 1).map(|c| (c, &sent[c]));
        if let Some((c, want)) = sent_then {
            if (500..1500).contains(&c) {
                for k in 0..lanes {
                    let i = 66 * k;
                    let header = (got[i / 32] >> (i % 32)) & 0b11;
                    invalid += usize::from(header == 0 || header == 0b11);
                    cut_blocks += 1;
                }
            } else {
                assert_eq!(&got, want, "cycle {cycle}: the channel must deliver the blocks outside the cut");
                clean += 1;
            }
        }
        sent.push(words);
        model.tick();
    }
    let fraction = invalid as f64 / cut_blocks as f64;
    assert!((0.35..0.65).contains(&fraction), "{invalid} of {cut_blocks} headers invalid during the cut");
    assert!(clean > 900);
}

/// The same channel in the built-in simulator: blocks and `inject_err` pulses as above, the
/// received blocks equal the software model's, cycle for cycle.
#[test]
fn built_in_channel_matches_the_rust_model() {
    use weft::hdl::netlist::eval::Evaluator;
    for (lanes, latency) in [(1, 1), (3, 7)] {
        let mut sim = Evaluator::new(channel(lanes, latency).unwrap());
        sim.reset(1);
        let mut reference = Channel::new(ChannelConfig::clean(lanes, latency));
        let mut rng = Rng::new(lanes as u64 * 7 + latency as u64);
        for cycle in 0..1000u64 {
            let blocks: Vec<u128> = (0..lanes).map(|_| ((rng.next_u64() as u128) << 2 | rng.below(4) as u128) & ((1 << 66) - 1)).collect();
            let pulses = rng.below(1 << lanes) & if rng.chance(10) { u64::MAX } else { 0 };
            for k in 0..lanes {
                if pulses >> k & 1 == 1 {
                    reference.scheduled.push((cycle, k, 2 + INJECT_PAYLOAD_BIT));
                }
                sim.set_input_bits("tx", 66 * k, 66, blocks[k]);
            }
            sim.set_input("inject_err", pulses as u128);
            sim.set_input("cut", 0);
            sim.settle();
            let want = reference.step(&blocks);
            for (k, w) in want.iter().enumerate() {
                assert_eq!(sim.get_output_bits("rx", 66 * k, 66), *w, "x{lanes} latency {latency}: lane {k} at cycle {cycle}");
            }
            sim.clock(false);
        }
    }
}
