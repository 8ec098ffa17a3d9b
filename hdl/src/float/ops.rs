//! Floating-point operators as netlist generators, for any [`FloatFormat`].
//!
//! Each operator takes its stage count: 0 is purely combinational, and every value up to
//! [`FloatOperator::max_stages`] places one more pipeline register. Results are rounded to
//! nearest, ties to even; subnormals are handled in and out; signed zeros and infinities follow
//! IEEE-754; every NaN result is the canonical quiet NaN.

use super::FloatFormat;
use crate::netlist::{Cuts, Design, Netlist, Sig, Wire};
use crate::sig;

/// The operators, with their pipeline depth limits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FloatOperator {
    Add,
    Sub,
    Mul,
    Div,
    Sqrt,
}

impl FloatOperator {
    pub const ALL: [FloatOperator; 5] =
        [FloatOperator::Add, FloatOperator::Sub, FloatOperator::Mul, FloatOperator::Div, FloatOperator::Sqrt];

    /// The deepest useful split: one register per place the generator marks.
    pub fn max_stages(self, format: FloatFormat) -> usize {
        self.priority(format).len()
    }

    pub fn operands(self) -> usize {
        if self == FloatOperator::Sqrt {
            1
        } else {
            2
        }
    }

    /// The operator in native binary32 arithmetic (`y` is ignored by `Sqrt`).
    pub fn apply_f32(self, x: f32, y: f32) -> f32 {
        match self {
            FloatOperator::Add => x + y,
            FloatOperator::Sub => x - y,
            FloatOperator::Mul => x * y,
            FloatOperator::Div => x / y,
            FloatOperator::Sqrt => x.sqrt(),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            FloatOperator::Add => "add",
            FloatOperator::Sub => "sub",
            FloatOperator::Mul => "mul",
            FloatOperator::Div => "div",
            FloatOperator::Sqrt => "sqrt",
        }
    }

    /// Register places, most useful first (the longest logic between registers is split first).
    fn priority(self, format: FloatFormat) -> Vec<usize> {
        match self {
            // places: 0 compare, 1 align, 2 add, 3 lzc, 4 normalisation shift, 5 round decision
            FloatOperator::Add | FloatOperator::Sub => vec![2, 4, 1, 3, 0, 5],
            // places: 0 operand counts, 1 normalised exponents, 2 product, 3 window shift,
            // 4 rounding decision
            FloatOperator::Mul => vec![2, 3, 4, 0, 1],
            // places: 0 unpack/normalize, 1..=n one per quotient bit, n+1 lzc, n+2 normalize
            FloatOperator::Div => recurrence_priority(format.man + 4, true),
            FloatOperator::Sqrt => recurrence_priority(format.man + 3, false),
        }
    }

    /// Builds the operator on `operands` at their stage; returns the result wire.
    pub fn build(self, net: &mut Netlist, format: FloatFormat, stages: usize, operands: &[Wire]) -> Result<Wire, String> {
        let max = self.max_stages(format);
        if stages > max {
            return Err(format!("{} stages for {format} {}: allowed range 0..={max}", stages, self.name()));
        }
        if operands.len() != self.operands() {
            return Err(format!("{format} {} takes {} operands, got {}", self.name(), self.operands(), operands.len()));
        }
        net.start_after(operands);
        let mut cuts = Cuts::new(stages, &self.priority(format));
        let result = in_design(net, |d| {
            let (a, b) = (d.sig(operands[0]), operands.get(1).map(|w| d.sig(*w)));
            let result = match self {
                FloatOperator::Add => add(d, format, &mut cuts, a, b.unwrap(), false),
                FloatOperator::Sub => add(d, format, &mut cuts, a, b.unwrap(), true),
                FloatOperator::Mul => mul(d, format, &mut cuts, a, b.unwrap()),
                FloatOperator::Div => div(d, format, &mut cuts, a, b.unwrap()),
                FloatOperator::Sqrt => sqrt(d, format, &mut cuts, a),
            };
            result.wire
        });
        cuts.finish();
        Ok(result)
    }
}

