//! The kernel language of a stream programmer — fixed-point lanes, comparisons, `select`,
//! `min`/`max`/`abs`, conversions and stream offsets — in the built-in simulator with random
//! `tvalid`/`tready` and `tlast`-delimited vectors, against references written here by hand
//! (native `f32`, plain integer arithmetic, zero padding at vector ends), independent of the
//! DAG. The software model is checked against the same references.

use weft_hdl::float::FloatFormat;
use weft_hdl::netlist::eval::Evaluator;
use weft_hdl::pipeline::{dsl, Kernel, Stages};
use weft_hdl::testbench::Rng;

type Beat = (Vec<u32>, bool);

/// Streams `beats` through the kernel's netlist with random valid (`valid`%) and ready
/// (`ready`%), an offered beat held until taken; returns the output beats (lanes, tlast), the
/// cycles, and the cycles in which an offered beat was refused.
fn simulate(k: &Kernel, beats: &[Beat], valid: u64, ready: u64, seed: u64) -> (Vec<Beat>, u64, u64) {
    let (net, _) = k.netlist(&Stages::balanced(FloatFormat::BINARY32)).unwrap_or_else(|e| panic!("{e}"));
    let mut ev = Evaluator::new(net);
    ev.reset(2);
    let mut rng = Rng::new(seed);
    let expected = k.evaluate_stream(beats).len();
    let (mut next, mut offering, mut cycles, mut refused) = (0, false, 0u64, 0u64);
    let mut got = vec![];
    while got.len() < expected {
        assert!(cycles < 100 * beats.len() as u64 + 1000, "{}: stuck after {} of {expected} outputs", k.name, got.len());
        if !offering && next < beats.len() && rng.chance(valid) {
            offering = true;
        }
        let sink_ready = rng.chance(ready);
        if let Some((lanes, last)) = beats.get(next) {
            let data = ev.input("s_axis_tdata").unwrap();
            ev.set_big(data, &num_bigint::BigUint::from_slice(lanes));
            ev.set_input("s_axis_tlast", *last as u128);
        }
        ev.set_input("s_axis_tvalid", offering as u128);
        ev.set_input("m_axis_tready", sink_ready as u128);
        ev.settle();
        if sink_ready && ev.get_output("m_axis_tvalid") == 1 {
            let lanes = (0..k.outputs.len()).map(|j| ev.get_output_bits("m_axis_tdata", 32 * j, 32) as u32).collect();
            got.push((lanes, ev.get_output("m_axis_tlast") == 1));
        }
        if offering {
            if ev.get_output("s_axis_tready") == 1 {
                next += 1;
                offering = false;
            } else {
                refused += 1;
            }
        }
        ev.clock(false);
        cycles += 1;
    }
    (got, cycles, refused)
}

/// Random vectors of 1..=12 beats (a third of them one beat long), `tlast` on each last beat.
fn stream(rng: &mut Rng, vectors: usize, lane: impl Fn(&mut Rng, usize) -> u32) -> Vec<Vec<Vec<u32>>> {
    (0..vectors)
        .map(|_| {
            let n = if rng.chance(33) { 1 } else { 1 + rng.below(12) as usize };
            (0..n).map(|_| (0..3).map(|i| lane(rng, i)).collect()).collect()
        })
        .collect()
}

fn flatten(vectors: &[Vec<Vec<u32>>], lanes: usize) -> Vec<Beat> {
    vectors.iter().flat_map(|v| v.iter().enumerate().map(move |(i, b)| (b[..lanes].to_vec(), i + 1 == v.len()))).collect()
}

/// Floats where the arithmetic stays finite: magnitudes in [2^-4, 2^4), random signs.
fn operand(rng: &mut Rng) -> u32 {
    let sign = (rng.below(2) as u32) << 31;
    sign | ((123 + rng.below(8) as u32) << 23) | (rng.next_u64() as u32 & 0x7F_FFFF)
}

fn check(k: &Kernel, beats: &[Beat], want: &[Beat]) {
    assert_eq!(k.evaluate_stream(beats), want, "{}: software model against the hand reference", k.name);
    for (valid, ready, seed) in [(100, 100, 1), (70, 55, 2), (35, 90, 3)] {
        let (got, _, _) = simulate(k, beats, valid, ready, seed);
        assert_eq!(got.len(), want.len());
        for (i, (g, w)) in got.iter().zip(want).enumerate() {
            assert_eq!(g, w, "{}: output beat {i} at valid {valid}% ready {ready}%: {:08x?} want {:08x?}", k.name, g.0, w.0);
        }
    }
}

