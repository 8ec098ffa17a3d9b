//! The kernel DSL: a small text form of a [`Kernel`].
//!
//! ```text
//! # comments run from `#` (or `//`) to the end of the line
//! kernel dg_rk_update: f32          # element type: f32 (default), f64, f16 or bf16
//! input q, res, rhs, a, b, dt       # input lanes, in order (lane 0 first)
//! let res_new = a*res + dt*rhs      # bindings, in any order (a cycle is an error)
//! let q_new = q + b*res_new
//! output q_new, res_new             # output lanes, in order; `output f = expr` also works
//! ```
//! Expressions use C precedence and associate left to right: unary `-`, then `*` `/`, then
//! `+` `-`, then `<` `<=` `>` `>=`, then `==` `!=`; parentheses; constants in decimal (`0.5`,
//! `1e-3`, rounded to nearest) or as the type's bit pattern in hex (`0x3ECCCCCC`). A constant
//! takes the type of the other operand. Every error names the line and column.
//!
//! Types: the kernel's float format (`f32`, `f64`, `f16`, `bf16`) is its lanes' slot width and the
//! default type. An input may be fixed point: `input x: sfix<16,8>` (signed, 16 bits, 8 of
//! them fractional; `ufix<W,F>` unsigned; `fix<W,F>` means `sfix`), at most one lane slot wide,
//! taking the slot's low bits. Fixed-point `+ - *` and negation keep the format, round to
//! nearest even and saturate ([`super::types`]); `/` and `sqrt` are for floats. Mixing types is
//! an error: convert with `f32(x)` (fixed to float, nearest even) or `sfix<W,F>(x)` (float to
//! fixed: nearest even, saturating, NaN → 0; or fixed to fixed); `sfix<16,8>(0.25)` is a
//! constant of that type. Outputs are the kernel's float format, fixed point (sign- or
//! zero-extended to the slot) or bool (0 or 1).
//!
//! Operations: comparisons give a bool, usable by `select(c, a, b)` (`a` when `c` holds);
//! floats compare as IEEE 754 (+0 = −0; a NaN makes every comparison false but `!=`).
//! `min(a, b)`, `max(a, b)`: a NaN operand gives the canonical NaN, and −0 < +0 (IEEE
//! 754-2019 `minimum`/`maximum`). `abs(x)` clears a float's sign bit (NaN included), and
//! saturates fixed point (`abs` of the most negative value is the largest).
//!
//! Stream offsets: `x[-1]`, `x[+2]` (`x` an input or a binding, offsets −64..=64) read `x`
//! that many beats earlier or later in the same vector (`tlast` ends a vector; a stream
//! without `tlast` is one vector); beats outside the vector read as zero. A kernel that looks
//! ahead `K` beats emits each output beat `K` beats late and flushes after `tlast` (see
//! [`super::offsets`]).
//!
//! Typed bindings and recurrences: `let s: sfix<24,8> = expr` checks the type (and types a
//! constant); a typed binding may read its own earlier beats, `let s: f32 = s[-1] + x` — a
//! running sum per vector, `s[-1]` zero on the first beat ([`super::recurrence`]).
//!
//! `output s = vsum(expr)` makes a per-vector kernel: `s` is the sum of `expr` over all beats of
//! a vector (`tlast` ends it), one output beat per vector. `vsum` is only allowed as an output's
//! whole expression, and a kernel's outputs are all vector sums or none; it does not combine
//! with offsets.

mod expr;
mod lower;

use std::collections::{BTreeMap, HashMap};
use std::fmt;

use nom::character::complete::{char, space0};

use super::{Kernel, Type};
use crate::float::FloatFormat;
use expr::{identifier, ws, Expr, ExprParser, Pos};
use lower::{resolve_type, Lowering};

/// A DSL error at a position (1-based line and column).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DslError {
    /// Line number, from 1.
    pub line: usize,
    /// Column number, from 1.
    pub column: usize,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for DslError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}, column {}: {}", self.line, self.column, self.message)
    }
}

impl std::error::Error for DslError {}

fn strip_comment(line: &str) -> &str {
    let cut = [line.find('#'), line.find("//")].into_iter().flatten().min();
    match cut {
        Some(i) => &line[..i],
        None => line,
    }
}

enum Definition {
    Input(usize, Type),
    /// A binding and its declared type, if any.
    Let(Expr, Option<expr::TypeName>),
}

