//! Nodes (router + reliable link endpoints + register window) joined by channel models, in the
//! built-in simulator: coordinates written over AXI4-Lite, links trained, random packets
//! delivered exactly once, intact and in order, with the router's credits crossing the links.

use weft_sim::network::{Injection, Pattern, Torus, Traffic};
use weft_sim::weft_ip::link::LinkConfig;
use weft_sim::weft_ip::router::RouterConfig;
use weft_sim::weft_ip::system::NodeConfig;

fn config(dims: [usize; 3]) -> NodeConfig {
    NodeConfig { router: RouterConfig { dims, vc_buffer_flits: 32, max_packet_bytes: 256, ..Default::default() }, kernels: vec![], allreduce: None, link: LinkConfig::default() }
}

#[test]
fn nodes_deliver_random_packets_over_links() {
    for dims in [[2, 1, 1], [3, 2, 1]] {
        let mut torus = Torus::netlist_nodes(&config(dims), 12).unwrap();
        torus.reset();
        let up = torus.bring_up(20_000).unwrap();
        let traffic = Traffic { pattern: Pattern::UniformRandom, injection: Injection::Queued(300), min_bytes: 0, max_bytes: 256, valid_percent: 80, ready_percent: 70, seed: 12 };
        let run = torus.run(&traffic, 5_000).unwrap().unwrap_or_else(|s| panic!("{dims:?}: stuck {s:?}"));
        assert_eq!(run.deliveries.len(), 300);
        println!("{dims:?}: links up after {up} cycles, 300 packets in {} cycles", run.cycles);
    }
}

/// The shipped 4x2x1 configuration (1024-byte packets, 256-flit buffers) with bit errors on
/// every serial link: the links retransmit, every packet still arrives exactly once, in order.
#[test]
fn shipped_torus_delivers_under_bit_errors() {
    let config = weft_sim::catalog::node_config([4, 2, 1]);
    let mut torus = Torus::netlist_nodes(&config, 16).unwrap();
    torus.reset();
    torus.bring_up(20_000).unwrap();
    torus.set_bit_error_rate(2e-5);
    let traffic = Traffic { pattern: Pattern::UniformRandom, injection: Injection::Queued(400), min_bytes: 0, max_bytes: 1024, valid_percent: 80, ready_percent: 70, seed: 33 };
    let run = torus.run(&traffic, 20_000).unwrap().unwrap_or_else(|s| panic!("stuck {s:?}"));
    assert_eq!(run.deliveries.len(), 400);
    assert!(torus.flipped_bits() > 50, "only {} bits flipped", torus.flipped_bits());
    println!("4x2x1 nodes: 400 packets in {} cycles with {} bits flipped", run.cycles, torus.flipped_bits());
}

/// The self-test block, driven only through the register window as a host-less board would:
/// node 0 and node 1 each send `count` packets to the other's port 0 over the link, with bit
/// errors on the cables; each checker sees every packet with the pattern intact (the payload
/// reference is the software `pattern`, recomputed by the checker), and the generators' cycle
/// counters stop when their own checker is complete.
#[test]
fn selftest_runs_from_registers_across_a_link() {
    let config = config([2, 1, 1]);
    selftest_across_a_link(Torus::netlist_nodes(&config, 12).unwrap());
}

/// The same between two boards: node 1's oscillator 312 ppm slower than node 0's, each link
/// receiving on its sender's clock.
#[test]
fn selftest_runs_across_a_link_between_independent_clocks() {
    let config = NodeConfig { link: LinkConfig { rx_clock: true, ..LinkConfig::default() }, ..config([2, 1, 1]) };
    selftest_across_a_link(Torus::netlist_nodes_async(&config, 12, &[6400, 6402], &[0, 2500]).unwrap());
}

