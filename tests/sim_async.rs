//! The generated `<cfg>_sim_async` tops of both shipped systems in Verilator: every node on its
//! own oscillator (periods 6.398, 6.400 and 6.402 ns in turn, distinct phases: neighbours up to
//! 625 ppm apart, beyond the ±100 ppm of real oscillators), each link receiving on its sender's
//! clock, with the same traffic checks as `system_sim` (every packet exactly once, intact, in
//! order per flow, minimal hops):
//! - (a) saturating random traffic between free-running clocks;
//! - (b) a cable pulled for 10⁵ cycles mid-traffic (`cut`: its channel delivers random bits) and
//!   put back: the link goes down, retrains by itself, and nothing is lost, duplicated or
//!   reordered.

use std::path::{Path, PathBuf};

use weft::sim::network::{Injection, Pattern, Torus, Traffic};
use weft::ip::router::Direction;
use weft::system::SystemConfig;

/// Cycles (of node 0's clock) of saturating traffic in scenario (a); `WEFT_ASYNC_CYCLES`
/// overrides the 10⁶ of the issue (a quick look: 30000).
fn traffic_cycles() -> u64 {
    std::env::var("WEFT_ASYNC_CYCLES").ok().and_then(|v| v.parse().ok()).unwrap_or(1_000_000)
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

fn torus(system: &SystemConfig, file: &Path) -> Torus<weft::sim::link::VerilatorDevice> {
    let nodes = system.node.router.nodes();
    let periods: Vec<u64> = (0..nodes).map(|n| 6398 + 2 * (n as u64 % 3)).collect();
    let phases: Vec<u64> = (0..nodes).map(|n| 797 * n as u64 % 6398).collect();
    let mut torus = Torus::verilated_sim_async(&system.node.router, file, &format!("{}_sim_async", system.name), &periods, &phases).unwrap();
    torus.reset();
    torus
}

// One test per shipped system, so that the two run side by side.
#[test]
fn torus_4x2x1_loses_nothing_between_independent_clocks_and_a_pulled_cable() {
    scenarios(0);
}

#[test]
fn torus_2x2x2_loses_nothing_between_independent_clocks_and_a_pulled_cable() {
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
        println!("{name}_sim_async (a): links up after {up} cycles; {} packets in {} cycles of node 0 (edges per node {:?}), none lost", run.sent, run.cycles, t.node_edges().unwrap());

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
        println!("{name}_sim_async (b): cable X+ of node 0 pulled for {pulled} cycles mid-traffic (a link down at {down} instants of the 8 clocks); {packets} packets in {} cycles, none lost, every link up again", run.cycles);
    }
    let _ = std::fs::remove_dir_all(&dir);
}
