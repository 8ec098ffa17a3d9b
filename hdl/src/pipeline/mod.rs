//! The pipeline builder: a kernel is a DAG of operations over named input lanes — floating
//! point, fixed point ([`types`]), comparisons and `select`, conversions, and stream offsets
//! (the value of a lane or binding some beats earlier or later, [`offsets`]).
//! The same DAG evaluates in software (the golden model, [`model`]: native `f32` arithmetic in
//! the order written, the fixed-point reference for fixed point) and schedules into a netlist:
//! each operation starts when its last operand is ready, delay registers balance
//! every other operand, and the whole pipeline sits behind one input and one output
//! AXI4-Stream with back-pressure ([`crate::netlist::block::feed_forward`], or [`offsets`] for
//! a kernel with stream offsets). A kernel whose outputs are vector sums emits one beat per
//! vector instead ([`vector_sum`]).
//!
//! Lanes: lane i of `s_axis_tdata` is the slot `[i·w +: w]`, `w` the width of the kernel's
//! float format; a fixed-point lane narrower than its slot takes the slot's low bits, and a
//! fixed-point or boolean output is sign- (signed) or zero-extended to fill its slot.

use crate::Error;
mod beats;
pub mod dsl;
mod lower;
pub mod model;
pub mod offsets;
pub mod recurrence;
pub mod types;
pub mod vector_sum;

use std::collections::BTreeMap;

use crate::fixed::FixedOp;
use crate::float::{FloatFormat, FloatOperator, Multiplier};
use crate::netlist::block::feed_forward;
use crate::netlist::Netlist;
pub use types::{Cmp, Type};

/// A value in a kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Value(usize);

/// An operation of the DAG; its result type is in [`Kernel::types`].
#[derive(Clone, Debug, PartialEq)]
pub enum Node {
    /// Input lane `i`.
    Input(usize),
    /// A constant, as its type's bit pattern.
    Const(u64),
    /// A floating-point operation.
    Op(FloatOperator, Vec<Value>),
    /// Sign flip (free in hardware) for floats; saturating `0 - x` for fixed point.
    Neg(Value),
    /// A fixed-point operation; operands and result share one format.
    Fixed(FixedOp, Value, Value),
    /// A comparison (a [`Type::Bool`]); floats compare as IEEE 754 (NaN unordered).
    Compare(Cmp, Value, Value),
    /// `select(c, a, b)`: `a` when `c` holds, else `b`.
    Select(Value, Value, Value),
    /// Minimum and maximum. Floats: a NaN operand gives the canonical quiet NaN; −0 < +0.
    Min(Value, Value),
    /// Maximum; the same rules as [`Node::Min`].
    Max(Value, Value),
    /// Absolute value: clears a float's sign bit (NaN included); saturates fixed point.
    Abs(Value),
    /// Conversion to this node's type.
    Convert(Value),
    /// The value `k` beats later (`k > 0`) or earlier in the same vector; zero outside it.
    Offset(Value, i64),
    /// A recurrence: the value of a node defined later (`None` until closed) `k` beats
    /// earlier, zero before the vector's first beat ([`recurrence`]).
    Prev(Option<Value>, i64),
}

/// How a kernel's operators are built, the same for every instance: the stage count per
/// operator and the float multipliers' implementation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stages {
    /// Stage count per operator name.
    pub depth: BTreeMap<&'static str, usize>,
    /// How every float multiplier shifts for subnormals ([`Multiplier::LutShift`] saves DSPs).
    pub multiplier: Multiplier,
}

