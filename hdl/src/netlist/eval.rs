//! Cycle-exact evaluation of a [`Netlist`]: what the built-in simulator runs.

use super::vcd::Vcd;
use super::{mask, Netlist, Op, Wire};

/// A netlist with its register state.
#[derive(Clone, Debug)]
pub struct Evaluator {
    net: Netlist,
    /// Combinational nodes in dependency order (registers and constants excluded).
    order: Vec<usize>,
    registers: Vec<usize>,
    values: Vec<u128>,
    inputs: Vec<(String, usize)>,
    memories: Vec<Vec<u128>>,
}

impl Evaluator {
    /// Flattens the netlist's hierarchy and orders it for evaluation; panics on a combinational
    /// loop or an open forward.
    pub fn new(net: Netlist) -> Evaluator {
        let net = net.flatten();
        let n = net.nodes.len();
        if let Err(e) = net.check_flat_domains() {
            panic!("{e}");
        }
        let order = comb_order(&net);
        let registers = (0..n).filter(|i| matches!(net.nodes[*i].op, Op::Reg { .. })).collect();
        let mut values = vec![0u128; n];
        let mut inputs = vec![];
        for (i, node) in net.nodes.iter().enumerate() {
            match &node.op {
                Op::Const(v) => values[i] = *v,
                Op::Input(name) => inputs.push((name.clone(), i)),
                Op::Forward(None) => panic!("netlist forward node {i} never resolved"),
                _ => {}
            }
        }
        let memories = net.memories.iter().map(|m| vec![0; m.depth]).collect();
        Evaluator { net, order, registers, values, inputs, memories }
    }

    pub fn netlist(&self) -> &Netlist {
        &self.net
    }

    /// Index of a named input, for [`Evaluator::set`].
    pub fn input(&self, name: &str) -> Option<Wire> {
        self.inputs.iter().find(|(n, _)| n == name).map(|(_, i)| Wire(*i))
    }

    pub fn set(&mut self, input: Wire, value: u128) {
        self.values[input.0] = value & mask(self.net.nodes[input.0].width);
    }

    pub fn get(&self, w: Wire) -> u128 {
        self.values[w.0]
    }

    /// Sets the input called `name`; panics when there is none (a testbench naming error).
    pub fn set_input(&mut self, name: &str, value: u128) {
        let w = self.input(name).unwrap_or_else(|| panic!("netlist has no input `{name}`"));
        self.set(w, value);
    }

    /// The output called `name`; panics when there is none.
    pub fn get_output(&self, name: &str) -> u128 {
        self.output(name).unwrap_or_else(|| panic!("netlist has no output `{name}`"))
    }

    /// Holds the synchronous reset for `cycles` clock edges.
    pub fn reset(&mut self, cycles: usize) {
        for _ in 0..cycles {
            self.settle();
            self.clock(true);
        }
    }

    pub fn output(&self, name: &str) -> Option<u128> {
        self.net.outputs.iter().find(|o| o.name == name).map(|o| self.values[o.wire.0])
    }

    /// Propagates inputs and register outputs through the combinational logic.
    pub fn settle(&mut self) {
        for k in 0..self.order.len() {
            let i = self.order[k];
            let node = &self.net.nodes[i];
            let value = match &node.op {
                Op::Input(_) => continue,
                Op::MemRead { mem, addr } => self.memories[*mem][self.values[addr.0] as usize],
                op => compute(op, &|w| self.values[w.0], &|w| self.net.nodes[w.0].width),
            };
            self.values[i] = value & mask(node.width);
        }
    }

    /// A rising clock edge of every domain at once (settle first). `reset` is the synchronous
    /// reset of every domain.
    pub fn clock(&mut self, reset: bool) {
        let all: Vec<(usize, bool)> = (0..self.net.domains.len()).map(|d| (d, reset)).collect();
        self.clock_domains(&all);
    }

