//! Errors of the kernel language's typed constructs — fixed-point types, comparisons, select,
//! min/max/abs, conversions and stream offsets — each with its line and column; and random
//! text over the new tokens never panics.

use weft_hdl::float::FloatFormat;
use weft_hdl::pipeline::{dsl, Stages};
use weft_hdl::testbench::Rng;

fn error(text: &str) -> (usize, usize, String) {
    let e = dsl::parse(text).expect_err("should be rejected");
    (e.line, e.column, e.message)
}

fn expect(text: &str, at: (usize, usize), fragment: &str) {
    let (line, column, message) = error(text);
    assert!(message.contains(fragment), "{text:?}: message {message:?} lacks {fragment:?}");
    assert_eq!((line, column), at, "{text:?}: {message}");
}

#[test]
fn unknown_and_out_of_range_types() {
    expect("kernel k\ninput a: fix16\noutput a\n", (2, 10), "unknown type `fix16`");
    expect("kernel k\ninput a: sfix<40,8>\noutput a\n", (2, 10), "width 40 out of range: allowed 2..=32");
    expect("kernel k\ninput a: ufix<0,0>\noutput a\n", (2, 10), "width 0 out of range: allowed 1..=32");
    expect("kernel k\ninput a: sfix<8,9>\noutput a\n", (2, 10), "fraction bits 9 out of range: allowed 0..=8");
    expect("kernel k: f16\ninput a: sfix<17,0>\noutput a\n", (2, 10), "allowed 2..=16");
    expect("kernel k: sfix<16,8>\ninput a\noutput a\n", (1, 11), "the kernel's type is its lanes' float format");
    expect("kernel k\ninput a\noutput y = ufix<8,9>(a)\n", (3, 12), "fraction bits 9 out of range");
    let (line, _, message) = error("kernel k\ninput a: sfix<16\noutput a\n");
    assert_eq!(line, 2);
    assert!(message.contains("expected a type"), "{message}");
}

#[test]
fn fixed_and_float_do_not_mix() {
    expect("kernel k\ninput a, q: sfix<16,8>\noutput y = a + q\n", (3, 14), "type mismatch: fp32 and sfix<16,8>");
    expect("kernel k\ninput q: sfix<16,8>, r: sfix<12,4>\noutput y = q * r\n", (3, 14), "type mismatch: sfix<16,8> and sfix<12,4>");
    expect("kernel k\ninput q: sfix<16,8>\noutput y = q / q\n", (3, 14), "`/` is for floats");
    expect("kernel k\ninput q: sfix<16,8>\noutput y = sqrt(q)\n", (3, 12), "sqrt is for floats");
    expect("kernel k\ninput a, q: sfix<16,8>\noutput y = min(a, q)\n", (3, 12), "type mismatch: min of fp32 and sfix<16,8>");
    expect("kernel k\ninput q: sfix<8,4>\noutput y = q + 9.0\n", (3, 16), "constant 9.0 is outside sfix<8,4>: allowed range -8..=7.9375");
    expect("kernel k\ninput q: ufix<8,0>\noutput y = q + 0x100\n", (3, 16), "wider than ufix<8,0>");
    expect("kernel k\ninput a\noutput y = f16(a)\n", (3, 12), "between float formats is not supported");
}

#[test]
fn comparisons_give_bools_that_only_select_uses() {
    expect("kernel k\ninput a, b\noutput y = (a < b) + a\n", (3, 20), "type mismatch: bool and fp32");
    expect("kernel k\ninput a, b\noutput y = select(a, a, b)\n", (3, 12), "select's condition is a comparison (a bool), not fp32");
    expect("kernel k\ninput a, b\noutput y = select(a < b, a)\n", (3, 12), "select takes 3 arguments, got 2");
    expect("kernel k\ninput a, b\noutput y = abs(a < b)\n", (3, 12), "abs takes a float or fixed-point value, not a bool");
    expect("kernel k\ninput a, b\noutput y = -(a == b)\n", (3, 12), "negation of a bool");
    expect("kernel k\ninput a, b\nlet c = a < b\noutput y = c < c\n", (4, 14), "`<` takes a float or fixed-point value");
    expect("kernel k\ninput a, b\noutput y = vsum(a < b)\n", (3, 8), "type mismatch: output `y` is bool; a vector sum is fp32");
}

#[test]
fn offsets_name_their_range_and_target() {
    expect("kernel k\ninput x\noutput y = x[-65]\n", (3, 14), "stream offset -65: allowed range -64..=64 beats");
    expect("kernel k\ninput x\noutput y = x[+99999999999999999999]\n", (3, 14), "allowed range -64..=64");
    expect("kernel k\ninput x\noutput y = z[1]\n", (3, 12), "undefined name `z`");
    expect("kernel k\ninput x\nlet s = s[-1] + x\noutput s\n", (3, 9), "recurrence `s[-1]`: declare the type of `s`");
    expect("kernel k\ninput x\nlet s: f32 = s + x\noutput s\n", (3, 14), "cycle: s -> s");
    expect("kernel k\ninput x\nlet s: f32 = s[+1] + x\noutput s\n", (3, 16), "a recurrence reads earlier beats only");
    expect("kernel k\ninput x\nlet s: f32 = s[-65] + x\noutput s\n", (3, 16), "allowed -64..=-1");
    expect("kernel k\ninput x\nlet t = s[-1] + x\nlet s: f32 = t[+1]\noutput s\n", (3, 9), "cannot look ahead");
    expect("kernel k\ninput x\nlet s: sfix<16,8> = s[-1] + x\noutput s\n", (3, 27), "type mismatch: sfix<16,8> and fp32");
    expect("kernel k\ninput x\nlet s: sfix<16,8> = x\noutput s\n", (3, 8), "`s` is declared sfix<16,8>, its expression is fp32");
    expect("kernel k\ninput x\noutput y = vsum(x[-1])\n", (3, 8), "stream offsets and vsum(...) do not combine");
    let (line, column, message) = error("kernel k\ninput x\noutput y = x[a]\n");
    assert_eq!(line, 3);
    assert!(column >= 13, "{column}: {message}");
    let (line, _, message) = error("kernel k\ninput x\noutput y = (x + x)[1]\n");
    assert_eq!(line, 3);
    assert!(message.contains("expected end of line"), "{message}");
}

#[test]
fn new_names_are_reserved() {
    for word in ["select", "min", "max", "abs", "f32", "sfix", "ufix", "fix"] {
        expect(&format!("kernel k\ninput {word}\noutput y = 1.0\n"), (2, 7), "reserved word");
    }
}

#[test]
fn random_text_over_the_new_tokens_never_panics() {
    let alphabet: Vec<char> = "input let output select min max abs sfix<16,8> f32 x[-+1] <=>!= ab,(0x1.5): #\n".chars().collect();
    let mut rng = Rng::new(101);
    for _ in 0..20_000 {
        let len = rng.below(60) as usize;
        let mut text = String::from(if rng.chance(70) { "kernel k\ninput a, b, q: sfix<12,4>\n" } else { "" });
        text.extend((0..len).map(|_| alphabet[rng.below(alphabet.len() as u64) as usize]));
        if let Ok(k) = dsl::parse(&text) {
            let _ = k.netlist(&Stages::balanced(FloatFormat::BINARY32));
            let _ = k.evaluate_stream(&[(vec![0x3F80_0000; k.inputs.len()], true)]);
        }
    }
}
