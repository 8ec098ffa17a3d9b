//! Verilog-2005 text for a [`Netlist`]: declarations first, then one continuous assignment per
//! node and one clocked block for the registers. Every literal carries its width, so the text is
//! clean under Verilator's width warnings by construction.

use std::fmt::Write;

use super::{Netlist, Op, Wire};

fn literal(value: u128, width: usize) -> String {
    format!("{width}'h{value:x}")
}

fn sanitize(name: &str) -> String {
    name.chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '_' }).collect()
}

/// Verilog identifier (or literal, for constants) of a node.
pub fn identifier(net: &Netlist, w: Wire) -> String {
    let node = &net.nodes[w.0];
    match (&node.op, &node.name) {
        (Op::Const(v), _) => literal(*v, node.width),
        (_, Some(name)) => format!("{}_{}", sanitize(name), w.0),
        (_, None) => format!("n{}", w.0),
    }
}

/// The netlist's body. `input` gives the Verilog expression of each named input; `clk` and `rst`
/// are the clock and synchronous-reset names.
pub fn body(net: &Netlist, input: &dyn Fn(&str) -> String, clk: &str, rst: &str) -> String {
    let id = |w: &Wire| identifier(net, *w);
    let mut decls = String::new();
    let mut assigns = String::new();
    let mut clocked = String::new();
    let live = live_nodes(net);
    for (i, node) in net.nodes.iter().enumerate() {
        if !live[i] {
            continue;
        }
        let w = Wire(i);
        let name = id(&w);
        let range = if node.width == 1 { String::new() } else { format!("[{}:0] ", node.width - 1) };
        let expr = match &node.op {
            Op::Const(_) => continue,
            Op::Reg { d, enable, reset } => {
                writeln!(decls, "reg {range}{name};").unwrap();
                let take = match enable {
                    Some(e) => format!("if ({}) {name} <= {};", id(e), id(d)),
                    None => format!("{name} <= {};", id(d)),
                };
                match reset {
                    Some(r) => writeln!(clocked, "    if ({rst}) {name} <= {}; else {take}", literal(*r, node.width)),
                    None => writeln!(clocked, "    {take}"),
                }
                .unwrap();
                continue;
            }
            Op::Input(port) => input(port),
            Op::Add(a, b) => format!("{} + {}", id(a), id(b)),
            Op::Sub(a, b) => format!("{} - {}", id(a), id(b)),
            Op::Mul(a, b) => {
                let (wa, wb) = (net.width(*a), net.width(*b));
                format!("{{{{{wb}{{1'b0}}}}, {}}} * {{{{{wa}{{1'b0}}}}, {}}}", id(a), id(b))
            }
            Op::And(a, b) => format!("{} & {}", id(a), id(b)),
            Op::Or(a, b) => format!("{} | {}", id(a), id(b)),
            Op::Xor(a, b) => format!("{} ^ {}", id(a), id(b)),
            Op::Not(a) => format!("~{}", id(a)),
            Op::Shl(a, s) => format!("{} << {}", id(a), id(s)),
            Op::Shr(a, s) => format!("{} >> {}", id(a), id(s)),
            Op::Eq(a, b) => format!("{} == {}", id(a), id(b)),
            Op::Ult(a, b) => format!("{} < {}", id(a), id(b)),
            Op::Slt(a, b) => {
                // Two's-complement order is unsigned order with the sign bits flipped (no
                // `$signed`, which the export's identifier clean-up would not survive).
                let flip = literal(1 << (net.width(*a) - 1), net.width(*a));
                format!("({} ^ {flip}) < ({} ^ {flip})", id(a), id(b))
            }
            Op::Mux(s, a, b) => format!("{} ? {} : {}", id(s), id(a), id(b)),
            Op::Concat(h, l) => format!("{{{}, {}}}", id(h), id(l)),
            Op::Slice(a, lo) => {
                let a_id = id(a);
                // A literal cannot be indexed in Verilog: slice the constant here.
                if let Op::Const(v) = net.nodes[a.0].op {
                    let mask = if node.width >= 128 { u128::MAX } else { (1u128 << node.width) - 1 };
                    literal((v >> lo) & mask, node.width)
                } else if node.width == 1 {
                    format!("{a_id}[{lo}]")
                } else {
                    format!("{a_id}[{}:{lo}]", lo + node.width - 1)
                }
            }
            Op::Lzc(a) => lzc_chain(&id(a), net.width(*a), node.width),
            Op::Parity(a) => format!("^{}", id(a)),
            Op::MemRead { mem, addr } => format!("{}[{}]", memory_name(net, *mem), id(addr)),
            Op::Forward(Some(a)) => id(a),
            Op::Forward(None) => panic!("netlist forward node {i} never resolved"),
        };
        writeln!(decls, "wire {range}{name};").unwrap();
        writeln!(assigns, "assign {name} = {expr};").unwrap();
    }
    for (m, mem) in net.memories.iter().enumerate() {
        let name = memory_name(net, m);
        writeln!(decls, "reg [{}:0] {name} [0:{}];", mem.width - 1, mem.depth - 1).unwrap();
        if let Some((e, a, d)) = &mem.write {
            writeln!(clocked, "    if ({}) {name}[{}] <= {};", id(e), id(a), id(d)).unwrap();
        }
    }
    // Datapaths keep only the bits they need of wider intermediate values (the low bits of a
    // product, the top of a shifted significand), so partly-read nets are expected here.
    let mut out = format!("// verilator lint_off UNUSEDSIGNAL\n{decls}// verilator lint_on UNUSEDSIGNAL\n");
    out.push('\n');
    out.push_str(&assigns);
    if !clocked.is_empty() {
        writeln!(out, "\nalways @(posedge {clk}) begin\n{clocked}end").unwrap();
    }
    out
}

