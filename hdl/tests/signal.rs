//! The typed signal handle against its documented rules: later register rules win, width errors
//! name the caller's line, constants fold, stream connections check both ends, instances refuse
//! unconnected inputs, state machines move as their rules say.

use std::rc::Rc;

use weft_hdl::netlist::eval::Evaluator;
use weft_hdl::netlist::{verilog, AxisShape, Design, Netlist};
use weft_hdl::state_enum;

/// One register with a set rule and a clear rule, in the given order.
fn set_clear(set_first: bool) -> Netlist {
    let d = Design::new();
    let (set, clear) = (d.input("set", 1), d.input("clear", 1));
    let r = d.reg("r", 1, 0);
    if set_first {
        r.set_when(set).clear_when(clear);
    } else {
        r.clear_when(clear).set_when(set);
    }
    d.output("q", r.q);
    d.finish()
}

#[test]
fn the_rule_written_last_wins_and_a_register_holds_otherwise() {
    for (set_first, both) in [(true, 0), (false, 1)] {
        let mut e = Evaluator::new(set_clear(set_first));
        e.reset(1);
        for (set, clear, want) in [(1, 0, 1), (0, 0, 1), (1, 1, both), (0, 0, both), (0, 1, 0), (0, 0, 0)] {
            e.set_input("set", set);
            e.set_input("clear", clear);
            e.settle();
            e.clock(false);
            e.settle();
            assert_eq!(e.get_output("q"), want, "set_first {set_first}: set {set} clear {clear}");
        }
    }
}

#[test]
fn a_width_mismatch_names_the_callers_line() {
    let err = std::panic::catch_unwind(|| {
        let d = Design::new();
        let (a, b) = (d.input("a", 8), d.input("b", 4));
        let _ = a & b;
    })
    .unwrap_err();
    let msg = err.downcast_ref::<String>().unwrap();
    assert!(msg.contains("8 and 4 bits") && msg.contains("tests/signal.rs"), "{msg}");
}

#[test]
fn constants_fold_and_identities_need_no_logic() {
    let d = Design::new();
    let x = d.input("x", 32);
    let s = d.input("s", 1);
    let zero = d.lit(0, 32);
    assert_eq!((x & zero).const_value(), Some(0));
    assert_eq!((x & u32::MAX).wire, x.wire);
    assert_eq!((x | 0u32).wire, x.wire);
    assert_eq!(s.mux(x, x).wire, x.wire);
    assert_eq!(d.lit(1, 1).mux(x, 7u32).wire, x.wire);
    assert_eq!((d.lit(0xf0, 8) + 0x0fu32).const_value(), Some(0xff));
    d.output("y", (x & 0xffff_ffffu32) ^ (d.lit(3, 32) - 1u32));
    let text = verilog::module(&d.finish(), "folded");
    assert!(!text.contains("32'hffffffff &") && text.contains("x ^ 32'h2"), "{text}");
}

#[test]
fn a_stream_connection_checks_shapes_and_names_both_ends() {
    let d = Design::new();
    let wide = d.axis_in("s_axis", AxisShape::data(64));
    let narrow = d.axis_out("m_axis", AxisShape::data(32));
    let err = d.connect(&wide, &narrow).unwrap_err();
    assert!(matches!(err, weft_hdl::Error::Design(_)), "{err:?}");
    let err = err.to_string();
    assert!(err.contains("`s_axis` → `m_axis`") && err.contains("64-bit data into 32-bit data"), "{err}");
    let keep_out = d.axis_out("m_keep", AxisShape::data(64).with_keep());
    let err = d.connect(&wide, &keep_out).unwrap_err().to_string();
    assert!(err.contains("tkeep"), "{err}");
}

