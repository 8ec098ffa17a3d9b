//! The golden model: the DAG evaluated in software, written from the definitions and not from
//! the hardware. binary32 and binary64 use the host's native arithmetic in the order written
//! (no fused operations); other float formats go through the binary64 reference; fixed point
//! uses the fixed-point reference ([`crate::fixed::reference`], exact integers); offsets index
//! the vector directly. Values are bit patterns in `u64` slots.
//!
//! Like the hardware operators, every operation that yields a NaN yields the canonical quiet
//! NaN (`0x7FC00000` in binary32; the host's NaN bits are not kept); negation and `abs` change
//! only the sign bit of whatever they get, NaN included, as the hardware does.

use std::cmp::Ordering;

use super::types::{fixed_operation, Type};
use super::{Kernel, Node};
use crate::fixed::{reference as fixed_ref, FixedFormat, FixedOp, Overflow};
use crate::float::reference::{self, FloatOp};
use crate::float::{FloatFormat, FloatOperator};

fn mask(width: usize) -> u64 {
    if width >= 64 {
        u64::MAX
    } else {
        (1u64 << width) - 1
    }
}

fn float_value(f: FloatFormat, bits: u64) -> f64 {
    reference::to_f64(f, bits as u128)
}

fn float_op(f: FloatFormat, op: FloatOperator, a: u64, b: u64) -> u64 {
    if f == FloatFormat::BINARY32 {
        return reference::native_f32(op, a as u32, b as u32) as u64;
    }
    if f == FloatFormat::BINARY64 {
        return reference::native_f64(op, a, b);
    }
    let (a, b) = (a as u128, b as u128);
    (match op {
        FloatOperator::Add => FloatOp::Add.apply(f, a, b),
        FloatOperator::Sub => FloatOp::Sub.apply(f, a, b),
        FloatOperator::Mul => FloatOp::Mul.apply(f, a, b),
        FloatOperator::Div => FloatOp::Div.apply(f, a, b),
        FloatOperator::Sqrt => reference::sqrt(f, a),
    }) as u64
}

fn fixed_apply(op: FixedOp, f: FixedFormat, a: u64, b: u64) -> u64 {
    let r = fixed_ref::apply::<i128>(&fixed_operation(op, f, f, f), f.raw(a as u128), f.raw(b as u128));
    f.bits(r) as u64
}

/// The order of two values of type `ty`; `None` when unordered (a NaN).
fn order(ty: Type, a: u64, b: u64) -> Option<Ordering> {
    match ty {
        Type::Float(f) => float_value(f, a).partial_cmp(&float_value(f, b)),
        Type::Fixed(f) => Some(f.raw(a as u128).cmp(&f.raw(b as u128))),
        Type::Bool => Some(a.cmp(&b)),
    }
}

/// `min` (or `max`): a NaN operand gives the canonical NaN; of ±0, min takes −0 and max +0.
fn min_max(min: bool, ty: Type, a: u64, b: u64) -> u64 {
    match order(ty, a, b) {
        None => match ty {
            Type::Float(f) => f.quiet_nan() as u64,
            _ => unreachable!("only floats are unordered"),
        },
        Some(Ordering::Less) => {
            if min {
                a
            } else {
                b
            }
        }
        Some(Ordering::Greater) => {
            if min {
                b
            } else {
                a
            }
        }
        Some(Ordering::Equal) => {
            let negative = |x: u64| x & ty.sign_mask() != 0;
            let (na, nb) = (negative(a), negative(b));
            let want_negative = if min { na || nb } else { na && nb };
            match ty {
                Type::Float(_) if negative(a) != want_negative => b,
                _ => a,
            }
        }
    }
}

/// `x` (a float's value) in fixed format `f`: scaled, rounded to nearest even, clamped; NaN 0.
fn to_fixed(x: f64, f: FixedFormat) -> u64 {
    if x.is_nan() {
        return 0;
    }
    // Exact: a power-of-two scale of a value with at most 53 significant bits.
    let scaled = x * 2f64.powi(f.frac as i32);
    let floor = scaled.floor();
    let rest = scaled - floor;
    let rounded = if rest > 0.5 || (rest == 0.5 && floor.rem_euclid(2.0) == 1.0) { floor + 1.0 } else { floor };
    let clamped = rounded.clamp(f.min_raw() as f64, f.max_raw() as f64);
    f.bits(clamped as i128) as u64
}

