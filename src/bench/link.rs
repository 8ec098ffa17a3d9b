//! `weft bench link`: the reliable link between two endpoints in the built-in simulator —
//! goodput as a fraction of the raw datapath (64 bits per lane per cycle) for packets of
//! 16 B … 4 KB on 1, 2 and 4 lanes, zero-load latency, and goodput under bit errors.

use crate::Error;
use serde::Serialize;
use weft_ip::link::LinkConfig;
use weft_sim::channel::ChannelConfig;
use weft_sim::link::{netlist_device, LinkPair, LinkRun, Traffic};
use weft_sim::plot::{Plot, Series};

/// Cycles a block spends in the channel model (latency plus its alignment register).
pub const CHANNEL_LATENCY: usize = 16;

/// One goodput point (a row of `goodput` or `bit_errors` in `bench/link.json`): packets of one
/// size streamed one way, A → B, with the receiver always ready.
#[derive(Clone, Debug, Serialize)]
pub struct Goodput {
    /// Serial lanes of the link (1, 2 or 4).
    pub lanes: usize,
    /// Payload bytes per packet.
    pub packet_bytes: usize,
    /// Packets streamed.
    pub packets: usize,
    /// Probability that a channel model flips a bit, both directions (0 on a clean channel).
    pub bit_error_rate: f64,
    /// Payload bytes per cycle over raw bytes per cycle (8 per lane), in steady state.
    pub goodput: f64,
    /// Bits the channel models flipped, both directions together.
    pub flipped_bits: u64,
    /// Frames the sender (A) sent again after a CRC error or a timeout (its
    /// `frames_retransmitted` counter).
    pub retransmitted_frames: u64,
}

/// Zero-load latency of one 16-byte packet through an idle link (a row of `latency` in
/// `bench/link.json`).
#[derive(Clone, Debug, Serialize)]
pub struct Latency {
    /// Serial lanes of the link (1, 2 or 4).
    pub lanes: usize,
    /// First user beat accepted at A to first user beat offered at B, cycles.
    pub cycles: u64,
    /// Of which spent in the channel model ([`CHANNEL_LATENCY`]), cycles.
    pub channel_cycles: usize,
}

/// Everything `weft bench link` measures; written to `bench/link.json`.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    /// The default [`LinkConfig`] in Rust debug form: the link parameters the figures describe.
    pub config: String,
    /// Goodput on clean channels: every lane count of [`LANES`] × packet size of [`SIZES`].
    pub goodput: Vec<Goodput>,
    /// Zero-load latency, one row per lane count.
    pub latency: Vec<Latency>,
    /// Goodput of 1024 packets of 2048 bytes on 2 lanes at each of [`BIT_ERROR_RATES`].
    pub bit_errors: Vec<Goodput>,
}

/// Packet sizes of the goodput sweep, bytes.
pub const SIZES: [usize; 9] = [16, 32, 64, 128, 256, 512, 1024, 2048, 4096];
/// Lane counts of the goodput sweep.
pub const LANES: [usize; 3] = [1, 2, 4];
/// Bit error rates of the error sweep (per bit, on both channels).
pub const BIT_ERROR_RATES: [f64; 3] = [1e-9, 1e-7, 1e-5];

fn channel(lanes: usize, ber: f64, seed: u64) -> ChannelConfig {
    ChannelConfig { bit_error_rate: ber, seed, ..ChannelConfig::clean(lanes, CHANNEL_LATENCY - 1) }
}

fn one_way(lanes: usize, bytes: usize, packets: usize, ber: f64) -> Result<(LinkRun, u64), Error> {
    // The shipped links: receive clock and elastic buffer (both ends on one clock here).
    let config = weft_sim::catalog::link_config(lanes);
    let ends = [netlist_device(&config)?, netlist_device(&config)?];
    let mut pair = LinkPair::new(config, ends, [channel(lanes, 0.0, 1), channel(lanes, 0.0, 2)]);
    pair.reset();
    pair.train(50_000).ok_or_else(|| Error::Input("channel did not come up".into()))?;
    for (i, c) in pair.channels.iter_mut().enumerate() {
        *c.config_mut() = channel(lanes, ber, 10 + i as u64);
    }
    let traffic = Traffic { packets, min_bytes: bytes, max_bytes: bytes, valid_percent: 100, ready_percent: 100, both_ways: false, seed: 3 };
    let run = pair.run(&traffic, 200_000)?;
    let flipped = pair.channels[0].flipped_bits + pair.channels[1].flipped_bits;
    Ok((run, flipped))
}

