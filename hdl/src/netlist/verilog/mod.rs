//! Verilog-2005 text for a [`Netlist`]: one module per distinct design, children instantiated by
//! name. Ports are grouped (clocks and resets, input streams, output streams, register window,
//! other inputs, status outputs) under comment headers; wires and registers carry the design's
//! names; single-use logic is written inline; every memory carries both vendors' RAM
//! attributes; each clock domain has its own clocked block. Every literal carries its width, so
//! the text is clean under Verilator's width warnings by construction.

mod body;
mod keywords;
mod names;

pub(crate) use names::{derived_names, KEYWORDS};

use std::collections::{HashMap, HashSet};
use std::fmt::Write;
use std::rc::Rc;

use body::Body;
pub use body::InputRef;

use super::domain::Reset;
use super::{Netlist, Op, Wire};

/// A port of a netlist module: a netlist input or output of the same name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Port {
    /// Port name.
    pub name: String,
    /// Width in bits.
    pub width: usize,
    /// An output (`true`) or an input.
    pub output: bool,
}

/// The ports of a netlist module other than clocks and resets, in order of first appearance
/// (inputs, then outputs).
pub fn ports(net: &Netlist) -> Vec<Port> {
    let mut ports: Vec<Port> = vec![];
    let mut add = |name: &str, width: usize, output: bool| {
        assert!(!ports.iter().any(|p| p.name == name), "netlist port `{name}` declared twice");
        ports.push(Port { name: name.to_string(), width, output });
    };
    for node in &net.nodes {
        if let Op::Input(name) = &node.op {
            add(name, node.width, false);
        }
    }
    for o in &net.outputs {
        add(&o.name, net.width(o.wire), true);
    }
    ports
}

/// Every port of a netlist module in the order its Verilog header lists them: each clock and its
/// reset, then the other ports grouped (input streams, output streams, register window, other
/// inputs, status outputs). A parent or a generator that wraps the module reads its interface
/// here rather than from the Verilog text.
pub fn header_ports(net: &Netlist) -> Vec<Port> {
    let clock = |name: String| Port { name, width: 1, output: false };
    let mut out: Vec<Port> = net.domains.iter().flat_map(|d| [clock(d.name.clone()), clock(d.reset_port())]).collect();
    let mut rest = ports(net);
    rest.sort_by_key(group);
    out.extend(rest);
    out
}

/// Port groups, in the order the module lists them.
const GROUPS: [&str; 5] = ["input streams", "output streams", "register window", "inputs", "outputs: status and counters"];

fn group(p: &Port) -> usize {
    if p.name.starts_with("s_axil_") {
        2
    } else if p.name.starts_with("s_axis") {
        0
    } else if p.name.starts_with("m_axis") {
        1
    } else if p.output {
        4
    } else {
        3
    }
}

/// Module texts already written, shared by a whole file.
#[derive(Default)]
struct Registry {
    by_design: HashMap<*const Netlist, String>,
    by_text: HashMap<String, String>,
    names: HashSet<String>,
    texts: Vec<String>,
}

/// The Verilog of `net` as module `name` (clocks and resets first, then the ports grouped),
/// followed by one module per distinct child design, named `<name>_<child module name>`.
/// Panics on a clock-domain crossing without a synchroniser.
pub fn module(net: &Netlist, name: &str) -> String {
    modules(net, name).join("\n")
}

/// The module texts of [`module`]: `name` first, then its children's.
pub fn modules(net: &Netlist, name: &str) -> Vec<String> {
    if let Err(e) = net.check_domains() {
        panic!("{name}: {e}");
    }
    let mut registry = Registry::default();
    let top = module_text(net, name, name, &mut registry);
    std::iter::once(top).chain(registry.texts).collect()
}

