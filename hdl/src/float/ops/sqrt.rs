//! The square root datapath: non-restoring square root, one root bit per register place.

use super::common::{exp_width, lzc_tree, normalize_input, unpack};
use crate::float::FloatFormat;
use crate::netlist::{Cuts, Design, Sig};
use crate::sig;

pub(super) fn sqrt<'d>(d: &'d Design, f: FloatFormat, cuts: &mut Cuts, a: Sig<'d>) -> Sig<'d> {
    d.section("sqrt: operand, special cases, leading zeros");
    let ua = unpack(f, a, "a");
    sig!(nan = ua.nan | ua.sign & !ua.zero);
    sig!(lz = lzc_tree(ua.sig));
    cuts.cut(&mut d.net());

    d.section("sqrt: normalised significand, halved exponent");
    let (significand, exp) = normalize_input(f, &ua, lz);
    let xw = exp_width(f);
    sig!(unbiased = exp - f.bias());
    sig!(odd = unbiased.bit(0));
    // Odd exponents move one factor of two into the significand: sig' in [1, 4).
    sig!(radicand_top = odd.mux(significand.cat(d.lit(0, 1)), significand.zext(f.man + 2)));
    let even_exp = unbiased - odd.zext(xw);
    sig!(x = even_exp.bit(xw - 1).cat(even_exp.bits(1, xw - 1)) + f.bias());
    cuts.cut(&mut d.net());

    d.section("sqrt: non-restoring square root of radicand_top · 2^(man+4), two radicand bits per step");
    // S = W − (4Q + 1) of restoring square root, in two's complement: the root bit is S ≥ 0,
    // and the next S is 4S + a − (4Q + 1) after a one, 4S + a + (4Q + 3) after a zero, with Q
    // the root so far and a the next two radicand bits. −(4Q + 1) is {~Q, 11}, 4Q + 3 is
    // {Q, 11}: one adder per step, its operand Q under a conditional complement.
    let steps = f.man + 3;
    let rw = f.man + 8;
    let radicand = radicand_top.cat(d.lit(0, f.man + 4));
    // Before step k (k root bits known, Q < 2^k) the remainder S lies in
    // [−(4Q + 1), 4Q + 2], within k + 3 signed bits, and 4S + a within k + 5: the adder of
    // step k needs only k + 5 bits (the bits above are sign copies), so the early steps are
    // narrow.
    let mut remainder = d.lit(0, 3);
    // The root's bits complemented (a bit is S < 0, the remainder's sign, with no inverter
    // between one step's carry chain and the next step's operand); none known: all ones.
    let mut negroot = d.lit((1u128 << steps) - 1, steps);
    let mut neg = d.lit(0, 1);
    for (k, i) in (0..steps).rev().enumerate() {
        let wk = (k + 5).min(rw);
        let widened = remainder.bits(0, wk - 2).cat(radicand.bits(2 * i, 2));
        let negroot_low = negroot.bits(0, steps - 1);
        // Q ^ (S ≥ 0) is ~Q ^ (S < 0) on Q's k bits, and (S ≥ 0) above them.
        let ext = d.cat(&vec![!neg; wk - 2 - k]);
        let trial = if k == 0 { ext.cat(d.lit(0b11, 2)) } else { ext.cat(negroot_low.bits(0, k) ^ d.cat(&vec![neg; k])).cat(d.lit(0b11, 2)) };
        remainder = (widened + trial).named("remainder");
        neg = remainder.bit(wk - 1);
        negroot = negroot_low.cat(neg).named("negroot");
        cuts.cut(&mut d.net());
    }
    let wf = remainder.width;
    sig!(root = !negroot);
    let nonneg = !neg;
    // The remainder is S after a one, S + 4Q + 1 after a zero (Q the root before its last
    // bit): nonzero when S ≠ −(4Q + 1) = {~Q, 11}, a compare, no adder.
    let ones = d.lit((1u128 << (rw - 2 - (steps - 1))) - 1, rw - 2 - (steps - 1));
    let minus_trial = ones.cat(negroot.bits(1, steps - 1)).cat(d.lit(0b11, 2)).bits(0, wf);
    sig!(sticky = nonneg.mux(remainder.any(), remainder.ne(minus_trial)));
    cuts.cut(&mut d.net());

    // The root lies in [1, 2) and its exponent within the normal range (the square root of the
    // smallest subnormal is 2^−74.5, of the largest finite value below 2^64): no normalisation,
    // no subnormal shift and no overflow, only the rounding.
    d.section("sqrt: special cases and the packed value, round to nearest even");
    assert!(f.man < f.bias() as usize, "sqrt's results are normal only when man < bias");
    let wn = root.width;
    sig!(kept = root.bits(wn - 1 - f.man, f.man), guard = root.bit(wn - 2 - f.man));
    let rest = if wn - 2 - f.man > 0 { root.bits(0, wn - 2 - f.man).any() | sticky } else { sticky };
    sig!(forced = nan | ua.inf | ua.zero);
    sig!(increment = !forced & guard & (rest | kept.bit(0)));
    let body = |value: u128| d.lit(value, f.exp + f.man);
    let value = ua.inf.mux(body(f.exp_max() << f.man), ua.zero.mux(body(0), x.bits(0, f.exp).cat(kept)));
    sig!(packed = nan.mux(body(f.quiet_nan()), value));
    sig!(result_sign = !nan & ua.zero & ua.sign);
    cuts.cut(&mut d.net());

    d.section("sqrt: rounding increment (its carry moves the exponent)");
    sig!(result = result_sign.cat(packed + increment.zext(f.exp + f.man)));
    result
}
