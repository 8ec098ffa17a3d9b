//! The multiplier datapath.

use super::common::{lzc_tree, shr_radix4, unpack, Unpacked};
use super::Multiplier;
use crate::float::FloatFormat;
use crate::netlist::{Cuts, Design, Sig};
use crate::sig;

/// Width of the product's pieces in the shifting multiply: a DSP48E1 multiplies 25 × 18 bits
/// signed, so 17 unsigned bits per piece, and the cascade between DSPs shifts by 17.
const PIECE: usize = 17;

/// The multiplier. [`Multiplier::DspShift`] has no leading-zero count of the product: both
/// shifts a subnormal operand or result needs are one multiply by a power of two in DSPs, with
/// no LUT shifter.
/// - Two subnormal operands give a product that rounds to a signed zero (the formats the
///   operator accepts have bias ≥ man + 2), so at most one significand has leading zeros:
///   `lz`, the OR of both fractions' counts, each kept only for a subnormal operand.
/// - Beside the DSP product `P = sa · sb`, the exponents fix a left shift `t ∈ [0, man]`, and
///   `Q = P · 2^t` (the product cut in 17-bit pieces, one DSP each, summed along the DSP
///   cascade) puts the result's bits in one of three fixed windows of `p + 1` bits, the guard
///   bit first. The factor `2^t` is itself a DSP product of two small one-hots.
/// - A normal result (field `E0 = ea + eb − bias − lz ≥ 1`): `t = lz` puts `Q`'s leading one at
///   `2·man` or one above, so the window starts at `man − 1`, or at `man` when `Q[2·man + 1]`
///   is set (the one-bit normalisation, field `E0 + 1`).
/// - A subnormal result keeps the bits from `P[u]`, `u = 1 + bias + man − ea − eb ≥ 1`: for
///   `u ≤ man + 1`, `t = man + 1 − u` and the window starts at `man`; for `u ≤ 2·man + 2`,
///   `t = 2·man + 2 − u` and it starts at `2·man + 1`; past that every product bit lies below
///   the guard bit and the result is a signed zero.
/// - The sticky bit is the OR of `Q`'s bits below the window (a left shift drops nothing).
///
/// NaN, infinity, zero (also a result past the far window, `far`) and an exponent at or past
/// infinity's are masks on the packed exponent and fraction, with no increment. The last stage
/// is one adder on the packed value, a carry chain: the rounding increment at the fraction's
/// low bit, and at the exponent's low bit the 1 (2 with the normalisation step) that turns the
/// held `E0 − 1` into the field `E0` (or `E0 + 1`); its carry moves the exponent (subnormal to
/// normal, largest finite to infinity).
///
/// [`Multiplier::LutShift`] counts the leading zeros of the product instead and reads the
/// window with one LUT right shift ([`lut_shift_mul`]), so the significand product is its only
/// multiply: 2 DSP48E1 for binary32.
///
/// Register places ([`Multiplier::DspShift`]): 0 after the leading-zero count and the exponent
/// sum, 1 after the product and the shift amount's two one-hots, 2 after the factor 2^t, 3
/// between the shifting multiply's products and its cascade sums, 4 after the cascade, 5 after
/// the window and the rounding decision; [`lut_shift_mul`] lists its own.
pub(super) fn mul<'d>(d: &'d Design, f: FloatFormat, cuts: &mut Cuts, a: Sig<'d>, b: Sig<'d>, multiplier: Multiplier) -> Sig<'d> {
    let (p, man) = (f.man + 1, f.man);
    d.section(match multiplier {
        Multiplier::DspShift => "mul: operands, special cases, leading zeros of a subnormal significand",
        Multiplier::LutShift => "mul: operands, special cases, the exponent sum",
    });
    let (ua, ub) = (unpack(f, a, "a"), unpack(f, b, "b"));
    sig!(sign = ua.sign ^ ub.sign);
    sig!(nan = ua.nan | ub.nan | ua.zero & ub.inf | ua.inf & ub.zero);
    sig!(inf = ua.inf | ub.inf);
    let (a_hidden, b_hidden) = (ua.sig.bit(man), ub.sig.bit(man));
    // Zero, or both subnormal: a signed zero.
    sig!(zero = ua.zero | ub.zero | !a_hidden & !b_hidden);
    // Leading zeros of the subnormal significand (none when both are normal): each fraction's
    // count beside its exponent's zero test, kept only for a subnormal operand.
    let lz = (multiplier == Multiplier::DspShift).then(|| {
        let subnormal_lz = |u: &Unpacked<'d>| {
            let count = lzc_tree(d.lit(0, 1).cat(u.sig.bits(0, man)));
            u.sig.bit(man).mux(d.lit(0, count.width), count)
        };
        sig!(lz = subnormal_lz(&ua) | subnormal_lz(&ub));
        lz
    });
    // Signed exponents: room for 2·(2^exp − 2) and below for E0 − 1 ≥ 1 − bias − man, with
    // margin for the meaningless lz of a zero operand (its result is forced anyway).
    let reach = (2 * (f.exp_max() as usize - 1)).max(f.bias() as usize + 2 * p + 2);
    let xw = usize::BITS as usize - reach.leading_zeros() as usize + 1;
    // fine = ea + eb − bias (the exponent sum, fine-grained: it also places a subnormal result,
    // as man + 1 − u); eb − bias − 1 is eb with its top bit flipped, read as signed, so this is
    // one adder with carry in 1.
    let eb_centered = (ub.exp ^ d.lit(1 << (f.exp - 1), f.exp)).sext(xw);
    sig!(fine = ua.exp.zext(xw) + eb_centered + 1u32);
    let operands = Operands { sign, nan, inf, zero };
    cuts.cut(&mut d.net());
    match (multiplier, lz) {
        (Multiplier::DspShift, Some(lz)) => dsp_shift_mul(d, f, cuts, &ua, &ub, operands, fine, lz),
        _ => lut_shift_mul(d, f, cuts, &ua, &ub, operands, fine),
    }
}

