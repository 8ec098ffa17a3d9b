//! Every module weft ships: the IP catalogue plus the modules whose built-in testbench needs the
//! models of this crate (the reliable link, checked between two endpoints over channel models).

use crate::Error;
use weft_ip::catalog::Shipped;
use weft_ip::link::spec::{link_spec, link_verilog};
use weft_ip::router::spec::{router_spec, router_verilog};
use weft_ip::system::spec::{node_spec, node_verilog};

use crate::channel::ChannelConfig;
use crate::link::{netlist_device, LinkPair, Traffic};
use crate::network::{Injection, Pattern, Torus};

// The shipped configurations live beside their generators in weft-ip.
pub use weft_ip::link::spec::{link_config, LINKS};
pub use weft_ip::router::spec::{router_config, router_verilog_for, torus_name, TORI};
pub use weft_ip::system::spec::{node_config, node_spec_for};

/// Two endpoints of a `lanes`-lane link over skewed, misaligned channels (12 cycles of
/// latency) with a bit error rate of 1e-5 both ways: trained, then 400 packets of 1 to 2048
/// bytes each way. `Ok` is a one-line summary; a link that does not come up within 50,000
/// cycles, or deliveries that stall, is [`Error::Stuck`]; a wrong packet panics, naming the
/// endpoint and the cycle.
pub fn link_testbench(lanes: usize) -> Result<String, Error> {
    let config = link_config(lanes);
    let mut ch = ChannelConfig::clean(lanes, 12);
    ch.bit_offset = (0..lanes).map(|k| 5 + 17 * k).collect();
    ch.skew = (0..lanes).map(|k| (3 * k) % 5).collect();
    ch.bit_error_rate = 1e-5;
    let back = ChannelConfig { seed: 77, ..ch.clone() };
    let mut pair = LinkPair::new(config.clone(), [netlist_device(&config)?, netlist_device(&config)?], [ch, back]);
    pair.reset();
    let up = pair.train(50_000).ok_or_else(|| Error::Stuck("channel did not come up".into()))?;
    let traffic = Traffic { packets: 400, min_bytes: 1, max_bytes: 2048, valid_percent: 80, ready_percent: 60, both_ways: true, seed: 21 };
    let run = pair.run(&traffic, 50_000)?;
    let retx: u64 = run.counters.iter().find(|c| c.0 == "frames_retransmitted").map_or(0, |c| c.1[0] + c.1[1]);
    Ok(format!("up after {up} cycles; 800 packets (1..2048 B, both ways, BER 1e-5) delivered exactly once in {} cycles, {retx} frames retransmitted", run.cycles))
}

/// Every node of the torus `dims` in the built-in simulator, serial lanes through channel
/// models (16 cycles of latency) with a bit error rate of 1e-5: coordinates written over
/// AXI4-Lite, links trained, 150 random packets delivered and checked. `Ok` is a one-line
/// summary.
pub fn node_testbench(dims: [usize; 3]) -> Result<String, Error> {
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
    let run = torus.run(&traffic, 20_000)?.map_err(|s| Error::Stuck(format!("no packet delivered for 20000 cycles at cycle {} ({} of {})", s.cycle, s.delivered, s.sent)))?;
    Ok(format!(
        "links up after {up} cycles; 150 packets (0..{} B) exactly once, in order, minimal hops, in {} cycles with {} bits flipped on the links",
        config.router.max_packet_bytes,
        run.cycles,
        torus.flipped_bits()
    ))
}

/// All routers of the torus `dims` in the built-in simulator, 300 random packets of every size
/// from every port to every port, with random back-pressure. `Ok` is a one-line summary.
pub fn router_testbench(dims: [usize; 3]) -> Result<String, Error> {
    let config = router_config(dims);
    let mut torus = Torus::netlist(&config)?;
    torus.reset();
    let traffic =
        crate::network::Traffic { pattern: Pattern::UniformRandom, injection: Injection::Queued(300), min_bytes: 0, max_bytes: config.max_packet_bytes, valid_percent: 80, ready_percent: 70, seed: 5 };
    let run = torus.run(&traffic, 5000)?.map_err(|s| Error::Stuck(format!("no packet delivered for 5000 cycles at cycle {} ({} of {})", s.cycle, s.delivered, s.sent)))?;
    Ok(format!("300 packets (0..{} B, random sources and sinks, random back-pressure) delivered exactly once, in order, minimal hops, in {} cycles", config.max_packet_bytes, run.cycles))
}

/// Every module weft ships, sorted by relative path (`<family>/<module>.v`): weft-ip's
/// catalogue plus the reliable links (1 and 2 lanes), the routers and the nodes of the shipped
/// tori ([`TORI`]), whose testbenches are [`link_testbench`], [`router_testbench`] and
/// [`node_testbench`].
pub fn shipped() -> Vec<Shipped> {
    let mut all = weft_ip::catalog::shipped();
    all.push(Shipped::new(link_spec(1, LINKS[0].1), |s| link_verilog(s, 1), || link_testbench(1)));
    all.push(Shipped::new(link_spec(2, LINKS[1].1), |s| link_verilog(s, 2), || link_testbench(2)));
    all.push(Shipped::new(router_spec(TORI[0]), router_verilog, || router_testbench(TORI[0])));
    all.push(Shipped::new(router_spec(TORI[1]), router_verilog, || router_testbench(TORI[1])));
    all.push(Shipped::new(node_spec(TORI[0]), node_verilog, || node_testbench(TORI[0])));
    all.push(Shipped::new(node_spec(TORI[1]), node_verilog, || node_testbench(TORI[1])));
    all.sort_by_key(|a| a.relative_path());
    all
}
