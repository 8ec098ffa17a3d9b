//! Cycle-exact evaluation of a [`Netlist`]: what the built-in simulator runs.
//!
//! The flattened netlist is compiled once into a flat program: the combinational nodes in
//! dependency order as compact instructions (operands resolved to value slots, forwards folded
//! away, values stored in program order for locality, as two 64-bit halves so that narrow
//! instructions touch only the low one), with each value's fan-out. [`Evaluator::settle`] is
//! event-driven: only instructions whose operands changed since the last settle are evaluated (a
//! dirty bit per instruction, scanned in program order, so every instruction runs after its
//! operands), which gives the same values as evaluating every node. Clock edges use per-domain
//! register and memory write lists and mark the fan-out of the registers and memories that
//! changed.

use super::vcd::Vcd;
use super::{mask, Netlist, Op, Wire};

/// Opcode of a compiled instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Code {
    Add,
    Sub,
    Mul,
    And,
    Or,
    Xor,
    Not,
    Shl,
    Shr,
    Eq,
    Ult,
    Slt,
    Mux,
    Concat,
    Slice,
    Lzc,
    Parity,
    MemRead,
}

/// One combinational node: the value in the slot of its program position is
/// `code(a, b, c)` (operand slots) masked to `width` bits. `aux` is the operand width for
/// `Slt`/`Lzc`, the low operand's width for `Concat`, the offset for `Slice` and the memory for
/// `MemRead`.
#[derive(Clone, Debug)]
struct Instr {
    a: u32,
    b: u32,
    c: u32,
    aux: u32,
    code: Code,
    width: u8,
    /// The result and every operand fit in 64 bits: evaluated on the low words only.
    narrow: bool,
}

/// Every slot's value as two 64-bit halves: narrow instructions touch only `lo`.
#[derive(Clone, Debug)]
struct Values {
    lo: Vec<u64>,
    hi: Vec<u64>,
}

impl Values {
    #[inline(always)]
    fn get(&self, s: usize) -> u128 {
        self.lo[s] as u128 | (self.hi[s] as u128) << 64
    }

    #[inline(always)]
    fn put(&mut self, s: usize, v: u128) {
        self.lo[s] = v as u64;
        self.hi[s] = (v >> 64) as u64;
    }
}

/// A register of one clock domain, operands resolved.
#[derive(Clone, Debug)]
struct RegInstr {
    /// Its value slot.
    node: u32,
    d: u32,
    /// `u32::MAX`: always enabled.
    enable: u32,
    reset: Option<u128>,
}

/// A memory write port of one clock domain: memory, enable, address, data.
#[derive(Clone, Debug)]
struct WriteInstr {
    mem: usize,
    enable: u32,
    addr: u32,
    data: u32,
}

/// A netlist with its register state.
#[derive(Clone, Debug)]
pub struct Evaluator {
    net: Netlist,
    /// Combinational nodes in dependency order (inputs, registers, constants and forwards
    /// excluded); instruction `p` writes value slot `p`.
    prog: Vec<Instr>,
    /// Per node: the slot of `values` holding its value (a forward shares its target's).
    /// Instructions come first, in program order, then inputs, constants and registers.
    slot: Vec<u32>,
    /// Per slot: the program positions reading it (`fan[fan_start[s]..fan_start[s + 1]]`).
    fan_start: Vec<u32>,
    fan: Vec<u32>,
    /// Per memory: the program positions reading it.
    mem_readers: Vec<Vec<u32>>,
    /// One bit per program position: to be evaluated at the next settle; `dirty_words` has one
    /// bit per word of `dirty` that may be non-zero.
    dirty: Vec<u64>,
    dirty_words: Vec<u64>,
    /// Per clock domain: its registers and memory write ports.
    regs: Vec<Vec<RegInstr>>,
    writes: Vec<Vec<WriteInstr>>,
    /// Scratch for clock edges.
    next: Vec<(u32, u128)>,
    pending: Vec<(usize, usize, u128)>,
    values: Values,
    inputs: Vec<(String, usize)>,
    memories: Vec<Vec<u128>>,
}