fn module_text(net: &Netlist, name: &str, root: &str, registry: &mut Registry) -> String {
    // Children first, so their module names are known.
    let child_names: Vec<String> = net.instances.iter().map(|inst| child_module(&inst.module, &inst.module_name, root, registry)).collect();
    let all = header_ports(net);
    let (clocks, order) = all.split_at(2 * net.domains.len());
    let clocks: Vec<String> = clocks.iter().map(|p| p.name.clone()).collect();
    let header: Vec<String> = all.iter().map(|p| p.name.clone()).collect();
    // One port per line, in the order of the declarations below.
    let mut text = String::new();
    if net.no_inline_children && !child_names.is_empty() {
        // Verilator would inline every child into this module (one copy of its code per
        // instance); kept modules, each is compiled once.
        let mut kept: Vec<&String> = child_names.iter().collect();
        kept.sort();
        kept.dedup();
        text.push_str("`ifdef VERILATOR\n`verilator_config\n");
        for m in kept {
            writeln!(text, "no_inline -module \"{m}\"").unwrap();
        }
        text.push_str("`verilog\n`endif\n\n");
    }
    write!(text, "module {name}(\n{}\n);\n", header.iter().map(|p| format!("    {p}")).collect::<Vec<_>>().join(",\n")).unwrap();
    if net.no_inline {
        text.push_str("    /*verilator no_inline_module*/\n");
    }
    text.push_str("    // clocks and resets\n");
    // A module with no state (a pipeline of zero stages) keeps the clock and reset ports every
    // stream block has, unused.
    let stateless = net.instances.is_empty() && net.memories.is_empty() && !net.nodes.iter().any(|n| matches!(n.op, Op::Reg { .. }));
    // A reset no register takes (pipeline registers have none) and no child receives.
    let reset_unused = |port: &str| {
        net.instances.is_empty()
            && net
                .domains
                .iter()
                .enumerate()
                .any(|(k, d)| d.reset_port() == port && !matches!(d.reset, Reset::Low { .. }) && !net.nodes.iter().any(|n| n.domain == k && matches!(n.op, Op::Reg { reset: Some(_), .. })))
    };
    for c in &clocks {
        if stateless || reset_unused(c) {
            writeln!(text, "    /* verilator lint_off UNUSEDSIGNAL */\n    input wire {c};\n    /* verilator lint_on UNUSEDSIGNAL */").unwrap();
        } else {
            writeln!(text, "    input wire {c};").unwrap();
        }
    }
    // Resets that arrive active-low are registered into the domain's active-high reset.
    for d in net.domains.iter().filter(|d| matches!(d.reset, Reset::Low { .. })) {
        writeln!(text, "    reg {} = 1'b1; // {} registered", d.reset(), d.reset_port()).unwrap();
    }
    let mut taken: HashSet<String> = header.iter().cloned().chain(net.domains.iter().map(|d| d.reset())).collect();
    let memories: Vec<String> = net.memories.iter().map(|m| names::unique(&names::sanitize(&m.name), &mut taken)).collect();
    for inst in &net.instances {
        taken.insert(inst.name.clone());
    }
    let mut inst_wires: Vec<HashMap<String, (String, usize)>> = vec![];
    let mut inst_decls = String::new();
    for inst in &net.instances {
        let mut wires = HashMap::new();
        for p in self::ports(&inst.module).into_iter().filter(|p| p.output) {
            let id = names::unique(&names::sanitize(&format!("{}_{}", inst.name, p.name)), &mut taken);
            writeln!(inst_decls, "wire {}{id};", if p.width == 1 { String::new() } else { format!("[{}:0] ", p.width - 1) }).unwrap();
            wires.insert(p.name.clone(), (id, p.width));
        }
        inst_wires.push(wires);
    }
    let input = |input: &str| InputRef { base: input.to_string(), lo: 0, whole: true };
    let port_nodes = names::port_nodes(net);
    let plan = names::plan(net, &mut taken, &port_nodes);
    let is_reg = |port: &str| port_nodes.iter().any(|(i, p)| p == port && matches!(net.nodes[*i].op, Op::Reg { .. }));
    let partly_read = |port: &str| net.nodes.iter().enumerate().any(|(i, n)| matches!(&n.op, Op::Input(x) if x == port) && plan.partly_read[i]);
    let mut last_group = None;
    for p in order {
        if last_group != Some(group(p)) {
            writeln!(text, "    // {}", GROUPS[group(p)]).unwrap();
            last_group = Some(group(p));
        }
        let range = if p.width == 1 { String::new() } else { format!("[{}:0] ", p.width - 1) };
        let kind = match (p.output, is_reg(&p.name)) {
            (false, _) => "input wire",
            (true, false) => "output wire",
            (true, true) => "output reg",
        };
        let mut decl = format!("{kind} {range}{};", p.name);
        if !p.output && net.pulled_down.contains(&p.name) {
            // Verilator drives every top-level input and ignores a pull on one; event-driven
            // simulators read an undriven `tri0` input as zero rather than unknown.
            decl = format!("`ifdef VERILATOR\n    {decl}\n    `else\n    input tri0 {range}{};\n    `endif", p.name);
        }
        if !p.output && partly_read(&p.name) {
            // Fields of a bus the block does not need (address bits below the word, spare bits).
            writeln!(text, "    /* verilator lint_off UNUSEDSIGNAL */\n    {decl}\n    /* verilator lint_on UNUSEDSIGNAL */").unwrap();
        } else {
            writeln!(text, "    {decl}").unwrap();
        }
    }
    let body = Body { net, plan: &plan, input: &input, inst_wires, memories, states: body::state_users(net), ports: port_nodes.clone() };
    let mut decls = String::new();
    let mut assigns = String::new();
    let mut clocked: Vec<String> = net
        .domains
        .iter()
        .map(|d| match &d.reset {
            Reset::Low { port, reset } => format!("    {reset} <= !{port};\n"),
            _ => String::new(),
        })
        .collect();
    body.write(&mut decls, &mut assigns, &mut clocked);
    decls.push_str(&inst_decls);
    // Datapaths keep only the bits they need of wider intermediate values (the low bits of a
    // product, the top of a shifted significand), so partly-read nets are expected here.
    write!(text, "\n// verilator lint_off UNUSEDSIGNAL\n{decls}// verilator lint_on UNUSEDSIGNAL\n").unwrap();
    text.push_str(&assigns);
    for (k, inst) in net.instances.iter().enumerate() {
        write!(text, "\n// ---- {} ({}) ----\n{} {} (\n", inst.name, inst.module_name, child_names[k], inst.name).unwrap();
        let mut conns: Vec<String> = inst
            .module
            .domains
            .iter()
            .zip(&inst.clocks)
            .flat_map(|(d, parent)| {
                let reset = net.domains.iter().find(|p| p.name == *parent).map(|p| p.reset()).unwrap_or_default();
                [(d.name.clone(), parent.clone()), (d.reset(), reset)]
            })
            .map(|(port, wire)| format!("    .{port}({wire})"))
            .collect();
        for p in self::ports(&inst.module) {
            let value = if p.output {
                body.inst_wires[k][&p.name].0.clone()
            } else {
                let (_, w) = inst.inputs.iter().find(|(n, _)| *n == p.name).expect("every child input is connected");
                body.value(*w)
            };
            conns.push(format!("    .{}({value})", p.name));
        }
        writeln!(text, "{}\n);", conns.join(",\n")).unwrap();
    }
    for (d, block) in clocked.iter().enumerate() {
        if !block.is_empty() {
            write!(text, "\nalways @(posedge {}) begin\n{block}end\n", net.domains[d].name).unwrap();
        }
    }
    text.push('\n');
    for o in &net.outputs {
        if port_nodes.values().any(|p| *p == o.name) {
            continue;
        }
        writeln!(text, "assign {} = {};", o.name, body.value(o.wire)).unwrap();
    }
    text.push_str("endmodule\n");
    text
}

