//! Child designs inside a netlist. [`Netlist::instance`] keeps a child as an instance: the
//! Verilog defines the child module once and instantiates it, and the built-in simulator
//! flattens it ([`Netlist::flatten`]). [`Netlist::instantiate`] copies a child's nodes into the
//! parent instead (for small helpers whose logic should merge with the parent's).

use std::collections::HashMap;

use crate::Error;
use std::rc::Rc;

use super::units::remap;
use super::{Memory, Netlist, Op, Wire};

/// One child design kept as a module instance.
#[derive(Clone, Debug)]
pub struct Instance {
    /// Instance name in the parent (`link_xp`).
    pub name: String,
    /// Module name of the child, before the export prefixes it with the top's (`link`).
    pub module_name: String,
    /// The child design, shared by all its instances.
    pub module: Rc<Netlist>,
    /// Each child input (by its input name) and the parent wire driving it.
    pub inputs: Vec<(String, Wire)>,
    /// The parent's clock domain of each child domain (same order as the child's `domains`).
    pub clocks: Vec<String>,
}

impl Netlist {
    /// Keeps `child` as an instance called `name` of module `module_name`. Every child input must
    /// be given by `connect` (by input name), with its width; returns the child's outputs by name
    /// as parent wires. The child's clock domains are wired by name to the parent's (a child
    /// domain the parent lacks is added to it).
    pub fn instance(&mut self, child: &Rc<Netlist>, module_name: &str, name: &str, connect: &dyn Fn(&str) -> Option<Wire>) -> Result<HashMap<String, Wire>, Error> {
        self.instance_clocked(child, module_name, name, connect, &|clock| clock.to_string())
    }

    /// [`Netlist::instance`], with each child clock domain wired to the parent's domain `clock`
    /// names (a clock port name ending in `clk`; its reset follows): e.g. a link endpoint's
    /// `rx_clk` to the node's `xp_rx_clk`.
    pub fn instance_clocked(
        &mut self,
        child: &Rc<Netlist>,
        module_name: &str,
        name: &str,
        connect: &dyn Fn(&str) -> Option<Wire>,
        clock: &dyn Fn(&str) -> String,
    ) -> Result<HashMap<String, Wire>, Error> {
        let mut inputs = vec![];
        for node in &child.nodes {
            if let Op::Input(port) = &node.op {
                let w = connect(port).ok_or_else(|| Error::Design(format!("{name} ({module_name}): input `{port}` is not connected")))?;
                if self.width(w) != node.width {
                    return Err(Error::Design(format!("{name} ({module_name}): input `{port}` is {} bits, connected to {} bits", node.width, self.width(w))));
                }
                inputs.push((port.clone(), w));
            }
        }
        let clocks: Vec<String> = child.domains.iter().map(|d| clock(&d.name)).collect();
        for c in &clocks {
            self.domain_named(c);
        }
        let inst = self.instances.len();
        self.instances.push(Instance { name: name.to_string(), module_name: module_name.to_string(), module: child.clone(), inputs, clocks });
        let mut outputs = HashMap::new();
        for o in &child.outputs {
            let width = child.width(o.wire);
            let stage = self.stage();
            let w = self.push(Op::InstanceOutput { inst, port: o.name.clone() }, width, stage, Some(format!("{name}_{}", o.name)));
            outputs.insert(o.name.clone(), w);
        }
        Ok(outputs)
    }

    /// Keeps `child`, a pipeline of `latency` stages (every path through it `latency`
    /// registers long, as [`crate::float::FloatOperator::module`] builds), as an instance in
    /// this netlist's pipeline: each of `inputs` is first brought to the stage of the latest,
    /// the child's input `ce` (when it has one) takes this pipeline's enable, and the outputs
    /// are placed `latency` stages later. The instance name is `name`, or `name_2`, … when
    /// taken.
    pub fn stage_instance(&mut self, child: &Rc<Netlist>, module_name: &str, name: &str, inputs: &[(&str, Wire)], latency: usize) -> Result<HashMap<String, Wire>, Error> {
        let wires: Vec<Wire> = inputs.iter().map(|(_, w)| *w).collect();
        self.start_after(&wires);
        let start = self.stage;
        let mut connect: HashMap<String, Wire> = inputs.iter().map(|(p, w)| (p.to_string(), self.at_stage(*w))).collect();
        let enable = match self.enable {
            Some(e) => e,
            None => self.constant(1, 1),
        };
        connect.insert("ce".into(), enable);
        let mut unique = name.to_string();
        let mut k = 2;
        while self.instances.iter().any(|i| i.name == unique) {
            unique = format!("{name}_{k}");
            k += 1;
        }
        let outputs = self.instance(child, module_name, &unique, &|port| connect.get(port).copied())?;
        for w in outputs.values() {
            self.nodes[w.0].stage = start + latency;
        }
        self.stage = start + latency;
        Ok(outputs)
    }

