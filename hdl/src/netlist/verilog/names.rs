//! Which nodes the Verilog declares, and what they are called.
//!
//! A node is declared (a `wire` or `reg` of its own) when it is a register, carries a name from
//! the design, is used more than once, is indexed by a consumer (Verilog cannot slice an
//! expression), or its expression would be long; every other node is written inline, inside
//! its one consumer. Names come from the design (`name`, register names, the builder's bindings);
//! a declared node without one gets a name derived from its operation and operands
//! (`not_in_frame`, `state_is_2`, `used_lt_replay_words`). A name is suffixed (`_2`, `_3`) only
//! when it collides with another.

use std::collections::{HashMap, HashSet};

use super::super::eval::comb_operands;
use super::super::{Netlist, Op, Wire};
pub(crate) use super::keywords::KEYWORDS;

/// Longest expression written inline (characters, with 20 per operand name).
const INLINE_LIMIT: usize = 120;
/// Longest derived name.
const NAME_LIMIT: usize = 40;

pub(super) struct Plan {
    pub live: Vec<bool>,
    pub declared: Vec<bool>,
    pub ids: Vec<Option<String>>,
    /// `Forward` chains followed to the node that gives the value.
    pub target: Vec<usize>,
    /// Read only in parts (sliced or indexed), or not at all.
    pub partly_read: Vec<bool>,
}

pub(crate) fn sanitize(name: &str) -> String {
    let s: String = name.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' { c } else { '_' }).collect();
    if s.chars().next().is_none_or(|c| c.is_ascii_digit()) {
        format!("n_{s}")
    } else {
        s
    }
}

/// Per node: the node it stands for, forwards followed.
fn forward_targets(net: &Netlist) -> Vec<usize> {
    (0..net.nodes.len())
        .map(|i| {
            let mut t = i;
            while let Op::Forward(Some(x)) = net.nodes[t].op {
                t = x.0;
            }
            t
        })
        .collect()
}

/// The outputs that are a named node of their own name (a register or a value the design named
/// as it named the port): node → port. The module writes such a node as the port itself
/// (`output reg`, or the port's own `assign`), so it needs no second name.
pub(super) fn port_nodes(net: &Netlist) -> HashMap<usize, String> {
    let target = forward_targets(net);
    let mut out = HashMap::new();
    for o in &net.outputs {
        let t = target[o.wire.0];
        let node = &net.nodes[t];
        let own = node.name.as_deref().is_some_and(|n| sanitize(n) == o.name);
        if own && !node.crossing && !matches!(node.op, Op::Input(_) | Op::InstanceOutput { .. } | Op::Const(_)) {
            out.entry(t).or_insert_with(|| o.name.clone());
        }
    }
    out
}