    /// A rising edge of the clocks of `edges` (domain, its reset) at the same instant: every
    /// register and memory of those domains takes its input, all from values settled before.
    pub fn clock_domains(&mut self, edges: &[(usize, bool)]) {
        let edge = |d: usize| edges.iter().find(|(e, _)| *e == d).map(|(_, r)| *r);
        let next: Vec<(usize, u128)> = self
            .registers
            .iter()
            .filter_map(|&i| {
                let reset = edge(self.net.nodes[i].domain)?;
                match &self.net.nodes[i].op {
                    Op::Reg { d, enable, reset: init } => match (reset, init) {
                        (true, Some(r)) => Some((i, *r)),
                        _ if enable.map_or(true, |e| self.values[e.0] != 0) => Some((i, self.values[d.0])),
                        _ => None,
                    },
                    _ => None,
                }
            })
            .collect();
        let writes: Vec<(usize, usize, u128)> = (self.net.memories.iter().enumerate())
            .filter(|(_, mem)| edge(mem.domain).is_some())
            .filter_map(|(m, mem)| mem.write.map(|(e, a, d)| (m, e, a, d)))
            .filter(|(_, e, _, _)| self.values[e.0] != 0)
            .map(|(m, _, a, d)| (m, self.values[a.0] as usize, self.values[d.0]))
            .collect();
        for (i, v) in next {
            self.values[i] = v;
        }
        for (m, a, d) in writes {
            self.memories[m][a] = d;
        }
    }

    /// Starts a waveform of this netlist (top scope `top`, one cycle per `period_ns`) on `out`;
    /// call [`Evaluator::sample`] once per cycle after [`Evaluator::settle`].
    pub fn vcd<W: std::io::Write>(&self, out: W, top: &str, period_ns: u64) -> std::io::Result<Vcd<W>> {
        Vcd::new(out, &self.net, top, period_ns)
    }

    /// Writes this cycle's settled values to `vcd`.
    pub fn sample<W: std::io::Write>(&self, vcd: &mut Vcd<W>) -> std::io::Result<()> {
        vcd.sample(&|w| self.values[w.0])
    }

    /// Index of the clock domain called `name` (`clk` is 0).
    pub fn domain(&self, name: &str) -> Option<usize> {
        self.net.domains.iter().position(|d| d.name == name)
    }
}

/// Combinational nodes (registers and constants excluded) in dependency order; panics on a
/// combinational loop or an open forward.
pub(crate) fn comb_order(net: &Netlist) -> Vec<usize> {
    let n = net.nodes.len();
    let mut order = Vec::with_capacity(n);
    // 0 = unvisited, 1 = on the stack, 2 = done
    let mut mark = vec![0u8; n];
    for root in 0..n {
        if mark[root] != 0 {
            continue;
        }
        let mut stack = vec![(root, false)];
        while let Some((i, expanded)) = stack.pop() {
            if expanded {
                mark[i] = 2;
                if !matches!(net.nodes[i].op, Op::Reg { .. } | Op::Const(_)) {
                    order.push(i);
                }
                continue;
            }
            match mark[i] {
                2 => continue,
                1 => panic!("combinational loop through netlist node {i}"),
                _ => {}
            }
            mark[i] = 1;
            stack.push((i, true));
            for dep in comb_operands(&net.nodes[i].op) {
                match mark[dep.0] {
                    0 => stack.push((dep.0, false)),
                    1 => panic!("combinational loop through netlist node {}", dep.0),
                    _ => {}
                }
            }
        }
    }
    order
}

