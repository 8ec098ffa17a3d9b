//! Word-level synchronous netlists: the form generated hardware (floating-point operators,
//! builder-made pipelines) takes before it becomes a rust-hdl block.
//!
//! A [`Netlist`] is a graph of bit-vector operations of explicit width (at most 128 bits) plus
//! registers. One description gives both the cycle-exact evaluation the built-in simulator runs
//! ([`eval`]) and Verilog whose every literal is sized ([`verilog`]).
//!
//! Pipelining is a construction aid: every node carries a *stage*. When a node at stage `s` uses
//! an operand produced at stage `s' < s`, the builder inserts `s - s'` registers (shared by all
//! users), so operands always meet in the same cycle. Operators mark the places where a register
//! may go with [`Cuts`]; the stage count chosen for an operator decides which places get one.

pub mod block;
pub mod eval;
pub mod verilog;

use std::collections::HashMap;

/// Widest value a node may carry.
pub const MAX_WIDTH: usize = 128;

/// Handle to a node's output.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Wire(pub usize);

#[derive(Clone, Debug, PartialEq)]
pub enum Op {
    /// A value driven from outside (a port slice), set before evaluation.
    Input(String),
    Const(u128),
    Add(Wire, Wire),
    Sub(Wire, Wire),
    /// Unsigned product; the result is as wide as both operands together.
    Mul(Wire, Wire),
    And(Wire, Wire),
    Or(Wire, Wire),
    Xor(Wire, Wire),
    Not(Wire),
    /// Logical shifts by a variable amount; shifting by the width or more gives zero.
    Shl(Wire, Wire),
    Shr(Wire, Wire),
    Eq(Wire, Wire),
    /// Unsigned and two's-complement less-than.
    Ult(Wire, Wire),
    Slt(Wire, Wire),
    /// `sel ? a : b`.
    Mux(Wire, Wire, Wire),
    /// `{hi, lo}`.
    Concat(Wire, Wire),
    /// `a[lo +: width]`.
    Slice(Wire, usize),
    /// Number of leading zeros (the width when the operand is zero).
    Lzc(Wire),
    /// XOR of all bits (one bit wide).
    Parity(Wire),
    /// Asynchronous read of memory `mem` (an index into [`Netlist::memories`]) at `addr`.
    MemRead { mem: usize, addr: Wire },
    /// A register: `d` taken at the rising clock edge when `enable` is high; `reset` is loaded
    /// by the synchronous reset (data registers have none).
    Reg { d: Wire, enable: Option<Wire>, reset: Option<u128> },
    /// A value defined later (feedback through registers); resolved with [`Netlist::resolve`].
    Forward(Option<Wire>),
}

#[derive(Clone, Debug)]
pub struct Node {
    pub op: Op,
    pub width: usize,
    pub stage: usize,
    /// Readable name for the generated Verilog.
    pub name: Option<String>,
}

/// An output of the netlist: a named wire.
#[derive(Clone, Debug)]
pub struct Output {
    pub name: String,
    pub wire: Wire,
}

/// A memory of `depth` words of `width` bits with one synchronous write port and any number of
/// asynchronous read ports ([`Op::MemRead`]); its contents have no reset.
#[derive(Clone, Debug)]
pub struct Memory {
    pub name: String,
    pub width: usize,
    pub depth: usize,
    /// `(enable, address, data)`, set with [`Netlist::memory_write`].
    pub write: Option<(Wire, Wire, Wire)>,
}

/// A state register made with [`Netlist::register`]: read `q` anywhere, give its next value once
/// with [`Netlist::drive`].
#[derive(Clone, Copy, Debug)]
pub struct Register {
    pub q: Wire,
    d: Wire,
}

#[derive(Clone, Debug, Default)]
pub struct Netlist {
    pub nodes: Vec<Node>,
    pub outputs: Vec<Output>,
    pub memories: Vec<Memory>,
    /// Enable of the registers the stage mechanism inserts (the pipeline's clock enable).
    pub enable: Option<Wire>,
    stage: usize,
    delays: HashMap<(Wire, usize), Wire>,
    consts: HashMap<(u128, usize), Wire>,
}

