//! Floating-point operators as netlist generators, for any [`FloatFormat`].
//!
//! Each operator takes its stage count: 0 is purely combinational, and every value up to
//! [`FloatOperator::max_stages`] places one more pipeline register. Results are rounded to
//! nearest, ties to even; subnormals are handled in and out; signed zeros and infinities follow
//! IEEE-754; every NaN result is the canonical quiet NaN.
//!
//! This file holds [`FloatOperator`] and its register places; each operator's datapath has its
//! own file, and `common` the unpacking, rounding and bit helpers they share.

use crate::Error;
mod add;
mod common;
mod div;
mod mul;
pub mod scale;
mod sqrt;

pub(super) use common::{exp_width, round_pack, unpack};

use self::{add::add, div::div, mul::mul, sqrt::sqrt};
use super::FloatFormat;
use crate::netlist::{Cuts, Design, Netlist, Wire};

/// How the multiplier shifts for a subnormal operand or result (both are one left shift of the
/// significand product, see `mul`). Both give the same result at the same latency for each
/// stage count; they trade DSP blocks for LUTs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Multiplier {
    /// The shift as a multiply by `2^t` in DSPs, summed along their cascade: binary32 takes
    /// 6 DSP48E1 and the fewest LUTs.
    #[default]
    DspShift,
    /// The shift in a LUT barrel shifter: the significand product is the only multiply
    /// (binary32: 2 DSP48E1), for kernels short of DSPs.
    LutShift,
}

impl Multiplier {
    /// Both implementations, the default first.
    pub const ALL: [Multiplier; 2] = [Multiplier::DspShift, Multiplier::LutShift];

    /// Its name in reports: `dsp_shift` or `lut_shift`.
    pub fn name(self) -> &'static str {
        match self {
            Multiplier::DspShift => "dsp_shift",
            Multiplier::LutShift => "lut_shift",
        }
    }

    /// What a module name adds for this implementation: nothing for the default, `_lut_shift`.
    pub fn suffix(self) -> &'static str {
        match self {
            Multiplier::DspShift => "",
            Multiplier::LutShift => "_lut_shift",
        }
    }
}

/// The operators, with their pipeline depth limits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FloatOperator {
    /// `a + b`.
    Add,
    /// `a − b`.
    Sub,
    /// `a · b`.
    Mul,
    /// `a / b`.
    Div,
    /// `√a` (one operand).
    Sqrt,
}

impl FloatOperator {
    /// Every operator, in the order add, sub, mul, div, sqrt.
    pub const ALL: [FloatOperator; 5] = [FloatOperator::Add, FloatOperator::Sub, FloatOperator::Mul, FloatOperator::Div, FloatOperator::Sqrt];

    /// The deepest useful split: one register per place the generator marks.
    pub fn max_stages(self, format: FloatFormat) -> usize {
        self.priority(format, Multiplier::DspShift).len()
    }

    /// Number of operands: 1 for `Sqrt`, 2 otherwise.
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

    /// The operator in native binary64 arithmetic (`y` is ignored by `Sqrt`).
    pub fn apply_f64(self, x: f64, y: f64) -> f64 {
        match self {
            FloatOperator::Add => x + y,
            FloatOperator::Sub => x - y,
            FloatOperator::Mul => x * y,
            FloatOperator::Div => x / y,
            FloatOperator::Sqrt => x.sqrt(),
        }
    }

