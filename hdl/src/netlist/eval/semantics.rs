//! What each combinational operation computes: the compiled instructions (on 128 bits, or on
//! the low 64 for narrow ones), the same on netlist operations (for constant folding), and each
//! operation's operands.

use num_bigint::BigUint;

use super::instr::{Code, Instr};
use super::{low128, mask_big, Values};
use crate::netlist::{Op, Wire};

/// Runs a narrow instruction on the low words (masked result); the same value as [`exec`].
#[inline(always)]
pub(super) fn exec64(ins: &Instr, lo: &[u64], memories: &[Vec<u128>]) -> u64 {
    let a = lo[ins.a as usize];
    let b = || lo[ins.b as usize];
    let v = match ins.code {
        Code::Add => a.wrapping_add(b()),
        Code::Sub => a.wrapping_sub(b()),
        Code::Mul => a.wrapping_mul(b()),
        Code::And => a & b(),
        Code::Or => a | b(),
        Code::Xor => a ^ b(),
        Code::Not => !a,
        Code::Shl => a.checked_shl(b().min(64) as u32).unwrap_or(0),
        Code::Shr => a.checked_shr(b().min(64) as u32).unwrap_or(0),
        Code::Eq => (a == b()) as u64,
        Code::Ult => (a < b()) as u64,
        Code::Slt => {
            let shift = 64 - ins.aux.min(64);
            let s = |v: u64| (v.checked_shl(shift).unwrap_or(0) as i64).checked_shr(shift).unwrap_or(0);
            (s(a) < s(b())) as u64
        }
        Code::Mux => {
            if a != 0 {
                b()
            } else {
                lo[ins.c as usize]
            }
        }
        Code::Concat => a.checked_shl(ins.aux).unwrap_or(0) | b(),
        Code::Slice => a.checked_shr(ins.aux).unwrap_or(0),
        Code::Lzc => (a.leading_zeros() - (64 - ins.aux)) as u64,
        Code::Parity => (a.count_ones() & 1) as u64,
        Code::MemRead => memories[ins.aux as usize][a as usize] as u64,
    };
    v & u64::MAX.checked_shr(64 - ins.width).unwrap_or(0)
}

/// Runs one instruction (masked result).
#[inline(always)]
pub(super) fn exec(ins: &Instr, values: &Values, memories: &[Vec<u128>]) -> u128 {
    let a = values.get(ins.a as usize);
    let b = || values.get(ins.b as usize);
    let v = match ins.code {
        Code::Add => a.wrapping_add(b()),
        Code::Sub => a.wrapping_sub(b()),
        Code::Mul => a.wrapping_mul(b()),
        Code::And => a & b(),
        Code::Or => a | b(),
        Code::Xor => a ^ b(),
        Code::Not => !a,
        Code::Shl => shift(a, b(), true),
        Code::Shr => shift(a, b(), false),
        Code::Eq => (a == b()) as u128,
        Code::Ult => (a < b()) as u128,
        Code::Slt => {
            let w = ins.aux as usize;
            (signed(a, w) < signed(b(), w)) as u128
        }
        Code::Mux => {
            if a != 0 {
                b()
            } else {
                values.get(ins.c as usize)
            }
        }
        Code::Concat => (a << ins.aux) | b(),
        Code::Slice => a >> ins.aux,
        Code::Lzc => (a.leading_zeros() - (128 - ins.aux)) as u128,
        Code::Parity => (a.count_ones() & 1) as u128,
        Code::MemRead => memories[ins.aux as usize][a as usize],
    };
    v & u128::MAX.checked_shr(128 - ins.width).unwrap_or(0)
}

