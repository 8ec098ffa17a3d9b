//! Nodes joined through a board's IO channels (`LinkConfig::io_channels`: one `io_link` per
//! neighbour over 256-bit channel models with the board's flow control), in the built-in
//! simulator: random packets between every pair of nodes arrive exactly once, intact and in
//! order per flow with minimal hops (the harness's checks), on a ring and on a torus with a
//! dimension of two, with one channel and with two channels a link.

use weft_sim::network::{Injection, Pattern, Torus, Traffic};
use weft_sim::weft_ip::link::LinkConfig;
use weft_sim::weft_ip::router::RouterConfig;
use weft_sim::weft_ip::system::NodeConfig;

fn config(dims: [usize; 3], width: usize) -> NodeConfig {
    NodeConfig {
        router: RouterConfig { dims, width, vc_buffer_flits: 32, max_packet_bytes: 512, ..Default::default() },
        kernels: vec![],
        allreduce: None,
        link: LinkConfig { lanes: width / 64, io_channels: true, ..LinkConfig::default() },
    }
}

#[test]
fn io_channel_nodes_deliver_random_packets() {
    for (dims, width) in [([4, 1, 1], 512), ([3, 2, 1], 256)] {
        let mut torus = Torus::netlist_nodes(&config(dims, width), 20).unwrap();
        torus.reset();
        let up = torus.bring_up(2_000).unwrap();
        let traffic = Traffic { pattern: Pattern::UniformRandom, injection: Injection::Queued(300), min_bytes: 0, max_bytes: 512, valid_percent: 80, ready_percent: 70, seed: 21 };
        let run = torus.run(&traffic, 20_000).unwrap().unwrap_or_else(|s| panic!("{dims:?}: stuck {s:?}"));
        assert_eq!(run.deliveries.len(), 300, "{dims:?}");
        println!("{dims:?} at {width} bits: up after {up} cycles, 300 packets in {} cycles", run.cycles);
    }
}

/// A node refuses IO channels it cannot fill: 128 bits is half a channel.
#[test]
fn io_channels_need_whole_channels() {
    let mut bad = config([4, 1, 1], 512);
    bad.router.width = 128;
    bad.router.max_packet_bytes = 256;
    bad.link.lanes = 2;
    let e = weft_sim::weft_ip::system::node(&bad).unwrap_err().to_string();
    assert!(e.contains("io_channels") && e.contains("4 or 8 lanes"), "{e}");
}
