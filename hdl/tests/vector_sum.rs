//! Per-vector kernels (`vsum`): at every adder depth, under random input bubbles and output
//! stalls, every vector's sum arrives once, in order, within the bound any summation order meets
//! — checked cycle by cycle on the netlist the built-in simulator runs.

use weft_hdl::float::{FloatFormat, FloatOperator};
use weft_hdl::netlist::eval::Evaluator;
use weft_hdl::pipeline::{dsl, Stages};
use weft_hdl::testbench::Rng;

/// Binary32 values with magnitudes in [2^-4, 2^4) and random signs.
fn operand(rng: &mut Rng) -> u32 {
    ((rng.below(2) as u32) << 31) | ((123 + rng.below(8) as u32) << 23) | (rng.next_u64() as u32 & 0x7F_FFFF)
}

/// Sums over a vector of the per-beat values `a*b` and `a-b` (a dot product and a difference),
/// with the summation bound (n−1)·2⁻²⁴·Σ|vᵢ| over the per-beat binary32 values.
fn expected(vector: &[[u32; 2]]) -> Vec<(f64, f64)> {
    let per_beat: Vec<[f32; 2]> = vector
        .iter()
        .map(|[a, b]| {
            let (a, b) = (f32::from_bits(*a), f32::from_bits(*b));
            [a * b, a - b]
        })
        .collect();
    (0..2)
        .map(|j| {
            let exact: f64 = per_beat.iter().map(|v| v[j] as f64).sum();
            let magnitude: f64 = per_beat.iter().map(|v| (v[j] as f64).abs()).sum();
            (exact, (vector.len() as f64 - 1.0) * 2f64.powi(-24) * magnitude)
        })
        .collect()
}

#[test]
fn vector_sums_at_every_adder_depth_under_back_pressure() {
    let kernel = dsl::parse("kernel dot\ninput a, b\noutput p = vsum(a*b), d = vsum(a - b)\n").unwrap();
    let max = FloatOperator::Add.max_stages(FloatFormat::BINARY32);
    for add_stages in 1..=max {
        let mut stages = Stages::balanced(FloatFormat::BINARY32);
        stages.depth.insert("add", add_stages);
        let (net, _) = kernel.netlist(&stages).unwrap();
        for (valid, ready) in [(100, 100), (100, 50), (60, 80)] {
            let mut rng = Rng::new(add_stages as u64 * 1000 + valid + ready);
            let vectors: Vec<Vec<[u32; 2]>> = (0..400)
                .map(|_| {
                    let beats = if rng.chance(40) { 1 } else { 1 + rng.below(10) as usize };
                    (0..beats).map(|_| [operand(&mut rng), operand(&mut rng)]).collect()
                })
                .collect();
            let beats: Vec<([u32; 2], bool)> = vectors.iter().flat_map(|v| v.iter().enumerate().map(|(i, b)| (*b, i + 1 == v.len()))).collect();
            let mut ev = Evaluator::new(net.clone());
            let port = |ev: &Evaluator, name: &str| ev.input(name).unwrap();
            let (tvalid, tlast, tready) = (port(&ev, "s_axis_tvalid"), port(&ev, "s_axis_tlast"), port(&ev, "m_axis_tready"));
            let data = port(&ev, "s_axis_tdata");
            ev.clock(true);
            let (mut next, mut received) = (0, 0);
            let mut cycles = 0;
            while received < vectors.len() {
                cycles += 1;
                assert!(cycles < 20 * beats.len(), "depth {add_stages}: stuck after {received} sums");
                let offer = next < beats.len() && rng.chance(valid);
                ev.set(tvalid, offer as u128);
                if offer {
                    ev.set(data, (beats[next].0[1] as u128) << 32 | beats[next].0[0] as u128);
                    ev.set(tlast, beats[next].1 as u128);
                }
                let sink_ready = rng.chance(ready);
                ev.set(tready, sink_ready as u128);
                ev.settle();
                if ev.output("m_axis_tvalid") == Some(1) && sink_ready {
                    let got = [ev.get_output_bits("m_axis_tdata", 0, 32), ev.get_output_bits("m_axis_tdata", 32, 32)];
                    for (j, (exact, bound)) in expected(&vectors[received]).into_iter().enumerate() {
                        let value = f32::from_bits(got[j] as u32) as f64;
                        assert!(
                            (value - exact).abs() <= bound,
                            "depth {add_stages}, valid {valid}%, ready {ready}%: vector {received} ({} beats), output {j}: {value} vs exact {exact} (bound {bound:e})",
                            vectors[received].len()
                        );
                    }
                    received += 1;
                }
                if offer && ev.output("s_axis_tready") == Some(1) {
                    next += 1;
                }
                ev.clock(false);
            }
            assert_eq!(next, beats.len(), "every beat consumed");
        }
    }
}

#[test]
fn the_accumulation_loop_needs_a_registered_adder() {
    let kernel = dsl::parse("kernel s\ninput a\noutput y = vsum(a)\n").unwrap();
    let mut stages = Stages::balanced(FloatFormat::BINARY32);
    stages.depth.insert("add", 0);
    let error = kernel.netlist(&stages).unwrap_err();
    assert!(matches!(error, weft_hdl::Error::Parameter(_)), "{error:?}");
    let message = error.to_string();
    let max = FloatOperator::Add.max_stages(FloatFormat::BINARY32);
    assert!(message.contains(&format!("adder stages 0: allowed range 1..={max}")), "{message}");
}