/// Runs an instruction on values of any width (masked result): the same value as [`exec`] on
/// narrower ones.
pub(super) fn exec_wide(ins: &Instr, values: &Values, memories: &[Vec<u128>]) -> BigUint {
    let width = ins.width as usize;
    let a = || values.big(ins.a as usize);
    let b = || values.big(ins.b as usize);
    let modulus = || BigUint::from(1u8) << width;
    let v = match ins.code {
        Code::Add => a() + b(),
        Code::Sub => a() + (modulus() - mask_big(b(), width)),
        Code::Mul => a() * b(),
        Code::And => a() & b(),
        Code::Or => a() | b(),
        Code::Xor => a() ^ b(),
        Code::Not => (modulus() - 1u8) ^ mask_big(a(), width),
        Code::Shl | Code::Shr => {
            // Shifting by the operand's width or more gives zero, as the masked shift does.
            let amount = b();
            if amount.bits() > 32 {
                BigUint::default()
            } else if ins.code == Code::Shl {
                a() << low128(&amount) as usize
            } else {
                a() >> low128(&amount) as usize
            }
        }
        Code::Eq => BigUint::from((a() == b()) as u8),
        Code::Ult => BigUint::from((a() < b()) as u8),
        Code::Slt => {
            // Flipping the sign bits orders two's-complement values as unsigned ones.
            let sign = BigUint::from(1u8) << (ins.aux as usize - 1);
            BigUint::from(((a() ^ &sign) < (b() ^ &sign)) as u8)
        }
        Code::Mux => {
            if values.big(ins.a as usize) != BigUint::default() {
                b()
            } else {
                values.big(ins.c as usize)
            }
        }
        Code::Concat => (a() << ins.aux as usize) | b(),
        Code::Slice => a() >> ins.aux as usize,
        Code::Lzc => BigUint::from(ins.aux as u64 - a().bits()),
        Code::Parity => BigUint::from((a().count_ones() & 1) as u8),
        Code::MemRead => {
            let chunks = width.div_ceil(128);
            let base = low128(&a()) as usize * chunks;
            let words = &memories[ins.aux as usize][base..base + chunks];
            words.iter().rev().fold(BigUint::default(), |acc, w| (acc << 128) | BigUint::from(*w))
        }
    };
    mask_big(v, width)
}

/// The value of a combinational operation, given its operands' values and widths (unmasked).
pub(crate) fn compute(op: &Op, v: &dyn Fn(Wire) -> u128, width: &dyn Fn(Wire) -> usize) -> u128 {
    match op {
        Op::Add(a, b) => v(*a).wrapping_add(v(*b)),
        Op::Sub(a, b) => v(*a).wrapping_sub(v(*b)),
        Op::Mul(a, b) => v(*a).wrapping_mul(v(*b)),
        Op::And(a, b) => v(*a) & v(*b),
        Op::Or(a, b) => v(*a) | v(*b),
        Op::Xor(a, b) => v(*a) ^ v(*b),
        Op::Not(a) => !v(*a),
        Op::Shl(a, s) => shift(v(*a), v(*s), true),
        Op::Shr(a, s) => shift(v(*a), v(*s), false),
        Op::Eq(a, b) => (v(*a) == v(*b)) as u128,
        Op::Ult(a, b) => (v(*a) < v(*b)) as u128,
        Op::Slt(a, b) => {
            let w = width(*a);
            (signed(v(*a), w) < signed(v(*b), w)) as u128
        }
        Op::Mux(s, a, b) => {
            if v(*s) != 0 {
                v(*a)
            } else {
                v(*b)
            }
        }
        Op::Concat(h, l) => (v(*h) << width(*l)) | v(*l),
        Op::Slice(a, lo) => v(*a) >> lo,
        Op::Lzc(a) => (v(*a).leading_zeros() as usize - (128 - width(*a))) as u128,
        Op::Parity(a) => (v(*a).count_ones() & 1) as u128,
        Op::Forward(Some(a)) => v(*a),
        Op::Const(c) => *c,
        Op::Input(_) | Op::MemRead { .. } | Op::Reg { .. } | Op::Forward(None) | Op::InstanceOutput { .. } => {
            unreachable!("not a combinational operation: {op:?}")
        }
    }
}

pub(crate) fn comb_operands(op: &Op) -> Vec<Wire> {
    match op {
        Op::Input(_) | Op::Const(_) | Op::Reg { .. } | Op::Forward(None) | Op::InstanceOutput { .. } => vec![],
        Op::Not(a) | Op::Slice(a, _) | Op::Lzc(a) | Op::Parity(a) | Op::Forward(Some(a)) => vec![*a],
        Op::MemRead { addr, .. } => vec![*addr],
        Op::Mux(s, a, b) => vec![*s, *a, *b],
        Op::Add(a, b)
        | Op::Sub(a, b)
        | Op::Mul(a, b)
        | Op::And(a, b)
        | Op::Or(a, b)
        | Op::Xor(a, b)
        | Op::Shl(a, b)
        | Op::Shr(a, b)
        | Op::Eq(a, b)
        | Op::Ult(a, b)
        | Op::Slt(a, b)
        | Op::Concat(a, b) => vec![*a, *b],
    }
}

fn shift(a: u128, amount: u128, left: bool) -> u128 {
    if amount >= 128 {
        0
    } else if left {
        a << amount
    } else {
        a >> amount
    }
}

fn signed(v: u128, width: usize) -> i128 {
    let shift = 128 - width;
    ((v << shift) as i128) >> shift
}
