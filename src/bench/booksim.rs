//! `weft bench booksim`: BookSim2, the reference cycle-level network simulator, on the tori and
//! traffic of `weft bench netsim-load`, configured as the generated node is, so that the two
//! load sweeps stand side by side.
//!
//! The equivalent configuration. BookSim2's torus (`topology = torus`, dimension-order routing
//! with a dateline between its two VCs) gets the node's VCs and VC buffer depth, 5-flit packets
//! (64 bytes of payload and the header in 128-bit flits) and Bernoulli injection at the same
//! packets per node per cycle. A hop of the generated fabric, traced cycle by cycle in the node
//! chapter of the guide, is [`ROUTER_CYCLES`] in the router, [`LINK_CYCLES`] of link logic and
//! the system's cable latency; a BookSim2 hop is its router's [`BOOKSIM_ROUTER_CYCLES`] stages
//! and one channel, whose latency is set to make up the difference. Measured the same way: the
//! first half of `cycles` warms up, the packets created in the second half are measured from
//! creation (source queueing included) to their last flit, and saturation is what the network
//! accepts at the first load it no longer accepts in full (95 %).
//!
//! What BookSim2 cannot model and the comparison therefore leaves out: a link carries at most
//! 0.81 flits a cycle after framing, CRC and acknowledgements (BookSim2's channel carries one),
//! the receiver holds each frame until its CRC is checked, ties in a dimension of even size go
//! `+` in weft and either way at random in BookSim2, and weft's routers cut through where
//! BookSim2's are wormhole. Its `neighbor` pattern moves one step in every dimension at once, not
//! to one random neighbour, so the neighbour sweeps have no counterpart.

use crate::Error;
use std::path::Path;

use serde::Serialize;

/// Cycles a packet spends in a router of the generated node (input register and route,
/// allocation, output register).
pub const ROUTER_CYCLES: usize = 3;
/// Cycles of link logic in a hop: ingress, framing, lane encoding and receive, elastic buffer,
/// CRC check.
pub const LINK_CYCLES: usize = 14;
/// Cycles of a BookSim2 router as configured here: routing, VC allocation, switch allocation,
/// switch traversal, one each.
pub const BOOKSIM_ROUTER_CYCLES: usize = 4;
/// Virtual channels of the router (one per dateline class).
pub const VCS: usize = 2;

/// Flits of a benchmark packet on a `width`-bit datapath: its payload, plus the header.
pub fn flits(width: usize) -> usize {
    (super::netsim_load::BYTES * 8).div_ceil(width) + 1
}

/// One load point as BookSim2 reports it.
#[derive(Clone, Debug, Serialize)]
pub struct Point {
    /// Packets per node per cycle asked for.
    pub rate: f64,
    /// Flits injected per node per cycle over the measurement period.
    pub offered_flits: f64,
    /// Flits accepted per node per cycle over the measurement period.
    pub accepted_flits: f64,
    /// Mean packet latency, creation to the last flit, of the packets measured.
    pub latency: f64,
}

/// One sweep: a torus and a pattern at rising loads.
#[derive(Clone, Debug, Serialize)]
pub struct Sweep {
    /// The torus.
    pub dims: [usize; 3],
    /// The traffic pattern, as `weft netsim` names it.
    pub pattern: String,
    /// BookSim2's channel latency, cycles.
    pub channel_latency: usize,
    /// Every load point, in rising order, up to the first not accepted in full.
    pub points: Vec<Point>,
    /// Flits per node per cycle accepted at the first load not accepted in full.
    pub saturation: f64,
    /// Latency at the lowest load, cycles.
    pub zero_load_latency: f64,
}

/// BookSim2's channel latency for a hop as long as the generated fabric's over `cable` cycles.
pub fn channel_latency(cable: usize) -> usize {
    ROUTER_CYCLES + LINK_CYCLES + cable - BOOKSIM_ROUTER_CYCLES
}

/// The BookSim2 configuration of one load point.
pub fn config_text(dims: [usize; 3], flits: usize, vc_buffer_flits: usize, channel_latency: usize, pattern: &str, rate: f64, cycles: u64) -> Result<String, Error> {
    let k = dims[0];
    if dims.iter().any(|&d| d != k) || k < 2 {
        return Err(Error::Input(format!("BookSim2's torus is a k-ary n-cube: dims {dims:?} must be equal and at least 2")));
    }
    let traffic = match pattern {
        "uniform" | "transpose" => pattern,
        _ => return Err(Error::Input(format!("`pattern` = {pattern}: BookSim2 has an equivalent of uniform and transpose only"))),
    };
    Ok(format!(
        "topology = torus;\nk = {k};\nn = 3;\nrouting_function = dim_order;\nnum_vcs = {VCS};\nvc_buf_size = {vc_buffer_flits};\n\
         wait_for_tail_credit = 0;\nvc_allocator = separable_input_first;\nsw_allocator = separable_input_first;\n\
         routing_delay = 1;\nvc_alloc_delay = 1;\nsw_alloc_delay = 1;\nst_final_delay = 1;\nchannel_latency = {channel_latency};\n\
         traffic = {traffic};\npacket_size = {flits};\ninjection_rate_uses_flits = 1;\ninjection_rate = {};\n\
         sim_type = latency;\nwarmup_periods = 1;\nsample_period = {};\nmax_samples = 2;\nlatency_thres = 1e9;\nseed = 1;\n",
        rate * flits as f64,
        cycles / 2
    ))
}