pub(crate) fn goodput(lanes: usize, bytes: usize, packets: usize, ber: f64) -> Result<Goodput, Error> {
    let (run, flipped_bits) = one_way(lanes, bytes, packets, ber)?;
    // Steady state: bytes after the first packet, over the cycles after its first beat left.
    let cycles = (run.last_out.unwrap() - run.first_out.unwrap()) as f64;
    let bytes_after_first = (run.payload_bytes[1] - bytes as u64) as f64;
    let retransmitted_frames = run.counters.iter().find(|c| c.0 == "frames_retransmitted").map_or(0, |c| c.1[0]);
    Ok(Goodput { lanes, packet_bytes: bytes, packets, bit_error_rate: ber, goodput: bytes_after_first / (cycles * 8.0 * lanes as f64), flipped_bits, retransmitted_frames })
}

/// One 16-byte packet through an idle link of `lanes` lanes.
pub(crate) fn latency(lanes: usize) -> Result<Latency, Error> {
    let (run, _) = one_way(lanes, 16, 1, 0.0)?;
    Ok(Latency { lanes, cycles: run.first_out.unwrap() - run.first_in.unwrap(), channel_cycles: CHANNEL_LATENCY })
}

/// Packets a goodput point streams: 256 KiB in all, 64 … 2048 packets.
pub(crate) fn packets(bytes: usize) -> usize {
    (262_144 / bytes).clamp(64, 2048)
}

/// Runs the benchmark in the built-in simulator: goodput for every lane count and packet size,
/// latency per lane count, then goodput under bit errors; `progress` hears one line per point.
/// A link that does not train within 50,000 cycles is an [`Error::Input`].
pub fn run(progress: &mut dyn FnMut(&str)) -> Result<Report, Error> {
    let mut report = Report { config: format!("{:?}", LinkConfig::default()), goodput: vec![], latency: vec![], bit_errors: vec![] };
    for lanes in LANES {
        for bytes in SIZES {
            let g = goodput(lanes, bytes, packets(bytes), 0.0)?;
            progress(&format!("lanes {lanes}, {bytes} B: goodput {:.4}", g.goodput));
            report.goodput.push(g);
        }
        report.latency.push(latency(lanes)?);
    }
    for ber in BIT_ERROR_RATES {
        let g = goodput(2, 2048, 1024, ber)?;
        progress(&format!("BER {ber:e}: goodput {:.4} ({} bits flipped)", g.goodput, g.flipped_bits));
        report.bit_errors.push(g);
    }
    Ok(report)
}

/// The report as Markdown tables: goodput (% of raw), zero-load latency (cycles), and goodput
/// under bit errors with the bits flipped and frames retransmitted.
pub fn table(report: &Report) -> String {
    let mut out = String::from("Goodput (payload / raw 64 bits per lane per cycle), one direction, always ready:\n\n| packet | 1 lane | 2 lanes | 4 lanes |\n| ---: | ---: | ---: | ---: |\n");
    for bytes in SIZES {
        let cell = |lanes: usize| report.goodput.iter().find(|g| g.lanes == lanes && g.packet_bytes == bytes).map_or("-".into(), |g| format!("{:.1} %", 100.0 * g.goodput));
        out.push_str(&format!("| {bytes} B | {} | {} | {} |\n", cell(1), cell(2), cell(4)));
    }
    out.push_str("\nZero-load latency, 16 B packet, first beat in at A to first beat out at B:\n\n| lanes | cycles | of which channel |\n| ---: | ---: | ---: |\n");
    for l in &report.latency {
        out.push_str(&format!("| {} | {} | {} |\n", l.lanes, l.cycles, l.channel_cycles));
    }
    out.push_str("\nGoodput under bit errors (2 lanes, 2 KB packets, errors both ways):\n\n| bit error rate | goodput | bits flipped | frames retransmitted |\n| ---: | ---: | ---: | ---: |\n");
    for g in &report.bit_errors {
        out.push_str(&format!("| {:e} | {:.1} % | {} | {} |\n", g.bit_error_rate, 100.0 * g.goodput, g.flipped_bits, g.retransmitted_frames));
    }
    out
}

/// `link_goodput.svg`: goodput (fraction of raw) against packet size, one series per lane count.
pub fn plot(report: &Report) -> String {
    let series = LANES
        .iter()
        .map(|&lanes| Series {
            name: format!("{lanes} lane{}", if lanes == 1 { "" } else { "s" }),
            points: report.goodput.iter().filter(|g| g.lanes == lanes).map(|g| (g.packet_bytes as f64, g.goodput)).collect(),
        })
        .collect();
    Plot { title: "reliable link goodput vs packet size".into(), x_label: "packet bytes".into(), y_label: "goodput / raw".into(), log2_x: true, y_max: 1.0, series }.svg()
}
