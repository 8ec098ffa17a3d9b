//! Software reference for any [`FloatFormat`]: decode to binary64 exactly, compute in binary64,
//! round once to the format. For the formats weft supports (at most 25 significand bits),
//! binary64 holds every sum, product, quotient and square root closely enough that this double
//! rounding equals direct correct rounding (53 ≥ 2p + 2; Figueroa, "When is double rounding
//! innocuous?", 1995). Written independently of the hardware generators it checks.

use super::{FloatFormat, FloatOperator};

/// The binary32 result the hardware must match bit for bit: Rust's native `f32` arithmetic
/// (an independent IEEE oracle), with every NaN made the canonical quiet NaN.
pub fn native_f32(op: FloatOperator, a: u32, b: u32) -> u32 {
    let r = op.apply_f32(f32::from_bits(a), f32::from_bits(b));
    if r.is_nan() {
        FloatFormat::BINARY32.quiet_nan() as u32
    } else {
        r.to_bits()
    }
}

/// The binary64 result the hardware must match bit for bit: Rust's native `f64` arithmetic,
/// with every NaN made the canonical quiet NaN.
pub fn native_f64(op: FloatOperator, a: u64, b: u64) -> u64 {
    let r = op.apply_f64(f64::from_bits(a), f64::from_bits(b));
    if r.is_nan() {
        FloatFormat::BINARY64.quiet_nan() as u64
    } else {
        r.to_bits()
    }
}

/// The exact value of `bits` in `format` (NaN payloads are not kept).
///
/// ```
/// use weft_hdl::float::{reference, FloatFormat};
/// let h = FloatFormat::BINARY16;
/// assert_eq!(reference::from_f64(h, 1.0 / 3.0), 0x3555);
/// assert_eq!(reference::to_f64(h, 0x3555), 0.333251953125);
/// assert_eq!(reference::from_f64(h, 1e6), h.infinity(false)); // above 65504
/// assert_eq!(reference::to_f64(FloatFormat::BFLOAT16, 0x3F80), 1.0);
/// ```
pub fn to_f64(format: FloatFormat, bits: u128) -> f64 {
    if format == FloatFormat::BINARY64 {
        return f64::from_bits(bits as u64);
    }
    let man_mask = (1u128 << format.man) - 1;
    let frac = (bits & man_mask) as f64;
    let exp = ((bits >> format.man) & format.exp_max()) as i64;
    let negative = (bits >> (format.exp + format.man)) & 1 == 1;
    let magnitude = if exp as u128 == format.exp_max() {
        if frac == 0.0 {
            f64::INFINITY
        } else {
            f64::NAN
        }
    } else if exp == 0 {
        frac * 2f64.powi((1 - format.bias() - format.man as i64) as i32)
    } else {
        (frac + 2f64.powi(format.man as i32)) * 2f64.powi((exp - format.bias() - format.man as i64) as i32)
    };
    if negative {
        -magnitude
    } else {
        magnitude
    }
}

/// `x` rounded to nearest, ties to even, in `format`; every NaN becomes the canonical quiet NaN.
pub fn from_f64(format: FloatFormat, x: f64) -> u128 {
    if x.is_nan() {
        return format.quiet_nan();
    }
    if format == FloatFormat::BINARY64 {
        return x.to_bits() as u128;
    }
    let sign = (x.is_sign_negative() as u128) << (format.exp + format.man);
    if x.is_infinite() {
        return format.infinity(x < 0.0);
    }
    if x == 0.0 {
        return sign;
    }
    // x = m · 2^e exactly, m a 53-bit integer.
    let raw = x.abs().to_bits();
    let (mut m, mut e) = ((raw & ((1 << 52) - 1)) as u128, ((raw >> 52) as i64));
    if e == 0 {
        e = 1;
    } else {
        m |= 1 << 52;
    }
    e -= 1075;
    // Exponent of the result's unit in the last place: normal results keep `man` fraction bits
    // below their leading bit, subnormal ones sit at the minimum exponent.
    let leading = 127 - m.leading_zeros() as i64 + e;
    let emin = 1 - format.bias();
    let ulp = leading.max(emin) - format.man as i64;
    let shift = ulp - e;
    let q = if shift <= 0 {
        m << (-shift)
    } else if shift > 120 {
        0
    } else {
        let q = m >> shift;
        let rem = m & ((1 << shift) - 1);
        let half = 1u128 << (shift - 1);
        if rem > half || (rem == half && q & 1 == 1) {
            q + 1
        } else {
            q
        }
    };
    // Encoding of q·2^ulp: the fraction field plus the exponent field, where a carry out of
    // the fraction moves the exponent up by one.
    let field = (leading.max(emin) + format.bias() - 1) as u128;
    let encoded = (field << format.man) + q;
    if encoded >= format.exp_max() << format.man {
        return sign | format.infinity(false);
    }
    sign | encoded
}

/// The binary operators the hardware implements.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FloatOp {
    /// `a + b`.
    Add,
    /// `a − b`.
    Sub,
    /// `a · b`.
    Mul,
    /// `a / b`.
    Div,
}

impl FloatOp {
    /// `a op b` on bit patterns of `format`, correctly rounded to nearest even; every NaN result
    /// is the canonical quiet NaN.
    pub fn apply(self, format: FloatFormat, a: u128, b: u128) -> u128 {
        let (x, y) = (to_f64(format, a), to_f64(format, b));
        from_f64(
            format,
            match self {
                FloatOp::Add => x + y,
                FloatOp::Sub => x - y,
                FloatOp::Mul => x * y,
                FloatOp::Div => x / y,
            },
        )
    }
}

/// The square root of the bit pattern `a` in `format`, correctly rounded; the square root of a
/// negative number (not −0) is the canonical quiet NaN.
pub fn sqrt(format: FloatFormat, a: u128) -> u128 {
    from_f64(format, to_f64(format, a).sqrt())
}
