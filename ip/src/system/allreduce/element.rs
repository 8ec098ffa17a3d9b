//! What the engine reduces: the element type, chosen per system (it sets the adders and the
//! lanes of a beat), and the operator, chosen per operation through the register window.
//!
//! On floating-point elements `sum` adds with round to nearest even (subnormals kept), `min` and
//! `max` are IEEE 754-2019 `minimum` and `maximum` (−0 < +0), and any NaN operand gives the
//! format's canonical quiet NaN. On int32 elements `sum` wraps (two's complement) and `min`/`max`
//! compare signed. `or` is the bitwise OR of the elements' bits on every type: with zeros
//! beside one node's bits it moves them unchanged, which makes broadcast and allgather exact
//! ([`super::collective`]). An operand a node does not have (no partial from a port) is the
//! operator's identity, which leaves every other operand unchanged: for floats −0 (`sum`), +∞
//! (`min`), −∞ (`max`); for int32 0, the largest and the smallest value; 0 for `or`.

use crate::Error;
use weft_hdl::float::reference::FloatOp;
use weft_hdl::float::FloatFormat;

/// The element type of a system's engine (`[allreduce] type` in a system description).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum ElementType {
    /// IEEE 754 binary32 (4 lanes in a 128-bit beat).
    #[default]
    F32,
    /// IEEE 754 binary64 (2 lanes in a 128-bit beat).
    F64,
    /// IEEE 754 binary16 (8 lanes in a 128-bit beat).
    F16,
    /// bfloat16: binary32's exponent, 7 fraction bits (8 lanes in a 128-bit beat).
    Bf16,
    /// Two's-complement 32-bit integers (4 lanes in a 128-bit beat).
    I32,
}

/// Every element type, by the value of register `allreduce_type`.
pub const ELEMENT_TYPES: [ElementType; 5] = [ElementType::F32, ElementType::F64, ElementType::F16, ElementType::Bf16, ElementType::I32];

impl ElementType {
    /// The name in system descriptions (and for floats in the kernel language): `f32`, `f64`,
    /// `f16`, `bf16`, `i32`.
    pub fn name(self) -> &'static str {
        match self {
            ElementType::F32 => "f32",
            ElementType::F64 => "f64",
            ElementType::F16 => "f16",
            ElementType::Bf16 => "bf16",
            ElementType::I32 => "i32",
        }
    }

    /// The type a name gives; an unknown name is an error listing the allowed ones.
    pub fn parse(name: &str) -> Result<ElementType, Error> {
        ELEMENT_TYPES.into_iter().find(|t| t.name() == name).ok_or_else(|| Error::Config(format!("allreduce element type `{name}`: allowed f32, f64, f16, bf16, i32")))
    }

    /// A module name for elements of this type at `width` bits: `<stem>_w<W>` for binary32 (the
    /// shipped modules), else `<stem>_<type>_w<W>`.
    pub fn module_name(self, stem: &str, width: usize) -> String {
        if self == ElementType::F32 {
            format!("{stem}_w{width}")
        } else {
            format!("{stem}_{}_w{width}", self.name())
        }
    }

    /// The IEEE format of floating-point elements; `None` for int32.
    pub fn float(self) -> Option<FloatFormat> {
        match self {
            ElementType::F32 => Some(FloatFormat::BINARY32),
            ElementType::F64 => Some(FloatFormat::BINARY64),
            ElementType::F16 => Some(FloatFormat::BINARY16),
            ElementType::Bf16 => Some(FloatFormat::BFLOAT16),
            ElementType::I32 => None,
        }
    }

    /// The value of register `allreduce_type`: the position in [`ELEMENT_TYPES`].
    pub fn code(self) -> u32 {
        ELEMENT_TYPES.iter().position(|t| *t == self).unwrap() as u32
    }

    /// Bits of one element.
    pub fn bits(self) -> usize {
        self.float().map_or(32, |f| f.width())
    }

    /// Bytes of one element.
    pub fn bytes(self) -> usize {
        self.bits() / 8
    }
}

/// The reduction operator of one operation (register `allreduce_op`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum ReduceOp {
    /// The sum, in the documented order (register value 0).
    #[default]
    Sum,
    /// IEEE 754-2019 `minimum` (register value 1).
    Min,
    /// IEEE 754-2019 `maximum` (register value 2).
    Max,
    /// The bitwise OR of the elements' bits (register value 3).
    Or,
}

/// Every operator, by register value.
pub const REDUCE_OPS: [ReduceOp; 4] = [ReduceOp::Sum, ReduceOp::Min, ReduceOp::Max, ReduceOp::Or];

impl ReduceOp {
    /// The value of register `allreduce_op` that selects it.
    pub fn code(self) -> u32 {
        self as u32
    }

