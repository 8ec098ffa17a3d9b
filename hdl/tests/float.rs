//! Floating-point operators, evaluated as the built-in simulator runs them (the netlist with its
//! pipeline registers and back-pressure), against independent references: Rust's native `f32`
//! for binary32, binary64-then-round for binary16 and bfloat16. Every stage count is tested.

use weft_hdl::float::reference::{self, native_f32, native_f64, FloatOp};
use weft_hdl::float::{operator_netlist, operator_netlist_with, vectors, FloatFormat, FloatOperator, Multiplier};
use weft_hdl::netlist::eval::Evaluator;
use weft_hdl::netlist::Netlist;
use weft_hdl::testbench::Rng;

/// Streams `operands` through the operator with random back-pressure; returns results in order.
fn stream(net: Netlist, width: usize, operands: &[Vec<u128>], ready_percent: u64, seed: u64) -> Vec<u128> {
    let mut ev = Evaluator::new(net);
    let valid = ev.input("s_axis_tvalid").unwrap();
    let ready = ev.input("m_axis_tready").unwrap();
    let data = ev.input("s_axis_tdata").unwrap();
    let mut rng = Rng::new(seed);
    ev.set(valid, 0);
    ev.settle();
    ev.clock(true);
    let mut results = vec![];
    let mut next = 0;
    let mut cycles = 0;
    while results.len() < operands.len() {
        cycles += 1;
        assert!(cycles < 100 * operands.len() + 1000, "pipeline stopped producing results");
        let offer = next < operands.len() && rng.chance(80);
        ev.set(valid, offer as u128);
        if offer {
            for (i, value) in operands[next].iter().enumerate() {
                ev.set_bits(data, i * width, width, *value);
            }
        }
        ev.set(ready, rng.chance(ready_percent) as u128);
        ev.settle();
        if ev.output("m_axis_tvalid") == Some(1) && rng_free(&ev) {
            results.push(ev.output("m_axis_tdata").unwrap());
        }
        if offer && ev.output("s_axis_tready") == Some(1) {
            next += 1;
        }
        ev.clock(false);
    }
    results
}

fn rng_free(ev: &Evaluator) -> bool {
    // The beat transfers when the sink is ready (tready is an input; read back its value).
    ev.get(ev.input("m_axis_tready").unwrap()) == 1
}

fn reference_oracle(op: FloatOperator, f: FloatFormat, a: u128, b: u128) -> u128 {
    match op {
        FloatOperator::Add => FloatOp::Add.apply(f, a, b),
        FloatOperator::Sub => FloatOp::Sub.apply(f, a, b),
        FloatOperator::Mul => FloatOp::Mul.apply(f, a, b),
        FloatOperator::Div => FloatOp::Div.apply(f, a, b),
        FloatOperator::Sqrt => reference::sqrt(f, a),
    }
}

fn check(op: FloatOperator, f: FloatFormat, stages: usize, pairs: &[(u128, u128)], seed: u64) {
    check_with(op, f, stages, pairs, seed, Multiplier::DspShift);
}

fn check_with(op: FloatOperator, f: FloatFormat, stages: usize, pairs: &[(u128, u128)], seed: u64, multiplier: Multiplier) {
    let net = operator_netlist_with(op, f, stages, multiplier).unwrap();
    assert_eq!(net.latency(), stages, "{f} {} latency", op.name());
    let operands: Vec<Vec<u128>> = pairs.iter().map(|(a, b)| if op.operands() == 1 { vec![*a] } else { vec![*a, *b] }).collect();
    let results = stream(net, f.width(), &operands, 70, seed);
    for ((a, b), got) in pairs.iter().zip(results) {
        let want = match f {
            FloatFormat::BINARY32 => native_f32(op, *a as u32, *b as u32) as u128,
            FloatFormat::BINARY64 => native_f64(op, *a as u64, *b as u64) as u128,
            _ => reference_oracle(op, f, *a, *b),
        };
        assert_eq!(got, want, "{f} {} ({multiplier:?}) with {stages} stages (seed {seed}): a={a:#x} b={b:#x} got {got:#x} want {want:#x}", op.name());
    }
}

