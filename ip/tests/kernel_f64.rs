//! A binary64 kernel written in the kernel language (Airfoil's `adt_calc`, with add, sub, mul,
//! div, sqrt and abs) becomes a pipeline whose every result, in the built-in simulator under
//! random back-pressure, equals the Airfoil solver's `adt_calc` in native `f64` — and so does the
//! kernel's software model.

use num_bigint::BigUint;
use weft_hdl::float::FloatFormat;
use weft_hdl::netlist::eval::Evaluator;
use weft_hdl::pipeline::{dsl, Stages};
use weft_hdl::testbench::Rng;
use weft_ip::airfoil::solver::{adt_calc, Constants};

const SOURCE: &str = include_str!("../../examples/kernels/airfoil_adt_calc_f64.wk");

fn uniform(rng: &mut Rng, lo: f64, hi: f64) -> f64 {
    lo + (hi - lo) * (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64
}

/// A quadrilateral cell (corners counter-clockwise around a random centre) and a state whose
/// pressure is positive.
fn cell(rng: &mut Rng) -> ([[f64; 2]; 4], [f64; 4]) {
    let (cx, cy, h) = (uniform(rng, -2.0, 2.0), uniform(rng, -2.0, 2.0), uniform(rng, 1e-3, 0.1));
    let x = [[-1.0, -1.0], [1.0, -1.0], [1.0, 1.0], [-1.0, 1.0]].map(|[a, b]| [cx + h * (a + uniform(rng, -0.2, 0.2)), cy + h * (b + uniform(rng, -0.2, 0.2))]);
    let q = [uniform(rng, 0.8, 1.2), uniform(rng, -0.6, 0.6), uniform(rng, -0.3, 0.3), uniform(rng, 2.2, 2.8)];
    (x, q)
}

#[test]
fn binary64_adt_calc_pipeline_matches_native_f64() {
    let kernel = dsl::parse(SOURCE).unwrap();
    assert_eq!(kernel.format, FloatFormat::BINARY64);
    let (net, schedule) = kernel.netlist(&Stages::balanced(FloatFormat::BINARY64)).unwrap();
    let c = Constants::<f64>::default();
    let mut rng = Rng::new(64);
    let cells: Vec<_> = (0..150).map(|_| cell(&mut rng)).collect();
    let lanes: Vec<Vec<u64>> = cells.iter().map(|(x, q)| x.iter().flatten().chain(q).chain(&[c.gam, c.gm1, c.cfl]).map(|v| v.to_bits()).collect()).collect();
    let want: Vec<u64> = cells.iter().map(|(x, q)| adt_calc(*x, q, &c).to_bits()).collect();
    for (l, w) in lanes.iter().zip(&want) {
        assert_eq!(kernel.evaluate_bits(l), vec![*w], "software model against native f64");
    }

    let mut ev = Evaluator::new(net);
    ev.reset(2);
    let data = ev.input("s_axis_tdata").unwrap();
    let (mut next, mut offering, mut got, mut cycles) = (0, false, vec![], 0u64);
    while got.len() < want.len() {
        assert!(cycles < 20_000, "stuck after {} results", got.len());
        offering |= next < lanes.len() && rng.chance(60);
        let ready = rng.chance(60);
        if let Some(l) = lanes.get(next) {
            ev.set_big(data, &l.iter().rev().fold(BigUint::default(), |acc, x| (acc << 64) | BigUint::from(*x)));
        }
        ev.set_input("s_axis_tvalid", offering as u128);
        ev.set_input("s_axis_tlast", 0);
        ev.set_input("m_axis_tready", ready as u128);
        ev.settle();
        if ready && ev.get_output("m_axis_tvalid") == 1 {
            got.push(ev.get_output_bits("m_axis_tdata", 0, 64) as u64);
        }
        if offering && ev.get_output("s_axis_tready") == 1 {
            next += 1;
            offering = false;
        }
        ev.clock(false);
        cycles += 1;
    }
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        assert_eq!(g, w, "cell {i}: pipeline {} against native {}", f64::from_bits(*g), f64::from_bits(*w));
    }
    println!("{} cells through a {}-cycle binary64 pipeline in {cycles} cycles", want.len(), schedule.latency);
}