/// Runs typed construction on a netlist the caller lends: the netlist moves into a [`Design`]
/// and back, its wires unchanged.
pub(super) fn in_design<T>(net: &mut Netlist, build: impl FnOnce(&Design) -> T) -> T {
    let d = Design::new();
    *d.net() = std::mem::take(net);
    let out = build(&d);
    *net = d.finish();
    out
}

/// Register places for a digit recurrence of `steps` steps: the two rounding places first (and,
/// with `last_apart`, the place after the last step, so the last steps never share a stage
/// with the sticky OR), then the recurrence split evenly (bisection order), then the unpack
/// place.
fn recurrence_priority(steps: usize, last_apart: bool) -> Vec<usize> {
    let mut order = vec![steps + 2, steps + 1];
    let mut chosen = vec![false; steps + 1];
    if last_apart {
        order.push(steps);
        chosen[steps] = true;
    }
    let mut denominator = 2;
    while order.len() < steps + 2 {
        for k in (1..denominator).step_by(2) {
            let place = (k * steps).div_ceil(denominator).clamp(1, steps);
            if !chosen[place] {
                chosen[place] = true;
                order.push(place);
            }
        }
        denominator *= 2;
        if denominator > 4 * steps {
            for (place, taken) in chosen.iter_mut().enumerate().skip(1) {
                if !*taken {
                    *taken = true;
                    order.push(place);
                }
            }
        }
    }
    order.push(0);
    order
}

/// Fields and classes of one operand.
pub(super) struct Unpacked<'d> {
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
pub(super) fn unpack<'d>(f: FloatFormat, x: Sig<'d>, name: &str) -> Unpacked<'d> {
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
pub(super) fn exp_width(f: FloatFormat) -> usize {
    let shift_bits = usize::BITS as usize - (2 * f.man + 8).leading_zeros() as usize;
    f.exp + 3 + shift_bits
}

/// Normalizes, rounds (nearest, ties to even) and packs a nonzero finite value
/// `s / 2^(width(s)-1) · 2^(x - bias)` with `sticky` standing for nonzero bits below `s`.
/// `x` is a two's-complement exponent of [`exp_width`] bits; `s` needs `man + 2` bits or more.
/// Results past the largest finite value become infinity; results below the smallest normal
/// become subnormal or zero. Uses two register places.
pub(super) fn round_pack<'d>(d: &'d Design, f: FloatFormat, cuts: &mut Cuts, sign: Sig<'d>, x: Sig<'d>, s: Sig<'d>, sticky: Sig<'d>) -> Sig<'d> {
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

/// [`round_pack`] for a significand `s` whose top bit is set or (when `may_lead_zero`) the bit
/// below it is: a one-bit normalisation, and a right shift only into the subnormal range, by an
/// amount and under a sticky mask known from the exponent before `s` arrives. Uses two
/// register places.
fn round_pack_near<'d>(d: &'d Design, f: FloatFormat, cuts: &mut Cuts, sign: Sig<'d>, x: Sig<'d>, s: Sig<'d>, sticky: Sig<'d>, may_lead_zero: bool) -> Sig<'d> {
    let (xw, wn) = (exp_width(f), s.width);
    assert!(wn >= f.man + 2, "round_pack_near needs man + 2 significand bits");
    d.section("round: one-bit normalisation; right shift into the subnormal range, its sticky bit");
    let zero = d.lit(0, xw);
    sig!(lead_zero = if may_lead_zero { !s.bit(wn - 1) } else { d.lit(0, 1) });
    // Normal (x − lz > 0) for either leading bit, chosen when it arrives.
    sig!(normal = lead_zero.mux(d.lit(1, xw).slt(x), zero.slt(x)));
    sig!(exp_field = normal.mux(lead_zero.mux(x - 1u32, x), 0));
    sig!(right = zero.slt(x).mux(0, d.lit(1, xw) - x));
    // What the right shift drops: `s` under a mask (no right shift comes with a left one).
    sig!(sticky = sticky | (s & !d.lit((1u128 << wn) - 1, wn).shl(right)).any());
    sig!(left = normal & lead_zero);
    cuts.cut(&mut d.net());

    d.section("round: the shift");
    sig!(aligned = left.mux(s.shl_const(1), s.shr(right)));
    cuts.cut(&mut d.net());

    d.section("round: keep man + 1 bits, guard, the rest folded into sticky; round to nearest even");
    sig!(kept = aligned.bits(wn - 1 - f.man, f.man), guard = aligned.bit(wn - 2 - f.man));
    let rest = if wn - 2 - f.man > 0 { aligned.bits(0, wn - 2 - f.man).any() | sticky } else { sticky };
    sig!(increment = guard & (rest | kept.bit(0)));
    sig!(rounded = exp_field.bits(0, f.exp + 1).cat(kept) + increment.zext(f.exp + 1 + f.man));
    sig!(fits = exp_field.slt(f.exp_max()) & rounded.bits(f.man, f.exp + 1).lt(f.exp_max()));
    sign.cat(fits.mux(rounded.bits(0, f.exp + f.man), f.exp_max() << f.man))
}

