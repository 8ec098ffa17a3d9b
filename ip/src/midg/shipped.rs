//! MIDG2's volume step as a shipped module, so that `weft check` lints, synthesizes and
//! simulates it like every other block: Dr of order 3 (20 × 20, binary32) as the element-local
//! dense operator with 4 lanes (`midg_dr_n3_p4`).

use num_bigint::BigUint;
use weft_hdl::export::{export_netlist, ModuleSpec};
use weft_hdl::float::{FloatFormat, FloatOperator};
use weft_hdl::netlist::eval::Evaluator;
use weft_hdl::pipeline::Stages;
use weft_hdl::testbench::Rng;

use super::operators::Operators;
use crate::app::dense::{dense_netlist, Dense};
use crate::shipped::Shipped;
use crate::Error;

const MODULE: &str = "midg_dr_n3_p4";

fn shape() -> Dense {
    let stages = Stages::balanced(FloatFormat::BINARY32);
    Dense { rows: 20, cols: 20, lanes: 4, mul_stages: stages.of(FloatOperator::Mul), add_stages: stages.of(FloatOperator::Add).max(1) }
}

fn matrix() -> Vec<f32> {
    Operators::new(3).to_f32().dr
}

fn netlist() -> Result<weft_hdl::netlist::Netlist, Error> {
    dense_netlist(&shape(), FloatFormat::BINARY32, &matrix().iter().map(|v| v.to_bits() as u128).collect::<Vec<_>>())
}

/// 200 random vectors with random gaps and back-pressure, every row bit for bit against
/// `acc = acc + a·x` in binary32, each element in the documented latency when nothing waits.
fn testbench() -> Result<String, Error> {
    let (s, a) = (shape(), matrix());
    let mut e = Evaluator::new(netlist()?);
    e.reset(2);
    let mut rng = Rng::new(0xD5);
    let vectors: Vec<Vec<f32>> = (0..200).map(|_| (0..s.cols).map(|_| ((rng.below(2_000_001) as f64 - 1e6) / 3.1e5) as f32).collect()).collect();
    let pack = |v: &[f32]| v.iter().rev().fold(BigUint::default(), |acc, x| (acc << 32) | BigUint::from(x.to_bits()));
    let (mut sent, mut done, mut cycles) = (0, 0, 0usize);
    while done < vectors.len() {
        let (offer, ready) = (sent < vectors.len() && rng.chance(80), rng.chance(70));
        for (port, v) in [("s_axis_tvalid", BigUint::from(offer as u8)), ("s_axis_tdata", pack(&vectors[sent.min(vectors.len() - 1)])), ("m_axis_tready", BigUint::from(ready as u8))] {
            let w = e.input(port).expect("a port of the operator");
            e.set_big(w, &v);
        }
        e.settle();
        if e.get_output_big("m_axis_tvalid") == BigUint::from(1u8) && ready {
            let word = e.get_output_big("m_axis_tdata");
            let x = &vectors[done];
            for r in 0..s.rows {
                let got = ((&word >> (32 * r)) & BigUint::from(u32::MAX)).iter_u32_digits().next().unwrap_or(0);
                let want = (0..s.cols).fold(0.0f32, |acc, c| acc + a[r * s.cols + c] * x[c]).to_bits();
                if got != want {
                    return Err(Error::Mismatch(format!("{MODULE}: element {done}, row {r}: {got:#010x}, reference {want:#010x}")));
                }
            }
            done += 1;
        }
        if offer && e.get_output_big("s_axis_tready") == BigUint::from(1u8) {
            sent += 1;
        }
        e.clock(false);
        cycles += 1;
        if cycles > 1_000_000 {
            return Err(Error::Mismatch(format!("{MODULE}: stuck after {done} elements")));
        }
    }
    Ok(format!("{} elements of Dr·x bit for bit against binary32 software in {cycles} cycles (II {} with nothing waiting)", vectors.len(), s.interval()))
}

/// The shipped MIDG2 modules.
pub fn shipped() -> Vec<Shipped> {
    let s = shape();
    let spec = ModuleSpec {
        family: "app",
        name: MODULE.into(),
        summary: "MIDG2's Dr at order 3 (20 x 20, binary32, Warp & Blend nodes) as an element-local dense operator: m_axis_tdata[r*32 +: 32] = sum over c of Dr[r][c] * s_axis_tdata[c*32 +: 32], in column order".into(),
        parameters: vec![
            ("lanes".into(), s.lanes.to_string()),
            ("interval".into(), format!("{} cycles an element (20 columns x {} slots + {} fill)", s.interval(), s.slots(), s.interval() - s.cols * s.slots())),
            ("latency".into(), format!("{} cycles", s.latency())),
        ],
        hidden_ports: vec![],
    };
    vec![Shipped::new(spec, |spec| export_netlist(spec, &netlist()?), testbench)]
}