fn random_pairs(f: FloatFormat, count: usize, seed: u64) -> Vec<(u128, u128)> {
    let mut rng = Rng::new(seed);
    (0..count).map(|_| vectors::pair(&mut rng, f)).collect()
}

#[test]
fn binary32_every_operator_every_depth() {
    let mut pairs: Vec<(u128, u128)> = vectors::binary32_hard_cases().iter().map(|(a, b)| (*a as u128, *b as u128)).collect();
    pairs.extend(random_pairs(FloatFormat::BINARY32, 1500, 11));
    for op in FloatOperator::ALL {
        for stages in 0..=op.max_stages(FloatFormat::BINARY32) {
            check(op, FloatFormat::BINARY32, stages, &pairs, 1000 + stages as u64);
        }
    }
}

#[test]
fn binary32_many_random_operands_at_shipped_depth() {
    for op in FloatOperator::ALL {
        let stages = op.max_stages(FloatFormat::BINARY32) / 2;
        check(op, FloatFormat::BINARY32, stages, &random_pairs(FloatFormat::BINARY32, 30_000, 21), 7);
    }
}

#[test]
fn binary16_and_bfloat16_every_operator_every_depth() {
    for f in [FloatFormat::BINARY16, FloatFormat::BFLOAT16] {
        let pairs = random_pairs(f, 1500, 31);
        for op in FloatOperator::ALL {
            for stages in 0..=op.max_stages(f) {
                check(op, f, stages, &pairs, 2000 + stages as u64);
            }
        }
    }
}

/// binary64 against native `f64`: random operands of every class (subnormals, infinities, NaNs,
/// near-overflow), every stage count.
#[test]
fn binary64_every_operator_every_depth() {
    let f = FloatFormat::BINARY64;
    let pairs = random_pairs(f, 600, 61);
    for op in FloatOperator::ALL {
        for stages in 0..=op.max_stages(f) {
            check(op, f, stages, &pairs, 3000 + stages as u64);
        }
    }
}

#[test]
fn binary64_many_random_operands_at_shipped_depth() {
    let f = FloatFormat::BINARY64;
    for op in FloatOperator::ALL {
        check(op, f, op.max_stages(f) / 2, &random_pairs(f, 20_000, 71), 9);
    }
}

#[test]
fn binary16_exhaustive_square_root() {
    let f = FloatFormat::BINARY16;
    let pairs: Vec<(u128, u128)> = (0..1u128 << 16).map(|a| (a, 0)).collect();
    check(FloatOperator::Sqrt, f, 4, &pairs, 5);
}

#[test]
fn reference_agrees_with_native_f32() {
    // The binary64-then-round reference is itself checked against native binary32.
    let f = FloatFormat::BINARY32;
    for (a, b) in random_pairs(f, 200_000, 41) {
        for (op, fop) in [(FloatOperator::Add, FloatOp::Add), (FloatOperator::Mul, FloatOp::Mul), (FloatOperator::Div, FloatOp::Div)] {
            assert_eq!(fop.apply(f, a, b), native_f32(op, a as u32, b as u32) as u128, "{fop:?} {a:#x} {b:#x}");
        }
        assert_eq!(reference::sqrt(f, a), native_f32(FloatOperator::Sqrt, a as u32, 0) as u128, "sqrt {a:#x}");
    }
}

#[test]
fn stage_counts_past_the_deepest_split_are_rejected() {
    let max = FloatOperator::Add.max_stages(FloatFormat::BINARY32);
    let err = operator_netlist(FloatOperator::Add, FloatFormat::BINARY32, max + 1).unwrap_err();
    assert!(matches!(err, weft_hdl::Error::Parameter(_)), "{err:?}");
    let err = err.to_string();
    assert!(err.contains(&format!("0..={max}")), "{err}");
    assert!(FloatFormat::new(1, 10).unwrap_err().to_string().contains("2..=11"));
    assert!(FloatFormat::new(8, 0).unwrap_err().to_string().contains("1..=52"));
}

