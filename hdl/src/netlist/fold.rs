//! Constant folding at construction: an operation whose operands are all constants becomes a
//! constant, and the identities that need no logic (`x & 0`, `x | 0`, `s ? a : a`, a constant
//! select, …) return an existing wire. The generated Verilog then holds no `32'hffffffff & …`.

use super::eval::compute;
use super::{mask, Netlist, Op, Wire};

/// The wire `op` reduces to without a new node, if any.
pub(super) fn fold(net: &mut Netlist, op: &Op, width: usize) -> Option<Wire> {
    let c = |w: &Wire| net.const_value(*w);
    let operands = super::eval::comb_operands(op);
    // Constants are folded on 128 bits: wider operations stay as they are.
    if width > 128 || operands.iter().any(|w| net.width(*w) > 128) {
        return None;
    }
    if !operands.is_empty() && operands.iter().all(|w| c(w).is_some()) && !matches!(op, Op::MemRead { .. } | Op::Forward(_) | Op::InstanceOutput { .. }) {
        let value = compute(op, &|w| c(&w).unwrap(), &|w| net.width(w));
        return Some(net.constant(value, width));
    }
    let ones = |w: &Wire| c(w) == Some(mask(net.width(*w)));
    let zero = |w: &Wire| c(w) == Some(0);
    match op {
        Op::And(a, b) if zero(a) || zero(b) => Some(net.constant(0, width)),
        Op::And(a, b) if ones(a) => Some(*b),
        Op::And(a, b) if ones(b) || a == b => Some(*a),
        Op::Or(a, b) if ones(a) || ones(b) => Some(net.constant(u128::MAX, width)),
        Op::Or(a, b) if zero(a) => Some(*b),
        Op::Or(a, b) if zero(b) || a == b => Some(*a),
        Op::Xor(a, b) if zero(a) => Some(*b),
        Op::Xor(a, b) if zero(b) => Some(*a),
        Op::Add(a, b) | Op::Sub(a, b) if zero(b) => Some(*a),
        Op::Add(a, b) if zero(a) => Some(*b),
        Op::Shl(a, s) | Op::Shr(a, s) if zero(s) => Some(*a),
        Op::Mux(s, a, b) => match c(s) {
            Some(0) => Some(*b),
            Some(_) => Some(*a),
            None if a == b => Some(*a),
            None => None,
        },
        Op::Not(a) => match &net.nodes[a.0].op {
            Op::Not(x) => Some(*x),
            _ => None,
        },
        // Nothing is below zero: a constant, not a comparison lint tools call always false.
        Op::Ult(_, b) if zero(b) => Some(net.constant(0, 1)),
        Op::Eq(a, b) if a == b => Some(net.constant(1, 1)),
        _ => None,
    }
}
