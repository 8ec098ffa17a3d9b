//! The generated `<cfg>_sim_async` tops of both shipped systems in Verilator: every node on its
//! own oscillator (periods 6.398, 6.400 and 6.402 ns in turn, distinct phases: neighbours up to
//! 625 ppm apart, beyond the ±100 ppm of real oscillators), each link receiving on its sender's
//! clock, with the same traffic checks as `system_sim` (every packet exactly once, intact, in
//! order per flow, minimal hops):
//! - (a) saturating random traffic between free-running clocks;
//! - (b) a cable pulled for 10⁵ cycles mid-traffic (`cut`: its channel delivers random bits) and
//!   put back: the link goes down, retrains by itself, and nothing is lost, duplicated or
//!   reordered;
//! - (c) a node held in reset for 10⁴ cycles while its neighbours keep sending, then released:
//!   every link comes back by itself, only packets to, from or through that node and in the
//!   network before the links were back are lost (the scoreboard's rule,
//!   `weft_sim::network::Restart`), each neighbour counts the restart once and the frames it
//!   dropped, and the torus drains.
//!
//! Each scenario prints its counts, read through the top's register read channels: packets,
//! slips, retrains, restarts seen, frames dropped, packets lost.

use std::path::{Path, PathBuf};

use weft::ip::router::Direction;
use weft::ip::system::node::register_map;
use weft::sim::link::VerilatorDevice;
use weft::sim::network::{Injection, Pattern, Torus, Traffic};
use weft::system::SystemConfig;

/// Cycles (of node 0's clock) of saturating traffic in scenario (a); `WEFT_ASYNC_CYCLES`
/// overrides the default 2·10⁴ (about 12 slips a link at 625 ppm; the documented figures are
/// `WEFT_ASYNC_CYCLES=1000000`).
fn traffic_cycles() -> u64 {
    std::env::var("WEFT_ASYNC_CYCLES").ok().and_then(|v| v.parse().ok()).unwrap_or(20_000)
}

fn model_file(system: &SystemConfig, dir: &Path) -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let name = &system.name;
    let node = std::fs::read_to_string(root.join(format!("generated/system/{name}_node.v"))).unwrap();
    let sim = std::fs::read_to_string(root.join(format!("generated/system/{name}_sim.v"))).unwrap();
    let file = dir.join(format!("{name}_sim_async.v"));
    std::fs::write(&file, node + &sim).unwrap();
    file
}

/// Per node, per link endpoint (in the node's order), the value of link counter `name`.
fn link_counter(t: &mut Torus<VerilatorDevice>, system: &SystemConfig, name: &str) -> Vec<Vec<u64>> {
    let map = register_map(&system.node);
    (0..system.node.router.nodes())
        .map(|n| {
            system
                .node
                .endpoints()
                .iter()
                .map(|e| {
                    let reg = map.iter().find(|r| r.name == format!("stat_{}_{name}", e.name())).unwrap_or_else(|| panic!("no register for {name}"));
                    t.axil_read(n, reg.addr).unwrap().0 as u64
                })
                .collect()
        })
        .collect()
}

/// Slips and retrains summed over every endpoint.
fn health(t: &mut Torus<VerilatorDevice>, system: &SystemConfig) -> String {
    let sum = |v: Vec<Vec<u64>>| v.iter().flatten().sum::<u64>();
    format!("slips {}, retrains {}", sum(link_counter(t, system, "slips")), sum(link_counter(t, system, "retrains")))
}

fn torus(system: &SystemConfig, file: &Path) -> Torus<VerilatorDevice> {
    let nodes = system.node.router.nodes();
    let periods: Vec<u64> = (0..nodes).map(|n| 6398 + 2 * (n as u64 % 3)).collect();
    let phases: Vec<u64> = (0..nodes).map(|n| 797 * n as u64 % 6398).collect();
    let mut torus = Torus::verilated_sim_async(&system.node.router, file, &format!("{}_sim_async", system.name), &periods, &phases).unwrap();
    torus.reset();
    torus
}

#[test]
fn torus_4x2x1_survives_independent_clocks_a_pulled_cable_and_a_node_reset() {
    scenarios(0);
}

/// Opt-in (`-- --ignored`; the default run covers `torus_4x2x1`).
#[test]
#[ignore]
fn torus_2x2x2_survives_independent_clocks_a_pulled_cable_and_a_node_reset() {
    scenarios(1);
}

