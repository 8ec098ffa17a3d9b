//! Operand generators for floating-point tests: random bit patterns alone rarely hit the cases
//! that break operators (subnormals, ties, cancellation, overflow), so most operands are drawn
//! from those classes on purpose.

use super::FloatFormat;
use crate::testbench::Rng;

/// One operand, biased toward the hard classes.
pub fn operand(rng: &mut Rng, f: FloatFormat) -> u128 {
    let sign = (rng.below(2) as u128) << (f.exp + f.man);
    let frac_mask = (1u128 << f.man) - 1;
    let frac = (rng.next_u64() as u128 | ((rng.next_u64() as u128) << 64)) & frac_mask;
    let exp_max = f.exp_max() as u64;
    let exp = match rng.below(16) {
        0 => 0,                                // zero or subnormal
        1 => exp_max,                          // infinity or NaN
        2 => 1 + rng.below(2),                 // smallest normals
        3 => exp_max - 1 - rng.below(2),       // largest finite
        4 => (f.bias() as u64) + rng.below(3), // around one
        _ => rng.below(exp_max + 1),
    } as u128;
    let frac = match rng.below(8) {
        0 => 0,
        1 => frac_mask,
        2 => 1,
        _ => frac,
    };
    sign | (exp << f.man) | frac
}

/// A pair where `b` is often close to `a` (cancellation, ties, equal exponents).
pub fn pair(rng: &mut Rng, f: FloatFormat) -> (u128, u128) {
    let a = operand(rng, f);
    let b = match rng.below(4) {
        0 => {
            let delta = rng.below(4) as u128;
            let sign = (rng.below(2) as u128) << (f.exp + f.man);
            ((a & ((1 << (f.exp + f.man)) - 1)).wrapping_add(delta).wrapping_sub(1) & ((1 << (f.exp + f.man)) - 1)) | sign
        }
        _ => operand(rng, f),
    };
    (a, b)
}

/// Hand-picked binary32 cases, as (a, b): subnormal inputs and results, exact ties, massive
/// cancellation, overflow to infinity, underflow to zero, 0·∞, ∞−∞, NaN propagation, square
/// roots of negatives.
pub fn binary32_hard_cases() -> Vec<(u32, u32)> {
    let one = 1.0f32.to_bits();
    vec![
        (0x0000_0001, 0x0000_0001), // smallest subnormals
        (0x0000_0001, 0x8000_0001), // subnormal cancellation to +0
        (0x007F_FFFF, 0x0000_0001), // largest subnormal + ulp = smallest normal
        (0x0080_0000, 0x8000_0001), // normal − subnormal = subnormal
        (0x0080_0000, 0x3F00_0000), // min normal × 0.5 = subnormal (also ÷ 2)
        (0x0000_0003, 0x3F00_0000), // subnormal × 0.5: exact tie, rounds to even
        (0x0000_0001, 0x3F00_0000), // 2^-149 × 0.5: tie to even → 0
        (0x0000_0001, 0x3E80_0000), // underflow to zero
        (one, 0x3380_0000),         // 1 + 2^-24: tie, rounds to even (1.0)
        (0x3F80_0001, 0x3380_0000), // 1+ulp + 2^-24: tie, rounds up
        (0x3F80_0001, 0xBF80_0000), // massive cancellation
        (0x4B80_0000, 0xBF80_0001), // 2^24 − (1+ulp)
        (0x7F7F_FFFF, 0x7F7F_FFFF), // overflow to infinity
        (0x7F7F_FFFF, 0x4000_0000), // MAX × 2
        (0x7F7F_FFFF, 0x3F00_0000), // MAX ÷ 0.5
        (0x0000_0001, 0x7F7F_FFFF), // tiny ÷ huge → 0
        (0x0000_0000, 0x7F80_0000), // 0 × ∞, 0 ÷ ∞
        (0x7F80_0000, 0xFF80_0000), // ∞ + −∞
        (0x7F80_0000, 0x7F80_0000), // ∞ − ∞, ∞ ÷ ∞
        (0x7FC0_0001, one),         // quiet NaN with payload
        (0xFF80_0001, one),         // signalling NaN
        (one, 0x7FA0_0000),         // NaN as second operand
        (0x0000_0000, 0x0000_0000), // 0 ÷ 0, +0 + +0
        (0x8000_0000, 0x8000_0000), // −0 + −0 = −0
        (0x8000_0000, 0x0000_0000), // −0 + +0 = +0
        (0xBF80_0000, one),         // sqrt(−1), −1 + 1 = +0
        (0x8000_0000, one),         // sqrt(−0) = −0
        (0xFF80_0000, one),         // sqrt(−∞)
        (0x0000_0002, one),         // sqrt of a subnormal
        (0x4040_0000, 0x4040_0000), // 3 ÷ 3
        (one, 0x4040_0000),         // 1 ÷ 3
        (0x3F80_0000, 0x0000_0001), // 1 ÷ smallest subnormal → ∞ (overflow)
        (0x7F00_0000, 0x0040_0000), // huge ÷ subnormal
        (0x0040_0000, 0x7E80_0000), // subnormal ÷ huge → subnormal/zero
    ]
}
