//! The packet header (beat 0 of every packet, bits 127:0) and its check bits.
//!
//! Field layout as in docs/contract.md ("Packet format"). The `ecc` byte is a SEC-DED extended Hamming
//! code over bits 119:0: the 120 data bits take, in order, the positions 1..=127 that are not
//! powers of two; check bit k (ecc bit k, k = 0..=6) is the parity of the data bits whose
//! position has bit k set; ecc bit 7 is the parity of all 127 other bits. A decoder recomputes
//! the seven checks: the syndrome names the position of a single flipped bit (0 = none) and the
//! overall parity tells a single error (odd) from a double one (even with a non-zero syndrome).

use weft_hdl::netlist::{Design, Netlist, Sig, Wire};

/// Largest `length` the 14-bit field holds: 16383 payload bytes.
pub const MAX_LENGTH: usize = (1 << 14) - 1;
/// Lowest bit of the `ecc` byte (bits 127:120); the code covers bits 119:0.
pub const ECC_LO: usize = 120;

/// `(name, lo, width)` of every field.
pub const FIELDS: [(&str, usize, usize); 14] = [
    ("dst_x", 0, 6),
    ("dst_y", 6, 6),
    ("dst_z", 12, 6),
    ("dst_port", 18, 4),
    ("src_x", 22, 6),
    ("src_y", 28, 6),
    ("src_z", 34, 6),
    ("src_port", 40, 4),
    ("length", 44, 14),
    ("tag", 58, 16),
    ("hops", 74, 10),
    ("kind", 84, 4),
    ("user", 88, 32),
    ("ecc", 120, 8),
];

/// `(lo, width)` of header field `name` (one of [`FIELDS`]); panics on an unknown name.
pub fn field(name: &str) -> (usize, usize) {
    let f = FIELDS.iter().find(|f| f.0 == name).unwrap_or_else(|| panic!("no header field `{name}`"));
    (f.1, f.2)
}

/// A header as software sees it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Header {
    /// Destination X, Y, Z (6 bits each).
    pub dst: [usize; 3],
    /// IntraNode port at the destination (4 bits).
    pub dst_port: usize,
    /// Source X, Y, Z (6 bits each), filled by the sender.
    pub src: [usize; 3],
    /// Source IntraNode port (4 bits).
    pub src_port: usize,
    /// Payload bytes, 0 ..= [`MAX_LENGTH`] (14 bits).
    pub length: usize,
    /// User tag (task / channel id), carried unchanged.
    pub tag: u16,
    /// Router-to-router hops so far (10 bits); the sender writes 0.
    pub hops: usize,
    /// Packet kind (4 bits): 0 = data, other values reserved.
    pub kind: usize,
    /// User word (e.g. a remote address), carried unchanged.
    pub user: u32,
}

impl Header {
    /// The 128-bit header with its check bits.
    pub fn pack(&self) -> u128 {
        let values = [
            self.dst[0] as u128,
            self.dst[1] as u128,
            self.dst[2] as u128,
            self.dst_port as u128,
            self.src[0] as u128,
            self.src[1] as u128,
            self.src[2] as u128,
            self.src_port as u128,
            self.length as u128,
            self.tag as u128,
            self.hops as u128,
            self.kind as u128,
            self.user as u128,
        ];
        let mut bits = 0u128;
        for (v, (name, lo, width)) in values.iter().zip(FIELDS) {
            assert!(*v < 1 << width, "header field {name} = {v} does not fit {width} bits");
            bits |= v << lo;
        }
        with_ecc(bits)
    }

    /// The fields of a header (the check bits are not looked at).
    pub fn unpack(bits: u128) -> Header {
        let f = |name: &str| {
            let (lo, width) = field(name);
            ((bits >> lo) & ((1 << width) - 1)) as usize
        };
        Header {
            dst: [f("dst_x"), f("dst_y"), f("dst_z")],
            dst_port: f("dst_port"),
            src: [f("src_x"), f("src_y"), f("src_z")],
            src_port: f("src_port"),
            length: f("length"),
            tag: f("tag") as u16,
            hops: f("hops"),
            kind: f("kind"),
            user: f("user") as u32,
        }
    }
}

