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
                if node.width == 1 {
                    format!("{a_id}[{lo}]")
                } else {
                    format!("{a_id}[{}:{lo}]", lo + node.width - 1)
                }
            }
            Op::Lzc(a) => lzc_chain(&id(a), net.width(*a), node.width),
            Op::Forward(Some(a)) => id(a),
            Op::Forward(None) => panic!("netlist forward node {i} never resolved"),
        };
        writeln!(decls, "wire {range}{name};").unwrap();
        writeln!(assigns, "assign {name} = {expr};").unwrap();
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