/// `taken`: names already used in the module (ports, memories, instances); `ports`: the nodes
/// written as output ports ([`port_nodes`]).
pub(super) fn plan(net: &Netlist, taken: &mut HashSet<String>, ports: &HashMap<usize, String>) -> Plan {
    let n = net.nodes.len();
    let target = forward_targets(net);
    let live = live_nodes(net);
    let mut uses = vec![0usize; n];
    let mut indexed = vec![false; n];
    let bump = |w: Wire, uses: &mut Vec<usize>| uses[target[w.0]] += 1;
    for (i, node) in net.nodes.iter().enumerate() {
        if !live[i] || matches!(node.op, Op::Forward(_)) {
            continue;
        }
        match &node.op {
            Op::Reg { d, enable, .. } => {
                bump(*d, &mut uses);
                if let Some(e) = enable {
                    bump(*e, &mut uses);
                }
            }
            Op::Slice(a, _) | Op::Lzc(a) => {
                bump(*a, &mut uses);
                indexed[target[a.0]] = true;
            }
            op => comb_operands(op).into_iter().for_each(|w| bump(w, &mut uses)),
        }
    }
    for m in &net.memories {
        if let Some((e, a, d)) = m.write {
            [e, a, d].into_iter().for_each(|w| bump(w, &mut uses));
        }
    }
    for w in net.outputs.iter().map(|o| o.wire).chain(net.instances.iter().flat_map(|i| i.inputs.iter().map(|(_, w)| *w))) {
        bump(w, &mut uses);
    }
    let mut users: Vec<Vec<usize>> = vec![vec![]; n];
    for (i, node) in net.nodes.iter().enumerate() {
        if live[i] {
            let operands = match &node.op {
                Op::Reg { d, enable, .. } => std::iter::once(*d).chain(*enable).collect(),
                op => comb_operands(op),
            };
            for x in operands {
                users[target[x.0]].push(i);
            }
        }
    }
    // Declaration decisions, in dependency order so an operand's decision comes first.
    let mut declared = vec![false; n];
    let mut length = vec![0usize; n];
    for i in super::super::eval::comb_order(net).into_iter().chain((0..n).filter(|i| matches!(net.nodes[*i].op, Op::Reg { .. }))) {
        let node = &net.nodes[i];
        if !live[i] || target[i] != i {
            continue;
        }
        let operand_len = |w: &Wire| if declared[target[w.0]] { 20 } else { length[target[w.0]] };
        length[i] = 4 + comb_operands(&node.op).iter().map(operand_len).sum::<usize>();
        declared[i] = match &node.op {
            Op::Const(_) => false,
            // Ports and instance outputs are signals of their own, indexed where they are used.
            Op::Input(_) | Op::InstanceOutput { .. } => false,
            // A slice is written as an index of its base signal wherever it is used.
            Op::Slice(..) => node.name.is_some(),
            Op::Reg { .. } => true,
            _ if ports.contains_key(&i) => true,
            _ if node.name.is_some() || uses[i] > 1 || indexed[i] => true,
            // A link inside a chain of one operation is written flat in the chain's expression,
            // however long the chain.
            op if users[i].len() == 1 && same_chain(op, &net.nodes[users[i][0]].op) => false,
            _ => length[i] > INLINE_LIMIT,
        };
    }
    let mut ids: Vec<Option<String>> = vec![None; n];
    for i in 0..n {
        if !declared[i] {
            continue;
        }
        if let Some(port) = ports.get(&i) {
            ids[i] = Some(port.clone());
            continue;
        }
        let base = match &net.nodes[i].name {
            Some(name) => sanitize(name),
            None => sanitize(&derive(net, &target, &users, Wire(i))),
        };
        ids[i] = Some(unique(&base, taken));
    }
    let partly_read = (0..n).map(|i| indexed[i] || !live[i]).collect();
    Plan { live, declared, ids, target, partly_read }
}

/// Whether `a` and `b` are the same associative operation, written as one flat expression
/// (`{a, b, c}`, `a | b | c`).
pub(super) fn same_chain(a: &Op, b: &Op) -> bool {
    matches!((a, b), (Op::Concat(..), Op::Concat(..)) | (Op::And(..), Op::And(..)) | (Op::Or(..), Op::Or(..)) | (Op::Xor(..), Op::Xor(..)))
}

/// `base` itself when free, else `base_2`, `base_3`, …; records the choice.
pub(super) fn unique(base: &str, taken: &mut HashSet<String>) -> String {
    let mut name = base.to_string();
    let mut k = 2;
    while taken.contains(&name) || KEYWORDS.contains(&name.as_str()) {
        name = format!("{base}_{k}");
        k += 1;
    }
    taken.insert(name.clone());
    name
}

/// Names for the nodes `wires` as the Verilog would derive them (see [`derive`]); a named node
/// keeps its name.
pub(crate) fn derived_names(net: &Netlist, wires: &[Wire]) -> Vec<String> {
    let n = net.nodes.len();
    let target = forward_targets(net);
    let mut users: Vec<Vec<usize>> = vec![vec![]; n];
    for (i, node) in net.nodes.iter().enumerate() {
        let operands = match &node.op {
            Op::Reg { d, enable, .. } => std::iter::once(*d).chain(*enable).collect(),
            op => comb_operands(op),
        };
        for x in operands {
            users[target[x.0]].push(i);
        }
    }
    wires.iter().map(|w| net.nodes[w.0].name.as_ref().map_or_else(|| sanitize(&derive(net, &target, &users, *w)), |n| sanitize(n))).collect()
}

