//! What the engine reduces: the element type, chosen per system (it sets the adders and the
//! lanes of a beat), and the operator, chosen per operation through the register window.
//!
//! Every combination is IEEE 754: `sum` adds with round to nearest even (subnormals kept), `min`
//! and `max` are IEEE 754-2019 `minimum` and `maximum` (−0 < +0). Any NaN operand gives the
//! format's canonical quiet NaN. An operand a node does not have (no partial from a port) is the
//! operator's identity: −0 for `sum`, +∞ for `min`, −∞ for `max`, which leaves every other
//! operand unchanged.

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
}

/// Every element type, in the order the docs list them.
pub const ELEMENT_TYPES: [ElementType; 4] = [ElementType::F32, ElementType::F64, ElementType::F16, ElementType::Bf16];

impl ElementType {
    /// The name in system descriptions and in the kernel language: `f32`, `f64`, `f16`, `bf16`.
    pub fn name(self) -> &'static str {
        match self {
            ElementType::F32 => "f32",
            ElementType::F64 => "f64",
            ElementType::F16 => "f16",
            ElementType::Bf16 => "bf16",
        }
    }

    /// The type a name gives; an unknown name is an error listing the allowed ones.
    pub fn parse(name: &str) -> Result<ElementType, Error> {
        ELEMENT_TYPES.into_iter().find(|t| t.name() == name).ok_or_else(|| Error::Config(format!("allreduce element type `{name}`: allowed f32, f64, f16, bf16")))
    }

    /// The IEEE format of the elements.
    pub fn format(self) -> FloatFormat {
        match self {
            ElementType::F32 => FloatFormat::BINARY32,
            ElementType::F64 => FloatFormat::BINARY64,
            ElementType::F16 => FloatFormat::BINARY16,
            ElementType::Bf16 => FloatFormat::BFLOAT16,
        }
    }

    /// Bits of one element.
    pub fn bits(self) -> usize {
        self.format().width()
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
}

/// Every operator, by register value.
pub const REDUCE_OPS: [ReduceOp; 3] = [ReduceOp::Sum, ReduceOp::Min, ReduceOp::Max];

impl ReduceOp {
    /// The value of register `allreduce_op` that selects it (3 is reserved and reduces as `sum`).
    pub fn code(self) -> u32 {
        self as u32
    }

    /// `sum`, `min` or `max`.
    pub fn name(self) -> &'static str {
        match self {
            ReduceOp::Sum => "sum",
            ReduceOp::Min => "min",
            ReduceOp::Max => "max",
        }
    }

    /// The operand that leaves any other unchanged: −0, +∞ or −∞, as bits of `ty`.
    pub fn identity(self, ty: ElementType) -> u128 {
        let f = ty.format();
        match self {
            ReduceOp::Sum => 1 << (f.width() - 1),
            ReduceOp::Min => f.infinity(false),
            ReduceOp::Max => f.infinity(true),
        }
    }

    /// `a op b` on elements of `ty` given as bits, as the engine computes it.
    pub fn apply(self, ty: ElementType, a: u128, b: u128) -> u128 {
        let f = ty.format();
        let nan = |x: u128| (x >> f.man) & f.exp_max() == f.exp_max() && x & ((1 << f.man) - 1) != 0;
        if nan(a) || nan(b) {
            return f.quiet_nan();
        }
        match self {
            ReduceOp::Sum => FloatOp::Add.apply(f, a, b),
            ReduceOp::Min | ReduceOp::Max => {
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
    }

    #[test]
    fn the_identity_leaves_every_other_operand_unchanged() {
        for t in ELEMENT_TYPES {
            for op in REDUCE_OPS {
                for x in [0u128, 1 << (t.bits() - 1), 1, t.format().infinity(false), t.format().infinity(true), 0x3C00 & ((1 << t.bits()) - 1)] {
                    assert_eq!(op.apply(t, op.identity(t), x), x, "{} {} identity with {x:#x}", t.name(), op.name());
                }
            }
        }
    }
}
