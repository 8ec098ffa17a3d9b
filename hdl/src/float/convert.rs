//! Conversions between floating point and fixed point (integers are fixed point with no fraction
//! bits), and comparison, as netlist generators for any [`FloatFormat`].

use super::ops::{exp_width, in_design, round_pack, unpack};
use super::FloatFormat;
use crate::fixed::{FixedFormat, Rounding};
use crate::netlist::{Cuts, Netlist, Wire};
use crate::sig;
use crate::Error;

/// Register places of [`from_fixed`]: after the magnitude, and the two of the rounding stage.
pub const FROM_FIXED_MAX_STAGES: usize = 3;
/// Register places of [`to_fixed`]: after the alignment shift, after rounding.
pub const TO_FIXED_MAX_STAGES: usize = 2;
/// Register places of [`compare`]: after the magnitude comparisons.
pub const COMPARE_MAX_STAGES: usize = 1;

fn check_stages(what: &str, stages: usize, max: usize) -> Result<(), Error> {
    if stages > max {
        return Err(Error::Parameter(format!("{what} stages {stages}: allowed range 0..={max}")));
    }
    Ok(())
}

/// Fixed point (`fixed` format, raw value `r` meaning `r · 2^-frac`) to `format`, rounded to
/// nearest even; values past the largest finite become infinity; zero is +0. `stages` is
/// 0..=[`FROM_FIXED_MAX_STAGES`]; errors: [`Error::Parameter`] for more stages,
/// [`Error::Operand`] when `x` is not `fixed.width` bits wide.
pub fn from_fixed(net: &mut Netlist, format: FloatFormat, fixed: FixedFormat, stages: usize, x: Wire) -> Result<Wire, Error> {
    check_stages(&format!("{fixed} to {format} conversion"), stages, FROM_FIXED_MAX_STAGES)?;
    let w = fixed.width;
    if net.width(x) != w {
        return Err(Error::Operand(format!("conversion input is {} bits, its format {fixed} has {w}", net.width(x))));
    }
    net.start_after(&[x]);
    let mut cuts = Cuts::new(stages, &[1, 2, 0]);
    let result = in_design(net, |d| {
        d.section("fixed to float: sign and magnitude");
        let x = d.sig(x);
        let sign = if fixed.signed { x.bit(w - 1) } else { d.lit(0, 1) };
        let magnitude = if fixed.signed { sign.mux(d.lit(0, w) - x, x) } else { x };
        sig!(is_zero = magnitude.is_zero());
        // round_pack wants man + 2 significand bits or more: pad below.
        let pad = (format.man + 2).saturating_sub(w);
        let s = if pad > 0 { magnitude.cat(d.lit(0, pad)) } else { magnitude };
        cuts.cut(&mut d.net());

        // value = s / 2^(width(s) − 1) · 2^(w − 1 − frac)
        let exponent = format.bias() + w as i64 - 1 - fixed.frac as i64;
        let packed = round_pack(d, format, &mut cuts, sign, d.lit(exponent as u128, exp_width(format)), s, d.lit(0, 1));
        is_zero.mux(0, packed).wire
    });
    cuts.finish();
    Ok(result)
}