/// A name for an unnamed node: the name of the value it is computed from (its first operand
/// that is not a constant, followed through unnamed logic) and what it does to it.
fn derive(net: &Netlist, target: &[usize], users: &[Vec<usize>], w: Wire) -> String {
    let node = &net.nodes[target[w.0]];
    let c = |x: &Wire| net.const_value(*x);
    let what = match &node.op {
        Op::Not(_) => "not".to_string(),
        Op::And(..) => "and".into(),
        Op::Or(..) => "or".into(),
        Op::Xor(..) => "xor".into(),
        Op::Add(..) => "plus".into(),
        Op::Sub(..) => "minus".into(),
        Op::Mul(..) => "prod".into(),
        Op::Shl(..) => "shl".into(),
        Op::Shr(..) => "shr".into(),
        Op::Eq(_, b) => match c(b) {
            Some(v) => format!("is{v}"),
            None => "eq".into(),
        },
        Op::Ult(..) | Op::Slt(..) => "lt".into(),
        Op::Mux(..) => "sel".into(),
        Op::Concat(..) => "cat".into(),
        Op::Slice(_, lo) if node.width == 1 => format!("b{lo}"),
        Op::Slice(_, lo) => format!("bits{}_{lo}", lo + node.width - 1),
        Op::Lzc(_) => "lzc".into(),
        Op::Parity(_) => "parity".into(),
        Op::MemRead { mem, .. } => return format!("{}_rd", net.memories[*mem].name),
        Op::Reg { .. } => "q".into(),
        Op::Input(p) | Op::InstanceOutput { port: p, .. } => return p.clone(),
        Op::Const(_) | Op::Forward(_) => "v".into(),
    };
    match source_name(net, target, w, 0) {
        Some(from) => format!("{from}_{what}"),
        None => match user_name(net, target, users, w) {
            Some(to) => format!("{to}_{what}"),
            None => what,
        },
    }
}

/// The name of the nearest named value computed from `w` (breadth first through its users).
fn user_name(net: &Netlist, target: &[usize], users: &[Vec<usize>], w: Wire) -> Option<String> {
    let mut frontier = vec![target[w.0]];
    for _ in 0..8 {
        let mut next = vec![];
        for i in frontier {
            for &u in &users[i] {
                if let Some(name) = &net.nodes[u].name {
                    return Some(format!("for_{}", sanitize(name)));
                }
                next.push(u);
            }
        }
        frontier = next;
    }
    None
}

/// The name of the nearest named value `w` is computed from (first non-constant operands).
fn source_name(net: &Netlist, target: &[usize], w: Wire, depth: usize) -> Option<String> {
    let w = Wire(target[w.0]);
    if depth > 0 {
        if let Op::MemRead { mem, .. } = net.nodes[w.0].op {
            return Some(sanitize(&net.memories[mem].name));
        }
        if let Some(name) = &net.nodes[w.0].name {
            return Some(sanitize(name));
        }
    }
    if depth >= 8 {
        return None;
    }
    let operands = match &net.nodes[w.0].op {
        Op::Reg { d, .. } => vec![*d],
        Op::Mux(_, a, b) => vec![*a, *b],
        op => comb_operands(op),
    };
    let name = operands.iter().filter(|x| net.const_value(**x).is_none()).find_map(|x| source_name(net, target, *x, depth + 1))?;
    // Keep names short: the source's own name, cut at a word boundary.
    Some(if name.len() > NAME_LIMIT { name[..name[..NAME_LIMIT].rfind('_').unwrap_or(NAME_LIMIT)].to_string() } else { name })
}

/// Nodes an output or an instance input depends on (through logic and registers); the rest is
/// not emitted.
pub(super) fn live_nodes(net: &Netlist) -> Vec<bool> {
    let mut live = vec![false; net.nodes.len()];
    let mut stack: Vec<Wire> = net.outputs.iter().map(|o| o.wire).collect();
    stack.extend(net.instances.iter().flat_map(|i| i.inputs.iter().map(|(_, w)| *w)));
    while let Some(w) = stack.pop() {
        if std::mem::replace(&mut live[w.0], true) {
            continue;
        }
        match &net.nodes[w.0].op {
            Op::Reg { d, enable, .. } => {
                stack.push(*d);
                stack.extend(enable);
            }
            Op::MemRead { mem, addr } => {
                stack.push(*addr);
                stack.extend(net.memories[*mem].write.iter().flat_map(|(e, a, d)| [*e, *a, *d]));
            }
            op => stack.extend(comb_operands(op)),
        }
    }
    live
}