/// Codeword position (1..=127) of data bit `j` (0..120): the positions that are not powers of two.
pub fn position(j: usize) -> usize {
    (1..128usize).filter(|p| !p.is_power_of_two()).nth(j).unwrap()
}

fn data_masks() -> [u128; 7] {
    let mut masks = [0u128; 7];
    for j in 0..ECC_LO {
        let p = position(j);
        for (k, m) in masks.iter_mut().enumerate() {
            if p >> k & 1 == 1 {
                *m |= 1 << j;
            }
        }
    }
    masks
}

const DATA: u128 = (1 << ECC_LO) - 1;

/// Bits 119:0 of `bits` with the check byte computed for them.
pub fn with_ecc(bits: u128) -> u128 {
    let data = bits & DATA;
    let mut check = 0u128;
    for (k, m) in data_masks().iter().enumerate() {
        check |= ((data & m).count_ones() as u128 & 1) << k;
    }
    let overall = (data.count_ones() + check.count_ones()) as u128 & 1;
    data | (check | overall << 7) << ECC_LO
}

/// What a decoder makes of a received header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Checked {
    /// No bit was flipped; the header as received.
    Clean(u128),
    /// One bit was flipped; the corrected header.
    Corrected(u128),
    /// Two bits were flipped: detected, not correctable.
    Uncorrectable,
}

/// Software reference decoder.
pub fn check(bits: u128) -> Checked {
    let data = bits & DATA;
    let ecc = bits >> ECC_LO;
    let recomputed = with_ecc(data) >> ECC_LO;
    let syndrome = ((ecc ^ recomputed) & 0x7F) as usize;
    let odd = bits.count_ones() & 1 == 1;
    match (syndrome, odd) {
        (0, false) => Checked::Clean(bits),
        (_, false) => Checked::Uncorrectable,
        (0, true) => Checked::Corrected(with_ecc(data)),                        // the overall parity bit itself
        (s, true) if s.is_power_of_two() => Checked::Corrected(with_ecc(data)), // a check bit
        (s, true) => {
            let j = (0..ECC_LO).find(|j| position(*j) == s).unwrap();
            Checked::Corrected(with_ecc(data ^ 1 << j))
        }
    }
}

/// Netlist: the check byte for the 120 data bits `data`.
pub fn ecc_netlist(net: &mut Netlist, data: Wire) -> Wire {
    assert_eq!(net.width(data), ECC_LO);
    let mut checks = vec![];
    for m in data_masks() {
        let mask = net.constant(m, ECC_LO);
        let masked = net.and(data, mask);
        checks.push(net.parity(masked));
    }
    let mut check = checks[6];
    for k in (0..6).rev() {
        check = net.concat(check, checks[k]);
    }
    let all = net.concat(check, data);
    let overall = net.parity(all);
    net.concat(overall, check)
}

/// Netlist decoder of a 128-bit header: `(corrected bits 119:0, single error, double error)`.
pub fn correct_netlist(net: &mut Netlist, header: Wire) -> (Wire, Wire, Wire) {
    let data = net.slice(header, 0, ECC_LO);
    let ecc = net.slice(header, ECC_LO, 8);
    let fresh = ecc_netlist(net, data);
    let diff = net.xor(ecc, fresh);
    let syndrome = net.slice(diff, 0, 7);
    let odd = net.parity(header);
    let nonzero = net.nonzero(syndrome);
    let even = net.not(odd);
    let double = net.and(nonzero, even);
    // Flip the data bit the syndrome names (its one-hot position, gathered into data order).
    let one = net.constant(1, 128);
    let onehot = net.shl(one, syndrome);
    let mut flip = net.bit(onehot, position(ECC_LO - 1));
    for j in (0..ECC_LO - 1).rev() {
        let b = net.bit(onehot, position(j));
        flip = net.concat(flip, b);
    }
    let zero = net.constant(0, ECC_LO);
    let flip = net.mux(odd, flip, zero);
    let corrected = net.xor(data, flip);
    (corrected, odd, double)
}

