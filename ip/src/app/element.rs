//! The element type of an application's dats, globals and constants: binary64 or binary32, with
//! its bit pattern in a kernel lane.

use num_traits::Float;

use super::text::Precision;

/// The element type of an application: binary64 or binary32.
pub trait Element: Float + std::fmt::Debug + 'static {
    /// The precision the type stands for.
    const PRECISION: Precision;
    /// Its IEEE-754 bit pattern, in the low 64 or 32 bits of a lane.
    fn to_lane(self) -> u64;
    /// The value whose bit pattern is the lane's low 64 or 32 bits.
    fn from_lane(bits: u64) -> Self;
    /// A mesh value, rounded to nearest.
    fn from_f64(x: f64) -> Self;
}

impl Element for f64 {
    const PRECISION: Precision = Precision::F64;
    fn to_lane(self) -> u64 {
        self.to_bits()
    }
    fn from_lane(bits: u64) -> f64 {
        f64::from_bits(bits)
    }
    fn from_f64(x: f64) -> f64 {
        x
    }
}

impl Element for f32 {
    const PRECISION: Precision = Precision::F32;
    fn to_lane(self) -> u64 {
        self.to_bits() as u64
    }
    fn from_lane(bits: u64) -> f32 {
        f32::from_bits(bits as u32)
    }
    fn from_f64(x: f64) -> f32 {
        x as f32
    }
}
