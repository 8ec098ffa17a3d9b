//! The text of a netlist's body: declarations, continuous assignments, instances, and one
//! clocked block per clock domain.

use std::collections::HashMap;
use std::fmt::Write;

use super::super::eval::comb_operands;
use super::super::{Netlist, Op, Wire};
use super::names::{same_chain, Plan};

/// Longest line of a chain's expression before it is broken.
const WRAP: usize = 100;

pub(super) fn literal(value: u128, width: usize) -> String {
    format!("{width}'h{value:x}")
}

fn range(width: usize) -> String {
    if width == 1 {
        String::new()
    } else {
        format!("[{}:0] ", width - 1)
    }
}

/// Where a netlist input comes from: bits `lo..` of the signal `base` (the whole of it when
/// `whole`).
pub struct InputRef {
    /// Verilog name of the signal.
    pub base: String,
    /// Lowest bit of the signal the input starts at.
    pub lo: usize,
    /// The input is the whole signal: written without a bit select.
    pub whole: bool,
}

pub(super) struct Body<'a> {
    pub net: &'a Netlist,
    pub plan: &'a Plan,
    pub input: &'a dyn Fn(&str) -> InputRef,
    /// Per instance: child output port → (wire in this module, its width).
    pub inst_wires: Vec<HashMap<String, (String, usize)>>,
    /// Per memory: its identifier.
    pub memories: Vec<String>,
    /// Comparisons with a state register and the multiplexers of its next value (by node), with
    /// the state they belong to (an index into the netlist's `states`): their constants are
    /// written as the state's `localparam` names.
    pub states: HashMap<usize, usize>,
    /// Nodes written as output ports of their own name (declared in the module header).
    pub ports: HashMap<usize, String>,
}

/// The nodes whose constant operands are values of a state register: comparisons with it and
/// the multiplexers choosing its next value.
pub(super) fn state_users(net: &Netlist) -> HashMap<usize, usize> {
    let resolve = |mut w: Wire| {
        while let Op::Forward(Some(t)) = net.nodes[w.0].op {
            w = t;
        }
        w
    };
    let mut users = HashMap::new();
    for (s, state) in net.states.iter().enumerate() {
        let width = net.nodes[state.reg.0].width;
        for (i, node) in net.nodes.iter().enumerate() {
            if let Op::Eq(a, b) = node.op {
                if resolve(a) == state.reg || resolve(b) == state.reg {
                    users.insert(i, s);
                }
            }
        }
        let Op::Reg { d, .. } = net.nodes[state.reg.0].op else { continue };
        let mut stack = vec![d];
        while let Some(w) = stack.pop() {
            let w = resolve(w);
            if let Op::Mux(_, a, b) = net.nodes[w.0].op {
                if net.nodes[w.0].width == width && users.insert(w.0, s).is_none() {
                    stack.extend([a, b]);
                }
            }
        }
    }
    users
}

/// `HeaderCheck` → `HEADER_CHECK`.
fn upper_snake(name: &str) -> String {
    let mut out = String::new();
    for (i, c) in name.chars().enumerate() {
        if c.is_ascii_uppercase() && i > 0 && !out.ends_with('_') {
            out.push('_');
        }
        out.push(c.to_ascii_uppercase());
    }
    out
}

