//! Floating-point operators as netlist generators, for any [`FloatFormat`].
//!
//! Each operator takes its stage count: 0 is purely combinational, and every value up to
//! [`FloatOperator::max_stages`] places one more pipeline register. Results are rounded to
//! nearest, ties to even; subnormals are handled in and out; signed zeros and infinities follow
//! IEEE-754; every NaN result is the canonical quiet NaN.

use super::FloatFormat;
use crate::netlist::{Cuts, Netlist, Wire};

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
            // places: 0 unpack/compare, 1 align, 2 add, 3 lzc, 4 normalize
            FloatOperator::Add | FloatOperator::Sub => vec![2, 4, 1, 3, 0],
            // places: 0 unpack, 1 product, 2 lzc, 3 normalize
            FloatOperator::Mul => vec![1, 3, 0, 2],
            // places: 0 unpack/normalize, 1..=n one per quotient bit, n+1 lzc, n+2 normalize
            FloatOperator::Div => recurrence_priority(format.man + 4),
            FloatOperator::Sqrt => recurrence_priority(format.man + 3),
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
        let result = match self {
            FloatOperator::Add => add(net, format, &mut cuts, operands[0], operands[1], false),
            FloatOperator::Sub => add(net, format, &mut cuts, operands[0], operands[1], true),
            FloatOperator::Mul => mul(net, format, &mut cuts, operands[0], operands[1]),
            FloatOperator::Div => div(net, format, &mut cuts, operands[0], operands[1]),
            FloatOperator::Sqrt => sqrt(net, format, &mut cuts, operands[0]),
        };
        cuts.finish();
        Ok(result)
    }
}

