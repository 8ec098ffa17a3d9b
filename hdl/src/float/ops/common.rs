//! What the operators share: unpacking operands into fields and classes, normalizing,
//! rounding and packing a result, the special-case selection, and bit helpers (leading-zero
//! count, a right shift that also ORs what it drops).

use crate::float::FloatFormat;
use crate::netlist::{Cuts, Design, Sig};
use crate::sig;

/// Fields and classes of one operand.
pub(in crate::float) struct Unpacked<'d> {
    pub sign: Sig<'d>,
    /// Significand with the hidden bit (`man + 1` bits).
    pub sig: Sig<'d>,
    /// Exponent as used in arithmetic: 1 for subnormals (`exp` bits).
    pub exp: Sig<'d>,
    pub zero: Sig<'d>,
    pub inf: Sig<'d>,
    pub nan: Sig<'d>,
}

/// Splits `x` into fields and classes, named `{name}_sign`, `{name}_sig`, … in the Verilog.
pub(in crate::float) fn unpack<'d>(f: FloatFormat, x: Sig<'d>, name: &str) -> Unpacked<'d> {
    let named = |value: Sig<'d>, what: &str| value.named(&format!("{name}_{what}"));
    let exp_field = x.bits(f.man, f.exp);
    let frac = x.bits(0, f.man);
    let (exp_zero, exp_max, frac_zero) = (exp_field.is_zero(), exp_field.all(), frac.is_zero());
    Unpacked {
        sign: named(x.bit(f.exp + f.man), "sign"),
        zero: named(exp_zero & frac_zero, "zero"),
        inf: named(exp_max & frac_zero, "inf"),
        nan: named(exp_max & !frac_zero, "nan"),
        sig: named((!exp_zero).cat(frac), "sig"),
        exp: named(exp_zero.mux(1, exp_field), "exp"),
    }
}

/// Width of the signed exponent the rounding stage works with: room for the sum of two biased
/// exponents and the largest normalization shift.
pub(in crate::float) fn exp_width(f: FloatFormat) -> usize {
    let shift_bits = usize::BITS as usize - (2 * f.man + 8).leading_zeros() as usize;
    f.exp + 3 + shift_bits
}

/// Normalizes, rounds (nearest, ties to even) and packs a nonzero finite value
/// `s / 2^(width(s)-1) · 2^(x - bias)` with `sticky` standing for nonzero bits below `s`.
/// `x` is a two's-complement exponent of [`exp_width`] bits; `s` needs `man + 2` bits or more.
/// Results past the largest finite value become infinity; results below the smallest normal
/// become subnormal or zero. Uses two register places.
pub(in crate::float) fn round_pack<'d>(d: &'d Design, f: FloatFormat, cuts: &mut Cuts, sign: Sig<'d>, x: Sig<'d>, s: Sig<'d>, sticky: Sig<'d>) -> Sig<'d> {
    let (xw, wn) = (exp_width(f), s.width);
    assert!(wn >= f.man + 2, "round_pack needs man + 2 significand bits");
    d.section("round: normalization shift (left to a leading one, right into the subnormal range)");
    let zero = d.lit(0, xw);
    sig!(lz = lzc_tree(s).zext(xw));
    sig!(x_minus_lz = x - lz);
    sig!(normal = zero.slt(x_minus_lz), x_positive = zero.slt(x));
    sig!(left = normal.mux(lz, x_positive.mux(x - 1u32, 0)));
    sig!(right = x_positive.mux(0, d.lit(1, xw) - x));
    sig!(exp_field = normal.mux(x_minus_lz, 0));
    // A right shift happens only with no left shift: what it drops is `s` under a mask.
    sig!(dropped = s & !d.lit((1u128 << wn) - 1, wn).shl(right));
    cuts.cut(&mut d.net());

    d.section("round: shift; sticky = the OR of the bits the right shift drops");
    sig!(shifted = s.shl(left));
    sig!(aligned = shifted.shr(right));
    sig!(sticky = sticky | dropped.any());
    cuts.cut(&mut d.net());

    d.section("round: keep man + 1 bits, guard, the rest folded into sticky; round to nearest even");
    sig!(kept = aligned.bits(wn - 1 - f.man, f.man), guard = aligned.bit(wn - 2 - f.man));
    let rest = if wn - 2 - f.man > 0 { aligned.bits(0, wn - 2 - f.man).any() | sticky } else { sticky };
    sig!(increment = guard & (rest | kept.bit(0)));
    sig!(rounded = exp_field.bits(0, f.exp + 1).cat(kept) + increment.zext(f.exp + 1 + f.man));
    sig!(fits = exp_field.slt(f.exp_max()) & rounded.bits(f.man, f.exp + 1).lt(f.exp_max()));
    sign.cat(fits.mux(rounded.bits(0, f.exp + f.man), f.exp_max() << f.man))
}