/// The same on 256-bit nodes (4-lane links): the self-test block at its second width.
#[test]
fn selftest_runs_from_registers_across_a_256_bit_link() {
    let base = config([2, 1, 1]);
    let config = NodeConfig { router: RouterConfig { width: 256, vc_buffer_flits: 16, ..base.router }, link: LinkConfig { lanes: 4, ..LinkConfig::default() }, kernels: vec![], allreduce: None };
    selftest_across_a_link(Torus::netlist_nodes(&config, 12).unwrap());
}

/// A window of one packet: each generator sends a packet, then waits for its neighbour's before
/// the next (seed 001's send-then-receive kernel); both finish, and take at least a cable round
/// per packet.
#[test]
fn selftest_in_lockstep_waits_for_each_packet() {
    use weft_sim::weft_ip::axil::{SELFTEST_REGS, SELFTEST_STATUS};
    let mut torus = Torus::netlist_nodes(&config([2, 1, 1]), 40).unwrap();
    torus.reset();
    torus.bring_up(20_000).unwrap();
    let reg = |name: &str| SELFTEST_REGS.iter().find(|r| r.1 == name).unwrap().0;
    let count = 20u32;
    for n in 0..2 {
        for (name, value) in [("count", count), ("length", 8), ("dst", 1 - n as u32), ("tag", 5), ("seed", 9), ("expected", count), ("window", 1), ("control", 0b101), ("control", 0b001)] {
            torus.axil_write(n, reg(name), value).unwrap();
        }
    }
    for n in 0..2 {
        torus.axil_write(n, reg("control"), 0b011).unwrap();
    }
    torus.idle(20 * 200);
    for n in 0..2 {
        let [sent, cycles, state, packets, _, errors] = [0, 1, 2, 3, 4, 5].map(|i| torus.axil_read(n, SELFTEST_STATUS + 4 * i).unwrap().0);
        assert_eq!((sent, packets, errors, state), (count, count, 0, 0b10), "node {n}");
        // Each packet waits for the neighbour's, which crossed a 40-cycle cable.
        assert!(cycles >= 40 * (count - 1), "node {n}: {cycles} cycles for {count} packets in lockstep");
        println!("node {n}: {count} packets in lockstep, {cycles} cycles");
    }
}

fn selftest_across_a_link(mut torus: Torus<weft_sim::link::NetlistDevice>) {
    use weft_sim::weft_ip::axil::{LINK_STATUS, SELFTEST_REGS, SELFTEST_STATUS};
    torus.reset();
    assert_eq!(torus.axil_read(0, LINK_STATUS).unwrap(), (0, 0), "links reported up before training");
    torus.bring_up(20_000).unwrap();
    // Endpoints X+ and X− (bits 0 and 1) and the all-up bit 31.
    for n in 0..2 {
        assert_eq!(torus.axil_read(n, LINK_STATUS).unwrap(), (0x8000_0003, 0), "node {n}: link status");
    }
    torus.set_bit_error_rate(1e-5);
    let reg = |name: &str| SELFTEST_REGS.iter().find(|r| r.1 == name).unwrap().0;
    let (count, length) = (40u32, 200u32);
    for n in 0..2 {
        let other = 1 - n as u32;
        // Header bits 21:0: dst_x | dst_y << 6 | dst_z << 12 | dst_port << 18.
        for (name, value) in [("count", count), ("length", length), ("dst", other), ("tag", 5), ("seed", 0xC0FFEE), ("expected", count), ("control", 0b101)] {
            torus.axil_write(n, reg(name), value).unwrap();
        }
        torus.axil_write(n, reg("control"), 0b001).unwrap(); // enabled, checker cleared
    }
    for n in 0..2 {
        torus.axil_write(n, reg("control"), 0b011).unwrap(); // start
    }
    let status = |t: &mut Torus<_>, n: usize, i: u32| t.axil_read(n, SELFTEST_STATUS + 4 * i).unwrap();
    let mut waited = 0;
    while (0..2).any(|n| status(&mut torus, n, 2).0 & 2 == 0) {
        torus.idle(200);
        waited += 200;
        assert!(waited < 40_000, "self-test not complete after {waited} cycles");
    }
    let flits = 1 + (length as u64).div_ceil(torus.config.width as u64 / 8);
    for n in 0..2 {
        let [sent, cycles, state, packets, bytes, errors] = [0, 1, 2, 3, 4, 5].map(|i| status(&mut torus, n, i).0 as u64);
        assert_eq!((sent, packets, bytes, errors), (count as u64, count as u64, (count * length) as u64, 0), "node {n}");
        assert_eq!(state, 0b10, "node {n}: generator idle, checker complete");
        // At most one flit per cycle leaves a port: the run cannot be shorter than the flits.
        assert!(cycles >= count as u64 * flits && cycles < waited as u64 + 1000, "node {n}: {cycles} cycles");
        println!("node {n}: {count} packets of {length} B sent and checked, {cycles} cycles first send to last receive");
    }
    assert!(torus.flipped_bits() > 0);
}