fn convert(from: Type, to: Type, x: u64) -> u64 {
    match (from, to) {
        (Type::Float(f), Type::Fixed(g)) => to_fixed(float_value(f, x), g),
        // Exact in binary64 (at most 32 significant bits), then rounded once.
        (Type::Fixed(g), Type::Float(f)) => reference::from_f64(f, g.raw(x as u128) as f64 * 2f64.powi(-(g.frac as i32))) as u64,
        (Type::Fixed(a), Type::Fixed(b)) => {
            let r = fixed_ref::rescale::<i128>(a.raw(x as u128), a.frac, b.frac, super::types::FIXED_ROUNDING);
            b.bits(fixed_ref::fit(r, b, super::types::FIXED_OVERFLOW)) as u64
        }
        _ if from == to => x,
        _ => unreachable!("conversion from {from} to {to}"),
    }
}

impl Kernel {
    /// The golden model on one set of input lanes (bit patterns in `u64` slots), as a vector of
    /// one beat: every stream offset other than 0 reads zero. For a per-vector kernel these are
    /// the per-beat values its outputs sum.
    pub fn evaluate_bits(&self, inputs: &[u64]) -> Vec<u64> {
        self.evaluate_vector_bits(&[inputs.to_vec()]).remove(0)
    }

    /// [`Kernel::evaluate_bits`] for a kernel whose lane slots are at most 32 bits.
    pub fn evaluate(&self, inputs: &[u32]) -> Vec<u32> {
        assert!(self.format.width() <= 32, "{}: {}-bit lanes; use evaluate_bits", self.name, self.format.width());
        let wide: Vec<u64> = inputs.iter().map(|x| *x as u64).collect();
        self.evaluate_bits(&wide).into_iter().map(|x| x as u32).collect()
    }

    /// [`Kernel::evaluate_vector_bits`] for a kernel whose lane slots are at most 32 bits.
    pub fn evaluate_vector_beats(&self, beats: &[Vec<u32>]) -> Vec<Vec<u32>> {
        assert!(self.format.width() <= 32, "{}: {}-bit lanes; use evaluate_vector_bits", self.name, self.format.width());
        let wide: Vec<Vec<u64>> = beats.iter().map(|b| b.iter().map(|x| *x as u64).collect()).collect();
        self.evaluate_vector_bits(&wide).into_iter().map(|b| b.into_iter().map(|x| x as u32).collect()).collect()
    }

