//! Expressions and type names of the kernel DSL: the syntax tree and its parser (one line at a
//! time, positions as 1-based line and column).

use nom::branch::alt;
use nom::bytes::complete::{tag, take_while, take_while1};
use nom::character::complete::{char, digit1, hex_digit1, one_of, space0};
use nom::combinator::{opt, recognize};
use nom::sequence::{pair, tuple};
use nom::IResult;

use super::DslError;
use crate::pipeline::Cmp;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Pos {
    pub line: usize,
    pub column: usize,
}

impl Pos {
    pub fn error(self, message: impl Into<String>) -> DslError {
        DslError { line: self.line, column: self.column, message: message.into() }
    }
}

/// A type as written: `f32`, or `sfix<16,8>` (name and parameters).
#[derive(Clone, Debug)]
pub(super) struct TypeName {
    pub name: String,
    pub params: Option<(u64, u64)>,
    pub at: Pos,
}

#[derive(Clone, Debug)]
pub(super) enum Expr {
    Name(String, Pos),
    Decimal(String, Pos),
    Hex(u64, Pos),
    Neg(Box<Expr>, Pos),
    Binary(char, Box<Expr>, Box<Expr>, Pos),
    Compare(Cmp, Box<Expr>, Box<Expr>, Pos),
    Call(String, Vec<Expr>, Pos),
    /// `T(x)` with `T` a parameterised type (`sfix<16,8>(x)`).
    Cast(TypeName, Box<Expr>),
    /// `name[k]`: the name, the offset and where the offset is written.
    Offset(String, Pos, i64, Pos),
}

pub(super) type Res<'a, T> = IResult<&'a str, T>;
type E<'a> = nom::error::Error<&'a str>;

pub(super) fn identifier(s: &str) -> Res<'_, &str> {
    recognize(pair(take_while1(|c: char| c.is_ascii_alphabetic() || c == '_'), take_while(|c: char| c.is_ascii_alphanumeric() || c == '_')))(s)
}

pub(super) fn ws<'a, T>(mut p: impl FnMut(&'a str) -> Res<'a, T>) -> impl FnMut(&'a str) -> Res<'a, T> {
    move |s| {
        let (s, _) = space0(s)?;
        p(s)
    }
}

fn failure(s: &str) -> nom::Err<E<'_>> {
    nom::Err::Failure(nom::error::Error::new(s, nom::error::ErrorKind::Verify))
}

/// Names of the fixed-point types, which take `<width,fraction>`.
pub(super) const FIXED_TYPES: [&str; 3] = ["sfix", "ufix", "fix"];

/// Parses expressions of one line; `line` is the full line, to turn remaining input into columns.
pub(super) struct ExprParser<'l> {
    pub line_no: usize,
    pub line: &'l str,
}

impl<'l> ExprParser<'l> {
    pub fn pos(&self, rest: &str) -> Pos {
        Pos { line: self.line_no, column: self.line.len() - rest.len() + 1 }
    }

