//! The operations of the raw builder, and helpers built from them. Each checks its operands'
//! widths, brings operands to the current stage, and folds constants ([`super::fold`]).

use super::{Netlist, Op, Wire};

impl Netlist {
    fn binary(&mut self, a: Wire, b: Wire, make: fn(Wire, Wire) -> Op, same_width: bool, width: usize) -> Wire {
        if same_width {
            assert_eq!(self.width(a), self.width(b), "operand widths differ");
        }
        let a = self.at_stage(a);
        let b = self.at_stage(b);
        self.node(make(a, b), width)
    }

    fn unary(&mut self, a: Wire, make: fn(Wire) -> Op, width: usize) -> Wire {
        let a = self.at_stage(a);
        self.node(make(a), width)
    }

    /// `a + b` modulo `2^width`; operands of equal width (panics otherwise).
    pub fn add(&mut self, a: Wire, b: Wire) -> Wire {
        let w = self.width(a);
        self.binary(a, b, Op::Add, true, w)
    }
    /// `a − b` modulo `2^width`; operands of equal width.
    pub fn sub(&mut self, a: Wire, b: Wire) -> Wire {
        let w = self.width(a);
        self.binary(a, b, Op::Sub, true, w)
    }
    /// Unsigned full product, `width(a) + width(b)` bits wide.
    pub fn mul(&mut self, a: Wire, b: Wire) -> Wire {
        let w = self.width(a) + self.width(b);
        self.binary(a, b, Op::Mul, false, w)
    }
    /// Bitwise AND of two equally wide values.
    pub fn and(&mut self, a: Wire, b: Wire) -> Wire {
        let w = self.width(a);
        self.binary(a, b, Op::And, true, w)
    }
    /// Bitwise OR of two equally wide values.
    pub fn or(&mut self, a: Wire, b: Wire) -> Wire {
        let w = self.width(a);
        self.binary(a, b, Op::Or, true, w)
    }
    /// Bitwise XOR of two equally wide values.
    pub fn xor(&mut self, a: Wire, b: Wire) -> Wire {
        let w = self.width(a);
        self.binary(a, b, Op::Xor, true, w)
    }
    /// `a << amount` (logical, `a`'s width; an amount of the width or more gives zero).
    pub fn shl(&mut self, a: Wire, amount: Wire) -> Wire {
        let w = self.width(a);
        self.binary(a, amount, Op::Shl, false, w)
    }
    /// `a >> amount` (logical, `a`'s width; an amount of the width or more gives zero).
    pub fn shr(&mut self, a: Wire, amount: Wire) -> Wire {
        let w = self.width(a);
        self.binary(a, amount, Op::Shr, false, w)
    }
    /// One bit: `a == b`.
    pub fn eq(&mut self, a: Wire, b: Wire) -> Wire {
        self.binary(a, b, Op::Eq, true, 1)
    }
    /// One bit: unsigned `a < b`.
    pub fn ult(&mut self, a: Wire, b: Wire) -> Wire {
        self.binary(a, b, Op::Ult, true, 1)
    }
    /// One bit: two's-complement `a < b`.
    pub fn slt(&mut self, a: Wire, b: Wire) -> Wire {
        self.binary(a, b, Op::Slt, true, 1)
    }
    /// `{hi, lo}`: `hi` above `lo`, as wide as both together.
    pub fn concat(&mut self, hi: Wire, lo: Wire) -> Wire {
        let w = self.width(hi) + self.width(lo);
        self.binary(hi, lo, Op::Concat, false, w)
    }
    /// Bitwise NOT.
    pub fn not(&mut self, a: Wire) -> Wire {
        let w = self.width(a);
        self.unary(a, Op::Not, w)
    }
    /// Number of leading zeros of `a` (its width when `a` is zero), just wide enough to hold it.
    pub fn lzc(&mut self, a: Wire) -> Wire {
        let width = self.width(a);
        let bits = usize::BITS as usize - width.leading_zeros() as usize;
        self.unary(a, Op::Lzc, bits)
    }
    /// One bit: XOR of all bits of `a`.
    pub fn parity(&mut self, a: Wire) -> Wire {
        self.unary(a, Op::Parity, 1)
    }
    /// `sel ? a : b` for a one-bit `sel` and equally wide `a`, `b`.
    pub fn mux(&mut self, sel: Wire, a: Wire, b: Wire) -> Wire {
        assert_eq!(self.width(sel), 1, "mux select must be one bit");
        assert_eq!(self.width(a), self.width(b), "mux operand widths differ");
        let sel = self.at_stage(sel);
        let a = self.at_stage(a);
        let b = self.at_stage(b);
        let w = self.width(a);
        self.node(Op::Mux(sel, a, b), w)
    }
    /// `a[lo +: width]`.
    pub fn slice(&mut self, a: Wire, lo: usize, width: usize) -> Wire {
        assert!(lo + width <= self.width(a), "slice {lo}+:{width} outside a {}-bit value", self.width(a));
        if lo == 0 && width == self.width(a) {
            return a;
        }
        let a = self.at_stage(a);
        self.node(Op::Slice(a, lo), width)
    }
    /// Bit `index` of `a`, one bit wide.
    pub fn bit(&mut self, a: Wire, index: usize) -> Wire {
        self.slice(a, index, 1)
    }
    /// One value from `(wire, lo)` pieces placed at bit `lo`, as wide as the highest piece
    /// reaches; bits no piece covers are zero. Panics on overlapping pieces.
    pub fn join(&mut self, pieces: &[(Wire, usize)]) -> Wire {
        let mut pieces = pieces.to_vec();
        pieces.sort_by_key(|(_, lo)| *lo);
        let mut parts = vec![];
        let mut next = 0;
        for (w, lo) in pieces {
            assert!(lo >= next, "join: pieces overlap at bit {lo}");
            if lo > next {
                parts.push(self.constant(0, lo - next));
            }
            parts.push(w);
            next = lo + self.width(w);
        }
        let mut parts = parts.into_iter();
        let first = parts.next().expect("join of no pieces");
        parts.fold(first, |acc, p| self.concat(p, acc))
    }

