//! The kernel DSL: what it accepts, and that every malformed file gets an error with its line
//! and column — never a panic.

use weft_hdl::float::{FloatFormat, FloatOperator, Multiplier};
use weft_hdl::pipeline::{dsl, Stages};
use weft_hdl::testbench::Rng;

fn error(text: &str) -> (usize, usize, String) {
    let e = dsl::parse(text).expect_err("should be rejected");
    (e.line, e.column, e.message)
}

#[test]
fn a_kernel_parses_with_c_precedence_and_evaluates() {
    let k = dsl::parse("kernel k\n# comment\ninput a, b, c  // trailing comment\nlet t = a - b - c * -2.0\noutput y = t / sqrt(0x40800000), z = a\n").unwrap();
    assert_eq!(k.inputs, ["a", "b", "c"]);
    let (a, b, c) = (5.5f32, 1.25f32, 0.75f32);
    let want = (a - b - c * -2.0f32) / 4.0f32.sqrt();
    assert_eq!(k.evaluate(&[a.to_bits(), b.to_bits(), c.to_bits()]), vec![want.to_bits(), a.to_bits()]);
}

#[test]
fn bindings_may_come_in_any_order_and_are_shared() {
    let k = dsl::parse("kernel k\ninput a\noutput y = s + s\nlet s = a * a\n").unwrap();
    let muls = k.nodes.iter().filter(|n| matches!(n, weft_hdl::pipeline::Node::Op(FloatOperator::Mul, _))).count();
    assert_eq!(muls, 1, "`s` is computed once");
}

#[test]
fn the_schedule_balances_operands_and_reports_latency() {
    // y = (a*b) + c: c waits for the multiplier.
    let k = dsl::parse("kernel k\ninput a, b, c\noutput y = a*b + c\n").unwrap();
    let stages = Stages::balanced(FloatFormat::BINARY32);
    let (net, schedule) = k.netlist(&stages).unwrap();
    assert_eq!(schedule.latency, stages.of(FloatOperator::Mul) + stages.of(FloatOperator::Add));
    assert_eq!(net.latency(), schedule.latency);
    assert_eq!(schedule.operators.get("mul"), Some(&1));
    assert_eq!(schedule.operators.get("add"), Some(&1));
    assert!(schedule.register_bits >= 32 * stages.of(FloatOperator::Mul), "c is delayed by the multiplier's depth");
}

#[test]
fn unknown_operation() {
    let (line, column, message) = error("kernel k\ninput a\noutput y = 1.0 + exp(a)\n");
    assert_eq!((line, column), (3, 18));
    assert!(message.contains("unknown operation `exp`"), "{message}");
}

#[test]
fn undefined_name() {
    let (line, column, message) = error("kernel k\ninput a\nlet t = a * b\noutput t\n");
    assert_eq!((line, column), (3, 13));
    assert!(message.contains("undefined name `b`"), "{message}");
}

#[test]
fn type_mismatch() {
    let (line, column, message) = error("kernel k: f32\ninput a, h: f16\noutput y = a + h\n");
    assert_eq!((line, column), (3, 14));
    assert!(message.contains("type mismatch: fp32 and fp16"), "{message}");
    let (line, _, message) = error("kernel k: f16\ninput h\noutput y = h * 0x3F800000\n");
    assert_eq!(line, 3);
    assert!(message.contains("wider than fp16"), "{message}");
}

#[test]
fn cycle() {
    let (line, column, message) = error("kernel k\ninput a\nlet p = q + a\nlet q = p * a\noutput p\n");
    // Reported where the loop closes: the use of `p` inside `q`.
    assert_eq!((line, column), (4, 9));
    assert!(message.contains("cycle: p -> q -> p"), "{message}");
}