    /// The golden model on one vector: the outputs of each beat (slots: fixed-point and bool
    /// outputs sign- or zero-extended); offsets read beats of this vector, zero outside it.
    pub fn evaluate_vector_bits(&self, beats: &[Vec<u64>]) -> Vec<Vec<u64>> {
        let n = beats.len();
        for lanes in beats {
            assert_eq!(lanes.len(), self.inputs.len(), "{}: lane count", self.name);
        }
        // values[node][beat], bit patterns throughout, so no NaN payload depends on the host.
        // Slot j computes each node for beat j − lag: every operand's beat is then done (an
        // earlier node in this slot, or an earlier slot: a recurrence's target).
        let lags = self.lags();
        let mut values: Vec<Vec<u64>> = vec![vec![0; n]; self.nodes.len()];
        for j in 0..n + lags.iter().max().copied().unwrap_or(0) {
            for (index, node) in self.nodes.iter().enumerate() {
                let Some(i) = j.checked_sub(lags[index]).filter(|i| *i < n) else { continue };
                let ty = self.types[index];
                let at = |v: &super::Value| values[v.0][i];
                let tv = |v: &super::Value| self.types[v.0];
                // Beat i + k of node a, zero outside the vector.
                let beat = |a: usize, k: i64| {
                    let b = i as i64 + k;
                    if (0..n as i64).contains(&b) {
                        values[a][b as usize]
                    } else {
                        0
                    }
                };
                let v = match node {
                    Node::Input(lane) => beats[i][*lane] & mask(ty.width()),
                    Node::Const(bits) => *bits,
                    Node::Neg(a) => match ty {
                        Type::Fixed(f) => fixed_apply(FixedOp::Sub, f, 0, at(a)),
                        _ => at(a) ^ ty.sign_mask(),
                    },
                    Node::Op(op, args) => {
                        let Type::Float(f) = ty else { unreachable!() };
                        float_op(f, *op, at(&args[0]), args.get(1).map_or(0, at))
                    }
                    Node::Fixed(op, a, b) => {
                        let Type::Fixed(f) = ty else { unreachable!() };
                        fixed_apply(*op, f, at(a), at(b))
                    }
                    Node::Compare(cmp, a, b) => cmp.holds(order(tv(a), at(a), at(b))) as u64,
                    Node::Select(c, a, b) => {
                        if at(c) != 0 {
                            at(a)
                        } else {
                            at(b)
                        }
                    }
                    Node::Min(a, b) => min_max(true, ty, at(a), at(b)),
                    Node::Max(a, b) => min_max(false, ty, at(a), at(b)),
                    Node::Abs(a) => match ty {
                        Type::Fixed(f) => f.bits(fixed_ref::fit(f.raw(at(a) as u128).abs(), f, Overflow::Saturate)) as u64,
                        _ => at(a) & !ty.sign_mask(),
                    },
                    Node::Convert(a) => convert(tv(a), ty, at(a)),
                    Node::Offset(a, k) => beat(a.0, *k),
                    Node::Prev(target, k) => beat(target.expect("recurrence closed").0, -k),
                };
                values[index][i] = v;
            }
        }
        let slot = self.format.width();
        (0..n)
            .map(|i| {
                self.outputs
                    .iter()
                    .map(|(_, v)| {
                        let bits = values[v.0][i];
                        match self.types[v.0] {
                            Type::Fixed(f) if f.signed => f.raw(bits as u128) as u64 & mask(slot),
                            _ => bits,
                        }
                    })
                    .collect()
            })
            .collect()
    }

    /// The golden model on a stream of beats (lanes, `tlast`): the output beats the kernel
    /// emits, with their `tlast`. `tlast` ends a vector; a trailing vector without `tlast` is
    /// still open: of its `n` beats only the first `n − K` have outputs yet (`K` the
    /// [`Kernel::lookahead`]). Per-beat kernels only.
    pub fn evaluate_stream(&self, beats: &[(Vec<u32>, bool)]) -> Vec<(Vec<u32>, bool)> {
        assert!(!self.per_vector, "evaluate_stream is for per-beat kernels");
        if !self.has_offsets() {
            // Beats are independent: one at a time, whatever the stream's length.
            return beats.iter().map(|(lanes, last)| (self.evaluate(lanes), *last)).collect();
        }
        let mut out = vec![];
        let mut vector: Vec<Vec<u32>> = vec![];
        for (i, (lanes, last)) in beats.iter().enumerate() {
            vector.push(lanes.clone());
            let end = i + 1 == beats.len();
            if *last || end {
                let outputs = self.evaluate_vector_beats(&vector);
                let keep = if *last { outputs.len() } else { outputs.len().saturating_sub(self.lookahead()) };
                let n = outputs.len();
                out.extend(outputs.into_iter().take(keep).enumerate().map(|(j, o)| (o, *last && j + 1 == n)));
                vector.clear();
            }
        }
        out
    }

    /// The golden model of a per-vector kernel on one vector: for each output, the exact sum of
    /// the per-beat values (in binary64, exact for these magnitudes up to rounding far below
    /// binary32's) and the error bound any summation order meets, (n−1)·u·Σ|vᵢ| with u the
    /// binary32 unit roundoff 2⁻²⁴ and n the vector's beat count.
    pub fn evaluate_vector(&self, beats: &[Vec<u32>]) -> Vec<(f64, f64)> {
        let terms: Vec<Vec<u32>> = beats.iter().map(|b| self.evaluate(b)).collect();
        (0..self.outputs.len())
            .map(|j| {
                let values = terms.iter().map(|t| f32::from_bits(t[j]) as f64);
                let exact: f64 = values.clone().sum();
                let magnitude: f64 = values.map(f64::abs).sum();
                (exact, (beats.len() as f64 - 1.0) * 2f64.powi(-24) * magnitude)
            })
            .collect()
    }
}