/// Register places for a digit recurrence of `steps` steps: the two rounding places first,
/// then the recurrence split evenly (bisection order), then the unpack place.
fn recurrence_priority(steps: usize) -> Vec<usize> {
    let mut order = vec![steps + 2, steps + 1];
    let mut chosen = vec![false; steps + 1];
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
pub(super) struct Unpacked {
    pub sign: Wire,
    /// Significand with the hidden bit (`man + 1` bits).
    pub sig: Wire,
    /// Exponent as used in arithmetic: 1 for subnormals (`exp` bits).
    pub exp: Wire,
    pub zero: Wire,
    pub inf: Wire,
    pub nan: Wire,
}

pub(super) fn unpack(net: &mut Netlist, f: FloatFormat, x: Wire) -> Unpacked {
    let sign = net.bit(x, f.exp + f.man);
    let exp_field = net.slice(x, f.man, f.exp);
    let frac = net.slice(x, 0, f.man);
    let exp_zero = net.is_zero(exp_field);
    let exp_max = net.all_ones(exp_field);
    let frac_zero = net.is_zero(frac);
    let frac_nonzero = net.not(frac_zero);
    let zero = net.and(exp_zero, frac_zero);
    let inf = net.and(exp_max, frac_zero);
    let nan = net.and(exp_max, frac_nonzero);
    let normal = net.not(exp_zero);
    let sig = net.concat(normal, frac);
    let one = net.constant(1, f.exp);
    let exp = net.mux(exp_zero, one, exp_field);
    Unpacked { sign, sig, exp, zero, inf, nan }
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
pub(super) fn round_pack(net: &mut Netlist, f: FloatFormat, cuts: &mut Cuts, sign: Wire, x: Wire, s: Wire, sticky: Wire) -> Wire {
    let xw = exp_width(f);
    let wn = net.width(s);
    assert!(wn >= f.man + 2, "round_pack needs man + 2 significand bits");
    let lz = net.lzc(s);
    let lz = net.zext(lz, xw);
    let zero = net.constant(0, xw);
    let x_minus_lz = net.sub(x, lz);
    let normal = net.slt(zero, x_minus_lz);
    let x_positive = net.slt(zero, x);
    let x_minus_one = net.add_const(x, -1);
    let sub_shift = net.mux(x_positive, x_minus_one, zero);
    let left = net.mux(normal, lz, sub_shift);
    let one = net.constant(1, xw);
    let one_minus_x = net.sub(one, x);
    let right = net.mux(x_positive, zero, one_minus_x);
    let exp_field = net.mux(normal, x_minus_lz, zero);
    cuts.cut(net);

    let shifted = net.shl(s, left);
    let aligned = net.shr(shifted, right);
    let back = net.shl(aligned, right);
    let lost = net.eq(back, shifted);
    let lost = net.not(lost);
    let sticky = net.or(sticky, lost);
    cuts.cut(net);

    // Keep man+1 bits, then guard, then the rest folded into sticky.
    let kept = net.slice(aligned, wn - 1 - f.man, f.man);
    let guard = net.bit(aligned, wn - 2 - f.man);
    let rest = if wn - 2 - f.man > 0 {
        let below = net.slice(aligned, 0, wn - 2 - f.man);
        let nz = net.nonzero(below);
        net.or(nz, sticky)
    } else {
        sticky
    };
    let lsb = net.bit(kept, 0);
    let odd_or_rest = net.or(rest, lsb);
    let increment = net.and(guard, odd_or_rest);
    let exp_low = net.slice(exp_field, 0, f.exp + 1);
    let magnitude = net.concat(exp_low, kept);
    let increment = net.zext(increment, f.exp + 1 + f.man);
    let rounded = net.add(magnitude, increment);
    let emax = net.constant(f.exp_max(), xw);
    let fits_before = net.slt(exp_field, emax);
    let rounded_exp = net.slice(rounded, f.man, f.exp + 1);
    let emax_short = net.constant(f.exp_max(), f.exp + 1);
    let fits_after = net.ult(rounded_exp, emax_short);
    let fits = net.and(fits_before, fits_after);
    let finite = net.slice(rounded, 0, f.exp + f.man);
    let inf = net.constant(f.exp_max() << f.man, f.exp + f.man);
    let body = net.mux(fits, finite, inf);
    net.concat(sign, body)
}

/// Final selection between the special cases and the rounded result.
fn select_special(net: &mut Netlist, f: FloatFormat, nan: Wire, inf: Wire, inf_sign: Wire, zero: Wire, zero_sign: Wire, normal: Wire) -> Wire {
    let nan_value = net.constant(f.quiet_nan(), f.width());
    let inf_body = net.constant(f.exp_max() << f.man, f.exp + f.man);
    let inf_value = net.concat(inf_sign, inf_body);
    let zero_body = net.constant(0, f.exp + f.man);
    let zero_value = net.concat(zero_sign, zero_body);
    let r = net.mux(zero, zero_value, normal);
    let r = net.mux(inf, inf_value, r);
    net.mux(nan, nan_value, r)
}

fn add(net: &mut Netlist, f: FloatFormat, cuts: &mut Cuts, a: Wire, b: Wire, subtract: bool) -> Wire {
    let ua = unpack(net, f, a);
    let ub = unpack(net, f, b);
    let b_sign = if subtract { net.not(ub.sign) } else { ub.sign };
    let opposite = net.xor(ua.sign, b_sign);
    let both_inf = net.and(ua.inf, ub.inf);
    let inf_minus_inf = net.and(both_inf, opposite);
    let nan = net.or_all(&[ua.nan, ub.nan, inf_minus_inf]);
    let inf = net.or(ua.inf, ub.inf);
    let inf_sign = net.mux(ua.inf, ua.sign, b_sign);
    let zero_sign = net.and(ua.sign, b_sign);
    // Order by magnitude so the difference is never negative.
    let mag_a = net.slice(a, 0, f.exp + f.man);
    let mag_b = net.slice(b, 0, f.exp + f.man);
    let swap = net.ult(mag_a, mag_b);
    let big_sign = net.mux(swap, b_sign, ua.sign);
    let big_exp = net.mux(swap, ub.exp, ua.exp);
    let small_exp = net.mux(swap, ua.exp, ub.exp);
    let big_sig = net.mux(swap, ub.sig, ua.sig);
    let small_sig = net.mux(swap, ua.sig, ub.sig);
    let distance = net.sub(big_exp, small_exp);
    cuts.cut(net);

    // carry | hidden | fraction | guard | round | sticky
    let w = f.man + 5;
    let pad = net.constant(0, 3);
    let big = net.concat(big_sig, pad);
    let big = net.zext(big, w);
    let small = net.concat(small_sig, pad);
    let small = net.zext(small, w);
    let shifted = net.shr(small, distance);
    let back = net.shl(shifted, distance);
    let same = net.eq(back, small);
    let lost = net.not(same);
    let lost = net.zext(lost, w);
    let small = net.or(shifted, lost);
    cuts.cut(net);

    let sum = net.add(big, small);
    let difference = net.sub(big, small);
    let s = net.mux(opposite, difference, sum);
    let exact_zero = net.is_zero(s);
    cuts.cut(net);

    let xw = exp_width(f);
    let x = net.zext(big_exp, xw);
    let x = net.add_const(x, 1);
    let no_sticky = net.constant(0, 1);
    let rounded = round_pack(net, f, cuts, big_sign, x, s, no_sticky);
    select_special(net, f, nan, inf, inf_sign, exact_zero, zero_sign, rounded)
}

fn mul(net: &mut Netlist, f: FloatFormat, cuts: &mut Cuts, a: Wire, b: Wire) -> Wire {
    let ua = unpack(net, f, a);
    let ub = unpack(net, f, b);
    let sign = net.xor(ua.sign, ub.sign);
    let zero_times_inf = net.and(ua.zero, ub.inf);
    let inf_times_zero = net.and(ua.inf, ub.zero);
    let nan = net.or_all(&[ua.nan, ub.nan, zero_times_inf, inf_times_zero]);
    let inf = net.or(ua.inf, ub.inf);
    let zero = net.or(ua.zero, ub.zero);
    let xw = exp_width(f);
    let ea = net.zext(ua.exp, xw);
    let eb = net.zext(ub.exp, xw);
    let sum = net.add(ea, eb);
    let x = net.add_const(sum, 1 - f.bias() as i128);
    cuts.cut(net);

    let product = net.mul(ua.sig, ub.sig);
    cuts.cut(net);

    let no_sticky = net.constant(0, 1);
    let rounded = round_pack(net, f, cuts, sign, x, product, no_sticky);
    select_special(net, f, nan, inf, sign, zero, sign, rounded)
}

/// Shifts a subnormal significand up to a leading one; returns it and its exponent
/// (`exp_width` bits, may go below 1).
fn normalize_input(net: &mut Netlist, f: FloatFormat, u: &Unpacked) -> (Wire, Wire) {
    let xw = exp_width(f);
    let lz = net.lzc(u.sig);
    let sig = net.shl(u.sig, lz);
    let lz = net.zext(lz, xw);
    let exp = net.zext(u.exp, xw);
    let exp = net.sub(exp, lz);
    (sig, exp)
}

fn div(net: &mut Netlist, f: FloatFormat, cuts: &mut Cuts, a: Wire, b: Wire) -> Wire {
    let ua = unpack(net, f, a);
    let ub = unpack(net, f, b);
    let sign = net.xor(ua.sign, ub.sign);
    let zero_over_zero = net.and(ua.zero, ub.zero);
    let inf_over_inf = net.and(ua.inf, ub.inf);
    let nan = net.or_all(&[ua.nan, ub.nan, zero_over_zero, inf_over_inf]);
    let inf = net.or(ua.inf, ub.zero);
    let zero = net.or(ua.zero, ub.inf);
    let (sa, xa) = normalize_input(net, f, &ua);
    let (sb, xb) = normalize_input(net, f, &ub);
    let x = net.sub(xa, xb);
    let x = net.add_const(x, f.bias() as i128);
    cuts.cut(net);

    // Restoring division, one quotient bit per step: q = floor(sa · 2^(man+3) / sb).
    let rw = f.man + 3;
    let mut remainder = net.zext(sa, rw);
    let divisor = net.zext(sb, rw);
    let mut quotient = None;
    for _ in 0..f.man + 4 {
        let below = net.ult(remainder, divisor);
        let fits = net.not(below);
        let reduced = net.sub(remainder, divisor);
        let kept = net.mux(fits, reduced, remainder);
        remainder = net.shl_const(kept, 1);
        quotient = Some(match quotient {
            None => fits,
            Some(q) => net.concat(q, fits),
        });
        cuts.cut(net);
    }
    let sticky = net.nonzero(remainder);
    let rounded = round_pack(net, f, cuts, sign, x, quotient.unwrap(), sticky);
    select_special(net, f, nan, inf, sign, zero, sign, rounded)
}

fn sqrt(net: &mut Netlist, f: FloatFormat, cuts: &mut Cuts, a: Wire) -> Wire {
    let ua = unpack(net, f, a);
    let not_zero = net.not(ua.zero);
    let negative = net.and(ua.sign, not_zero);
    let nan = net.or(ua.nan, negative);
    let inf = ua.inf;
    let (sig, exp) = normalize_input(net, f, &ua);
    let xw = exp_width(f);
    let bias = net.constant(f.bias() as u128, xw);
    let unbiased = net.sub(exp, bias);
    let odd = net.bit(unbiased, 0);
    // Odd exponents move one factor of two into the significand: sig' in [1, 4).
    let even_sig = net.zext(sig, f.man + 2);
    let zero_bit = net.constant(0, 1);
    let odd_sig = net.concat(sig, zero_bit);
    let radicand_top = net.mux(odd, odd_sig, even_sig);
    let odd_wide = net.zext(odd, xw);
    let even_exp = net.sub(unbiased, odd_wide);
    let sign_bit = net.bit(even_exp, xw - 1);
    let upper = net.slice(even_exp, 1, xw - 1);
    let half = net.concat(sign_bit, upper);
    let x = net.add(half, bias);
    cuts.cut(net);

    // Restoring square root of radicand_top · 2^(man+4), two radicand bits per step.
    let steps = f.man + 3;
    let rw = f.man + 7;
    let low_zeros = net.constant(0, f.man + 4);
    let radicand = net.concat(radicand_top, low_zeros);
    let mut remainder = net.constant(0, rw);
    let mut root = net.constant(0, steps);
    let one = net.constant(1, 2);
    for i in (0..steps).rev() {
        let pair = net.slice(radicand, 2 * i, 2);
        let upper = net.slice(remainder, 0, rw - 2);
        let widened = net.concat(upper, pair);
        let root_bits = net.slice(root, 0, steps - 1);
        let trial = net.concat(root_bits, one);
        let trial = net.zext(trial, rw);
        let below = net.ult(widened, trial);
        let fits = net.not(below);
        let reduced = net.sub(widened, trial);
        remainder = net.mux(fits, reduced, widened);
        let root_low = net.slice(root, 0, steps - 1);
        root = net.concat(root_low, fits);
        cuts.cut(net);
    }
    let sticky = net.nonzero(remainder);
    let positive = net.constant(0, 1);
    let rounded = round_pack(net, f, cuts, positive, x, root, sticky);
    select_special(net, f, nan, inf, positive, ua.zero, ua.sign, rounded)
}