/// The module name of a child design, writing its text the first time.
fn child_module(child: &Rc<Netlist>, module_name: &str, root: &str, registry: &mut Registry) -> String {
    if child.defined_elsewhere {
        return module_name.to_string();
    }
    if let Some(name) = registry.by_design.get(&Rc::as_ptr(child)) {
        return name.clone();
    }
    let text = module_text(child, "__self__", root, registry);
    let name = match registry.by_text.get(&text) {
        Some(name) => name.clone(),
        None => {
            let base = format!("{root}_{}", names::sanitize(module_name));
            let mut name = base.clone();
            let mut k = 2;
            while registry.names.contains(&name) {
                name = format!("{base}_{k}");
                k += 1;
            }
            registry.names.insert(name.clone());
            registry.by_text.insert(text.clone(), name.clone());
            registry.texts.push(text.replacen("module __self__(", &format!("module {name}("), 1));
            name
        }
    };
    registry.by_design.insert(Rc::as_ptr(child), name.clone());
    name
}

/// The body of a single-clock netlist without instances, for a rust-hdl block that wraps it:
/// `input` says where each netlist input comes from. Returns the body and the expressions of
/// `outputs`.
pub fn stream_body(net: &Netlist, input: &dyn Fn(&str) -> InputRef, outputs: &[Wire]) -> (String, Vec<String>) {
    assert!(net.instances.is_empty() && net.domains.len() == 1, "a wrapped netlist has one clock and no instances");
    let mut taken: HashSet<String> = ["clk", "rst", "s_axis", "m_axis"].iter().map(|s| s.to_string()).collect();
    let memories: Vec<String> = net.memories.iter().map(|m| names::unique(&names::sanitize(&m.name), &mut taken)).collect();
    let mut probe = net.clone();
    for (k, w) in outputs.iter().enumerate() {
        probe.output(&format!("__out{k}"), *w);
    }
    let plan = names::plan(&probe, &mut taken, &HashMap::new());
    let body = Body { net: &probe, plan: &plan, input, inst_wires: vec![], memories, states: body::state_users(&probe), ports: HashMap::new() };
    let (mut decls, mut assigns, mut clocked) = (String::new(), String::new(), vec![String::new()]);
    body.write(&mut decls, &mut assigns, &mut clocked);
    let mut text = format!("// verilator lint_off UNUSEDSIGNAL\n{decls}// verilator lint_on UNUSEDSIGNAL\n\n{assigns}");
    if !clocked[0].is_empty() {
        write!(text, "\nalways @(posedge clk) begin\n{}end\n", clocked[0]).unwrap();
    }
    (text, outputs.iter().map(|w| body.expr(*w)).collect())
}