/// binary32 operands whose product (or quotient) lands around the subnormal range and the
/// smallest normals, with subnormal operands of every leading-zero count: the cases random
/// classes rarely reach, where a multiplier or divider must shift by the exponent.
fn near_underflow_pairs(op: FloatOperator, count: usize, seed: u64) -> Vec<(u128, u128)> {
    let mut rng = Rng::new(seed);
    (0..count)
        .map(|_| {
            let sign = |rng: &mut Rng| (rng.below(2) as u32) << 31;
            let frac = |rng: &mut Rng| rng.next_u64() as u32 & 0x7F_FFFF;
            // a: a subnormal with 0..=22 leading zeros in its fraction, or a normal.
            let (a, a_exp) = if rng.chance(50) {
                let lz = rng.below(23) as u32;
                let f = ((frac(&mut rng) | 0x40_0000) >> lz).max(1);
                (f, 1 - (lz as i64) - 1)
            } else {
                let e = 1 + rng.below(254) as i64;
                ((e as u32) << 23 | frac(&mut rng), e)
            };
            // b: the exponent that puts the result's exponent near the bottom of the range.
            let k = rng.below(60) as i64 - 30;
            let b_exp = match op {
                FloatOperator::Div => a_exp - k,
                _ => 127 - a_exp + k,
            };
            let b = if b_exp < 1 { frac(&mut rng) >> (1 - b_exp).min(23) } else { ((b_exp.min(254) as u32) << 23) | frac(&mut rng) };
            let (a, b) = (a | sign(&mut rng), b | sign(&mut rng));
            if rng.chance(50) {
                (a as u128, b as u128)
            } else {
                (b as u128, a as u128)
            }
        })
        .collect()
}

/// Sums and differences whose result lands near or below the smallest normal: operands with
/// exponent fields 0..=30 (subnormals of every leading-zero count among them), often close in
/// magnitude so that they cancel, where the adder's normalisation must stop at the exponent.
fn small_sum_pairs(count: usize, seed: u64) -> Vec<(u128, u128)> {
    let mut rng = Rng::new(seed);
    (0..count)
        .map(|_| {
            let sign = |rng: &mut Rng| (rng.below(2) as u32) << 31;
            let small = |rng: &mut Rng| ((rng.below(31) as u32) << 23 | rng.next_u64() as u32 & 0x7F_FFFF) >> (rng.below(24) * u64::from(rng.chance(20)));
            let a = small(&mut rng);
            // b: independent, or a with its low bits changed (a near cancellation).
            let b = if rng.chance(50) { a ^ (rng.next_u64() as u32 & ((1 << rng.below(24)) - 1)) } else { small(&mut rng) };
            ((a | sign(&mut rng)) as u128, (b | sign(&mut rng)) as u128)
        })
        .collect()
}

#[test]
fn binary32_add_and_sub_near_underflow_every_depth() {
    let pairs = small_sum_pairs(4000, 61);
    for op in [FloatOperator::Add, FloatOperator::Sub] {
        for stages in 0..=op.max_stages(FloatFormat::BINARY32) {
            check(op, FloatFormat::BINARY32, stages, &pairs, 4000 + stages as u64);
        }
    }
}

#[test]
fn binary32_mul_and_div_near_underflow_every_depth() {
    for op in [FloatOperator::Mul, FloatOperator::Div] {
        let pairs = near_underflow_pairs(op, 4000, 51);
        for stages in 0..=op.max_stages(FloatFormat::BINARY32) {
            check(op, FloatFormat::BINARY32, stages, &pairs, 3000 + stages as u64);
        }
    }
}

