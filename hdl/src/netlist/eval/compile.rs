//! Compiling a flattened netlist into the evaluator's flat program: combinational nodes in
//! dependency order (levelized) as compact instructions on value slots, with each slot's
//! fan-out and each clock domain's register and memory write lists.

use super::clock::{RegInstr, WriteInstr};
use super::instr::{Code, Instr};
use super::semantics::comb_operands;
use super::{Evaluator, Values, NONE};
use crate::netlist::{Netlist, Op, Wire};

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
        let mut values = Values { lo: vec![0; slots], hi: vec![0; slots], wide: vec![None; slots] };
        for (i, node) in net.nodes.iter().enumerate() {
            if node.width > 128 && slot[i] != NONE {
                values.wide[slot[i] as usize] = Some(Box::default());
            }
        }
        let mut inputs = vec![];
        for (i, node) in net.nodes.iter().enumerate() {
            match &node.op {
                Op::Const(v) => {
                    values.put_big(slot[i] as usize, (*v).into());
                }
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
                width: node.width as u32,
                narrow: node.width <= 64 && [Some(a), b, c].into_iter().flatten().all(|x| width(x) <= 64),
                wide: node.width > 128 || [Some(a), b, c].into_iter().flatten().any(|x| width(x) > 128),
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
        let domains = (net.nodes.iter().map(|x| x.domain + 1)).chain(net.memories.iter().map(|m| m.domain + 1)).chain([net.domains.len()]).max().unwrap_or(0);
        let mut regs = vec![vec![]; domains];
        for (i, node) in net.nodes.iter().enumerate() {
            if let Op::Reg { d, enable, reset } = &node.op {
                regs[node.domain].push(RegInstr { node: slot[i], d: r(*d), enable: enable.map_or(NONE, r), reset: *reset, wide: node.width > 128 });
            }
        }
        let mut writes = vec![vec![]; domains];
        for (m, mem) in net.memories.iter().enumerate() {
            if let Some((e, a, d)) = mem.write {
                writes[mem.domain].push(WriteInstr { mem: m, enable: r(e), addr: r(a), data: r(d), chunks: chunks(mem.width) });
            }
        }
        // Everything is evaluated at the first settle.
        let mut dirty = vec![0u64; prog.len().div_ceil(64)];
        let mut dirty_words = vec![0u64; dirty.len().div_ceil(64)];
        for p in 0..prog.len() {
            dirty[p >> 6] |= 1 << (p & 63);
            dirty_words[p >> 12] |= 1 << ((p >> 6) & 63);
        }
        let memories = net.memories.iter().map(|m| vec![0; m.depth * chunks(m.width)]).collect();
        Evaluator { net, prog, slot, fan_start, fan, mem_readers, dirty, dirty_words, regs, writes, next: vec![], next_wide: vec![], pending: vec![], values, inputs, memories }
    }
}

/// 128-bit pieces a memory word of `width` bits is kept in.
pub(super) fn chunks(width: usize) -> usize {
    width.div_ceil(128)
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
