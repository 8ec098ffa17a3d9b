//! The allreduce engine in the built-in simulator: a small ring of nodes, each result bit-exact
//! to the software reference of the documented order, for every element type and operator, and
//! every collective the engine runs on a 2×2 torus.

use weft_sim::network::Torus;
use weft_sim::weft_ip::link::LinkConfig;
use weft_sim::weft_ip::router::RouterConfig;
use weft_sim::weft_ip::system::allreduce::check::operand;
use weft_sim::weft_ip::system::allreduce::{packet_sizes, reference, reference_f32, Collective, ElementType, ReduceOp, REDUCE_OPS};
use weft_sim::weft_ip::system::{Allreduce, NodeConfig};
use weft_sim::weft_ip::weft_hdl::testbench::Rng;

fn vectors(rng: &mut Rng, nodes: usize, len: usize) -> Vec<Vec<f32>> {
    (0..nodes).map(|_| (0..len).map(|_| f32::from_bits(weft_sim::weft_ip::kernels::operand(rng))).collect()).collect()
}

fn bits(v: &[Vec<f32>]) -> Vec<Vec<u128>> {
    v.iter().map(|v| v.iter().map(|x| x.to_bits() as u128).collect()).collect()
}

fn ring(element: ElementType, ports: [usize; 2], width: usize) -> NodeConfig {
    NodeConfig {
        router: RouterConfig { dims: [3, 1, 1], width, vc_buffer_flits: 32, max_packet_bytes: 256, ..Default::default() },
        link: LinkConfig { lanes: width / 64, ..LinkConfig::default() },
        kernels: vec![],
        allreduce: Some(Allreduce::new(ports, element)),
    }
}

#[test]
fn a_ring_of_three_sums_in_the_documented_order() {
    let config = ring(ElementType::F32, [0, 1], 128);
    let mut torus = Torus::netlist_nodes(&config, 12).unwrap();
    torus.reset();
    torus.bring_up(20_000).unwrap();
    torus.program_allreduce([0, 1], ReduceOp::Sum).unwrap();
    let mut rng = Rng::new(7);
    for (len, pressure) in [(7, None), (70, Some(3))] {
        let v = vectors(&mut rng, 3, len);
        let want: Vec<u128> = reference_f32(&config.router, &v).iter().map(|x| x.to_bits() as u128).collect();
        // The order matters for these values: v0 + (v1 + v2) differs somewhere.
        let naive: Vec<u128> = (0..len).map(|k| (v[0][k] + (v[1][k] + v[2][k])).to_bits() as u128).collect();
        assert!(len < 50 || naive != want, "{len} elements: the order is not visible in this data");
        let run = torus.allreduce(0, 32, &bits(&v), &packet_sizes(4 * len, 64), pressure, 20_000).unwrap();
        for (n, got) in run.results.iter().enumerate() {
            assert_eq!(*got, want, "node {n}, {len} elements");
        }
        println!("{len} elements: {} cycles", run.cycles);
    }
}

/// At 256 bits (eight lanes a beat, four-lane links) the same sums come out.
#[test]
fn a_256_bit_ring_sums_in_the_documented_order() {
    let config = ring(ElementType::F32, [1, 0], 256);
    let mut torus = Torus::netlist_nodes(&config, 12).unwrap();
    torus.reset();
    torus.bring_up(20_000).unwrap();
    torus.program_allreduce([1, 0], ReduceOp::Sum).unwrap();
    let mut rng = Rng::new(11);
    let v = bits(&vectors(&mut rng, 3, 61));
    let want = reference(&config.router, &v, ElementType::F32, ReduceOp::Sum);
    let run = torus.allreduce(1, 32, &v, &packet_sizes(4 * 61, 96), Some(5), 20_000).unwrap();
    for (n, got) in run.results.iter().enumerate() {
        assert_eq!(*got, want, "node {n}");
    }
}

/// binary64, binary16, bfloat16 and int32 engines, each running every operator one after
/// another on the same fabric (the operator is a register), with back-pressure: every result
/// equals the reference of its type and operator, NaN, infinities and subnormals included.
#[test]
fn every_element_type_and_operator_reduces_in_the_documented_order() {
    for (element, seed) in [(ElementType::F64, 21), (ElementType::F16, 22), (ElementType::Bf16, 23), (ElementType::I32, 24)] {
        let config = ring(element, [0, 1], 128);
        let mut torus = Torus::netlist_nodes(&config, 12).unwrap();
        torus.reset();
        torus.bring_up(20_000).unwrap();
        let mut rng = Rng::new(seed);
        let len = 37;
        for op in REDUCE_OPS {
            torus.program_allreduce([0, 1], op).unwrap();
            let v: Vec<Vec<u128>> = (0..3).map(|_| (0..len).map(|_| operand(element, &mut rng)).collect()).collect();
            let want = reference(&config.router, &v, element, op);
            let size = element.bytes();
            let run = torus.allreduce(0, element.bits(), &v, &packet_sizes(size * len, 16 * size), Some(seed), 20_000).unwrap();
            for (n, got) in run.results.iter().enumerate() {
                assert_eq!(*got, want, "{} {}: node {n}", element.name(), op.name());
            }
        }
    }
}