/// A subnormal result past `2·man + 2` (`fine < −man − 1`): every product bit lies below the
/// guard bit, a signed zero.
fn far<'d>(fine: Sig<'d>, man: usize) -> Sig<'d> {
    fine.slt(-(man as i64) - 1)
}

/// The operands' classes both multipliers carry to the rounding stage.
#[derive(Clone, Copy)]
struct Operands<'d> {
    sign: Sig<'d>,
    nan: Sig<'d>,
    inf: Sig<'d>,
    zero: Sig<'d>,
}

/// [`Multiplier::DspShift`] from the product on: the window in `Q = P · 2^t` (places 1 to 5).
#[allow(clippy::too_many_arguments)]
fn dsp_shift_mul<'d>(d: &'d Design, f: FloatFormat, cuts: &mut Cuts, ua: &Unpacked<'d>, ub: &Unpacked<'d>, o: Operands<'d>, fine: Sig<'d>, lz: Sig<'d>) -> Sig<'d> {
    let (p, man, xw) = (f.man + 1, f.man, fine.width);
    let Operands { sign, nan, inf, zero } = o;
    d.section("mul: significand product; beside it, the result's exponent, its window and the shift's factor 2^t");
    sig!(product = ua.sig.mul(ub.sig));
    // E0 − 1, E0 = fine − lz the exponent field of a normal result with Q's leading one at
    // 2·man (no normalisation step): normal when E0 ≥ 1, the sign of one adder. The rounding
    // adder adds the 1 back (2 with the step).
    sig!(e0_minus_1 = fine + !lz.zext(xw));
    sig!(normal = !e0_minus_1.bit(xw - 1));
    // A subnormal result's u: at most man + 1 while fine ≥ 0, else `coarse` (the far window);
    // past 2·man + 2 when fine < −man − 1, `far`: below the far window, a signed zero.
    sig!(coarse = fine.bit(xw - 1), far = far(fine, man));
    // t: lz (normal); man + 1 − u = fine; 2·man + 2 − u = fine + man + 1.
    let tw = usize::BITS as usize - man.leading_zeros() as usize;
    sig!(t = normal.mux(lz.bits(0, tw), coarse.mux(fine + (man as u32 + 1), fine).bits(0, tw)));
    // At or past infinity's exponent field: over_low without the normalisation step (E0),
    // over_high with it (E0 + 1).
    let exp_max = f.exp_max() as i64;
    sig!(over_low = !e0_minus_1.slt(exp_max - 1), over_high = !e0_minus_1.slt(exp_max - 2));
    sig!(forced_early = nan | inf | zero | normal.mux(d.lit(0, 1), far));
    let shifted = dsp_shift(d, cuts, product, t, p);
    d.section("mul: the window (guard, then the kept bits), sticky = the bits below it, round to nearest even, special cases");
    // Windows start at man − 1 (normal), man (normal with the step, or a subnormal near the
    // normal range) or 2·man + 1 (a subnormal far below it).
    let high = shifted.bit(2 * man + 1);
    sig!(far_window = !normal & coarse, mid_window = normal.mux(high, !coarse));
    let window_at = |start: usize| shifted.bits(start, p + 1);
    sig!(window = far_window.mux(window_at(2 * man + 1), mid_window.mux(window_at(man), window_at(man - 1))));
    let below = |start: usize, end: usize| if end > start { shifted.bits(start, end - start).any() } else { d.lit(0, 1) };
    sig!(sticky = below(0, man - 1) | (far_window | mid_window) & shifted.bit(man - 1) | far_window & below(man, 2 * man + 1));
    sig!(overflow = normal & high.mux(over_high, over_low));
    sig!(forced = forced_early | overflow);
    sig!(saturate = !nan & (inf | !zero & overflow), normal_field = !forced & normal);
    // A subnormal result's kept bit `man` (set when the value already reaches the smallest
    // normal, E0 = 0 with Q's upper leading one) is the exponent field's low bit, and a rounding
    // carry into it makes it normal too; a normal result's field is E0 − 1 until the rounding
    // adder adds 1 (or 2 for the upper window).
    sig!(kept = window.bits(1, p), guard = window.bit(0));
    sig!(increment = !forced & guard & (sticky | kept.bit(0)));
    let field = normal.mux(e0_minus_1, kept.bit(man).zext(xw));
    // Forced results as masks (the value ANDed out, infinity's exponent or the NaN ORed in).
    let (exp_ones, quiet_bit) = ((nan | saturate).sext(f.exp), nan.zext(man).shl_const(man - 1));
    sig!(packed = (field.bits(0, f.exp).cat(kept.bits(0, man)) & (!forced).sext(f.exp + man)) | exp_ones.cat(quiet_bit));
    sig!(result_sign = !nan & sign);
    cuts.cut(&mut d.net());

    d.section("mul: rounding increment and the normal field's 1 or 2, one adder (its carry reaches infinity's encoding on overflow)");
    let exp_add = (normal_field & high).cat(normal_field & !high);
    let addend = exp_add.zext(f.exp + man).shl_const(man) | increment.zext(f.exp + man);
    sig!(result = result_sign.cat(packed + addend));
    result
}

