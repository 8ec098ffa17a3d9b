//! Waveforms of the built-in simulator as a Value Change Dump (IEEE 1364 §18), for GTKWave or
//! any VCD reader.
//!
//! Traced: the ports and every named node. A flattened instance's nodes carry their instance path (`a.b.name`),
//! which becomes nested `$scope module` sections, so the viewer shows the same hierarchy as
//! the generated Verilog. The simulator is cycle-based: each sample is one clock cycle of
//! `period_ns`, with `clk` drawn high for its first half.

use std::collections::BTreeMap;
use std::io::{self, Write};

use super::{Netlist, Op, Wire};

/// One traced variable.
struct Var {
    code: String,
    width: usize,
    wire: Wire,
}

/// A scope: its variables (leaf name → index into [`Vcd::vars`]) and child scopes.
#[derive(Default)]
struct Scope {
    vars: BTreeMap<String, usize>,
    children: BTreeMap<String, Scope>,
}

/// A VCD being written: [`Vcd::new`] writes the header, [`Vcd::sample`] one cycle.
pub struct Vcd<W: Write> {
    out: W,
    vars: Vec<Var>,
    last: Vec<String>,
    clk: String,
    period_ns: u64,
    cycle: u64,
}

/// The short identifier VCD uses for variable `n` (printable ASCII `!`..`~`, base 94).
fn code(mut n: usize) -> String {
    let mut s = String::new();
    loop {
        s.push((b'!' + (n % 94) as u8) as char);
        n /= 94;
        if n == 0 {
            return s;
        }
        n -= 1;
    }
}

impl<W: Write> Vcd<W> {
    /// Writes the header for a flat netlist `net` (top scope `top`); samples follow.
    pub fn new(mut out: W, net: &Netlist, top: &str, period_ns: u64) -> io::Result<Vcd<W>> {
        let mut root = Scope::default();
        let mut vars: Vec<Var> = vec![];
        let mut add = |scope: &mut Scope, leaf: &str, wire: Wire| {
            if !scope.vars.contains_key(leaf) {
                scope.vars.insert(leaf.to_string(), vars.len());
                vars.push(Var { code: code(vars.len() + 1), width: net.width(wire), wire });
            }
        };
        // Ports first.
        let mut ports: BTreeMap<String, Wire> = BTreeMap::new();
        for (i, node) in net.nodes.iter().enumerate() {
            if let Op::Input(name) = &node.op {
                ports.insert(name.clone(), Wire(i));
            }
        }
        for o in &net.outputs {
            ports.insert(o.name.clone(), o.wire);
        }
        for (name, wire) in ports {
            add(&mut root, &name, wire);
        }
        for (i, node) in net.nodes.iter().enumerate() {
            let Some(name) = &node.name else { continue };
            if matches!(node.op, Op::Input(_) | Op::Const(_)) {
                continue;
            }
            let mut path: Vec<&str> = name.split('.').collect();
            let leaf = path.pop().unwrap();
            let scope = path.iter().fold(&mut root, |s, p| s.children.entry(p.to_string()).or_default());
            add(scope, leaf, Wire(i));
        }
        let clk = code(0);
        writeln!(out, "$date weft built-in simulator $end")?;
        writeln!(out, "$version weft {} $end", env!("CARGO_PKG_VERSION"))?;
        writeln!(out, "$timescale 1ns $end")?;
        writeln!(out, "$scope module {top} $end")?;
        writeln!(out, "$var wire 1 {clk} clk $end")?;
        write_scope(&mut out, &root, &vars)?;
        writeln!(out, "$upscope $end")?;
        writeln!(out, "$enddefinitions $end")?;
        let last = vec![String::new(); vars.len()];
        Ok(Vcd { out, vars, last, clk, period_ns: period_ns.max(2), cycle: 0 })
    }

    /// Records the settled values of this cycle (call before the clock edge); only changes are
    /// written. `value` gives a wire's value as binary digits, most significant first, as many
    /// as its width.
    pub fn sample(&mut self, value: &dyn Fn(Wire) -> String) -> io::Result<()> {
        let t = self.cycle * self.period_ns;
        writeln!(self.out, "#{t}")?;
        writeln!(self.out, "1{}", self.clk)?;
        for (k, var) in self.vars.iter().enumerate() {
            let bits = value(var.wire);
            debug_assert_eq!(bits.len(), var.width);
            if self.last[k] == bits {
                continue;
            }
            if var.width == 1 {
                writeln!(self.out, "{bits}{}", var.code)?;
            } else {
                writeln!(self.out, "b{bits} {}", var.code)?;
            }
            self.last[k] = bits;
        }
        writeln!(self.out, "#{}", t + self.period_ns / 2)?;
        writeln!(self.out, "0{}", self.clk)?;
        self.cycle += 1;
        Ok(())
    }

    /// Flushes the file and gives the writer back.
    pub fn finish(mut self) -> io::Result<W> {
        writeln!(self.out, "#{}", self.cycle * self.period_ns)?;
        self.out.flush()?;
        Ok(self.out)
    }
}

fn write_scope<W: Write>(out: &mut W, scope: &Scope, vars: &[Var]) -> io::Result<()> {
    for (name, &k) in &scope.vars {
        let v = &vars[k];
        let range = if v.width > 1 { format!(" [{}:0]", v.width - 1) } else { String::new() };
        writeln!(out, "$var wire {} {} {name}{range} $end", v.width, v.code)?;
    }
    for (name, child) in &scope.children {
        writeln!(out, "$scope module {name} $end")?;
        write_scope(out, child, vars)?;
        writeln!(out, "$upscope $end")?;
    }
    Ok(())
}