/// The value of a combinational operation, given its operands' values and widths (unmasked).
pub(crate) fn compute(op: &Op, v: &dyn Fn(Wire) -> u128, width: &dyn Fn(Wire) -> usize) -> u128 {
    match op {
        Op::Add(a, b) => v(*a).wrapping_add(v(*b)),
        Op::Sub(a, b) => v(*a).wrapping_sub(v(*b)),
        Op::Mul(a, b) => v(*a).wrapping_mul(v(*b)),
        Op::And(a, b) => v(*a) & v(*b),
        Op::Or(a, b) => v(*a) | v(*b),
        Op::Xor(a, b) => v(*a) ^ v(*b),
        Op::Not(a) => !v(*a),
        Op::Shl(a, s) => shift(v(*a), v(*s), true),
        Op::Shr(a, s) => shift(v(*a), v(*s), false),
        Op::Eq(a, b) => (v(*a) == v(*b)) as u128,
        Op::Ult(a, b) => (v(*a) < v(*b)) as u128,
        Op::Slt(a, b) => {
            let w = width(*a);
            (signed(v(*a), w) < signed(v(*b), w)) as u128
        }
        Op::Mux(s, a, b) => {
            if v(*s) != 0 {
                v(*a)
            } else {
                v(*b)
            }
        }
        Op::Concat(h, l) => (v(*h) << width(*l)) | v(*l),
        Op::Slice(a, lo) => v(*a) >> lo,
        Op::Lzc(a) => (v(*a).leading_zeros() as usize - (128 - width(*a))) as u128,
        Op::Parity(a) => (v(*a).count_ones() & 1) as u128,
        Op::Forward(Some(a)) => v(*a),
        Op::Const(c) => *c,
        Op::Input(_) | Op::MemRead { .. } | Op::Reg { .. } | Op::Forward(None) | Op::InstanceOutput { .. } => {
            unreachable!("not a combinational operation: {op:?}")
        }
    }
}

pub(crate) fn comb_operands(op: &Op) -> Vec<Wire> {
    match op {
        Op::Input(_) | Op::Const(_) | Op::Reg { .. } | Op::Forward(None) | Op::InstanceOutput { .. } => vec![],
        Op::Not(a) | Op::Slice(a, _) | Op::Lzc(a) | Op::Parity(a) | Op::Forward(Some(a)) => vec![*a],
        Op::MemRead { addr, .. } => vec![*addr],
        Op::Mux(s, a, b) => vec![*s, *a, *b],
        Op::Add(a, b)
        | Op::Sub(a, b)
        | Op::Mul(a, b)
        | Op::And(a, b)
        | Op::Or(a, b)
        | Op::Xor(a, b)
        | Op::Shl(a, b)
        | Op::Shr(a, b)
        | Op::Eq(a, b)
        | Op::Ult(a, b)
        | Op::Slt(a, b)
        | Op::Concat(a, b) => vec![*a, *b],
    }
}

fn shift(a: u128, amount: u128, left: bool) -> u128 {
    if amount >= 128 {
        0
    } else if left {
        a << amount
    } else {
        a >> amount
    }
}

fn signed(v: u128, width: usize) -> i128 {
    let shift = 128 - width;
    ((v << shift) as i128) >> shift
}

/// Independent clocks for [`Evaluator::clock_domains`]: each domain has a period (any time
/// unit) and a phase; [`Clocks::advance`] moves to the next instant at which one or more clocks
/// rise and says which.
#[derive(Clone, Debug)]
pub struct Clocks {
    next: Vec<u64>,
    periods: Vec<u64>,
    /// The current instant.
    pub now: u64,
}

impl Clocks {
    /// `periods[d]` and the first rising edge `phases[d]` of domain `d`.
    pub fn new(periods: &[u64], phases: &[u64]) -> Clocks {
        assert!(periods.iter().all(|p| *p > 0) && periods.len() == phases.len(), "clock periods must be positive, one phase each");
        Clocks { next: phases.to_vec(), periods: periods.to_vec(), now: 0 }
    }

    /// The domains whose clocks rise next (several when edges coincide).
    pub fn advance(&mut self) -> Vec<usize> {
        self.now = *self.next.iter().min().unwrap();
        let rising: Vec<usize> = (0..self.next.len()).filter(|d| self.next[*d] == self.now).collect();
        for d in &rising {
            self.next[*d] += self.periods[*d];
        }
        rising
    }
}