    /// Whether nodes built now belong to a unit (see [`super::units`]).
    pub fn in_unit(&self) -> bool {
        self.unit.is_some()
    }

    /// The same design with every instance copied in (names prefixed with the instance path,
    /// `<instance>.`, as a waveform viewer shows them): what the built-in simulator evaluates. Wires of this netlist keep their indices.
    pub fn flatten(&self) -> Netlist {
        if self.instances.is_empty() {
            return self.clone();
        }
        let mut flat = self.clone();
        flat.instances.clear();
        for (i, inst) in self.instances.iter().enumerate() {
            let child = inst.module.flatten();
            let inputs: HashMap<&str, Wire> = inst.inputs.iter().map(|(p, w)| (p.as_str(), *w)).collect();
            let outputs = flat.instantiate_in(&child, &format!("{}.", inst.name), &|port| inputs.get(port).copied(), &inst.clocks).expect("instance inputs were checked when it was made");
            for node in flat.nodes.iter_mut() {
                if let Op::InstanceOutput { inst, port } = &node.op {
                    if *inst == i {
                        node.op = Op::Forward(Some(outputs[port]));
                    }
                }
            }
        }
        flat
    }

    /// Copies `child` into this netlist: every node and memory of it, named with `prefix`.
    /// The child's inputs take the wires `connect` gives (by input name; every input must be
    /// given, widths equal); returns the child's outputs by name. Stages are not balanced
    /// across the boundary: the child is state-machine logic, not a pipeline stage. The child
    /// must have no instances of its own (flatten it first).
    pub fn instantiate(&mut self, child: &Netlist, prefix: &str, connect: &dyn Fn(&str) -> Option<Wire>) -> Result<HashMap<String, Wire>, Error> {
        let clocks: Vec<String> = child.domains.iter().map(|d| d.name.clone()).collect();
        self.instantiate_in(child, prefix, connect, &clocks)
    }

    /// [`Netlist::instantiate`] with child domain `k` in the parent's domain `clocks[k]`.
    fn instantiate_in(&mut self, child: &Netlist, prefix: &str, connect: &dyn Fn(&str) -> Option<Wire>, clocks: &[String]) -> Result<HashMap<String, Wire>, Error> {
        assert!(child.instances.is_empty(), "instantiate copies a flat child: flatten it first");
        let domains: Vec<usize> = clocks.iter().map(|c| self.domain_named(c)).collect();
        let mut map: Vec<Wire> = Vec::with_capacity(child.nodes.len());
        let memory_base = self.memories.len();
        for m in &child.memories {
            self.memories.push(Memory { name: format!("{prefix}{}", m.name), write: None, domain: domains[m.domain], unit: self.unit, ..m.clone() });
        }
        let stage = self.stage();
        // Forward references inside the child are resolved once every node exists.
        let mut forwards = vec![];
        for (i, node) in child.nodes.iter().enumerate() {
            let name = node.name.as_ref().map(|n| format!("{prefix}{n}"));
            let op = match &node.op {
                Op::Input(port) => {
                    let w = connect(port).ok_or_else(|| Error::Design(format!("{prefix}: input `{port}` is not connected")))?;
                    if self.width(w) != node.width {
                        return Err(Error::Design(format!("{prefix}: input `{port}` is {} bits, connected to {} bits", node.width, self.width(w))));
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
            let w = self.push(op, node.width, stage, name);
            self.nodes[w.0].domain = domains[node.domain];
            self.nodes[w.0].crossing = node.crossing;
            map.push(w);
        }
        // Rewrite operands now that every child node has a parent wire.
        for (i, node) in child.nodes.iter().enumerate() {
            if matches!(node.op, Op::Input(_) | Op::Const(_) | Op::Forward(_)) {
                continue;
            }
            let w = map[i];
            self.nodes[w.0].op = remap(&node.op, &mut |x| map[x.0], &|m| memory_base + m);
        }
        for (i, target) in forwards {
            self.nodes[map[i].0].op = Op::Forward(Some(map[target.0]));
        }
        for (k, m) in child.memories.iter().enumerate() {
            if let Some((e, a, d)) = m.write {
                self.memories[memory_base + k].write = Some((map[e.0], map[a.0], map[d.0]));
            }
        }
        self.states.extend(child.states.iter().map(|s| super::StateEncoding { reg: map[s.reg.0], names: s.names.clone() }));
        Ok(child.outputs.iter().map(|o| (o.name.clone(), map[o.wire.0])).collect())
    }
}