/// Parses a kernel; errors name the line and column.
///
/// ```
/// use weft_hdl::pipeline::dsl::parse;
///
/// let k = parse("kernel axpy: f32\ninput a, x, y\noutput r = a*x + y\n").unwrap();
/// let bits = |v: f32| v.to_bits();
/// assert_eq!(k.evaluate(&[bits(2.0), bits(3.0), bits(0.5)]), [bits(6.5)]);
///
/// let err = parse("kernel k\ninput a\noutput r = a + b\n").unwrap_err();
/// assert_eq!(err.line, 3);
/// ```
pub fn parse(text: &str) -> Result<Kernel, DslError> {
    let mut name: Option<(String, FloatFormat)> = None;
    let mut definitions: BTreeMap<String, (Definition, Pos)> = BTreeMap::new();
    let mut outputs: Vec<(String, Option<Expr>, Pos)> = vec![];
    let mut inputs = 0;
    for (index, raw) in text.lines().enumerate() {
        let line_no = index + 1;
        let line = strip_comment(raw);
        let p = ExprParser { line_no, line };
        let (rest, _) = space0::<_, nom::error::Error<&str>>(line).unwrap();
        if rest.trim().is_empty() {
            continue;
        }
        let syntax = |rest: &str, what: &str| p.pos(rest).error(format!("expected {what}"));
        let (after_kw, keyword) = identifier(rest).map_err(|_| syntax(rest, "`kernel`, `input`, `let` or `output`"))?;
        let keyword_pos = p.pos(rest);
        let mut s = after_kw;
        match keyword {
            "kernel" => {
                if name.is_some() {
                    return Err(keyword_pos.error("a second `kernel` line (one kernel per file)"));
                }
                let (t, kernel_name) = ws(identifier)(s).map_err(|_| syntax(s.trim_start(), "a kernel name"))?;
                s = t;
                let mut format = FloatFormat::BINARY32;
                if let Ok((t, _)) = ws(char::<_, nom::error::Error<&str>>(':'))(s) {
                    let ty_start = t.trim_start();
                    let (t, ty) = p.type_name(t).map_err(|_| syntax(ty_start, "a type"))?;
                    format = match resolve_type(&ty, 32)? {
                        Type::Float(f) => f,
                        other => {
                            return Err(ty
                                .at
                                .error(format!("the kernel's type is its lanes' float format (f64, f32, f16 or bf16), not {other}: declare fixed-point lanes on `input` (`input x: sfix<16,8>`)")))
                        }
                    };
                    s = t;
                }
                name = Some((kernel_name.to_string(), format));
            }
            "input" | "output" | "let" if name.is_none() => {
                return Err(keyword_pos.error("the file must start with `kernel <name>`"));
            }
            "input" => loop {
                let start = s.trim_start();
                let (t, input) = ws(identifier)(s).map_err(|_| syntax(start, "an input name"))?;
                let at = p.pos(start);
                let slot = name.as_ref().unwrap().1;
                let mut format = Type::Float(slot);
                s = t;
                if let Ok((t, _)) = ws(char::<_, nom::error::Error<&str>>(':'))(s) {
                    let ty_start = t.trim_start();
                    let (t, ty) = p.type_name(t).map_err(|_| syntax(ty_start, "a type"))?;
                    format = resolve_type(&ty, slot.width())?;
                    s = t;
                }
                define(&mut definitions, input, Definition::Input(inputs, format), at)?;
                inputs += 1;
                match ws(char::<_, nom::error::Error<&str>>(','))(s) {
                    Ok((t, _)) => s = t,
                    Err(_) => break,
                }
            },
            "let" => {
                let start = s.trim_start();
                let (t, binding) = ws(identifier)(s).map_err(|_| syntax(start, "a name after `let`"))?;
                let at = p.pos(start);
                let mut t = t;
                let mut declared = None;
                if let Ok((u, _)) = ws(char::<_, nom::error::Error<&str>>(':'))(t) {
                    let (u, ty) = p.type_name(u).map_err(|_| syntax(u.trim_start(), "a type"))?;
                    declared = Some(ty);
                    t = u;
                }
                let (t, _) = ws(char('='))(t).map_err(|_: nom::Err<nom::error::Error<&str>>| syntax(t.trim_start(), "`=`"))?;
                let (t, expr) = p.expr(t).map_err(|e| expr_error(&p, e))?;
                s = t;
                define(&mut definitions, binding, Definition::Let(expr, declared), at)?;
            }
            "output" => loop {
                let start = s.trim_start();
                let (t, output) = ws(identifier)(s).map_err(|_| syntax(start, "an output name"))?;
                let at = p.pos(start);
                s = t;
                let mut expr = None;
                if let Ok((t, _)) = ws(char::<_, nom::error::Error<&str>>('='))(s) {
                    let (t, e) = p.expr(t).map_err(|e| expr_error(&p, e))?;
                    expr = Some(e);
                    s = t;
                }
                if let Some((_, _, first)) = outputs.iter().find(|(n, _, _)| n == output) {
                    return Err(at.error(format!("output `{output}` listed twice (first at line {}, column {})", first.line, first.column)));
                }
                outputs.push((output.to_string(), expr, at));
                match ws(char::<_, nom::error::Error<&str>>(','))(s) {
                    Ok((t, _)) => s = t,
                    Err(_) => break,
                }
            },
            other => return Err(keyword_pos.error(format!("unknown statement `{other}` (expected kernel, input, let or output)"))),
        }
        if !s.trim().is_empty() {
            return Err(syntax(s.trim_start(), "end of line"));
        }
    }
    let (kernel_name, format) = name.ok_or(DslError { line: 1, column: 1, message: "empty file: expected `kernel <name>`".into() })?;
    if inputs == 0 {
        return Err(DslError { line: 1, column: 1, message: format!("kernel `{kernel_name}` has no `input` lanes") });
    }
    if outputs.is_empty() {
        return Err(DslError { line: 1, column: 1, message: format!("kernel `{kernel_name}` has no `output` lanes") });
    }
    let mut lower = Lowering { kernel: Kernel::new(&kernel_name, format), definitions: &definitions, done: HashMap::new(), active: vec![], open: HashMap::new() };
    // Inputs first, in lane order, so lane i is the i-th input.
    let mut lanes: Vec<(&String, usize, Type)> = definitions
        .iter()
        .filter_map(|(n, (d, _))| match d {
            Definition::Input(lane, f) => Some((n, *lane, *f)),
            _ => None,
        })
        .collect();
    lanes.sort_by_key(|(_, lane, _)| *lane);
    for (input, _, f) in lanes {
        let v = lower.kernel.input_typed(input, f);
        lower.done.insert(input.clone(), (v, f));
    }
    let per_vector = |e: &Option<Expr>| matches!(e, Some(Expr::Call(name, _, _)) if name == "vsum");
    let vector_kernel = outputs.first().is_some_and(|(_, e, _)| per_vector(e));
    for (output, expr, at) in &outputs {
        let summed = per_vector(expr);
        if summed != vector_kernel {
            return Err(at.error(format!("output `{output}`: a kernel's outputs are all `vsum(...)` or none")));
        }
        let (value, ty) = match expr {
            Some(Expr::Call(_, args, at)) if summed => match args.as_slice() {
                [arg] => lower.expr(arg)?,
                _ => return Err(at.error(format!("vsum takes 1 argument, got {}", args.len()))),
            },
            Some(e) => lower.expr(e)?,
            None => lower.name(output, *at)?,
        };
        let fits = match ty {
            Type::Float(f) => f == format,
            _ => !summed,
        };
        if !fits {
            let allowed = if summed { format!("a vector sum is {format}") } else { format!("outputs are {format}, fixed point or bool") };
            return Err(at.error(format!("type mismatch: output `{output}` is {ty}; {allowed} (convert it: `{}(...)`)", dsl_name(format))));
        }
        if summed {
            lower.kernel.output_vector_sum(output, value);
        } else {
            lower.kernel.output(output, value);
        }
    }
    if lower.kernel.per_vector && lower.kernel.has_offsets() {
        return Err(DslError { line: outputs[0].2.line, column: outputs[0].2.column, message: "stream offsets and vsum(...) do not combine in one kernel".into() });
    }
    Ok(lower.kernel)
}

