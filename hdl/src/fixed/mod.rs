//! Fixed point: two's-complement (signed) or unsigned binary numbers with a fixed binary point,
//! add/sub/mul with a chosen result format, rounding and overflow mode, as netlist generators;
//! and the software golden model ([`mod@reference`]).
//!
//! A format is named like MATLAB's: `sfix32_En16` is signed, 32 bits, 16 of them fractional
//! (raw value `r` means `r · 2⁻¹⁶`); `ufix8_En0` is an unsigned byte.

use crate::Error;
pub mod reference;

use std::fmt;

use crate::netlist::{Cuts, Design, Netlist, Sig, Wire};
use crate::sig;

/// Widest fixed-point value.
pub const MAX_WIDTH: usize = 64;
/// Widest exact intermediate (with its sign bit) an operation may need.
const MAX_EXACT: usize = 127;

/// A fixed-point number format: signedness, total width and fraction bits (displayed as
/// `sfix32_En16` / `ufix8_En0`). A raw value `r` stands for `r · 2^-frac`.
///
/// ```
/// use weft_hdl::fixed::FixedFormat;
/// let q = FixedFormat::signed(16, 8);
/// assert_eq!(q.to_string(), "sfix16_En8");
/// assert_eq!((q.min_raw(), q.max_raw()), (-32768, 32767));
/// assert_eq!(q.raw(0xFF80), -128); // −0.5 in sfix16_En8
/// assert_eq!(q.bits(-128), 0xFF80);
/// assert!(FixedFormat::new(false, 65, 0).is_err());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FixedFormat {
    /// Two's complement (`true`) or unsigned (`false`).
    pub signed: bool,
    /// Total bits, 1..=64.
    pub width: usize,
    /// Fractional bits, 0..=width.
    pub frac: usize,
}

impl FixedFormat {
    /// A checked format; [`Error::Parameter`] when `width` is outside 1..=64 ([`MAX_WIDTH`]),
    /// `frac > width`, or a signed format has fewer than 2 bits.
    pub fn new(signed: bool, width: usize, frac: usize) -> Result<FixedFormat, Error> {
        if !(1..=MAX_WIDTH).contains(&width) {
            return Err(Error::Parameter(format!("fixed-point width {width}: allowed range 1..={MAX_WIDTH}")));
        }
        if frac > width {
            return Err(Error::Parameter(format!("fixed-point fraction bits {frac}: allowed range 0..={width} (the width)")));
        }
        if signed && width < 2 {
            return Err(Error::Parameter("signed fixed-point width 1: allowed range 2..=64 (a sign bit and a value bit)".into()));
        }
        Ok(FixedFormat { signed, width, frac })
    }
    /// A signed (two's-complement) format; panics where [`FixedFormat::new`] returns an error.
    pub fn signed(width: usize, frac: usize) -> FixedFormat {
        FixedFormat::new(true, width, frac).expect("valid fixed-point format")
    }
    /// An unsigned format; panics where [`FixedFormat::new`] returns an error.
    pub fn unsigned(width: usize, frac: usize) -> FixedFormat {
        FixedFormat::new(false, width, frac).expect("valid fixed-point format")
    }
    /// Integer bits including the sign bit.
    pub fn int_bits(&self) -> usize {
        self.width - self.frac
    }
    /// Smallest raw value: `−2^(width−1)` signed, 0 unsigned.
    pub fn min_raw(&self) -> i128 {
        if self.signed {
            -(1i128 << (self.width - 1))
        } else {
            0
        }
    }
    /// Largest raw value: `2^(width−1) − 1` signed, `2^width − 1` unsigned.
    pub fn max_raw(&self) -> i128 {
        if self.signed {
            (1i128 << (self.width - 1)) - 1
        } else {
            (1i128 << self.width) - 1
        }
    }
    /// The raw value a bit pattern stands for (its low `width` bits, sign-extended if signed).
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

/// A fixed-point arithmetic operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FixedOp {
    /// `a + b`.
    Add,
    /// `a − b`.
    Sub,
    /// `a · b`.
    Mul,
}

impl FixedOp {
    /// Every operation, in the order add, sub, mul.
    pub const ALL: [FixedOp; 3] = [FixedOp::Add, FixedOp::Sub, FixedOp::Mul];
    /// Lower-case name used in messages: `add`, `sub`, `mul`.
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
    /// The operation.
    pub op: FixedOp,
    /// Format of operand `a`.
    pub a: FixedFormat,
    /// Format of operand `b`.
    pub b: FixedFormat,
    /// Format of the result.
    pub out: FixedFormat,
    /// How fraction bits below the result's LSB are dropped.
    pub rounding: Rounding,
    /// What happens to results outside the result format's range.
    pub overflow: Overflow,
}

/// Register places: 0 after the exact result, 1 after rounding.
pub const MAX_STAGES: usize = 2;