fn mask(width: usize) -> u128 {
    if width >= 128 {
        u128::MAX
    } else {
        (1u128 << width) - 1
    }
}

impl Netlist {
    pub fn new() -> Netlist {
        Netlist::default()
    }

    pub fn width(&self, w: Wire) -> usize {
        self.nodes[w.0].width
    }

    pub fn stage_of(&self, w: Wire) -> usize {
        self.nodes[w.0].stage
    }

    /// Stage new nodes are placed at.
    pub fn stage(&self) -> usize {
        self.stage
    }

    pub fn set_stage(&mut self, stage: usize) {
        self.stage = stage;
    }

    /// Places new nodes where all of `wires` are available.
    pub fn start_after(&mut self, wires: &[Wire]) {
        self.stage = wires.iter().map(|w| self.stage_of(*w)).max().unwrap_or(0);
    }

    /// The value of `w` delayed to the current stage (registers inserted as needed).
    fn at_stage(&mut self, w: Wire) -> Wire {
        let from = self.stage_of(w);
        // Constants and the pipeline's clock enable hold for every stage at once.
        if from >= self.stage || matches!(self.nodes[w.0].op, Op::Const(_)) || self.enable == Some(w) {
            return w;
        }
        let target = self.stage;
        let mut current = w;
        for s in from + 1..=target {
            current = match self.delays.get(&(w, s)) {
                Some(r) => *r,
                None => {
                    let width = self.width(w);
                    let name = self.nodes[w.0].name.as_ref().map(|n| format!("{n}_d{}", s - from));
                    let enable = self.enable;
                    let r = self.push(Op::Reg { d: current, enable, reset: None }, width, s, name);
                    self.delays.insert((w, s), r);
                    r
                }
            };
        }
        self.stage = target;
        current
    }

    fn push(&mut self, op: Op, width: usize, stage: usize, name: Option<String>) -> Wire {
        assert!((1..=MAX_WIDTH).contains(&width), "netlist node width {width} outside 1..={MAX_WIDTH}");
        self.nodes.push(Node { op, width, stage, name });
        Wire(self.nodes.len() - 1)
    }

    fn node(&mut self, op: Op, width: usize) -> Wire {
        let stage = self.stage;
        self.push(op, width, stage, None)
    }

    /// Gives `w` a readable name in the Verilog (the last name given wins).
    pub fn name(&mut self, w: Wire, name: &str) -> Wire {
        self.nodes[w.0].name = Some(name.to_string());
        w
    }

    pub fn input(&mut self, name: &str, width: usize) -> Wire {
        let w = self.node(Op::Input(name.to_string()), width);
        self.name(w, name)
    }

    pub fn output(&mut self, name: &str, w: Wire) {
        self.outputs.push(Output { name: name.to_string(), wire: w });
    }

    pub fn constant(&mut self, value: u128, width: usize) -> Wire {
        let value = value & mask(width);
        if let Some(w) = self.consts.get(&(value, width)) {
            return *w;
        }
        let w = self.push(Op::Const(value), width, 0, None);
        self.consts.insert((value, width), w);
        w
    }

    fn binary(&mut self, a: Wire, b: Wire, make: fn(Wire, Wire) -> Op, same_width: bool, width: usize) -> Wire {
        if same_width {
            assert_eq!(self.width(a), self.width(b), "operand widths differ");
        }
        let a = self.at_stage(a);
        let b = self.at_stage(b);
        self.node(make(a, b), width)
    }

