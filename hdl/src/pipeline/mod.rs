//! The pipeline builder: a kernel is a DAG of floating-point operations over named input lanes.
//! The same DAG evaluates in software (the golden model, native `f32` arithmetic in the order
//! written) and schedules into a netlist: each operation starts when its last operand is ready,
//! delay registers balance every other operand, and the whole pipeline sits behind one input and
//! one output AXI4-Stream with back-pressure ([`crate::netlist::block::feed_forward`]).

pub mod dsl;

use std::collections::BTreeMap;

use crate::float::{FloatFormat, FloatOperator};
use crate::netlist::block::feed_forward;
use crate::netlist::Netlist;

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
}

impl Kernel {
    pub fn new(name: &str, format: FloatFormat) -> Kernel {
        Kernel { name: name.into(), format, inputs: vec![], nodes: vec![], outputs: vec![] }
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
    /// The next output lane.
    pub fn output(&mut self, name: &str, value: Value) {
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
    pub fn evaluate(&self, inputs: &[u32]) -> Vec<u32> {
        assert_eq!(self.format, FloatFormat::BINARY32, "software evaluation is binary32");
        assert_eq!(inputs.len(), self.inputs.len(), "{}: lane count", self.name);
        let mut values: Vec<f32> = Vec::with_capacity(self.nodes.len());
        for node in &self.nodes {
            let v = match node {
                Node::Input(lane) => f32::from_bits(inputs[*lane]),
                Node::Const(bits) => f32::from_bits(*bits),
                Node::Neg(a) => -values[a.0],
                Node::Op(op, args) => {
                    let y = args.get(1).map_or(0.0, |b| values[b.0]);
                    op.apply_f32(values[args[0].0], y)
                }
            };
            values.push(v);
        }
        self.outputs.iter().map(|(_, v)| values[v.0].to_bits()).collect()
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
        let mut error = None;
        let net = feed_forward(&lanes, |net, inputs| {
            let mut wires = Vec::with_capacity(self.nodes.len());
            for node in &self.nodes {
                let wire = match node {
                    Node::Input(lane) => inputs[*lane],
                    Node::Const(bits) => net.constant(*bits as u128, w),
                    Node::Neg(a) => {
                        let a = wires[a.0];
                        net.start_after(&[a]);
                        let sign = net.constant(1 << (w - 1), w);
                        net.xor(a, sign)
                    }
                    Node::Op(op, args) => {
                        *operators.entry(op.name()).or_default() += 1;
                        let operands: Vec<_> = args.iter().map(|a| wires[a.0]).collect();
                        match op.build(net, self.format, stages.of(*op), &operands) {
                            Ok(wire) => wire,
                            Err(e) => {
                                error.get_or_insert(e);
                                operands[0]
                            }
                        }
                    }
                };
                wires.push(wire);
            }
            self.outputs.iter().enumerate().map(|(j, (_, v))| (wires[v.0], j * w)).collect()
        });
        if let Some(e) = error {
            return Err(format!("kernel `{}`: {e}", self.name));
        }
        let schedule = Schedule { latency: net.latency(), operators, register_bits: net.register_bits() };
        Ok((net, schedule))
    }
}
