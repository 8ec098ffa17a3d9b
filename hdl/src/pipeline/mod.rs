//! The pipeline builder: a kernel is a DAG of floating-point operations over named input lanes.
//! The same DAG evaluates in software (the golden model, native `f32` arithmetic in the order
//! written) and schedules into a netlist: each operation starts when its last operand is ready,
//! delay registers balance every other operand, and the whole pipeline sits behind one input and
//! one output AXI4-Stream with back-pressure ([`crate::netlist::block::feed_forward`]).
//! A kernel whose outputs are vector sums emits one beat per vector instead ([`vector_sum`]).

pub mod dsl;
pub mod vector_sum;

use std::collections::BTreeMap;

use crate::float::{reference, FloatFormat, FloatOperator};
use crate::netlist::block::feed_forward;
use crate::netlist::{Design, Netlist, Sig, Wire};

/// A value in a kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Value(usize);

#[derive(Clone, Debug, PartialEq)]
pub enum Node {
    Input(usize),
    /// A constant, as the format's bit pattern.
    Const(u32),
    Op(FloatOperator, Vec<Value>),
    /// Sign flip (free in hardware).
    Neg(Value),
}

/// Stage count per operator, used for every instance in a kernel.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stages(pub BTreeMap<&'static str, usize>);

impl Stages {
    /// The shipped depths: about half the deepest split of each operator.
    pub fn balanced(format: FloatFormat) -> Stages {
        Stages(FloatOperator::ALL.iter().map(|op| (op.name(), op.max_stages(format).div_ceil(2))).collect())
    }
    pub fn of(&self, op: FloatOperator) -> usize {
        self.0[op.name()]
    }
}

/// What scheduling produced.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Schedule {
    /// Cycles from an input beat to its output beat.
    pub latency: usize,
    /// Instances per operator.
    pub operators: BTreeMap<&'static str, usize>,
    /// Bits held in pipeline registers (operator stages and delay balancing).
    pub register_bits: usize,
}

#[derive(Clone, Debug)]
pub struct Kernel {
    pub name: String,
    pub format: FloatFormat,
    pub inputs: Vec<String>,
    pub nodes: Vec<Node>,
    pub outputs: Vec<(String, Value)>,
    /// The outputs are sums over each vector (`tlast` ends it) of their per-beat values: one
    /// output beat per vector instead of one per input beat.
    pub per_vector: bool,
}

impl Kernel {
    pub fn new(name: &str, format: FloatFormat) -> Kernel {
        Kernel { name: name.into(), format, inputs: vec![], nodes: vec![], outputs: vec![], per_vector: false }
    }

    fn push(&mut self, node: Node) -> Value {
        self.nodes.push(node);
        Value(self.nodes.len() - 1)
    }

    /// The next input lane.
    pub fn input(&mut self, name: &str) -> Value {
        self.inputs.push(name.into());
        let lane = self.inputs.len() - 1;
        self.push(Node::Input(lane))
    }
    pub fn constant(&mut self, bits: u32) -> Value {
        self.push(Node::Const(bits))
    }
    pub fn op(&mut self, op: FloatOperator, operands: &[Value]) -> Value {
        assert_eq!(operands.len(), op.operands(), "{} takes {} operands", op.name(), op.operands());
        self.push(Node::Op(op, operands.to_vec()))
    }
    pub fn neg(&mut self, a: Value) -> Value {
        self.push(Node::Neg(a))
    }
    /// The next output lane, one beat per input beat.
    pub fn output(&mut self, name: &str, value: Value) {
        assert!(!self.per_vector || self.outputs.is_empty(), "{}: per-beat and per-vector outputs mixed", self.name);
        self.outputs.push((name.into(), value));
    }
    /// The next output lane: the sum of `value` over all beats of each vector.
    pub fn output_vector_sum(&mut self, name: &str, value: Value) {
        assert!(self.per_vector || self.outputs.is_empty(), "{}: per-beat and per-vector outputs mixed", self.name);
        self.per_vector = true;
        self.outputs.push((name.into(), value));
    }

    pub fn input_bits(&self) -> usize {
        self.inputs.len() * self.format.width()
    }
    pub fn output_bits(&self) -> usize {
        self.outputs.len() * self.format.width()
    }

    /// The golden model: evaluates the DAG on one set of input lanes (bit patterns) with native
    /// binary32 arithmetic, in the order written (no fused operations). binary32 kernels only.
    /// Like the hardware operators, every operation that yields a NaN yields the canonical quiet
    /// NaN `0x7FC00000` (the host's NaN bits are not kept); negation flips the sign bit of
    /// whatever it gets, NaN included, as the hardware does.
    /// For a per-vector kernel these are the per-beat values its outputs sum.
    pub fn evaluate(&self, inputs: &[u32]) -> Vec<u32> {
        assert_eq!(self.format, FloatFormat::BINARY32, "software evaluation is binary32");
        assert_eq!(inputs.len(), self.inputs.len(), "{}: lane count", self.name);
        // Bit patterns throughout, so no NaN payload depends on how the host moves floats.
        let mut values: Vec<u32> = Vec::with_capacity(self.nodes.len());
        for node in &self.nodes {
            let v = match node {
                Node::Input(lane) => inputs[*lane],
                Node::Const(bits) => *bits,
                Node::Neg(a) => values[a.0] ^ 0x8000_0000,
                Node::Op(op, args) => {
                    let y = args.get(1).map_or(0, |b| values[b.0]);
                    reference::native_f32(*op, values[args[0].0], y)
                }
            };
            values.push(v);
        }
        self.outputs.iter().map(|(_, v)| values[v.0]).collect()
    }