impl Body<'_> {
    fn t(&self, w: Wire) -> Wire {
        Wire(self.plan.target[w.0])
    }

    /// The `localparam` name of value `value` of state `s`, if it has one.
    fn state_name(&self, s: usize, value: u128) -> Option<String> {
        let state = &self.net.states[s];
        let reg = self.plan.ids[self.t(state.reg).0].as_ref()?;
        state.names.get(value as usize).map(|v| format!("{}_{}", reg.to_uppercase(), upper_snake(v)))
    }

    /// Operand `x` of node `user`: a state's name where `user` compares or chooses its values.
    fn state_operand(&self, user: Wire, x: Wire) -> String {
        let named = self.states.get(&user.0).and_then(|s| self.net.const_value(self.t(x)).and_then(|v| self.state_name(*s, v)));
        named.unwrap_or_else(|| self.expr(x))
    }

    /// `w` as an operand: its name, a literal, or its expression in parentheses.
    pub fn expr(&self, w: Wire) -> String {
        let w = self.t(w);
        let node = &self.net.nodes[w.0];
        if let Op::Const(v) = node.op {
            return literal(v, node.width);
        }
        if let Some(id) = &self.plan.ids[w.0] {
            return id.clone();
        }
        if let Some((base, lo)) = self.base(w) {
            return index(&base, lo, node.width, self.whole(w));
        }
        format!("({})", self.rhs(w))
    }

    /// `w` where a whole expression stands (an assignment's right-hand side): no parentheses.
    pub fn value(&self, w: Wire) -> String {
        let e = self.expr(w);
        let t = self.t(w);
        if self.plan.ids[t.0].is_none() && e.starts_with('(') && e.ends_with(')') && self.base(t).is_none() && self.net.const_value(t).is_none() {
            self.rhs(t)
        } else {
            e
        }
    }

    /// A signal and bit offset `w` can be indexed through, when it is a slice of one.
    fn base(&self, w: Wire) -> Option<(String, usize)> {
        let w = self.t(w);
        if let Some(id) = &self.plan.ids[w.0] {
            return Some((id.clone(), 0));
        }
        match &self.net.nodes[w.0].op {
            Op::Input(name) => {
                let r = (self.input)(name);
                Some((r.base, r.lo))
            }
            Op::InstanceOutput { inst, port } => Some((self.inst_wires[*inst][port].0.clone(), 0)),
            Op::Slice(a, lo) => self.base(*a).map(|(b, l)| (b, l + lo)),
            _ => None,
        }
    }

    /// Whether `w` is all of its base signal.
    fn whole(&self, w: Wire) -> bool {
        match &self.net.nodes[w.0].op {
            Op::Input(name) => (self.input)(name).whole,
            Op::InstanceOutput { .. } => true,
            _ => false,
        }
    }

    fn bits(&self, a: Wire, lo: usize, width: usize) -> String {
        // Part of a constant (an instance's input tied to one, copied in by flattening): the
        // literal of those bits.
        if let Op::Const(v) = self.net.nodes[self.t(a).0].op {
            return literal(v.checked_shr(lo as u32).unwrap_or(0) & crate::netlist::mask(width), width);
        }
        let (base, off) = self.base(a).unwrap_or_else(|| panic!("netlist node {} is indexed but not declared", a.0));
        index(&base, off + lo, width, false)
    }

    /// The expression a node computes.
    pub fn rhs(&self, w: Wire) -> String {
        let net = self.net;
        let node = &net.nodes[w.0];
        let e = |x: &Wire| self.expr(*x);
        match &node.op {
            Op::Input(_) | Op::InstanceOutput { .. } => {
                let (base, lo) = self.base(w).unwrap();
                index(&base, lo, node.width, self.whole(w))
            }
            Op::Const(v) => literal(*v, node.width),
            Op::Add(a, b) => format!("{} + {}", e(a), e(b)),
            Op::Sub(a, b) => format!("{} - {}", e(a), e(b)),
            Op::Mul(a, b) => {
                let (wa, wb) = (net.width(*a), net.width(*b));
                format!("{{{{{wb}{{1'b0}}}}, {}}} * {{{{{wa}{{1'b0}}}}, {}}}", e(a), e(b))
            }
            Op::And(..) => self.chain(w, " & "),
            Op::Or(..) => self.chain(w, " | "),
            Op::Xor(..) => self.chain(w, " ^ "),
            Op::Not(a) => format!("~{}", e(a)),
            Op::Shl(a, s) => format!("{} << {}", e(a), e(s)),
            Op::Shr(a, s) => format!("{} >> {}", e(a), e(s)),
            Op::Eq(a, b) => format!("{} == {}", self.state_operand(w, *a), self.state_operand(w, *b)),
            Op::Ult(a, b) => format!("{} < {}", e(a), e(b)),
            Op::Slt(a, b) => {
                // Two's-complement order is unsigned order with the sign bits flipped.
                let width = net.width(*a);
                let flip = if width <= 128 { literal(1 << (width - 1), width) } else { format!("{{1'b1, {}}}", literal(0, width - 1)) };
                format!("({} ^ {flip}) < ({} ^ {flip})", e(a), e(b))
            }
            Op::Mux(s, a, b) => format!("{} ? {} : {}", e(s), self.state_operand(w, *a), self.state_operand(w, *b)),
            Op::Concat(..) => format!("{{{}}}", self.chain(w, ", ")),
            Op::Slice(a, lo) => self.bits(*a, *lo, node.width),
            Op::Lzc(a) => {
                // A priority chain: the highest set bit decides.
                let width = net.width(*a);
                let mut text = String::new();
                for bit in (0..width).rev() {
                    write!(text, "{} ? {} : ", self.bits(*a, bit, 1), literal((width - 1 - bit) as u128, node.width)).unwrap();
                }
                text + &literal(width as u128, node.width)
            }
            Op::Parity(a) => format!("^{}", e(a)),
            Op::MemRead { mem, addr } => format!("{}[{}]", self.memories[*mem], e(addr)),
            Op::Forward(Some(a)) => e(a),
            Op::Reg { .. } | Op::Forward(None) => unreachable!("no expression for node {}", w.0),
        }
    }

    /// The operands of the chain of one associative operation ending at `w`, most significant
    /// first, joined by `sep`; a long chain is broken into lines.
    fn chain(&self, w: Wire, sep: &str) -> String {
        let mut parts = vec![];
        self.links(w, &mut parts);
        let mut text = String::new();
        let mut line = 0;
        for (k, part) in parts.iter().enumerate() {
            if k > 0 {
                if line + part.len() > WRAP {
                    text.push_str(sep.trim_end());
                    text.push_str("\n    ");
                    line = 4;
                } else {
                    text.push_str(sep);
                    line += sep.len();
                }
            }
            text.push_str(part);
            line += part.len();
        }
        text
    }

    fn links(&self, w: Wire, parts: &mut Vec<String>) {
        let op = &self.net.nodes[w.0].op;
        for x in comb_operands(op) {
            let t = self.t(x);
            if self.plan.ids[t.0].is_none() && self.net.const_value(t).is_none() && same_chain(&self.net.nodes[t.0].op, op) {
                self.links(t, parts);
            } else {
                parts.push(self.expr(x));
            }
        }
    }

    /// Declarations, assignments and clocked blocks (instances are written by the caller).
    pub fn write(&self, decls: &mut String, assigns: &mut String, clocked: &mut [String]) {
        let net = self.net;
        if !net.states.is_empty() {
            // A state machine's values by name; a value no rule uses is still listed.
            writeln!(decls, "// state encodings\n/* verilator lint_off UNUSEDPARAM */").unwrap();
            for (s, state) in net.states.iter().enumerate() {
                let width = net.nodes[state.reg.0].width;
                for v in 0..state.names.len() {
                    if let Some(name) = self.state_name(s, v as u128) {
                        writeln!(decls, "localparam {}{name} = {};", range(width), literal(v as u128, width)).unwrap();
                    }
                }
            }
            writeln!(decls, "/* verilator lint_on UNUSEDPARAM */").unwrap();
        }
        let mut sections = net.sections.iter().peekable();
        let mut section = None;
        for (i, node) in net.nodes.iter().enumerate() {
            while let Some((at, title)) = sections.peek() {
                if *at > i {
                    break;
                }
                section = Some(title.clone());
                sections.next();
            }
            if !self.plan.live[i] || !self.plan.declared[i] || self.plan.target[i] != i {
                continue;
            }
            if let Some(title) = section.take() {
                writeln!(decls, "// {title}").unwrap();
                writeln!(assigns, "\n// ---- {title} ----").unwrap();
            }
            let id = self.plan.ids[i].as_ref().unwrap();
            let w = Wire(i);
            if let Op::Reg { d, enable, reset } = &node.op {
                let attr = if node.crossing { "(* ASYNC_REG = \"TRUE\" *) " } else { "" };
                if !self.ports.contains_key(&i) {
                    writeln!(decls, "{attr}reg {}{id};", range(node.width)).unwrap();
                }
                let take = match enable {
                    Some(en) => format!("if ({}) {id} <= {};", self.value(*en), self.value(*d)),
                    None => format!("{id} <= {};", self.value(*d)),
                };
                let rst = net.domains[node.domain].reset();
                let state = net.states.iter().position(|s| s.reg == w);
                let line = match reset {
                    Some(r) => format!("    if ({rst}) {id} <= {}; else {take}\n", state.and_then(|s| self.state_name(s, *r)).unwrap_or_else(|| literal(*r, node.width))),
                    None => format!("    {take}\n"),
                };
                clocked[node.domain].push_str(&line);
                continue;
            }
            if !self.ports.contains_key(&i) {
                writeln!(decls, "wire {}{id};", range(node.width)).unwrap();
            }
            writeln!(assigns, "assign {id} = {};", self.rhs(w)).unwrap();
        }
        for (m, mem) in net.memories.iter().enumerate() {
            let name = &self.memories[m];
            // Both vendors' attributes (Vivado reads ram_style, Quartus ramstyle), left to the
            // tools: a read behind a registered address maps to block RAM, others to LUT RAM.
            writeln!(decls, "(* ram_style = \"auto\", ramstyle = \"auto\" *)\nreg [{}:0] {name} [0:{}];", mem.width - 1, mem.depth - 1).unwrap();
            if let Some((e, a, d)) = &mem.write {
                writeln!(clocked[mem.domain], "    if ({}) {name}[{}] <= {};", self.value(*e), self.value(*a), self.value(*d)).unwrap();
            }
        }
    }
}

/// `base[lo +: width]` as Verilog text (`base` itself when `whole`).
fn index(base: &str, lo: usize, width: usize, whole: bool) -> String {
    if whole {
        base.to_string()
    } else if width == 1 {
        format!("{base}[{lo}]")
    } else {
        format!("{base}[{}:{lo}]", lo + width - 1)
    }
}