#[test]
fn syntax_errors_point_at_the_column() {
    let (line, column, message) = error("kernel k\ninput a\nlet t = a * (a + 1\noutput t\n");
    assert_eq!(line, 3);
    assert!(column >= 19, "{column}: {message}");
    let (line, column, message) = error("kernel k\ninput a\nlet = a\n");
    assert_eq!((line, column), (3, 5));
    assert!(message.contains("name after `let`"), "{message}");
    let (_, _, message) = error("kernel k\ninput a\nlet a = a\noutput a\n");
    assert!(message.contains("defined twice"), "{message}");
    let (line, _, message) = error("input a\n");
    assert_eq!(line, 1);
    assert!(message.contains("must start with `kernel"), "{message}");
    let (_, _, message) = error("kernel k\ninput a\noutput y = a +\n");
    assert!(message.contains("ends early"), "{message}");
    let (_, _, message) = error("kernel k: f128\ninput a\noutput a\n");
    assert!(message.contains("unknown type `f128`") && message.contains("f64, f32, f16, bf16"), "{message}");
}

#[test]
fn random_text_never_panics() {
    let alphabet: Vec<char> = "kernel input let output sqrt ab,=+-*/()0x1.5e: #\n\t".chars().collect();
    let mut rng = Rng::new(99);
    for _ in 0..20_000 {
        let len = rng.below(60) as usize;
        let mut text = String::from(if rng.chance(50) { "kernel k\ninput a, b\n" } else { "" });
        text.extend((0..len).map(|_| alphabet[rng.below(alphabet.len() as u64) as usize]));
        if let Ok(k) = dsl::parse(&text) {
            let _ = k.netlist(&Stages::balanced(FloatFormat::BINARY32));
        }
    }
}

#[test]
fn shipped_kernel_files_parse() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/kernels");
    let mut count = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let text = std::fs::read_to_string(entry.unwrap().path()).unwrap();
        dsl::parse(&text).unwrap_or_else(|e| panic!("{e}"));
        count += 1;
    }
    assert!(count >= 3);
}

#[test]
fn vsum_only_as_a_whole_output() {
    let (line, column, message) = error("kernel k\ninput a\noutput y = 1.0 + vsum(a)\n");
    assert_eq!((line, column), (3, 18));
    assert!(message.contains("only be an output's entire expression"), "{message}");
    let (line, column, message) = error("kernel k\ninput a\noutput y = vsum(a), z = a\n");
    assert_eq!((line, column), (3, 21));
    assert!(message.contains("all `vsum(...)` or none"), "{message}");
    let (line, column, message) = error("kernel k\ninput a\noutput y = vsum(a, a)\n");
    assert_eq!((line, column), (3, 12));
    assert!(message.contains("vsum takes 1 argument, got 2"), "{message}");
}

/// Runs `inputs` (one set of lanes per beat) through the kernel's netlist in the built-in
/// simulator, always valid and ready; returns the output lanes of each beat.
fn simulate(k: &weft_hdl::pipeline::Kernel, inputs: &[Vec<u32>]) -> Vec<Vec<u32>> {
    simulate_with(k, inputs, &Stages::balanced(FloatFormat::BINARY32))
}

/// [`simulate`] with the kernel built with `stages`.
fn simulate_with(k: &weft_hdl::pipeline::Kernel, inputs: &[Vec<u32>], stages: &Stages) -> Vec<Vec<u32>> {
    use weft_hdl::netlist::eval::Evaluator;
    let (net, _) = k.netlist(stages).unwrap();
    let mut ev = Evaluator::new(net);
    let valid = ev.input("s_axis_tvalid").unwrap();
    let ready = ev.input("m_axis_tready").unwrap();
    let data = ev.input("s_axis_tdata").unwrap();
    ev.clock(true);
    ev.set(ready, 1);
    let (mut next, mut results) = (0, vec![]);
    for _ in 0..inputs.len() + 1000 {
        ev.set(valid, (next < inputs.len()) as u128);
        if let Some(beat) = inputs.get(next) {
            ev.set_big(data, &num_bigint::BigUint::from_slice(beat));
        }
        ev.settle();
        if ev.output("m_axis_tvalid") == Some(1) {
            results.push((0..k.outputs.len()).map(|j| ev.get_output_bits("m_axis_tdata", 32 * j, 32) as u32).collect());
        }
        if next < inputs.len() && ev.output("s_axis_tready") == Some(1) {
            next += 1;
        }
        ev.clock(false);
        if results.len() == inputs.len() {
            break;
        }
    }
    results
}