    pub fn add(&mut self, a: Wire, b: Wire) -> Wire {
        let w = self.width(a);
        self.binary(a, b, Op::Add, true, w)
    }
    pub fn sub(&mut self, a: Wire, b: Wire) -> Wire {
        let w = self.width(a);
        self.binary(a, b, Op::Sub, true, w)
    }
    pub fn mul(&mut self, a: Wire, b: Wire) -> Wire {
        let w = self.width(a) + self.width(b);
        self.binary(a, b, Op::Mul, false, w)
    }
    pub fn and(&mut self, a: Wire, b: Wire) -> Wire {
        let w = self.width(a);
        self.binary(a, b, Op::And, true, w)
    }
    pub fn or(&mut self, a: Wire, b: Wire) -> Wire {
        let w = self.width(a);
        self.binary(a, b, Op::Or, true, w)
    }
    pub fn xor(&mut self, a: Wire, b: Wire) -> Wire {
        let w = self.width(a);
        self.binary(a, b, Op::Xor, true, w)
    }
    pub fn shl(&mut self, a: Wire, amount: Wire) -> Wire {
        let w = self.width(a);
        self.binary(a, amount, Op::Shl, false, w)
    }
    pub fn shr(&mut self, a: Wire, amount: Wire) -> Wire {
        let w = self.width(a);
        self.binary(a, amount, Op::Shr, false, w)
    }
    pub fn eq(&mut self, a: Wire, b: Wire) -> Wire {
        self.binary(a, b, Op::Eq, true, 1)
    }
    pub fn ult(&mut self, a: Wire, b: Wire) -> Wire {
        // Nothing is below zero: a constant, not a comparison lint tools call always false.
        if matches!(self.nodes[b.0].op, Op::Const(0)) {
            assert_eq!(self.width(a), self.width(b), "operand widths differ");
            return self.constant(0, 1);
        }
        self.binary(a, b, Op::Ult, true, 1)
    }
    pub fn slt(&mut self, a: Wire, b: Wire) -> Wire {
        self.binary(a, b, Op::Slt, true, 1)
    }
    pub fn concat(&mut self, hi: Wire, lo: Wire) -> Wire {
        let w = self.width(hi) + self.width(lo);
        self.binary(hi, lo, Op::Concat, false, w)
    }
    pub fn not(&mut self, a: Wire) -> Wire {
        let a = self.at_stage(a);
        let w = self.width(a);
        self.node(Op::Not(a), w)
    }
    pub fn lzc(&mut self, a: Wire) -> Wire {
        let a = self.at_stage(a);
        let width = self.width(a);
        let bits = usize::BITS as usize - width.leading_zeros() as usize;
        self.node(Op::Lzc(a), bits)
    }
    pub fn parity(&mut self, a: Wire) -> Wire {
        let a = self.at_stage(a);
        self.node(Op::Parity(a), 1)
    }
    pub fn mux(&mut self, sel: Wire, a: Wire, b: Wire) -> Wire {
        assert_eq!(self.width(sel), 1, "mux select must be one bit");
        assert_eq!(self.width(a), self.width(b), "mux operand widths differ");
        let sel = self.at_stage(sel);
        let a = self.at_stage(a);
        let b = self.at_stage(b);
        let w = self.width(a);
        self.node(Op::Mux(sel, a, b), w)
    }
    /// `a[lo +: width]`.
    pub fn slice(&mut self, a: Wire, lo: usize, width: usize) -> Wire {
        assert!(lo + width <= self.width(a), "slice {lo}+:{width} outside a {}-bit value", self.width(a));
        if lo == 0 && width == self.width(a) {
            return a;
        }
        if let Op::Const(v) = self.nodes[a.0].op {
            return self.constant(v >> lo, width);
        }
        let a = self.at_stage(a);
        self.node(Op::Slice(a, lo), width)
    }
    pub fn bit(&mut self, a: Wire, index: usize) -> Wire {
        self.slice(a, index, 1)
    }

    // ---- helpers built from the primitives ----

