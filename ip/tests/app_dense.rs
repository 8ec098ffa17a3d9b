//! The element-local dense operator in the built-in simulator against a plain software loop in
//! binary32 (`acc = acc + a·x`, columns in order), with MIDG2's own matrices: every output bit
//! for bit, at every lane count, with random gaps on the input and back-pressure on the output,
//! and the timing the module documents.

use num_bigint::BigUint;
use weft_hdl::float::FloatFormat;
use weft_hdl::netlist::eval::Evaluator;
use weft_hdl::testbench::Rng;
use weft_ip::app::dense::{dense_netlist, Dense};
use weft_ip::midg::Operators;

fn reference(a: &[f32], rows: usize, cols: usize, x: &[f32]) -> Vec<f32> {
    (0..rows)
        .map(|r| {
            let mut acc = 0.0f32;
            for c in 0..cols {
                acc += a[r * cols + c] * x[c];
            }
            acc
        })
        .collect()
}

fn pack(values: &[f32]) -> BigUint {
    values.iter().rev().fold(BigUint::default(), |acc, v| (acc << 32) | BigUint::from(v.to_bits()))
}

fn unpack(word: &BigUint, n: usize) -> Vec<u32> {
    (0..n).map(|i| ((word >> (32 * i)) & BigUint::from(u32::MAX)).iter_u32_digits().next().unwrap_or(0)).collect()
}

/// Runs `vectors` through the operator; returns the outputs, per element the cycles from the
/// cycle that took it to the first cycle its result was valid, and the cycles between takes.
fn simulate(shape: &Dense, a: &[f32], vectors: &[Vec<f32>], gaps: Option<u64>) -> (Vec<Vec<u32>>, Vec<usize>, Vec<usize>) {
    let bits: Vec<u128> = a.iter().map(|v| v.to_bits() as u128).collect();
    let net = dense_netlist(shape, FloatFormat::BINARY32, &bits).unwrap();
    let mut e = Evaluator::new(net);
    e.reset(2);
    let mut rng = gaps.map(Rng::new);
    let (mut sent, mut out, mut latency, mut takes) = (0, vec![], vec![], vec![]);
    let mut taken_at = 0usize;
    let mut cycle = 0usize;
    let set = |e: &mut Evaluator, port: &str, v: &BigUint| {
        let w = e.input(port).unwrap();
        e.set_big(w, v);
    };
    while out.len() < vectors.len() {
        let offer = sent < vectors.len() && rng.as_mut().is_none_or(|r| r.chance(70));
        let ready = rng.as_mut().is_none_or(|r| r.chance(60));
        set(&mut e, "s_axis_tvalid", &BigUint::from(offer as u8));
        set(&mut e, "s_axis_tdata", &pack(if offer { &vectors[sent] } else { &vectors[0] }));
        set(&mut e, "m_axis_tready", &BigUint::from(ready as u8));
        e.settle();
        let took = offer && e.get_output_big("s_axis_tready") == BigUint::from(1u8);
        let valid = e.get_output_big("m_axis_tvalid") == BigUint::from(1u8);
        if valid && latency.len() == out.len() {
            latency.push(cycle - taken_at);
        }
        if valid && ready {
            out.push(unpack(&e.get_output_big("m_axis_tdata"), shape.rows));
        }
        if took {
            sent += 1;
            taken_at = cycle;
            takes.push(cycle);
        }
        e.clock(false);
        cycle += 1;
        assert!(cycle < 1_000_000, "stuck");
    }
    (out, latency, takes.windows(2).map(|w| w[1] - w[0]).collect())
}

fn vectors(rng: &mut Rng, n: usize, cols: usize) -> Vec<Vec<f32>> {
    let special = [0.0f32, -0.0, f32::INFINITY, f32::NEG_INFINITY, f32::NAN, f32::MIN_POSITIVE / 8.0, 1e30, -1e-30];
    (0..n).map(|k| (0..cols).map(|c| if k == n - 1 && c == 1 { special[rng.below(special.len() as u64) as usize] } else { ((rng.below(2_000_001) as f64 - 1e6) / 1.7e5) as f32 }).collect()).collect()
}

fn check(name: &str, a: &[f32], rows: usize, cols: usize, lanes: &[usize]) {
    let mut rng = Rng::new(7);
    let xs = vectors(&mut rng, 6, cols);
    for &p in lanes {
        let shape = Dense { rows, cols, lanes: p, mul_stages: 2, add_stages: 3 };
        for gaps in [None, Some(11)] {
            let (got, latency, intervals) = simulate(&shape, a, &xs, gaps);
            for (k, (g, x)) in got.iter().zip(&xs).enumerate() {
                let want: Vec<u32> = reference(a, rows, cols, x).iter().map(|v| v.to_bits()).collect();
                for r in 0..rows {
                    let same = g[r] == want[r] || (f32::from_bits(g[r]).is_nan() && f32::from_bits(want[r]).is_nan());
                    assert!(same, "{name}, {p} lanes, element {k}, row {r}: {:e} against {:e}", f32::from_bits(g[r]), f32::from_bits(want[r]));
                }
            }
            if gaps.is_none() {
                assert!(latency.iter().all(|&l| l == shape.latency()), "{name}, {p} lanes: latency {latency:?}, documented {}", shape.latency());
                assert!(intervals.iter().all(|&i| i == shape.interval()), "{name}, {p} lanes: intervals {intervals:?}, documented {}", shape.interval());
            }
        }
    }
}

#[test]
fn derivative_and_lift_matrices_are_applied_bit_for_bit() {
    let op = Operators::new(3).to_f32();
    check("Dr, N = 3", &op.dr, 20, 20, &[1, 3, 20]);
    let lift = Operators::new(2).to_f32();
    check("LIFT, N = 2", &lift.lift, 10, 24, &[1, 4, 10]);
}

#[test]
fn bad_shapes_are_refused_with_the_field() {
    let m = vec![0u128; 12];
    let err = |s: Dense, m: &[u128]| dense_netlist(&s, FloatFormat::BINARY32, m).unwrap_err().to_string();
    assert!(err(Dense { rows: 3, cols: 4, lanes: 4, mul_stages: 2, add_stages: 3 }, &m).contains("lanes 4"));
    assert!(err(Dense { rows: 3, cols: 4, lanes: 1, mul_stages: 2, add_stages: 3 }, &m[..11]).contains("11 matrix entries"));
    assert!(err(Dense { rows: 3, cols: 4, lanes: 1, mul_stages: 2, add_stages: 0 }, &m).contains("add_stages 0"));
}
