//! Fixed-point operations and float↔fixed conversions and compare, at every stage count, on the
//! netlist the built-in simulator runs, against independent references: the num-traits golden
//! model for fixed point, Rust's native casts (`as`, correctly rounded, saturating) and
//! `partial_cmp` for conversions and compare.

use weft_hdl::fixed::{reference, FixedFormat, FixedOp, FixedOperation, Overflow, Rounding, MAX_STAGES};
use weft_hdl::float::convert::{self, COMPARE_MAX_STAGES, FROM_FIXED_MAX_STAGES, TO_FIXED_MAX_STAGES};
use weft_hdl::float::reference::{from_f64, to_f64};
use weft_hdl::float::{vectors, FloatFormat};
use weft_hdl::netlist::eval::Evaluator;
use weft_hdl::netlist::{Netlist, Wire};
use weft_hdl::testbench::Rng;

/// Evaluates a combinational-or-pipelined netlist with inputs `a` (and `b`): feeds one operand set
/// per cycle and collects the result `latency` cycles later.
fn run(net: Netlist, operands: &[(u128, u128)]) -> Vec<u128> {
    let latency = net.latency();
    let mut ev = Evaluator::new(net);
    let a = ev.input("a").unwrap();
    let b = ev.input("b");
    let mut results = vec![];
    for i in 0..operands.len() + latency {
        if let Some((x, y)) = operands.get(i) {
            ev.set(a, *x);
            if let Some(b) = b {
                ev.set(b, *y);
            }
        }
        ev.settle();
        if i >= latency {
            results.push(ev.output("y").unwrap());
        }
        ev.clock(false);
    }
    results
}

fn netlist(inputs: &[usize], build: impl FnOnce(&mut Netlist, &[Wire]) -> Result<Wire, weft_hdl::Error>) -> Result<Netlist, weft_hdl::Error> {
    let mut net = Netlist::new();
    let wires: Vec<Wire> = inputs.iter().zip(["a", "b"]).map(|(w, n)| net.input(n, *w)).collect();
    let y = build(&mut net, &wires)?;
    net.output("y", y);
    Ok(net)
}

fn random_format(rng: &mut Rng) -> FixedFormat {
    let signed = rng.chance(60);
    let width = match rng.below(4) {
        0 => [2, 8, 16, 32, 64][rng.below(5) as usize],
        _ => 2 + rng.below(40) as usize,
    };
    let frac = if rng.chance(20) { 0 } else { rng.below(width as u64 + 1) as usize };
    FixedFormat::new(signed, width, frac).unwrap()
}

/// Raw values: the range's ends, zero, ±1 and random ones.
fn raw_value(rng: &mut Rng, f: FixedFormat) -> i128 {
    match rng.below(8) {
        0 => f.min_raw(),
        1 => f.max_raw(),
        2 => [0, 1, -1][rng.below(3) as usize].clamp(f.min_raw(), f.max_raw()),
        _ => f.raw(rng.next_u64() as u128 | ((rng.next_u64() as u128) << 64)),
    }
}

#[test]
fn fixed_operations_match_the_golden_model_at_every_depth() {
    let mut rng = Rng::new(0xF1);
    let mut checked = 0;
    while checked < 300 {
        let op = FixedOp::ALL[rng.below(3) as usize];
        let (a, b, out) = (random_format(&mut rng), random_format(&mut rng), random_format(&mut rng));
        let rounding = if rng.chance(50) { Rounding::Truncate } else { Rounding::NearestEven };
        let overflow = if rng.chance(50) { Overflow::Wrap } else { Overflow::Saturate };
        let operation = FixedOperation { op, a, b, out, rounding, overflow };
        if operation.exact().is_err() {
            continue;
        }
        checked += 1;
        let operands: Vec<(i128, i128)> = (0..200).map(|_| (raw_value(&mut rng, a), raw_value(&mut rng, b))).collect();
        let bits: Vec<(u128, u128)> = operands.iter().map(|(x, y)| (a.bits(*x), b.bits(*y))).collect();
        for stages in 0..=MAX_STAGES {
            let net = netlist(&[a.width, b.width], |net, w| operation.build(net, stages, w[0], w[1])).unwrap();
            assert_eq!(net.latency(), stages);
            for ((x, y), got) in operands.iter().zip(run(net, &bits)) {
                let want = reference::apply::<i128>(&operation, *x, *y);
                assert_eq!(out.raw(got), want, "{operation:?} at {stages} stages: {x} {} {y}", op.name());
            }
        }
    }
}

