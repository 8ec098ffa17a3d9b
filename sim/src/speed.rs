//! Simulated cycles per second of the built-in simulator and of the Verilator harness, on the
//! same FIFO (`axis_fifo_w128_d32`) with the same stimulus: random beats, `tvalid` and `tready`
//! each raised in 70 % of cycles from the same seeds. Both runs must move the same beats, which
//! also cross-checks the Rust description against its exported Verilog.

use crate::Error;
use num_bigint::BigUint;
use std::time::Instant;
use weft_ip::catalog::shipped;
use weft_ip::weft_hdl::netlist::eval::Evaluator;
use weft_ip::weft_hdl::stream::Beat;
use weft_ip::weft_hdl::testbench::Rng;

use crate::cosim::{AxisPorts, AxisSink, AxisSource, Model};

const PERCENT: u64 = 70;

/// One simulator's figures.
#[derive(Clone, Debug)]
pub struct Speed {
    /// Which simulator ran: `built-in` or `Verilator harness`.
    pub simulator: &'static str,
    /// Clock cycles simulated.
    pub cycles: u64,
    /// Wall-clock seconds from reset to the last cycle (building the model not included).
    pub seconds: f64,
    /// Beats that left the FIFO.
    pub beats: usize,
    /// XOR of the low 64 bits of every beat out, to compare runs.
    pub digest: u64,
}

impl Speed {
    /// Simulated cycles per wall-clock second.
    pub fn cycles_per_second(&self) -> f64 {
        self.cycles as f64 / self.seconds
    }
}

fn beats(count: usize, seed: u64) -> Vec<Beat> {
    let mut rng = Rng::new(seed);
    (0..count).map(|_| Beat::new(rng.bits(128), 0xFFFF, rng.chance(10), 0)).collect()
}

fn low64(data: &BigUint) -> u64 {
    data.iter_u64_digits().next().unwrap_or(0)
}

/// Runs the FIFO for `cycles` cycles in the built-in simulator.
pub fn builtin(cycles: u64) -> Speed {
    let input = beats(cycles as usize, 1);
    let mut eval = Evaluator::new(weft_ip::axis::buffers::fifo(128, 32));
    let port = |eval: &Evaluator, name: &str| eval.input(name).expect("FIFO port");
    let (data, keep, last, valid, ready_in) = (port(&eval, "s_axis_tdata"), port(&eval, "s_axis_tkeep"), port(&eval, "s_axis_tlast"), port(&eval, "s_axis_tvalid"), port(&eval, "m_axis_tready"));
    let output = |name: &str| eval.netlist().outputs.iter().find(|o| o.name == name).expect("FIFO port").wire;
    let (s_ready, m_valid, m_data) = (output("s_axis_tready"), output("m_axis_tvalid"), output("m_axis_tdata"));
    let (mut valid_rng, mut ready_rng) = (Rng::new(2), Rng::new(3));
    let start = Instant::now();
    eval.reset(1);
    let (mut next, mut offering, mut out, mut digest) = (0usize, false, 0usize, 0u64);
    for _ in 0..cycles {
        if !offering && next < input.len() && valid_rng.chance(PERCENT) {
            offering = true;
        }
        let ready = ready_rng.chance(PERCENT);
        eval.set(valid, u128::from(offering));
        if let Some(beat) = input.get(next) {
            eval.set_big(data, &beat.data);
            eval.set(keep, beat.keep as u128);
            eval.set(last, u128::from(beat.last));
        }
        eval.set(ready_in, u128::from(ready));
        eval.settle();
        if offering && eval.get(s_ready) == 1 {
            next += 1;
            offering = false;
        }
        if ready && eval.get(m_valid) == 1 {
            digest ^= eval.get(m_data) as u64;
            out += 1;
        }
        eval.clock(false);
    }
    Speed { simulator: "built-in", cycles, seconds: start.elapsed().as_secs_f64(), beats: out, digest }
}

