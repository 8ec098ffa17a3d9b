//! Values wider than 128 bits: every netlist operation on 520-bit operands, a wide register and
//! a 512-bit memory, in the built-in simulator against arithmetic on unbounded integers (the
//! operations' definitions) and against Verilator running the exported Verilog, cycle by cycle.

use num_bigint::{BigInt, BigUint, Sign};
use weft::hdl::netlist::eval::Evaluator;
use weft::hdl::netlist::Netlist;
use weft::hdl::testbench::Rng;
use weft::sim::cosim::Model;

const W: usize = 520;

/// Combinational operations on inputs `a`, `b` (520 bits), `s` (10 bits) and `sel`, a
/// 300-bit register taking `a`'s low bits when `sel` is high, and a 4 x 512-bit memory written
/// with `a` at `addr` when `we` is high and read at `addr`.
fn wide_ops() -> Netlist {
    let mut n = Netlist::new();
    let a = n.input("a", W);
    let b = n.input("b", W);
    let s = n.input("s", 10);
    let sel = n.input("sel", 1);
    let we = n.input("we", 1);
    let addr = n.input("addr", 2);
    let s_wide = n.zext(s, W);
    let ops = [
        ("y_add", n.add(a, b)),
        ("y_sub", n.sub(a, b)),
        ("y_mul", n.mul(a, b)),
        ("y_and", n.and(a, b)),
        ("y_or", n.or(a, b)),
        ("y_xor", n.xor(a, b)),
        ("y_not", n.not(a)),
        ("y_shl", n.shl(a, s_wide)),
        ("y_shr", n.shr(a, s_wide)),
        ("y_eq", n.eq(a, b)),
        ("y_ult", n.ult(a, b)),
        ("y_slt", n.slt(a, b)),
        ("y_mux", n.mux(sel, a, b)),
        ("y_cat", n.concat(a, b)),
        ("y_slice", n.slice(a, 200, 250)),
        ("y_lzc", n.lzc(b)),
        ("y_parity", n.parity(a)),
    ];
    for (name, w) in ops {
        n.output(name, w);
    }
    let low = n.slice(a, 0, 300);
    let r = n.history(low, Some(sel), Some(0));
    n.name(r, "held");
    n.output("held", r);
    let mem = n.memory("store", 512, 4);
    let word = n.slice(a, 0, 512);
    n.memory_write(mem, we, addr, word);
    let read = n.memory_read(mem, addr);
    n.output("read", read);
    n
}

fn ones(width: usize) -> BigUint {
    (BigUint::from(1u8) << width) - 1u8
}

fn signed(v: &BigUint, width: usize) -> BigInt {
    if v.bit(width as u64 - 1) {
        BigInt::from_biguint(Sign::Plus, v.clone()) - (BigInt::from(1) << width)
    } else {
        BigInt::from_biguint(Sign::Plus, v.clone())
    }
}

/// What each combinational output must be, from the operations' definitions.
fn reference(a: &BigUint, b: &BigUint, s: usize, sel: bool) -> Vec<(&'static str, BigUint)> {
    let m = BigUint::from(1u8) << W;
    let flag = |x: bool| BigUint::from(x as u8);
    vec![
        ("y_add", (a + b) % &m),
        ("y_sub", (a + &m - b) % &m),
        ("y_mul", a * b),
        ("y_and", a & b),
        ("y_or", a | b),
        ("y_xor", a ^ b),
        ("y_not", ones(W) - a),
        ("y_shl", (a << s) % &m),
        ("y_shr", a >> s),
        ("y_eq", flag(a == b)),
        ("y_ult", flag(a < b)),
        ("y_slt", flag(signed(a, W) < signed(b, W))),
        ("y_mux", if sel { a.clone() } else { b.clone() }),
        ("y_cat", (a << W) | b),
        ("y_slice", (a >> 200u32) & ones(250)),
        ("y_lzc", BigUint::from(W as u64 - b.bits())),
        ("y_parity", BigUint::from((a.count_ones() & 1) as u8)),
    ]
}

/// An operand that exercises the edges: random, zero, all ones, one bit, or sign bit set.
fn operand(rng: &mut Rng) -> BigUint {
    match rng.below(6) {
        0 => BigUint::default(),
        1 => ones(W),
        2 => BigUint::from(1u8) << rng.below(W as u64) as usize,
        3 => ones(W) ^ (ones(W - 1) & rng.bits(W)),
        _ => rng.bits(W),
    }
}

