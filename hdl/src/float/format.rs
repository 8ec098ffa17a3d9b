//! Binary floating-point formats (IEEE-754 layout: sign, biased exponent, fraction).

use crate::Error;
use std::fmt;

/// A binary interchange format with `exp` exponent bits and `man` fraction bits; bit patterns
/// are `{sign, exponent, fraction}`, `width()` bits, carried in the low bits of a `u128`.
///
/// ```
/// use weft_hdl::float::FloatFormat;
/// let f = FloatFormat::BINARY32;
/// assert_eq!((f.width(), f.bias()), (32, 127));
/// assert_eq!(f.quiet_nan(), 0x7FC0_0000);
/// assert_eq!(f.infinity(true), 0xFF80_0000);
/// assert_eq!(f.to_string(), "fp32");
/// assert_eq!(FloatFormat::new(5, 2).unwrap().name(), "fp_e5m2");
/// assert!(FloatFormat::new(12, 52).is_err());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FloatFormat {
    /// Exponent field bits, 2..=11.
    pub exp: usize,
    /// Fraction (trailing significand) field bits, 1..=52; the significand has `man + 1` bits.
    pub man: usize,
}

impl FloatFormat {
    /// IEEE-754 binary32 (`f32`): 8 exponent, 23 fraction bits.
    pub const BINARY32: FloatFormat = FloatFormat { exp: 8, man: 23 };
    /// IEEE-754 binary16 (half precision): 5 exponent, 10 fraction bits.
    pub const BINARY16: FloatFormat = FloatFormat { exp: 5, man: 10 };
    /// bfloat16: binary32's 8 exponent bits with 7 fraction bits.
    pub const BFLOAT16: FloatFormat = FloatFormat { exp: 8, man: 7 };
    /// IEEE-754 binary64 (`f64`): 11 exponent, 52 fraction bits.
    pub const BINARY64: FloatFormat = FloatFormat { exp: 11, man: 52 };

    /// Exponent bits weft supports: 2..=11. Fraction bits: 1..=52 — up to binary64. (For
    /// fractions of at most 24 bits, binary64 arithmetic is an exact-then-once-rounded reference
    /// for every operator, 53 ≥ 2·(man+1)+2; binary64 itself is checked against native `f64`.)
    /// Outside these ranges: [`Error::Parameter`].
    pub fn new(exp: usize, man: usize) -> Result<FloatFormat, Error> {
        if !(2..=11).contains(&exp) {
            return Err(Error::Parameter(format!("float exponent width {exp} outside the supported range 2..=11")));
        }
        if !(1..=52).contains(&man) {
            return Err(Error::Parameter(format!("float fraction width {man} outside the supported range 1..=52")));
        }
        Ok(FloatFormat { exp, man })
    }

    /// Total bits: `1 + exp + man`.
    pub fn width(&self) -> usize {
        1 + self.exp + self.man
    }
    /// Exponent bias, `2^(exp−1) − 1` (127 for binary32).
    pub fn bias(&self) -> i64 {
        (1 << (self.exp - 1)) - 1
    }
    /// All-ones exponent field (infinities and NaNs).
    pub fn exp_max(&self) -> u128 {
        (1 << self.exp) - 1
    }
    /// The canonical quiet NaN: positive, exponent all ones, only the top fraction bit set
    /// (`0x7FC00000` for binary32).
    pub fn quiet_nan(&self) -> u128 {
        (self.exp_max() << self.man) | (1 << (self.man - 1))
    }
    /// The bit pattern of +∞ or, with `negative`, −∞.
    pub fn infinity(&self, negative: bool) -> u128 {
        ((negative as u128) << (self.exp + self.man)) | (self.exp_max() << self.man)
    }
    /// Short name, also the `Display` form: `fp32`, `fp16`, `bf16`, `fp64`, otherwise
    /// `fp_e<exp>m<man>`.
    pub fn name(&self) -> String {
        match *self {
            FloatFormat::BINARY32 => "fp32".into(),
            FloatFormat::BINARY16 => "fp16".into(),
            FloatFormat::BFLOAT16 => "bf16".into(),
            FloatFormat::BINARY64 => "fp64".into(),
            f => format!("fp_e{}m{}", f.exp, f.man),
        }
    }
}

impl fmt::Display for FloatFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name())
    }
}
