//! Units: parts of a design built inside [`Netlist::enter_unit`] … [`Netlist::leave_unit`] (or
//! `Design::unit`) become child modules of their own when the design is finished
//! ([`Netlist::extract_units`]). The unit is described where it is built, as plain logic; its
//! ports are the values that cross its edge, named after them. The Verilog then shows the
//! router as input units, an allocator and output units, each with its own names, and the
//! built-in simulator flattens them back into the same graph.
//!
//! What belongs to a unit: every node built while it is entered, except module ports (inputs
//! stay with the top) and constants (copied into each module that uses them); a memory read
//! belongs to its memory's unit. A value a unit uses from outside becomes one of its inputs; a
//! value of a unit used outside (by the top, another unit, an output, a memory write or an
//! instance) becomes one of its outputs.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::rc::Rc;

use super::{Memory, Netlist, Node, Op, StateEncoding, Wire};

/// A unit: the instance name in its parent and the child module's name.
#[derive(Clone, Debug)]
pub struct Unit {
    /// Instance name in the parent module.
    pub instance: String,
    /// Module name of the child.
    pub module: String,
}

/// Every operand of `op`, registers' and memory reads' included.
fn operands(op: &Op) -> Vec<Wire> {
    match op {
        Op::Reg { d, enable, .. } => std::iter::once(*d).chain(*enable).collect(),
        Op::Forward(Some(a)) => vec![*a],
        other => super::eval::comb_operands(other),
    }
}

/// `op` with its operands passed through `r` (memories through `mem`); ports, constants and
/// instance outputs are copied as they are.
pub(super) fn remap(op: &Op, r: &mut dyn FnMut(Wire) -> Wire, mem: &dyn Fn(usize) -> usize) -> Op {
    let mut r = |x: &Wire| r(*x);
    match op {
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
        Op::MemRead { mem: m, addr } => Op::MemRead { mem: mem(*m), addr: r(addr) },
        Op::Reg { d, enable, reset } => {
            let d = r(d);
            Op::Reg { d, enable: enable.map(|e| r(&e)), reset: *reset }
        }
        Op::Forward(f) => Op::Forward(f.map(|x| r(&x))),
        Op::Input(_) | Op::Const(_) | Op::InstanceOutput { .. } => op.clone(),
    }
}

/// A port name from `base` (a value's name, or one derived from what computes it), unique in
/// `taken` and never a keyword.
fn port_name(base: &str, taken: &mut HashSet<String>) -> String {
    let base = if base.is_empty() || super::verilog::KEYWORDS.contains(&base) { format!("{base}_v") } else { base.to_string() };
    let mut candidate = base.clone();
    let mut k = 2;
    while !taken.insert(candidate.clone()) {
        candidate = format!("{base}_{k}");
        k += 1;
    }
    candidate
}

impl Netlist {
    /// Nodes and memories built from now on belong to a unit that becomes the child module
    /// `module`, instantiated as `instance`, when the design is finished; returns the unit
    /// entered before (units do not nest as modules: an inner unit is a sibling of the outer
    /// one and takes what is built inside it).
    pub fn enter_unit(&mut self, instance: &str, module: &str) -> Option<usize> {
        // A unit entered again (the same instance) goes on where it left off.
        let index = match self.units.iter().position(|u| u.instance == instance) {
            Some(i) => {
                assert_eq!(self.units[i].module, module, "unit `{instance}` entered again as another module");
                i
            }
            None => {
                self.units.push(Unit { instance: instance.to_string(), module: module.to_string() });
                self.units.len() - 1
            }
        };
        self.unit.replace(index)
    }

    /// Leaves the current unit, back to `previous` (what [`Netlist::enter_unit`] returned).
    pub fn leave_unit(&mut self, previous: Option<usize>) {
        self.unit = previous;
    }

    /// Makes `unit` the current one; returns the one before.
    pub fn set_unit(&mut self, unit: Option<usize>) -> Option<usize> {
        std::mem::replace(&mut self.unit, unit)
    }

    /// The unit a node belongs to, if any.
    fn owner(&self, i: usize) -> Option<usize> {
        let node = &self.nodes[i];
        match node.op {
            Op::Input(_) | Op::Const(_) | Op::InstanceOutput { .. } => None,
            Op::MemRead { mem, .. } => self.memories[mem].unit,
            _ => node.unit,
        }
    }

