//! The multiplier datapath.

use super::common::{lzc_tree, reverse, shr_radix4, unpack};
use crate::float::FloatFormat;
use crate::netlist::{Cuts, Design, Sig};
use crate::sig;

/// The multiplier. Subnormal inputs are not normalised before the product. Two subnormal
/// operands give a product below 2^(2 − 2·bias − 2·man), which rounds to a signed zero, so at
/// most one significand has leading zeros: one leading-zero count of that significand (the
/// other operand's when the first is normal, `lz = 0` when both are), and the trailing zeros
/// of both fractions, are taken beside the DSP product `P = sa · sb` and fix everything the
/// product needs:
/// - `P`'s leading one sits at `q0 = 2·man − lz` or one above, so the result's exponent field
///   at `q0` is `E0 = ea + eb − bias − lz`;
/// - a normal result keeps `p` bits from `q0 − man` (or one above); a subnormal one keeps the
///   bits from the fixed position `u = 1 + bias + man − ea − eb`; which applies is `E0 ≥ 1`,
///   known before the product, so one right shift extracts a window of `p + 2` bits that holds
///   both candidates and the guard bit (one shifter on the product, no leading-zero count of
///   it); a shift past the product (a result far below the smallest subnormal) saturates the
///   shift amount, which empties the window;
/// - the sticky bit is the OR of the bits below the window: `tz(P) = tza + tzb`, so it is a
///   compare of `tza + tzb` with the shift, not a wide OR.
/// The top window bit picks the candidate (the one-bit normalisation). Special cases (NaN,
/// infinity, zero) and an exponent at or past infinity's replace the packed exponent and
/// fraction in the same LUTs that pick the candidate, with no increment; the last stage is
/// only the rounding increment of the packed value, a carry chain, whose carry moves the
/// exponent (subnormal to normal, largest finite to infinity).
/// Register places: 0 after the operand counts, 1 after the exponent sums, 2 after the
/// product (the window position and sticky threshold run beside it), 3 after the window
/// shift, 4 after the rounding decision.
pub(super) fn mul<'d>(d: &'d Design, f: FloatFormat, cuts: &mut Cuts, a: Sig<'d>, b: Sig<'d>) -> Sig<'d> {
    let p = f.man + 1;
    d.section("mul: operands, special cases, leading zeros of a subnormal significand, trailing zeros");
    let (ua, ub) = (unpack(f, a, "a"), unpack(f, b, "b"));
    sig!(sign = ua.sign ^ ub.sign);
    sig!(nan = ua.nan | ub.nan | ua.zero & ub.inf | ua.inf & ub.zero);
    sig!(inf = ua.inf | ub.inf);
    let (a_hidden, b_hidden) = (ua.sig.bit(f.man), ub.sig.bit(f.man));
    // Zero, or both subnormal: a signed zero.
    sig!(zero = ua.zero | ub.zero | !a_hidden & !b_hidden);
    // Leading zeros of a's significand when it is subnormal, else of b's (none when normal).
    sig!(lz = lzc_tree(a_hidden.mux(ub.sig, ua.sig)));
    // The trailing zeros of a nonzero significand are its fraction's, counted up to `man`.
    sig!(tza = lzc_tree(reverse(d, a.bits(0, f.man))), tzb = lzc_tree(reverse(d, b.bits(0, f.man))));
    cuts.cut(&mut d.net());

    d.section("mul: significand product; beside it, the exponent sums");
    sig!(product = ua.sig.mul(ub.sig));
    // Signed exponents: room for 2·(2^exp − 2) and for −(bias + 2p).
    let xw = f.exp + 2;
    sig!(exp_sum = ua.exp.zext(xw) + ub.exp.zext(xw));
    // Exponent field of the result if P's leading one is at q0 = 2·man − lz.
    sig!(e0 = exp_sum - lz.zext(xw) - f.bias());
    sig!(base_normal = d.lit(f.man as u128, xw) - lz.zext(xw));
    sig!(tz_sum = tza.zext(xw) + tzb.zext(xw) + 1u32);
    cuts.cut(&mut d.net());

    d.section("mul: the window position, the exponent candidates and the sticky threshold");
    let zero_x = d.lit(0, xw);
    sig!(normal = zero_x.slt(e0));
    // Window base: q0 − man for a normal result, u = 1 + bias + man − ea − eb for a subnormal
    // one (then at least 1); from 2p + 1 on, every product bit is below the window.
    sig!(base_subnormal = d.lit(1 + f.bias() as u128 + f.man as u128, xw) - exp_sum);
    sig!(base = normal.mux(base_normal, base_subnormal));
    let bw = usize::BITS as usize - (2 * p + 1).leading_zeros() as usize;
    let far = base.bits(bw, xw - bw).any();
    sig!(shift = far.mux(d.lit((1u128 << bw) - 1, bw), base.bits(0, bw)));
    // Exponent field of the lower candidate (normal) and of the upper one; 0 when subnormal.
    sig!(field_low = normal.mux(e0, 0), field_high = e0 + 1u32);
    // Either candidate at or past infinity's exponent field.
    let exp_max = f.exp_max() as i64;
    sig!(overflow_low = !e0.slt(exp_max), overflow_high = !e0.slt(exp_max - 1));
    // tz(P) + 1 < base: a set bit of P below the window (tz(P) = tza + tzb).
    sig!(sticky_below = normal.mux(tz_sum.slt(base_normal), tz_sum.slt(base_subnormal)));
    cuts.cut(&mut d.net());

    d.section("mul: the window of p + 2 product bits from bit shift − 1; sticky = a bit set below it");
    // window[0] = P[shift − 1] (P[−1] = 0), window[p + 1] = P[shift + p].
    sig!(window = shr_radix4(d, product.cat(d.lit(0, 1)), shift, p + 2));
    cuts.cut(&mut d.net());

    d.section("mul: one-bit normalisation, guard and sticky, round to nearest even, special cases");
    sig!(high = window.bit(p + 1));
    sig!(kept = high.mux(window.bits(2, p), window.bits(1, p)));
    sig!(guard = high.mux(window.bit(1), window.bit(0)));
    sig!(sticky = sticky_below | high & window.bit(0));
    sig!(overflow = high.mux(overflow_high, overflow_low));
    // NaN over infinity over zero over an overflow (to infinity) over the rounded value.
    sig!(forced = nan | inf | zero | overflow);
    sig!(increment = !forced & guard & (sticky | kept.bit(0)));
    // Packed exponent and fraction before rounding; a subnormal's hidden bit (0, or 1 when it
    // rounds up into the normal range) is the exponent field's low bit.
    let field = high.mux(field_high, normal.mux(field_low, kept.bit(f.man).zext(xw)));
    let body = |value: u128| d.lit(value, f.exp + f.man);
    let infinity = body(f.exp_max() << f.man);
    let value = (inf | !zero & overflow).mux(infinity, zero.mux(body(0), field.bits(0, f.exp).cat(kept.bits(0, f.man))));
    sig!(packed = nan.mux(body(f.quiet_nan()), value));
    sig!(result_sign = !nan & sign);
    cuts.cut(&mut d.net());

    d.section("mul: rounding increment (its carry reaches infinity's encoding on overflow)");
    sig!(result = result_sign.cat(packed + increment.zext(f.exp + f.man)));
    result
}
