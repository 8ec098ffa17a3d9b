//! Typing and lowering of DSL expressions onto the kernel builder: names resolve to inputs or
//! bindings (in any order, cycles reported), constants take the type of the other operand, and
//! every error carries the position of what caused it.

use std::collections::{BTreeMap, HashMap};

use super::expr::{Expr, Pos, TypeName};
use super::{Definition, DslError};
use crate::fixed::{FixedFormat, FixedOp};
use crate::float::{reference, FloatFormat, FloatOperator};
use crate::pipeline::{Kernel, Type, Value};

/// The type a [`TypeName`] names; fixed-point types hold at most `slot` bits (a lane).
pub(super) fn resolve_type(t: &TypeName, slot: usize) -> Result<Type, DslError> {
    let known = "known: f64, f32, f16, bf16, sfix<W,F>, ufix<W,F>, fix<W,F> (= sfix)";
    match (t.name.as_str(), t.params) {
        ("f64", None) => Ok(Type::Float(FloatFormat::BINARY64)),
        ("f32", None) => Ok(Type::Float(FloatFormat::BINARY32)),
        ("f16", None) => Ok(Type::Float(FloatFormat::BINARY16)),
        ("bf16", None) => Ok(Type::Float(FloatFormat::BFLOAT16)),
        (name @ ("sfix" | "ufix" | "fix"), Some((width, frac))) => {
            let signed = name != "ufix";
            let low = if signed { 2 } else { 1 };
            // At most 32 bits: the golden model converts fixed point through binary64 exactly.
            let top = slot.min(32);
            if !(low..=top as u64).contains(&width) {
                return Err(t.at.error(format!("{name}<{width},{frac}>: width {width} out of range: allowed {low}..={top} bits (a lane of the kernel, at most 32)")));
            }
            if frac > width {
                return Err(t.at.error(format!("{name}<{width},{frac}>: fraction bits {frac} out of range: allowed 0..={width} (the width)")));
            }
            FixedFormat::new(signed, width as usize, frac as usize).map(Type::Fixed).map_err(|e| t.at.error(e))
        }
        (other, _) => Err(t.at.error(format!("unknown type `{other}` ({known})"))),
    }
}

pub(super) struct Lowering<'d> {
    pub kernel: Kernel,
    pub definitions: &'d BTreeMap<String, (Definition, Pos)>,
    pub done: HashMap<String, (Value, Type)>,
    /// Bindings being lowered, to report cycles.
    pub active: Vec<String>,
    /// Recurrences (`s[-1]` inside `s`) waiting for their binding, with where they are written.
    pub open: HashMap<String, Vec<(Value, Pos)>>,
}

/// A constant, possibly negated (`-1.5`).
fn is_const(e: &Expr) -> bool {
    match e {
        Expr::Decimal(..) | Expr::Hex(..) => true,
        Expr::Neg(inner, _) => is_const(inner),
        _ => false,
    }
}

