//! The adder and subtracter datapath.

use super::common::{lzc_tree, shl_radix4, shr_radix4, unpack};
use crate::float::FloatFormat;
use crate::netlist::{Cuts, Design, Sig};
use crate::sig;

/// The adder (and subtracter): one path, every stage a few LUT levels.
/// - The operands are ordered by magnitude (one compare of the packed magnitudes), so the
///   difference of the significands is never negative.
/// - The smaller significand is shifted right by the exponent difference (saturated before the
///   shift, so a distance past the significand empties it), in stages of 4:1 multiplexers; its
///   sticky bit (the OR of what shifts out) is the OR of the bits each stage drops, not a
///   shifted-back copy or a trailing-zero count.
/// - The sum `[carry | hidden | fraction | guard | round | sticky]` is normalised by one left
///   shift by `L = min(lz(sum), big_exp)` (a balanced leading-zero count, then one compare), so
///   results that would go below the smallest normal come out subnormal. A carry out is
///   `L = 0`: the window is always the top `man + 1` bits, the next bit is the guard.
/// - Rounding increments the packed exponent and fraction; the exponent field is
///   `big_exp + 1 − L`, or 0 when no hidden bit reached the top (a subnormal result; a carry
///   out of the fraction makes the field 1).
///
/// Register places: 0 after the compare, 1 after the ordering, 2 after the alignment, 3 after
/// the addition, 4 after the leading-zero count, 5 after the normalisation shift, 6 after the
/// rounding decision.
pub(super) fn add<'d>(d: &'d Design, f: FloatFormat, cuts: &mut Cuts, a: Sig<'d>, b: Sig<'d>, subtract: bool) -> Sig<'d> {
    d.section("add: operands, special cases, order by magnitude, trailing zeros");
    let (ua, ub) = (unpack(f, a, "a"), unpack(f, b, "b"));
    sig!(b_sign = if subtract { !ub.sign } else { ub.sign });
    sig!(opposite = ua.sign ^ b_sign);
    sig!(nan = ua.nan | ub.nan | ua.inf & ub.inf & opposite);
    sig!(inf = ua.inf | ub.inf);
    sig!(inf_sign = ua.inf.mux(ua.sign, b_sign), zero_sign = ua.sign & b_sign);
    sig!(swap = a.bits(0, f.exp + f.man).lt(b.bits(0, f.exp + f.man)));
    cuts.cut(&mut d.net());

    d.section("add: the operands in order, the exponent distance (saturated to the alignment shifter's range)");
    sig!(big_sign = swap.mux(b_sign, ua.sign));
    sig!(big_exp = swap.mux(ub.exp, ua.exp), small_exp = swap.mux(ua.exp, ub.exp));
    sig!(distance = big_exp - small_exp);
    sig!(big_sig = swap.mux(ub.sig, ua.sig), small_sig = swap.mux(ua.sig, ub.sig));
    // carry | hidden | fraction | guard | round | sticky
    let w = f.man + 5;
    let sw = usize::BITS as usize - w.leading_zeros() as usize;
    // A distance of 2^sw − 1 or more shifts every bit of the padded significand out.
    let far = if f.exp > sw { distance.bits(sw, f.exp - sw).any() } else { d.lit(0, 1) };
    sig!(amount = far.mux(d.lit((1u128 << sw) - 1, sw), distance.bits(0, sw)));
    cuts.cut(&mut d.net());

    d.section("add: align the smaller operand; sticky = a set bit among those shifted out");
    let small_padded = small_sig.cat(d.lit(0, 2));
    let (shifted, dropped) = shr_radix4(d, small_padded, amount, f.man + 3);
    sig!(shifted = shifted);
    sig!(align_sticky = dropped.any());
    sig!(big_padded = big_sig.cat(d.lit(0, 3)).zext(w), aligned = shifted.cat(align_sticky).zext(w));
    sig!(field_base = big_exp.zext(f.exp + 1) + 1u32);
    cuts.cut(&mut d.net());

    d.section("add: add or subtract the magnitudes (one adder: big + ~aligned + 1 to subtract)");
    let flip = d.cat(&vec![opposite; w]);
    // A low bit of `opposite` on both sides makes the carry-in.
    sig!(sum = (big_padded.cat(opposite) + (aligned ^ flip).cat(opposite)).bits(1, w));
    cuts.cut(&mut d.net());

    d.section("add: leading zeros, at most big_exp (no shift below the smallest normal)");
    sig!(exact_zero = sum.is_zero());
    sig!(lz = lzc_tree(sum));
    let cw = f.exp.max(lz.width);
    sig!(left = lz.zext(cw).lt(big_exp.zext(cw)).mux(lz, big_exp.zext(cw).bits(0, lz.width)));
    cuts.cut(&mut d.net());

    d.section("add: normalisation shift; exponent field");
    sig!(normalized = shl_radix4(d, sum, left.resize(sw)));
    // A subnormal result (the count stopped at the marker above the leading one) has no
    // hidden bit after the shift; its exponent field is 0.
    sig!(field = normalized.bit(w - 1).mux(field_base - left.resize(f.exp + 1), d.lit(0, f.exp + 1)));
    cuts.cut(&mut d.net());

    d.section("add: keep man + 1 bits, guard, sticky; round to nearest even");
    sig!(kept = normalized.bits(4, f.man), guard = normalized.bit(3), sticky = normalized.bits(0, 3).any());
    sig!(increment = guard & (sticky | normalized.bit(4)));
    sig!(packed = field.cat(kept));
    sig!(overflow_before = field.ge(f.exp_max() as u32));
    cuts.cut(&mut d.net());

    d.section("add: rounding increment, overflow to infinity, special cases");
    sig!(rounded = packed + increment.zext(f.exp + 1 + f.man));
    sig!(overflow = overflow_before | rounded.bits(f.man, f.exp + 1).ge(f.exp_max() as u32));
    let body = |value: u128| d.lit(value, f.exp + f.man);
    let magnitude = (overflow | inf).mux(body(f.exp_max() << f.man), rounded.bits(0, f.exp + f.man));
    let signed = inf.mux(inf_sign, big_sign).cat(magnitude);
    let r = exact_zero.mux(zero_sign.cat(body(0)), signed);
    sig!(result = nan.mux(f.quiet_nan(), r));
    result
}