#[test]
fn nan_results_are_the_canonical_nan_in_software_as_in_hardware() {
    // sqrt of a negative, inf - inf, 0 * inf, 0 / 0, a NaN input with a payload, and a negated
    // NaN: the software model must give the bits the hardware gives, not the host's NaN.
    let k = dsl::parse("kernel k\ninput x, y, z\noutput r = x*x + y - sqrt(z), d = x / y, n = -sqrt(z), p = y * 0.0\n").unwrap();
    let (inf, ninf, nan_payload) = (f32::INFINITY.to_bits(), f32::NEG_INFINITY.to_bits(), 0xFF80_1234u32);
    let cases: Vec<Vec<u32>> = vec![
        vec![1.5f32.to_bits(), 2.0f32.to_bits(), (-4.0f32).to_bits()],
        vec![inf, ninf, 4.0f32.to_bits()],
        vec![0.0f32.to_bits(), 0.0f32.to_bits(), 1.0f32.to_bits()],
        vec![nan_payload, 1.0f32.to_bits(), nan_payload],
        vec![3.0f32.to_bits(), inf, (-0.0f32).to_bits()],
        vec![2.0f32.to_bits(), 3.0f32.to_bits(), 9.0f32.to_bits()],
    ];
    let software: Vec<Vec<u32>> = cases.iter().map(|c| k.evaluate(c)).collect();
    assert_eq!(software[0][0], 0x7FC0_0000, "sqrt(-4) makes r the canonical NaN");
    assert_eq!(software[0][2], 0xFFC0_0000, "negation flips the canonical NaN's sign bit");
    assert_eq!(software[1][0], 0x7FC0_0000, "inf - inf");
    assert_eq!(software[2][1], 0x7FC0_0000, "0 / 0");
    assert_eq!(software[4][3], 0x7FC0_0000, "inf * 0");
    let hardware = simulate(&k, &cases);
    for (i, (sw, hw)) in software.iter().zip(&hardware).enumerate() {
        assert_eq!(sw, hw, "case {i}: software {sw:#010x?}, hardware {hw:#010x?}");
    }
    assert_eq!(hardware.len(), cases.len());
}

/// A kernel built with the multiplier whose subnormal shift is in LUTs: every product is that
/// multiplier's module (exported Verilog), the latency is the default multiplier's, and every
/// output matches the software evaluation bit for bit, with products that land subnormal.
#[test]
fn a_kernel_with_lut_shift_multipliers_matches_its_software_evaluation() {
    use weft_hdl::export::{export_netlist, ModuleSpec};
    let source = std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/kernels/dg_surface_flux.wk")).unwrap();
    let k = dsl::parse(&source).unwrap();
    let default = Stages::balanced(FloatFormat::BINARY32);
    let lut = default.clone().with_multiplier(Multiplier::LutShift);
    let (net, schedule) = k.netlist(&lut).unwrap();
    assert_eq!(schedule.latency, k.netlist(&default).unwrap().1.latency);
    let spec = ModuleSpec { family: "kernels", name: k.name.clone(), summary: String::new(), parameters: vec![], hidden_ports: vec![] };
    let verilog = export_netlist(&spec, &net).unwrap();
    let mul = format!("module {}_fp32_mul_lut_shift_s{}", k.name, lut.of(FloatOperator::Mul));
    assert!(verilog.contains(&mul), "no `{mul}`");
    assert!(!verilog.contains(&format!("module {}_fp32_mul_s", k.name)));
    // Magnitudes from 2^-70 to 2^10: some products fall below binary32's normal range.
    let mut rng = Rng::new(0x1u64 << 40 | 77);
    let inputs: Vec<Vec<u32>> = (0..400)
        .map(|_| {
            (0..k.inputs.len())
                .map(|_| {
                    let exp = 127 - 70 + rng.below(80) as u32;
                    (rng.below(2) as u32) << 31 | exp << 23 | (rng.next_u64() as u32 & 0x7F_FFFF)
                })
                .collect()
        })
        .collect();
    let hardware = simulate_with(&k, &inputs, &lut);
    assert_eq!(hardware.len(), inputs.len());
    for (i, (lanes, hw)) in inputs.iter().zip(&hardware).enumerate() {
        assert_eq!(&k.evaluate(lanes), hw, "beat {i}");
    }
}
