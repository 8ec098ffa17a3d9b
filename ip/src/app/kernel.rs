//! A loop's kernel: its lines in the kernel language, with the loop's arguments as arrays
//! (`q[0]`, or `adt` for an argument of one value) and the application's constants by name,
//! become a kernel of the application's float type. An argument read in the kernel is its value
//! before the kernel ran; `arg[i] = expression` sets what the loop writes (the new value of a
//! `write`/`rw` argument, the increment of an `inc` one, the element's value for a `min`/`max`
//! global).

use std::collections::BTreeMap;

use weft_hdl::pipeline::dsl::{self, DslError};
use weft_hdl::pipeline::Kernel;

use super::program::Access;
use super::text::{LoopDecl, Precision};

/// What a kernel lane carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lane {
    /// Component `i` of argument `k`.
    Arg(usize, usize),
    /// A constant's bit pattern.
    Const(u64),
}

/// A compiled loop kernel: its lanes in order, and for each output the argument component it
/// sets.
pub struct LoopKernel {
    pub kernel: Kernel,
    pub lanes: Vec<Lane>,
    pub outputs: Vec<(usize, usize)>,
}

/// An argument as the kernel sees it: name, number of values, access.
pub struct ArgShape<'a> {
    pub name: &'a str,
    pub dim: usize,
    pub access: Access,
}

/// `text` with every `name[digits]` written `name__digits` (the same length, so columns stay),
/// and the identifiers it then uses.
pub(super) fn rewrite(text: &str) -> (String, Vec<String>) {
    let chars: Vec<char> = text.chars().collect();
    let (mut out, mut used) = (String::new(), vec![]);
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let starts = (c.is_ascii_alphabetic() || c == '_') && (i == 0 || !(chars[i - 1].is_ascii_alphanumeric() || chars[i - 1] == '_' || chars[i - 1] == '.'));
        if !starts {
            out.push(c);
            i += 1;
            continue;
        }
        let start = i;
        while i < chars.len() && (chars[i].is_ascii_alphanumeric() || chars[i] == '_') {
            i += 1;
        }
        let mut name: String = chars[start..i].iter().collect();
        // `name[digits]`: an element.
        let digits = chars[i..].iter().skip(1).take_while(|c| c.is_ascii_digit()).count();
        if chars.get(i) == Some(&'[') && digits > 0 && chars.get(i + 1 + digits) == Some(&']') {
            let index: String = chars[i + 1..i + 1 + digits].iter().collect();
            name = format!("{name}__{index}");
            i += digits + 2;
        }
        out.push_str(&name);
        used.push(name);
    }
    (out, used)
}

/// Compiles `decl`'s kernel. `consts` are the application's constants (bit patterns; an array
/// is `name__i` per element).
pub fn compile(decl: &LoopDecl, args: &[ArgShape], consts: &BTreeMap<String, u64>, precision: Precision) -> Result<LoopKernel, DslError> {
    let first = decl.body.first().map_or(decl.name.at.line, |(n, _)| *n);
    let mut lanes = vec![];
    let mut names = vec![];
    let mut aliases = vec![];
    for (k, a) in args.iter().enumerate() {
        if consts.contains_key(a.name) || consts.keys().any(|c| c.starts_with(&format!("{}__", a.name))) {
            return Err(decl.name.at.error(format!("loop `{}`: argument `{}` has the name of a constant", decl.name.text, a.name)));
        }
        if matches!(a.access, Access::Read | Access::Rw) {
            for i in 0..a.dim {
                lanes.push(Lane::Arg(k, i));
                names.push(format!("{}__{i}", a.name));
            }
            if a.dim == 1 {
                aliases.push(format!("let {} = {}__0", a.name, a.name));
            }
        }
    }
    // Body lines: `let` as written; `target[i] = expression` an output.
    let mut body = vec![];
    let mut outputs = vec![];
    let mut shifts = vec![];
    let mut used_consts: Vec<String> = vec![];
    for (n, line) in &decl.body {
        let (text, used) = rewrite(line);
        for u in used.iter().filter(|u| consts.contains_key(*u)) {
            if !used_consts.contains(u) {
                used_consts.push(u.clone());
            }
        }
        let trimmed = text.trim_start();
        let indent = text.len() - trimmed.len();
        if trimmed.starts_with("let ") {
            body.push((*n, text.clone(), 0i64));
            continue;
        }
        let at = super::text::At { line: *n, column: indent + 1 };
        let Some((lhs, rhs)) = trimmed.split_once('=') else { return Err(at.error("a kernel line is `let name = expression` or `argument[i] = expression`")) };
        let lhs = lhs.trim();
        let (arg, index) = match lhs.rsplit_once("__") {
            Some((a, i)) if i.chars().all(|c| c.is_ascii_digit()) => (a, i.parse::<usize>().unwrap_or(usize::MAX)),
            _ => (lhs, 0),
        };
        let Some(k) = args.iter().position(|a| a.name == arg) else { return Err(at.error(format!("`{lhs}` is not an argument of loop `{}`", decl.name.text))) };
        let a = &args[k];
        if a.access == Access::Read {
            return Err(at.error(format!("argument `{arg}` is read-only in loop `{}`", decl.name.text)));
        }
        if index >= a.dim {
            return Err(at.error(format!("argument `{arg}` has {} values: index {index} is outside 0..{}", a.dim, a.dim)));
        }
        let output = format!("out__{arg}__{index}");
        let written = format!("{}output {output} ={rhs}", " ".repeat(indent));
        shifts.push(written.len() as i64 - text.len() as i64);
        body.push((*n, written, *shifts.last().unwrap()));
        outputs.push((k, index));
    }
    for c in &used_consts {
        lanes.push(Lane::Const(consts[c]));
        names.push(c.clone());
    }
    if names.is_empty() {
        // A kernel that reads nothing still has a lane.
        lanes.push(Lane::Const(0));
        names.push("no_input__".into());
    }
    let mut source = vec![format!("kernel {}: {}", decl.name.text, precision.name()), format!("input {}", names.join(", "))];
    source.extend(aliases);
    let header = source.len();
    source.extend(body.iter().map(|(_, t, _)| t.clone()));
    let kernel = dsl::parse(&source.join("\n")).map_err(|e| {
        if e.line > header {
            let (n, _, shift) = &body[e.line - header - 1];
            DslError { line: *n, column: (e.column as i64 - shift).max(1) as usize, message: e.message }
        } else {
            DslError { line: first, column: 1, message: format!("loop `{}`: {}", decl.name.text, e.message) }
        }
    })?;
    // The kernel's outputs in its order, each an argument component.
    let order: Vec<(usize, usize)> = kernel
        .outputs
        .iter()
        .map(|(name, _)| {
            let i = body.iter().filter(|(_, t, _)| t.trim_start().starts_with("output ")).position(|(_, t, _)| t.trim_start()[7..].starts_with(&format!("{name} "))).expect("every output is a line");
            outputs[i]
        })
        .collect();
    Ok(LoopKernel { kernel, lanes, outputs: order })
}
