//! Multiplication by a constant power of two, `x · (±2^k)`: the general multiplier's result
//! bit for bit, without its product and its 50-place window shift. A kernel's `0.5 * x` costs
//! an exponent subtraction and a short shift instead of a multiplier.

use super::common::{lzc_tree, shl_radix4, shr_radix4, unpack};
use super::in_design;
use crate::float::FloatFormat;
use crate::netlist::{Cuts, Design, Netlist, Sig, Wire};
use crate::sig;
use crate::Error;

/// Register places, most useful first: 1 after the shift, 0 after the exponent and the shift
/// amount.
const PRIORITY: [usize; 2] = [1, 0];

/// The deepest split of [`scale`].
pub const SCALE_MAX_STAGES: usize = PRIORITY.len();

/// The exponent `k` and sign of a constant `c` when `c = ±2^k` is a normal power of two.
pub fn power_of_two(f: FloatFormat, c: u128) -> Option<(i64, bool)> {
    let field = (c >> f.man) & f.exp_max();
    let fraction = c & ((1u128 << f.man) - 1);
    (fraction == 0 && field >= 1 && field < f.exp_max()).then(|| (field as i64 - f.bias(), (c >> (f.exp + f.man)) & 1 == 1))
}

/// Builds `x · (±2^k)` (`negative` for the minus sign) at `x`'s stage with `stages` registers
/// (0..=[`SCALE_MAX_STAGES`]); returns the result wire.
pub fn scale(net: &mut Netlist, f: FloatFormat, stages: usize, x: Wire, k: i64, negative: bool) -> Result<Wire, Error> {
    if stages > SCALE_MAX_STAGES {
        return Err(Error::Parameter(format!("{stages} stages for {f} scale: allowed range 0..={SCALE_MAX_STAGES}")));
    }
    net.start_after(&[x]);
    let mut cuts = Cuts::new(stages, &PRIORITY);
    let result = in_design(net, |d| datapath(d, f, &mut cuts, d.sig(x), k, negative).wire);
    cuts.finish();
    Ok(result)
}

/// Bits to hold `v`.
fn bits_for(v: u128) -> usize {
    (u128::BITS - v.leading_zeros()).max(1) as usize
}

/// - k ≥ 0: the exponent field grows by k. A subnormal operand (leading zeros `lz` in its
///   significand) moves left by min(lz, k): to a leading one with field `1 + k − lz` when
///   `lz ≤ k`, else it stays subnormal. Exact; a field at or past infinity's overflows.
/// - k < 0: the field drops by j = −k; where it would fall to 0 or below, the significand
///   moves right by `1 + j − exp` (at most j, capped where every bit has gone below the
///   guard) and rounds to nearest even, its carry reaching the smallest normal.
fn datapath<'d>(d: &'d Design, f: FloatFormat, cuts: &mut Cuts, x: Sig<'d>, k: i64, negative: bool) -> Sig<'d> {
    d.section(&format!("scale: x · {}2^{k}", if negative { "−" } else { "" }));
    let u = unpack(f, x, "x");
    sig!(sign = if negative { !u.sign } else { u.sign });
    let xw = f.exp + 2;
    let body = |value: u128| d.lit(value, f.exp + f.man);
    let packed = if k >= 0 {
        let k = k as u128;
        let lz = lzc_tree(u.sig);
        let w = lz.width.max(bits_for(k)) + 1;
        let lz = lz.zext(w);
        sig!(to_normal = !d.lit(k, w).lt(lz));
        sig!(shift = to_normal.mux(lz, d.lit(k.min(f.man as u128 + 1), w)));
        sig!(field = to_normal.mux(u.exp.zext(xw) + d.lit(k, xw) - lz.zext(xw), d.lit(0, xw)));
        sig!(overflow = !field.slt(f.exp_max() as i64));
        cuts.cut(&mut d.net());
        sig!(shifted = shl_radix4(d, u.sig, shift.bits(0, bits_for(f.man as u128 + 1))));
        cuts.cut(&mut d.net());
        overflow.mux(body(f.exp_max() << f.man), field.bits(0, f.exp).cat(shifted.bits(0, f.man)))
    } else {
        let j = (-k) as u128;
        let cap = j.min(f.man as u128 + 2);
        let aw = bits_for(cap);
        sig!(field = u.exp.zext(xw) - d.lit(j, xw));
        sig!(normal = d.lit(0, xw).slt(field));
        // Right shift 1 − field, at most the cap (the guard position past the significand).
        let right = d.lit(1, xw) - field;
        let far = d.lit(cap, xw).lt(right);
        sig!(shift = (far | normal).mux(normal.mux(d.lit(0, aw), d.lit(cap, aw)), right.bits(0, aw)));
        cuts.cut(&mut d.net());
        // window[0] = sig[shift − 1], the guard; window[1..] the kept bits.
        let (window, dropped) = shr_radix4(d, u.sig.cat(d.lit(0, 1)), shift, f.man + 2);
        sig!(window = window, dropped = dropped);
        cuts.cut(&mut d.net());
        sig!(guard = window.bit(0), kept = window.bits(1, f.man + 1));
        sig!(increment = !normal & guard & (dropped.any() | kept.bit(0)));
        // A subnormal result: field 0, the kept bits' top bit (0) in the field's low bit, where
        // the rounding carry lands.
        let subnormal = kept.zext(f.exp + f.man) + increment.zext(f.exp + f.man);
        normal.mux(field.bits(0, f.exp).cat(u.sig.bits(0, f.man)), subnormal)
    };
    d.section("scale: special cases (NaN, infinity, zero)");
    let value = u.inf.mux(body(f.exp_max() << f.man), u.zero.mux(body(0), packed));
    sig!(result = u.nan.mux(d.lit(f.quiet_nan(), f.width()), (sign).cat(value)));
    result
}