/// `format` to fixed point, rounded as `rounding` says (truncation is toward zero, like C's
/// cast), saturating: values past the range clamp to its ends, infinities too, NaN gives 0 —
/// the semantics of Rust's `as` casts from float to integer. `stages` is
/// 0..=[`TO_FIXED_MAX_STAGES`]; errors: [`Error::Parameter`] for more stages,
/// [`Error::Operand`] when `x` is not `format.width()` bits wide.
pub fn to_fixed(net: &mut Netlist, format: FloatFormat, fixed: FixedFormat, rounding: Rounding, stages: usize, x: Wire) -> Result<Wire, Error> {
    check_stages(&format!("{format} to {fixed} conversion"), stages, TO_FIXED_MAX_STAGES)?;
    if net.width(x) != format.width() {
        return Err(Error::Operand(format!("conversion input is {} bits, {format} has {}", net.width(x), format.width())));
    }
    net.start_after(&[x]);
    let mut cuts = Cuts::new(stages, &[0, 1]);
    let result = in_design(net, |d| {
        let (w, man) = (fixed.width, format.man);
        d.section("float to fixed: alignment shift");
        let u = unpack(format, d.sig(x), "x");
        // value · 2^frac = sig · 2^e
        let ew = exp_width(format) + 8;
        sig!(e = u.exp.zext(ew) - (format.bias() + man as i64 - fixed.frac as i64));
        sig!(right = e.slt(0), too_big = d.lit(w as u128, ew).slt(e) | u.inf);
        // e ≥ 0: shift left, exact.
        let m = w + man + 2;
        let left_value = u.sig.zext(m).shl(e);
        // e < 0: shift right by −e, with a guard bit and a sticky bit (everything shifted out when far).
        let r = d.lit(0, ew) - e;
        sig!(far = d.lit(man as u128 + 2, ew).slt(r));
        sig!(shifted = u.sig.cat(d.lit(0, man + 2)).shr(r));
        let int_right = far.mux(0, shifted.bits(man + 2, man + 1).zext(m));
        let guard_right = far.mux(0, shifted.bit(man + 1));
        let rest_right = far.mux(u.sig.any(), shifted.bits(0, man + 1).any());
        sig!(magnitude = right.mux(int_right, left_value));
        sig!(guard = right.mux(guard_right, 0), rest = right.mux(rest_right, 0));
        cuts.cut(&mut d.net());

        d.section("float to fixed: rounding");
        let magnitude = match rounding {
            Rounding::Truncate => magnitude,
            Rounding::NearestEven => magnitude + (guard & (magnitude.bit(0) | rest)).zext(m),
        };
        cuts.cut(&mut d.net());

        d.section("float to fixed: saturation, sign, NaN");
        let (min, max) = (d.lit(fixed.bits(fixed.min_raw()), w), d.lit(fixed.bits(fixed.max_raw()), w));
        let low_bits = magnitude.bits(0, w);
        let max_raw = fixed.max_raw() as u128;
        let result = if fixed.signed {
            sig!(pos_over = magnitude.gt(max_raw) | too_big, neg_over = magnitude.gt(max_raw + 1) | too_big);
            let positive = pos_over.mux(max, low_bits);
            let negative = neg_over.mux(min, d.lit(0, w) - low_bits);
            u.sign.mux(negative, positive)
        } else {
            sig!(over = magnitude.gt(max_raw) | too_big);
            u.sign.mux(0, over.mux(max, low_bits))
        };
        u.nan.mux(0, result).wire
    });
    cuts.finish();
    Ok(result)
}

/// Bits of the [`compare`] result; exactly one is set. This one: `a < b`.
pub const LESS: u128 = 0b0001;
/// [`compare`] result bit: `a = b` (including `+0 = −0`).
pub const EQUAL: u128 = 0b0010;
/// [`compare`] result bit: `a > b`.
pub const GREATER: u128 = 0b0100;
/// [`compare`] result bit: `a` or `b` is a NaN.
pub const UNORDERED: u128 = 0b1000;

/// IEEE-754 comparison of `a` and `b`: a 4-bit one-hot result `{unordered, greater, equal, less}`
/// (`+0 = −0`; a NaN operand makes the pair unordered). `stages` is 0..=[`COMPARE_MAX_STAGES`];
/// more is an [`Error::Parameter`].
pub fn compare(net: &mut Netlist, format: FloatFormat, stages: usize, a: Wire, b: Wire) -> Result<Wire, Error> {
    check_stages(&format!("{format} compare"), stages, COMPARE_MAX_STAGES)?;
    net.start_after(&[a, b]);
    let mut cuts = Cuts::new(stages, &[0]);
    let result = in_design(net, |d| {
        d.section("compare: classes and magnitudes");
        let (a, b) = (d.sig(a), d.sig(b));
        let (ua, ub) = (unpack(format, a, "a"), unpack(format, b, "b"));
        sig!(unordered = ua.nan | ub.nan);
        sig!(equal = ua.zero & ub.zero | a.eq(b));
        let body = format.width() - 1;
        let (ma, mb) = (a.bits(0, body), b.bits(0, body));
        sig!(magnitude_less = ma.lt(mb), magnitude_greater = ma.gt(mb));
        cuts.cut(&mut d.net());

        d.section("compare: one-hot result {unordered, greater, equal, less}");
        sig!(less = (ua.sign ^ ub.sign).mux(ua.sign, ua.sign.mux(magnitude_greater, magnitude_less)));
        let ordered = !unordered;
        sig!(decided = ordered & !equal);
        d.cat(&[unordered, decided & !less, ordered & equal, decided & less]).wire
    });
    cuts.finish();
    Ok(result)
}