/// Every collective on a 2×2 torus (chain 0, 1, 3, 2; butterfly partners 0–1, 2–3, then 0–2,
/// 1–3), one after another on the same fabric with back-pressure on every host stream, for
/// binary32 sums and int32 maxima: every node's result equals the software reference
/// ([`Collective::reference`]: the butterfly's order for a vector of at most 256 bytes, else the
/// chain's, for reductions; the inputs' bits for copies), and a reduce delivers nothing away from
/// its root.
#[test]
fn every_collective_matches_its_reference() {
    for (element, op, seed) in [(ElementType::F32, ReduceOp::Sum, 31), (ElementType::I32, ReduceOp::Max, 32)] {
        let mut config = ring(element, [0, 1], 128);
        config.router.dims = [2, 2, 1];
        let mut torus = Torus::netlist_nodes(&config, 12).unwrap();
        torus.reset();
        torus.bring_up(20_000).unwrap();
        let mut rng = Rng::new(seed);
        let collectives = [
            Collective::Allreduce,
            Collective::Reduce { root: 0 },
            Collective::Reduce { root: 3 },
            Collective::Broadcast { root: 2 },
            Collective::Broadcast { root: 0 },
            Collective::Allgather,
            Collective::ReduceScatter,
            Collective::Barrier,
        ];
        for c in collectives {
            let len = 1 + rng.below(40) as usize;
            let mut v: Vec<Vec<u128>> = (0..4).map(|_| (0..len).map(|_| operand(element, &mut rng)).collect()).collect();
            // A signalling NaN with a payload, which only an exact copy keeps.
            if element == ElementType::F32 {
                for (n, x) in v.iter_mut().enumerate() {
                    x[0] = 0x7F80_0001 + n as u128;
                }
            }
            let want = c.reference(&config.router, &v, element, op, 64);
            let run = torus.collective(c, [0, 1], element, op, &v, 64, Some(seed), 40_000).unwrap();
            assert_eq!(run.results, want, "{} {} {}", c.name(), element.name(), op.name());
            println!("{} of {len} {} elements: {} cycles", c.name(), element.name(), run.cycles);
        }
    }
}

/// A node whose host never contributes: with the watchdog off the others wait for ever; with it
/// on, each host that took part gets the timeout packet and its `allreduce_timeouts` counter is
/// one. A complete operation with the watchdog on reports nothing.
#[test]
fn an_operation_that_cannot_complete_is_reported_not_hung() {
    let config = ring(ElementType::F32, [0, 1], 128);
    let map = weft_sim::weft_ip::system::node::register_map(&config);
    let timeouts = map.iter().find(|r| r.name.ends_with("allreduce_timeouts")).expect("a timeouts counter").addr;
    let mut torus = Torus::netlist_nodes(&config, 12).unwrap();
    torus.reset();
    torus.bring_up(20_000).unwrap();
    torus.program_allreduce([0, 1], ReduceOp::Sum).unwrap();
    let mut rng = Rng::new(31);
    let mut v = bits(&vectors(&mut rng, 3, 40));
    // The watchdog on, every node taking part: no report.
    torus.set_allreduce_timeout(300).unwrap();
    let want = reference(&config.router, &v, ElementType::F32, ReduceOp::Sum);
    let run = torus.allreduce(0, 32, &v, &packet_sizes(4 * 40, 64), Some(3), 20_000).unwrap();
    assert!(run.timed_out.is_empty() && run.results.iter().all(|r| *r == want), "a complete operation");
    // Node 2's host sends nothing; the watchdog off: nothing ends the wait.
    v[2].clear();
    torus.set_allreduce_timeout(0).unwrap();
    let hung = torus.allreduce(0, 32, &v, &packet_sizes(4 * 40, 64), None, 3_000);
    assert!(matches!(hung, Err(weft_sim::Error::Stuck(_))), "without the watchdog: {hung:?}");
    // Now the watchdog on: both hosts that took part are told within the timeout and a margin.
    torus.set_allreduce_timeout(300).unwrap();
    let run = torus.allreduce(0, 32, &v, &packet_sizes(4 * 40, 64), None, 2_000).unwrap();
    assert_eq!(run.timed_out, [0, 1], "the hosts that took part are told");
    for n in 0..2 {
        assert_eq!(torus.axil_read(n, timeouts).unwrap().0, 1, "node {n} counts one timeout");
    }
    assert_eq!(torus.axil_read(2, timeouts).unwrap().0, 0, "node 2 had nothing in flight");
}