/// binary32 products of sparse significands (the hidden bit and at most two fraction bits, or
/// at most two bits of a subnormal), and of significands whose product has one lone bit up to
/// 26 places below the rest, with exponents that put the result anywhere from the
/// smallest normals down past the smallest subnormal: their products are exact ties or carry
/// one lone bit far below the guard bit, so the rounding depends on every bit the sticky OR
/// takes, in each of the multiplier's windows.
fn sparse_product_pairs(count: usize, seed: u64) -> Vec<(u128, u128)> {
    let mut rng = Rng::new(seed);
    let sparse = |rng: &mut Rng| {
        let bit = |rng: &mut Rng| if rng.chance(30) { 0 } else { 1u32 << rng.below(23) };
        let frac = bit(rng) | bit(rng);
        if rng.chance(30) {
            frac.max(1)
        } else {
            (1 + rng.below(100) as u32) << 23 | frac
        }
    };
    // Odd x, y < 2^24 with x·y = 1 + k·2^n: the product's lowest bit lies n places below the
    // next one (x random, y its inverse modulo 2^n, kept when it has at most 24 bits).
    let lone_low_bit = |rng: &mut Rng| loop {
        let n = 2 + rng.below(25) as u32;
        let x = (rng.next_u64() as u32 & 0xFF_FFFF) | 1;
        let mut y = x as u64;
        for _ in 0..6 {
            y = y.wrapping_mul(2u64.wrapping_sub((x as u64).wrapping_mul(y)));
        }
        let y = (y & ((1u64 << n) - 1)) as u32;
        if y < 1 << 24 {
            return (x, y);
        }
    };
    // A normal significand field (hidden bit at 23, its exponent field random), or a subnormal one.
    let place = |rng: &mut Rng, odd: u32| {
        let top = 31 - odd.leading_zeros();
        if rng.chance(30) && top < 23 {
            odd << rng.below(23 - top as u64)
        } else {
            (1 + rng.below(100) as u32) << 23 | (odd << (23 - top)) & 0x7F_FFFF
        }
    };
    (0..count)
        .map(|_| {
            let (a, b) = if rng.chance(50) {
                let (x, y) = lone_low_bit(&mut rng);
                (place(&mut rng, x), place(&mut rng, y) & 0x7F_FFFF)
            } else {
                (sparse(&mut rng), sparse(&mut rng) & 0x7F_FFFF)
            };
            // b's exponent field: the product's exponent lands 0..=55 below the normal range's bottom.
            let a_exp = ((a >> 23).max(1)) as i64;
            let b_exp = 127 + 2 - a_exp - rng.below(56) as i64;
            let b = if (1..=254).contains(&b_exp) { (b_exp as u32) << 23 | b } else { b.max(1) };
            let sign = |rng: &mut Rng| (rng.below(2) as u32) << 31;
            ((a | sign(&mut rng)) as u128, (b | sign(&mut rng)) as u128)
        })
        .collect()
}

#[test]
fn binary32_mul_sparse_products_every_depth() {
    let pairs = sparse_product_pairs(20_000, 71);
    for stages in 0..=FloatOperator::Mul.max_stages(FloatFormat::BINARY32) {
        check(FloatOperator::Mul, FloatFormat::BINARY32, stages, &pairs, 5000 + stages as u64);
    }
}

/// Every operand pair of small formats through the multiplier at every depth, against the
/// reference: the narrowest window, shift and exponent widths the generator must still get
/// right. Formats whose product of two subnormals can round to a nonzero value (bias below
/// man + 2) are refused with the allowed range.
#[test]
fn small_formats_mul_exhaustive_every_depth() {
    let refused = operator_netlist(FloatOperator::Mul, FloatFormat::new(3, 2).unwrap(), 0).unwrap_err().to_string();
    assert!(refused.contains("allowed fraction widths with 3 exponent bits: 1..=1"), "{refused}");
    let refused = operator_netlist(FloatOperator::Mul, FloatFormat::new(2, 1).unwrap(), 0).unwrap_err().to_string();
    assert!(refused.contains("3 or more exponent bits"), "{refused}");
    for (exp, man) in [(3, 1), (4, 3), (5, 2), (4, 5)] {
        let f = FloatFormat::new(exp, man).unwrap();
        let values = 1u128 << f.width();
        let pairs: Vec<(u128, u128)> = (0..values).flat_map(|a| (0..values).map(move |b| (a, b))).collect();
        for stages in 0..=FloatOperator::Mul.max_stages(f) {
            check(FloatOperator::Mul, f, stages, &pairs, 6000 + stages as u64);
        }
    }
}

