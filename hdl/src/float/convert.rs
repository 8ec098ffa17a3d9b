//! Conversions between floating point and fixed point (integers are fixed point with no fraction
//! bits), and comparison, as netlist generators for any [`FloatFormat`].

use super::ops::{exp_width, round_pack, unpack};
use super::FloatFormat;
use crate::fixed::{FixedFormat, Rounding};
use crate::netlist::{Cuts, Netlist, Wire};

/// Register places of [`from_fixed`]: after the magnitude, and the two of the rounding stage.
pub const FROM_FIXED_MAX_STAGES: usize = 3;
/// Register places of [`to_fixed`]: after the alignment shift, after rounding.
pub const TO_FIXED_MAX_STAGES: usize = 2;
/// Register places of [`compare`]: after the magnitude comparisons.
pub const COMPARE_MAX_STAGES: usize = 1;

fn check_stages(what: &str, stages: usize, max: usize) -> Result<(), String> {
    if stages > max {
        return Err(format!("{what} stages {stages}: allowed range 0..={max}"));
    }
    Ok(())
}

/// Fixed point (`fixed` format, raw value `r` meaning `r · 2^-frac`) to `format`, rounded to
/// nearest even; values past the largest finite become infinity; zero is +0.
pub fn from_fixed(net: &mut Netlist, format: FloatFormat, fixed: FixedFormat, stages: usize, x: Wire) -> Result<Wire, String> {
    check_stages(&format!("{fixed} to {format} conversion"), stages, FROM_FIXED_MAX_STAGES)?;
    let w = fixed.width;
    if net.width(x) != w {
        return Err(format!("conversion input is {} bits, its format {fixed} has {w}", net.width(x)));
    }
    net.start_after(&[x]);
    let mut cuts = Cuts::new(stages, &[1, 2, 0]);
    let (sign, magnitude) = if fixed.signed {
        let sign = net.bit(x, w - 1);
        let zero = net.constant(0, w);
        let negated = net.sub(zero, x);
        (sign, net.mux(sign, negated, x))
    } else {
        (net.constant(0, 1), x)
    };
    let is_zero = net.is_zero(magnitude);
    // round_pack wants man + 2 significand bits or more: pad below.
    let pad = (format.man + 2).saturating_sub(w);
    let s = if pad > 0 {
        let zeros = net.constant(0, pad);
        net.concat(magnitude, zeros)
    } else {
        magnitude
    };
    cuts.cut(net);
    // value = s / 2^(width(s) − 1) · 2^(w − 1 − frac)
    let exponent = format.bias() + w as i64 - 1 - fixed.frac as i64;
    let exponent = net.constant(exponent as u128, exp_width(format));
    let exact = net.constant(0, 1);
    let packed = round_pack(net, format, &mut cuts, sign, exponent, s, exact);
    let zero = net.constant(0, format.width());
    let result = net.mux(is_zero, zero, packed);
    cuts.finish();
    Ok(result)
}