/// Scenario (a) in the built-in simulator: the shipped 4x2x1 nodes each on its own oscillator
/// (periods 6.398, 6.400 and 6.402 ns in turn, distinct phases), every link receiving on its
/// sender's clock through its elastic buffer, saturating random traffic with bit errors: every
/// packet exactly once, intact, in order, minimal hops; and the elastic buffers slip, read back
/// over AXI4-Lite.
#[test]
fn nodes_on_independent_clocks_lose_nothing() {
    let config = weft_sim::catalog::node_config([4, 2, 1]);
    let nodes = config.router.nodes();
    let periods: Vec<u64> = (0..nodes).map(|n| 6398 + 2 * (n as u64 % 3)).collect();
    let phases: Vec<u64> = (0..nodes).map(|n| 797 * n as u64 % 6398).collect();
    let mut torus = Torus::netlist_nodes_async(&config, 16, &periods, &phases).unwrap();
    torus.reset();
    let up = torus.bring_up(20_000).unwrap();
    torus.set_bit_error_rate(1e-6);
    let cycles = 20_000;
    let traffic = Traffic { pattern: Pattern::UniformRandom, injection: Injection::Saturated { cycles }, min_bytes: 0, max_bytes: 1024, valid_percent: 100, ready_percent: 100, seed: 35 };
    let run = torus.run(&traffic, 20_000).unwrap().unwrap_or_else(|s| panic!("stuck {s:?}"));
    assert_eq!(run.deliveries.len(), run.sent);
    // Node 0 (6.398 ns) receives in X from node 1 (6.400) and node 3 (6.398), in Y from node 4
    // (6.400): its X+ and Y buffers run slower than it reads and slip, its X− one (same period)
    // hardly at all.
    let map = weft_sim::weft_ip::system::node::register_map(&config);
    let addr = |name: &str| map.iter().find(|r| r.name == name).unwrap_or_else(|| panic!("no register {name}")).addr;
    let mut slips = vec![];
    for e in ["xp", "xn", "yp", "yn"] {
        let (value, resp) = torus.axil_read(0, addr(&format!("stat_{e}_slips"))).unwrap();
        assert_eq!(resp, 0);
        slips.push(value);
    }
    let edges = torus.node_edges().unwrap();
    // Node 0's clock is 312 ppm faster than node 1's: one slip per 3200 cycles.
    let expected = (edges[0] - edges[1]) as u32;
    assert!(slips[0].abs_diff(expected) <= 8, "X+ slips {slips:?}, expected about {expected} (edges {edges:?})");
    println!(
        "4x2x1 nodes on their own clocks: links up after {up} cycles; {} packets in {} cycles of node 0 with {} bits flipped; node 0 slips xp/xn/yp/yn {slips:?}",
        run.sent,
        run.cycles,
        torus.flipped_bits()
    );
}