/// [`Multiplier::LutShift`] from the product on (places 1 to 5): one count of the leading zeros
/// of `P`'s upper `p + 1` bits stands for both the subnormal operand's normalisation and the
/// product's one-bit step, and one LUT right shift of `P·2` by `r` puts the result in the window
/// (guard bit, then `p` kept bits), a normal result's leading one at its top.
/// - `P ≥ 2^man` whenever the result is not forced (one operand is normal), so `P`'s leading
///   one lies in `P[man ..= 2·man + 1]`, `lead` zeros above it.
/// - A normal result has the field `E = fine − lead + 1` (an upper leading one, the one-bit
///   step, is `lead = 0`), normal when `fine ≥ lead`, and `r = p − lead`.
/// - A subnormal result keeps the bits from `P[u]`, `r = u = p − fine` (at most `2·man + 2`,
///   else `far`, a signed zero).
/// - The sticky bit is the OR of the bits the shift drops.
///
/// The shift runs on `P·2` with zeros below it, as many as make `p − lead` the count's
/// complement (no subtraction), and a forced result (NaN, infinity, zero, overflow) shifts by
/// all ones: an empty window, no increment, only the field and NaN's quiet bit left. The
/// window's top bit is the leading one of a normal result, and of a subnormal one that rounds
/// up to the smallest normal: the last adder adds it at the exponent's low bit to `E − 1`
/// (normal) or 0, the rounding increment at the fraction's low bit, on a carry chain whose
/// carry moves the exponent (largest finite to infinity included).
///
/// Register places: 0 after the exponent sum, 1 and 2 after the product (a DSP's multiplier
/// and output registers), 3 after the count and `E − 1`, 4 after the shift amount, 5 inside the
/// shift (after its steps of 16); the window's steps of 4 and 1, the rounding decision and the
/// adder share the last stage.
fn lut_shift_mul<'d>(d: &'d Design, f: FloatFormat, cuts: &mut Cuts, ua: &Unpacked<'d>, ub: &Unpacked<'d>, o: Operands<'d>, fine: Sig<'d>) -> Sig<'d> {
    let (p, man, xw) = (f.man + 1, f.man, fine.width);
    let far = far(fine, man);
    let Operands { sign, nan, inf, zero } = o;
    // The count is taken on P's upper bits at the top of a power-of-two word, so its complement
    // `!lead = size − 1 − lead` is a normal result's shift of `P·2·2^pad`, `pad = size − 1 − p`;
    // a subnormal result's is `u + pad = size − 1 − fine`.
    let size = (p + 2).next_power_of_two();
    let pad = size - 1 - p;
    // Shift amounts reach the padded product's width: all ones empties the window.
    let rw = usize::BITS as usize - (2 * p + 1 + pad).leading_zeros() as usize;
    d.section("mul: significand product P; beside it, a subnormal result's shift u");
    sig!(product = ua.sig.mul(ub.sig));
    // `size − 1 − fine`: below `size`'s bit, fine's complement (no adder). (u past 2·man + 2
    // is `far`, a forced zero: its truncated bits do not matter.)
    let k = size.trailing_zeros() as usize;
    sig!(u = ((!fine).bits(k, rw - k) + 1u32).bits(0, rw - k).cat((!fine).bits(0, k)));
    // At or past infinity's field: only two normal operands reach it (a subnormal one keeps
    // fine ≤ bias + 1), so P's leading one is at 2·man or above it (lead 1 or 0) and
    // E = fine or fine + 1.
    let exp_max = f.exp_max() as i64;
    sig!(over_any = !fine.slt(exp_max), over_if_upper = fine.eq(exp_max as u32 - 1));
    // (Two places after the product: a DSP's multiplier and output registers.)
    cuts.cut(&mut d.net());
    cuts.cut(&mut d.net());

    d.section("mul: leading zeros of P's upper p + 1 bits");
    sig!(lead = lzc_tree(product.bits(man, p + 1)));
    debug_assert_eq!(1 << lead.width, size, "the count's word");
    // E − 1 of a normal result; normal when it is not negative (the sign of one adder).
    sig!(e_minus_1 = fine - lead.zext(xw));
    sig!(overflow = over_any | over_if_upper & product.bit(2 * man + 1));
    sig!(forced_early = nan | inf | zero | overflow, saturate = !nan & (inf | !zero & overflow));
    cuts.cut(&mut d.net());

    d.section("mul: normal or subnormal result, the exponent field, the shift r (all ones for a forced result: an empty window)");
    sig!(normal = !e_minus_1.bit(xw - 1));
    sig!(forced = forced_early | !normal & far);
    sig!(shift = forced.mux(d.lit((1 << rw) - 1, rw), normal.mux((!lead).zext(rw), u)));
    // The exponent field before the adder: all ones for NaN and infinity, E − 1 for a normal
    // result, else 0.
    sig!(ones = nan | saturate, field_kept = normal & !forced_early);
    cuts.cut(&mut d.net());

    d.section("mul: P·2 >> r, a radix-4 right shift in two parts, the dropped bits ORed");
    let padded = product.cat(d.lit(0, 1 + pad));
    // The steps of 16 and up (none in a narrow format), keeping the bits the steps of 4 and 1
    // may still bring in.
    let low = rw.min(4);
    let (coarse, dropped_coarse) = if rw > low { shr_radix4(d, padded, shift.bits(low, rw - low).cat(d.lit(0, low)), p + (1 << low)) } else { (padded, d.lit(0, 1)) };
    cuts.cut(&mut d.net());
    let (window, dropped_fine) = shr_radix4(d, coarse, shift.bits(0, low), p + 1);
    sig!(window = window, sticky = dropped_coarse.any() | dropped_fine.any());

    d.section("mul: round to nearest even; the rounding increment and the window's top bit at the exponent's low bit, one adder");
    // A forced result has an empty window: no increment, and only NaN's quiet bit to add.
    sig!(kept = window.bits(1, p), guard = window.bit(0));
    sig!(increment = guard & (sticky | kept.bit(0)));
    let quiet_bit = nan.zext(man).shl_const(man - 1);
    sig!(field = ones.mux(d.lit(f.exp_max(), f.exp), field_kept.mux(e_minus_1.bits(0, f.exp), 0)));
    sig!(packed = field.cat(kept.bits(0, man) | quiet_bit));
    let addend = kept.bit(man).zext(f.exp + man).shl_const(man) | increment.zext(f.exp + man);
    sig!(result = (!nan & sign).cat(packed + addend));
    result
}

