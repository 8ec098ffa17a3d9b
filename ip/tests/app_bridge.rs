//! The reduction bridge in the built-in simulator against a software collective engine: before a
//! loop it keeps each reduced global and writes the operator's identity; after it, it sends the
//! partial as one contribution packet (length, operation number, elements from the low bits),
//! takes the result packet and writes `kept ∘ result`, each element against
//! `ReduceOp::apply` on bits (the collective engine's reference). Also the engine's timeout
//! report, a step with no reduction, and the refusals at generation time.

use num_bigint::BigUint;
use weft_ip::app::host::LoopPorts;
use weft_ip::app::partition::bridge::{reduction_bridge, BridgeSpec, ReducedGlobal};
use weft_ip::app::Application;
use weft_ip::router::header::field;
use weft_ip::system::allreduce::{ElementType, ReduceOp, ERROR_TAG, RESULT_TAG};
use weft_ip::weft_hdl::netlist::eval::Evaluator;

fn big(x: u128) -> BigUint {
    BigUint::from(x)
}

fn get(s: &mut Evaluator, port: &str) -> u128 {
    LoopPorts::get(s, port).iter_u64_digits().take(2).enumerate().fold(0u128, |a, (i, d)| a | (d as u128) << (64 * i))
}

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    /// A binary64 pattern: ordinary values, with signed zeros, infinities and subnormals mixed in.
    fn f64(&mut self) -> u64 {
        match self.next() % 8 {
            0 => [0u64, 1 << 63, f64::INFINITY.to_bits(), 1][(self.next() % 4) as usize],
            _ => ((self.next() % 2000) as f64 / 7.0 - 140.0).to_bits(),
        }
    }
}

/// What the test last drove on global `name`'s value input.
fn values(s: &mut Evaluator, name: &str, n: usize) -> Vec<u64> {
    let w = s.input(&format!("{name}_value")).expect("a global's value input");
    lanes(&s.get_big(w), n)
}

fn pack(values: &[u64]) -> BigUint {
    values.iter().rev().fold(BigUint::default(), |acc, v| (acc << 64) | BigUint::from(*v))
}

fn lanes(word: &BigUint, n: usize) -> Vec<u64> {
    (0..n).map(|i| ((word >> (64 * i)) & BigUint::from(u64::MAX)).iter_u64_digits().next().unwrap_or(0)).collect()
}

/// Raises `sync` with `id` and clocks until the bridge's step is done, acting as the collective
/// engine: every contribution it takes is checked (length, operation number, payload = the
/// global's value) and answered with `results[k]` for the k-th contribution of the step (a
/// header-only timeout report first when `report`). Returns the writes the bridge made to each
/// global, in order.
fn step(s: &mut Evaluator, spec: &BridgeSpec, id: u16, results: &[Vec<u64>], first_op: u32, report: bool) -> Vec<(String, Vec<u64>)> {
    let partials = [values(s, "g", 3), values(s, "h", 1)];
    LoopPorts::set(s, "sync", &big(1));
    LoopPorts::set(s, "sync_id", &big(id as u128));
    LoopPorts::set(s, "m_axis_tready", &big(1));
    let mut writes = vec![];
    let width = spec.width;
    let per_beat = width / 64;
    let mut sent: Vec<BigUint> = vec![];
    let mut answers: Vec<(BigUint, bool)> = vec![];
    let mut k = 0;
    for _ in 0..2000 {
        if get(s, "reduce_done") == 1 {
            break;
        }
        for g in &spec.globals {
            if get(s, &format!("{}_wr_en", g.name)) == 1 {
                writes.push((g.name.clone(), lanes(&LoopPorts::get(s, &format!("{}_wr_data", g.name)), g.elements)));
            }
        }
        if get(s, "m_axis_tvalid") == 1 {
            sent.push(LoopPorts::get(s, "m_axis_tdata"));
            if get(s, "m_axis_tlast") == 1 {
                // A whole contribution: check it, queue the answer.
                let header = lanes(&sent[0], 2).iter().rev().fold(0u128, |a, w| a << 64 | *w as u128);
                let g = &spec.globals[contribution_global(spec, id, k)];
                let length = (header >> field("length").0) & 0x3FFF;
                assert_eq!(length as usize, g.elements * 8, "contribution length");
                assert_eq!((header >> field("user").0) as u32, first_op + k as u32, "operation number");
                let payload: Vec<u64> = sent[1..].iter().flat_map(|b| lanes(b, per_beat)).take(g.elements).collect();
                assert_eq!(payload, partials[contribution_global(spec, id, k)], "contribution payload");
                if report {
                    answers.push((big((ERROR_TAG as u128) << field("tag").0), true));
                }
                let r = &results[k];
                answers.push((big((RESULT_TAG as u128) << field("tag").0 | ((r.len() * 8) as u128) << field("length").0), false));
                let beats: Vec<BigUint> = r.chunks(per_beat).map(pack).collect();
                let n = beats.len();
                answers.extend(beats.into_iter().enumerate().map(|(i, b)| (b, i + 1 == n)));
                sent.clear();
                k += 1;
            }
        }
        let beat = if answers.is_empty() { None } else { Some(answers.remove(0)) };
        LoopPorts::set(s, "s_axis_tvalid", &big(beat.is_some() as u128));
        LoopPorts::set(s, "s_axis_tlast", &big(beat.as_ref().is_some_and(|b| b.1) as u128));
        LoopPorts::set(s, "s_axis_tdata", &beat.map_or(BigUint::default(), |b| b.0));
        LoopPorts::set(s, "s_axis_tkeep", &big((1u128 << (width / 8)) - 1));
        LoopPorts::edge(s);
    }
    assert_eq!(get(s, "reduce_done"), 1, "the step did not finish");
    LoopPorts::set(s, "sync", &big(0));
    LoopPorts::set(s, "s_axis_tvalid", &big(0));
    LoopPorts::edge(s);
    writes
}

