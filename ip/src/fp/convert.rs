//! Shipped binary32 compare and int32 conversions (`generated/fp/`):
//! - `fp32_cmp`: `s_axis_tdata[63:0] = {b, a}` → `m_axis_tdata[3:0]` one-hot
//!   `{unordered, greater, equal, less}` for `a` against `b` (`+0 = −0`, NaN unordered);
//! - `fp32_from_i32`: `s_axis_tdata[31:0]` a two's-complement int32 → binary32, nearest even;
//! - `fp32_to_i32`: binary32 → int32 toward zero, saturating, NaN → 0 (C's cast where C defines
//!   it; Rust's `as` everywhere).

use crate::Error;
use num_bigint::BigUint;
use weft_hdl::export::{ExportError, ModuleSpec};
use weft_hdl::fixed::{FixedFormat, Rounding};
use weft_hdl::float::convert::{self, COMPARE_MAX_STAGES, FROM_FIXED_MAX_STAGES, TO_FIXED_MAX_STAGES};
use weft_hdl::float::{vectors, FloatFormat};
use weft_hdl::netlist::block::{feed_forward, NetlistStream};
use weft_hdl::netlist::{Netlist, Wire};
use weft_hdl::testbench::{check_stream_transform, Rng, TransformPorts};

use crate::shipped::Shipped;

/// `fp32_cmp` as a simulation block: 64-bit `s_axis_tdata` (`{b, a}`), 8-bit `m_axis_tdata`
/// (the one-hot result in bits 3:0).
pub type Fp32Compare = NetlistStream<64, 8, 8, 1>;
/// `fp32_from_i32` or `fp32_to_i32` as a simulation block: 32 bits in, 32 bits out.
pub type Fp32Convert = NetlistStream<32, 4, 32, 4>;

/// One shipped module: its datapath and its software model (native Rust semantics).
pub struct Conversion {
    /// Module name, e.g. `fp32_cmp`.
    pub name: &'static str,
    /// One-line description for the module's header.
    pub summary: &'static str,
    /// 32-bit operands per input beat: 1 or 2 (operand i at bits `32·i+31 : 32·i`).
    pub operands: usize,
    /// Shipped stage count: the latency in cycles.
    pub stages: usize,
    /// The deepest split: the most stages the datapath can be cut into.
    pub max_stages: usize,
    /// Builds the datapath into a netlist from the operand wires at a stage count; returns the
    /// result wire.
    pub build: fn(&mut Netlist, &[Wire], usize) -> Result<Wire, weft_hdl::Error>,
    /// The expected result bits for operand bit patterns `(a, b)` (`b` unused with one operand).
    pub model: fn(u32, u32) -> u32,
}

const F32: FloatFormat = FloatFormat::BINARY32;
const I32: FixedFormat = FixedFormat { signed: true, width: 32, frac: 0 };

/// The shipped modules: `fp32_cmp`, `fp32_from_i32` and `fp32_to_i32`, each at its deepest
/// split.
pub const CONVERSIONS: [Conversion; 3] = [
    Conversion {
        name: "fp32_cmp",
        summary: "binary32 compare ({b, a} -> one-hot {unordered, greater, equal, less}), II=1",
        operands: 2,
        stages: COMPARE_MAX_STAGES,
        max_stages: COMPARE_MAX_STAGES,
        build: |net, x, stages| convert::compare(net, F32, stages, x[0], x[1]),
        model: |a, b| {
            let flag = match f32::from_bits(a).partial_cmp(&f32::from_bits(b)) {
                None => convert::UNORDERED,
                Some(std::cmp::Ordering::Less) => convert::LESS,
                Some(std::cmp::Ordering::Equal) => convert::EQUAL,
                Some(std::cmp::Ordering::Greater) => convert::GREATER,
            };
            flag as u32
        },
    },
    Conversion {
        name: "fp32_from_i32",
        summary: "int32 to binary32, round to nearest even, II=1",
        operands: 1,
        stages: FROM_FIXED_MAX_STAGES,
        max_stages: FROM_FIXED_MAX_STAGES,
        build: |net, x, stages| convert::from_fixed(net, F32, I32, stages, x[0]),
        model: |a, _| (a as i32 as f32).to_bits(),
    },
    Conversion {
        name: "fp32_to_i32",
        summary: "binary32 to int32 toward zero, saturating, NaN to 0, II=1",
        operands: 1,
        stages: TO_FIXED_MAX_STAGES,
        max_stages: TO_FIXED_MAX_STAGES,
        build: |net, x, stages| convert::to_fixed(net, F32, I32, Rounding::Truncate, stages, x[0]),
        model: |a, _| f32::from_bits(a) as i32 as u32,
    },
];