/// A float format as the DSL spells it.
fn dsl_name(format: FloatFormat) -> &'static str {
    match format {
        FloatFormat::BFLOAT16 => "bf16",
        FloatFormat::BINARY16 => "f16",
        FloatFormat::BINARY64 => "f64",
        _ => "f32",
    }
}

fn define(definitions: &mut BTreeMap<String, (Definition, Pos)>, name: &str, d: Definition, at: Pos) -> Result<(), DslError> {
    const RESERVED: [&str; 16] = ["sqrt", "vsum", "kernel", "input", "let", "output", "select", "min", "max", "abs", "f32", "f16", "bf16", "sfix", "ufix", "fix"];
    if RESERVED.contains(&name) {
        return Err(at.error(format!("`{name}` is a reserved word")));
    }
    if let Some((_, first)) = definitions.get(name) {
        return Err(at.error(format!("`{name}` defined twice (first at line {}, column {})", first.line, first.column)));
    }
    definitions.insert(name.to_string(), (d, at));
    Ok(())
}

fn expr_error(p: &ExprParser, e: nom::Err<nom::error::Error<&str>>) -> DslError {
    match e {
        nom::Err::Error(e) | nom::Err::Failure(e) => {
            let at = p.pos(e.input);
            let found = e.input.trim();
            if found.is_empty() {
                at.error("expression ends early: expected a value, `(` or `-`")
            } else {
                at.error(format!("cannot parse expression at `{}`", found.chars().take(12).collect::<String>()))
            }
        }
        nom::Err::Incomplete(_) => p.pos("").error("incomplete expression"),
    }
}
