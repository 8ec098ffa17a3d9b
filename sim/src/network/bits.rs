//! Port values as bits: a field of a wide value, a value from 128-bit chunks, and the serial
//! lanes' 66-bit blocks packed into an `<e>_rx_serial` value.

use crate::link::Value;

/// Bits `lo .. lo + width` (at most 128) of a port value.
pub(crate) fn bits(v: &Value, lo: usize, width: usize) -> u128 {
    let mut out = 0u128;
    for i in 0..width {
        let b = lo + i;
        out |= (((v[b / 64] >> (b % 64)) & 1) as u128) << i;
    }
    out
}

/// A `<e>_rx_serial` value: lane k's 66-bit block at bits `66k + 65 : 66k`.
pub(crate) fn serial_value(blocks: &[u128]) -> Value {
    let mut v = Value::default();
    for (k, b) in blocks.iter().enumerate() {
        for i in 0..66 {
            let bit = 66 * k + i;
            v[bit / 64] |= ((b >> i & 1) as u64) << (bit % 64);
        }
    }
    v
}

/// A wide port value from 128-bit chunks, low first.
pub(crate) fn value(chunks: &[u128]) -> Value {
    let mut v = Value::default();
    for (k, c) in chunks.iter().enumerate() {
        v[2 * k] = *c as u64;
        v[2 * k + 1] = (*c >> 64) as u64;
    }
    v
}