fn words(v: &BigUint) -> Vec<u32> {
    v.to_u32_digits()
}

fn from_words(w: &[u32]) -> BigUint {
    BigUint::from_slice(w)
}

#[test]
fn wide_values_match_their_definitions_and_verilator() {
    let net = wide_ops();
    let dir = std::env::temp_dir().join(format!("weft-wide-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("wide_ops.v");
    let spec = weft::hdl::export::ModuleSpec { family: "test", name: "wide_ops".into(), summary: "520-bit operations".into(), parameters: vec![], hidden_ports: vec![] };
    let text = weft::hdl::export::export_netlist(&spec, &net).unwrap();
    assert!(text.contains("input wire [519:0] a;"), "a 520-bit input is one port");
    assert!(text.contains("output wire [1039:0] y_mul;"), "the product is one 1040-bit port");
    std::fs::write(&file, text).unwrap();
    weft::tools::verilator_lint(&file, "wide_ops").unwrap_or_else(|e| panic!("{e}"));
    let mut v = Model::build(&file, "wide_ops").unwrap_or_else(|e| panic!("{e}"));
    let mut e = Evaluator::new(net);
    let names = ["y_add", "y_sub", "y_mul", "y_and", "y_or", "y_xor", "y_not", "y_shl", "y_shr", "y_eq", "y_ult", "y_slt", "y_mux", "y_cat", "y_slice", "y_lzc", "y_parity", "held", "read"];
    let rst = v.port("rst").unwrap();
    v.set(rst, 1);
    v.tick();
    v.set(rst, 0);
    e.reset(1);
    let mut rng = Rng::new(0x5EED);
    let (mut held, mut store) = (BigUint::default(), vec![None; 4]);
    for cycle in 0..2000 {
        let (a, b) = (operand(&mut rng), operand(&mut rng));
        // Shift amounts past the width (up to 1023) must give zero.
        let reach = if rng.chance(20) { 1024 } else { W as u64 };
        let s = rng.below(reach) as usize;
        let (sel, we, addr) = (rng.chance(50), rng.chance(50), rng.below(4) as usize);
        for (port, value) in [("a", a.clone()), ("b", b.clone()), ("s", BigUint::from(s)), ("sel", BigUint::from(sel as u8)), ("we", BigUint::from(we as u8)), ("addr", BigUint::from(addr))] {
            let w = e.input(port).unwrap();
            e.set_big(w, &value);
            let p = v.port(port).unwrap();
            v.set_words(p, &words(&value));
        }
        e.settle();
        v.eval();
        let mut want = reference(&a, &b, s, sel);
        want.push(("held", held.clone()));
        // A memory word has no reset: compared once written.
        want.extend(store[addr].clone().map(|w| ("read", w)));
        for name in names.into_iter().filter(|n| want.iter().any(|(w, _)| w == n)) {
            let built_in = e.get_output_big(name);
            let p = v.port(name).unwrap();
            let verilated = from_words(v.get_words(p));
            let expected = &want.iter().find(|(n, _)| *n == name).unwrap().1;
            assert_eq!(&built_in, expected, "cycle {cycle}: {name} in the built-in simulator (a {a:#x}, b {b:#x}, s {s})");
            assert_eq!(&verilated, expected, "cycle {cycle}: {name} in Verilator (a {a:#x}, b {b:#x}, s {s})");
        }
        if sel {
            held = &a & ones(300);
        }
        if we {
            store[addr] = Some(&a & ones(512));
        }
        e.clock(false);
        v.tick();
    }
}

#[test]
fn a_field_of_a_wide_port_is_read_and_written_in_place() {
    let mut n = Netlist::new();
    let x = n.input("x", 700);
    n.output("y", x);
    let mut e = Evaluator::new(n);
    e.set_input_bits("x", 600, 66, 0x3_FFFF_0000_0000_0001);
    e.set_input_bits("x", 0, 64, 0xABCD);
    e.settle();
    let want = (BigUint::from(0x3_FFFF_0000_0000_0001u128) << 600) | BigUint::from(0xABCDu32);
    assert_eq!(e.get_output_big("y"), want);
    assert_eq!(e.get_output_bits("y", 600, 66), 0x3_FFFF_0000_0000_0001);
    e.set_input_bits("x", 600, 66, 0);
    e.settle();
    assert_eq!(e.get_output_big("y"), BigUint::from(0xABCDu32));
}