/// Runs the same stimulus on the verilated FIFO (built with Verilator, or taken from the
/// cache); fails when Verilator or the C++ compiler cannot build it.
pub fn verilator(cycles: u64) -> Result<Speed, Error> {
    let module = shipped().into_iter().find(|m| m.spec.name == "axis_fifo_w128_d32").expect("FIFO is shipped");
    let dir = std::env::temp_dir().join(format!("weft-speed-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let file = dir.join("axis_fifo_w128_d32.v");
    std::fs::write(&file, (module.verilog)(&module.spec)?)?;
    let mut model = Model::build(&file, "axis_fifo_w128_d32")?;
    let _ = std::fs::remove_dir_all(&dir);
    let mut source = AxisSource::new(AxisPorts::find(&model, "s_axis")?, PERCENT, 2);
    let mut sink = AxisSink::new(AxisPorts::find(&model, "m_axis")?, PERCENT, 3);
    source.queue.extend(beats(cycles as usize, 1));
    let rst = model.port("rst")?;
    let start = Instant::now();
    model.set(rst, 1);
    model.tick();
    model.set(rst, 0);
    let mut digest = 0u64;
    for _ in 0..cycles {
        source.drive(&mut model);
        sink.drive(&mut model);
        model.eval();
        source.observe(&mut model);
        if let Some(beat) = sink.observe(&mut model) {
            digest ^= low64(&beat.data);
        }
        model.tick();
    }
    let seconds = start.elapsed().as_secs_f64();
    Ok(Speed { simulator: "Verilator harness", cycles, seconds, beats: sink.received.len(), digest })
}

/// The side-by-side table `weft bench sim-speed` prints: both simulators on `cycles` cycles,
/// and the speed-up. Fails with [`Error::Mismatch`] when they move different beats.
pub fn report(cycles: u64) -> Result<String, Error> {
    let fast = verilator(cycles)?;
    let slow = builtin(cycles);
    if (fast.beats, fast.digest) != (slow.beats, slow.digest) {
        return Err(Error::Mismatch(format!("the simulators disagree: built-in moved {} beats (digest {:x}), Verilator {} (digest {:x})", slow.beats, slow.digest, fast.beats, fast.digest)));
    }
    let mut out = format!("axis_fifo_w128_d32, tvalid/tready {PERCENT}% random, {cycles} cycles, {} beats out in both\n", fast.beats);
    out.push_str(&format!("{:<22} {:>14} {:>10}\n", "simulator", "cycles/s", "seconds"));
    for s in [&slow, &fast] {
        out.push_str(&format!("{:<22} {:>14.0} {:>10.2}\n", s.simulator, s.cycles_per_second(), s.seconds));
    }
    out.push_str(&format!("speed-up: {:.0}x\n", fast.cycles_per_second() / slow.cycles_per_second()));
    Ok(out)
}

/// Whole-torus speed: every node of the shipped 4x2x1 torus (router, link endpoints, register
/// window) with its serial lanes through channel models, every source saturated with uniformly
/// random packets, in the built-in simulator and in Verilator (one model per node). Both must
/// deliver the same packets at the same cycles ([`Error::Mismatch`] otherwise). A third row
/// runs the generated whole-torus top (`torus_4x2x1_sim`, one Verilator model) on the same
/// traffic. `verilog_dir` is the folder of generated Verilog holding `system/torus_4x2x1_node.v`
/// and `system/torus_4x2x1_sim.v`.
pub fn torus_report(cycles: u64, verilog_dir: &std::path::Path) -> Result<String, Error> {
    use crate::catalog::{node_config, torus_name};
    use crate::network::{Injection, Pattern, Torus, Traffic};
    let dims = [4, 2, 1];
    let config = node_config(dims);
    let name = format!("torus_{}_node", torus_name(dims));
    let file = verilog_dir.join("system").join(format!("{name}.v"));
    let traffic = Traffic { pattern: Pattern::UniformRandom, injection: Injection::Saturated { cycles }, min_bytes: 0, max_bytes: 256, valid_percent: 100, ready_percent: 100, seed: 5 };
    let mut rows = vec![];
    let mut arrivals = vec![];
    for simulator in ["built-in (netlist evaluator)", "Verilator harness"] {
        let (seconds, total, delivered) = if simulator.starts_with("built-in") {
            let mut torus = Torus::netlist_nodes(&config, 16)?;
            torus.reset();
            torus.bring_up(20_000)?;
            let start = Instant::now();
            let run = torus.run(&traffic, 20_000)?.map_err(|s| Error::Stuck(format!("stuck at {}", s.cycle)))?;
            (start.elapsed().as_secs_f64(), run.cycles, run.deliveries.iter().map(|d| (d.id, d.tail_out)).collect::<Vec<_>>())
        } else {
            let mut torus = Torus::verilated_nodes(&config, &file, &name, 16)?;
            torus.reset();
            torus.bring_up(20_000)?;
            let start = Instant::now();
            let run = torus.run(&traffic, 20_000)?.map_err(|s| Error::Stuck(format!("stuck at {}", s.cycle)))?;
            (start.elapsed().as_secs_f64(), run.cycles, run.deliveries.iter().map(|d| (d.id, d.tail_out)).collect::<Vec<_>>())
        };
        rows.push((simulator, total, seconds, delivered.len()));
        arrivals.push(delivered);
    }
    if arrivals[0] != arrivals[1] {
        return Err(Error::Mismatch("the simulators disagree on the torus: different packets or arrival cycles".to_string()));
    }
    // The generated whole-torus top: one Verilator model holding every node and channel model.
    let top = format!("torus_{}_sim", torus_name(dims));
    let node_text = std::fs::read_to_string(&file).map_err(|e| Error::from(e).context(file.display()))?;
    let sim_file = verilog_dir.join("system").join(format!("{top}.v"));
    let sim_text = std::fs::read_to_string(&sim_file).map_err(|e| Error::from(e).context(sim_file.display()))?;
    let dir = std::env::temp_dir().join(format!("weft-speed-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let joined = dir.join(format!("{top}.v"));
    std::fs::write(&joined, node_text + &sim_text)?;
    let mut torus = Torus::verilated_sim(&config.router, &joined, &top)?;
    let _ = std::fs::remove_dir_all(&dir);
    torus.reset();
    torus.bring_up(20_000)?;
    let start = Instant::now();
    let run = torus.run(&traffic, 20_000)?.map_err(|s| Error::Stuck(format!("{top}: stuck at {}", s.cycle)))?;
    let seconds = start.elapsed().as_secs_f64();
    let simulator = "Verilator, one model (_sim top)";
    rows.push((simulator, run.cycles, seconds, run.deliveries.len()));
    let mut out = format!("{name} x8 nodes over channel models, sources saturated {cycles} cycles, then drained; same arrivals in the first two (the _sim top boots its nodes itself, so its traffic starts at another cycle)\n");
    out.push_str(&format!("{:<30} {:>10} {:>12} {:>10} {:>9}\n", "simulator", "cycles", "cycles/s", "seconds", "packets"));
    for (s, c, secs, p) in &rows {
        out.push_str(&format!("{:<30} {:>10} {:>12.0} {:>10.2} {:>9}\n", s, c, *c as f64 / secs, secs, p));
    }
    out.push_str(&format!("speed-up of the Verilator harness over the built-in simulator: {:.1}x\n", (rows[1].1 as f64 / rows[1].2) / (rows[0].1 as f64 / rows[0].2)));
    Ok(out)
}