impl Lowering<'_> {
    pub fn name(&mut self, name: &str, at: Pos) -> Result<(Value, Type), DslError> {
        if let Some(v) = self.done.get(name) {
            return Ok(*v);
        }
        if let Some(i) = self.active.iter().position(|n| n == name) {
            let mut path = self.active[i..].to_vec();
            path.push(name.to_string());
            return Err(at.error(format!("cycle: {}", path.join(" -> "))));
        }
        let (expr, declared) = match self.definitions.get(name) {
            Some((Definition::Let(e, declared), _)) => (e.clone(), declared.clone()),
            Some((Definition::Input(..), _)) => unreachable!("inputs are lowered first"),
            None => return Err(at.error(format!("undefined name `{name}`"))),
        };
        let slot = self.kernel.format.width();
        let ty = declared.as_ref().map(|t| resolve_type(t, slot)).transpose()?;
        self.active.push(name.to_string());
        let v = match ty {
            Some(ty) => self.typed(&expr, ty)?,
            None => self.expr(&expr)?,
        };
        self.active.pop();
        if let (Some(want), Some(t)) = (ty, &declared) {
            if v.1 != want {
                return Err(t.at.error(format!("type mismatch: `{name}` is declared {want}, its expression is {}", v.1)));
            }
        }
        for (prev, at) in self.open.remove(name).unwrap_or_default() {
            self.kernel.close_recurrence(prev, v.0).map_err(|e| at.error(format!("recurrence on `{name}`: {e}")))?;
        }
        self.kernel.names.entry(v.0).or_insert_with(|| name.to_string());
        self.done.insert(name.to_string(), v);
        Ok(v)
    }

    /// `name[k]` inside `name`'s own definition: a recurrence on an earlier beat.
    fn recurrence(&mut self, name: &str, at: Pos, k: i64, k_at: Pos) -> Result<(Value, Type), DslError> {
        if k >= 0 {
            return Err(k_at.error(format!("`{name}[{k}]` inside the definition of `{name}`: a recurrence reads earlier beats only (`{name}[-1]`)")));
        }
        let declared = match self.definitions.get(name) {
            Some((Definition::Let(_, Some(t)), _)) => t.clone(),
            _ => return Err(at.error(format!("recurrence `{name}[{k}]`: declare the type of `{name}` (`let {name}: f32 = ...`)"))),
        };
        let ty = resolve_type(&declared, self.kernel.format.width())?;
        let v = Self::builder(k_at, self.kernel.recurrence(ty, k.saturating_neg()))?;
        self.open.entry(name.to_string()).or_default().push((v, at));
        Ok((v, ty))
    }

    fn constant(&mut self, bits: u64, ty: Type, at: Pos) -> Result<(Value, Type), DslError> {
        if ty.width() < 64 && bits >> ty.width() != 0 {
            return Err(at.error(format!("constant {bits:#x} is wider than {ty} ({} bits)", ty.width())));
        }
        Ok((self.kernel.constant_typed(bits, ty), ty))
    }

    /// Operands of one type: a constant takes the type of the other operand.
    fn pair(&mut self, a: &Expr, b: &Expr) -> Result<[(Value, Type); 2], DslError> {
        if is_const(a) && !is_const(b) {
            let vb = self.expr(b)?;
            Ok([self.typed(a, vb.1)?, vb])
        } else {
            let va = self.expr(a)?;
            Ok([va, self.typed(b, va.1)?])
        }
    }

    /// `e`, a constant in type `ty`.
    fn typed(&mut self, e: &Expr, ty: Type) -> Result<(Value, Type), DslError> {
        match (e, ty) {
            (Expr::Decimal(text, at), Type::Float(format)) => {
                let bits = if format == FloatFormat::BINARY32 { text.parse::<f32>().map(|x| x.to_bits() as u64) } else { text.parse::<f64>().map(|x| reference::from_f64(format, x) as u64) }
                    .map_err(|_| at.error(format!("bad number `{text}`")))?;
                self.constant(bits, ty, *at)
            }
            (Expr::Decimal(text, at), Type::Fixed(f)) => {
                let x: f64 = text.parse().map_err(|_| at.error(format!("bad number `{text}`")))?;
                let scaled = (x * 2f64.powi(f.frac as i32)).round_ties_even();
                let (lo, hi) = (f.min_raw() as f64, f.max_raw() as f64);
                if !(lo..=hi).contains(&scaled) {
                    let unit = 2f64.powi(-(f.frac as i32));
                    return Err(at.error(format!("constant {text} is outside {ty}: allowed range {}..={}", lo * unit, hi * unit)));
                }
                self.constant(f.bits(scaled as i128) as u64, ty, *at)
            }
            (Expr::Hex(bits, at), Type::Float(_) | Type::Fixed(_)) => self.constant(*bits, ty, *at),
            // A negative fixed-point constant is one constant (so the format's minimum is one).
            (Expr::Neg(inner, _), Type::Fixed(_)) if matches!(**inner, Expr::Decimal(..)) => {
                let Expr::Decimal(text, at) = &**inner else { unreachable!() };
                self.typed(&Expr::Decimal(format!("-{text}"), *at), ty)
            }
            (Expr::Neg(inner, at), Type::Float(_) | Type::Fixed(_)) if is_const(inner) => {
                let (v, t) = self.typed(inner, ty)?;
                if t == Type::Bool {
                    return Err(at.error("negation of a bool (a comparison's result)"));
                }
                Ok((self.kernel.neg(v), t))
            }
            _ => self.expr(e),
        }
    }

    fn builder<T>(at: Pos, r: Result<T, crate::Error>) -> Result<T, DslError> {
        r.map_err(|e| at.error(e))
    }

    pub fn expr(&mut self, e: &Expr) -> Result<(Value, Type), DslError> {
        let default = Type::Float(self.kernel.format);
        let typed = |v: Value, k: &Kernel| (v, k.ty(v));
        match e {
            Expr::Name(n, at) => self.name(n, *at),
            Expr::Decimal(..) | Expr::Hex(..) => self.typed(e, default),
            Expr::Neg(inner, at) => {
                let (v, t) = self.expr(inner)?;
                if t == Type::Bool {
                    return Err(at.error("negation of a bool (a comparison's result)"));
                }
                Ok((self.kernel.neg(v), t))
            }
            Expr::Binary(op, a, b, at) => {
                let [(va, ta), (vb, tb)] = self.pair(a, b)?;
                if ta != tb {
                    return Err(at.error(format!("type mismatch: {ta} and {tb}")));
                }
                let v = match (op, ta) {
                    ('/', Type::Float(_)) => self.kernel.op(FloatOperator::Div, &[va, vb]),
                    ('/', _) => return Err(at.error(format!("`/` is for floats; {ta} has + - * (convert to a float to divide)"))),
                    _ => {
                        let fixed = match op {
                            '+' => FixedOp::Add,
                            '-' => FixedOp::Sub,
                            _ => FixedOp::Mul,
                        };
                        Self::builder(*at, self.kernel.arith(fixed, va, vb))?
                    }
                };
                Ok(typed(v, &self.kernel))
            }
            Expr::Compare(cmp, a, b, at) => {
                let [(va, _), (vb, _)] = self.pair(a, b)?;
                let v = Self::builder(*at, self.kernel.compare(*cmp, va, vb))?;
                Ok(typed(v, &self.kernel))
            }
            Expr::Cast(ty, arg) => {
                let to = resolve_type(ty, self.kernel.format.width())?;
                let (v, _) = self.typed(arg, to)?;
                let v = Self::builder(ty.at, self.kernel.convert(v, to))?;
                Ok(typed(v, &self.kernel))
            }
            Expr::Offset(name, at, k, k_at) if self.active.contains(name) => self.recurrence(name, *at, *k, *k_at),
            Expr::Offset(name, at, k, k_at) => {
                let (v, _) = self.name(name, *at)?;
                let v = Self::builder(*k_at, self.kernel.offset(v, *k))?;
                Ok(typed(v, &self.kernel))
            }
            Expr::Call(name, args, at) => self.call(name, args, *at),
        }
    }

    fn call(&mut self, name: &str, args: &[Expr], at: Pos) -> Result<(Value, Type), DslError> {
        let arity = match name {
            "sqrt" | "abs" | "f64" | "f32" | "f16" | "bf16" => 1,
            "min" | "max" => 2,
            "select" => 3,
            "vsum" => return Err(at.error("vsum(...) sums over a whole vector: it can only be an output's entire expression")),
            n if n.ends_with("<..>") => 1,
            other => {
                return Err(at.error(format!(
                    "unknown operation `{other}` (known: + - * / < <= > >= == != sqrt select min max abs, conversions f32(x) sfix<W,F>(x) ufix<W,F>(x), offsets x[k], and vsum as a whole output)"
                )))
            }
        };
        if args.len() != arity {
            let name = name.trim_end_matches("<..>");
            return Err(at.error(format!("{name} takes {arity} argument{}, got {}", if arity == 1 { "" } else { "s" }, args.len())));
        }
        let v = match name {
            "sqrt" => {
                let (v, t) = self.expr(&args[0])?;
                if !matches!(t, Type::Float(_)) {
                    return Err(at.error(format!("sqrt is for floats, not {t}")));
                }
                self.kernel.op(FloatOperator::Sqrt, &[v])
            }
            "abs" => {
                let (v, _) = self.expr(&args[0])?;
                Self::builder(at, self.kernel.abs(v))?
            }
            "min" | "max" => {
                let [(a, _), (b, _)] = self.pair(&args[0], &args[1])?;
                Self::builder(at, if name == "min" { self.kernel.min(a, b) } else { self.kernel.max(a, b) })?
            }
            "select" => {
                let (c, _) = self.expr(&args[0])?;
                let [(a, _), (b, _)] = self.pair(&args[1], &args[2])?;
                Self::builder(at, self.kernel.select(c, a, b))?
            }
            float => {
                let to = resolve_type(&TypeName { name: float.to_string(), params: None, at }, self.kernel.format.width())?;
                let (v, _) = self.typed(&args[0], to)?;
                Self::builder(at, self.kernel.convert(v, to))?
            }
        };
        Ok((v, self.kernel.ty(v)))
    }
}