/// The `tkeep` of a packet's last beat of `bytes` bytes for a payload of `length` bytes: length
/// mod `bytes` bytes, all of them when that is 0 (and for a header-only packet, whose last beat
/// is the header).
pub fn last_keep<'d>(d: &'d Design, length: Sig<'d>, bytes: usize) -> Sig<'d> {
    let rem = length.bits(0, bytes.trailing_zeros() as usize);
    let ones = d.lit(u128::MAX, bytes);
    let keep = rem.is_zero().mux(ones, !ones.shl(rem));
    length.is_zero().mux(ones, keep)
}

#[cfg(test)]
mod tests {
    use super::*;
    use weft_hdl::netlist::eval::Evaluator;
    use weft_hdl::testbench::Rng;

    fn random_header(rng: &mut Rng) -> u128 {
        let bits = (rng.next_u64() as u128) << 64 | rng.next_u64() as u128;
        with_ecc(bits)
    }

    #[test]
    fn fields_tile_the_header() {
        let mut next = 0;
        for (_, lo, width) in FIELDS {
            assert_eq!(lo, next);
            next += width;
        }
        assert_eq!(next, 128);
        let h = Header { dst: [3, 1, 0], dst_port: 1, src: [0, 1, 2], src_port: 3, length: 1024, tag: 0xBEEF, hops: 5, kind: 0, user: 0xDEAD_BEEF };
        assert_eq!(Header::unpack(h.pack()), h);
        assert_eq!(h.pack() >> 44 & 0x3FFF, 1024);
    }

    #[test]
    fn data_positions_are_the_non_powers_of_two() {
        assert_eq!((position(0), position(1), position(2), position(3)), (3, 5, 6, 7));
        assert_eq!(position(ECC_LO - 1), 127);
    }

    /// Every single-bit error of 200 random headers is corrected; every double error detected.
    #[test]
    fn reference_decoder_corrects_one_and_detects_two_flipped_bits() {
        let mut rng = Rng::new(7);
        for _ in 0..200 {
            let h = random_header(&mut rng);
            assert_eq!(check(h), Checked::Clean(h));
            for b in 0..128 {
                assert_eq!(check(h ^ 1 << b), Checked::Corrected(h), "bit {b}");
            }
            let a = rng.below(128);
            let b = (a + 1 + rng.below(127)) % 128;
            assert_eq!(check(h ^ 1 << a ^ 1 << b), Checked::Uncorrectable, "bits {a}, {b}");
        }
    }

    #[test]
    fn netlist_encoder_and_decoder_match_the_reference() {
        let mut net = Netlist::new();
        let header = net.input("header", 128);
        let data = net.slice(header, 0, ECC_LO);
        let ecc = ecc_netlist(&mut net, data);
        let (corrected, single, double) = correct_netlist(&mut net, header);
        for (name, w) in [("ecc", ecc), ("corrected", corrected), ("single", single), ("double", double)] {
            net.output(name, w);
        }
        let mut eval = Evaluator::new(net);
        let input = eval.input("header").unwrap();
        let mut rng = Rng::new(11);
        for _ in 0..300 {
            let h = random_header(&mut rng);
            let flips = rng.below(3) as usize;
            let mut bad = h;
            let a = rng.below(128);
            let b = (a + 1 + rng.below(127)) % 128;
            if flips >= 1 {
                bad ^= 1 << a;
            }
            if flips == 2 {
                bad ^= 1 << b;
            }
            eval.set(input, bad);
            eval.settle();
            assert_eq!(eval.output("ecc").unwrap(), with_ecc(bad) >> ECC_LO);
            let got = (eval.output("corrected").unwrap(), eval.output("single").unwrap(), eval.output("double").unwrap());
            match check(bad) {
                Checked::Clean(v) => assert_eq!(got, (v & DATA, 0, 0)),
                Checked::Corrected(v) => assert_eq!(got, (v & DATA, 1, 0), "flipped bit {a}"),
                Checked::Uncorrectable => assert_eq!((got.1, got.2), (0, 1)),
            }
        }
    }
}
