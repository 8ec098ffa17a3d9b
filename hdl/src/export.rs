//! Verilog export: turns rust-hdl's netlist text into files that follow weft's conventions.
//!
//! rust-hdl emits a module `top`, one module per child instance named by its path
//! (`top$child$dff`) and port names with `$` (`s_axis$tdata`). Export
//! - renames the top to the module's public name and every submodule to `<top>_<path>`;
//! - replaces `$` in identifiers with `_`;
//! - merges submodules whose text is identical (every register of one width, every repeated
//!   block), so a design that repeats a block defines it once and instantiates it;
//! - ties off the optional stream signals the module does not expose;
//! - writes a header with the generator version and parameters (never a timestamp).

use rust_hdl::prelude::*;
use std::collections::BTreeMap;
use std::fmt;

/// What the public netlist of one exported module is called and carries.
#[derive(Clone, Debug)]
pub struct ModuleSpec {
    /// Folder under `generated/`: `axis`, `fp`, `kernels`, `system`.
    pub family: &'static str,
    /// Public module name (also the file name).
    pub name: String,
    /// One line summary for the header.
    pub summary: String,
    /// Parameters, listed in the header in this order.
    pub parameters: Vec<(String, String)>,
    /// Top-level ports rust-hdl emits that the public module does not have (optional stream
    /// signals): inputs are tied to zero, outputs left unconnected.
    pub hidden_ports: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExportError(pub String);

impl From<crate::Error> for ExportError {
    fn from(e: crate::Error) -> ExportError {
        ExportError(e.to_string())
    }
}

impl fmt::Display for ExportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ExportError {}

/// Builds the public Verilog text of `block` according to `spec`.
pub fn export<B: Block>(spec: &ModuleSpec, block: &mut B) -> Result<String, ExportError> {
    block.connect_all();
    check_all(block).map_err(|e| ExportError(format!("{}: structural check failed: {e:?}", spec.name)))?;
    let raw = generate_verilog_unchecked(block);
    finish(spec, &raw)
}

/// The public Verilog text of a netlist module (ports named by its inputs and outputs, see
/// [`crate::netlist::verilog::module`]), written directly under the spec's name: a hidden input
/// is a constant zero in the design and a hidden output is not an output, so the text is never
/// rewritten afterwards.
pub fn export_netlist(spec: &ModuleSpec, net: &crate::netlist::Netlist) -> Result<String, ExportError> {
    check_name(&spec.name)?;
    let net = without_ports(net, &spec.hidden_ports).map_err(|e| ExportError(format!("{}: {e}", spec.name)))?;
    let mut texts = crate::netlist::verilog::modules(&net, &spec.name);
    let top = texts.remove(0);
    Ok(layout(spec, &top, &texts))
}

/// `net` without the ports `hidden`: inputs become constant zeros, outputs are dropped.
fn without_ports(net: &crate::netlist::Netlist, hidden: &[String]) -> Result<crate::netlist::Netlist, String> {
    use crate::netlist::Op;
    let mut net = net.clone();
    for port in hidden {
        if let Some(node) = net.nodes.iter_mut().find(|n| matches!(&n.op, Op::Input(p) if p == port)) {
            node.op = Op::Const(0);
        } else if let Some(k) = net.outputs.iter().position(|o| o.name == *port) {
            net.outputs.remove(k);
        } else {
            return Err(format!("hidden port `{port}` is not a port"));
        }
    }
    Ok(net)
}

struct Module {
    name: String,
    text: String,
}

fn split_modules(raw: &str) -> Vec<Module> {
    let mut modules = vec![];
    let mut current: Option<Module> = None;
    for line in raw.lines() {
        if let Some(rest) = line.strip_prefix("module ") {
            let name = rest.split('(').next().unwrap_or_default().trim().to_string();
            current = Some(Module { name, text: String::new() });
        }
        if let Some(module) = current.as_mut() {
            module.text.push_str(line.trim_end());
            module.text.push('\n');
            if line.starts_with("endmodule") {
                modules.push(current.take().unwrap());
            }
        }
    }
    modules
}

/// Replaces whole identifiers (Verilog identifiers may contain `$`).
fn replace_identifier(text: &str, from: &str, to: &str) -> String {
    let is_ident = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '$';
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(pos) = rest.find(from) {
        let before_ok = rest[..pos].chars().next_back().is_none_or(|c| !is_ident(c)) && (pos > 0 || out.chars().next_back().is_none_or(|c| !is_ident(c)));
        let after = &rest[pos + from.len()..];
        let after_ok = after.chars().next().is_none_or(|c| !is_ident(c));
        out.push_str(&rest[..pos]);
        out.push_str(if before_ok && after_ok { to } else { from });
        rest = after;
    }
    out.push_str(rest);
    out
}

fn finish(spec: &ModuleSpec, raw: &str) -> Result<String, ExportError> {
    check_name(&spec.name)?;
    let mut modules = split_modules(raw);
    if modules.first().map(|m| m.name.as_str()) != Some("top") {
        return Err(ExportError(format!("{}: rust-hdl output has no top module", spec.name)));
    }
    // Public names: top -> name, top$a$b -> name_a_b.
    let renames: Vec<(String, String)> = modules.iter().map(|m| (m.name.clone(), format!("{}{}", spec.name, &m.name[3..]).replace('$', "_"))).collect();
    for module in modules.iter_mut() {
        for (from, to) in renames.iter().rev() {
            module.text = replace_identifier(&module.text, from, to);
        }
        module.text = module.text.replace('$', "_");
        module.name = renames.iter().find(|(f, _)| *f == module.name).unwrap().1.clone();
    }
    merge_identical(&mut modules);
    let mut top = modules.remove(0);
    top.text = hide_ports(&top.text, &spec.hidden_ports).map_err(|e| ExportError(format!("{}: {e}", spec.name)))?;
    check_ports(spec, &top.text)?;
    let texts: Vec<String> = modules.into_iter().map(|m| m.text).collect();
    Ok(layout(spec, &top.text, &texts))
}

/// The exported file: the spec as a comment header, the top module, then its submodules.
fn layout(spec: &ModuleSpec, top: &str, modules: &[String]) -> String {
    let mut out = String::new();
    out.push_str(&format!("// {} — {}\n", spec.name, spec.summary));
    out.push_str(&format!("// Generated by weft {}; do not edit. Regenerate with `weft generate`.\n", env!("CARGO_PKG_VERSION")));
    if !spec.parameters.is_empty() {
        out.push_str("// Parameters:\n");
        for (key, value) in &spec.parameters {
            out.push_str(&format!("//   {key} = {value}\n"));
        }
    }
    out.push_str("`timescale 1ns/1ps\n\n");
    out.push_str(top);
    if !modules.is_empty() {
        out.push_str(&format!(
            "\n// Submodules of {}, prefixed with its name so any set of weft files can be read together.\n\
             // verilator lint_off DECLFILENAME\n",
            spec.name
        ));
        for module in modules {
            out.push('\n');
            out.push_str(module);
        }
        out.push_str("// verilator lint_on DECLFILENAME\n");
    }
    out
}

fn check_name(name: &str) -> Result<(), ExportError> {
    let ok = name.chars().next().is_some_and(|c| c.is_ascii_alphabetic()) && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if ok {
        Ok(())
    } else {
        Err(ExportError(format!("module name `{name}`: must start with a letter and contain only [A-Za-z0-9_]")))
    }
}

/// Merges submodules with identical text (modulo their own name) until none are left, so that
/// parents that differed only by which copy they instantiated merge too. The first in file
/// order keeps its name, so the output is deterministic.
fn merge_identical(modules: &mut Vec<Module>) {
    loop {
        let mut canonical: BTreeMap<String, String> = BTreeMap::new();
        let mut replaced: Vec<(String, String)> = vec![];
        for module in modules.iter().skip(1) {
            let body = replace_identifier(&module.text, &module.name, "__self__");
            match canonical.get(&body) {
                Some(first) => replaced.push((module.name.clone(), first.clone())),
                None => {
                    canonical.insert(body, module.name.clone());
                }
            }
        }
        if replaced.is_empty() {
            return;
        }
        modules.retain(|m| !replaced.iter().any(|(gone, _)| *gone == m.name));
        for module in modules.iter_mut() {
            for (gone, kept) in &replaced {
                module.text = replace_identifier(&module.text, gone, kept);
            }
        }
    }
}

/// Removes `hidden` ports from the top module's port list: inputs become wires tied to zero,
/// outputs become unread nets (waived for Verilator, with the reason).
fn hide_ports(top: &str, hidden: &[String]) -> Result<String, String> {
    let mut text = top.to_string();
    for port in hidden {
        let header_end = text.find(");").ok_or("no port list")?;
        let (header, body) = text.split_at(header_end);
        let names: Vec<&str> = header[header.find('(').ok_or("no port list")? + 1..].split(',').collect();
        if !names.iter().any(|n| n.trim() == port) {
            return Err(format!("hidden port `{port}` is not a port"));
        }
        let kept: Vec<&str> = names.into_iter().filter(|n| n.trim() != port).collect();
        let module_name = header[..header.find('(').unwrap()].to_string();
        let mut body = body.to_string();
        let decl = body
            .lines()
            .find(|l| {
                let t = l.trim();
                (t.starts_with("input ") || t.starts_with("output ")) && t.trim_end_matches(';').ends_with(&format!(" {port}"))
            })
            .ok_or(format!("no declaration of `{port}`"))?
            .to_string();
        let range = decl.find('[').map(|s| decl[s..=decl.find(']').unwrap()].to_string());
        let width = match &range {
            Some(r) => {
                let msb: usize = r[1..r.find(':').unwrap()].trim().parse().map_err(|_| "bad range")?;
                msb + 1
            }
            None => 1,
        };
        let range_text = range.map(|r| format!("{r} ")).unwrap_or_default();
        let replacement = if decl.trim().starts_with("input") {
            // The block may not read a side-band input it does not expose.
            format!("    // verilator lint_off UNUSEDSIGNAL\n    wire {range_text}{port} = {{{width}{{1'b0}}}}; // not exposed: tied off\n    // verilator lint_on UNUSEDSIGNAL")
        } else {
            let kind = if decl.contains(" reg ") { "reg" } else { "wire" };
            format!("    /* verilator lint_off UNUSEDSIGNAL */ // not exposed: left unread\n    {kind} {range_text}{port};\n    /* verilator lint_on UNUSEDSIGNAL */")
        };
        body = body.replacen(&decl, &replacement, 1);
        text = format!("{module_name}({}{body}", kept.join(","));
    }
    Ok(text)
}

/// Every top-level port is `[A-Za-z0-9_]` (after renaming, a `$` would be a generator bug).
fn check_ports(spec: &ModuleSpec, top: &str) -> Result<(), ExportError> {
    let header = &top[..top.find(");").unwrap_or(top.len())];
    for port in header[header.find('(').map_or(0, |p| p + 1)..].split(',') {
        let port = port.trim();
        if port.is_empty() || !port.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return Err(ExportError(format!("{}: port `{port}` is not a plain identifier", spec.name)));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifiers_are_replaced_whole() {
        assert_eq!(replace_identifier("top$a top$ab xtop$a top$a$b", "top$a", "n_a"), "n_a top$ab xtop$a top$a$b");
    }

    #[test]
    fn rejects_names_that_are_not_plain_identifiers() {
        assert!(check_name("axis fifo").is_err());
        assert!(check_name("9fifo").is_err());
        assert!(check_name("axis_fifo_w128_d32").is_ok());
    }
}