impl Stages {
    /// The shipped depths: about half the deepest split of each operator; the default
    /// multiplier.
    pub fn balanced(format: FloatFormat) -> Stages {
        Stages { depth: FloatOperator::ALL.iter().map(|op| (op.name(), op.max_stages(format).div_ceil(2))).collect(), multiplier: Multiplier::default() }
    }
    /// These stages with every float multiplier built as `multiplier`.
    pub fn with_multiplier(self, multiplier: Multiplier) -> Stages {
        Stages { multiplier, ..self }
    }
    /// The stage count of float operator `op`; panics when it is not set.
    pub fn of(&self, op: FloatOperator) -> usize {
        self.depth[op.name()]
    }
    /// The stage count of a non-float operator (`compare`, `fixed`, `to_fixed`, `from_fixed`),
    /// or `default` when not set.
    pub fn get(&self, name: &str, default: usize) -> usize {
        self.depth.get(name).copied().unwrap_or(default)
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

/// A streaming kernel: input lanes, a DAG of operations, output lanes.
///
/// ```
/// use weft_hdl::float::{FloatFormat, FloatOperator};
/// use weft_hdl::pipeline::{Kernel, Stages};
///
/// // y = a·b + c in binary32: three input lanes, one output lane
/// let mut k = Kernel::new("mul_add", FloatFormat::BINARY32);
/// let (a, b, c) = (k.input("a"), k.input("b"), k.input("c"));
/// let ab = k.op(FloatOperator::Mul, &[a, b]);
/// let y = k.op(FloatOperator::Add, &[ab, c]);
/// k.output("y", y);
/// let bits = |x: f32| x.to_bits();
/// assert_eq!(k.evaluate(&[bits(2.0), bits(3.0), bits(1.0)]), [bits(7.0)]);
/// assert_eq!((k.input_bits(), k.output_bits()), (96, 32));
///
/// let (net, schedule) = k.netlist(&Stages::balanced(FloatFormat::BINARY32)).unwrap();
/// assert_eq!(schedule.latency, net.latency());
/// ```
#[derive(Clone, Debug)]
pub struct Kernel {
    /// The kernel's name, used in messages and as the name of its exported module.
    pub name: String,
    /// The float format of its float values; its width is every lane's slot width.
    pub format: FloatFormat,
    /// Input lane names, lane 0 first.
    pub inputs: Vec<String>,
    /// The operations in creation order; a [`Value`] indexes them.
    pub nodes: Vec<Node>,
    /// The type of each node's value.
    pub types: Vec<Type>,
    /// Names of values (the DSL's bindings), for readable Verilog of offset kernels.
    pub names: BTreeMap<Value, String>,
    /// Output lanes (name and value), lane 0 first.
    pub outputs: Vec<(String, Value)>,
    /// The outputs are sums over each vector (`tlast` ends it) of their per-beat values: one
    /// output beat per vector instead of one per input beat.
    pub per_vector: bool,
}

impl Kernel {
    /// An empty kernel computing in `format`.
    pub fn new(name: &str, format: FloatFormat) -> Kernel {
        Kernel { name: name.into(), format, inputs: vec![], nodes: vec![], types: vec![], names: BTreeMap::new(), outputs: vec![], per_vector: false }
    }

    fn push(&mut self, node: Node, ty: Type) -> Value {
        self.nodes.push(node);
        self.types.push(ty);
        Value(self.nodes.len() - 1)
    }

    /// The type of `v`.
    pub fn ty(&self, v: Value) -> Type {
        self.types[v.0]
    }

    /// The next input lane, of the kernel's float format.
    pub fn input(&mut self, name: &str) -> Value {
        self.input_typed(name, Type::Float(self.format))
    }
    /// The next input lane, of type `ty`.
    pub fn input_typed(&mut self, name: &str, ty: Type) -> Value {
        self.inputs.push(name.into());
        let lane = self.inputs.len() - 1;
        self.push(Node::Input(lane), ty)
    }
    /// A constant of the kernel's float format.
    pub fn constant(&mut self, bits: u64) -> Value {
        self.constant_typed(bits, Type::Float(self.format))
    }
    /// A constant of type `ty`, given as its bit pattern.
    pub fn constant_typed(&mut self, bits: u64, ty: Type) -> Value {
        self.push(Node::Const(bits), ty)
    }
    /// A float operation on values of one float format; panics on the wrong number of operands
    /// or a non-float operand.
    pub fn op(&mut self, op: FloatOperator, operands: &[Value]) -> Value {
        assert_eq!(operands.len(), op.operands(), "{} takes {} operands", op.name(), op.operands());
        let ty = self.ty(operands[0]);
        assert!(matches!(ty, Type::Float(_)) && operands.iter().all(|v| self.ty(*v) == ty), "{}: float operands of one format", op.name());
        self.push(Node::Op(op, operands.to_vec()), ty)
    }
    /// `−a`: flips a float's sign bit; saturating `0 − a` for fixed point.
    pub fn neg(&mut self, a: Value) -> Value {
        let ty = self.ty(a);
        self.push(Node::Neg(a), ty)
    }

    fn same(&self, what: &str, a: Value, b: Value) -> Result<Type, Error> {
        let (ta, tb) = (self.ty(a), self.ty(b));
        if ta != tb {
            return Err(Error::Operand(format!("type mismatch: {what} of {ta} and {tb} (convert one first)")));
        }
        Ok(ta)
    }
    fn numeric(&self, what: &str, a: Value) -> Result<Type, Error> {
        match self.ty(a) {
            Type::Bool => Err(Error::Operand(format!("{what} takes a float or fixed-point value, not a bool (a comparison's result)"))),
            t => Ok(t),
        }
    }

    /// `a op b`: a float operation on floats, the fixed-point one on fixed point.
    pub fn arith(&mut self, op: FixedOp, a: Value, b: Value) -> Result<Value, Error> {
        let ty = self.same(&format!("`{}`", op.name()), a, b)?;
        match ty {
            Type::Float(_) => {
                let f = match op {
                    FixedOp::Add => FloatOperator::Add,
                    FixedOp::Sub => FloatOperator::Sub,
                    FixedOp::Mul => FloatOperator::Mul,
                };
                Ok(self.op(f, &[a, b]))
            }
            Type::Fixed(_) => Ok(self.push(Node::Fixed(op, a, b), ty)),
            Type::Bool => Err(Error::Operand(format!("`{}` takes float or fixed-point values, not bools", op.name()))),
        }
    }
    /// `a cmp b`, a [`Type::Bool`]; [`Error::Operand`] when the types differ or are bools.
    pub fn compare(&mut self, cmp: Cmp, a: Value, b: Value) -> Result<Value, Error> {
        self.same(&format!("`{}`", cmp.symbol()), a, b)?;
        self.numeric(&format!("`{}`", cmp.symbol()), a)?;
        Ok(self.push(Node::Compare(cmp, a, b), Type::Bool))
    }
    /// `c ? a : b`; [`Error::Operand`] unless `c` is a bool and `a`, `b` share one type.
    pub fn select(&mut self, c: Value, a: Value, b: Value) -> Result<Value, Error> {
        if self.ty(c) != Type::Bool {
            return Err(Error::Operand(format!("select's condition is a comparison (a bool), not {}", self.ty(c))));
        }
        let ty = self.same("select", a, b)?;
        Ok(self.push(Node::Select(c, a, b), ty))
    }
    /// Minimum (a float NaN gives the canonical quiet NaN, −0 < +0); [`Error::Operand`] on mixed
    /// types or bools.
    pub fn min(&mut self, a: Value, b: Value) -> Result<Value, Error> {
        let ty = self.same("min", a, b)?;
        self.numeric("min", a)?;
        Ok(self.push(Node::Min(a, b), ty))
    }
    /// Maximum, with the rules of [`Kernel::min`].
    pub fn max(&mut self, a: Value, b: Value) -> Result<Value, Error> {
        let ty = self.same("max", a, b)?;
        self.numeric("max", a)?;
        Ok(self.push(Node::Max(a, b), ty))
    }
    /// Absolute value: clears a float's sign bit (NaN included), saturates fixed point;
    /// [`Error::Operand`] for a bool.
    pub fn abs(&mut self, a: Value) -> Result<Value, Error> {
        let ty = self.numeric("abs", a)?;
        Ok(self.push(Node::Abs(a), ty))
    }
    /// `a` in type `to`: float to fixed (nearest even, saturating, NaN gives 0), fixed to float
    /// (nearest even), fixed to fixed (nearest even, saturating). The same type is `a` itself.
    pub fn convert(&mut self, a: Value, to: Type) -> Result<Value, Error> {
        let from = self.ty(a);
        match (from, to) {
            _ if from == to => Ok(a),
            (Type::Float(_), Type::Fixed(_)) | (Type::Fixed(_), Type::Float(_)) | (Type::Fixed(_), Type::Fixed(_)) => Ok(self.push(Node::Convert(a), to)),
            (Type::Float(_), Type::Float(_)) => Err(Error::Operand(format!("conversion from {from} to {to}: between float formats is not supported (a kernel computes in its own float format)"))),
            _ => Err(Error::Operand(format!("conversion from {from} to {to} is not supported (bools only feed select)"))),
        }
    }
    /// The value of `a` `k` beats later (`k > 0`) or earlier (`k < 0`) in the same vector; zero
    /// (all bits clear) for beats outside it. `k` in `-MAX_OFFSET..=MAX_OFFSET`.
    pub fn offset(&mut self, a: Value, k: i64) -> Result<Value, Error> {
        if !(-types::MAX_OFFSET..=types::MAX_OFFSET).contains(&k) {
            return Err(Error::Operand(format!("stream offset {k}: allowed range -{0}..={0} beats", types::MAX_OFFSET)));
        }
        if k == 0 {
            return Ok(a);
        }
        let ty = self.ty(a);
        Ok(self.push(Node::Offset(a, k), ty))
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

    /// Width of `s_axis_tdata`: one slot of the float format per input lane.
    pub fn input_bits(&self) -> usize {
        self.inputs.len() * self.format.width()
    }
    /// The type of input lane `lane`.
    pub fn input_type(&self, lane: usize) -> Type {
        self.nodes.iter().zip(&self.types).find_map(|(n, t)| (*n == Node::Input(lane)).then_some(*t)).expect("input lane")
    }
    /// Width of `m_axis_tdata`: one slot of the float format per output lane.
    pub fn output_bits(&self) -> usize {
        self.outputs.len() * self.format.width()
    }

    /// Schedules the kernel into a stream netlist: lane i of `s_axis_tdata` is input i, lane j
    /// of `m_axis_tdata` is output j. Errors name the kernel: no inputs or no outputs, a lane
    /// type wider than its slot, offsets combined with vector sums ([`Error::Operand`]), or an
    /// operator that cannot be built (a stage count out of range).
    pub fn netlist(&self, stages: &Stages) -> Result<(Netlist, Schedule), Error> {
        if self.inputs.is_empty() || self.outputs.is_empty() {
            return Err(Error::Operand(format!("kernel `{}` needs at least one input and one output", self.name)));
        }
        let w = self.format.width();
        for (i, name) in self.inputs.iter().enumerate() {
            let ty = self.input_type(i);
            if ty.width() > w {
                return Err(Error::Operand(format!("kernel `{}`: input `{name}` is {ty}, {} bits: a lane holds at most {w} (the kernel's {})", self.name, ty.width(), self.format)));
            }
        }
        for (name, v) in &self.outputs {
            let ty = self.ty(*v);
            let fits = match ty {
                Type::Float(f) => f == self.format,
                _ => ty.width() <= w && !self.per_vector,
            };
            if !fits {
                return Err(Error::Operand(format!(
                    "kernel `{}`: output `{name}` is {ty}; outputs are {} or fixed point/bool of at most {w} bits (vector sums: {} only)",
                    self.name, self.format, self.format
                )));
            }
        }
        let lanes: Vec<(usize, usize)> = (0..self.inputs.len()).map(|i| (i * w, self.input_type(i).width())).collect();
        let mut operators: BTreeMap<&'static str, usize> = BTreeMap::new();
        let datapath = |net: &mut Netlist, inputs: &[_], operators: &mut BTreeMap<&'static str, usize>| lower::datapath(self, net, inputs, stages, operators);
        let net = if self.has_offsets() {
            if self.per_vector {
                return Err(Error::Operand(format!("kernel `{}`: stream offsets and vector sums do not combine", self.name)));
            }
            offsets::netlist(self, stages, &mut operators).map_err(|e| e.context(format_args!("kernel `{}`", self.name)))?
        } else if self.per_vector {
            let add_stages = stages.of(FloatOperator::Add);
            let net = vector_sum::netlist(self.format, add_stages, &lanes, |net, inputs| datapath(net, inputs, &mut operators)).map_err(|e| e.context(format_args!("kernel `{}`", self.name)))?;
            // The accumulating adder and the window tree of every output.
            *operators.entry(FloatOperator::Add.name()).or_default() += self.outputs.len() * add_stages;
            net
        } else {
            let mut error = None;
            let net = feed_forward(&lanes, |net, inputs| match datapath(net, inputs, &mut operators) {
                Ok(wires) => wires.into_iter().enumerate().map(|(j, wire)| (wire, j * w)).collect(),
                Err(e) => {
                    error = Some(e);
                    vec![(inputs[0], 0)]
                }
            });
            if let Some(e) = error {
                return Err(Error::Operand(format!("kernel `{}`: {e}", self.name)));
            }
            net
        };
        let schedule = Schedule { latency: net.latency(), operators, register_bits: net.register_bits() };
        Ok((net, schedule))
    }
}