/// The global of the step's k-th contribution.
fn contribution_global(spec: &BridgeSpec, id: u16, k: usize) -> usize {
    spec.loops.iter().find(|l| l.0 == (id >> 1) as u32).expect("a loop with reductions").1[k]
}

fn check(op: ReduceOp, width: usize, seed: u64) {
    let spec = BridgeSpec {
        ty: ElementType::F64,
        width,
        op,
        globals: vec![ReducedGlobal { name: "g".into(), elements: 3 }, ReducedGlobal { name: "h".into(), elements: 1 }],
        loops: vec![(0, vec![0]), (2, vec![1, 0])],
    };
    let mut s = Evaluator::new(reduction_bridge(&spec).unwrap());
    s.reset(2);
    let mut rng = Rng(seed);
    let identity = op.identity(ElementType::F64) as u64;
    let apply = |a: u64, b: u64| op.apply(ElementType::F64, a as u128, b as u128) as u64;
    let mut ops = 0;
    for round in 0..20 {
        // Before loop 0: g kept and started from the identity; h untouched.
        let kept_g: Vec<u64> = (0..3).map(|_| rng.f64()).collect();
        LoopPorts::set(&mut s, "g_value", &pack(&kept_g));
        LoopPorts::set(&mut s, "h_value", &pack(&[rng.f64()]));
        let w = step(&mut s, &spec, 0, &[], ops, false);
        assert_eq!(w, vec![("g".to_string(), vec![identity; 3])], "round {round}: before loop 0");
        // After it: the partial out, kept ∘ result back.
        LoopPorts::set(&mut s, "g_value", &pack(&(0..3).map(|_| rng.f64()).collect::<Vec<_>>()));
        let r: Vec<u64> = (0..3).map(|_| rng.f64()).collect();
        let w = step(&mut s, &spec, 1, std::slice::from_ref(&r), ops, round % 5 == 0);
        ops += 1;
        let want: Vec<u64> = kept_g.iter().zip(&r).map(|(a, b)| apply(*a, *b)).collect();
        assert_eq!(w, vec![("g".to_string(), want)], "round {round}: after loop 0");
        // A step with no reduction is done at once and writes nothing.
        assert!(step(&mut s, &spec, 2, &[], ops, false).is_empty());
        // Loop 2: h then g, two operations.
        let (kh, kg): (Vec<u64>, Vec<u64>) = ((0..1).map(|_| rng.f64()).collect(), (0..3).map(|_| rng.f64()).collect());
        LoopPorts::set(&mut s, "h_value", &pack(&kh));
        LoopPorts::set(&mut s, "g_value", &pack(&kg));
        let w = step(&mut s, &spec, 4, &[], ops, false);
        assert_eq!(w.len(), 2, "round {round}: before loop 2 writes both identities");
        LoopPorts::set(&mut s, "h_value", &pack(&[rng.f64()]));
        LoopPorts::set(&mut s, "g_value", &pack(&(0..3).map(|_| rng.f64()).collect::<Vec<_>>()));
        let (rh, rg): (Vec<u64>, Vec<u64>) = ((0..1).map(|_| rng.f64()).collect(), (0..3).map(|_| rng.f64()).collect());
        let w = step(&mut s, &spec, 5, &[rh.clone(), rg.clone()], ops, false);
        ops += 2;
        let want_h: Vec<u64> = kh.iter().zip(&rh).map(|(a, b)| apply(*a, *b)).collect();
        let want_g: Vec<u64> = kg.iter().zip(&rg).map(|(a, b)| apply(*a, *b)).collect();
        assert_eq!(w, vec![("h".to_string(), want_h), ("g".to_string(), want_g)], "round {round}: after loop 2");
    }
    assert_eq!(get(&mut s, "reduce_operations"), ops as u128);
    assert_eq!(get(&mut s, "reduce_timeouts"), 4);
}

#[test]
fn sums_keep_the_global_and_add_the_result() {
    check(ReduceOp::Sum, 128, 0x5EED);
    check(ReduceOp::Sum, 256, 0x5EED5);
}

#[test]
fn minima_and_maxima_use_ieee_minimum_and_maximum() {
    check(ReduceOp::Min, 128, 0xB1D6E);
    check(ReduceOp::Max, 256, 0xC0FFEE);
}

const JACOBI: &str = include_str!("../../examples/apps/jacobi.app");

#[test]
fn two_operators_and_long_globals_are_refused_by_name() {
    let mesh = weft_ip::app::graph::graph(50, 80, 3);
    let jacobi = Application::<f64>::load("jacobi.app", JACOBI, &mesh).unwrap();
    let spec = BridgeSpec::build(&jacobi, 128, 256).unwrap();
    assert_eq!((spec.op, spec.globals.len()), (ReduceOp::Max, 1));
    let err = BridgeSpec::build(&jacobi, 128, 4).unwrap_err().to_string();
    assert!(err.contains("`change`") && err.contains("max_packet_bytes 4"), "{err}");
    let two = JACOBI
        .replace("global change: 1", "global change: 1\nglobal total: 1")
        .replace("  largest = change max\n", "  largest = change max\n  t = total inc\n")
        .replace("  x = next\n", "  x = next\n  t = next\n");
    let app = Application::<f64>::load("jacobi.app", &two, &mesh).unwrap();
    let err = BridgeSpec::build(&app, 128, 256).unwrap_err().to_string();
    assert!(err.contains("`total`") && err.contains("allreduce_op"), "{err}");
}
