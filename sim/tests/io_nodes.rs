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

/// The simulation tops' IO channel (a netlist) and the harness's software model, written
/// separately, agree cycle by cycle under a random sender and receiver: the sender's `tready`,
/// the receiver's `tvalid` and `tdata`, with a cut in the middle.
#[test]
fn the_io_channel_netlist_and_the_software_model_agree() {
    use weft_sim::io_channel::IoChannel;
    use weft_sim::link::scalar;
    use weft_sim::weft_ip::system::channel::io_channel;
    use weft_sim::weft_ip::weft_hdl::netlist::eval::Evaluator;
    use weft_sim::weft_ip::weft_hdl::testbench::Rng;
    let (latency, buffer) = (9, 8);
    let mut net = Evaluator::new(io_channel(latency, buffer).unwrap());
    let mut model = IoChannel::new(latency, buffer);
    let mut rng = Rng::new(5);
    net.reset(2);
    let (mut offered, mut word) = (false, 0u64);
    let (mut sent, mut taken) = (0, 0);
    for cycle in 0..4000 {
        let cut = (1500..1700).contains(&cycle);
        if !offered && rng.below(3) != 0 {
            offered = true;
            word = rng.next_u64();
        }
        let ready_rx = rng.below(4) != 0;
        net.set_input("s_axis_tvalid", offered as u128);
        net.set_input_bits("s_axis_tdata", 0, 128, word as u128);
        net.set_input("m_axis_tready", ready_rx as u128);
        net.set_input("cut", cut as u128);
        net.settle();
        let head = model.head().filter(|_| !cut).map(|v| v[0]);
        assert_eq!(net.get_output("s_axis_tready") == 1, model.ready(), "cycle {cycle}: sender's tready");
        assert_eq!(net.get_output("m_axis_tvalid") == 1, head.is_some(), "cycle {cycle}: receiver's tvalid");
        if let Some(h) = head {
            assert_eq!(net.get_output_bits("m_axis_tdata", 0, 64) as u64, h, "cycle {cycle}: receiver's tdata");
        }
        let go = offered && model.ready();
        model.step(go.then(|| scalar(word)), head.is_some() && ready_rx);
        sent += go as usize;
        taken += (head.is_some() && ready_rx) as usize;
        offered &= !go;
        net.clock(false);
    }
    assert!(sent > 1000 && taken > 1000, "{sent} words sent, {taken} taken");
}