const NONE: u32 = u32::MAX;

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
        let same_width_forward = |i: usize| match net.nodes[i].op {
            Op::Forward(Some(t)) => net.nodes[t.0].width == net.nodes[i].width,
            _ => false,
        };
        // Slots: instructions in program order, then the other nodes that hold a value; a
        // forward folds onto its target (chains followed in dependency order).
        let mut slot = vec![NONE; n];
        let mut count = 0u32;
        for &i in &order {
            if !matches!(net.nodes[i].op, Op::Input(_)) && !same_width_forward(i) {
                slot[i] = count;
                count += 1;
            }
        }
        let program_len = count as usize;
        for (i, node) in net.nodes.iter().enumerate() {
            if slot[i] == NONE && !matches!(node.op, Op::Forward(_)) {
                slot[i] = count;
                count += 1;
            }
        }
        for &i in &order {
            if let Op::Forward(Some(t)) = net.nodes[i].op {
                if slot[i] == NONE {
                    slot[i] = slot[t.0];
                }
            }
        }
        let slots = count as usize;
        let mut values = Values { lo: vec![0; slots], hi: vec![0; slots] };
        let mut inputs = vec![];
        for (i, node) in net.nodes.iter().enumerate() {
            match &node.op {
                Op::Const(v) => values.put(slot[i] as usize, *v),
                Op::Input(name) => inputs.push((name.clone(), i)),
                Op::Forward(None) => panic!("netlist forward node {i} never resolved"),
                _ => {}
            }
        }
        let r = |w: Wire| slot[w.0];
        let width = |w: Wire| net.nodes[w.0].width as u32;
        let mut prog = Vec::with_capacity(program_len);
        for &i in &order {
            let node = &net.nodes[i];
            let ins = |code, a: Wire, b: Option<Wire>, c: Option<Wire>, aux: u32| Instr {
                a: r(a),
                b: b.map_or(NONE, r),
                c: c.map_or(NONE, r),
                aux,
                code,
                width: node.width.min(128) as u8,
                narrow: node.width <= 64 && [Some(a), b, c].into_iter().flatten().all(|x| width(x) <= 64),
            };
            let instr = match &node.op {
                Op::Input(_) => continue,
                Op::Forward(_) if same_width_forward(i) => continue,
                // A forward narrower than its target (not made by `resolve`) masks it.
                Op::Forward(Some(a)) => ins(Code::Slice, *a, None, None, 0),
                Op::Add(a, b) => ins(Code::Add, *a, Some(*b), None, 0),
                Op::Sub(a, b) => ins(Code::Sub, *a, Some(*b), None, 0),
                Op::Mul(a, b) => ins(Code::Mul, *a, Some(*b), None, 0),
                Op::And(a, b) => ins(Code::And, *a, Some(*b), None, 0),
                Op::Or(a, b) => ins(Code::Or, *a, Some(*b), None, 0),
                Op::Xor(a, b) => ins(Code::Xor, *a, Some(*b), None, 0),
                Op::Not(a) => ins(Code::Not, *a, None, None, 0),
                Op::Shl(a, s) => ins(Code::Shl, *a, Some(*s), None, 0),
                Op::Shr(a, s) => ins(Code::Shr, *a, Some(*s), None, 0),
                Op::Eq(a, b) => ins(Code::Eq, *a, Some(*b), None, 0),
                Op::Ult(a, b) => ins(Code::Ult, *a, Some(*b), None, 0),
                Op::Slt(a, b) => ins(Code::Slt, *a, Some(*b), None, width(*a)),
                Op::Mux(s, a, b) => ins(Code::Mux, *s, Some(*a), Some(*b), 0),
                Op::Concat(h, l) => ins(Code::Concat, *h, Some(*l), None, width(*l)),
                Op::Slice(a, lo) => ins(Code::Slice, *a, None, None, *lo as u32),
                Op::Lzc(a) => ins(Code::Lzc, *a, None, None, width(*a)),
                Op::Parity(a) => ins(Code::Parity, *a, None, None, 0),
                Op::MemRead { mem, addr } => ins(Code::MemRead, *addr, None, None, *mem as u32),
                op => unreachable!("not a combinational operation: {op:?}"),
            };
            debug_assert_eq!(slot[i] as usize, prog.len());
            prog.push(instr);
        }
        // Fan-out, as compressed rows per slot.
        let mut count = vec![0u32; slots + 1];
        let operands = |ins: &Instr| [ins.a, ins.b, ins.c];
        for ins in &prog {
            for x in operands(ins).into_iter().filter(|x| *x != NONE) {
                count[x as usize + 1] += 1;
            }
        }
        for k in 0..slots {
            count[k + 1] += count[k];
        }
        let fan_start = count.clone();
        let mut fan = vec![0u32; count[slots] as usize];
        for (p, ins) in prog.iter().enumerate() {
            for x in operands(ins).into_iter().filter(|x| *x != NONE) {
                fan[count[x as usize] as usize] = p as u32;
                count[x as usize] += 1;
            }
        }
        let mut mem_readers = vec![vec![]; net.memories.len()];
        for (p, ins) in prog.iter().enumerate() {
            if ins.code == Code::MemRead {
                mem_readers[ins.aux as usize].push(p as u32);
            }
        }
        let domains = (net.nodes.iter().map(|x| x.domain + 1))
            .chain(net.memories.iter().map(|m| m.domain + 1))
            .chain([net.domains.len()])
            .max()
            .unwrap_or(0);
        let mut regs = vec![vec![]; domains];
        for (i, node) in net.nodes.iter().enumerate() {
            if let Op::Reg { d, enable, reset } = &node.op {
                regs[node.domain].push(RegInstr { node: slot[i], d: r(*d), enable: enable.map_or(NONE, r), reset: *reset });
            }
        }
        let mut writes = vec![vec![]; domains];
        for (m, mem) in net.memories.iter().enumerate() {
            if let Some((e, a, d)) = mem.write {
                writes[mem.domain].push(WriteInstr { mem: m, enable: r(e), addr: r(a), data: r(d) });
            }
        }
        // Everything is evaluated at the first settle.
        let mut dirty = vec![0u64; prog.len().div_ceil(64)];
        let mut dirty_words = vec![0u64; dirty.len().div_ceil(64)];
        for p in 0..prog.len() {
            dirty[p >> 6] |= 1 << (p & 63);
            dirty_words[p >> 12] |= 1 << ((p >> 6) & 63);
        }
        let memories = net.memories.iter().map(|m| vec![0; m.depth]).collect();
        Evaluator { net, prog, slot, fan_start, fan, mem_readers, dirty, dirty_words, regs, writes, next: vec![], pending: vec![], values, inputs, memories }
    }

    pub fn netlist(&self) -> &Netlist {
        &self.net
    }

    /// Index of a named input, for [`Evaluator::set`].
    pub fn input(&self, name: &str) -> Option<Wire> {
        self.inputs.iter().find(|(n, _)| n == name).map(|(_, i)| Wire(*i))
    }

    pub fn set(&mut self, input: Wire, value: u128) {
        let s = self.slot[input.0] as usize;
        let v = value & mask(self.net.nodes[input.0].width);
        if self.values.get(s) != v {
            self.values.put(s, v);
            self.changed(s);
            // A combinational node set by hand is recomputed at the next settle, as before.
            if s < self.prog.len() {
                mark(&mut self.dirty, &mut self.dirty_words, s as u32);
            }
        }
    }

    /// Marks the readers of slot `s` for the next settle.
    #[inline(always)]
    fn changed(&mut self, s: usize) {
        let (from, to) = (self.fan_start[s] as usize, self.fan_start[s + 1] as usize);
        for &p in &self.fan[from..to] {
            mark(&mut self.dirty, &mut self.dirty_words, p);
        }
    }

    pub fn get(&self, w: Wire) -> u128 {
        self.values.get(self.slot[w.0] as usize)
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
        self.net.outputs.iter().find(|o| o.name == name).map(|o| self.get(o.wire))
    }

    /// Propagates inputs and register outputs through the combinational logic: evaluates the
    /// instructions whose operands changed, in program order.
    pub fn settle(&mut self) {
        let Evaluator { prog, fan_start, fan, dirty, dirty_words, values, memories, .. } = self;
        // Readers always come later in the program, so one forward scan reaches every change.
        for t in 0..dirty_words.len() {
            while dirty_words[t] != 0 {
                let k = t * 64 + dirty_words[t].trailing_zeros() as usize;
                while dirty[k] != 0 {
                    let bits = dirty[k];
                    dirty[k] = bits & (bits - 1);
                    let p = k * 64 + bits.trailing_zeros() as usize;
                    let ins = &prog[p];
                    let changed = if ins.narrow {
                        let v = exec64(ins, &values.lo, memories);
                        let changed = values.lo[p] != v;
                        values.lo[p] = v;
                        changed
                    } else {
                        let v = exec(ins, values, memories);
                        let changed = values.get(p) != v;
                        values.put(p, v);
                        changed
                    };
                    if changed {
                        for &q in &fan[fan_start[p] as usize..fan_start[p + 1] as usize] {
                            mark(dirty, dirty_words, q);
                        }
                    }
                }
                dirty_words[t] &= !(1 << (k & 63));
            }
        }
    }

    /// A rising clock edge of every domain at once (settle first). `reset` is the synchronous
    /// reset of every domain.
    pub fn clock(&mut self, reset: bool) {
        for d in 0..self.regs.len() {
            self.collect_edge(d, reset);
        }
        self.apply_edges();
    }

    /// A rising edge of the clocks of `edges` (domain, its reset) at the same instant: every
    /// register and memory of those domains takes its input, all from values settled before.
    pub fn clock_domains(&mut self, edges: &[(usize, bool)]) {
        for (k, &(d, reset)) in edges.iter().enumerate() {
            // A domain listed twice rises once, with its first reset.
            if d < self.regs.len() && !edges[..k].iter().any(|(e, _)| *e == d) {
                self.collect_edge(d, reset);
            }
        }
        self.apply_edges();
    }

    /// Queues the next register values and memory writes of domain `d` (from settled values).
    fn collect_edge(&mut self, d: usize, reset: bool) {
        let values = &self.values;
        // Only registers whose value changes are queued.
        for r in &self.regs[d] {
            let v = match (reset, r.reset) {
                (true, Some(init)) => init,
                _ if r.enable == NONE || values.get(r.enable as usize) != 0 => values.get(r.d as usize),
                _ => continue,
            };
            if values.get(r.node as usize) != v {
                self.next.push((r.node, v));
            }
        }
        for w in &self.writes[d] {
            if values.get(w.enable as usize) != 0 {
                self.pending.push((w.mem, values.get(w.addr as usize) as usize, values.get(w.data as usize)));
            }
        }
    }

    /// Applies the queued register values and memory writes, marking what reads them.
    fn apply_edges(&mut self) {
        let mut next = std::mem::take(&mut self.next);
        for &(i, v) in &next {
            let i = i as usize;
            if self.values.get(i) != v {
                self.values.put(i, v);
                self.changed(i);
            }
        }
        next.clear();
        self.next = next;
        let mut pending = std::mem::take(&mut self.pending);
        for &(m, a, d) in &pending {
            if self.memories[m][a] != d {
                self.memories[m][a] = d;
                for &p in &self.mem_readers[m] {
                    mark(&mut self.dirty, &mut self.dirty_words, p);
                }
            }
        }
        pending.clear();
        self.pending = pending;
    }

    /// Starts a waveform of this netlist (top scope `top`, one cycle per `period_ns`) on `out`;
    /// call [`Evaluator::sample`] once per cycle after [`Evaluator::settle`].
    pub fn vcd<W: std::io::Write>(&self, out: W, top: &str, period_ns: u64) -> std::io::Result<Vcd<W>> {
        Vcd::new(out, &self.net, top, period_ns)
    }

    /// Writes this cycle's settled values to `vcd`.
    pub fn sample<W: std::io::Write>(&self, vcd: &mut Vcd<W>) -> std::io::Result<()> {
        vcd.sample(&|w| self.get(w))
    }

    /// Index of the clock domain called `name` (`clk` is 0).
    pub fn domain(&self, name: &str) -> Option<usize> {
        self.net.domains.iter().position(|d| d.name == name)
    }
}