fn example(name: &str) -> Kernel {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../examples/kernels/{name}.wk"));
    dsl::parse(&std::fs::read_to_string(path).unwrap()).unwrap_or_else(|e| panic!("{name}: {e}"))
}

#[test]
fn stencil3_matches_zero_padded_reference_under_back_pressure() {
    let k = example("stencil3");
    assert_eq!(k.lookahead(), 1);
    let vectors = stream(&mut Rng::new(7), 150, |rng, _| operand(rng));
    let mut want = vec![];
    for v in &vectors {
        let x = |i: isize| if (0..v.len() as isize).contains(&i) { f32::from_bits(v[i as usize][0]) } else { 0.0 };
        for i in 0..v.len() as isize {
            let y = 0.25f32 * x(i - 1) + 0.5f32 * x(i) + 0.25f32 * x(i + 1);
            want.push((vec![y.to_bits()], i + 1 == v.len() as isize));
        }
    }
    check(&k, &flatten(&vectors, 1), &want);
}

fn sat16(x: i64) -> i64 {
    x.clamp(-32768, 32767)
}

fn round_ties_even(x: f64) -> f64 {
    x.round_ties_even()
}

#[test]
fn fixed_point_window_with_select_min_max_abs_matches_integer_reference() {
    let k = example("clip_window");
    let vectors = stream(&mut Rng::new(8), 150, |rng, lane| if lane == 2 { operand(rng) } else { rng.next_u64() as u32 });
    let raw = |bits: u32| bits as u16 as i16 as i64;
    let mut want = vec![];
    for v in &vectors {
        // d = a - b in sfix<16,8>, saturating; beats outside the vector are 0.
        let d: Vec<i64> = v.iter().map(|b| sat16(raw(b[0]) - raw(b[1]))).collect();
        let at = |i: isize| if i >= 0 { d[i as usize] } else { 0 };
        let mut total = 0i64;
        for (i, b) in v.iter().enumerate() {
            // sfix<24,8>: the same fraction bits, saturating at ±2^23.
            total = (total + d[i]).clamp(-(1 << 23), (1 << 23) - 1);
            let i = i as isize;
            let sum4 = sat16(sat16(sat16(at(i - 3) + at(i - 2)) + at(i - 1)) + at(i));
            let limit = f32::from_bits(b[2]);
            let lim = round_ties_even(limit as f64 * 256.0).clamp(-32768.0, 32767.0) as i64;
            let clipped = sum4.max(sat16(-lim)).min(lim);
            let mag = sat16(at(i).abs());
            let level = if mag > 384 { (at(i) as f32 / 256.0) * limit } else { 0.0 };
            let peak = ((mag as f32) / 256.0).max(limit);
            want.push((vec![clipped as i32 as u32, level.to_bits(), peak.to_bits(), total as i32 as u32], i + 1 == v.len() as isize));
        }
    }
    check(&k, &flatten(&vectors, 3), &want);
}

#[test]
fn offsets_compose_and_read_zero_outside_the_vector() {
    // t[+2] with t = x[-1] reads x at +1, zero when t's beat (i + 2) is past the end even if
    // x's is not; z looks 3 ahead and 2 back.
    let k = dsl::parse("kernel k\ninput x\nlet t = x[-1]\noutput y = t[+2], z = x[+3] - x[-2], w = x\n").unwrap();
    assert_eq!(k.lookahead(), 3);
    let vectors = stream(&mut Rng::new(9), 120, |rng, _| operand(rng));
    let mut want = vec![];
    for v in &vectors {
        let n = v.len() as isize;
        let x = |i: isize| if (0..n).contains(&i) { f32::from_bits(v[i as usize][0]) } else { 0.0 };
        let t = |i: isize| if (0..n).contains(&i) { x(i - 1) } else { 0.0 };
        for i in 0..n {
            want.push((vec![t(i + 2).to_bits(), (x(i + 3) - x(i - 2)).to_bits(), x(i).to_bits()], i + 1 == n));
        }
    }
    check(&k, &flatten(&vectors, 1), &want);
}