    // ---- helpers built from the primitives ----

    /// `a` zero-extended to `width` bits (at least its own width).
    pub fn zext(&mut self, a: Wire, width: usize) -> Wire {
        let w = self.width(a);
        assert!(width >= w, "cannot zero-extend {w} bits to {width}");
        if width == w {
            return a;
        }
        let zero = self.constant(0, width - w);
        self.concat(zero, a)
    }
    /// `a` sign-extended (its top bit repeated) to `width` bits (at least its own width).
    pub fn sext(&mut self, a: Wire, width: usize) -> Wire {
        let w = self.width(a);
        assert!(width >= w, "cannot sign-extend {w} bits to {width}");
        if width == w {
            return a;
        }
        let sign = self.bit(a, w - 1);
        let ones = self.constant(u128::MAX, width - w);
        let zero = self.constant(0, width - w);
        let fill = self.mux(sign, ones, zero);
        self.concat(fill, a)
    }
    /// Zero-extends or truncates to `width`.
    pub fn resize(&mut self, a: Wire, width: usize) -> Wire {
        if width <= self.width(a) {
            self.slice(a, 0, width)
        } else {
            self.zext(a, width)
        }
    }
    /// One bit: `a == 0`.
    pub fn is_zero(&mut self, a: Wire) -> Wire {
        let zero = self.constant(0, self.width(a));
        self.eq(a, zero)
    }
    /// One bit: `a != 0` (OR of all bits).
    pub fn nonzero(&mut self, a: Wire) -> Wire {
        let z = self.is_zero(a);
        self.not(z)
    }
    /// One bit: every bit of `a` is set (AND of all bits).
    pub fn all_ones(&mut self, a: Wire) -> Wire {
        let ones = self.constant(u128::MAX, self.width(a));
        self.eq(a, ones)
    }
    /// `a + value` modulo `2^width` (a negative `value` subtracts).
    pub fn add_const(&mut self, a: Wire, value: i128) -> Wire {
        let c = self.constant(value as u128, self.width(a));
        self.add(a, c)
    }
    /// `a` shifted left by a constant (bits shifted out are lost).
    pub fn shl_const(&mut self, a: Wire, amount: usize) -> Wire {
        let w = self.width(a);
        if amount == 0 {
            return a;
        }
        if amount >= w {
            return self.constant(0, w);
        }
        let lo = self.slice(a, 0, w - amount);
        let zero = self.constant(0, amount);
        self.concat(lo, zero)
    }
    /// AND of one or more equally wide values (panics on none).
    pub fn and_all(&mut self, wires: &[Wire]) -> Wire {
        let mut acc = wires[0];
        for w in &wires[1..] {
            acc = self.and(acc, *w);
        }
        acc
    }
    /// OR of one or more equally wide values (panics on none).
    pub fn or_all(&mut self, wires: &[Wire]) -> Wire {
        let mut acc = wires[0];
        for w in &wires[1..] {
            acc = self.or(acc, *w);
        }
        acc
    }
}