/// Runs a narrow instruction on the low words (masked result); the same value as [`exec`].
#[inline(always)]
fn exec64(ins: &Instr, lo: &[u64], memories: &[Vec<u128>]) -> u64 {
    let a = lo[ins.a as usize];
    let b = || lo[ins.b as usize];
    let v = match ins.code {
        Code::Add => a.wrapping_add(b()),
        Code::Sub => a.wrapping_sub(b()),
        Code::Mul => a.wrapping_mul(b()),
        Code::And => a & b(),
        Code::Or => a | b(),
        Code::Xor => a ^ b(),
        Code::Not => !a,
        Code::Shl => a.checked_shl(b().min(64) as u32).unwrap_or(0),
        Code::Shr => a.checked_shr(b().min(64) as u32).unwrap_or(0),
        Code::Eq => (a == b()) as u64,
        Code::Ult => (a < b()) as u64,
        Code::Slt => {
            let shift = 64 - ins.aux.min(64);
            let s = |v: u64| (v.checked_shl(shift).unwrap_or(0) as i64).checked_shr(shift).unwrap_or(0);
            (s(a) < s(b())) as u64
        }
        Code::Mux => {
            if a != 0 {
                b()
            } else {
                lo[ins.c as usize]
            }
        }
        Code::Concat => a.checked_shl(ins.aux).unwrap_or(0) | b(),
        Code::Slice => a.checked_shr(ins.aux).unwrap_or(0),
        Code::Lzc => (a.leading_zeros() - (64 - ins.aux)) as u64,
        Code::Parity => (a.count_ones() & 1) as u64,
        Code::MemRead => memories[ins.aux as usize][a as usize] as u64,
    };
    v & u64::MAX.checked_shr(64 - ins.width as u32).unwrap_or(0)
}