#[test]
fn the_golden_model_follows_the_definitions() {
    // sfix8_En4: 1.5 * 1.5 = 2.25 exactly; into sfix8_En1 nearest-even gives 2.0 (2.25 → 4/2).
    let q = |w, f| FixedFormat::signed(w, f);
    let mul = FixedOperation { op: FixedOp::Mul, a: q(8, 4), b: q(8, 4), out: q(8, 1), rounding: Rounding::NearestEven, overflow: Overflow::Saturate };
    assert_eq!(reference::apply::<i128>(&mul, 24, 24), 4);
    // 2.75 → nearest even at 0.5 steps: 2.75 is a tie between 2.5 (5) and 3.0 (6): even is 6.
    let add = FixedOperation { op: FixedOp::Add, a: q(8, 2), b: q(8, 2), out: q(8, 1), rounding: Rounding::NearestEven, overflow: Overflow::Wrap };
    assert_eq!(reference::apply::<i128>(&add, 10, 1), 6);
    // Truncation of −0.25 toward −∞ at 0.5 steps is −0.5.
    let trunc = FixedOperation { rounding: Rounding::Truncate, ..add };
    assert_eq!(reference::apply::<i128>(&trunc, -1, 0), -1);
    // 127 + 1 wraps to −128 or saturates at 127 in sfix8_En0.
    let wrap = FixedOperation { op: FixedOp::Add, a: q(8, 0), b: q(8, 0), out: q(8, 0), rounding: Rounding::Truncate, overflow: Overflow::Wrap };
    assert_eq!(reference::apply::<i128>(&wrap, 127, 1), -128);
    assert_eq!(reference::apply::<i128>(&FixedOperation { overflow: Overflow::Saturate, ..wrap }, 127, 1), 127);
}

#[test]
fn impossible_fixed_parameters_are_rejected_naming_the_range() {
    assert!(FixedFormat::new(true, 0, 0).unwrap_err().to_string().contains("width 0: allowed range 1..=64"));
    assert!(FixedFormat::new(false, 65, 0).unwrap_err().to_string().contains("width 65: allowed range 1..=64"));
    assert!(FixedFormat::new(true, 16, 17).unwrap_err().to_string().contains("fraction bits 17: allowed range 0..=16"));
    let u64f = FixedFormat::unsigned(64, 0);
    let wide = FixedOperation { op: FixedOp::Mul, a: u64f, b: u64f, out: u64f, rounding: Rounding::Truncate, overflow: Overflow::Wrap };
    assert!(wide.exact().unwrap_err().to_string().contains("needs 129 bits, allowed range 1..=127"));
    let ok = FixedOperation { a: FixedFormat::signed(16, 8), b: FixedFormat::signed(16, 8), ..wide };
    let e = netlist(&[16, 16], |net, w| ok.build(net, 3, w[0], w[1])).unwrap_err();
    assert!(matches!(e, weft_hdl::Error::Parameter(_)) && e.to_string().contains("stages 3: allowed range 0..=2"), "{e}");
}

const FORMATS: [FloatFormat; 4] = [FloatFormat::BINARY32, FloatFormat::BINARY64, FloatFormat::BINARY16, FloatFormat::BFLOAT16];

fn conversion_formats() -> Vec<FixedFormat> {
    let mut formats = vec![
        FixedFormat::signed(32, 0),
        FixedFormat::unsigned(32, 0),
        FixedFormat::signed(64, 0),
        FixedFormat::unsigned(64, 0),
        FixedFormat::signed(16, 8),
        FixedFormat::signed(18, 17),
        FixedFormat::unsigned(8, 8),
        FixedFormat::signed(2, 1),
        FixedFormat::unsigned(1, 0),
    ];
    let mut rng = Rng::new(0xC0);
    formats.extend((0..12).map(|_| random_format(&mut rng)));
    formats
}

/// The exact value of a raw fixed-point number rounded to `format` (nearest even).
fn fixed_to_float_reference(format: FloatFormat, fixed: FixedFormat, raw: i128) -> u128 {
    if format == FloatFormat::BINARY32 {
        // i128 → f32 is correctly rounded; scaling by a power of two is then exact.
        let scaled = (raw as f32) * 2f32.powi(-(fixed.frac as i32));
        scaled.to_bits() as u128
    } else if format == FloatFormat::BINARY64 {
        // The same in binary64.
        ((raw as f64) * 2f64.powi(-(fixed.frac as i32))).to_bits() as u128
    } else {
        assert!(fixed.width <= 53, "exact in binary64");
        from_f64(format, raw as f64 * 2f64.powi(-(fixed.frac as i32)))
    }
}