#[test]
fn past_offsets_need_no_flush_and_keep_one_beat_per_cycle() {
    let k = dsl::parse("kernel k\ninput x\noutput y = x[-2] + x\n").unwrap();
    assert_eq!(k.lookahead(), 0);
    let beats: Vec<Beat> = (0..500).map(|i| (vec![(1.0f32 + i as f32).to_bits()], i % 50 == 49)).collect();
    let (got, cycles, refused) = simulate(&k, &beats, 100, 100, 4);
    assert_eq!(refused, 0);
    let latency = k.netlist(&Stages::balanced(FloatFormat::BINARY32)).unwrap().1.latency as u64;
    assert_eq!(cycles, 500 + latency, "one beat per cycle");
    assert_eq!(got, k.evaluate_stream(&beats));
    assert_eq!(f32::from_bits(got[51].0[0]), 52.0 + 0.0, "beat 1 of the second vector: x[-2] is before it");
    assert_eq!(f32::from_bits(got[52].0[0]), 53.0 + 51.0);
}

#[test]
fn future_offsets_flush_after_tlast_k_cycles_per_vector() {
    let k = dsl::parse("kernel k\ninput x\noutput y = x[+2] - x\n").unwrap();
    let beats: Vec<Beat> = (0..400).map(|i| (vec![(i as f32).to_bits()], i % 8 == 7)).collect();
    let (got, cycles, refused) = simulate(&k, &beats, 100, 100, 5);
    let latency = k.netlist(&Stages::balanced(FloatFormat::BINARY32)).unwrap().1.latency as u64;
    assert_eq!(refused, 2 * 49, "two flush cycles per vector (the last vector's find no beat waiting)");
    assert_eq!(cycles, 400 + 2 * 50 + latency);
    assert_eq!(got, k.evaluate_stream(&beats));
    assert!(got[7].1 && !got[6].1, "tlast on each vector's last output");
    // An open vector (no tlast yet) keeps its last two outputs back.
    let open: Vec<Beat> = (0..5).map(|i| (vec![(i as f32).to_bits()], false)).collect();
    assert_eq!(k.evaluate_stream(&open).len(), 3);
}

fn bits(x: f32) -> u32 {
    x.to_bits()
}

#[test]
fn float_comparisons_select_min_max_abs_follow_ieee_on_special_values() {
    let k = dsl::parse(
        "kernel k\ninput a, b\n\
         output lt = select(a < b, 1.0, 0.0), le = select(a <= b, 1.0, 0.0), gt = select(a > b, 1.0, 0.0)\n\
         output ge = select(a >= b, 1.0, 0.0), eq = select(a == b, 1.0, 0.0), ne = select(a != b, 1.0, 0.0)\n\
         output lo = min(a, b), hi = max(a, b), m = abs(a), n = -abs(b)\n",
    )
    .unwrap();
    let specials = [0.0f32, -0.0, 1.5, -1.5, f32::INFINITY, f32::NEG_INFINITY, f32::NAN, f32::MIN_POSITIVE / 4.0, 3.0];
    let nan_payload = 0xFFC0_1234u32;
    let mut values: Vec<u32> = specials.iter().map(|x| bits(*x)).collect();
    values.push(nan_payload);
    let mut beats = vec![];
    let mut want = vec![];
    for &a in &values {
        for &b in &values {
            let (x, y) = (f32::from_bits(a), f32::from_bits(b));
            let one = |c: bool| bits(if c { 1.0 } else { 0.0 });
            // IEEE 754-2019 minimum/maximum: NaN wins (canonical), -0 < +0.
            let (lo, hi) = if x.is_nan() || y.is_nan() {
                (0x7FC0_0000, 0x7FC0_0000)
            } else if x == y {
                (if x.is_sign_negative() { a } else { b }, if x.is_sign_positive() { a } else { b })
            } else if x < y {
                (a, b)
            } else {
                (b, a)
            };
            let lanes = vec![one(x < y), one(x <= y), one(x > y), one(x >= y), one(x == y), one(x != y), lo, hi, a & 0x7FFF_FFFF, b | 0x8000_0000];
            beats.push((vec![a, b], false));
            want.push((lanes, false));
        }
    }
    check(&k, &beats, &want);
}

