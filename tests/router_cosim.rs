//! The generated router Verilog in Verilator: one verilated router per node of the shipped tori,
//! joined link to link, driven by the same harness and checks as the built-in simulator.

use std::path::PathBuf;

use weft::ip::router::RouterConfig;
use weft::sim::catalog::{router_config, TORI};
use weft::sim::network::{Injection, Pattern, Torus, Traffic};

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/weft-router-net")
}

/// ≥ 10⁴ packets of random sizes (0 … max) between random ports of random nodes, random
/// back-pressure at every sink: each arrives exactly once, intact, at the right node and port,
/// with `hops` = the minimal distance and valid check bits, in order per flow.
#[test]
fn ten_thousand_random_packets_arrive_exactly_once_in_order() {
    for dims in TORI {
        let config = router_config(dims);
        let mut torus = Torus::verilated(&config, &dir()).unwrap();
        torus.reset();
        let traffic =
            Traffic { pattern: Pattern::UniformRandom, injection: Injection::Queued(10_000), min_bytes: 0, max_bytes: config.max_packet_bytes, valid_percent: 85, ready_percent: 75, seed: 2024 };
        let run = torus.run(&traffic, 20_000).unwrap().unwrap_or_else(|s| panic!("{dims:?}: stuck {s:?}"));
        assert_eq!(run.deliveries.len(), 10_000);
        assert_eq!(torus.counter_sum("*_dropped"), 0);
        println!("{dims:?}: 10^4 packets in {} cycles", run.cycles);
    }
}

/// Every source always has a maximum-size packet waiting, to uniformly random destinations,
/// for 10⁵ cycles; then injection stops and the network must drain.
fn all_to_all(config: &RouterConfig, cycles: u64) -> Result<(u64, usize), String> {
    let mut torus = Torus::verilated(config, &dir())?;
    torus.reset();
    let traffic = Traffic {
        pattern: Pattern::UniformRandom,
        injection: Injection::Saturated { cycles },
        min_bytes: config.max_packet_bytes,
        max_bytes: config.max_packet_bytes,
        valid_percent: 100,
        ready_percent: 100,
        seed: 77,
    };
    match torus.run(&traffic, 5_000)? {
        Ok(run) => Ok((torus.counter_sum("*_vc1_packets"), run.deliveries.len())),
        Err(stuck) => Err(format!("stuck at cycle {} with {} of {} packets delivered", stuck.cycle, stuck.delivered, stuck.sent)),
    }
}

#[test]
fn full_load_drains_with_dateline_vcs_and_deadlocks_without() {
    for dims in TORI {
        let config = router_config(dims);
        let (vc1, delivered) = all_to_all(&config, 100_000).unwrap_or_else(|e| panic!("{dims:?}: {e}"));
        println!("{dims:?}: {delivered} packets drained, {vc1} of them on the dateline VC for some hop");
        if dims[0] > 2 {
            assert!(vc1 > 0, "{dims:?}: no packet used the dateline VC");
        }
    }
    // A ring of 4 without the dateline switch: packets that wrap around wait on each other.
    let config = RouterConfig { dateline: false, ..router_config(TORI[0]) };
    let result = all_to_all(&config, 100_000);
    assert!(result.is_err(), "no deadlock without dateline switching: {result:?}");
    println!("without dateline switching: {}", result.unwrap_err());
}

/// The verilated routers and the built-in simulator's netlists agree cycle for cycle: the same
/// traffic gives the same arrival cycle for every packet.
#[test]
fn verilator_and_built_in_simulator_agree_cycle_for_cycle() {
    let config = router_config(TORI[0]);
    let traffic = Traffic { pattern: Pattern::UniformRandom, injection: Injection::Queued(400), min_bytes: 0, max_bytes: 300, valid_percent: 70, ready_percent: 60, seed: 31 };
    let mut built_in = Torus::netlist(&config).unwrap();
    built_in.reset();
    let a = built_in.run(&traffic, 5000).unwrap().unwrap();
    let mut verilated = Torus::verilated(&config, &dir()).unwrap();
    verilated.reset();
    let b = verilated.run(&traffic, 5000).unwrap().unwrap();
    let times = |r: &weft::sim::network::NetRun| r.deliveries.iter().map(|d| (d.id, d.head_out, d.tail_out)).collect::<Vec<_>>();
    assert_eq!(times(&a), times(&b));
}
