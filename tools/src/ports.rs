//! What a Verilog file declares, read back from the text the tools will read: the ports of a
//! module and the instance paths below it. The simulation top is wired from these, and the
//! constraint check holds the constraint files against them.

use crate::ToolError;
use std::collections::BTreeMap;

/// One port declaration of a Verilog module (`input wire [7:0] data;`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PortDecl {
    /// `true` for an `input`, `false` for an `output`.
    pub input: bool,
    /// The port's name.
    pub name: String,
    /// Width in bits (`[hi:lo]` gives `hi - lo + 1`; no range gives 1).
    pub width: usize,
}

/// The modules of `text`: name → body lines (between the header and `endmodule`).
fn modules(text: &str) -> BTreeMap<String, Vec<&str>> {
    let mut out = BTreeMap::new();
    let mut current: Option<(String, Vec<&str>)> = None;
    for line in text.lines() {
        let t = line.trim();
        if let Some(rest) = t.strip_prefix("module ") {
            let name: String = rest.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '$').collect();
            current = Some((name, vec![]));
        } else if t.starts_with("endmodule") {
            if let Some((name, body)) = current.take() {
                out.insert(name, body);
            }
        } else if let Some((_, body)) = current.as_mut() {
            body.push(t);
        }
    }
    out
}

/// The ports of `module` in `text`, in declaration order. Reads the declarations inside the
/// module's body, one a line (`input wire [3:0] a;`, `output reg y;`), as weft's export writes
/// them. A module not in `text`, or a range that is not two numbers, is
/// [`ToolError::Unreadable`].
///
/// ```
/// use weft_tools::ports::{ports, PortDecl};
///
/// let text = "module m(clk, a, y);\n    input wire clk;\n    input wire [3:0] a;\n    output reg [1:0] y;\nendmodule\n";
/// let found = ports(text, "m").unwrap();
/// assert_eq!(found[1], PortDecl { input: true, name: "a".into(), width: 4 });
/// assert_eq!((found[2].input, found[2].width), (false, 2));
/// assert!(ports(text, "other").is_err());
/// ```
pub fn ports(text: &str, module: &str) -> Result<Vec<PortDecl>, ToolError> {
    declared_ports(text, module).map_err(crate::unreadable("the ports of a Verilog module"))
}

fn declared_ports(text: &str, module: &str) -> Result<Vec<PortDecl>, String> {
    let all = modules(text);
    let body = all.get(module).ok_or_else(|| format!("module `{module}` is not in the file"))?;
    let mut out = vec![];
    for line in body {
        let (input, rest) = if let Some(r) = line.strip_prefix("input ") {
            (true, r)
        } else if let Some(r) = line.strip_prefix("output ") {
            (false, r)
        } else {
            continue;
        };
        let rest = rest.trim_start_matches("wire ").trim_start_matches("reg ").trim();
        let (width, name) = match rest.strip_prefix('[') {
            Some(r) => {
                let (range, name) = r.split_once(']').ok_or_else(|| format!("cannot read port line `{line}`"))?;
                let (hi, lo) = range.split_once(':').ok_or_else(|| format!("cannot read port line `{line}`"))?;
                let hi: usize = hi.trim().parse().map_err(|_| format!("cannot read port line `{line}`"))?;
                let lo: usize = lo.trim().parse().map_err(|_| format!("cannot read port line `{line}`"))?;
                (hi - lo + 1, name)
            }
            None => (1, rest),
        };
        out.push(PortDecl { input, name: name.trim().trim_end_matches(';').trim().to_string(), width });
    }
    Ok(out)
}

/// Every instance path below `top` (`a`, `a/b`, …), following `module_name instance_name (`
/// lines of modules defined in `texts`, and every register declared in them as the vendor tools
/// name its flops: `a/b/name_reg` (Vivado) and `a/b/name` (Quartus).
pub fn instance_paths(texts: &[&str], top: &str) -> Vec<String> {
    let mut all = BTreeMap::new();
    for text in texts {
        all.extend(modules(text));
    }
    let mut out = vec![];
    let mut stack = vec![(top.to_string(), String::new())];
    while let Some((module, path)) = stack.pop() {
        let Some(body) = all.get(&module) else { continue };
        for line in body {
            let decl = line.strip_prefix("(* ASYNC_REG = \"TRUE\" *) ").unwrap_or(line);
            let decl = decl.strip_prefix("output ").unwrap_or(decl);
            if let Some(rest) = decl.strip_prefix("reg ") {
                let name = rest.trim_end_matches(';').split_whitespace().last().unwrap_or_default();
                let reg = if path.is_empty() { name.to_string() } else { format!("{path}/{name}") };
                out.push(format!("{reg}_reg"));
                out.push(reg);
                continue;
            }
            let mut words = line.split_whitespace();
            let (Some(kind), Some(inst)) = (words.next(), words.next()) else { continue };
            if !all.contains_key(kind) {
                continue;
            }
            let inst = inst.trim_end_matches('(');
            let child = if path.is_empty() { inst.to_string() } else { format!("{path}/{inst}") };
            out.push(child.clone());
            stack.push((kind.to_string(), child));
        }
    }
    out.sort();
    out
}
