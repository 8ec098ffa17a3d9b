//! Shipped binary32 operators (`generated/fp/`): `fp32_add`, `fp32_mul`, `fp32_mul_lut_shift`,
//! `fp32_div` take `s_axis_tdata[63:0] = {b, a}`, `fp32_sqrt` takes `s_axis_tdata[31:0] = a`;
//! all return `m_axis_tdata[31:0]`, one result per beat, in order, with back-pressure.

use crate::Error;
use num_bigint::BigUint;
use weft_hdl::export::{export_netlist, ExportError, ModuleSpec};
use weft_hdl::float::reference::native_f32;
use weft_hdl::float::{operator_netlist_with, vectors, FloatFormat, FloatOperator, Multiplier};
use weft_hdl::netlist::block::NetlistStream;
use weft_hdl::testbench::{check_stream_transform, Rng, TransformPorts};

use crate::shipped::Shipped;

pub mod binary64;
pub mod convert;

/// A two-operand binary32 operator as a simulation block: 64-bit `s_axis_tdata` (`{b, a}`),
/// 32-bit `m_axis_tdata`.
pub type Fp32Binary = NetlistStream<64, 8, 32, 4>;
/// A one-operand binary32 operator as a simulation block: 32-bit `s_axis_tdata` and
/// `m_axis_tdata`.
pub type Fp32Unary = NetlistStream<32, 4, 32, 4>;

/// The stage counts shipped: add and mul at their deepest split (7 and 6 stages), div and sqrt
/// at FloPoCo's latency + 2 (17 of 31 and 18 of 30 stages, 4 and 3 LUT levels between
/// registers; figures in the README from `weft bench numeric --compare`).
pub const SHIPPED: [(FloatOperator, usize); 4] = [(FloatOperator::Add, 7), (FloatOperator::Mul, 6), (FloatOperator::Div, 17), (FloatOperator::Sqrt, 18)];

/// The shipped module's name for `op`: `fp32_add`, `fp32_mul`, `fp32_div` or `fp32_sqrt`.
pub fn module_name(op: FloatOperator) -> String {
    module_name_with(op, Multiplier::DspShift)
}

/// [`module_name`] with `multiplier` the implementation of `Mul`: `fp32_mul_lut_shift` for
/// [`Multiplier::LutShift`].
pub fn module_name_with(op: FloatOperator, multiplier: Multiplier) -> String {
    format!("fp32_{}", op.name_with(multiplier))
}

/// The ports a one-beat-in, one-beat-out stream pipeline has and its public module does not:
/// no beat ends a packet.
pub fn unframed_ports() -> Vec<String> {
    vec!["s_axis_tlast".into(), "m_axis_tlast".into()]
}

/// `net`'s Verilog as `spec`, with `tdata` ports of `input` and `output` bits.
pub fn export_stream(spec: &ModuleSpec, mut net: weft_hdl::netlist::Netlist, input: usize, output: usize) -> Result<String, ExportError> {
    net.widen_port("s_axis_tdata", input)?;
    net.widen_port("m_axis_tdata", output)?;
    export_netlist(spec, &net)
}

fn spec(op: FloatOperator, stages: usize, multiplier: Multiplier) -> ModuleSpec {
    let hidden = unframed_ports();
    let input = if op.operands() == 1 { "s_axis_tdata[31:0] = a" } else { "s_axis_tdata[63:0] = {b, a}" };
    let shift = match (op, multiplier) {
        (FloatOperator::Mul, Multiplier::LutShift) => ", subnormal shifts in LUTs (2 DSP48E1)",
        _ => "",
    };
    ModuleSpec {
        family: "fp",
        name: module_name_with(op, multiplier),
        summary: format!("IEEE-754 binary32 {} ({input}), round to nearest even, II=1{shift}", op.name()),
        parameters: vec![("format".into(), "binary32".into()), ("latency".into(), format!("{stages} cycles")), ("deepest split".into(), format!("{} stages", op.max_stages(FloatFormat::BINARY32)))],
        hidden_ports: hidden,
    }
}