fn scenarios(which: usize) {
    let system = weft::system::shipped().swap_remove(which);
    let dir = std::env::temp_dir().join(format!("weft-sim-async-{}-{}", std::process::id(), system.name));
    std::fs::create_dir_all(&dir).unwrap();
    {
        let name = &system.name;
        let file = model_file(&system, &dir);
        let max_bytes = system.node.router.max_packet_bytes;

        // (a) Saturating random traffic between free-running clocks.
        let mut t = torus(&system, &file);
        let up = t.bring_up(40_000).unwrap();
        let cycles = traffic_cycles();
        let traffic = Traffic { pattern: Pattern::UniformRandom, injection: Injection::Saturated { cycles }, min_bytes: 0, max_bytes, valid_percent: 100, ready_percent: 100, seed: 41 };
        let run = t.run(&traffic, 20_000).unwrap().unwrap_or_else(|s| panic!("{name}_sim_async (a): stuck {s:?}"));
        assert_eq!(run.deliveries.len(), run.sent);
        println!(
            "{name}_sim_async (a): links up after {up} cycles; {} packets in {} cycles of node 0 (edges per node {:?}), none lost; {}",
            run.sent,
            run.cycles,
            t.node_edges().unwrap(),
            health(&mut t, &system)
        );

        // (b) The cable leaving node 0 in X+ pulled for a while mid-traffic, then put back.
        let mut t = torus(&system, &file);
        t.bring_up(40_000).unwrap();
        let packets = 1500;
        let traffic = Traffic { pattern: Pattern::UniformRandom, injection: Injection::Queued(packets), min_bytes: 0, max_bytes, valid_percent: 85, ready_percent: 75, seed: 43 };
        t.idle(200);
        t.cut(0, Direction { dim: 0, plus: true }, true);
        let start = t.cycle;
        // The queued packets start flowing while the cable is out; it comes back after `pulled`.
        let pulled = 100_000;
        let (mut down, mut restored_at) = (0u64, None);
        // Flows over the pulled cable wait for it: allow the whole outage without a delivery.
        let run = t.run_with(&traffic, pulled + 40_000, &mut |t| {
            if t.cycle < start + pulled {
                down += u64::from(!t.link_up());
            } else if restored_at.is_none() {
                t.cut(0, Direction { dim: 0, plus: true }, false);
                restored_at = Some(t.cycle);
            }
        });
        let run = run.unwrap().unwrap_or_else(|s| panic!("{name}_sim_async (b): stuck {s:?}"));
        assert_eq!(run.deliveries.len(), packets);
        assert!(restored_at.is_some(), "{name}: the run ended before the cable came back");
        assert!(t.link_up(), "{name}: the link did not retrain");
        // Instants (of any node's clock) while the cable was out and some link was down.
        assert!(down > 5 * pulled, "{name}: only {down} instants with a link down while the cable was out");
        println!("{name}_sim_async (b): cable X+ of node 0 pulled for {pulled} cycles mid-traffic (a link down at {down} instants of the 8 clocks); {packets} packets in {} cycles, none lost, every link up again; {}", run.cycles, health(&mut t, &system));

        // (c) Node 1 held in reset for a while mid-traffic, its neighbours sending on.
        let mut t = torus(&system, &file);
        t.bring_up(40_000).unwrap();
        let packets = 3000;
        let traffic = Traffic { pattern: Pattern::UniformRandom, injection: Injection::Queued(packets), min_bytes: 0, max_bytes, valid_percent: 85, ready_percent: 75, seed: 47 };
        let (victim, held) = (1, 10_000);
        let start = t.cycle + 3_000;
        let run = t.run_with(&traffic, 40_000, &mut |t| {
            if t.cycle == start {
                t.hold_in_reset(victim, true);
            } else if t.cycle == start + held {
                t.hold_in_reset(victim, false);
            }
        });
        let run = run.unwrap().unwrap_or_else(|s| panic!("{name}_sim_async (c): stuck {s:?}"));
        assert!(t.link_up(), "{name}: the links of the restarted node did not come back");
        let restart = t.restarts[0].clone();
        assert!(restart.up_again.is_some(), "{name}: the run ended before the links were back");
        assert_eq!(run.deliveries.len() + run.lost.len(), packets);
        // Each endpoint facing the restarted node saw it restart once; no other did.
        let rc = &system.node.router;
        let restarts = link_counter(&mut t, &system, "partner_restarts");
        let dropped = link_counter(&mut t, &system, "frames_dropped");
        for n in 0..rc.nodes() {
            for (k, e) in system.node.endpoints().iter().enumerate() {
                let facing = n != victim && rc.neighbour(n, *e) == victim;
                assert_eq!(restarts[n][k], facing as u64, "{name}: node {n} endpoint {} counted {} partner restarts", e.name(), restarts[n][k]);
            }
        }
        println!(
            "{name}_sim_async (c): node {victim} held in reset for {held} cycles mid-traffic; links up again {} cycles after release; {} of {packets} packets delivered, {} lost (all to, from or through node {victim}); neighbours saw {} restarts and dropped {} frames; {}",
            restart.up_again.unwrap() - restart.released.unwrap(),
            run.deliveries.len(),
            run.lost.len(),
            restarts.iter().flatten().sum::<u64>(),
            dropped.iter().flatten().sum::<u64>(),
            health(&mut t, &system)
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
