//! The multiplier datapath.

use super::common::{lzc_tree, reverse, unpack};
use crate::float::FloatFormat;
use crate::netlist::{Cuts, Design, Sig};
use crate::sig;

/// The multiplier. Subnormal inputs are not normalised before the product: the leading and
/// trailing zeros of both significands (`p = man + 1` bits) are counted beside the DSP product
/// `P = sa · sb`, and they fix everything the product needs:
/// - `P`'s leading one sits at `q0 = 2·man − lza − lzb` or one above (`lz(P)` is `lza + lzb`
///   or one more), so the result's exponent field at `q0` is `E0 = ea + eb − bias − lza − lzb`;
/// - a normal result keeps `p` bits from `q0 − man` (or one above); a subnormal one keeps the
///   bits from the fixed position `u = 1 + bias + man − ea − eb`; which applies is `E0 ≥ 1`,
///   known before the product, so one right shift extracts a window of `p + 2` bits that holds
///   both candidates and the guard bit (one shifter on the product, no leading-zero count of it);
/// - the sticky bit is the OR of the bits below the window: `tz(P) = tza + tzb`, so it is a
///   compare of `tza + tzb` with the shift, not a wide OR.
/// The top window bit picks the candidate (the one-bit normalisation), rounding is an increment
/// of the packed exponent and fraction (its carry moves the exponent, subnormal to normal
/// included), and an encoding at or past infinity's becomes infinity.
/// Register places: 0 after the operand counts, 1 after the normalised exponents, 2 after the
/// product (the exponent work runs beside it), 3 after the window shift, 4 after the rounding
/// decision.
pub(super) fn mul<'d>(d: &'d Design, f: FloatFormat, cuts: &mut Cuts, a: Sig<'d>, b: Sig<'d>) -> Sig<'d> {
    let p = f.man + 1;
    d.section("mul: operands, special cases, leading and trailing zeros of the significands");
    let (ua, ub) = (unpack(f, a, "a"), unpack(f, b, "b"));
    sig!(sign = ua.sign ^ ub.sign);
    sig!(nan = ua.nan | ub.nan | ua.zero & ub.inf | ua.inf & ub.zero);
    sig!(inf = ua.inf | ub.inf, zero = ua.zero | ub.zero);
    // Signed exponents: room for 2·(2^exp − 2) + man + 1 and for −(bias + 2p).
    let xw = f.exp + 2;
    let (frac_a, frac_b) = (a.bits(0, f.man), b.bits(0, f.man));
    // A subnormal's leading zeros are one more than its fraction's; a normal has none. The
    // trailing zeros of a nonzero significand are its fraction's, counted up to `man`.
    sig!(lfa = lzc_tree(frac_a), lfb = lzc_tree(frac_b));
    sig!(tza = lzc_tree(reverse(d, frac_a)), tzb = lzc_tree(reverse(d, frac_b)));
    cuts.cut(&mut d.net());

    d.section("mul: significand product; beside it, normalised exponents and leading zeros");
    sig!(product = ua.sig.mul(ub.sig));
    let (a_sub, b_sub) = (ua.exp.eq(1u32) & !ua.sig.bit(f.man), ub.exp.eq(1u32) & !ub.sig.bit(f.man));
    // Normalised exponents ea − lza: −lf for a subnormal (ea = 1, lza = lf + 1); the bias
    // comes off the first.
    let zero_x = d.lit(0, xw);
    sig!(xa = a_sub.mux(zero_x - lfa.zext(xw) - f.bias(), ua.exp.zext(xw) - f.bias()));
    sig!(xb = b_sub.mux(zero_x - lfb.zext(xw), ub.exp.zext(xw)));
    sig!(lza = a_sub.mux(lfa.zext(xw) + 1u32, 0), lzb = b_sub.mux(lfb.zext(xw) + 1u32, 0));
    sig!(exp_sum = ua.exp.zext(xw) + ub.exp.zext(xw));
    let bw = usize::BITS as usize - (2 * p + 1).leading_zeros() as usize;
    sig!(tz_sum = tza.zext(xw) + tzb.zext(xw) + 1u32);
    cuts.cut(&mut d.net());

    d.section("mul: the exponent, the window position and the sticky threshold");
    // Exponent field of the result if P's leading one is at q0 = 2·man − lza − lzb.
    sig!(e0 = xa + xb);
    sig!(normal = zero_x.slt(e0));
    // Window base: q0 − man for a normal result, u = 1 + bias + man − ea − eb for a subnormal
    // one (then at least 1); from 2p + 1 on, every product bit is below the window.
    sig!(base = normal.mux(d.lit(f.man as u128, xw) - lza - lzb, d.lit(1 + f.bias() as u128 + f.man as u128, xw) - exp_sum));
    sig!(shift = base.bits(0, bw), far = base.bits(bw, xw - bw).any());
    // Exponent field of the lower candidate (normal) and of the upper one; 0 when subnormal.
    sig!(field_low = normal.mux(e0, 0), field_high = e0 + 1u32);
    // tz(P) + 1 < base: a set bit of P below the window (tz(P) = tza + tzb).
    sig!(sticky_below = tz_sum.slt(base));
    cuts.cut(&mut d.net());

    d.section("mul: the window of p + 2 product bits from bit shift − 1; sticky = a bit set below it");
    // window[0] = P[shift − 1] (P[−1] = 0), window[p + 1] = P[shift + p].
    sig!(window = far.mux(d.lit(0, p + 2), product.cat(d.lit(0, 1)).shr(shift).bits(0, p + 2)));
    cuts.cut(&mut d.net());

    d.section("mul: one-bit normalisation, guard and sticky, round to nearest even");
    sig!(high = window.bit(p + 1));
    sig!(kept = high.mux(window.bits(2, p), window.bits(1, p)));
    sig!(guard = high.mux(window.bit(1), window.bit(0)));
    sig!(sticky = sticky_below | high & window.bit(0));
    sig!(increment = guard & (sticky | kept.bit(0)));
    // Packed exponent and fraction before rounding; a subnormal's hidden bit (0, or 1 when it
    // rounds up into the normal range) is the exponent field's low bit.
    let field = high.mux(field_high, normal.mux(field_low, kept.bit(f.man).zext(xw)));
    sig!(packed = field.bits(0, xw - 1).cat(kept.bits(0, f.man)));
    sig!(overflow_before = field.bits(0, xw - 1).ge(f.exp_max() as u32));
    cuts.cut(&mut d.net());

    d.section("mul: rounding increment, overflow to infinity, special cases");
    sig!(rounded = packed + increment.zext(xw - 1 + f.man));
    sig!(overflow = overflow_before | rounded.bits(f.man, xw - 1).ge(f.exp_max() as u32));
    let body = |value: u128| d.lit(value, f.exp + f.man);
    let finite = (overflow | inf).mux(body(f.exp_max() << f.man), zero.mux(body(0), rounded.bits(0, f.exp + f.man)));
    sig!(result = nan.mux(f.quiet_nan(), sign.cat(finite)));
    result
}
