//! The reliable link in the built-in simulator: two endpoints, two channel models.

use weft_ip::link::LinkConfig;
use weft_sim::channel::ChannelConfig;
use weft_sim::link::{netlist_device, LinkPair, Traffic};

fn pair(config: &LinkConfig, channels: [ChannelConfig; 2]) -> LinkPair<weft_sim::link::NetlistDevice> {
    let ends = [netlist_device(config).unwrap(), netlist_device(config).unwrap()];
    let mut pair = LinkPair::new(config.clone(), ends, channels);
    pair.reset();
    pair
}

#[test]
fn clean_link_trains_and_delivers() {
    for lanes in [1, 2, 4] {
        let config = LinkConfig { lanes, max_frame_words: 16, replay_words: 256, vc_buffer_words: 64, ..Default::default() };
        let mut ch = ChannelConfig::clean(lanes, 8);
        ch.bit_offset = (0..lanes).map(|k| 7 + 13 * k).collect();
        ch.skew = (0..lanes).map(|k| k % 3).collect();
        let mut pair = pair(&config, [ch.clone(), ChannelConfig { seed: 2, ..ch }]);
        let t = pair.train(20_000).expect("channel up");
        eprintln!("lanes {lanes}: up after {t} cycles");
        let traffic = Traffic { packets: 300, min_bytes: 1, max_bytes: 300, valid_percent: 70, ready_percent: 60, both_ways: true, seed: 5 };
        let run = pair.run(&traffic, 5000).unwrap();
        eprintln!("{run:?}");
    }
}
