//! The kernel DSL: a small text form of a [`Kernel`].
//!
//! ```text
//! # comments run from `#` (or `//`) to the end of the line
//! kernel dg_rk_update: f32          # element type: f32 (default), f16 or bf16
//! input q, res, rhs, a, b, dt       # input lanes, in order (lane 0 first)
//! let res_new = a*res + dt*rhs      # bindings, in any order (a cycle is an error)
//! let q_new = q + b*res_new
//! output q_new, res_new             # output lanes, in order; `output f = expr` also works
//! ```
//! Expressions use C precedence and associate left to right: unary `-`, then `*` `/`, then
//! `+` `-`; `sqrt(x)`; parentheses; constants in decimal (`0.5`, `1e-3`, rounded to nearest) or
//! as the format's bit pattern in hex (`0x3ECCCCCC`). Inputs may carry a type (`input x: f16`);
//! mixing types is an error. Every error names the line and column.
//!
//! `output s = vsum(expr)` makes a per-vector kernel: `s` is the sum of `expr` over all beats of
//! a vector (`tlast` ends it), one output beat per vector. `vsum` is only allowed as an output's
//! whole expression, and a kernel's outputs are all vector sums or none.

use std::collections::{BTreeMap, HashMap};
use std::fmt;

use nom::branch::alt;
use nom::bytes::complete::{tag, take_while, take_while1};
use nom::character::complete::{char, digit1, hex_digit1, one_of, space0};
use nom::combinator::{opt, recognize};
use nom::sequence::{pair, tuple};
use nom::IResult;

use super::{Kernel, Value};
use crate::float::{reference, FloatFormat, FloatOperator};

/// A DSL error at a position (1-based line and column).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DslError {
    pub line: usize,
    pub column: usize,
    pub message: String,
}

impl fmt::Display for DslError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}, column {}: {}", self.line, self.column, self.message)
    }
}

impl std::error::Error for DslError {}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Pos {
    line: usize,
    column: usize,
}

impl Pos {
    fn error(self, message: impl Into<String>) -> DslError {
        DslError { line: self.line, column: self.column, message: message.into() }
    }
}

#[derive(Clone, Debug)]
enum Expr {
    Name(String, Pos),
    Decimal(String, Pos),
    Hex(u64, Pos),
    Neg(Box<Expr>),
    Binary(char, Box<Expr>, Box<Expr>, Pos),
    Call(String, Vec<Expr>, Pos),
}

type Res<'a, T> = IResult<&'a str, T>;

fn identifier(s: &str) -> Res<'_, &str> {
    recognize(pair(take_while1(|c: char| c.is_ascii_alphabetic() || c == '_'), take_while(|c: char| c.is_ascii_alphanumeric() || c == '_')))(s)
}

fn ws<'a, T>(mut p: impl FnMut(&'a str) -> Res<'a, T>) -> impl FnMut(&'a str) -> Res<'a, T> {
    move |s| {
        let (s, _) = space0(s)?;
        p(s)
    }
}

/// Parses expressions of one line; `line` is the full line, to turn remaining input into columns.
struct ExprParser<'l> {
    line_no: usize,
    line: &'l str,
}

impl<'l> ExprParser<'l> {
    fn pos(&self, rest: &str) -> Pos {
        Pos { line: self.line_no, column: self.line.len() - rest.len() + 1 }
    }