/// The right shift into the subnormal range of a `width`-bit significand with exponent `x`
/// (`exp_width` bits): `1 − x` when `x ≤ 0`, at most `width`. Taken beside the operands, so the
/// rounding stage of [`round_pack_near`] only masks and shifts by it.
pub(super) fn subnormal_shift<'d>(d: &'d Design, f: FloatFormat, x: Sig<'d>, width: usize) -> Sig<'d> {
    let (xw, bw) = (exp_width(f), usize::BITS as usize - width.leading_zeros() as usize);
    let amount = d.lit(1, xw) - x;
    let past = d.lit(width as u128, xw).slt(amount);
    sig!(right = d.lit(0, xw).slt(x).mux(d.lit(0, bw), past.mux(d.lit(width as u128, bw), amount.bits(0, bw))));
    right
}

/// [`round_pack`] for a significand `s` whose top bit is set or (when `may_lead_zero`) the bit
/// below it is: a one-bit normalisation, and a right shift only into the subnormal range, by
/// `right` (from [`subnormal_shift`], known before `s` arrives) under a sticky mask. Uses two
/// register places.
pub(super) fn round_pack_near<'d>(d: &'d Design, f: FloatFormat, cuts: &mut Cuts, sign: Sig<'d>, x: Sig<'d>, right: Sig<'d>, s: Sig<'d>, sticky: Sig<'d>, may_lead_zero: bool) -> Sig<'d> {
    let (xw, wn) = (exp_width(f), s.width);
    assert!(wn >= f.man + 2, "round_pack_near needs man + 2 significand bits");
    d.section("round: one-bit normalisation; right shift into the subnormal range, its sticky bit");
    let zero = d.lit(0, xw);
    sig!(lead_zero = if may_lead_zero { !s.bit(wn - 1) } else { d.lit(0, 1) });
    // Normal (x − lz > 0) for either leading bit, chosen when it arrives.
    sig!(normal = lead_zero.mux(d.lit(1, xw).slt(x), zero.slt(x)));
    sig!(exp_field = normal.mux(lead_zero.mux(x - 1u32, x), 0));
    // What the right shift (by `right`, from [`subnormal_shift`]) drops: `s` under a mask (no right shift comes with a left one).
    sig!(sticky = sticky | (s & !d.lit((1u128 << wn) - 1, wn).shl(right)).any());
    sig!(left = normal & lead_zero);
    // exp_field < exp_max, from x beside the normalisation (a subnormal field is 0).
    sig!(fits = lead_zero.mux(x.slt(f.exp_max() + 1), x.slt(f.exp_max())));
    cuts.cut(&mut d.net());

    d.section("round: the shift");
    sig!(aligned = left.mux(s.shl_const(1), s.shr(right)));
    cuts.cut(&mut d.net());

    d.section("round: keep man + 1 bits, guard, the rest folded into sticky; round to nearest even");
    sig!(kept = aligned.bits(wn - 1 - f.man, f.man), guard = aligned.bit(wn - 2 - f.man));
    let rest = if wn - 2 - f.man > 0 { aligned.bits(0, wn - 2 - f.man).any() | sticky } else { sticky };
    sig!(increment = guard & (rest | kept.bit(0)));
    // A field below infinity's rounds at most to infinity's encoding (the carry clears the
    // fraction), so only a field already past the largest finite one needs replacing.
    sig!(rounded = exp_field.bits(0, f.exp).cat(kept) + increment.zext(f.exp + f.man));
    sign.cat(fits.mux(rounded, f.exp_max() << f.man))
}

/// The special cases an operator decides beside its rounded result.
pub(super) struct Special<'d> {
    pub(super) nan: Sig<'d>,
    pub(super) inf: Sig<'d>,
    pub(super) inf_sign: Sig<'d>,
    pub(super) zero: Sig<'d>,
    pub(super) zero_sign: Sig<'d>,
}

impl<'d> Special<'d> {
    /// The result: NaN over infinity over zero over `rounded`.
    pub(super) fn select(self, d: &'d Design, f: FloatFormat, rounded: Sig<'d>) -> Sig<'d> {
        d.section("special cases");
        let body = |value: u128| d.lit(value, f.exp + f.man);
        let r = self.zero.mux(self.zero_sign.cat(body(0)), rounded);
        let r = self.inf.mux(self.inf_sign.cat(body(f.exp_max() << f.man)), r);
        sig!(result = self.nan.mux(f.quiet_nan(), r));
        result
    }
}

