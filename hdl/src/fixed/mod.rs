//! Fixed point: two's-complement (signed) or unsigned binary numbers with a fixed binary point,
//! add/sub/mul with a chosen result format, rounding and overflow mode, as netlist generators;
//! and the software golden model ([`reference`]).
//!
//! A format is named like MATLAB's: `sfix32_En16` is signed, 32 bits, 16 of them fractional
//! (raw value `r` means `r · 2⁻¹⁶`); `ufix8_En0` is an unsigned byte.

pub mod reference;

use std::fmt;

use crate::netlist::{Cuts, Netlist, Wire};

/// Widest fixed-point value.
pub const MAX_WIDTH: usize = 64;
/// Widest exact intermediate (with its sign bit) an operation may need.
const MAX_EXACT: usize = 127;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FixedFormat {
    pub signed: bool,
    /// Total bits, 1..=64.
    pub width: usize,
    /// Fractional bits, 0..=width.
    pub frac: usize,
}

impl FixedFormat {
    pub fn new(signed: bool, width: usize, frac: usize) -> Result<FixedFormat, String> {
        if !(1..=MAX_WIDTH).contains(&width) {
            return Err(format!("fixed-point width {width}: allowed range 1..={MAX_WIDTH}"));
        }
        if frac > width {
            return Err(format!("fixed-point fraction bits {frac}: allowed range 0..={width} (the width)"));
        }
        if signed && width < 2 {
            return Err("signed fixed-point width 1: allowed range 2..=64 (a sign bit and a value bit)".into());
        }
        Ok(FixedFormat { signed, width, frac })
    }
    pub fn signed(width: usize, frac: usize) -> FixedFormat {
        FixedFormat::new(true, width, frac).expect("valid fixed-point format")
    }
    pub fn unsigned(width: usize, frac: usize) -> FixedFormat {
        FixedFormat::new(false, width, frac).expect("valid fixed-point format")
    }
    /// Integer bits including the sign bit.
    pub fn int_bits(&self) -> usize {
        self.width - self.frac
    }
    /// Smallest and largest raw values.
    pub fn min_raw(&self) -> i128 {
        if self.signed {
            -(1i128 << (self.width - 1))
        } else {
            0
        }
    }
    pub fn max_raw(&self) -> i128 {
        if self.signed {
            (1i128 << (self.width - 1)) - 1
        } else {
            (1i128 << self.width) - 1
        }
    }
    /// The raw value a bit pattern stands for.
    pub fn raw(&self, bits: u128) -> i128 {
        let bits = bits & ((1u128 << self.width) - 1);
        if self.signed {
            let shift = 128 - self.width;
            ((bits << shift) as i128) >> shift
        } else {
            bits as i128
        }
    }
    /// The bit pattern of a raw value (low `width` bits).
    pub fn bits(&self, raw: i128) -> u128 {
        (raw as u128) & ((1u128 << self.width) - 1)
    }
}

impl fmt::Display for FixedFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}fix{}_En{}", if self.signed { "s" } else { "u" }, self.width, self.frac)
    }
}

/// How bits below the result's least significant bit are dropped.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Rounding {
    /// Drop them: toward −∞ for fixed-point results (two's-complement truncation); toward zero
    /// when converting from floating point (sign-magnitude truncation, C's cast).
    Truncate,
    /// To nearest, ties to even.
    NearestEven,
}

/// What happens to a result outside the result format's range.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Overflow {
    /// Keep the low bits (modular arithmetic).
    Wrap,
    /// Clamp to the nearest representable value.
    Saturate,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FixedOp {
    Add,
    Sub,
    Mul,
}

impl FixedOp {
    pub const ALL: [FixedOp; 3] = [FixedOp::Add, FixedOp::Sub, FixedOp::Mul];
    pub fn name(self) -> &'static str {
        match self {
            FixedOp::Add => "add",
            FixedOp::Sub => "sub",
            FixedOp::Mul => "mul",
        }
    }
}

/// One fixed-point operation: operand formats, result format and modes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FixedOperation {
    pub op: FixedOp,
    pub a: FixedFormat,
    pub b: FixedFormat,
    pub out: FixedFormat,
    pub rounding: Rounding,
    pub overflow: Overflow,
}

/// Register places: 0 after the exact result, 1 after rounding.
pub const MAX_STAGES: usize = 2;

impl FixedOperation {
    /// The exact result's fraction bits and width (with a sign bit, so always signed).
    pub fn exact(&self) -> Result<(usize, usize), String> {
        let (a, b) = (self.a, self.b);
        let sign = |f: FixedFormat| if f.signed { 0 } else { 1 };
        let (frac, width) = match self.op {
            FixedOp::Add | FixedOp::Sub => {
                let frac = a.frac.max(b.frac);
                let int = (a.int_bits() + sign(a)).max(b.int_bits() + sign(b));
                (frac, int + frac + 1)
            }
            FixedOp::Mul => (a.frac + b.frac, a.width + b.width + usize::from(!a.signed && !b.signed)),
        };
        // Rounding to more fraction bits than the exact result has shifts it up first.
        let needed = width + self.out.frac.saturating_sub(frac);
        if needed > MAX_EXACT {
            return Err(format!(
                "fixed-point {} of {a} and {b} into {}: the exact result needs {needed} bits, allowed range 1..={MAX_EXACT}",
                self.op.name(),
                self.out
            ));
        }
        Ok((frac, width))
    }