    /// The golden model of a per-vector kernel on one vector: for each output, the exact sum of
    /// the per-beat values (in binary64, exact for these magnitudes up to rounding far below
    /// binary32's) and the error bound any summation order meets, (n−1)·u·Σ|vᵢ| with u the
    /// binary32 unit roundoff 2⁻²⁴ and n the vector's beat count.
    pub fn evaluate_vector(&self, beats: &[Vec<u32>]) -> Vec<(f64, f64)> {
        let terms: Vec<Vec<u32>> = beats.iter().map(|b| self.evaluate(b)).collect();
        (0..self.outputs.len())
            .map(|j| {
                let values = terms.iter().map(|t| f32::from_bits(t[j]) as f64);
                let exact: f64 = values.clone().sum();
                let magnitude: f64 = values.map(f64::abs).sum();
                (exact, (beats.len() as f64 - 1.0) * 2f64.powi(-24) * magnitude)
            })
            .collect()
    }

    /// Schedules the kernel into a stream netlist: lane i of `s_axis_tdata` is input i, lane j
    /// of `m_axis_tdata` is output j.
    pub fn netlist(&self, stages: &Stages) -> Result<(Netlist, Schedule), String> {
        if self.inputs.is_empty() || self.outputs.is_empty() {
            return Err(format!("kernel `{}` needs at least one input and one output", self.name));
        }
        let w = self.format.width();
        let lanes: Vec<(usize, usize)> = (0..self.inputs.len()).map(|i| (i * w, w)).collect();
        let mut operators: BTreeMap<&'static str, usize> = BTreeMap::new();
        let net = if self.per_vector {
            let add_stages = stages.of(FloatOperator::Add);
            let net = vector_sum::netlist(self.format, add_stages, &lanes, |net, inputs| self.datapath(net, inputs, stages, &mut operators))
                .map_err(|e| format!("kernel `{}`: {e}", self.name))?;
            // The accumulating adder and the window tree of every output.
            *operators.entry(FloatOperator::Add.name()).or_default() += self.outputs.len() * add_stages;
            net
        } else {
            let mut error = None;
            let net = feed_forward(&lanes, |net, inputs| match self.datapath(net, inputs, stages, &mut operators) {
                Ok(wires) => wires.into_iter().enumerate().map(|(j, wire)| (wire, j * w)).collect(),
                Err(e) => {
                    error = Some(e);
                    vec![(inputs[0], 0)]
                }
            });
            if let Some(e) = error {
                return Err(format!("kernel `{}`: {e}", self.name));
            }
            net
        };
        let schedule = Schedule { latency: net.latency(), operators, register_bits: net.register_bits() };
        Ok((net, schedule))
    }

    /// Lowers the DAG onto `net` over the input lane wires; returns the output wires. The
    /// netlist moves into a design for the lowering and back, its wires unchanged.
    fn datapath(&self, net: &mut Netlist, inputs: &[Wire], stages: &Stages, operators: &mut BTreeMap<&'static str, usize>) -> Result<Vec<Wire>, String> {
        let d = Design::new();
        *d.net() = std::mem::take(net);
        let lanes: Vec<Sig> = inputs.iter().map(|w| d.sig(*w)).collect();
        let outputs = self.lower(&d, &lanes, stages, operators).map(|values| values.iter().map(|v| v.wire).collect());
        *net = d.finish();
        outputs
    }

    /// The DAG in `d` over the input lanes: each operation starts when its last operand is ready
    /// (the operators place themselves after their operands). Returns the output values, named
    /// after their lanes (`<name>_term` for the per-beat terms of a vector sum).
    fn lower<'d>(&self, d: &'d Design, lanes: &[Sig<'d>], stages: &Stages, operators: &mut BTreeMap<&'static str, usize>) -> Result<Vec<Sig<'d>>, String> {
        let w = self.format.width();
        let mut values: Vec<Sig<'d>> = Vec::with_capacity(self.nodes.len());
        for node in &self.nodes {
            let value = match node {
                Node::Input(lane) => lanes[*lane],
                Node::Const(bits) => d.lit(*bits as u128, w),
                Node::Neg(a) => {
                    let a = values[a.0];
                    d.net().start_after(&[a.wire]);
                    // Flips the sign bit.
                    a ^ (1u128 << (w - 1))
                }
                Node::Op(op, args) => {
                    *operators.entry(op.name()).or_default() += 1;
                    let operands: Vec<Wire> = args.iter().map(|a| values[a.0].wire).collect();
                    let result = op.build(&mut d.net(), self.format, stages.of(*op), &operands)?;
                    d.sig(result)
                }
            };
            values.push(value);
        }
        let suffix = if self.per_vector { "_term" } else { "" };
        Ok(self.outputs.iter().map(|(name, v)| values[v.0].named(&format!("{name}{suffix}"))).collect())
    }
}
