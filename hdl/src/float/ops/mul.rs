//! The multiplier datapath.

use super::common::{lzc_tree, shr_radix4, unpack};
use crate::float::FloatFormat;
use crate::netlist::{Cuts, Design, Sig};
use crate::sig;

/// The multiplier. Subnormal inputs are not normalised before the product. Two subnormal
/// operands give a product below 2^(2 − 2·bias − 2·man), which rounds to a signed zero, so at
/// most one significand has leading zeros: one leading-zero count of that significand (the
/// other operand's when the first is normal, `lz = 0` when both are) is taken beside the
/// operands and fixes everything the DSP product `P = sa · sb` needs:
/// - `P`'s leading one sits at `q0 = 2·man − lz` or one above, so the result's exponent field
///   at `q0` is `E0 = ea + eb − bias − lz`;
/// - a normal result keeps `p` bits from `q0 − man`, or from `q0 − man + 1` when `P[q0 + 1]`
///   is set (the one-bit normalisation, one product bit picked by `lz` before the shift); a
///   subnormal one keeps the bits from the fixed position `u = 1 + bias + man − ea − eb`;
///   which applies is `E0 ≥ 1`, so one right shift extracts a window of `p + 1` bits, the
///   kept bits and the guard bit (one shifter on the product, no leading-zero count of it);
///   a shift past the product (a result far below the smallest subnormal) saturates the
///   shift amount, which empties the window;
/// - the sticky bit is the OR of the bits the shift drops, taken per multiplexer stage as
///   the OR of at most three groups of bits under the stage's shift digit.
/// Special cases (NaN, infinity, zero) and an exponent at or past infinity's replace the
/// packed exponent and fraction, with no increment; the last stage is only an adder on the
/// packed value, a carry chain, which adds the rounding increment at the fraction's low bit
/// and the upper candidate's exponent step at the exponent's low bit; its carry moves the
/// exponent (subnormal to normal, largest finite to infinity).
/// Register places: 0 after the operand count, 1 after the exponent sums (the product
/// runs beside them), 2 after the window position, 3 after the window shift, 4 after the
/// rounding decision.
pub(super) fn mul<'d>(d: &'d Design, f: FloatFormat, cuts: &mut Cuts, a: Sig<'d>, b: Sig<'d>) -> Sig<'d> {
    let p = f.man + 1;
    d.section("mul: operands, special cases, leading zeros of a subnormal significand");
    let (ua, ub) = (unpack(f, a, "a"), unpack(f, b, "b"));
    sig!(sign = ua.sign ^ ub.sign);
    sig!(nan = ua.nan | ub.nan | ua.zero & ub.inf | ua.inf & ub.zero);
    sig!(inf = ua.inf | ub.inf);
    let (a_hidden, b_hidden) = (ua.sig.bit(f.man), ub.sig.bit(f.man));
    // Zero, or both subnormal: a signed zero.
    sig!(zero = ua.zero | ub.zero | !a_hidden & !b_hidden);
    // Leading zeros of a's significand when it is subnormal, else of b's (none when normal).
    sig!(lz = lzc_tree(a_hidden.mux(ub.sig, ua.sig)));
    cuts.cut(&mut d.net());

    d.section("mul: significand product; beside it, the exponent sums");
    sig!(product = ua.sig.mul(ub.sig));
    // Signed exponents: room for 2·(2^exp − 2) and for −(bias + 2p).
    let xw = f.exp + 2;
    sig!(exp_sum = ua.exp.zext(xw) + ub.exp.zext(xw));
    // Exponent field of the result if P's leading one is at q0 = 2·man − lz.
    sig!(e0 = exp_sum - lz.zext(xw) - f.bias());
    sig!(base_normal = d.lit(f.man as u128, xw) - lz.zext(xw));
    sig!(base_normal_up = d.lit(f.man as u128 + 1, xw) - lz.zext(xw));
    // Window base of a subnormal result: u = 1 + bias + man − ea − eb (then at least 1).
    sig!(base_subnormal = d.lit(1 + f.bias() as u128 + f.man as u128, xw) - exp_sum);
    cuts.cut(&mut d.net());

    d.section("mul: the one-bit normalisation (P's bit at q0 + 1), the window position, overflow");
    let zero_x = d.lit(0, xw);
    sig!(normal = zero_x.slt(e0));
    // P[q0 + 1] = P[2·man + 1 − lz]: the upper candidate, picked before the window shift.
    sig!(high = product.bits(p, p).shl(lz).bit(p - 1));
    // Window base: q0 − man (+ 1 for the upper candidate) for a normal result, u for a
    // subnormal one; from 2p + 1 on, every product bit is below the window.
    let bw = usize::BITS as usize - (2 * p + 1).leading_zeros() as usize;
    let far = base_subnormal.bits(bw, xw - bw).any();
    let subnormal_shift = far.mux(d.lit((1u128 << bw) - 1, bw), base_subnormal.bits(0, bw));
    sig!(shift = normal.mux(high.mux(base_normal_up.bits(0, bw), base_normal.bits(0, bw)), subnormal_shift));
    // At or past infinity's exponent field (e0 + high when normal).
    let exp_max = f.exp_max() as i64;
    sig!(overflow = high.mux(!e0.slt(exp_max - 1), !e0.slt(exp_max)));
    // NaN over infinity over zero over an overflow (to infinity) over the rounded value.
    sig!(forced = nan | inf | zero | overflow);
    sig!(saturate = !nan & (inf | !zero & overflow), step = !forced & normal & high);
    cuts.cut(&mut d.net());

    d.section("mul: the window of p + 1 product bits from bit shift − 1 (guard, then the kept bits); sticky = a bit set below it");
    // window[0] = P[shift − 1] (P[−1] = 0), window[p] = P[shift + man].
    let (window, dropped) = shr_radix4(d, product.cat(d.lit(0, 1)), shift, p + 1);
    sig!(window = window, dropped = dropped);
    cuts.cut(&mut d.net());

    d.section("mul: guard and sticky, round to nearest even, special cases");
    sig!(kept = window.bits(1, p), guard = window.bit(0));
    sig!(increment = !forced & guard & (dropped.any() | kept.bit(0)));
    // Packed exponent and fraction before rounding; a subnormal's hidden bit (0, or 1 when it
    // rounds up into the normal range) is the exponent field's low bit. The upper candidate's
    // field e0 + 1 is e0 plus the one `step` adds at the field's low bit in the rounding adder.
    let field = normal.mux(e0, kept.bit(f.man).zext(xw));
    let body = |value: u128| d.lit(value, f.exp + f.man);
    let infinity = body(f.exp_max() << f.man);
    let value = saturate.mux(infinity, zero.mux(body(0), field.bits(0, f.exp).cat(kept.bits(0, f.man))));
    sig!(packed = nan.mux(body(f.quiet_nan()), value));
    sig!(result_sign = !nan & sign);
    cuts.cut(&mut d.net());

    d.section("mul: rounding increment and the upper candidate's exponent step, one adder (its carry reaches infinity's encoding on overflow)");
    sig!(result = result_sign.cat(packed + step.zext(f.exp).cat(d.lit(0, f.man - 1)).cat(increment)));
    result
}
