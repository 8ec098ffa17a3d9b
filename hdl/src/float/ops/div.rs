//! The divider datapath: restoring division, one quotient bit per register place.

use super::common::{normalize_input, round_pack_near, unpack, Special};
use crate::float::FloatFormat;
use crate::netlist::{Cuts, Design, Sig};
use crate::sig;

pub(super) fn div<'d>(d: &'d Design, f: FloatFormat, cuts: &mut Cuts, a: Sig<'d>, b: Sig<'d>) -> Sig<'d> {
    d.section("div: operands, special cases, exponent");
    let (ua, ub) = (unpack(f, a, "a"), unpack(f, b, "b"));
    sig!(sign = ua.sign ^ ub.sign);
    sig!(nan = ua.nan | ub.nan | ua.zero & ub.zero | ua.inf & ub.inf);
    sig!(inf = ua.inf | ub.zero, zero = ua.zero | ub.inf);
    let (sa, xa) = normalize_input(f, &ua);
    let (sb, xb) = normalize_input(f, &ub);
    sig!(x = xa - xb + f.bias());
    cuts.cut(&mut d.net());

    d.section("div: restoring division, one quotient bit per step: q = floor(sa · 2^(man+3) / sb)");
    let rw = f.man + 3;
    let divisor = sb.zext(rw);
    let mut remainder = sa.zext(rw);
    let mut quotient: Option<Sig> = None;
    for _ in 0..f.man + 4 {
        sig!(fits = remainder.ge(divisor));
        remainder = fits.mux(remainder - divisor, remainder).shl_const(1).named("remainder");
        quotient = Some(quotient.map_or(fits, |q| q.cat(fits).named("quotient")));
        cuts.cut(&mut d.net());
    }
    sig!(sticky = remainder.any());
    let rounded = round_pack_near(d, f, cuts, sign, x, quotient.unwrap(), sticky, true);
    Special { nan, inf, inf_sign: sign, zero, zero_sign: sign }.select(d, f, rounded)
}