    /// Builds the operation on `a` and `b` at their stage with `stages` registers (0..=2).
    pub fn build(&self, net: &mut Netlist, stages: usize, a: Wire, b: Wire) -> Result<Wire, String> {
        if stages > MAX_STAGES {
            return Err(format!("fixed-point {} stages {stages}: allowed range 0..={MAX_STAGES}", self.op.name()));
        }
        let (frac, width) = self.exact()?;
        for (name, f, w) in [("a", self.a, a), ("b", self.b, b)] {
            if net.width(w) != f.width {
                return Err(format!("fixed-point operand {name} is {} bits, its format {f} has {}", net.width(w), f.width));
            }
        }
        net.start_after(&[a, b]);
        let mut cuts = Cuts::new(stages, &[1, 0]);
        let extend = |net: &mut Netlist, x: Wire, f: FixedFormat, shift: usize| {
            let x = if f.signed { net.sext(x, width - shift) } else { net.zext(x, width - shift) };
            let zero = net.constant(0, shift.max(1));
            if shift == 0 {
                x
            } else {
                net.concat(x, zero)
            }
        };
        let exact = match self.op {
            FixedOp::Add | FixedOp::Sub => {
                let xa = extend(net, a, self.a, frac - self.a.frac);
                let xb = extend(net, b, self.b, frac - self.b.frac);
                if self.op == FixedOp::Add {
                    net.add(xa, xb)
                } else {
                    net.sub(xa, xb)
                }
            }
            FixedOp::Mul => {
                // Unsigned product of the bit patterns, corrected for negative signed operands:
                // a·b = A·B − [a<0]·B·2^wa − [b<0]·A·2^wb (mod 2^(wa+wb)).
                let (wa, wb) = (self.a.width, self.b.width);
                let mut p = net.mul(a, b);
                for (f, x, y, wx) in [(self.a, a, b, wa), (self.b, b, a, wb)] {
                    if f.signed {
                        let negative = net.bit(x, wx - 1);
                        let y_wide = net.zext(y, wa + wb - wx);
                        let low = net.constant(0, wx);
                        let shifted = net.concat(y_wide, low);
                        let zero = net.constant(0, wa + wb);
                        let correction = net.mux(negative, shifted, zero);
                        p = net.sub(p, correction);
                    }
                }
                if width > wa + wb {
                    net.zext(p, width)
                } else {
                    p
                }
            }
        };
        cuts.cut(net);
        let rounded = round(net, exact, frac, self.out.frac, self.rounding);
        cuts.cut(net);
        let result = fit(net, rounded, self.out, self.overflow);
        cuts.finish();
        Ok(result)
    }
}

/// Moves a signed value with `from` fraction bits to `to` fraction bits: exact when `to ≥ from`,
/// otherwise rounded. The result is signed and one bit wider than needed, so rounding up never
/// overflows it.
pub(crate) fn round(net: &mut Netlist, x: Wire, from: usize, to: usize, rounding: Rounding) -> Wire {
    let w = net.width(x);
    if to >= from {
        let up = to - from;
        let x = net.sext(x, w + 1);
        if up == 0 {
            return x;
        }
        let x = net.sext(x, w + 1 + up);
        return net.shl_const(x, up);
    }
    let d = from - to;
    if d >= w {
        // Every value bit is below the new LSB: the result is 0 or −1 (truncate), 0 or ±1 (nearest).
        let x = net.sext(x, d + 2);
        return round(net, x, from, to, rounding);
    }
    let q = net.slice(x, d, w - d);
    let q = net.sext(q, w - d + 1);
    match rounding {
        Rounding::Truncate => q,
        Rounding::NearestEven => {
            let half = net.bit(x, d - 1);
            let odd = net.bit(q, 0);
            let rest = if d >= 2 {
                let below = net.slice(x, 0, d - 1);
                net.nonzero(below)
            } else {
                net.constant(0, 1)
            };
            let odd_or_rest = net.or(odd, rest);
            let increment = net.and(half, odd_or_rest);
            let increment = net.zext(increment, w - d + 1);
            net.add(q, increment)
        }
    }
}

/// A signed value into format `out`: wrapped to its low bits or clamped to its range.
pub(crate) fn fit(net: &mut Netlist, x: Wire, out: FixedFormat, overflow: Overflow) -> Wire {
    let w = net.width(x);
    let x = if w < out.width + 1 { net.sext(x, out.width + 1) } else { x };
    let w = net.width(x);
    let low = net.slice(x, 0, out.width);
    if overflow == Overflow::Wrap {
        return low;
    }
    let min = net.constant(out.min_raw() as u128, w);
    let max = net.constant(out.max_raw() as u128, w);
    let below = net.slt(x, min);
    let above = net.slt(max, x);
    let min_bits = net.constant(out.bits(out.min_raw()), out.width);
    let max_bits = net.constant(out.bits(out.max_raw()), out.width);
    let r = net.mux(below, min_bits, low);
    net.mux(above, max_bits, r)
}