/// The butterfly's error path on a 2×2 torus: node 3's host never contributes, so its partners
/// wait; with the watchdog on, each host that took part gets the timeout packet and counts one
/// timeout, node 3 none. A complete short operation before it reports nothing.
#[test]
fn a_butterfly_that_cannot_complete_is_reported_not_hung() {
    let mut config = ring(ElementType::F32, [0, 1], 128);
    config.router.dims = [2, 2, 1];
    let map = weft_sim::weft_ip::system::node::register_map(&config);
    let counter = |name: &str| map.iter().find(|r| r.name.ends_with(name)).expect("a counter").addr;
    let (timeouts, butterflies) = (counter("allreduce_timeouts"), counter("allreduce_butterflies"));
    let mut torus = Torus::netlist_nodes(&config, 12).unwrap();
    torus.reset();
    torus.bring_up(20_000).unwrap();
    torus.set_allreduce_timeout(300).unwrap();
    let mut rng = Rng::new(41);
    let mut v = bits(&vectors(&mut rng, 4, 3));
    // One complete operation through the collectives' programs (the butterfly takes 12 bytes).
    let run = torus.collective(Collective::Allreduce, [0, 1], ElementType::F32, ReduceOp::Sum, &v, 64, Some(4), 20_000).unwrap();
    assert_eq!(run.results, Collective::Allreduce.reference(&config.router, &v, ElementType::F32, ReduceOp::Sum, 64), "a complete operation");
    assert!(run.timed_out.is_empty());
    for n in 0..4 {
        assert_eq!(torus.axil_read(n, butterflies).unwrap().0, 1, "node {n} ran it on the butterfly");
    }
    // The programs stay; node 3 sends nothing.
    v[3].clear();
    let run = torus.allreduce(0, 32, &v, &[12], None, 3_000).unwrap();
    assert_eq!(run.timed_out, [0, 1, 2], "the hosts that took part are told");
    for n in 0..3 {
        assert_eq!(torus.axil_read(n, timeouts).unwrap().0, 1, "node {n} counts one timeout");
    }
    assert_eq!(torus.axil_read(3, timeouts).unwrap().0, 0, "node 3 had nothing in flight");
}

/// One-element operations issued from the register window on a 2×2 torus, with no stream
/// traffic: each node writes its element and an id, raises `go`, polls `allreduce_issue_status`
/// until done and reads the result, which equals the reference — on the chain (`plan`'s
/// programs) and on the butterfly (the collectives' programs) — while the stream saw nothing.
#[test]
fn operations_issued_from_the_register_window_reduce_like_the_streams() {
    let mut config = ring(ElementType::F32, [0, 1], 128);
    config.router.dims = [2, 2, 1];
    let map = weft_sim::weft_ip::system::node::register_map(&config);
    let at = |name: &str| map.iter().find(|r| r.name == name).unwrap_or_else(|| panic!("register {name}")).addr;
    let mut torus = Torus::netlist_nodes(&config, 12).unwrap();
    torus.reset();
    torus.bring_up(20_000).unwrap();
    let mut rng = Rng::new(51);
    for (round, butterfly) in [(0u32, false), (1, true)] {
        if butterfly {
            // The collectives' programs (the butterfly up to 256 bytes), left in place by one run.
            let v = bits(&vectors(&mut rng, 4, 1));
            torus.collective(Collective::Allreduce, [0, 1], ElementType::F32, ReduceOp::Sum, &v, 64, None, 20_000).unwrap();
        } else {
            torus.program_allreduce([0, 1], ReduceOp::Sum).unwrap();
        }
        let v = bits(&vectors(&mut rng, 4, 1));
        let id = 0x8000_0000 | round;
        for n in 0..4 {
            torus.axil_write(n, at("allreduce_issue_value_lo"), v[n][0] as u32).unwrap();
            torus.axil_write(n, at("allreduce_issue_id"), id).unwrap();
            torus.axil_write(n, at("allreduce_issue_control"), 0).unwrap();
        }
        for n in 0..4 {
            torus.axil_write(n, at("allreduce_issue_control"), 1).unwrap();
        }
        let want =
            if butterfly { Collective::Allreduce.reference(&config.router, &v, ElementType::F32, ReduceOp::Sum, 64) } else { vec![reference(&config.router, &v, ElementType::F32, ReduceOp::Sum); 4] };
        for n in 0..4 {
            let mut polls = 0;
            while torus.axil_read(n, at("allreduce_issue_status")).unwrap().0 != 0b010 {
                torus.idle(20);
                polls += 1;
                assert!(polls < 500, "node {n}: status {:#b}", torus.axil_read(n, at("allreduce_issue_status")).unwrap().0);
            }
            assert_eq!(torus.axil_read(n, at("allreduce_issue_result_lo")).unwrap().0 as u128, want[n][0], "node {n} ({})", if butterfly { "butterfly" } else { "chain" });
        }
        let butterflies = map.iter().find(|r| r.name.ends_with("allreduce_butterflies")).unwrap().addr;
        assert_eq!(torus.axil_read(0, butterflies).unwrap().0, 2 * round, "operations the butterfly ran so far");
    }
}

