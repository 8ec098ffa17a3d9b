//! Cycle-stepping harness for rust-hdl's built-in simulator, and the random stimulus every
//! block testbench uses.
//!
//! rust-hdl's `Simulation` runs each testbench in a thread and passes the whole circuit between
//! them; weft's testbenches instead step one circuit directly (`settle`, sample, `tick`), which is
//! the same evaluation engine with exact control of what is sampled before each clock edge.

use crate::Error;
use rust_hdl::core::check_error::CheckError;
use rust_hdl::prelude::*;

/// Deterministic pseudo-random numbers (xorshift64*), so every failure is reproducible from the
/// seed printed with it.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// A generator started from `seed` (any value, 0 included).
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    /// Uniform in `0..n` (n > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        ((self.next_u64() as u128 * n as u128) >> 64) as u64
    }
    /// True with probability `percent`/100.
    pub fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
    /// `bits` random bits as a big unsigned integer.
    pub fn bits(&mut self, bits: usize) -> num_bigint::BigUint {
        let words: Vec<u32> = (0..bits.div_ceil(32)).map(|_| self.next_u64() as u32).collect();
        let value = num_bigint::BigUint::from_slice(&words);
        value & ((num_bigint::BigUint::from(1u8) << bits) - 1u8)
    }
}

/// A block under test in the built-in simulator, stepped one clock at a time.
pub struct Bench<B: Block> {
    /// The unit under test; set its inputs' `next` and read its outputs between steps.
    pub uut: B,
    clock: fn(&mut B) -> &mut Signal<In, Clock>,
    /// Clock cycles stepped so far; a testbench may set it back to 0 once reset is released.
    pub cycle: u64,
}

impl<B: Block> Bench<B> {
    /// Connects the block, runs rust-hdl's structural checks, and holds the clock low.
    pub fn new(mut uut: B, clock: fn(&mut B) -> &mut Signal<In, Clock>) -> Result<Bench<B>, CheckError> {
        uut.connect_all();
        check_all(&uut)?;
        clock(&mut uut).next = Clock { clk: false };
        let mut bench = Bench { uut, clock, cycle: 0 };
        bench.settle();
        Ok(bench)
    }

    /// Propagates combinational logic after inputs changed.
    pub fn settle(&mut self) {
        assert!(rust_hdl::core::simulate::simulate(&mut self.uut, 1000), "combinational logic did not settle at cycle {}", self.cycle);
    }

    /// One rising and one falling clock edge; registers take their `d` at the rising edge.
    pub fn tick(&mut self) {
        self.settle();
        (self.clock)(&mut self.uut).next = Clock { clk: true };
        self.settle();
        (self.clock)(&mut self.uut).next = Clock { clk: false };
        self.settle();
        self.cycle += 1;
    }
}

use crate::stream::{AxisMaster, AxisSlave, Beat};

/// Random stimulus for a one-input, one-output stream block.
#[derive(Clone, Copy, Debug)]
pub struct StreamStimulus {
    /// Number of beats to send.
    pub beats: usize,
    /// Chance, in percent, that the source offers a beat in a cycle where it has none pending.
    pub valid_percent: u64,
    /// Chance, in percent, that the sink is ready in a cycle.
    pub ready_percent: u64,
    /// Seed of the [`Rng`]; printed with every failure.
    pub seed: u64,
}

/// What a stream run measured.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StreamRun {
    /// Clock cycles (output-side edges) the run took after reset.
    pub cycles: u64,
    /// Output beats received and checked.
    pub beats: usize,
    /// Cycle (after reset) at which the first beat left the block.
    pub first_out: Option<u64>,
}

/// Port accessors for a block whose output stream differs in width from its input.
pub struct TransformPorts<B, const WI: usize, const KI: usize, const WO: usize, const KO: usize> {
    /// The block's clock.
    pub clk: fn(&mut B) -> &mut Signal<In, Clock>,
    /// The block's synchronous active-high reset.
    pub rst: fn(&mut B) -> &mut Signal<In, Bit>,
    /// The input stream (`WI`-bit `tdata`, `KI`-bit `tkeep`).
    pub input: fn(&mut B) -> &mut AxisSlave<WI, KI>,
    /// The output stream (`WO`-bit `tdata`, `KO`-bit `tkeep`).
    pub output: fn(&mut B) -> &mut AxisMaster<WO, KO>,
}