#[test]
fn conversions_between_float_and_fixed_round_to_nearest_even_and_saturate() {
    // sfix<8,2>: raw -128..127, i.e. -32..31.75 in steps of 0.25.
    let k = dsl::parse("kernel k\ninput x, q: ufix<12,4>\nlet s = sfix<8,2>(x)\noutput s, back = f32(s), u = f32(q), w = sfix<10,1>(q), c = s * sfix<8,2>(1.25)\n").unwrap();
    let cases = [0.125f32, 0.375, -0.375, 0.3, 31.875, 40.0, -32.125, -1e9, f32::INFINITY, f32::NEG_INFINITY, f32::NAN, -0.0, 7.5];
    let mut rng = Rng::new(10);
    let mut beats = vec![];
    let mut want = vec![];
    for (i, &x) in cases.iter().chain([1.0f32; 40].iter()).enumerate() {
        let x = if i >= cases.len() { (rng.below(20000) as f32 - 10000.0) / 256.0 } else { x };
        let q = rng.next_u64() as u32;
        let raw = if x.is_nan() { 0 } else { round_ties_even(x as f64 * 4.0).clamp(-128.0, 127.0) as i64 };
        let qraw = (q & 0xFFF) as i64;
        // ufix<12,4> to sfix<10,1>: drop 3 fraction bits (nearest even), clamp to -512..511.
        let w = round_ties_even(qraw as f64 / 8.0).clamp(-512.0, 511.0) as i64;
        // s * 1.25: raw·5 with 4 fraction bits, back to 2 (nearest even), saturating.
        let c = round_ties_even((raw * 5) as f64 / 4.0).clamp(-128.0, 127.0) as i64;
        beats.push((vec![bits(x), q], false));
        want.push((vec![raw as i32 as u32, bits(raw as f32 / 4.0), bits(qraw as f32 / 16.0), w as i32 as u32, c as i32 as u32], false));
    }
    check(&k, &beats, &want);
}

#[test]
fn fixed_compare_and_abs_on_unsigned_and_extreme_values() {
    let k = dsl::parse("kernel k\ninput a: sfix<8,0>, u: ufix<8,8>, v: ufix<8,8>\noutput m = abs(a), n = -a, s = select(u <= v, u, v), big = select(a >= 100, a, -100)\n").unwrap();
    let mut beats = vec![];
    let mut want = vec![];
    for a in [-128i64, -127, -1, 0, 1, 99, 100, 127] {
        for (u, v) in [(0u32, 255u32), (255, 0), (128, 128), (3, 7)] {
            let abs = a.abs().min(127);
            let neg = (-a).min(127);
            let s = if u <= v { u } else { v };
            let big = if a >= 100 { a } else { -100 };
            beats.push((vec![a as u32 & 0xFF, u, v], false));
            want.push((vec![abs as i32 as u32, neg as i32 as u32, s, big as i32 as u32], false));
        }
    }
    check(&k, &beats, &want);
}

#[test]
fn recurrences_are_running_sums_per_vector_at_one_beat_per_cycle() {
    // A float running sum (its adder combinational inside the loop), a fixed-point running
    // maximum, a recurrence two beats back, and one fed by a look-ahead outside its loop.
    let k = dsl::parse(
        "kernel k\ninput x, q: sfix<12,4>\n\
         let s: f32 = s[-1] + x\n\
         let m: sfix<12,4> = max(m[-1], q)\n\
         let f: f32 = 0.5 * f[-2] + x\n\
         let g: f32 = g[-1] + x[+1]\n\
         output s, m, f, g\n",
    )
    .unwrap();
    assert_eq!(k.lookahead(), 1);
    let vectors = stream(&mut Rng::new(11), 150, |rng, lane| if lane == 0 { operand(rng) } else { rng.next_u64() as u32 });
    let mut want = vec![];
    for v in &vectors {
        let n = v.len();
        let x = |i: usize| f32::from_bits(v[i][0]);
        let (mut s, mut m, mut g) = (0f32, 0i64, 0f32);
        let mut f = vec![0f32; n];
        for i in 0..n {
            s += x(i);
            m = m.max((v[i][1] & 0xFFF) as u16 as i64 - if v[i][1] & 0x800 != 0 { 0x1000 } else { 0 });
            f[i] = 0.5f32 * if i >= 2 { f[i - 2] } else { 0.0 } + x(i);
            g += if i + 1 < n { x(i + 1) } else { 0.0 };
            want.push((vec![s.to_bits(), m as i32 as u32, f[i].to_bits(), g.to_bits()], i + 1 == n));
        }
    }
    check(&k, &flatten(&vectors, 2), &want);
    let (_, cycles, refused) = simulate(&k, &flatten(&vectors, 2), 100, 100, 12);
    let beats = flatten(&vectors, 2).len() as u64;
    let latency = k.netlist(&Stages::balanced(FloatFormat::BINARY32)).unwrap().1.latency as u64;
    assert_eq!(cycles, beats + vectors.len() as u64 + latency, "one beat per cycle, one flush cycle per vector");
    assert_eq!(refused, vectors.len() as u64 - 1);
}

