//! The fixed-point golden model: exact integer arithmetic on raw values, generic over any
//! signed primitive integer wide enough for the exact result (tests use `i128`), written from
//! the definitions (scale, floor-divide, compare the remainder with one half, clamp or reduce
//! modulo 2^width) rather than from the hardware's bit slicing.

use num_traits::{clamp, Euclid, PrimInt, Signed};

use super::{FixedFormat, FixedOp, FixedOperation, Overflow, Rounding};

fn pow2<T: PrimInt>(n: usize) -> T {
    T::one() << n
}

/// `a op b` on raw values in the operation's formats; the raw result in its result format.
pub fn apply<T: PrimInt + Signed + Euclid>(operation: &FixedOperation, a: T, b: T) -> T {
    let (fa, fb) = (operation.a.frac, operation.b.frac);
    let (value, frac) = match operation.op {
        FixedOp::Add => {
            let f = fa.max(fb);
            (a * pow2::<T>(f - fa) + b * pow2::<T>(f - fb), f)
        }
        FixedOp::Sub => {
            let f = fa.max(fb);
            (a * pow2::<T>(f - fa) - b * pow2::<T>(f - fb), f)
        }
        FixedOp::Mul => (a * b, fa + fb),
    };
    let rounded = rescale(value, frac, operation.out.frac, operation.rounding);
    fit(rounded, operation.out, operation.overflow)
}

/// A value with `from` fraction bits expressed with `to` fraction bits.
pub fn rescale<T: PrimInt + Signed + Euclid>(value: T, from: usize, to: usize, rounding: Rounding) -> T {
    if to >= from {
        return value * pow2::<T>(to - from);
    }
    let unit: T = pow2(from - to);
    let quotient = value.div_euclid(&unit); // floor
    let remainder = value.rem_euclid(&unit);
    match rounding {
        Rounding::Truncate => quotient,
        Rounding::NearestEven => {
            let twice = remainder + remainder;
            let odd = quotient.rem_euclid(&(T::one() + T::one())) == T::one();
            if twice > unit || (twice == unit && odd) {
                quotient + T::one()
            } else {
                quotient
            }
        }
    }
}

/// A raw value into `format`'s range.
pub fn fit<T: PrimInt + Signed + Euclid>(value: T, format: FixedFormat, overflow: Overflow) -> T {
    let min = T::from(format.min_raw()).expect("format range fits the type");
    let max = T::from(format.max_raw()).expect("format range fits the type");
    match overflow {
        Overflow::Saturate => clamp(value, min, max),
        Overflow::Wrap => {
            let modulus: T = pow2(format.width);
            let low = value.rem_euclid(&modulus);
            if low > max {
                low - modulus
            } else {
                low
            }
        }
    }
}
