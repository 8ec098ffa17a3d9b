//! The Verilator co-simulation harness on the shipped stream primitives: random back-pressure
//! on both sides against a software queue, and one beat per cycle when both sides are ready.

use std::path::Path;

use weft::hdl::stream::Beat;
use weft::hdl::testbench::Rng;
use weft::sim::cosim::{AxisPorts, AxisSink, AxisSource, Model};

fn model(name: &str) -> Model {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("generated/axis/{name}.v"));
    Model::build(&file, name).unwrap_or_else(|e| panic!("{e}"))
}

/// Sends `count` random beats; returns the cycles taken after reset.
fn run(model: &mut Model, count: usize, valid: u64, ready: u64, seed: u64) -> u64 {
    let mut source = AxisSource::new(AxisPorts::find(model, "s_axis").unwrap(), valid, seed);
    let mut sink = AxisSink::new(AxisPorts::find(model, "m_axis").unwrap(), ready, seed + 1);
    let mut rng = Rng::new(seed + 2);
    let sent: Vec<Beat> = (0..count).map(|_| Beat::new(rng.bits(128), rng.below(1 << 16), rng.chance(20), 0)).collect();
    source.queue.extend(sent.iter().cloned());
    let rst = model.port("rst").unwrap();
    model.set(rst, 1);
    model.tick();
    model.tick();
    model.set(rst, 0);
    let start = model.cycle;
    while sink.received.len() < count {
        assert!(model.cycle - start < 100 * count as u64 + 100, "seed {seed}: stuck at {} beats", sink.received.len());
        source.drive(model);
        sink.drive(model);
        model.eval();
        source.observe(model);
        sink.observe(model);
        model.tick();
    }
    assert_eq!(sink.received, sent, "seed {seed}: beats lost, duplicated, reordered or corrupted");
    model.cycle - start
}

#[test]
fn register_slice_and_fifo_keep_every_beat_under_random_back_pressure() {
    for name in ["axis_register_slice_w128", "axis_fifo_w128_d32"] {
        let mut m = model(name);
        for (seed, valid, ready) in [(1, 50, 50), (10, 90, 20), (20, 20, 90)] {
            run(&mut m, 5000, valid, ready, seed);
        }
    }
}

#[test]
fn register_slice_and_fifo_move_one_beat_per_cycle_when_unstalled() {
    // Latencies as the modules document them: a beat into an empty slice or FIFO is out a cycle later.
    for (name, latency) in [("axis_register_slice_w128", 1), ("axis_fifo_w128_d32", 1)] {
        let mut m = model(name);
        let cycles = run(&mut m, 10_000, 100, 100, 7);
        assert_eq!(cycles, 10_000 + latency, "{name}");
    }
}