#[test]
fn fixed_to_float_matches_native_rounding_at_every_depth() {
    let mut rng = Rng::new(0xF2);
    for format in FORMATS {
        for fixed in conversion_formats() {
            if ![FloatFormat::BINARY32, FloatFormat::BINARY64].contains(&format) && fixed.width > 53 {
                continue;
            }
            let raws: Vec<i128> = (0..300).map(|_| raw_value(&mut rng, fixed)).collect();
            let bits: Vec<(u128, u128)> = raws.iter().map(|r| (fixed.bits(*r), 0)).collect();
            for stages in 0..=FROM_FIXED_MAX_STAGES {
                let net = netlist(&[fixed.width], |net, w| convert::from_fixed(net, format, fixed, stages, w[0])).unwrap();
                for (raw, got) in raws.iter().zip(run(net, &bits)) {
                    let want = fixed_to_float_reference(format, fixed, *raw);
                    assert_eq!(got, want, "{fixed} {raw} to {format} at {stages} stages: got {got:#x}, want {want:#x}");
                }
            }
        }
    }
}

/// Rust's float → integer `as` semantics on the scaled value: truncation toward zero (or
/// nearest even first), saturation at the range's ends, NaN → 0.
fn float_to_fixed_reference(format: FloatFormat, fixed: FixedFormat, rounding: Rounding, bits: u128) -> i128 {
    let scaled = to_f64(format, bits) * 2f64.powi(fixed.frac as i32); // exact: a power of two
    let rounded = match rounding {
        Rounding::Truncate => scaled.trunc(),
        Rounding::NearestEven => scaled.round_ties_even(),
    };
    (rounded as i128).clamp(fixed.min_raw(), fixed.max_raw())
}

/// Floats near the fixed format's grid: exact grid points, halfway points and quarter points,
/// inside and just outside the range, plus class-biased random floats.
fn grid_operand(rng: &mut Rng, format: FloatFormat, fixed: FixedFormat) -> u128 {
    if rng.chance(30) {
        return vectors::operand(rng, format);
    }
    let raw = raw_value(rng, fixed) + rng.below(3) as i128 - 1;
    let offset = [0.0, 0.5, 0.25, 0.75, -0.5][rng.below(5) as usize];
    from_f64(format, (raw as f64 + offset) * 2f64.powi(-(fixed.frac as i32)))
}

#[test]
fn float_to_fixed_matches_native_casts_at_every_depth() {
    let mut rng = Rng::new(0xF3);
    for format in FORMATS {
        for fixed in conversion_formats() {
            for rounding in [Rounding::Truncate, Rounding::NearestEven] {
                let xs: Vec<u128> = (0..300).map(|_| grid_operand(&mut rng, format, fixed)).collect();
                let bits: Vec<(u128, u128)> = xs.iter().map(|x| (*x, 0)).collect();
                for stages in 0..=TO_FIXED_MAX_STAGES {
                    let net = netlist(&[format.width()], |net, w| convert::to_fixed(net, format, fixed, rounding, stages, w[0])).unwrap();
                    for (x, got) in xs.iter().zip(run(net, &bits)) {
                        let want = float_to_fixed_reference(format, fixed, rounding, *x);
                        assert_eq!(fixed.raw(got), want, "{format} {x:#x} ({}) to {fixed} {rounding:?} at {stages} stages", to_f64(format, *x));
                    }
                }
            }
        }
    }
}

#[test]
fn compare_matches_partial_cmp_at_every_depth() {
    let mut rng = Rng::new(0xF4);
    for format in FORMATS {
        let pairs: Vec<(u128, u128)> = (0..20_000).map(|_| vectors::pair(&mut rng, format)).collect();
        for stages in 0..=COMPARE_MAX_STAGES {
            let w = format.width();
            let net = netlist(&[w, w], |net, x| convert::compare(net, format, stages, x[0], x[1])).unwrap();
            for ((a, b), got) in pairs.iter().zip(run(net, &pairs)) {
                let want = match to_f64(format, *a).partial_cmp(&to_f64(format, *b)) {
                    None => convert::UNORDERED,
                    Some(std::cmp::Ordering::Less) => convert::LESS,
                    Some(std::cmp::Ordering::Equal) => convert::EQUAL,
                    Some(std::cmp::Ordering::Greater) => convert::GREATER,
                };
                assert_eq!(got, want, "{format} compare {a:#x} {b:#x} at {stages} stages");
            }
        }
    }
}