/// `format` to fixed point, rounded as `rounding` says (truncation is toward zero, like C's
/// cast), saturating: values past the range clamp to its ends, infinities too, NaN gives 0 —
/// the semantics of Rust's `as` casts from float to integer.
pub fn to_fixed(net: &mut Netlist, format: FloatFormat, fixed: FixedFormat, rounding: Rounding, stages: usize, x: Wire) -> Result<Wire, String> {
    check_stages(&format!("{format} to {fixed} conversion"), stages, TO_FIXED_MAX_STAGES)?;
    if net.width(x) != format.width() {
        return Err(format!("conversion input is {} bits, {format} has {}", net.width(x), format.width()));
    }
    net.start_after(&[x]);
    let mut cuts = Cuts::new(stages, &[0, 1]);
    let (w, man) = (fixed.width, format.man);
    let u = unpack(net, format, x);
    // value · 2^frac = sig · 2^e
    let ew = exp_width(format) + 8;
    let exp = net.zext(u.exp, ew);
    let offset = format.bias() + man as i64 - fixed.frac as i64;
    let e = net.add_const(exp, -(offset as i128));
    let zero_e = net.constant(0, ew);
    let right = net.slt(e, zero_e);
    let width_e = net.constant(w as u128, ew);
    let e_above_width = net.slt(width_e, e);
    let too_big = net.or(e_above_width, u.inf);
    // e ≥ 0: shift left, exact.
    let m = w + man + 2;
    let wide = net.zext(u.sig, m);
    let left_value = net.shl(wide, e);
    // e < 0: shift right by r with a guard bit and a sticky bit.
    let r = net.sub(zero_e, e);
    let limit = net.constant(man as u128 + 2, ew);
    let far = net.slt(limit, r);
    let low = net.constant(0, man + 2);
    let ext = net.concat(u.sig, low);
    let shifted = net.shr(ext, r);
    let int_right = net.slice(shifted, man + 2, man + 1);
    let int_right = net.zext(int_right, m);
    let guard = net.bit(shifted, man + 1);
    let below = net.slice(shifted, 0, man + 1);
    let rest = net.nonzero(below);
    let sig_nonzero = net.nonzero(u.sig);
    let zero_m = net.constant(0, m);
    let int_right = net.mux(far, zero_m, int_right);
    let no = net.constant(0, 1);
    let guard = net.mux(far, no, guard);
    let rest = net.mux(far, sig_nonzero, rest);
    let magnitude = net.mux(right, int_right, left_value);
    let guard = net.mux(right, guard, no);
    let rest = net.mux(right, rest, no);
    cuts.cut(net);
    let magnitude = match rounding {
        Rounding::Truncate => magnitude,
        Rounding::NearestEven => {
            let lsb = net.bit(magnitude, 0);
            let odd_or_rest = net.or(lsb, rest);
            let up = net.and(guard, odd_or_rest);
            let up = net.zext(up, m);
            net.add(magnitude, up)
        }
    };
    cuts.cut(net);
    let out = |net: &mut Netlist, raw: i128| net.constant(fixed.bits(raw), w);
    let (min, max, zero) = (out(net, fixed.min_raw()), out(net, fixed.max_raw()), out(net, 0));
    let low_bits = net.slice(magnitude, 0, w);
    let result = if fixed.signed {
        let pos_limit = net.constant(fixed.max_raw() as u128, m);
        let neg_limit = net.constant(fixed.max_raw() as u128 + 1, m);
        let pos_over = net.ult(pos_limit, magnitude);
        let neg_over = net.ult(neg_limit, magnitude);
        let pos_over = net.or(pos_over, too_big);
        let neg_over = net.or(neg_over, too_big);
        let negated = net.sub(zero, low_bits);
        let positive = net.mux(pos_over, max, low_bits);
        let negative = net.mux(neg_over, min, negated);
        net.mux(u.sign, negative, positive)
    } else {
        let limit = net.constant(fixed.max_raw() as u128, m);
        let over = net.ult(limit, magnitude);
        let over = net.or(over, too_big);
        let positive = net.mux(over, max, low_bits);
        net.mux(u.sign, zero, positive)
    };
    let result = net.mux(u.nan, zero, result);
    cuts.finish();
    Ok(result)
}

/// Bits of the [`compare`] result; exactly one is set.
pub const LESS: u128 = 0b0001;
pub const EQUAL: u128 = 0b0010;
pub const GREATER: u128 = 0b0100;
pub const UNORDERED: u128 = 0b1000;

/// IEEE-754 comparison of `a` and `b`: a 4-bit one-hot result `{unordered, greater, equal, less}`
/// (`+0 = −0`; a NaN operand makes the pair unordered).
pub fn compare(net: &mut Netlist, format: FloatFormat, stages: usize, a: Wire, b: Wire) -> Result<Wire, String> {
    check_stages(&format!("{format} compare"), stages, COMPARE_MAX_STAGES)?;
    net.start_after(&[a, b]);
    let mut cuts = Cuts::new(stages, &[0]);
    let (ua, ub) = (unpack(net, format, a), unpack(net, format, b));
    let unordered = net.or(ua.nan, ub.nan);
    let both_zero = net.and(ua.zero, ub.zero);
    let same_bits = net.eq(a, b);
    let equal = net.or(both_zero, same_bits);
    let body = format.width() - 1;
    let (ma, mb) = (net.slice(a, 0, body), net.slice(b, 0, body));
    let magnitude_less = net.ult(ma, mb);
    let magnitude_greater = net.ult(mb, ma);
    cuts.cut(net);
    let signs_differ = net.xor(ua.sign, ub.sign);
    let same_sign_less = net.mux(ua.sign, magnitude_greater, magnitude_less);
    let less = net.mux(signs_differ, ua.sign, same_sign_less);
    let ordered = net.not(unordered);
    let unequal = net.not(equal);
    let decided = net.and(ordered, unequal);
    let lt = net.and(decided, less);
    let not_less = net.not(less);
    let gt = net.and(decided, not_less);
    let eq = net.and(ordered, equal);
    let high = net.concat(unordered, gt);
    let low = net.concat(eq, lt);
    let result = net.concat(high, low);
    cuts.finish();
    Ok(result)
}