/// `x · ±2^k` by a constant is built as an exponent adjustment and a short shift (no
/// multiplier), and stays bit-exact to native `f32` multiplication: subnormals in and out,
/// ties at the subnormal boundary rounding to even, overflow to infinity, signed zeros,
/// canonical NaN.
#[test]
fn products_with_a_constant_power_of_two_match_native_multiplication() {
    let constants = [0.5f32, 0.125, 2.0, -4.0, -0.5, 2f32.powi(100), 2f32.powi(-100), 1.0];
    let outputs: Vec<String> = constants.iter().enumerate().map(|(i, c)| format!("y{i} = x * 0x{:08X}", c.to_bits())).collect();
    let k = dsl::parse(&format!("kernel scale\ninput x\noutput {}\n", outputs.join(", "))).unwrap();
    let (_, schedule) = k.netlist(&Stages::balanced(FloatFormat::BINARY32)).unwrap();
    assert_eq!((schedule.operators.get("scale"), schedule.operators.get("mul")), (Some(&constants.len()), None), "{:?}", schedule.operators);

    let mut values: Vec<u32> = vec![0, 0x8000_0000, 1, 2, 3, 0x8000_0003, 0x007F_FFFF, 0x0080_0000, 0x0080_0001, 0x00FF_FFFF, 0x0100_0000, 0x0100_0001];
    values.extend([0x7F7F_FFFF, 0x7F00_0000, 0x7E80_0000, 0x7F80_0000, 0xFF80_0000, 0x7FC0_0000, 0xFFC0_1234, 0x7F80_0001, 0x3F80_0000]);
    values.extend([0x0040_0001, 0x0040_0003, 0x0000_0005, 0x0C00_0001, 0x0C80_0003, 0x0D00_0005, 0x0D80_0000, 0x3300_0001]);
    let mut rng = Rng::new(5);
    for _ in 0..1500 {
        values.push(rng.next_u64() as u32);
        // Near the subnormal range, where halving and 2^-100 round.
        values.push((rng.below(2) as u32) << 31 | (rng.below(0x1A00_0000) as u32));
    }
    let canonical = |v: f32| if v.is_nan() { 0x7FC0_0000 } else { v.to_bits() };
    let beats: Vec<Beat> = values.iter().map(|v| (vec![*v], false)).collect();
    let want: Vec<Beat> = values.iter().map(|v| (constants.iter().map(|c| canonical(f32::from_bits(*v) * c)).collect(), false)).collect();
    check(&k, &beats, &want);
}

/// The scale operator on every binary16 and bfloat16 value: `x · ±2^k` against the software
/// reference's single rounding of the exact product (`f64`), canonical NaN for NaN.
#[test]
fn products_with_a_constant_power_of_two_are_exact_on_every_half_precision_value() {
    use weft_hdl::float::reference::{from_f64, to_f64};
    for (name, f, constants) in [("f16", FloatFormat::BINARY16, [0.5, 2.0, -0.125, 1024.0, 1.0 / 1024.0]), ("bf16", FloatFormat::BFLOAT16, [0.5, 2.0, -0.125, 2f64.powi(100), 2f64.powi(-100)])] {
        let w = f.width();
        let outputs: Vec<String> = constants.iter().enumerate().map(|(i, c)| format!("y{i} = x * 0x{:X}", from_f64(f, *c))).collect();
        let k = dsl::parse(&format!("kernel scale: {name}\ninput x\noutput {}\n", outputs.join(", "))).unwrap();
        let (net, schedule) = k.netlist(&Stages::balanced(f)).unwrap();
        assert_eq!(schedule.operators.get("scale"), Some(&constants.len()), "{name}: {:?}", schedule.operators);
        let mut ev = Evaluator::new(net);
        ev.reset(2);
        let (mut sent, mut got) = (0u32, 0u32);
        while got < 1 << w {
            ev.set_input_bits("s_axis_tdata", 0, w, sent as u128);
            ev.set_input("s_axis_tlast", 0);
            ev.set_input("s_axis_tvalid", (sent < 1 << w) as u128);
            ev.set_input("m_axis_tready", 1);
            ev.settle();
            if ev.get_output("m_axis_tvalid") == 1 {
                let x = to_f64(f, got as u128);
                for (j, c) in constants.iter().enumerate() {
                    let want = if x.is_nan() { f.quiet_nan() } else { from_f64(f, x * c) };
                    let y = ev.get_output_bits("m_axis_tdata", w * j, w);
                    assert_eq!(y, want, "{name}: {:#x} · {c}: got {y:#x}, want {want:#x}", got);
                }
                got += 1;
            }
            if sent < 1 << w && ev.get_output("s_axis_tready") == 1 {
                sent += 1;
            }
            ev.clock(false);
        }
    }
}