fn striped_torus() -> NodeConfig {
    NodeConfig {
        router: RouterConfig { dims: [3, 2, 1], local_ports: 6, vc_buffer_flits: 32, max_packet_bytes: 256, ..Default::default() },
        link: LinkConfig { lanes: 2, ..LinkConfig::default() },
        kernels: vec![],
        allreduce: Some(Allreduce { stripes: vec![[2, 3], [4, 5]], ..Allreduce::new([0, 1], ElementType::F32) }),
    }
}

/// Striped over three chains on a 3×2×1 torus (three engines a node): every node gets slice k
/// reduced in chain k's order, which differs from the snake's for this data, with random gaps
/// and back-pressure on all three host streams.
#[test]
fn a_striped_allreduce_reduces_each_slice_along_its_chain() {
    use weft_sim::weft_ip::system::allreduce::stripes;
    let config = striped_torus();
    let striping = stripes::chains(&config.router, 3).unwrap();
    assert_eq!((striping.chains.len(), striping.share), (3, 2), "three chains, no link in more than two");
    let mut torus = Torus::netlist_nodes(&config, 12).unwrap();
    torus.reset();
    torus.bring_up(20_000).unwrap();
    let engines = [[0, 1], [2, 3], [4, 5]];
    let mut rng = Rng::new(11);
    for (len, pressure) in [(2, None), (90, Some(5))] {
        let v = bits(&vectors(&mut rng, 6, len));
        let want = stripes::reduction(&config.router, &striping, Collective::Allreduce, &v, ElementType::F32, ReduceOp::Sum);
        let snake = reference(&config.router, &v, ElementType::F32, ReduceOp::Sum);
        assert!(len < 50 || snake != want, "{len} elements: the chains' orders are not visible in this data");
        let (used, run) = torus.collective_striped(Collective::Allreduce, &engines, ElementType::F32, ReduceOp::Sum, &v, 64, pressure, 20_000).unwrap();
        assert_eq!(used, striping);
        for (n, got) in run.results.iter().enumerate() {
            assert_eq!(*got, want, "node {n}, {len} elements");
        }
        println!("{len} elements striped over three chains: {} cycles", run.cycles);
    }
}

/// Reduce, broadcast, allgather and reduce-scatter striped over three chains on a 3×2×1 torus:
/// every host's result equals the software's (slice k along chain k with the root node of
/// reduce and broadcast on every chain), with random gaps and back-pressure on every host
/// stream; special values (NaN payloads, ±0, subnormals) in every vector show that broadcast and
/// allgather copy bits; and the reductions' results differ from the snake's order for this data.
#[test]
fn every_collective_runs_striped_over_three_chains() {
    use weft_sim::weft_ip::system::allreduce::stripes;
    let config = striped_torus();
    let striping = stripes::chains(&config.router, 3).unwrap();
    let mut torus = Torus::netlist_nodes(&config, 12).unwrap();
    torus.reset();
    torus.bring_up(20_000).unwrap();
    let engines = [[0, 1], [2, 3], [4, 5]];
    let mut rng = Rng::new(23);
    let (ty, op) = (ElementType::F32, ReduceOp::Sum);
    for (k, c) in [Collective::Reduce { root: 4 }, Collective::Broadcast { root: 1 }, Collective::Allgather, Collective::ReduceScatter].into_iter().enumerate() {
        let len = 60 + k;
        let v: Vec<Vec<u128>> = (0..6).map(|_| (0..len).map(|_| operand(ty, &mut rng)).collect()).collect();
        let want = stripes::collective_reference(&config.router, &striping, c, &v, ty, op);
        if matches!(c, Collective::Reduce { .. } | Collective::ReduceScatter) {
            assert_ne!(want, c.reference(&config.router, &v, ty, op, 64), "{}: the chains' orders are not visible in this data", c.name());
        }
        let (_, run) = torus.collective_striped(c, &engines, ty, op, &v, 64, Some(k as u64 + 1), 40_000).unwrap();
        for (n, got) in run.results.iter().enumerate() {
            assert_eq!(*got, want[n], "{}: node {n}", c.name());
        }
        println!("{} of {len} elements striped over three chains: {} cycles", c.name(), run.cycles);
    }
}
