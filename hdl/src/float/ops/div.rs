//! The divider datapath: non-restoring division, one quotient bit per register place.

use super::common::{lzc_tree, normalize_input, round_pack_near, subnormal_shift, unpack, Special};
use crate::float::FloatFormat;
use crate::netlist::{Cuts, Design, Sig};
use crate::sig;

pub(super) fn div<'d>(d: &'d Design, f: FloatFormat, cuts: &mut Cuts, a: Sig<'d>, b: Sig<'d>) -> Sig<'d> {
    d.section("div: operands, special cases, leading zeros");
    let (ua, ub) = (unpack(f, a, "a"), unpack(f, b, "b"));
    sig!(sign = ua.sign ^ ub.sign);
    sig!(nan = ua.nan | ub.nan | ua.zero & ub.zero | ua.inf & ub.inf);
    sig!(inf = ua.inf | ub.zero, zero = ua.zero | ub.inf);
    sig!(lza = lzc_tree(ua.sig), lzb = lzc_tree(ub.sig));
    cuts.cut(&mut d.net());

    d.section("div: normalised significands, exponent");
    let (sa, xa) = normalize_input(f, &ua, lza);
    let (sb, xb) = normalize_input(f, &ub, lzb);
    sig!(x = xa - xb + f.bias());
    cuts.cut(&mut d.net());

    d.section("div: non-restoring division, one quotient bit per step: q = floor(sa · 2^(man+3) / sb)");
    // The trial remainder T = R − sb of restoring division (R in [0, 2·sb)), in two's
    // complement: the quotient bit is T ≥ 0, and the next T is 2T − sb after a one, 2T + sb
    // after a zero. One add or subtract per step (the operand's complement in the LUT before
    // the carry chain, the carry-in from the same bit), no compare, no restoring mux.
    let right = subnormal_shift(d, f, x, f.man + 4);
    let w = f.man + 3;
    let divisor = sb.zext(w);
    let mut trial = (sa.zext(w) - divisor).named("trial");
    let mut quotient: Option<Sig> = None;
    let steps = f.man + 4;
    let mut last_q = None;
    for step in 0..steps {
        sig!(q = !trial.bit(w - 1));
        quotient = Some(quotient.map_or(q, |quotient| quotient.cat(q).named("quotient")));
        if step + 1 < steps {
            let flip = d.cat(&vec![q; w]);
            // 2T + (q ? ~sb + 1 : sb): low bits 1 and q make the carry-in q (the carry chain's
            // bypass input a constant, q = ~sign only in the LUT before it).
            trial = (trial.shl_const(1).cat(d.lit(1, 1)) + (divisor ^ flip).cat(q)).bits(1, w).named("trial");
        }
        last_q = Some(q);
        cuts.cut(&mut d.net());
    }
    // The remainder R = T after a one, T + sb after a zero.
    sig!(sticky = last_q.unwrap().mux(trial.any(), (trial + divisor).any()));
    let rounded = round_pack_near(d, f, cuts, sign, x, right, quotient.unwrap(), sticky, true);
    Special { nan, inf, inf_sign: sign, zero, zero_sign: sign }.select(d, f, rounded)
}
