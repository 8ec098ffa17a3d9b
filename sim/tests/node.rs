//! Nodes (router + reliable link endpoints + register window) joined by channel models, in the
//! built-in simulator: coordinates written over AXI4-Lite, links trained, random packets
//! delivered exactly once, intact and in order, with the router's credits crossing the links.

use weft_sim::network::{Injection, Pattern, Torus, Traffic};
use weft_sim::weft_ip::link::LinkConfig;
use weft_sim::weft_ip::router::RouterConfig;
use weft_sim::weft_ip::system::NodeConfig;

fn config(dims: [usize; 3]) -> NodeConfig {
    NodeConfig { router: RouterConfig { dims, vc_buffer_flits: 32, max_packet_bytes: 256, ..Default::default() }, link: LinkConfig::default() }
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
    let config = NodeConfig { router: RouterConfig { dims: [4, 2, 1], ..Default::default() }, link: LinkConfig::default() };
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
