//! The square root datapath: non-restoring square root, one root bit per register place.

use super::common::{exp_width, lzc_tree, normalize_input, round_pack_near, subnormal_shift, unpack, Special};
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
    let right = subnormal_shift(d, f, x, f.man + 3);
    // S = W − (4Q + 1) of restoring square root, in two's complement: the root bit is S ≥ 0,
    // and the next S is 4S + a − (4Q + 1) after a one, 4S + a + (4Q + 3) after a zero, with Q
    // the root so far and a the next two radicand bits. −(4Q + 1) is {~Q, 11}, 4Q + 3 is
    // {Q, 11}: one adder per step, its operand Q under a conditional complement.
    let steps = f.man + 3;
    let rw = f.man + 8;
    let radicand = radicand_top.cat(d.lit(0, f.man + 4));
    let mut remainder = d.lit(0, rw);
    // The root's bits complemented (a bit is S < 0, the remainder's sign, with no inverter
    // between one step's carry chain and the next step's operand); none known: all ones.
    let mut negroot = d.lit((1u128 << steps) - 1, steps);
    let mut neg = d.lit(0, 1);
    for i in (0..steps).rev() {
        let widened = remainder.bits(0, rw - 2).cat(radicand.bits(2 * i, 2));
        let negroot_low = negroot.bits(0, steps - 1);
        // Q ^ (S ≥ 0) is ~Q ^ (S < 0) on Q's bits, and (S ≥ 0) above them.
        let q_part = negroot_low ^ d.cat(&vec![neg; steps - 1]);
        let ext = d.cat(&vec![!neg; rw - 2 - (steps - 1)]);
        let trial = ext.cat(q_part).cat(d.lit(0b11, 2));
        remainder = (widened + trial).named("remainder");
        neg = remainder.bit(rw - 1);
        negroot = negroot_low.cat(neg).named("negroot");
        cuts.cut(&mut d.net());
    }
    sig!(root = !negroot);
    let nonneg = !neg;
    // The remainder is S after a one, S + 4Q + 1 after a zero (Q the root before its last
    // bit): nonzero when S ≠ −(4Q + 1) = {~Q, 11}, a compare, no adder.
    let ones = d.lit((1u128 << (rw - 2 - (steps - 1))) - 1, rw - 2 - (steps - 1));
    let minus_trial = ones.cat(negroot.bits(1, steps - 1)).cat(d.lit(0b11, 2));
    sig!(sticky = nonneg.mux(remainder.any(), remainder.ne(minus_trial)));
    let positive = d.lit(0, 1);
    let rounded = round_pack_near(d, f, cuts, positive, x, right, root, sticky, false);
    Special { nan, inf: ua.inf, inf_sign: positive, zero: ua.zero, zero_sign: ua.sign }.select(d, f, rounded)
}
