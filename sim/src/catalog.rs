//! Every module weft ships: the IP catalogue plus the modules whose built-in testbench needs the
//! models of this crate (the reliable link, checked between two endpoints over channel models).

use weft_ip::catalog::Shipped;
use weft_ip::link::{endpoint, LinkConfig};
use weft_ip::router::RouterConfig;
use weft_ip::system::node::counter_names;
use weft_ip::system::{node, NodeConfig};
use weft_ip::weft_hdl::export::{export_netlist, ExportError, ModuleSpec};

use crate::channel::ChannelConfig;
use crate::link::{netlist_device, LinkPair, Traffic};
use crate::network::verilog::{router_parameters, router_spec_for};
use crate::network::{Injection, Pattern, Torus};

pub use crate::network::verilog::{router_verilog_for, torus_name};

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

/// The shipped node of a torus: the shipped router, 2-lane reliable links (128-bit words).
pub fn node_config(dims: [usize; 3]) -> NodeConfig {
    NodeConfig { router: router_config(dims), link: link_config(2) }
}

fn node_spec(dims: [usize; 3]) -> ModuleSpec {
    node_spec_for(&format!("torus_{}_node", torus_name(dims)), &node_config(dims))
}

/// The header of a node module of any configuration.
pub fn node_spec_for(name: &str, c: &NodeConfig) -> ModuleSpec {
    let t = torus_name(c.router.dims);
    let mut parameters = router_parameters(&c.router);
    parameters.push(("link_endpoints".into(), c.endpoints().iter().map(|d| d.name()).collect::<Vec<_>>().join(" ")));
    parameters.push(("lanes_per_link".into(), c.link.lanes.to_string()));
    parameters.push(("register_counters".into(), format!("from 0x100: {}", counter_names(c).join(", "))));
    ModuleSpec {
        family: "system",
        name: name.to_string(),
        summary: format!("one node of a {t} torus: router, reliable Aurora 64B/66B links carrying its credits, AXI4-Lite register window"),
        parameters,
        hidden_ports: vec![],
    }
}

fn node_verilog(spec: &ModuleSpec) -> Result<String, ExportError> {
    let dims = dims_of(spec);
    export_netlist(spec, &node(&node_config(dims)).map_err(ExportError)?)
}

/// Every node of the torus in the built-in simulator, serial lanes through channel models with
/// bit errors: coordinates written over AXI4-Lite, links trained, random packets delivered.
pub fn node_testbench(dims: [usize; 3]) -> Result<String, String> {
    let config = node_config(dims);
    let mut torus = Torus::netlist_nodes(&config, 16)?;
    torus.reset();
    let up = torus.bring_up(20_000)?;
    torus.set_bit_error_rate(1e-5);
    let traffic = crate::network::Traffic {
        pattern: Pattern::UniformRandom,
        injection: Injection::Queued(150),
        min_bytes: 0,
        max_bytes: config.router.max_packet_bytes,
        valid_percent: 80,
        ready_percent: 70,
        seed: 8,
    };
    let run = torus.run(&traffic, 20_000)?.map_err(|s| format!("no packet delivered for 20000 cycles at cycle {} ({} of {})", s.cycle, s.delivered, s.sent))?;
    Ok(format!("links up after {up} cycles; 150 packets (0..{} B) exactly once, in order, minimal hops, in {} cycles with {} bits flipped on the links", config.router.max_packet_bytes, run.cycles, torus.flipped_bits()))
}

/// The tori whose routers are shipped as `router_<cfg>`.
pub const TORI: [[usize; 3]; 2] = [[4, 2, 1], [2, 2, 2]];

/// The shipped router configuration of a torus: 2 IntraNode ports, 128-bit flits, 1024-byte
/// packets, 256-flit VC buffers (three maximum packets: enough to cover the credit loop across a
/// link, so 1024-byte packets stream at link rate; 128 flits held one packet per round trip and
/// capped b_eff at 41 % of the link).
pub fn router_config(dims: [usize; 3]) -> RouterConfig {
    RouterConfig { dims, vc_buffer_flits: 256, ..Default::default() }
}

fn router_spec(dims: [usize; 3]) -> ModuleSpec {
    router_spec_for(&router_config(dims))
}

fn dims_of(spec: &ModuleSpec) -> [usize; 3] {
    let t = &spec.parameters[0].1;
    let v: Vec<usize> = t.split('x').map(|x| x.parse().unwrap()).collect();
    [v[0], v[1], v[2]]
}

fn router_verilog(spec: &ModuleSpec) -> Result<String, ExportError> {
    Ok(router_verilog_for(&router_config(dims_of(spec)))?.1)
}

/// All routers of the torus in the built-in simulator, random packets of every size from every
/// port to every port.
pub fn router_testbench(dims: [usize; 3]) -> Result<String, String> {
    let config = router_config(dims);
    let mut torus = Torus::netlist(&config)?;
    torus.reset();
    let traffic = crate::network::Traffic {
        pattern: Pattern::UniformRandom,
        injection: Injection::Queued(300),
        min_bytes: 0,
        max_bytes: config.max_packet_bytes,
        valid_percent: 80,
        ready_percent: 70,
        seed: 5,
    };
    let run = torus.run(&traffic, 5000)?.map_err(|s| format!("no packet delivered for 5000 cycles at cycle {} ({} of {})", s.cycle, s.delivered, s.sent))?;
    Ok(format!("300 packets (0..{} B, random sources and sinks, random back-pressure) delivered exactly once, in order, minimal hops, in {} cycles", config.max_packet_bytes, run.cycles))
}

pub fn shipped() -> Vec<Shipped> {
    let mut all = weft_ip::catalog::shipped();
    all.push(Shipped { spec: link_spec(1, LINKS[0].1), verilog: |s| link_verilog(s, 1), testbench: || link_testbench(1) });
    all.push(Shipped { spec: link_spec(2, LINKS[1].1), verilog: |s| link_verilog(s, 2), testbench: || link_testbench(2) });
    all.push(Shipped { spec: router_spec(TORI[0]), verilog: router_verilog, testbench: || router_testbench(TORI[0]) });
    all.push(Shipped { spec: router_spec(TORI[1]), verilog: router_verilog, testbench: || router_testbench(TORI[1]) });
    all.push(Shipped { spec: node_spec(TORI[0]), verilog: node_verilog, testbench: || node_testbench(TORI[0]) });
    all.push(Shipped { spec: node_spec(TORI[1]), verilog: node_verilog, testbench: || node_testbench(TORI[1]) });
    all.sort_by(|a, b| a.relative_path().cmp(&b.relative_path()));
    all
}