#[test]
fn a_wide_stream_crosses_a_connection_whole() {
    // 256-bit data as one value, into a child that reads it as four 64-bit slices.
    let child = {
        let mut n = Netlist::new();
        let data = n.input("s_axis_tdata", 256);
        let lanes: Vec<_> = (0..4).map(|k| n.slice(data, 64 * k, 64)).collect();
        let last = n.input("s_axis_tlast", 1);
        let valid = n.input("s_axis_tvalid", 1);
        let one = n.constant(1, 1);
        n.output("s_axis_tready", one);
        let x = n.xor(lanes[0], lanes[3]);
        let x = n.xor(x, lanes[1]);
        let x = n.xor(x, lanes[2]);
        let v = n.and(valid, last);
        n.output("mix", x);
        n.output("seen", v);
        Rc::new(n)
    };
    let d = Design::new();
    let s = d.axis_in("s_axis", AxisShape::data(256));
    let c = d.instance(&child, "mixer", "mixer");
    d.connect(&s, &c.sink("s_axis", AxisShape::data(256))).unwrap();
    d.output("mix", c.output("mix"));
    d.output("seen", c.output("seen"));
    let mut e = Evaluator::new(d.finish());
    let words: [u64; 4] = [0x1111, 0x2222_0000, 0x3333_0000_0000, 0x4444_0000_0000_0000];
    e.set_input_bits("s_axis_tdata", 0, 128, (words[1] as u128) << 64 | words[0] as u128);
    e.set_input_bits("s_axis_tdata", 128, 128, (words[3] as u128) << 64 | words[2] as u128);
    e.set_input("s_axis_tvalid", 1);
    e.set_input("s_axis_tlast", 1);
    e.settle();
    assert_eq!(e.get_output("mix") as u64, words.iter().fold(0, |a, w| a ^ w));
    assert_eq!(e.get_output("seen"), 1);
}

#[test]
fn an_unconnected_instance_input_is_refused_by_name() {
    let mut n = Netlist::new();
    let a = n.input("a", 4);
    n.output("b", a);
    let child = Rc::new(n);
    let err = std::panic::catch_unwind(|| {
        let d = Design::new();
        let c = d.instance(&child, "copy", "copy0");
        d.output("b", c.output("b"));
        d.finish()
    })
    .unwrap_err();
    let msg = err.downcast_ref::<String>().unwrap();
    assert!(msg.contains("input `a` of `copy0`"), "{msg}");
}

state_enum! {
    enum Light { Red, Green, Yellow }
}

#[test]
fn a_state_machine_moves_by_its_rules() {
    let d = Design::new();
    let go = d.input("go", 1);
    let light = d.state::<Light>("light");
    light.go_when(light.is(Light::Red) & go, Light::Green).go_when(light.is(Light::Green), Light::Yellow).go_when(light.is(Light::Yellow), Light::Red);
    d.output("state", light.reg.q);
    let mut e = Evaluator::new(d.finish());
    e.reset(1);
    let mut seen = vec![];
    for go in [0, 1, 0, 0, 0, 1] {
        e.set_input("go", go);
        e.settle();
        seen.push(e.get_output("state"));
        e.clock(false);
    }
    assert_eq!(seen, [0, 0, 1, 2, 0, 0]);
}

/// The Verilog names a state machine's values: one `localparam` per state, the comparisons,
/// the next-state choices and the reset written with them, no bare number against the register.
#[test]
fn a_state_machine_reads_by_its_state_names_in_verilog() {
    let d = Design::new();
    let go = d.input("go", 1);
    let light = d.state::<Light>("light");
    light.go_when(light.is(Light::Red) & go, Light::Green).go_when(light.is(Light::Green), Light::Yellow).go_when(light.is(Light::Yellow), Light::Red);
    d.output("state", light.reg.q);
    let text = weft_hdl::netlist::verilog::module(&d.finish(), "lights");
    for (k, name) in ["RED", "GREEN", "YELLOW"].iter().enumerate() {
        assert!(text.contains(&format!("localparam [1:0] LIGHT_{name} = 2'h{k};")), "{text}");
        assert!(text.contains(&format!("light == LIGHT_{name}")), "{text}");
    }
    assert!(text.contains("if (rst) light <= LIGHT_RED;"), "{text}");
    assert!(!text.contains("light == 2'h") && !text.contains("? 2'h"), "a bare state value is left: {text}");
}