/// Streams `inputs` (data, last) through a block with random `tvalid`/`tready` and checks its
/// output beats (data, last) against `expected` — computed by the caller from an independent
/// reference — in order, exactly once, and held stable while stalled.
pub fn check_stream_transform<B: Block, const WI: usize, const KI: usize, const WO: usize, const KO: usize>(
    uut: B,
    ports: &TransformPorts<B, WI, KI, WO, KO>,
    inputs: &[(num_bigint::BigUint, bool)],
    expected: &[(num_bigint::BigUint, bool)],
    valid_percent: u64,
    ready_percent: u64,
    seed: u64,
) -> Result<StreamRun, Error> {
    let judge = |i: usize, beat: &Beat| {
        let (data, last) = &expected[i];
        if *data == beat.data && *last == beat.last {
            Ok(())
        } else {
            Err(format!("got {:#x} (last {}), want {data:#x} (last {last})", beat.data, beat.last))
        }
    };
    check_stream_outputs(uut, ports, inputs, expected.len(), &judge, valid_percent, ready_percent, seed)
}

/// As [`check_stream_transform`], with `judge(i, beat)` deciding whether output beat `i` is
/// right (for results that may differ within a tolerance).
#[allow(clippy::too_many_arguments)]
pub fn check_stream_outputs<B: Block, const WI: usize, const KI: usize, const WO: usize, const KO: usize>(
    uut: B,
    ports: &TransformPorts<B, WI, KI, WO, KO>,
    inputs: &[(num_bigint::BigUint, bool)],
    outputs: usize,
    judge: &dyn Fn(usize, &Beat) -> Result<(), String>,
    valid_percent: u64,
    ready_percent: u64,
    seed: u64,
) -> Result<StreamRun, Error> {
    let fail = |cycle: u64, what: String| Error::Mismatch(format!("seed {seed}, cycle {cycle}: {what}"));
    let mut bench = Bench::new(uut, ports.clk).map_err(|e| Error::Design(format!("structural check: {e:?}")))?;
    let mut rng = Rng::new(seed);
    (ports.rst)(&mut bench.uut).next = true;
    (ports.input)(&mut bench.uut).tvalid.next = false;
    (ports.output)(&mut bench.uut).tready.next = false;
    bench.tick();
    bench.tick();
    (ports.rst)(&mut bench.uut).next = false;
    bench.cycle = 0;
    let (mut sent, mut received, mut offering) = (0usize, 0usize, false);
    let mut stalled: Option<Beat> = None;
    let mut first_out = None;
    let limit = 100 + (inputs.len() as u64 + 64) * 10_000 / valid_percent.min(ready_percent).max(1).pow(2);
    while received < outputs {
        if bench.cycle > limit {
            return Err(fail(bench.cycle, format!("timed out: {received} of {outputs} beats out")));
        }
        offering = offering || (sent < inputs.len() && rng.chance(valid_percent));
        let ready = rng.chance(ready_percent);
        {
            let input = (ports.input)(&mut bench.uut);
            input.tvalid.next = offering;
            if offering {
                Beat::new(inputs[sent].0.clone(), u64::MAX >> (64 - KI.min(64)), inputs[sent].1, 0).drive(input);
            }
        }
        (ports.output)(&mut bench.uut).tready.next = ready;
        bench.settle();
        if offering && (ports.input)(&mut bench.uut).tready.val() {
            sent += 1;
            offering = false;
        }
        let output = (ports.output)(&mut bench.uut);
        let valid = output.tvalid.val();
        if let Some(previous) = stalled.take() {
            if !valid || Beat::sample(output) != previous {
                return Err(fail(bench.cycle, "output beat changed or vanished while stalled".into()));
            }
        }
        if valid {
            let beat = Beat::sample(output);
            if ready {
                if received >= outputs {
                    return Err(fail(bench.cycle, "more output beats than expected".into()));
                }
                judge(received, &beat).map_err(|e| fail(bench.cycle, format!("beat {received}: {e}")))?;
                first_out.get_or_insert(bench.cycle);
                received += 1;
            } else {
                stalled = Some(beat);
            }
        }
        bench.tick();
    }
    expect_no_more(
        &mut bench,
        &|b| {
            (ports.input)(b).tvalid.next = false;
            (ports.output)(b).tready.next = true;
        },
        &|b| (ports.output)(b).tvalid.val(),
    )
    .map_err(|cycle| fail(cycle, "extra beat after the last one".into()))?;
    Ok(StreamRun { cycles: bench.cycle, beats: received, first_out })
}

/// Eight idle cycles after a run (`idle` sets the inputs): the block must offer no further beat
/// (`offering`); the cycle it does is the error.
fn expect_no_more<B: Block>(bench: &mut Bench<B>, idle: &dyn Fn(&mut B), offering: &dyn Fn(&mut B) -> bool) -> Result<(), u64> {
    for _ in 0..8 {
        idle(&mut bench.uut);
        bench.settle();
        if offering(&mut bench.uut) {
            return Err(bench.cycle);
        }
        bench.tick();
    }
    Ok(())
}