/// The special cases an operator decides beside its rounded result.
struct Special<'d> {
    nan: Sig<'d>,
    inf: Sig<'d>,
    inf_sign: Sig<'d>,
    zero: Sig<'d>,
    zero_sign: Sig<'d>,
}

impl<'d> Special<'d> {
    /// The result: NaN over infinity over zero over `rounded`.
    fn select(self, d: &'d Design, f: FloatFormat, rounded: Sig<'d>) -> Sig<'d> {
        d.section("special cases");
        let body = |value: u128| d.lit(value, f.exp + f.man);
        let r = self.zero.mux(self.zero_sign.cat(body(0)), rounded);
        let r = self.inf.mux(self.inf_sign.cat(body(f.exp_max() << f.man)), r);
        sig!(result = self.nan.mux(f.quiet_nan(), r));
        result
    }
}

/// The adder (and subtracter): one path, every stage a few LUT levels.
/// - The operands are ordered by magnitude (one compare of the packed magnitudes), so the
///   difference of the significands is never negative.
/// - The smaller significand is shifted right by the exponent difference; its sticky bit (the
///   OR of what shifts out) is `tz(small) + 3 < distance`, from a trailing-zero count taken
///   beside the compare, not from a shifted-back copy.
/// - The sum `[carry | hidden | fraction | guard | round | sticky]` is normalised by one left
///   shift by `L = min(lz(sum), big_exp)`: a marker bit ORed in at position `27 − big_exp`
///   (for binary32) makes a balanced leading-zero count stop there, so results that would go
///   below the smallest normal come out subnormal with no compare after the count. A carry out
///   is `L = 0`: the window is always the top `man + 1` bits, the next bit is the guard.
/// - Rounding increments the packed exponent and fraction; the exponent field is
///   `big_exp + 1 − L`, or 0 when no hidden bit reached the top (a subnormal result; a carry
///   out of the fraction makes the field 1).
/// Register places: 0 after the compare, 1 after the alignment, 2 after the addition, 3 after
/// the leading-zero count, 4 after the normalisation shift, 5 after the rounding decision.
fn add<'d>(d: &'d Design, f: FloatFormat, cuts: &mut Cuts, a: Sig<'d>, b: Sig<'d>, subtract: bool) -> Sig<'d> {
    d.section("add: operands, special cases, order by magnitude, trailing zeros");
    let (ua, ub) = (unpack(f, a, "a"), unpack(f, b, "b"));
    sig!(b_sign = if subtract { !ub.sign } else { ub.sign });
    sig!(opposite = ua.sign ^ b_sign);
    sig!(nan = ua.nan | ub.nan | ua.inf & ub.inf & opposite);
    sig!(inf = ua.inf | ub.inf);
    sig!(inf_sign = ua.inf.mux(ua.sign, b_sign), zero_sign = ua.sign & b_sign);
    sig!(swap = a.bits(0, f.exp + f.man).lt(b.bits(0, f.exp + f.man)));
    sig!(a_minus_b = ua.exp - ub.exp, b_minus_a = ub.exp - ua.exp);
    sig!(tza = lzc_tree(reverse(d, a.bits(0, f.man))), tzb = lzc_tree(reverse(d, b.bits(0, f.man))));
    cuts.cut(&mut d.net());

    d.section("add: align the smaller operand; sticky = a set bit among those shifted out");
    // carry | hidden | fraction | guard | round | sticky
    let w = f.man + 5;
    sig!(big_sign = swap.mux(b_sign, ua.sign));
    sig!(big_exp = swap.mux(ub.exp, ua.exp), distance = swap.mux(b_minus_a, a_minus_b));
    sig!(big_sig = swap.mux(ub.sig, ua.sig), small_sig = swap.mux(ua.sig, ub.sig));
    sig!(small_zero = swap.mux(ua.zero, ub.zero), small_tz = swap.mux(tza, tzb));
    let sw = usize::BITS as usize - w.leading_zeros() as usize;
    let far = if f.exp > sw { distance.bits(sw, f.exp - sw).any() } else { d.lit(0, 1) };
    let small_padded = small_sig.cat(d.lit(0, 2));
    sig!(shifted = far.mux(d.lit(0, f.man + 3), small_padded.shr(distance.bits(0, sw))));
    sig!(align_sticky = !small_zero & (small_tz.zext(f.exp + 1) + 2u32).lt(distance.zext(f.exp + 1)));
    sig!(big_padded = big_sig.cat(d.lit(0, 3)).zext(w), aligned = shifted.cat(align_sticky).zext(w));
    // The normalisation limit: a marker at the bit a shift by big_exp brings to the top.
    sig!(marker = d.lit(1 << (w - 1), w).shr(big_exp));
    sig!(field_base = big_exp.zext(f.exp + 1) + 1u32);
    cuts.cut(&mut d.net());

    d.section("add: add or subtract the magnitudes (one adder: big + ~aligned + 1 to subtract)");
    let flip = d.cat(&vec![opposite; w]);
    // A low bit of `opposite` on both sides makes the carry-in.
    sig!(sum = (big_padded.cat(opposite) + (aligned ^ flip).cat(opposite)).bits(1, w));
    cuts.cut(&mut d.net());

    d.section("add: leading zeros, stopped at the marker (no shift below the smallest normal)");
    sig!(exact_zero = sum.is_zero());
    sig!(left = lzc_tree(sum | marker));
    cuts.cut(&mut d.net());

    d.section("add: normalisation shift; exponent field");
    sig!(normalized = sum.shl(left.resize(sw)));
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