/// A queue against a software FIFO, under random pushes and pops (pops only of a valid head,
/// pushes only while the memory has room): the same entries come out in the same order, and
/// the head is readable the cycle after a push into an empty queue.
#[test]
fn a_queue_keeps_order_and_shows_a_pushed_entry_at_the_next_cycle() {
    let d = Design::new();
    let (push, data, pop) = (d.input("push", 1), d.input("data", 20), d.input("pop", 1));
    let q = d.queue("q", 8, push, &[data], pop);
    d.output("valid", q.valid);
    d.output("head", q.head[0]);
    d.output("space", q.space);
    let mut e = Evaluator::new(d.finish());
    e.reset(1);
    e.settle();
    let mut model = std::collections::VecDeque::new();
    let mut seed = 12345u64;
    let mut rand = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let (mut pushed, mut popped, mut next) = (0, 0, 1u128);
    for cycle in 0..20_000 {
        let r = rand();
        // Phases of mostly pushing and mostly popping fill and drain the queue.
        let push_p = if (cycle / 500) % 2 == 0 { 80 } else { 30 };
        let valid = e.get_output("valid") == 1;
        assert_eq!(valid, !model.is_empty(), "cycle {cycle}: head valid");
        if valid {
            assert_eq!(e.get_output("head"), model[0], "cycle {cycle}: head");
        }
        let do_pop = valid && r % 100 < 60;
        let do_push = e.get_output("space") == 1 && (r >> 8) % 100 < push_p;
        if do_pop {
            model.pop_front();
            popped += 1;
        }
        e.set_input("pop", do_pop as u128);
        e.set_input("push", do_push as u128);
        e.set_input("data", next);
        if do_push {
            model.push_back(next);
            next = (next * 7919 + 1) % (1 << 20);
            pushed += 1;
        }
        e.settle();
        e.clock(false);
        e.settle();
        assert!(model.len() <= 11, "cycle {cycle}: {} entries", model.len());
    }
    assert!(pushed > 5000 && popped > 5000, "{pushed} pushed, {popped} popped");
}

/// A counter and an accumulator built as units: the Verilog instantiates a module per unit,
/// and the built-in simulator gives, cycle by cycle, what the same design built without units
/// gives (random inputs, 300 cycles).
#[test]
fn units_become_modules_and_keep_the_behaviour() {
    let build = |units: bool| {
        let d = Design::new();
        let (x, en) = (d.input("x", 16), d.input("en", 1));
        let counter = || {
            let c = d.reg("count", 8, 0);
            c.next_when(en, c.q + 1u32);
            c.q
        };
        let count = if units { d.unit("counter", "counter", counter) } else { counter() };
        let accumulator = || {
            let a = d.reg("acc", 16, 0);
            a.next(a.q + (x ^ count.zext(16)));
            a.q
        };
        let acc = if units { d.unit("accumulator", "accumulator", accumulator) } else { accumulator() };
        d.output("count", count);
        d.output("acc", acc);
        d.finish()
    };
    let (with, without) = (build(true), build(false));
    let text = weft_hdl::netlist::verilog::module(&with, "top");
    assert!(text.contains("module top_counter(") && text.contains("module top_accumulator("), "{text}");
    assert!(text.contains("top_counter counter (") && text.contains("top_accumulator accumulator ("), "{text}");
    let (mut a, mut b) = (Evaluator::new(with), Evaluator::new(without));
    a.reset(1);
    b.reset(1);
    let mut seed = 7u64;
    for cycle in 0..300 {
        seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        for e in [&mut a, &mut b] {
            e.set_input("x", (seed >> 20) as u128 & 0xffff);
            e.set_input("en", (seed >> 40) as u128 & 1);
            e.settle();
        }
        assert_eq!((a.get_output("count"), a.get_output("acc")), (b.get_output("count"), b.get_output("acc")), "cycle {cycle}");
        a.clock(false);
        b.clock(false);
    }
}
