//! Shipped binary64 operators (`generated/fp/fp64_*`): add, mul and div take
//! `s_axis_tdata[127:0] = {b, a}`, sqrt takes `s_axis_tdata[63:0] = a`; all return
//! `m_axis_tdata[63:0]`, one result per beat, in order, with back-pressure — the operators a
//! binary64 kernel's pipeline is built of, at the stage counts `Stages::balanced` gives them.

use num_bigint::BigUint;
use weft_hdl::export::{ExportError, ModuleSpec};
use weft_hdl::float::reference::native_f64;
use weft_hdl::float::{operator_netlist, vectors, FloatFormat, FloatOperator};
use weft_hdl::netlist::block::NetlistStream;
use weft_hdl::testbench::{check_stream_transform, Rng, TransformPorts};

use crate::shipped::Shipped;
use crate::Error;

type Fp64Binary = NetlistStream<128, 16, 64, 8>;
type Fp64Unary = NetlistStream<64, 8, 64, 8>;

const F64: FloatFormat = FloatFormat::BINARY64;

fn stages(op: FloatOperator) -> usize {
    op.max_stages(F64).div_ceil(2)
}

fn spec(op: FloatOperator) -> ModuleSpec {
    let input = if op.operands() == 1 { "s_axis_tdata[63:0] = a" } else { "s_axis_tdata[127:0] = {b, a}" };
    ModuleSpec {
        family: "fp",
        name: format!("fp64_{}", op.name()),
        summary: format!("IEEE-754 binary64 {} ({input}), round to nearest even, II=1", op.name()),
        parameters: vec![("format".into(), "binary64".into()), ("latency".into(), format!("{} cycles", stages(op))), ("deepest split".into(), format!("{} stages", op.max_stages(F64)))],
        hidden_ports: super::unframed_ports(),
    }
}

fn verilog(op: FloatOperator, spec: &ModuleSpec) -> Result<String, ExportError> {
    super::export_stream(spec, operator_netlist(op, F64, stages(op))?, 64 * op.operands(), 64)
}

/// Signed zeros, infinities, NaN, the smallest subnormal and normal, the largest finite value
/// and one, each against each.
fn hard_cases() -> Vec<(u64, u64)> {
    let special = [0u64, 1 << 63, 0x7FF0_0000_0000_0000, 0xFFF0_0000_0000_0000, 0x7FF8_0000_0000_0000, 1, 0x0010_0000_0000_0000, 0x7FEF_FFFF_FFFF_FFFF, 0x3FF0_0000_0000_0000, 0x800F_FFFF_FFFF_FFFF];
    special.iter().flat_map(|a| special.iter().map(move |b| (*a, *b))).collect()
}

/// Hard cases and random operands through the operator with random back-pressure, against
/// native `f64`.
fn testbench(op: FloatOperator) -> Result<String, Error> {
    let mut rng = Rng::new(0xF64);
    let mut pairs = hard_cases();
    pairs.extend((0..2000).map(|_| {
        let (a, b) = vectors::pair(&mut rng, F64);
        (a as u64, b as u64)
    }));
    let net = operator_netlist(op, F64, stages(op))?;
    let expected: Vec<(BigUint, bool)> = pairs.iter().map(|(a, b)| (BigUint::from(native_f64(op, *a, *b)), false)).collect();
    let run = if op.operands() == 1 {
        let inputs: Vec<(BigUint, bool)> = pairs.iter().map(|(a, _)| (BigUint::from(*a), false)).collect();
        let ports = TransformPorts { clk: |b: &mut Fp64Unary| &mut b.clk, rst: |b| &mut b.rst, input: |b| &mut b.s_axis, output: |b| &mut b.m_axis };
        check_stream_transform(Fp64Unary::new(net), &ports, &inputs, &expected, 80, 60, 3)?
    } else {
        let inputs: Vec<(BigUint, bool)> = pairs.iter().map(|(a, b)| ((BigUint::from(*b) << 64) | BigUint::from(*a), false)).collect();
        let ports = TransformPorts { clk: |b: &mut Fp64Binary| &mut b.clk, rst: |b| &mut b.rst, input: |b| &mut b.s_axis, output: |b| &mut b.m_axis };
        check_stream_transform(Fp64Binary::new(net), &ports, &inputs, &expected, 80, 60, 3)?
    };
    Ok(format!("{} operand pairs ({} hand-picked) match native f64 in {} cycles", pairs.len(), hard_cases().len(), run.cycles))
}

macro_rules! shipped_operator {
    ($op:expr) => {
        Shipped::new(spec($op), |spec| verilog($op, spec), || testbench($op))
    };
}

/// The shipped binary64 operators `fp64_add`, `fp64_mul`, `fp64_div` and `fp64_sqrt`, each
/// with its testbench against native `f64`.
pub fn shipped() -> Vec<Shipped> {
    vec![shipped_operator!(FloatOperator::Add), shipped_operator!(FloatOperator::Mul), shipped_operator!(FloatOperator::Div), shipped_operator!(FloatOperator::Sqrt)]
}