    pub fn zext(&mut self, a: Wire, width: usize) -> Wire {
        let w = self.width(a);
        assert!(width >= w, "cannot zero-extend {w} bits to {width}");
        if width == w {
            return a;
        }
        let zero = self.constant(0, width - w);
        self.concat(zero, a)
    }
    pub fn sext(&mut self, a: Wire, width: usize) -> Wire {
        let w = self.width(a);
        assert!(width >= w, "cannot sign-extend {w} bits to {width}");
        if width == w {
            return a;
        }
        let sign = self.bit(a, w - 1);
        let ones = self.constant(u128::MAX, width - w);
        let zero = self.constant(0, width - w);
        let fill = self.mux(sign, ones, zero);
        self.concat(fill, a)
    }
    /// Zero-extends or truncates to `width`.
    pub fn resize(&mut self, a: Wire, width: usize) -> Wire {
        if width <= self.width(a) {
            self.slice(a, 0, width)
        } else {
            self.zext(a, width)
        }
    }
    pub fn is_zero(&mut self, a: Wire) -> Wire {
        let zero = self.constant(0, self.width(a));
        self.eq(a, zero)
    }
    pub fn nonzero(&mut self, a: Wire) -> Wire {
        let z = self.is_zero(a);
        self.not(z)
    }
    pub fn all_ones(&mut self, a: Wire) -> Wire {
        let ones = self.constant(u128::MAX, self.width(a));
        self.eq(a, ones)
    }
    pub fn add_const(&mut self, a: Wire, value: i128) -> Wire {
        let c = self.constant(value as u128, self.width(a));
        self.add(a, c)
    }
    /// `a` shifted left by a constant (bits shifted out are lost).
    pub fn shl_const(&mut self, a: Wire, amount: usize) -> Wire {
        let w = self.width(a);
        if amount == 0 {
            return a;
        }
        if amount >= w {
            return self.constant(0, w);
        }
        let lo = self.slice(a, 0, w - amount);
        let zero = self.constant(0, amount);
        self.concat(lo, zero)
    }
    pub fn and_all(&mut self, wires: &[Wire]) -> Wire {
        let mut acc = wires[0];
        for w in &wires[1..] {
            acc = self.and(acc, *w);
        }
        acc
    }
    pub fn or_all(&mut self, wires: &[Wire]) -> Wire {
        let mut acc = wires[0];
        for w in &wires[1..] {
            acc = self.or(acc, *w);
        }
        acc
    }

    /// A register of `d` at the current stage (its output belongs to the next stage).
    pub fn reg(&mut self, d: Wire, enable: Option<Wire>, reset: Option<u128>) -> Wire {
        let d = self.at_stage(d);
        let width = self.width(d);
        let stage = self.stage + 1;
        self.push(Op::Reg { d, enable, reset }, width, stage, None)
    }

    /// A register whose output counts as the *current* stage: state carried from earlier beats
    /// (counters, history windows), not a pipeline delay.
    pub fn history(&mut self, d: Wire, enable: Option<Wire>, reset: Option<u128>) -> Wire {
        let width = self.width(d);
        let stage = self.stage;
        self.push(Op::Reg { d, enable, reset }, width, stage, None)
    }

    /// A placeholder for a value defined later; it is available at the current stage.
    pub fn forward(&mut self, width: usize) -> Wire {
        self.node(Op::Forward(None), width)
    }

    /// Defines a placeholder. No stage balancing happens across a forward edge: the caller
    /// makes sure the loop it closes holds a register.
    pub fn resolve(&mut self, placeholder: Wire, value: Wire) {
        assert_eq!(self.width(placeholder), self.width(value), "forward width differs");
        match &mut self.nodes[placeholder.0].op {
            Op::Forward(slot @ None) => *slot = Some(value),
            other => panic!("resolve on a node that is not an open forward: {other:?}"),
        }
    }

    /// A state register of `width` bits, loaded with `reset` by the synchronous reset; it takes
    /// the value given with [`Netlist::drive`] at every clock edge.
    pub fn register(&mut self, name: &str, width: usize, reset: u128) -> Register {
        let d = self.forward(width);
        let q = self.history(d, None, Some(reset & mask(width)));
        self.name(q, name);
        Register { q, d }
    }

