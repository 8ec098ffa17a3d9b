//! The value types of a kernel — floating point, fixed point, and the booleans comparisons
//! make — and the fixed rules of kernel arithmetic on them.
//!
//! Fixed-point arithmetic in a kernel keeps its operands' format: `+`, `-`, `*` and negation of
//! two `sfix<16,8>` values give an `sfix<16,8>`, rounded to nearest (ties to even) and
//! saturating at the format's ends (a stream programmer's fixed point does not wrap). Mixed
//! formats are a type error: convert one operand first.

use std::fmt;

use crate::fixed::{FixedFormat, FixedOp, FixedOperation, Overflow, Rounding};
use crate::float::FloatFormat;

/// The type of a value in a kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Type {
    /// A floating-point value.
    Float(FloatFormat),
    /// A fixed-point value.
    Fixed(FixedFormat),
    /// A comparison's result, one bit: what `select` chooses with.
    Bool,
}

impl Type {
    /// Width of the value in bits.
    pub fn width(self) -> usize {
        match self {
            Type::Float(f) => f.width(),
            Type::Fixed(f) => f.width,
            Type::Bool => 1,
        }
    }

    /// The sign bit of a float, as a mask.
    pub(crate) fn sign_mask(self) -> u64 {
        1u64 << (self.width() - 1)
    }
}

impl fmt::Display for Type {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Type::Float(format) => write!(f, "{format}"),
            Type::Fixed(x) => write!(f, "{}fix<{},{}>", if x.signed { "s" } else { "u" }, x.width, x.frac),
            Type::Bool => f.write_str("bool"),
        }
    }
}

/// How fixed-point results are rounded in a kernel.
pub const FIXED_ROUNDING: Rounding = Rounding::NearestEven;
/// What fixed-point results outside their format do in a kernel.
pub const FIXED_OVERFLOW: Overflow = Overflow::Saturate;

/// `op` on two operands of format `a` (and `b`), the result in `out`, with the kernel's modes.
pub fn fixed_operation(op: FixedOp, a: FixedFormat, b: FixedFormat, out: FixedFormat) -> FixedOperation {
    FixedOperation { op, a, b, out, rounding: FIXED_ROUNDING, overflow: FIXED_OVERFLOW }
}

/// A comparison: its result is a [`Type::Bool`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Cmp {
    /// `<`.
    Lt,
    /// `<=`.
    Le,
    /// `>`.
    Gt,
    /// `>=`.
    Ge,
    /// `==`.
    Eq,
    /// `!=`.
    Ne,
}

impl Cmp {
    /// Every comparison.
    pub const ALL: [Cmp; 6] = [Cmp::Lt, Cmp::Le, Cmp::Gt, Cmp::Ge, Cmp::Eq, Cmp::Ne];
    /// The operator as written in the kernel language.
    pub fn symbol(self) -> &'static str {
        match self {
            Cmp::Lt => "<",
            Cmp::Le => "<=",
            Cmp::Gt => ">",
            Cmp::Ge => ">=",
            Cmp::Eq => "==",
            Cmp::Ne => "!=",
        }
    }
    /// The comparison on an ordering; `None` is unordered (a NaN operand): false for all but `!=`.
    pub fn holds(self, order: Option<std::cmp::Ordering>) -> bool {
        use std::cmp::Ordering::*;
        match (self, order) {
            (Cmp::Ne, None) => true,
            (_, None) => false,
            (Cmp::Lt, Some(o)) => o == Less,
            (Cmp::Le, Some(o)) => o != Greater,
            (Cmp::Gt, Some(o)) => o == Greater,
            (Cmp::Ge, Some(o)) => o != Less,
            (Cmp::Eq, Some(o)) => o == Equal,
            (Cmp::Ne, Some(o)) => o != Equal,
        }
    }
}

/// Largest stream offset `x[k]` may name, in beats either way.
pub const MAX_OFFSET: i64 = 64;