/// Marks program position `p` for the next settle.
#[inline(always)]
fn mark(dirty: &mut [u64], dirty_words: &mut [u64], p: u32) {
    let p = p as usize;
    dirty[p >> 6] |= 1 << (p & 63);
    dirty_words[p >> 12] |= 1 << ((p >> 6) & 63);
}

/// Runs one instruction (masked result).
#[inline(always)]
fn exec(ins: &Instr, values: &Values, memories: &[Vec<u128>]) -> u128 {
    let a = values.get(ins.a as usize);
    let b = || values.get(ins.b as usize);
    let v = match ins.code {
        Code::Add => a.wrapping_add(b()),
        Code::Sub => a.wrapping_sub(b()),
        Code::Mul => a.wrapping_mul(b()),
        Code::And => a & b(),
        Code::Or => a | b(),
        Code::Xor => a ^ b(),
        Code::Not => !a,
        Code::Shl => shift(a, b(), true),
        Code::Shr => shift(a, b(), false),
        Code::Eq => (a == b()) as u128,
        Code::Ult => (a < b()) as u128,
        Code::Slt => {
            let w = ins.aux as usize;
            (signed(a, w) < signed(b(), w)) as u128
        }
        Code::Mux => {
            if a != 0 {
                b()
            } else {
                values.get(ins.c as usize)
            }
        }
        Code::Concat => (a << ins.aux) | b(),
        Code::Slice => a >> ins.aux,
        Code::Lzc => (a.leading_zeros() - (128 - ins.aux)) as u128,
        Code::Parity => (a.count_ones() & 1) as u128,
        Code::MemRead => memories[ins.aux as usize][a as usize],
    };
    v & u128::MAX.checked_shr(128 - ins.width as u32).unwrap_or(0)
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