fn memory_name(net: &Netlist, mem: usize) -> String {
    format!("{}_mem{mem}", sanitize(&net.memories[mem].name))
}

/// Nodes an output depends on (through logic and registers); the rest is not emitted.
fn live_nodes(net: &Netlist) -> Vec<bool> {
    let mut live = vec![false; net.nodes.len()];
    let mut stack: Vec<Wire> = net.outputs.iter().map(|o| o.wire).collect();
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
            op => stack.extend(super::eval::comb_operands(op)),
        }
    }
    live
}

/// Leading-zero count as a priority chain: the highest set bit decides.
fn lzc_chain(a: &str, width: usize, count_width: usize) -> String {
    let mut text = String::new();
    for bit in (0..width).rev() {
        write!(text, "{a}[{bit}] ? {} : ", literal((width - 1 - bit) as u128, count_width)).unwrap();
    }
    text.push_str(&literal(width as u128, count_width));
    text
}

/// A port of a netlist module: netlist inputs and outputs named `port` or `port@<lo>` (a slice
/// starting at bit `lo`) bind to it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Port {
    pub name: String,
    pub width: usize,
    pub output: bool,
}

fn split_port(name: &str) -> (&str, usize) {
    match name.split_once('@') {
        Some((port, lo)) => (port, lo.parse().unwrap_or_else(|_| panic!("netlist port slice `{name}`"))),
        None => (name, 0),
    }
}

/// The ports of a netlist module, in order of first appearance (inputs, then outputs).
pub fn ports(net: &Netlist) -> Vec<Port> {
    let mut ports: Vec<Port> = vec![];
    let mut add = |name: &str, width: usize, output: bool| {
        let (port, lo) = split_port(name);
        match ports.iter_mut().find(|p| p.name == port) {
            Some(p) => {
                assert_eq!(p.output, output, "port `{port}` is both input and output");
                p.width = p.width.max(lo + width);
            }
            None => ports.push(Port { name: port.to_string(), width: lo + width, output }),
        }
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

/// A whole Verilog module `name(clk, rst, ports…)` for a netlist whose inputs and outputs name
/// its ports; output bits no netlist output covers are driven to zero.
pub fn module(net: &Netlist, name: &str) -> String {
    let ports = ports(net);
    let mut text = format!("module {name}(clk,rst,{});\n", ports.iter().map(|p| p.name.as_str()).collect::<Vec<_>>().join(","));
    text.push_str("    input wire clk;\n    input wire rst;\n");
    for p in &ports {
        let range = if p.width == 1 { String::new() } else { format!("[{}:0] ", p.width - 1) };
        writeln!(text, "    {} wire {range}{};", if p.output { "output" } else { "input" }, p.name).unwrap();
    }
    let width_of = |port: &str| ports.iter().find(|p| p.name == port).unwrap().width;
    let input = |input: &str| {
        let (port, lo) = split_port(input);
        let width = net.nodes.iter().find(|n| matches!(&n.op, Op::Input(i) if i == input)).unwrap().width;
        if width == width_of(port) {
            port.to_string()
        } else if width == 1 {
            format!("{port}[{lo}]")
        } else {
            format!("{port}[{}:{lo}]", lo + width - 1)
        }
    };
    text.push('\n');
    text.push_str(&body(net, &input, "clk", "rst"));
    text.push('\n');
    for p in ports.iter().filter(|p| p.output) {
        let mut pieces: Vec<(usize, Wire)> = net
            .outputs
            .iter()
            .filter(|o| split_port(&o.name).0 == p.name)
            .map(|o| (split_port(&o.name).1, o.wire))
            .collect();
        pieces.sort();
        let mut parts = vec![];
        let mut next = 0;
        for (lo, w) in pieces {
            assert!(lo >= next, "overlapping slices of output `{}`", p.name);
            if lo > next {
                parts.push(format!("{}'h0", lo - next));
            }
            parts.push(identifier(net, w));
            next = lo + net.width(w);
        }
        if next < p.width {
            parts.push(format!("{}'h0", p.width - next));
        }
        parts.reverse();
        let value = if parts.len() == 1 { parts.pop().unwrap() } else { format!("{{{}}}", parts.join(", ")) };
        writeln!(text, "assign {} = {value};", p.name).unwrap();
    }
    text.push_str("endmodule\n");
    text
}