/// `c` as a one-beat-in, one-beat-out stream netlist with `stages` pipeline stages.
pub fn netlist(c: &Conversion, stages: usize) -> Result<Netlist, Error> {
    let lanes: Vec<(usize, usize)> = (0..c.operands).map(|i| (32 * i, 32)).collect();
    let mut error = None;
    let net = feed_forward(&lanes, |net, inputs| match (c.build)(net, inputs, stages) {
        Ok(y) => vec![(y, 0)],
        Err(e) => {
            error = Some(e);
            vec![]
        }
    });
    error.map_or(Ok(net), |e| Err(e.into()))
}

fn spec(c: &Conversion, stages: usize) -> ModuleSpec {
    let hidden = super::unframed_ports();
    ModuleSpec { family: "fp", name: c.name.into(), summary: c.summary.into(), parameters: vec![("latency".into(), format!("{stages} cycles"))], hidden_ports: hidden }
}

/// Verilog at any stage count (what `weft bench numeric` sweeps).
pub fn verilog(c: &Conversion, stages: usize) -> Result<String, ExportError> {
    let spec = spec(c, stages);
    super::export_stream(&spec, netlist(c, stages)?, 32 * c.operands, 32)
}

/// Operands: class-biased floats, uniform bit patterns, and (for conversions) integers and
/// floats near the int32 range's ends and halfway points.
pub fn operands(rng: &mut Rng) -> (u32, u32) {
    match rng.below(4) {
        0 => {
            let (a, b) = vectors::pair(rng, F32);
            (a as u32, b as u32)
        }
        1 => (rng.next_u64() as u32, rng.next_u64() as u32),
        2 => {
            let edge = [i32::MIN, i32::MAX, 0, 1, -1, 1 << 24, (1 << 24) + 1][rng.below(7) as usize];
            let near = edge.wrapping_add(rng.below(5) as i32 - 2);
            (near as u32, ((near as f32) + 0.5).to_bits())
        }
        _ => {
            let x = (rng.next_u64() as i32 as f64) / f64::from(1u32 << rng.below(31) as u32);
            ((x as f32).to_bits(), (x as f32).to_bits())
        }
    }
}

fn testbench(c: &Conversion) -> Result<String, Error> {
    let mut rng = Rng::new(0xC0);
    let pairs: Vec<(u32, u32)> = (0..4000).map(|_| operands(&mut rng)).collect();
    let net = netlist(c, c.stages)?;
    let expected: Vec<(BigUint, bool)> = pairs.iter().map(|(a, b)| (BigUint::from((c.model)(*a, *b)), false)).collect();
    let run = if c.operands == 2 {
        let inputs: Vec<(BigUint, bool)> = pairs.iter().map(|(a, b)| (BigUint::from(((*b as u64) << 32) | *a as u64), false)).collect();
        let ports = TransformPorts { clk: |b: &mut Fp32Compare| &mut b.clk, rst: |b| &mut b.rst, input: |b| &mut b.s_axis, output: |b| &mut b.m_axis };
        check_stream_transform(Fp32Compare::new(net), &ports, &inputs, &expected, 80, 60, 4)?
    } else {
        let inputs: Vec<(BigUint, bool)> = pairs.iter().map(|(a, _)| (BigUint::from(*a), false)).collect();
        let ports = TransformPorts { clk: |b: &mut Fp32Convert| &mut b.clk, rst: |b| &mut b.rst, input: |b| &mut b.s_axis, output: |b| &mut b.m_axis };
        check_stream_transform(Fp32Convert::new(net), &ports, &inputs, &expected, 80, 60, 4)?
    };
    Ok(format!("{} operand sets match native Rust semantics in {} cycles", pairs.len(), run.cycles))
}

macro_rules! shipped_conversion {
    ($index:expr) => {
        Shipped::new(spec(&CONVERSIONS[$index], CONVERSIONS[$index].stages), |_| verilog(&CONVERSIONS[$index], CONVERSIONS[$index].stages), || testbench(&CONVERSIONS[$index]))
    };
}

/// The shipped compare and conversion modules, each with its testbench against native Rust.
pub fn shipped() -> Vec<Shipped> {
    vec![shipped_conversion!(0), shipped_conversion!(1), shipped_conversion!(2)]
}