    /// A type name; `s` starts at it (after spaces).
    pub fn type_name<'a>(&self, s: &'a str) -> Res<'a, TypeName> {
        let (s, _) = space0(s)?;
        let at = self.pos(s);
        let (t, name) = identifier(s)?;
        if !FIXED_TYPES.contains(&name) {
            return Ok((t, TypeName { name: name.to_string(), params: None, at }));
        }
        let number = |s: &'a str| -> Res<'a, u64> {
            let (t, digits) = ws(digit1)(s)?;
            digits.parse().map(|n| (t, n)).map_err(|_| failure(s))
        };
        let (t, _) = ws(char('<'))(t)?;
        let (t, width) = number(t)?;
        let (t, _) = ws(char(','))(t)?;
        let (t, frac) = number(t)?;
        let (t, _) = ws(char('>'))(t)?;
        Ok((t, TypeName { name: name.to_string(), params: Some((width, frac)), at }))
    }

    /// Equality (`==`, `!=`) binds loosest, then order (`<` `<=` `>` `>=`), as in C.
    pub fn expr<'a>(&self, s: &'a str) -> Res<'a, Expr> {
        self.comparison(s, &[("==", Cmp::Eq), ("!=", Cmp::Ne)], |p, s| p.comparison(s, &[("<=", Cmp::Le), (">=", Cmp::Ge), ("<", Cmp::Lt), (">", Cmp::Gt)], |p, s| p.sum(s)))
    }

    fn comparison<'a>(&self, s: &'a str, ops: &[(&str, Cmp)], next: impl Fn(&Self, &'a str) -> Res<'a, Expr>) -> Res<'a, Expr> {
        let (mut s, mut left) = next(self, s)?;
        'more: loop {
            let (t, _) = space0(s)?;
            let at = self.pos(t);
            for (symbol, cmp) in ops {
                if let Ok((t, _)) = tag::<_, _, E>(*symbol)(t) {
                    let (t, right) = next(self, t)?;
                    left = Expr::Compare(*cmp, Box::new(left), Box::new(right), at);
                    s = t;
                    continue 'more;
                }
            }
            return Ok((s, left));
        }
    }

    fn sum<'a>(&self, s: &'a str) -> Res<'a, Expr> {
        let (mut s, mut left) = self.term(s)?;
        loop {
            let (t, _) = space0(s)?;
            let at = self.pos(t);
            match one_of::<_, _, E>("+-")(t) {
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
            match one_of::<_, _, E>("*/")(t) {
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
        let at = self.pos(s);
        if let Ok((t, _)) = char::<_, E>('-')(s) {
            let (t, inner) = self.unary(t)?;
            return Ok((t, Expr::Neg(Box::new(inner), at)));
        }
        self.primary(s)
    }

    fn arguments<'a>(&self, s: &'a str) -> Res<'a, Vec<Expr>> {
        let (mut u, first) = self.expr(s)?;
        let mut args = vec![first];
        loop {
            let (v, _) = space0(u)?;
            if let Ok((v, _)) = char::<_, E>(',')(v) {
                let (v, arg) = self.expr(v)?;
                args.push(arg);
                u = v;
            } else {
                let (v, _) = char(')')(v)?;
                return Ok((v, args));
            }
        }
    }

    fn primary<'a>(&self, s: &'a str) -> Res<'a, Expr> {
        let (s, _) = space0(s)?;
        let at = self.pos(s);
        if let Ok((t, _)) = char::<_, E>('(')(s) {
            let (t, inner) = self.expr(t)?;
            let (t, _) = ws(char(')'))(t)?;
            return Ok((t, inner));
        }
        if let Ok((t, digits)) = pair(alt((tag("0x"), tag("0X"))), hex_digit1::<_, E>)(s) {
            let value = u64::from_str_radix(digits.1, 16).map_err(|_| failure(s))?;
            return Ok((t, Expr::Hex(value, at)));
        }
        if let Ok((t, text)) = recognize(tuple((digit1::<_, E>, opt(pair(char('.'), opt(digit1))), opt(tuple((one_of("eE"), opt(one_of("+-")), digit1))))))(s) {
            return Ok((t, Expr::Decimal(text.to_string(), at)));
        }
        let (t, name) = identifier(s)?;
        if FIXED_TYPES.contains(&name) {
            let (t, ty) = self.type_name(s)?;
            let (t, _) = ws(char('('))(t)?;
            let (t, args) = self.arguments(t)?;
            return match <[Expr; 1]>::try_from(args) {
                Ok([arg]) => Ok((t, Expr::Cast(ty, Box::new(arg)))),
                Err(args) => Ok((t, Expr::Call(format!("{}<..>", ty.name), args, at))),
            };
        }
        let (u, _) = space0(t)?;
        if let Ok((u, _)) = char::<_, E>('(')(u) {
            let (u, args) = self.arguments(u)?;
            return Ok((u, Expr::Call(name.to_string(), args, at)));
        }
        if let Ok((u, _)) = char::<_, E>('[')(u) {
            let (u, _) = space0(u)?;
            let k_at = self.pos(u);
            let (u, text) = recognize(pair(opt(one_of::<_, _, E>("+-")), digit1))(u)?;
            let (u, _) = ws(char(']'))(u)?;
            // Out of i64 is out of the allowed range too; the lowering reports it.
            let k = text.parse::<i64>().unwrap_or(i64::MAX);
            return Ok((u, Expr::Offset(name.to_string(), at, k, k_at)));
        }
        Ok((t, Expr::Name(name.to_string(), at)))
    }
}
