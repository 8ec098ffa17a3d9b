//! The router in the built-in simulator: tori of router netlists under random traffic.

use weft_sim::network::{HeaderErrors, Injection, Pattern, Torus, Traffic};
use weft_sim::weft_ip::router::RouterConfig;

fn small(dims: [usize; 3]) -> RouterConfig {
    RouterConfig { dims, vc_buffer_flits: 32, max_packet_bytes: 256, ..Default::default() }
}

fn traffic(packets: usize, seed: u64) -> Traffic {
    Traffic { pattern: Pattern::UniformRandom, injection: Injection::Queued(packets), min_bytes: 0, max_bytes: 256, valid_percent: 80, ready_percent: 70, seed }
}

#[test]
fn random_packets_arrive_once_intact_in_order_with_minimal_hops() {
    for dims in [[4, 2, 1], [2, 2, 2]] {
        let config = small(dims);
        let mut torus = Torus::netlist(&config).unwrap();
        torus.reset();
        let run = torus.run(&traffic(600, 3), 2000).unwrap().unwrap_or_else(|s| panic!("{dims:?}: stuck {s:?}"));
        assert_eq!(run.deliveries.len(), 600);
        println!("{dims:?}: 600 packets in {} cycles", run.cycles);
    }
}