/// `Q = P · 2^t` in DSPs (places 1 to 4 of [`Multiplier::DspShift`]), `3p` bits.
fn dsp_shift<'d>(d: &'d Design, cuts: &mut Cuts, product: Sig<'d>, t: Sig<'d>, p: usize) -> Sig<'d> {
    let tw = t.width;
    // 2^t as the product of two small one-hots, 2^(4·⌊t/4⌋) · 2^(t mod 4), in a DSP: a LUT
    // decoder of t costs a LUT per bit of the factor, these two one LUT per bit of theirs.
    let low_bits = tw.min(2);
    let step = 1 << low_bits;
    let group = |g: usize| if tw > low_bits { t.bits(low_bits, tw - low_bits).eq(g as u32) } else { d.lit(1, 1) };
    let t_high_hot: Vec<Sig<'d>> = (0..p.div_ceil(step)).rev().map(|g| group(g).zext(step)).collect();
    let t_low_hot: Vec<Sig<'d>> = (0..step).rev().map(|j| t.bits(0, low_bits).eq(j as u32)).collect();
    let (t_high_hot, t_low_hot) = (d.cat(&t_high_hot), d.cat(&t_low_hot));
    // (A place before that DSP: the exponent logic and the DSP's multiply apart.)
    cuts.cut(&mut d.net());
    sig!(scale = t_high_hot.mul(t_low_hot).bits(0, p));
    cuts.cut(&mut d.net());

    d.section("mul: Q = P · 2^t, the product's 17-bit pieces times the factor, summed along the DSP cascade");
    // Piece k contributes P[17k..] · 2^t at bit 17k: each partial sum keeps its low 17 bits
    // and carries the rest (shifted down 17) into the next piece's product.
    let pieces: Vec<Sig<'d>> = (0..2 * p).step_by(PIECE).map(|lo| product.bits(lo, PIECE.min(2 * p - lo)).mul(scale)).collect();
    // (A place between the multiplies and the cascade's adds: each DSP's multiplier register.)
    cuts.cut(&mut d.net());
    let mut low = Vec::new();
    let mut carry: Option<Sig<'d>> = None;
    for (k, piece) in pieces.into_iter().enumerate() {
        let lo = k * PIECE;
        let sum = match carry {
            None => piece,
            Some(c) => {
                let w = piece.width.max(c.width) + 1;
                piece.zext(w) + c.zext(w)
            }
        };
        if lo + PIECE >= 2 * p {
            low.push(sum);
        } else {
            low.push(sum.bits(0, PIECE));
            carry = Some(sum.bits(PIECE, sum.width - PIECE));
        }
    }
    low.reverse();
    sig!(shifted = d.cat(&low).bits(0, 3 * p));
    cuts.cut(&mut d.net());
    shifted
}