    /// `sum`, `min`, `max` or `or`.
    pub fn name(self) -> &'static str {
        match self {
            ReduceOp::Sum => "sum",
            ReduceOp::Min => "min",
            ReduceOp::Max => "max",
            ReduceOp::Or => "or",
        }
    }

    /// The operand that leaves any other unchanged, as bits of `ty`.
    pub fn identity(self, ty: ElementType) -> u128 {
        match (self, ty.float()) {
            (ReduceOp::Or, _) => 0,
            (ReduceOp::Sum, Some(f)) => 1 << (f.width() - 1),
            (ReduceOp::Min, Some(f)) => f.infinity(false),
            (ReduceOp::Max, Some(f)) => f.infinity(true),
            (ReduceOp::Sum, None) => 0,
            (ReduceOp::Min, None) => i32::MAX as u32 as u128,
            (ReduceOp::Max, None) => i32::MIN as u32 as u128,
        }
    }

    /// `a op b` on elements of `ty` given as bits, as the engine computes it.
    pub fn apply(self, ty: ElementType, a: u128, b: u128) -> u128 {
        if self == ReduceOp::Or {
            return a | b;
        }
        let Some(f) = ty.float() else {
            let (x, y) = (a as u32 as i32, b as u32 as i32);
            return match self {
                ReduceOp::Sum => x.wrapping_add(y),
                ReduceOp::Min => x.min(y),
                _ => x.max(y),
            } as u32 as u128;
        };
        let nan = |x: u128| (x >> f.man) & f.exp_max() == f.exp_max() && x & ((1 << f.man) - 1) != 0;
        if nan(a) || nan(b) {
            return f.quiet_nan();
        }
        match self {
            ReduceOp::Sum => FloatOp::Add.apply(f, a, b),
            _ => {
                // Order as signed magnitudes: −0 below +0.
                let key = |x: u128| {
                    let magnitude = (x & ((1 << (f.width() - 1)) - 1)) as i128;
                    if x >> (f.width() - 1) == 1 {
                        -magnitude - 1
                    } else {
                        magnitude
                    }
                };
                let a_first = if self == ReduceOp::Min { key(a) <= key(b) } else { key(a) >= key(b) };
                if a_first {
                    a
                } else {
                    b
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binary32_agrees_with_the_native_operators() {
        let t = ElementType::F32;
        let cases = [(1.5f32, -0.25f32), (0.0, -0.0), (-0.0, 0.0), (f32::INFINITY, 3.0), (f32::MIN_POSITIVE / 4.0, 1e-40), (-7.0, -7.5)];
        for (x, y) in cases {
            let (a, b) = (x.to_bits() as u128, y.to_bits() as u128);
            assert_eq!(ReduceOp::Sum.apply(t, a, b), (x + y).to_bits() as u128, "{x} + {y}");
            // IEEE 754-2019 minimum/maximum: as f32::min/max except that −0 < +0.
            let (lo, hi) = if x == y && x == 0.0 {
                if x.is_sign_negative() {
                    (x, y)
                } else {
                    (y, x)
                }
            } else {
                (x.min(y), x.max(y))
            };
            assert_eq!(ReduceOp::Min.apply(t, a, b), lo.to_bits() as u128, "min({x}, {y})");
            assert_eq!(ReduceOp::Max.apply(t, a, b), hi.to_bits() as u128, "max({x}, {y})");
        }
        assert_eq!(ReduceOp::Min.apply(t, f32::NAN.to_bits() as u128, 1), 0x7FC0_0000);
        assert_eq!(ReduceOp::Or.apply(t, f32::NAN.to_bits() as u128 | 1, 0), f32::NAN.to_bits() as u128 | 1, "or keeps a NaN's payload");
    }

    #[test]
    fn int32_agrees_with_the_native_operators() {
        let t = ElementType::I32;
        for (x, y) in [(1i32, -2i32), (i32::MAX, 1), (i32::MIN, -1), (-5, -5), (0, i32::MIN)] {
            let (a, b) = (x as u32 as u128, y as u32 as u128);
            assert_eq!(ReduceOp::Sum.apply(t, a, b), x.wrapping_add(y) as u32 as u128, "{x} + {y}");
            assert_eq!(ReduceOp::Min.apply(t, a, b), x.min(y) as u32 as u128, "min({x}, {y})");
            assert_eq!(ReduceOp::Max.apply(t, a, b), x.max(y) as u32 as u128, "max({x}, {y})");
            assert_eq!(ReduceOp::Or.apply(t, a, b), (x | y) as u32 as u128, "{x} | {y}");
        }
    }

    #[test]
    fn the_identity_leaves_every_other_operand_unchanged() {
        for t in ELEMENT_TYPES {
            for op in REDUCE_OPS {
                let special = t.float().map_or([0x7FFF_FFFF, 0x8000_0000], |f| [f.infinity(false), f.infinity(true)]);
                for x in [0u128, 1 << (t.bits() - 1), 1, special[0], special[1], 0x3C00 & ((1 << t.bits()) - 1)] {
                    assert_eq!(op.apply(t, op.identity(t), x), x, "{} {} identity with {x:#x}", t.name(), op.name());
                }
            }
        }
    }
}