impl FixedOperation {
    /// The exact result's fraction bits and width (with a sign bit, so always signed);
    /// [`Error::Parameter`] when it would need more than 127 bits.
    pub fn exact(&self) -> Result<(usize, usize), Error> {
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
            return Err(Error::Parameter(format!("fixed-point {} of {a} and {b} into {}: the exact result needs {needed} bits, allowed range 1..={MAX_EXACT}", self.op.name(), self.out)));
        }
        Ok((frac, width))
    }

    /// Builds the operation on `a` and `b` at their stage with `stages` registers (0..=2),
    /// returning the result wire in format `out`. Errors: [`Error::Parameter`] for `stages > 2`
    /// or a too-wide exact result, [`Error::Operand`] when a wire's width differs from its format.
    pub fn build(&self, net: &mut Netlist, stages: usize, a: Wire, b: Wire) -> Result<Wire, Error> {
        // The netlist moves into a design for the operation and back, its wires unchanged.
        let d = Design::new();
        *d.net() = std::mem::take(net);
        let result = self.build_sig(&d, stages, d.sig(a), d.sig(b)).map(|r| r.wire);
        *net = d.finish();
        result
    }

    /// [`FixedOperation::build`] in a [`Design`].
    pub fn build_sig<'d>(&self, d: &'d Design, stages: usize, a: Sig<'d>, b: Sig<'d>) -> Result<Sig<'d>, Error> {
        if stages > MAX_STAGES {
            return Err(Error::Parameter(format!("fixed-point {} stages {stages}: allowed range 0..={MAX_STAGES}", self.op.name())));
        }
        let (frac, width) = self.exact()?;
        for (name, f, x) in [("a", self.a, a), ("b", self.b, b)] {
            if x.width != f.width {
                return Err(Error::Operand(format!("fixed-point operand {name} is {} bits, its format {f} has {}", x.width, f.width)));
            }
        }
        d.net().start_after(&[a.wire, b.wire]);
        let mut cuts = Cuts::new(stages, &[1, 0]);
        // An operand on the exact result's binary point, extended to its width.
        let align = |x: Sig<'d>, f: FixedFormat| {
            let shift = frac - f.frac;
            let x = if f.signed { x.sext(width - shift) } else { x.zext(width - shift) };
            if shift == 0 {
                x
            } else {
                x.cat(d.lit(0, shift))
            }
        };
        let exact = match self.op {
            FixedOp::Add => align(a, self.a) + align(b, self.b),
            FixedOp::Sub => align(a, self.a) - align(b, self.b),
            FixedOp::Mul => {
                // Unsigned product of the bit patterns, corrected for negative signed operands:
                // a·b = A·B − [a<0]·B·2^wa − [b<0]·A·2^wb (mod 2^(wa+wb)).
                let (wa, wb) = (self.a.width, self.b.width);
                let mut product = a.mul(b);
                for (f, x, y) in [(self.a, a, b), (self.b, b, a)] {
                    if f.signed {
                        let negative = x.bit(f.width - 1);
                        let other_shifted = y.zext(wa + wb - f.width).cat(d.lit(0, f.width));
                        product = product - negative.mux(other_shifted, 0);
                    }
                }
                product.zext(width)
            }
        };
        sig!(exact = exact);
        cuts.cut(&mut d.net());
        sig!(rounded = round(exact, frac, self.out.frac, self.rounding));
        cuts.cut(&mut d.net());
        let result = fit(rounded, self.out, self.overflow);
        cuts.finish();
        Ok(result)
    }
}

/// Moves a signed value with `from` fraction bits to `to` fraction bits: exact when `to ≥ from`,
/// otherwise rounded. The result is signed and one bit wider than needed, so rounding up never
/// overflows it.
pub(crate) fn round(x: Sig<'_>, from: usize, to: usize, rounding: Rounding) -> Sig<'_> {
    let w = x.width;
    if to >= from {
        let up = to - from;
        return x.sext(w + 1).sext(w + 1 + up).shl_const(up);
    }
    let drop = from - to;
    if drop >= w {
        // Every value bit is below the new LSB: the result is 0 or −1 (truncate), 0 or ±1 (nearest).
        return round(x.sext(drop + 2), from, to, rounding);
    }
    let kept = x.bits(drop, w - drop).sext(w - drop + 1);
    match rounding {
        Rounding::Truncate => kept,
        Rounding::NearestEven => {
            // Up when the dropped part is above one half, or exactly one half and `kept` is odd.
            let half = x.bit(drop - 1);
            let sticky = if drop >= 2 { x.bits(0, drop - 1).any() } else { x.lit(0, 1) };
            let odd = kept.bit(0);
            sig!(round_up = half & (odd | sticky));
            kept + round_up.zext(w - drop + 1)
        }
    }
}

/// A signed value into format `out`: wrapped to its low bits or clamped to its range.
pub(crate) fn fit(x: Sig<'_>, out: FixedFormat, overflow: Overflow) -> Sig<'_> {
    let x = x.sext(x.width.max(out.width + 1));
    let low = x.bits(0, out.width);
    if overflow == Overflow::Wrap {
        return low;
    }
    let below = x.slt(out.min_raw() as u128);
    let above = x.lit(out.max_raw() as u128, x.width).slt(x);
    let min = x.lit(out.bits(out.min_raw()), out.width);
    let max = x.lit(out.bits(out.max_raw()), out.width);
    above.mux(max, below.mux(min, low))
}