/// The multiplier. Subnormal inputs are not normalised before the product: the leading and
/// trailing zeros of both significands (`p = man + 1` bits) are counted beside the DSP product
/// `P = sa · sb`, and they fix everything the product needs:
/// - `P`'s leading one sits at `q0 = 2·man − lza − lzb` or one above (`lz(P)` is `lza + lzb`
///   or one more), so the result's exponent field at `q0` is `E0 = ea + eb − bias − lza − lzb`;
/// - a normal result keeps `p` bits from `q0 − man` (or one above); a subnormal one keeps the
///   bits from the fixed position `u = 1 + bias + man − ea − eb`; which applies is `E0 ≥ 1`,
///   known before the product, so one right shift extracts a window of `p + 2` bits that holds
///   both candidates and the guard bit (one shifter on the product, no leading-zero count of it);
/// - the sticky bit is the OR of the bits below the window: `tz(P) = tza + tzb`, so it is a
///   compare of `tza + tzb` with the shift, not a wide OR.
/// The top window bit picks the candidate (the one-bit normalisation), rounding is an increment
/// of the packed exponent and fraction (its carry moves the exponent, subnormal to normal
/// included), and an encoding at or past infinity's becomes infinity.
/// Register places: 0 after the operand counts, 1 after the normalised exponents, 2 after the
/// product (the exponent work runs beside it), 3 after the window shift, 4 after the rounding
/// decision.
fn mul<'d>(d: &'d Design, f: FloatFormat, cuts: &mut Cuts, a: Sig<'d>, b: Sig<'d>) -> Sig<'d> {
    let p = f.man + 1;
    d.section("mul: operands, special cases, leading and trailing zeros of the significands");
    let (ua, ub) = (unpack(f, a, "a"), unpack(f, b, "b"));
    sig!(sign = ua.sign ^ ub.sign);
    sig!(nan = ua.nan | ub.nan | ua.zero & ub.inf | ua.inf & ub.zero);
    sig!(inf = ua.inf | ub.inf, zero = ua.zero | ub.zero);
    // Signed exponents: room for 2·(2^exp − 2) + man + 1 and for −(bias + 2p).
    let xw = f.exp + 2;
    let (frac_a, frac_b) = (a.bits(0, f.man), b.bits(0, f.man));
    // A subnormal's leading zeros are one more than its fraction's; a normal has none. The
    // trailing zeros of a nonzero significand are its fraction's, counted up to `man`.
    sig!(lfa = lzc_tree(frac_a), lfb = lzc_tree(frac_b));
    sig!(tza = lzc_tree(reverse(d, frac_a)), tzb = lzc_tree(reverse(d, frac_b)));
    cuts.cut(&mut d.net());

    d.section("mul: significand product; beside it, normalised exponents and leading zeros");
    sig!(product = ua.sig.mul(ub.sig));
    let (a_sub, b_sub) = (ua.exp.eq(1u32) & !ua.sig.bit(f.man), ub.exp.eq(1u32) & !ub.sig.bit(f.man));
    // Normalised exponents ea − lza: −lf for a subnormal (ea = 1, lza = lf + 1); the bias
    // comes off the first.
    let zero_x = d.lit(0, xw);
    sig!(xa = a_sub.mux(zero_x - lfa.zext(xw) - f.bias(), ua.exp.zext(xw) - f.bias()));
    sig!(xb = b_sub.mux(zero_x - lfb.zext(xw), ub.exp.zext(xw)));
    sig!(lza = a_sub.mux(lfa.zext(xw) + 1u32, 0), lzb = b_sub.mux(lfb.zext(xw) + 1u32, 0));
    sig!(exp_sum = ua.exp.zext(xw) + ub.exp.zext(xw));
    let bw = usize::BITS as usize - (2 * p + 1).leading_zeros() as usize;
    sig!(tz_sum = tza.zext(xw) + tzb.zext(xw) + 1u32);
    cuts.cut(&mut d.net());

    d.section("mul: the exponent, the window position and the sticky threshold");
    // Exponent field of the result if P's leading one is at q0 = 2·man − lza − lzb.
    sig!(e0 = xa + xb);
    sig!(normal = zero_x.slt(e0));
    // Window base: q0 − man for a normal result, u = 1 + bias + man − ea − eb for a subnormal
    // one (then at least 1); from 2p + 1 on, every product bit is below the window.
    sig!(base = normal.mux(d.lit(f.man as u128, xw) - lza - lzb, d.lit(1 + f.bias() as u128 + f.man as u128, xw) - exp_sum));
    sig!(shift = base.bits(0, bw), far = base.bits(bw, xw - bw).any());
    // Exponent field of the lower candidate (normal) and of the upper one; 0 when subnormal.
    sig!(field_low = normal.mux(e0, 0), field_high = e0 + 1u32);
    // tz(P) + 1 < base: a set bit of P below the window (tz(P) = tza + tzb).
    sig!(sticky_below = tz_sum.slt(base));
    cuts.cut(&mut d.net());

    d.section("mul: the window of p + 2 product bits from bit shift − 1; sticky = a bit set below it");
    // window[0] = P[shift − 1] (P[−1] = 0), window[p + 1] = P[shift + p].
    sig!(window = far.mux(d.lit(0, p + 2), product.cat(d.lit(0, 1)).shr(shift).bits(0, p + 2)));
    cuts.cut(&mut d.net());

    d.section("mul: one-bit normalisation, guard and sticky, round to nearest even");
    sig!(high = window.bit(p + 1));
    sig!(kept = high.mux(window.bits(2, p), window.bits(1, p)));
    sig!(guard = high.mux(window.bit(1), window.bit(0)));
    sig!(sticky = sticky_below | high & window.bit(0));
    sig!(increment = guard & (sticky | kept.bit(0)));
    // Packed exponent and fraction before rounding; a subnormal's hidden bit (0, or 1 when it
    // rounds up into the normal range) is the exponent field's low bit.
    let field = high.mux(field_high, normal.mux(field_low, kept.bit(f.man).zext(xw)));
    sig!(packed = field.bits(0, xw - 1).cat(kept.bits(0, f.man)));
    sig!(overflow_before = field.bits(0, xw - 1).ge(f.exp_max() as u32));
    cuts.cut(&mut d.net());

    d.section("mul: rounding increment, overflow to infinity, special cases");
    sig!(rounded = packed + increment.zext(xw - 1 + f.man));
    sig!(overflow = overflow_before | rounded.bits(f.man, xw - 1).ge(f.exp_max() as u32));
    let body = |value: u128| d.lit(value, f.exp + f.man);
    let finite = (overflow | inf).mux(body(f.exp_max() << f.man), zero.mux(body(0), rounded.bits(0, f.exp + f.man)));
    sig!(result = nan.mux(f.quiet_nan(), sign.cat(finite)));
    result
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