    /// The same design with every unit made a child instance (see the module docs).
    pub fn extract_units(&self) -> Netlist {
        if self.units.is_empty() {
            return self.clone();
        }
        let n = self.nodes.len();
        let owner: Vec<Option<usize>> = (0..n).map(|i| self.owner(i)).collect();
        // Values each unit must export: owned, and used by something it does not own.
        let mut exported: Vec<BTreeMap<usize, ()>> = vec![BTreeMap::new(); self.units.len()];
        let mut export = |x: Wire, user: Option<usize>| {
            if let Some(u) = owner[x.0] {
                if user != Some(u) {
                    exported[u].insert(x.0, ());
                }
            }
        };
        for (i, node) in self.nodes.iter().enumerate() {
            for x in operands(&node.op) {
                export(x, owner[i]);
            }
        }
        for o in &self.outputs {
            export(o.wire, None);
        }
        for m in &self.memories {
            if let Some((e, a, d)) = m.write {
                for x in [e, a, d] {
                    export(x, m.unit);
                }
            }
        }
        for inst in &self.instances {
            for (_, w) in &inst.inputs {
                export(*w, None);
            }
        }
        if let Some(e) = self.enable {
            export(e, None);
        }

        // Port names: each crossing value's name, or one derived from what computes it.
        let mut crossing: BTreeMap<usize, ()> = exported.iter().flat_map(|e| e.keys().map(|x| (*x, ()))).collect();
        for (i, node) in self.nodes.iter().enumerate() {
            if let Some(u) = owner[i] {
                crossing.extend(operands(&node.op).into_iter().filter(|x| owner[x.0] != Some(u)).map(|x| (x.0, ())));
            }
        }
        for m in self.memories.iter().filter(|m| m.unit.is_some()) {
            if let Some((e, a, d)) = m.write {
                crossing.extend([e, a, d].into_iter().filter(|x| owner[x.0] != m.unit).map(|x| (x.0, ())));
            }
        }
        let crossing: Vec<Wire> = crossing.into_keys().map(Wire).collect();
        let names: HashMap<usize, String> = crossing.iter().map(|w| w.0).zip(super::verilog::derived_names(self, &crossing)).collect();
        let mut parent = Netlist { domains: self.domains.clone(), instances: self.instances.clone(), ..Netlist::default() };
        // Parent wires: own nodes as copied, and placeholders for the units' exports.
        let mut map: Vec<Option<Wire>> = vec![None; n];
        let mut placeholder: HashMap<usize, Wire> = HashMap::new();
        let mut sections = self.sections.iter().peekable();
        for (i, node) in self.nodes.iter().enumerate() {
            if owner[i].is_some() {
                continue;
            }
            while let Some((at, title)) = sections.peek() {
                if *at > i {
                    break;
                }
                parent.sections.push((parent.nodes.len(), title.clone()));
                sections.next();
            }
            parent.nodes.push(Node { unit: None, ..node.clone() });
            map[i] = Some(Wire(parent.nodes.len() - 1));
        }
        for values in &exported {
            for &x in values.keys() {
                let w = self.nodes[x].width;
                parent.nodes.push(Node { op: Op::Forward(None), width: w, stage: 0, name: None, domain: 0, crossing: false, unit: None });
                placeholder.insert(x, Wire(parent.nodes.len() - 1));
            }
        }
        let to_parent = |x: Wire| map[x.0].or_else(|| placeholder.get(&x.0).copied()).expect("a value used outside its unit is exported");
        let parent_memories: Vec<usize> = (0..self.memories.len()).filter(|m| self.memories[*m].unit.is_none()).collect();
        let memory_index = |m: usize| parent_memories.iter().position(|p| *p == m).expect("a parent memory");
        for i in 0..n {
            if let Some(w) = map[i] {
                let op = remap(&self.nodes[i].op, &mut |x| to_parent(x), &memory_index);
                parent.nodes[w.0].op = op;
            }
        }
        for &m in &parent_memories {
            let mut mem = self.memories[m].clone();
            mem.write = mem.write.map(|(e, a, d)| (to_parent(e), to_parent(a), to_parent(d)));
            parent.memories.push(mem);
        }

        for (u, unit) in self.units.iter().enumerate() {
            let owned: Vec<usize> = (0..n).filter(|i| owner[*i] == Some(u)).collect();
            let memories: Vec<usize> = (0..self.memories.len()).filter(|m| self.memories[*m].unit == Some(u)).collect();
            if owned.is_empty() && memories.is_empty() {
                continue;
            }
            // The clock domains the unit uses, in the parent's order.
            let used: Vec<usize> = (0..self.domains.len())
                .filter(|d| owned.iter().any(|i| matches!(self.nodes[*i].op, Op::Reg { .. }) && self.nodes[*i].domain == *d) || memories.iter().any(|m| self.memories[*m].domain == *d))
                .collect();
            let used = if used.is_empty() { vec![0] } else { used };
            let domain_of = |d: usize| used.iter().position(|x| *x == d).unwrap_or(0);
            let mut child = Netlist { domains: used.iter().map(|d| self.domains[*d].clone()).collect(), ..Netlist::default() };
            let mut cmap: HashMap<usize, Wire> = HashMap::new();
            let mut sections = self.sections.iter().peekable();
            for &i in &owned {
                while let Some((at, title)) = sections.peek() {
                    if *at > i {
                        break;
                    }
                    // A title lands in the module of the first node built after it.
                    child.sections.push((child.nodes.len(), title.clone()));
                    sections.next();
                }
                let node = &self.nodes[i];
                let domain = if matches!(node.op, Op::Reg { .. }) { domain_of(node.domain) } else { 0 };
                child.nodes.push(Node { unit: None, domain, ..node.clone() });
                cmap.insert(i, Wire(child.nodes.len() - 1));
            }
            // Inputs: values from outside, each once, named after them.
            let mut taken: HashSet<String> = HashSet::new();
            let mut inputs: Vec<(String, Wire)> = vec![];
            let mut input_of: HashMap<usize, Wire> = HashMap::new();
            let mut consts: HashMap<(u128, usize), Wire> = HashMap::new();
            let mut to_child = |x: Wire, child: &mut Netlist| -> Wire {
                if let Some(w) = cmap.get(&x.0) {
                    return *w;
                }
                if let Op::Const(v) = self.nodes[x.0].op {
                    let width = self.nodes[x.0].width;
                    return *consts.entry((v, width)).or_insert_with(|| {
                        child.nodes.push(Node { op: Op::Const(v), width, stage: 0, name: None, domain: 0, crossing: false, unit: None });
                        Wire(child.nodes.len() - 1)
                    });
                }
                *input_of.entry(x.0).or_insert_with(|| {
                    let name = port_name(&names[&x.0], &mut taken);
                    child.nodes.push(Node { op: Op::Input(name.clone()), width: self.nodes[x.0].width, stage: 0, name: Some(name.clone()), domain: 0, crossing: false, unit: None });
                    let w = Wire(child.nodes.len() - 1);
                    inputs.push((name, x));
                    w
                })
            };
            let child_memory = |m: usize| memories.iter().position(|x| *x == m).expect("a memory read belongs to its memory's unit");
            for &i in &owned {
                let op = remap(&self.nodes[i].op, &mut |x| to_child(x, &mut child), &child_memory);
                let w = cmap[&i];
                child.nodes[w.0].op = op;
            }
            for &m in &memories {
                let mut mem = Memory { unit: None, domain: domain_of(self.memories[m].domain), ..self.memories[m].clone() };
                mem.write = mem.write.map(|(e, a, d)| (to_child(e, &mut child), to_child(a, &mut child), to_child(d, &mut child)));
                child.memories.push(mem);
            }
            let mut ports: Vec<(String, usize)> = vec![];
            for &x in exported[u].keys() {
                let name = port_name(&names[&x], &mut taken);
                child.outputs.push(super::Output { name: name.clone(), wire: cmap[&x] });
                ports.push((name, x));
            }
            child.states = self.states.iter().filter(|s| owner[s.reg.0] == Some(u)).map(|s| StateEncoding { reg: cmap[&s.reg.0], names: s.names.clone() }).collect();
            let clocks: Vec<String> = child.domains.iter().map(|d| d.name.clone()).collect();
            let source: HashMap<String, Wire> = inputs.iter().map(|(p, x)| (p.clone(), to_parent(*x))).collect();
            let outputs = parent
                .instance_clocked(&Rc::new(child), &unit.module, &unit.instance, &|p| source.get(p).copied(), &|c| clocks.iter().find(|x| *x == c).cloned().unwrap_or_else(|| c.to_string()))
                .unwrap_or_else(|e| panic!("unit {}: {e}", unit.instance));
            for (name, x) in ports {
                parent.nodes[placeholder[&x].0].op = Op::Forward(Some(outputs[&name]));
            }
        }
        parent.outputs = self.outputs.iter().map(|o| super::Output { name: o.name.clone(), wire: to_parent(o.wire) }).collect();
        parent.instances.iter_mut().take(self.instances.len()).for_each(|inst| inst.inputs.iter_mut().for_each(|(_, w)| *w = to_parent(*w)));
        parent.states = self.states.iter().filter(|s| owner[s.reg.0].is_none()).map(|s| StateEncoding { reg: to_parent(s.reg), names: s.names.clone() }).collect();
        parent.enable = self.enable.map(to_parent);
        parent
    }
}