/// The overall statistics of a BookSim2 run's output.
pub fn parse(output: &str, rate: f64) -> Result<Point, Error> {
    let overall = output.split("====== Overall Traffic Statistics ======").nth(1).ok_or_else(|| Error::Check(format!("BookSim2 printed no overall statistics:\n{}", last_lines(output))))?;
    let value = |name: &str| -> Result<f64, Error> {
        overall
            .lines()
            .find_map(|l| l.strip_prefix(name).and_then(|r| r.trim_start().strip_prefix('=')).and_then(|r| r.split_whitespace().next()).and_then(|v| v.parse().ok()))
            .ok_or_else(|| Error::Check(format!("BookSim2's overall statistics have no `{name}`")))
    };
    Ok(Point { rate, offered_flits: value("Injected flit rate average")?, accepted_flits: value("Accepted flit rate average")?, latency: value("Packet latency average")? })
}

fn last_lines(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(20)..].join("\n")
}

/// Runs BookSim2 (`booksim`) on every sweep of [`super::netsim_load::sweeps`] it has an
/// equivalent of, for the node of `config`, `cycles` of traffic a point.
pub fn run(booksim: &Path, config: &Path, cycles: u64, work: &Path, progress: &mut dyn FnMut(&str)) -> Result<Vec<Sweep>, Error> {
    let system = crate::system::load(config)?;
    let router = &system.node.router;
    let latency = channel_latency(system.channel_latency);
    // BookSim2 runs in `work`, so a relative path to it is resolved here.
    let booksim = &std::fs::canonicalize(booksim).map_err(|e| Error::Input(format!("BookSim2 at {}: {e} (scripts/booksim.sh builds it; pass its path with --booksim)", booksim.display())))?;
    std::fs::create_dir_all(work)?;
    let mut out = vec![];
    for (dims, pattern, rates) in super::netsim_load::sweeps().into_iter().filter(|(_, p, _)| *p != "neighbour") {
        let mut points: Vec<Point> = vec![];
        for rate in rates {
            let file = work.join("booksim.cfg");
            std::fs::write(&file, config_text(dims, flits(router.width), router.vc_buffer_flits, latency, pattern, rate, cycles)?)?;
            let file = file.to_string_lossy().into_owned();
            // BookSim2's exit status is not its verdict (it exits 1 after a complete run), so the
            // run is judged by its overall statistics.
            let run = std::process::Command::new(booksim)
                .arg(&file)
                .current_dir(work)
                .output()
                .map_err(|e| Error::Input(format!("BookSim2 at {}: {e} (scripts/booksim.sh builds it; pass its path with --booksim)", booksim.display())))?;
            let p = parse(&String::from_utf8_lossy(&run.stdout), rate)?;
            progress(&format!("{dims:?} {pattern} {rate:.3}: offered {:.3}, accepted {:.3} flits/node/cycle, latency {:.1}", p.offered_flits, p.accepted_flits, p.latency));
            points.push(p);
            if super::netsim_load::short(points.last().map(|p| (p.offered_flits, p.accepted_flits)).unwrap_or_default()) {
                break;
            }
        }
        let saturation = super::netsim_load::saturation(points.iter().map(|p| (p.offered_flits, p.accepted_flits)));
        let zero_load_latency = points.first().map_or(f64::NAN, |p| p.latency);
        out.push(Sweep { dims, pattern: pattern.to_string(), channel_latency: latency, points, saturation, zero_load_latency });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_booksim_hop_is_as_long_as_a_hop_over_the_generated_links() {
        // The node chapter's trace: router 3 + link 14 + cable 16 = 33 cycles from one router's
        // input to the next; BookSim2's 4 router stages leave 29 for its channel.
        assert_eq!(channel_latency(16), 29);
        assert_eq!(flits(128), 5);
        assert_eq!(flits(512), 2);
    }

    #[test]
    fn the_configuration_carries_the_node_and_the_load() {
        let text = config_text([4, 4, 4], 5, 256, 29, "transpose", 0.1, 2000).unwrap();
        for line in ["k = 4;", "n = 3;", "num_vcs = 2;", "vc_buf_size = 256;", "channel_latency = 29;", "traffic = transpose;", "packet_size = 5;", "injection_rate = 0.5;", "sample_period = 1000;"] {
            assert!(text.lines().any(|l| l == line), "{line} missing from\n{text}");
        }
        assert!(config_text([4, 2, 2], 5, 256, 29, "uniform", 0.1, 2000).is_err());
        assert!(config_text([4, 4, 4], 5, 256, 29, "neighbour", 0.1, 2000).is_err());
    }

    #[test]
    fn the_overall_statistics_are_read_not_a_sample_period() {
        let out = "Packet latency average = 999 (1 samples)\nAccepted flit rate average = 9\n====== Overall Traffic Statistics ======\n====== Traffic class 0 ======\nPacket latency average = 215.446 (1 samples)\n\tminimum = 11 (1 samples)\nInjected flit rate average = 0.100785 (1 samples)\nAccepted flit rate average = 0.100237 (1 samples)\n";
        let p = parse(out, 0.02).unwrap();
        assert_eq!((p.offered_flits, p.accepted_flits, p.latency), (0.100785, 0.100237, 215.446));
        assert!(parse("Simulation unstable", 0.02).is_err());
    }
}