    /// Sets the value a [`Register`] takes at the next clock edge.
    pub fn drive(&mut self, reg: Register, next: Wire) {
        self.resolve(reg.d, next);
    }

    /// `if cond { value } else { keep }` for a register's next value.
    pub fn hold_unless(&mut self, reg: Register, cond: Wire, value: Wire) {
        let next = self.mux(cond, value, reg.q);
        self.drive(reg, next);
    }

    /// Declares a memory; returns its index for [`Netlist::memory_read`].
    pub fn memory(&mut self, name: &str, width: usize, depth: usize) -> usize {
        assert!((1..=MAX_WIDTH).contains(&width) && depth.is_power_of_two() && depth >= 2, "memory {name}: {width} x {depth}");
        self.memories.push(Memory { name: name.to_string(), width, depth, write: None });
        self.memories.len() - 1
    }

    pub fn memory_read(&mut self, mem: usize, addr: Wire) -> Wire {
        assert_eq!(1 << self.width(addr), self.memories[mem].depth, "memory {} address width", self.memories[mem].name);
        let addr = self.at_stage(addr);
        let width = self.memories[mem].width;
        self.node(Op::MemRead { mem, addr }, width)
    }

    pub fn memory_write(&mut self, mem: usize, enable: Wire, addr: Wire, data: Wire) {
        assert!(self.memories[mem].write.is_none(), "memory {} has one write port", self.memories[mem].name);
        assert_eq!(self.width(data), self.memories[mem].width, "memory {} data width", self.memories[mem].name);
        assert_eq!(1 << self.width(addr), self.memories[mem].depth, "memory {} address width", self.memories[mem].name);
        self.memories[mem].write = Some((enable, addr, data));
    }