    fn expr<'a>(&self, s: &'a str) -> Res<'a, Expr> {
        let (mut s, mut left) = self.term(s)?;
        loop {
            let (t, _) = space0(s)?;
            let at = self.pos(t);
            match one_of::<_, _, nom::error::Error<&str>>("+-")(t) {
                Ok((t, op)) => {
                    let (t, right) = self.term(t)?;
                    left = Expr::Binary(op, Box::new(left), Box::new(right), at);
                    s = t;
                }
                Err(_) => return Ok((s, left)),
            }
        }
    }

    fn term<'a>(&self, s: &'a str) -> Res<'a, Expr> {
        let (mut s, mut left) = self.unary(s)?;
        loop {
            let (t, _) = space0(s)?;
            let at = self.pos(t);
            match one_of::<_, _, nom::error::Error<&str>>("*/")(t) {
                Ok((t, op)) => {
                    let (t, right) = self.unary(t)?;
                    left = Expr::Binary(op, Box::new(left), Box::new(right), at);
                    s = t;
                }
                Err(_) => return Ok((s, left)),
            }
        }
    }

    fn unary<'a>(&self, s: &'a str) -> Res<'a, Expr> {
        let (s, _) = space0(s)?;
        if let Ok((t, _)) = char::<_, nom::error::Error<&str>>('-')(s) {
            let (t, inner) = self.unary(t)?;
            return Ok((t, Expr::Neg(Box::new(inner))));
        }
        self.primary(s)
    }

    fn primary<'a>(&self, s: &'a str) -> Res<'a, Expr> {
        let (s, _) = space0(s)?;
        let at = self.pos(s);
        if let Ok((t, _)) = char::<_, nom::error::Error<&str>>('(')(s) {
            let (t, inner) = self.expr(t)?;
            let (t, _) = ws(char(')'))(t)?;
            return Ok((t, inner));
        }
        if let Ok((t, digits)) = pair(alt((tag("0x"), tag("0X"))), hex_digit1::<_, nom::error::Error<&str>>)(s) {
            let value = u64::from_str_radix(digits.1, 16).map_err(|_| nom::Err::Failure(nom::error::Error::new(s, nom::error::ErrorKind::HexDigit)))?;
            return Ok((t, Expr::Hex(value, at)));
        }
        if let Ok((t, text)) = recognize(tuple((
            digit1::<_, nom::error::Error<&str>>,
            opt(pair(char('.'), opt(digit1))),
            opt(tuple((one_of("eE"), opt(one_of("+-")), digit1))),
        )))(s)
        {
            return Ok((t, Expr::Decimal(text.to_string(), at)));
        }
        let (t, name) = identifier(s)?;
        let (u, _) = space0(t)?;
        if let Ok((u, _)) = char::<_, nom::error::Error<&str>>('(')(u) {
            let (u, first) = self.expr(u)?;
            let mut args = vec![first];
            let mut u = u;
            loop {
                let (v, _) = space0(u)?;
                if let Ok((v, _)) = char::<_, nom::error::Error<&str>>(',')(v) {
                    let (v, arg) = self.expr(v)?;
                    args.push(arg);
                    u = v;
                } else {
                    let (v, _) = char(')')(v)?;
                    return Ok((v, Expr::Call(name.to_string(), args, at)));
                }
            }
        }
        Ok((t, Expr::Name(name.to_string(), at)))
    }
}

fn strip_comment(line: &str) -> &str {
    let cut = [line.find('#'), line.find("//")].into_iter().flatten().min();
    match cut {
        Some(i) => &line[..i],
        None => line,
    }
}

fn parse_type(name: &str, at: Pos) -> Result<FloatFormat, DslError> {
    match name {
        "f32" => Ok(FloatFormat::BINARY32),
        "f16" => Ok(FloatFormat::BINARY16),
        "bf16" => Ok(FloatFormat::BFLOAT16),
        other => Err(at.error(format!("unknown type `{other}` (known: f32, f16, bf16)"))),
    }
}

enum Definition {
    Input(usize, FloatFormat),
    Let(Expr),
}

/// Parses a kernel; errors name the line and column.
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
                    let (t, ty) = ws(identifier)(t).map_err(|_| syntax(ty_start, "a type"))?;
                    format = parse_type(ty, p.pos(ty_start))?;
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
                let mut format = name.as_ref().unwrap().1;
                s = t;
                if let Ok((t, _)) = ws(char::<_, nom::error::Error<&str>>(':'))(s) {
                    let ty_start = t.trim_start();
                    let (t, ty) = ws(identifier)(t).map_err(|_| syntax(ty_start, "a type"))?;
                    format = parse_type(ty, p.pos(ty_start))?;
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
                let (t, _) = ws(char('='))(t).map_err(|_: nom::Err<nom::error::Error<&str>>| syntax(t.trim_start(), "`=`"))?;
                let (t, expr) = p.expr(t).map_err(|e| expr_error(&p, e))?;
                s = t;
                define(&mut definitions, binding, Definition::Let(expr), at)?;
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
    let mut lower = Lowering { kernel: Kernel::new(&kernel_name, format), definitions: &definitions, done: HashMap::new(), active: vec![] };
    // Inputs first, in lane order, so lane i is the i-th input.
    let mut lanes: Vec<(&String, usize, FloatFormat)> = definitions
        .iter()
        .filter_map(|(n, (d, _))| match d {
            Definition::Input(lane, f) => Some((n, *lane, *f)),
            _ => None,
        })
        .collect();
    lanes.sort_by_key(|(_, lane, _)| *lane);
    for (input, _, f) in lanes {
        let v = lower.kernel.input(input);
        lower.done.insert(input.clone(), (v, f));
    }
    let per_vector = |e: &Option<Expr>| matches!(e, Some(Expr::Call(name, _, _)) if name == "vsum");
    let vector_kernel = outputs.first().map_or(false, |(_, e, _)| per_vector(e));
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
        if ty != format {
            return Err(at.error(format!("type mismatch: output `{output}` is {ty}, the kernel's lanes are {format}")));
        }
        if summed {
            lower.kernel.output_vector_sum(output, value);
        } else {
            lower.kernel.output(output, value);
        }
    }
    Ok(lower.kernel)
}