/// `x` with its bits in reverse order.
pub(super) fn reverse<'d>(d: &'d Design, x: Sig<'d>) -> Sig<'d> {
    let bits: Vec<Sig<'d>> = (0..x.width).map(|i| x.bit(i)).collect();
    d.cat(&bits)
}

/// Shifts a subnormal significand up to a leading one; returns it and its exponent
/// (`exp_width` bits, may go below 1).
fn normalize_input<'d>(f: FloatFormat, u: &Unpacked<'d>) -> (Sig<'d>, Sig<'d>) {
    let xw = exp_width(f);
    let lz = lzc_tree(u.sig);
    (u.sig.shl(lz), u.exp.zext(xw) - lz.zext(xw))
}

fn div<'d>(d: &'d Design, f: FloatFormat, cuts: &mut Cuts, a: Sig<'d>, b: Sig<'d>) -> Sig<'d> {
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

fn sqrt<'d>(d: &'d Design, f: FloatFormat, cuts: &mut Cuts, a: Sig<'d>) -> Sig<'d> {
    d.section("sqrt: operand, special cases, halved exponent");
    let ua = unpack(f, a, "a");
    sig!(nan = ua.nan | ua.sign & !ua.zero);
    let (significand, exp) = normalize_input(f, &ua);
    let xw = exp_width(f);
    sig!(unbiased = exp - f.bias());
    sig!(odd = unbiased.bit(0));
    // Odd exponents move one factor of two into the significand: sig' in [1, 4).
    sig!(radicand_top = odd.mux(significand.cat(d.lit(0, 1)), significand.zext(f.man + 2)));
    let even_exp = unbiased - odd.zext(xw);
    sig!(x = even_exp.bit(xw - 1).cat(even_exp.bits(1, xw - 1)) + f.bias());
    cuts.cut(&mut d.net());

    d.section("sqrt: restoring square root of radicand_top · 2^(man+4), two radicand bits per step");
    let steps = f.man + 3;
    let rw = f.man + 7;
    let radicand = radicand_top.cat(d.lit(0, f.man + 4));
    let mut remainder = d.lit(0, rw);
    let mut root = d.lit(0, steps);
    for i in (0..steps).rev() {
        let widened = remainder.bits(0, rw - 2).cat(radicand.bits(2 * i, 2));
        let root_low = root.bits(0, steps - 1);
        let trial = root_low.cat(d.lit(0b01, 2)).zext(rw);
        sig!(fits = widened.ge(trial));
        remainder = fits.mux(widened - trial, widened).named("remainder");
        root = root_low.cat(fits).named("root");
        cuts.cut(&mut d.net());
    }
    sig!(sticky = remainder.any());
    let positive = d.lit(0, 1);
    let rounded = round_pack_near(d, f, cuts, positive, x, root, sticky, false);
    Special { nan, inf: ua.inf, inf_sign: positive, zero: ua.zero, zero_sign: ua.sign }.select(d, f, rounded)
}
