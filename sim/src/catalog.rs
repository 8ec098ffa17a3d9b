//! Every module weft ships: the IP catalogue plus the modules whose built-in testbench needs the
//! models of this crate (the reliable link, checked between two endpoints over channel models).

use weft_ip::catalog::Shipped;
use weft_ip::link::{endpoint, LinkConfig};
use weft_ip::weft_hdl::export::{export_netlist, ExportError, ModuleSpec};

use crate::channel::ChannelConfig;
use crate::link::{netlist_device, LinkPair, Traffic};

/// The link configurations shipped as Verilog: lanes → module name.
pub const LINKS: [(usize, &str); 2] = [(1, "reliable_link_x1"), (2, "reliable_link_x2")];

pub fn link_config(lanes: usize) -> LinkConfig {
    LinkConfig { lanes, ..Default::default() }
}

fn link_spec(lanes: usize, name: &str) -> ModuleSpec {
    let c = link_config(lanes);
    ModuleSpec {
        family: "link",
        name: name.to_string(),
        summary: format!("reliable link endpoint over a {lanes}-lane Aurora 64B/66B channel: CRC-32C, go-back-N, credits for two virtual channels"),
        parameters: vec![
            ("lanes".into(), lanes.to_string()),
            ("word_bits".into(), (64 * lanes).to_string()),
            ("max_frame_words".into(), c.max_frame_words.to_string()),
            ("replay_words".into(), c.replay_words.to_string()),
            ("vc_buffer_words".into(), c.vc_buffer_words.to_string()),
            ("retransmit_timeout".into(), format!("{} cycles", c.retransmit_timeout)),
            ("clock_compensation".into(), format!("{} blocks every {} cycles", c.cc_burst, c.cc_interval)),
        ],
        hidden_ports: vec![],
    }
}

fn link_verilog(spec: &ModuleSpec, lanes: usize) -> Result<String, ExportError> {
    let net = endpoint(&link_config(lanes)).map_err(ExportError)?;
    export_netlist(spec, &net)
}

/// Two endpoints over skewed, misaligned channels with bit errors both ways.
pub fn link_testbench(lanes: usize) -> Result<String, String> {
    let config = link_config(lanes);
    let mut ch = ChannelConfig::clean(lanes, 12);
    ch.bit_offset = (0..lanes).map(|k| 5 + 17 * k).collect();
    ch.skew = (0..lanes).map(|k| (3 * k) % 5).collect();
    ch.bit_error_rate = 1e-5;
    let back = ChannelConfig { seed: 77, ..ch.clone() };
    let mut pair = LinkPair::new(config.clone(), [netlist_device(&config)?, netlist_device(&config)?], [ch, back]);
    pair.reset();
    let up = pair.train(50_000).ok_or("channel did not come up")?;
    let traffic = Traffic { packets: 400, min_bytes: 1, max_bytes: 2048, valid_percent: 80, ready_percent: 60, both_ways: true, seed: 21 };
    let run = pair.run(&traffic, 50_000)?;
    let retx: u64 = run.counters.iter().find(|c| c.0 == "frames_retransmitted").map_or(0, |c| c.1[0] + c.1[1]);
    Ok(format!("up after {up} cycles; 800 packets (1..2048 B, both ways, BER 1e-5) delivered exactly once in {} cycles, {retx} frames retransmitted", run.cycles))
}

pub fn shipped() -> Vec<Shipped> {
    let mut all = weft_ip::catalog::shipped();
    all.push(Shipped { spec: link_spec(1, LINKS[0].1), verilog: |s| link_verilog(s, 1), testbench: || link_testbench(1) });
    all.push(Shipped { spec: link_spec(2, LINKS[1].1), verilog: |s| link_verilog(s, 2), testbench: || link_testbench(2) });
    all.sort_by(|a, b| a.relative_path().cmp(&b.relative_path()));
    all
}