/// An operator's Verilog at any stage count (what `weft bench numeric` sweeps), `multiplier`
/// the implementation of `Mul`.
pub fn operator_verilog(op: FloatOperator, stages: usize, multiplier: Multiplier) -> Result<String, ExportError> {
    verilog(op, stages, multiplier, &spec(op, stages, multiplier))
}

fn verilog(op: FloatOperator, stages: usize, multiplier: Multiplier, spec: &ModuleSpec) -> Result<String, ExportError> {
    let net = operator_netlist_with(op, FloatFormat::BINARY32, stages, multiplier)?;
    export_stream(spec, net, 32 * op.operands(), 32)
}

/// Hand-picked hard cases plus random operands, through the rust-hdl block with random
/// back-pressure, against native `f32`.
fn testbench(op: FloatOperator, stages: usize, multiplier: Multiplier) -> Result<String, Error> {
    let mut rng = Rng::new(0xF32 + stages as u64);
    let mut pairs: Vec<(u32, u32)> = vectors::binary32_hard_cases();
    pairs.extend((0..3000).map(|_| {
        let (a, b) = vectors::pair(&mut rng, FloatFormat::BINARY32);
        (a as u32, b as u32)
    }));
    let net = operator_netlist_with(op, FloatFormat::BINARY32, stages, multiplier)?;
    let expected: Vec<(BigUint, bool)> = pairs.iter().map(|(a, b)| (BigUint::from(native_f32(op, *a, *b)), false)).collect();
    let run = if op.operands() == 1 {
        let inputs: Vec<(BigUint, bool)> = pairs.iter().map(|(a, _)| (BigUint::from(*a), false)).collect();
        let ports = TransformPorts { clk: |b: &mut Fp32Unary| &mut b.clk, rst: |b| &mut b.rst, input: |b| &mut b.s_axis, output: |b| &mut b.m_axis };
        check_stream_transform(Fp32Unary::new(net), &ports, &inputs, &expected, 80, 60, 3)?
    } else {
        let inputs: Vec<(BigUint, bool)> = pairs.iter().map(|(a, b)| (BigUint::from(((*b as u64) << 32) | *a as u64), false)).collect();
        let ports = TransformPorts { clk: |b: &mut Fp32Binary| &mut b.clk, rst: |b| &mut b.rst, input: |b| &mut b.s_axis, output: |b| &mut b.m_axis };
        check_stream_transform(Fp32Binary::new(net), &ports, &inputs, &expected, 80, 60, 3)?
    };
    Ok(format!("{} operand sets ({} hand-picked) match native f32 in {} cycles", pairs.len(), vectors::binary32_hard_cases().len(), run.cycles))
}

macro_rules! shipped_operator {
    ($index:expr) => {
        shipped_operator!($index, Multiplier::DspShift)
    };
    ($index:expr, $multiplier:expr) => {{
        let (op, stages) = SHIPPED[$index];
        Shipped::new(spec(op, stages, $multiplier), |spec| verilog(SHIPPED[$index].0, SHIPPED[$index].1, $multiplier, spec), || testbench(SHIPPED[$index].0, SHIPPED[$index].1, $multiplier))
    }};
}

/// Every shipped floating-point module: the binary32 operators at [`SHIPPED`]'s stage counts,
/// the multiplier with its shifts in LUTs at `fp32_mul`'s depth, the compare and int32
/// conversions, and the binary64 operators.
pub fn shipped() -> Vec<Shipped> {
    let mut all = vec![shipped_operator!(0), shipped_operator!(1), shipped_operator!(1, Multiplier::LutShift), shipped_operator!(2), shipped_operator!(3)];
    all.extend(convert::shipped());
    all.extend(binary64::shipped());
    all
}