fn define(definitions: &mut BTreeMap<String, (Definition, Pos)>, name: &str, d: Definition, at: Pos) -> Result<(), DslError> {
    if ["sqrt", "vsum", "kernel", "input", "let", "output"].contains(&name) {
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

struct Lowering<'d> {
    kernel: Kernel,
    definitions: &'d BTreeMap<String, (Definition, Pos)>,
    done: HashMap<String, (Value, FloatFormat)>,
    /// Bindings being lowered, to report cycles.
    active: Vec<String>,
}

impl Lowering<'_> {
    fn name(&mut self, name: &str, at: Pos) -> Result<(Value, FloatFormat), DslError> {
        if let Some(v) = self.done.get(name) {
            return Ok(*v);
        }
        if let Some(i) = self.active.iter().position(|n| n == name) {
            let mut path = self.active[i..].to_vec();
            path.push(name.to_string());
            return Err(at.error(format!("cycle: {}", path.join(" -> "))));
        }
        let expr = match self.definitions.get(name) {
            Some((Definition::Let(e), _)) => e.clone(),
            Some((Definition::Input(..), _)) => unreachable!("inputs are lowered first"),
            None => return Err(at.error(format!("undefined name `{name}`"))),
        };
        self.active.push(name.to_string());
        let v = self.expr(&expr)?;
        self.active.pop();
        self.done.insert(name.to_string(), v);
        Ok(v)
    }

    fn constant(&mut self, bits: u64, format: FloatFormat, at: Pos) -> Result<(Value, FloatFormat), DslError> {
        if bits >> format.width() != 0 {
            return Err(at.error(format!("constant {bits:#x} is wider than {format} ({} bits)", format.width())));
        }
        Ok((self.kernel.constant(bits as u32), format))
    }

    /// A constant takes the type of the other operand.
    fn operands(&mut self, a: &Expr, b: &Expr, at: Pos) -> Result<(Value, Value, FloatFormat), DslError> {
        let is_const = |e: &Expr| matches!(e, Expr::Decimal(..) | Expr::Hex(..));
        let (va, vb, ta, tb);
        if is_const(a) && !is_const(b) {
            (vb, tb) = self.expr(b)?;
            (va, ta) = self.typed(a, tb)?;
        } else {
            (va, ta) = self.expr(a)?;
            (vb, tb) = self.typed(b, ta)?;
        }
        if ta != tb {
            return Err(at.error(format!("type mismatch: {ta} and {tb}")));
        }
        Ok((va, vb, ta))
    }

    fn typed(&mut self, e: &Expr, format: FloatFormat) -> Result<(Value, FloatFormat), DslError> {
        match e {
            Expr::Decimal(text, at) => {
                let bits = if format == FloatFormat::BINARY32 {
                    text.parse::<f32>().map(|x| x.to_bits() as u64)
                } else {
                    text.parse::<f64>().map(|x| reference::from_f64(format, x) as u64)
                }
                .map_err(|_| at.error(format!("bad number `{text}`")))?;
                self.constant(bits, format, *at)
            }
            Expr::Hex(bits, at) => self.constant(*bits, format, *at),
            other => self.expr(other),
        }
    }

    fn expr(&mut self, e: &Expr) -> Result<(Value, FloatFormat), DslError> {
        match e {
            Expr::Name(n, at) => self.name(n, *at),
            Expr::Decimal(..) | Expr::Hex(..) => self.typed(e, self.kernel.format),
            Expr::Neg(inner) => {
                let (v, t) = self.expr(inner)?;
                Ok((self.kernel.neg(v), t))
            }
            Expr::Binary(op, a, b, at) => {
                let (va, vb, t) = self.operands(a, b, *at)?;
                let op = match op {
                    '+' => FloatOperator::Add,
                    '-' => FloatOperator::Sub,
                    '*' => FloatOperator::Mul,
                    _ => FloatOperator::Div,
                };
                Ok((self.kernel.op(op, &[va, vb]), t))
            }
            Expr::Call(name, args, at) => match name.as_str() {
                "sqrt" if args.len() == 1 => {
                    let (v, t) = self.expr(&args[0])?;
                    Ok((self.kernel.op(FloatOperator::Sqrt, &[v]), t))
                }
                "sqrt" => Err(at.error(format!("sqrt takes 1 argument, got {}", args.len()))),
                "vsum" => Err(at.error("vsum(...) sums over a whole vector: it can only be an output's entire expression")),
                other => Err(at.error(format!("unknown operation `{other}` (known: + - * / sqrt, unary -, and vsum as a whole output)"))),
            },
        }
    }
}