/// Leading zeros of `x` by a balanced tree (the width when `x` is zero): pairs of halves, the
/// upper half's count unless it is all zeros. `log2` levels of muxes, not a priority chain.
pub(super) fn lzc_tree<'d>(x: Sig<'d>) -> Sig<'d> {
    // Pad below with ones to a power of two above the width: the count stops at the width.
    let size = (x.width + 1).next_power_of_two();
    let pad = size - x.width;
    let padded = x.cat(x.lit((1u128 << pad) - 1, pad));
    // (all zero, count) per block, from blocks of two bits up, most significant first.
    let mut blocks: Vec<(Sig<'d>, Sig<'d>)> = (0..size / 2)
        .rev()
        .map(|i| {
            let pair = padded.bits(2 * i, 2);
            (pair.is_zero(), !pair.bit(1))
        })
        .collect();
    while blocks.len() > 1 {
        blocks = blocks
            .chunks(2)
            .map(|pair| {
                let ((zh, ch), (zl, cl)) = (pair[0], pair[1]);
                (zh & zl, zh.mux(zh.cat(cl), zh.cat(ch)))
            })
            .collect();
    }
    blocks[0].1
}

/// Shifts a subnormal significand up to a leading one by its leading zeros `lz` (from
/// [`lzc_tree`], counted a register place earlier); returns it and its exponent (`exp_width`
/// bits, may go below 1).
pub(super) fn normalize_input<'d>(f: FloatFormat, u: &Unpacked<'d>, lz: Sig<'d>) -> (Sig<'d>, Sig<'d>) {
    let xw = exp_width(f);
    (u.sig.shl(lz), u.exp.zext(xw) - lz.zext(xw))
}

/// `x >> amount`, `width` bits of it, as stages of 4:1 multiplexers (one LUT6 per output bit
/// and stage), the largest shift first so each stage carries only the bits the later ones can
/// still bring into the window. An amount past `x` gives zero. Also returns, one bit per stage,
/// the OR of the bits each stage drops below the window (their OR is the OR of every bit of
/// `x` below bit `amount`): per stage, the OR of three groups of `step` bits under the digit.
pub(super) fn shr_radix4<'d>(d: &'d Design, x: Sig<'d>, amount: Sig<'d>, width: usize) -> (Sig<'d>, Sig<'d>) {
    // Pad the amount to an even number of bits; the stages take it two bits at a time.
    let aw = amount.width + amount.width % 2;
    let amount = amount.zext(aw);
    let mut value = x;
    let mut dropped = Vec::new();
    for stage in (0..aw / 2).rev() {
        let step = 1usize << (2 * stage);
        // Bits the remaining (smaller) stages may still shift into the window.
        let keep = width + step - 1;
        let (s0, s1) = (amount.bit(2 * stage), amount.bit(2 * stage + 1));
        let at = |i: usize| if i < value.width { value.bit(i) } else { d.lit(0, 1) };
        // OR of value[j·step, (j + 1)·step) for j = 0, 1, 2 (zero past the value).
        let group = |j: usize| {
            let lo = (j * step).min(value.width);
            let hi = ((j + 1) * step).min(value.width);
            if hi > lo {
                value.bits(lo, hi - lo).any()
            } else {
                d.lit(0, 1)
            }
        };
        let (g0, g1, g2) = (group(0), group(1), group(2));
        dropped.push(s1.mux(s0.mux(g0 | g1 | g2, g0 | g1), s0 & g0));
        let bits: Vec<Sig<'d>> = (0..keep).rev().map(|i| s1.mux(s0.mux(at(i + 3 * step), at(i + 2 * step)), s0.mux(at(i + step), at(i)))).collect();
        value = d.cat(&bits);
    }
    (value.bits(0, width), d.cat(&dropped))
}

/// `x << amount` (`x.width` bits) as stages of 4:1 multiplexers, the largest shift first (one
/// LUT6 per output bit and stage). An amount past `x` gives zero.
pub(super) fn shl_radix4<'d>(d: &'d Design, x: Sig<'d>, amount: Sig<'d>) -> Sig<'d> {
    let aw = amount.width + amount.width % 2;
    let amount = amount.zext(aw);
    let mut value = x;
    for stage in (0..aw / 2).rev() {
        let step = 1usize << (2 * stage);
        let (s0, s1) = (amount.bit(2 * stage), amount.bit(2 * stage + 1));
        let at = |i: usize, k: usize| if i >= k * step { value.bit(i - k * step) } else { d.lit(0, 1) };
        let bits: Vec<Sig<'d>> = (0..x.width).rev().map(|i| s1.mux(s0.mux(at(i, 3), at(i, 2)), s0.mux(at(i, 1), at(i, 0)))).collect();
        value = d.cat(&bits);
    }
    value
}