    /// Lower-case name, as in module names (`fp32_add`), messages and stage tables: `add`, `sub`,
    /// `mul`, `div`, `sqrt`.
    pub fn name(self) -> &'static str {
        match self {
            FloatOperator::Add => "add",
            FloatOperator::Sub => "sub",
            FloatOperator::Mul => "mul",
            FloatOperator::Div => "div",
            FloatOperator::Sqrt => "sqrt",
        }
    }

    /// The multipliers this operator can be built with: both for `Mul`, the default for the
    /// others (which have none).
    pub fn multipliers(self) -> &'static [Multiplier] {
        if self == FloatOperator::Mul {
            &Multiplier::ALL
        } else {
            &[Multiplier::DspShift]
        }
    }

    /// [`FloatOperator::name`] with `multiplier`'s [`Multiplier::suffix`] for `Mul`
    /// (`mul_lut_shift`), as module names carry it.
    pub fn name_with(self, multiplier: Multiplier) -> String {
        let suffix = if self == FloatOperator::Mul { multiplier.suffix() } else { "" };
        format!("{}{suffix}", self.name())
    }

    /// Register places, most useful first (the longest logic between registers is split first).
    /// Both multipliers have six places, so a stage count means the same latency for either.
    fn priority(self, format: FloatFormat, multiplier: Multiplier) -> Vec<usize> {
        match self {
            // places: 0 compare, 1 align, 2 add, 3 lzc, 4 normalisation shift, 5 round decision
            FloatOperator::Add | FloatOperator::Sub => vec![3, 5, 2, 4, 0, 6, 1],
            // places: 0 leading-zero count and exponent sum, 1 product and the shift's one-hots, 2 the shift
            // factor, 3 shifting multiply's products, 4 its cascade sums, 5 window and rounding
            // decision
            FloatOperator::Mul if multiplier == Multiplier::DspShift => vec![2, 5, 0, 4, 3, 1],
            // places: 0 the exponent sum, 1 and 2 the product (a DSP's two registers), 3 the
            // product's leading-zero count, 4 the shift amount, 5 inside the shift
            FloatOperator::Mul => vec![0, 5, 4, 1, 3, 2],
            // places: 0 leading-zero counts, 1 normalised operands, 2..=n+1 one per quotient
            // bit, n+2 and n+3 rounding
            FloatOperator::Div => recurrence_priority(format.man + 4, true),
            FloatOperator::Sqrt => recurrence_priority(format.man + 3, true),
        }
    }

    /// Builds the operator on `operands` at their stage with `stages` pipeline registers;
    /// returns the result wire (`format.width()` bits). Errors: [`Error::Parameter`] for more
    /// than [`FloatOperator::max_stages`] stages, or a `Mul` whose format has an exponent bias
    /// below `man + 2`; [`Error::Operand`] for the wrong number of operands.
    pub fn build(self, net: &mut Netlist, format: FloatFormat, stages: usize, operands: &[Wire]) -> Result<Wire, Error> {
        self.build_with(net, format, stages, operands, Multiplier::DspShift)
    }

    /// [`FloatOperator::build`] with `multiplier` the implementation of `Mul` (the other
    /// operators ignore it).
    pub fn build_with(self, net: &mut Netlist, format: FloatFormat, stages: usize, operands: &[Wire], multiplier: Multiplier) -> Result<Wire, Error> {
        let max = self.max_stages(format);
        if stages > max {
            return Err(Error::Parameter(format!("{} stages for {format} {}: allowed range 0..={max}", stages, self.name())));
        }
        // The multiplier rounds a product of two subnormals to zero (see `mul`).
        if self == FloatOperator::Mul && (format.bias() as usize) < format.man + 2 {
            let allowed = match format.bias() as usize {
                0..=2 => "none: mul needs 3 or more exponent bits".to_string(),
                bias => format!("1..={}", bias - 2),
            };
            return Err(Error::Parameter(format!(
                "{format} mul: exponent bias {} below fraction width + 2 = {}: allowed fraction widths with {} exponent bits: {allowed}",
                format.bias(),
                format.man + 2,
                format.exp
            )));
        }
        if operands.len() != self.operands() {
            return Err(Error::Operand(format!("{format} {} takes {} operands, got {}", self.name(), self.operands(), operands.len())));
        }
        net.start_after(operands);
        let mut cuts = Cuts::new(stages, &self.priority(format, multiplier));
        let result = in_design(net, |d| {
            let (a, b) = (d.sig(operands[0]), operands.get(1).map(|w| d.sig(*w)));
            let result = match self {
                FloatOperator::Add => add(d, format, &mut cuts, a, b.unwrap(), false),
                FloatOperator::Sub => add(d, format, &mut cuts, a, b.unwrap(), true),
                FloatOperator::Mul => mul(d, format, &mut cuts, a, b.unwrap(), multiplier),
                FloatOperator::Div => div(d, format, &mut cuts, a, b.unwrap()),
                FloatOperator::Sqrt => sqrt(d, format, &mut cuts, a),
            };
            result.wire
        });
        cuts.finish();
        Ok(result)
    }

    /// The operator as a module of its own, for a pipeline that instantiates it: the module
    /// name (`<format>_<operator>_s<stages>`, e.g. `fp32_mul_s5`) and its design — inputs `a`
    /// (and `b` for two operands), output `y` after `stages` registers, which advance with
    /// input `ce` (absent with no stages). Verilator keeps it a model of its own, built once
    /// however many pipelines use it. Errors as [`FloatOperator::build`].
    pub fn module(self, format: FloatFormat, stages: usize) -> Result<(String, Netlist), Error> {
        self.module_with(format, stages, Multiplier::DspShift)
    }

    /// [`FloatOperator::module`] with `multiplier` the implementation of `Mul`, whose module
    /// name then carries [`Multiplier::suffix`] (`fp32_mul_lut_shift_s5`).
    pub fn module_with(self, format: FloatFormat, stages: usize, multiplier: Multiplier) -> Result<(String, Netlist), Error> {
        let mut net = Netlist::new();
        if stages > 0 {
            net.enable = Some(net.input("ce", 1));
        }
        let operands: Vec<Wire> = ["a", "b"][..self.operands()].iter().map(|p| net.input(p, format.width())).collect();
        let y = self.build_with(&mut net, format, stages, &operands, multiplier)?;
        net.output("y", y);
        net.no_inline = true;
        Ok((format!("{format}_{}_s{stages}", self.name_with(multiplier)), net))
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
/// with the sticky OR), then the unpack place, then the recurrence split evenly: each further
/// place halves the longest run of steps between two chosen places (the first such run), so
/// every prefix of the order leaves runs within a factor of two of each other.
fn recurrence_priority(steps: usize, last_apart: bool) -> Vec<usize> {
    let mut order = vec![steps + 2, steps + 1];
    // Place k follows step k (steps 1..=steps); without `last_apart` the run before the
    // rounding place steps + 1 ends there.
    let end = if last_apart { steps } else { steps + 1 };
    if last_apart {
        order.push(steps);
    }
    // The unpacking place: the operands' normalisation (a leading-zero count and a shift) is
    // several LUT levels, a recurrence step one.
    order.push(0);
    let mut chosen = vec![0, end];
    while order.len() < steps + 3 {
        chosen.sort_unstable();
        let (a, b) = chosen.windows(2).map(|w| (w[0], w[1])).max_by_key(|&(a, b)| (b - a, std::cmp::Reverse(a))).unwrap();
        let middle = (a + b) / 2;
        order.push(middle);
        chosen.push(middle);
    }
    // Before all of these, a place after the operands' leading-zero counts (before their
    // normalisation shifts), taken right after the unpack place.
    let mut order: Vec<usize> = order.into_iter().map(|place| place + 1).collect();
    let unpack = order.iter().position(|&place| place == 1).unwrap();
    order.insert(unpack + 1, 0);
    order
}