    /// Copies `child` into this netlist: every node and memory of it, named with `prefix`.
    /// The child's inputs take the wires `connect` gives (by input name; every input must be
    /// given, widths equal); returns the child's outputs by name. Stages are not balanced
    /// across the boundary: the child is state-machine logic, not a pipeline stage.
    pub fn instantiate(&mut self, child: &Netlist, prefix: &str, connect: &dyn Fn(&str) -> Option<Wire>) -> Result<HashMap<String, Wire>, String> {
        let mut map: Vec<Wire> = Vec::with_capacity(child.nodes.len());
        let memory_base = self.memories.len();
        for m in &child.memories {
            self.memories.push(Memory { name: format!("{prefix}{}", m.name), width: m.width, depth: m.depth, write: None });
        }
        let stage = self.stage;
        let remap = |map: &[Wire], w: Wire| map[w.0];
        // Forward references inside the child are resolved once every node exists.
        let mut forwards = vec![];
        for (i, node) in child.nodes.iter().enumerate() {
            let name = node.name.as_ref().map(|n| format!("{prefix}{n}"));
            let op = match &node.op {
                Op::Input(port) => {
                    let w = connect(port).ok_or_else(|| format!("{prefix}: input `{port}` is not connected"))?;
                    if self.width(w) != node.width {
                        return Err(format!("{prefix}: input `{port}` is {} bits, connected to {} bits", node.width, self.width(w)));
                    }
                    map.push(w);
                    continue;
                }
                Op::Const(v) => {
                    let w = self.constant(*v, node.width);
                    map.push(w);
                    continue;
                }
                Op::Forward(Some(target)) => {
                    forwards.push((i, *target));
                    Op::Forward(None)
                }
                other => other.clone(),
            };
            map.push(self.push(op, node.width, stage, name));
        }
        // Rewrite operands now that every child node has a parent wire.
        for (i, node) in child.nodes.iter().enumerate() {
            let w = map[i];
            if matches!(node.op, Op::Input(_) | Op::Const(_)) {
                continue;
            }
            let r = |x: &Wire| remap(&map, *x);
            self.nodes[w.0].op = match &node.op {
                Op::Add(a, b) => Op::Add(r(a), r(b)),
                Op::Sub(a, b) => Op::Sub(r(a), r(b)),
                Op::Mul(a, b) => Op::Mul(r(a), r(b)),
                Op::And(a, b) => Op::And(r(a), r(b)),
                Op::Or(a, b) => Op::Or(r(a), r(b)),
                Op::Xor(a, b) => Op::Xor(r(a), r(b)),
                Op::Not(a) => Op::Not(r(a)),
                Op::Shl(a, b) => Op::Shl(r(a), r(b)),
                Op::Shr(a, b) => Op::Shr(r(a), r(b)),
                Op::Eq(a, b) => Op::Eq(r(a), r(b)),
                Op::Ult(a, b) => Op::Ult(r(a), r(b)),
                Op::Slt(a, b) => Op::Slt(r(a), r(b)),
                Op::Mux(s, a, b) => Op::Mux(r(s), r(a), r(b)),
                Op::Concat(a, b) => Op::Concat(r(a), r(b)),
                Op::Slice(a, lo) => Op::Slice(r(a), *lo),
                Op::Lzc(a) => Op::Lzc(r(a)),
                Op::Parity(a) => Op::Parity(r(a)),
                Op::MemRead { mem, addr } => Op::MemRead { mem: memory_base + mem, addr: r(addr) },
                Op::Reg { d, enable, reset } => Op::Reg { d: r(d), enable: enable.map(|e| r(&e)), reset: *reset },
                Op::Forward(_) => Op::Forward(None),
                Op::Input(_) | Op::Const(_) => unreachable!(),
            };
        }
        for (i, target) in forwards {
            self.nodes[map[i].0].op = Op::Forward(Some(map[target.0]));
        }
        for (k, m) in child.memories.iter().enumerate() {
            if let Some((e, a, d)) = m.write {
                self.memories[memory_base + k].write = Some((map[e.0], map[a.0], map[d.0]));
            }
        }
        Ok(child.outputs.iter().map(|o| (o.name.clone(), map[o.wire.0])).collect())
    }

    /// Highest stage of any output: the pipeline latency in cycles.
    pub fn latency(&self) -> usize {
        self.outputs.iter().map(|o| self.stage_of(o.wire)).max().unwrap_or(0)
    }

    /// Delays every output to the same stage, so all leave in one cycle.
    pub fn balance_outputs(&mut self) {
        let latency = self.latency();
        for i in 0..self.outputs.len() {
            self.stage = latency;
            let w = self.outputs[i].wire;
            self.outputs[i].wire = self.at_stage(w);
        }
    }

    /// Bits held in registers.
    pub fn register_bits(&self) -> usize {
        self.nodes.iter().filter(|n| matches!(n.op, Op::Reg { .. })).map(|n| n.width).sum()
    }
}

/// The places an operator may take a pipeline register, and which of them the chosen stage
/// count uses. `priority` lists the places from most to least useful (the longest logic first);
/// a depth of `d` takes the first `d`.
pub struct Cuts {
    active: Vec<bool>,
    next: usize,
}

impl Cuts {
    pub fn new(depth: usize, priority: &[usize]) -> Cuts {
        assert!(depth <= priority.len(), "stage count {depth} above the deepest split {}", priority.len());
        let mut active = vec![false; priority.len()];
        for p in &priority[..depth] {
            active[*p] = true;
        }
        Cuts { active, next: 0 }
    }

    /// Passes one place: the following nodes land one stage later when the place is active.
    pub fn cut(&mut self, net: &mut Netlist) {
        if self.active[self.next] {
            net.stage += 1;
        }
        self.next += 1;
    }

    /// Checks the operator passed every place it declared.
    pub fn finish(self) {
        assert_eq!(self.next, self.active.len(), "operator passed {} of {} cut places", self.next, self.active.len());
    }
}
