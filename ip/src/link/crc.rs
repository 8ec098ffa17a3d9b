//! CRC-32C (Castagnoli) of the reliable link: reflected polynomial `0x82F63B78`, initial value
//! and final XOR `0xFFFFFFFF`, bytes in order, each least-significant bit first. Check value of
//! the ASCII string `123456789` is `0xE3069283` (RFC 3720, iSCSI; tested).
//!
//! The hardware updates the CRC with a whole channel word per cycle: the update is linear over
//! GF(2), so each next-state bit is the parity of masked state and data bits; the masks come
//! from running the bit-serial definition on unit vectors.

use weft_hdl::netlist::{Netlist, Wire};

/// The CRC-32C polynomial, bit-reflected (least-significant bit first).
pub const POLY: u32 = 0x82F6_3B78;
/// The CRC state before the first bit.
pub const INIT: u32 = 0xFFFF_FFFF;
/// XORed into the final state to give the CRC.
pub const XOR_OUT: u32 = 0xFFFF_FFFF;

/// Bit-serial update of the (un-inverted) CRC state with `bits` data bits, bit 0 first.
pub fn update_bits(mut state: u32, data: &[u64], bits: usize) -> u32 {
    for i in 0..bits {
        let bit = (data[i / 64] >> (i % 64)) as u32 & 1;
        state = if (state ^ bit) & 1 == 1 { (state >> 1) ^ POLY } else { state >> 1 };
    }
    state
}

/// The low `bits` bits of the CRC-32C of `info` zero-extended to one 64-bit word: the check
/// that guards the link's short control blocks.
pub fn check(net: &mut Netlist, info: Wire, bits: usize) -> Wire {
    let word = net.zext(info, 64);
    let init = net.constant(INIT as u128, 32);
    let state = update_word(net, init, &[word]);
    let xor_out = net.constant(XOR_OUT as u128, 32);
    let crc = net.xor(state, xor_out);
    net.slice(crc, 0, bits)
}

/// Next CRC state after one `64 * words.len()`-bit word, as netlist logic.
pub fn update_word(net: &mut Netlist, state: Wire, words: &[Wire]) -> Wire {
    let bits = 64 * words.len();
    let zero_data = vec![0u64; words.len()];
    // Column masks: which state bits and which data bits feed next-state bit j.
    let mut state_mask = [0u128; 32];
    for i in 0..32 {
        let next = update_bits(1 << i, &zero_data, bits);
        for (j, m) in state_mask.iter_mut().enumerate() {
            *m |= (((next >> j) & 1) as u128) << i;
        }
    }
    let mut data_mask = vec![[0u128; 32]; words.len()];
    for i in 0..bits {
        let mut data = zero_data.clone();
        data[i / 64] |= 1 << (i % 64);
        let next = update_bits(0, &data, bits);
        for j in 0..32 {
            data_mask[i / 64][j] |= (((next >> j) & 1) as u128) << (i % 64);
        }
    }
    let mut out = None;
    for j in (0..32).rev() {
        let m = net.constant(state_mask[j], 32);
        let masked = net.and(state, m);
        let mut bit = net.parity(masked);
        for (k, word) in words.iter().enumerate() {
            let m = net.constant(data_mask[k][j], 64);
            let masked = net.and(*word, m);
            let p = net.parity(masked);
            bit = net.xor(bit, p);
        }
        out = Some(match out {
            None => bit,
            Some(hi) => net.concat(hi, bit),
        });
    }
    out.unwrap()
}

#[cfg(test)]
mod tests {
    use super::*;
    use weft_hdl::netlist::eval::Evaluator;

    fn crc32c(bytes: &[u8]) -> u32 {
        let words: Vec<u64> = bytes.iter().map(|b| *b as u64).collect();
        let mut state = INIT;
        for w in &words {
            state = update_bits(state, &[*w], 8);
        }
        state ^ XOR_OUT
    }

    #[test]
    fn check_value() {
        assert_eq!(crc32c(b"123456789"), 0xE306_9283);
    }

    #[test]
    fn parallel_update_equals_serial() {
        for lanes in 1..=4 {
            let mut net = Netlist::new();
            let state = net.input("state", 32);
            let words: Vec<Wire> = (0..lanes).map(|k| net.input(&format!("w{k}"), 64)).collect();
            let next = update_word(&mut net, state, &words);
            net.output("next", next);
            let mut eval = Evaluator::new(net);
            let mut rng = weft_hdl::testbench::Rng::new(lanes as u64);
            for _ in 0..200 {
                let s = rng.next_u64() as u32;
                let data: Vec<u64> = (0..lanes).map(|_| rng.next_u64()).collect();
                eval.set(eval.input("state").unwrap(), s as u128);
                for (k, d) in data.iter().enumerate() {
                    eval.set(eval.input(&format!("w{k}")).unwrap(), *d as u128);
                }
                eval.settle();
                assert_eq!(eval.output("next").unwrap() as u32, update_bits(s, &data, 64 * lanes));
            }
        }
    }
}