/// Formats whose product splits into the shifting multiply's 17-bit pieces in every way (a last
/// piece of exactly 17 bits, of 1 and of 2 bits, one piece), with operands whose product lands
/// near underflow, near overflow or anywhere: every depth against the reference.
#[test]
fn mul_piece_layouts_near_the_range_ends_every_depth() {
    for (exp, man) in [(8, 16), (8, 8), (9, 17), (5, 10), (8, 7)] {
        let f = FloatFormat::new(exp, man).unwrap();
        let pairs = range_end_pairs(f, 3000, 81 + man as u64);
        for stages in 0..=FloatOperator::Mul.max_stages(f) {
            check(FloatOperator::Mul, f, stages, &pairs, 7000 + stages as u64);
        }
    }
}

/// `count` operand pairs of `f` whose product lands near underflow, near overflow or anywhere,
/// with sparse fractions among them.
fn range_end_pairs(f: FloatFormat, count: usize, seed: u64) -> Vec<(u128, u128)> {
    let (exp, man) = (f.exp, f.man);
    let mut rng = Rng::new(seed);
    let (bias, emax) = (f.bias(), f.exp_max() as i64 - 1);
    let frac = |rng: &mut Rng| {
        let random = rng.next_u64() as u128 & ((1 << man) - 1);
        if rng.chance(40) {
            random & (random >> rng.below(man as u64))
        } else {
            random
        }
    };
    (0..count)
        .map(|_| {
            let ea = if rng.chance(25) { 0 } else { 1 + rng.below(emax as u64) as i64 };
            // The result's exponent near the bottom, near the top, or anywhere.
            let target = match rng.below(3) {
                0 => -(2 * man as i64 + 4) + rng.below(2 * man as u64 + 8) as i64,
                1 => emax - 3 + rng.below(5) as i64,
                _ => rng.below(emax as u64) as i64,
            };
            let eb = (target + bias - ea.max(1)).clamp(0, emax);
            let pack = |rng: &mut Rng, e: i64| ((rng.below(2) as u128) << (exp + man)) | (e as u128) << man | frac(rng);
            (pack(&mut rng, ea), pack(&mut rng, eb))
        })
        .collect()
}

/// The multiplier with its shift in LUTs ([`Multiplier::LutShift`], the binary32 product its
/// only DSP multiply) against the references: binary32's hard cases, sparse products and
/// operands near underflow and overflow at every depth; every pair of small formats; and
/// formats of other shift widths near their range ends.
#[test]
fn lut_shift_mul_every_depth() {
    let f = FloatFormat::BINARY32;
    let mut pairs: Vec<(u128, u128)> = vectors::binary32_hard_cases().into_iter().map(|(a, b)| (a as u128, b as u128)).collect();
    pairs.extend(sparse_product_pairs(6000, 171));
    pairs.extend(range_end_pairs(f, 6000, 172));
    pairs.extend(near_underflow_pairs(FloatOperator::Mul, 3000, 173));
    for stages in 0..=FloatOperator::Mul.max_stages(f) {
        check_with(FloatOperator::Mul, f, stages, &pairs, 8000 + stages as u64, Multiplier::LutShift);
    }
    for (exp, man) in [(3, 1), (4, 3), (5, 2)] {
        let f = FloatFormat::new(exp, man).unwrap();
        let values = 1u128 << f.width();
        let pairs: Vec<(u128, u128)> = (0..values).flat_map(|a| (0..values).map(move |b| (a, b))).collect();
        for stages in 0..=FloatOperator::Mul.max_stages(f) {
            check_with(FloatOperator::Mul, f, stages, &pairs, 8100 + stages as u64, Multiplier::LutShift);
        }
    }
    for (exp, man) in [(8, 16), (5, 10), (11, 52), (8, 7)] {
        let f = FloatFormat::new(exp, man).unwrap();
        let pairs = range_end_pairs(f, 2000, 181 + man as u64);
        for stages in 0..=FloatOperator::Mul.max_stages(f) {
            check_with(FloatOperator::Mul, f, stages, &pairs, 8200 + stages as u64, Multiplier::LutShift);
        }
    }
}
