//! Two reliable-link endpoints joined by two channel models ([`LinkPair`]): the packets and
//! traffic of a run, the cycle loop, and the per-virtual-channel scoreboard.

use crate::link::{scalar, Value};
use crate::Error;
use std::collections::VecDeque;

use weft_ip::link::LinkConfig;
use weft_ip::weft_hdl::testbench::Rng;

use super::clocks::EndClocks;
use super::device::{get_bits, put_bits, Device};
use crate::channel::{Channel, ChannelConfig};

/// A user packet on the link: bytes and virtual channel.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Packet {
    /// Virtual channel, 0 or 1 (`s_axis_tuser` at the sender, `m_axis_vc<vc>_*` at the receiver).
    pub vc: usize,
    /// The payload bytes, in order.
    pub bytes: Vec<u8>,
}

/// What a run of [`LinkPair`] asks for.
#[derive(Clone, Debug)]
pub struct Traffic {
    /// Packets per direction.
    pub packets: usize,
    /// Shortest packet in bytes, at least 1 (lengths are uniform in `min_bytes..=max_bytes`).
    pub min_bytes: usize,
    /// Longest packet in bytes.
    pub max_bytes: usize,
    /// Percent of cycles a source offers a beat (0 to 100).
    pub valid_percent: u64,
    /// Percent of cycles a sink takes one, per virtual channel (0 to 100).
    pub ready_percent: u64,
    /// Send in both directions (else only A → B).
    pub both_ways: bool,
    /// Seed of the packets, their virtual channels and the random handshakes.
    pub seed: u64,
}

/// Per-endpoint port handles.
struct Ends {
    ports: [usize; 14],
}

const PORTS: [&str; 14] = [
    "s_axis_tdata",
    "s_axis_tkeep",
    "s_axis_tlast",
    "s_axis_tuser",
    "s_axis_tvalid",
    "s_axis_tready",
    "m_axis_vc0_tdata",
    "m_axis_vc0_tkeep",
    "m_axis_vc0_tlast",
    "m_axis_vc0_tvalid",
    "m_axis_vc0_tready",
    "rx_serial",
    "tx_serial",
    "channel_up",
];

struct Source {
    queue: VecDeque<Packet>,
    offset: usize,
    /// Beat offered this cycle (kept until taken: AXI4-Stream).
    offered: bool,
}

struct Sink {
    partial: [Vec<u8>; 2],
}

/// Measured outcome of a run.
#[derive(Clone, Debug, Default)]
pub struct LinkRun {
    /// A's cycles the run took.
    pub cycles: u64,
    /// Cycle both channels came up.
    pub up_cycle: u64,
    /// Whole packets received by A and by B.
    pub delivered: [usize; 2],
    /// Payload bytes received by A and by B.
    pub payload_bytes: [u64; 2],
    /// First cycle a beat entered A (with `first_out`: the zero-load latency).
    pub first_in: Option<u64>,
    /// First cycle a beat left B.
    pub first_out: Option<u64>,
    /// Last cycle a beat left B.
    pub last_out: Option<u64>,
    /// The endpoints' counters at the end, A's and B's: `frames_sent`, `crc_errors`, `slips`, ….
    pub counters: Vec<(String, [u64; 2])>,
    /// Packets sent by A and by B.
    pub sent: [Vec<Packet>; 2],
    /// Cycles at which A and B received a whole packet.
    pub arrivals: [Vec<u64>; 2],
}

/// Two reliable-link endpoints, A and B, joined by two channel models; `channels[0]` is A → B.
pub struct LinkPair<D: Device> {
    /// The link configuration of both endpoints.
    pub config: LinkConfig,
    /// The endpoints A and B.
    pub ends: [D; 2],
    handles: [Ends; 2],
    vc1_ports: [[usize; 5]; 2],
    /// Each moves one cycle per rising edge of its sender's `clk`.
    pub channels: [Channel; 2],
    clocks: EndClocks,
    /// A's `clk` cycles: the unit of traffic timestamps, stall limits and [`LinkPair::train`].
    pub cycle: u64,
    /// Each end's `clk` cycles (`cycles[0] == cycle`).
    pub cycles: [u64; 2],
    /// Whether each end's channel was up when its clock last rose.
    up: [bool; 2],
    /// Native-flow-control messages to send: (from that side's cycle, side, `s_axis_nfc_tdata`),
    /// each held until the endpoint takes it.
    pub nfc_requests: Vec<(u64, usize, u16)>,
    /// Chance, in percent, that each side's consumer frees a flit on each VC in a cycle
    /// (`rx_credit_return`); 0 leaves the credit ports alone.
    pub credit_percent: u64,
    /// Per side and VC: credits returned by that side's consumer (`rx_credit_return`).
    pub credits_returned: [[u64; 2]; 2],
    /// Per side and VC: `tx_credit` pulses seen.
    pub credits_seen: [[u64; 2]; 2],
}

impl<D: Device> LinkPair<D> {
    /// `channels[0]` carries A → B, `channels[1]` B → A. Both ends share one clock; see
    /// [`LinkPair::with_periods`].
    pub fn new(config: LinkConfig, mut ends: [D; 2], channels: [ChannelConfig; 2]) -> LinkPair<D> {
        let handles = [0, 1].map(|i| Ends { ports: PORTS.map(|p| ends[i].port(p)) });
        let vc1_ports = [0, 1].map(|i| ["m_axis_vc1_tdata", "m_axis_vc1_tkeep", "m_axis_vc1_tlast", "m_axis_vc1_tvalid", "m_axis_vc1_tready"].map(|p| ends[i].port(p)));
        let channels = channels.map(Channel::new);
        let clocks = EndClocks::new([1, 1]);
        LinkPair {
            config,
            ends,
            handles,
            vc1_ports,
            channels,
            clocks,
            cycle: 0,
            cycles: [0; 2],
            up: [false; 2],
            nfc_requests: vec![],
            credit_percent: 0,
            credits_returned: [[0; 2]; 2],
            credits_seen: [[0; 2]; 2],
        }
    }

    /// Runs A's and B's `clk` at these periods (any unit; both first rise at instant 0), each
    /// end's `rx_clk` with its partner's `clk`. Unequal periods need both ends to have an
    /// `rx_clk` domain: without one the receive side would sample the partner's serial data on
    /// the wrong clock. Call before running.
    pub fn with_periods(mut self, periods: [u64; 2]) -> Result<LinkPair<D>, String> {
        if periods.contains(&0) {
            return Err(format!("clock periods {periods:?}: must be positive"));
        }
        if periods[0] != periods[1] {
            if let Some(i) = (0..2).find(|i| !self.ends[*i].has_rx_clock()) {
                return Err(format!("clock periods {} and {} differ, but endpoint {} has no `rx_clk` domain to receive on its partner's clock", periods[0], periods[1], ["A", "B"][i]));
            }
        }
        self.clocks = EndClocks::new(periods);
        Ok(self)
    }

    /// Holds reset for a few edges of every clock of both ends (their timing does not matter).
    pub fn reset(&mut self) {
        for _ in 0..3 {
            for e in self.ends.iter_mut() {
                e.settle();
                e.clock_edges(true, true, true);
            }
        }
    }

    /// Output `name` of end `side` (0 = A, 1 = B), such as a counter, settled (low 64 bits).
    pub fn counter(&mut self, side: usize, name: &str) -> u64 {
        let p = self.ends[side].port(name);
        self.ends[side].settle();
        self.ends[side].get(p)[0]
    }

    /// Runs `cycles` of A's cycles without traffic.
    pub fn idle(&mut self, cycles: u64) {
        let mut rng = Rng::new(self.cycle);
        let end = self.cycle + cycles;
        while self.cycle < end {
            self.step(None, &mut rng, 100, &mut None);
        }
    }

    /// Runs until both channels are up or `limit` of A's cycles pass; returns the cycles it took.
    pub fn train(&mut self, limit: u64) -> Option<u64> {
        let start = self.cycle;
        let mut rng = Rng::new(0);
        while self.cycle - start < limit {
            if self.step(None, &mut rng, 100, &mut None) {
                return Some(self.cycle - start);
            }
        }
        None
    }

    /// One instant at which a clock rises, with traffic (sources, sinks and the packets each
    /// end expects per virtual channel) or idle; returns whether both channels are up. Only the
    /// ends whose `clk` rises drive and sample their ports.
    fn step(&mut self, mut traffic: Option<(&mut [Source; 2], &mut [Sink; 2], &mut [[VecDeque<Packet>; 2]; 2])>, rng: &mut Rng, ready_percent: u64, events: &mut Option<&mut LinkRun>) -> bool {
        let word_bytes = self.config.word_bytes();
        let edges = self.clocks.next();
        let mut took = [false; 2];
        let mut popped: [[Option<(Vec<u8>, bool)>; 2]; 2] = Default::default();
        let mut tx = [vec![], vec![]];
        for i in (0..2).filter(|i| edges.clk(*i)) {
            let h = &self.handles[i].ports;
            let e = &mut self.ends[i];
            // Source.
            let mut beat = None;
            if let Some((sources, _, _)) = traffic.as_ref() {
                let src = &sources[i];
                if src.offered {
                    let p = src.queue.front().unwrap();
                    let end = (src.offset + word_bytes).min(p.bytes.len());
                    beat = Some((p.bytes[src.offset..end].to_vec(), end == p.bytes.len(), p.vc));
                }
            }
            let mut data = Value::default();
            let mut keep = Value::default();
            let (last, vc, valid) = match &beat {
                Some((bytes, last, vc)) => {
                    for (b, byte) in bytes.iter().enumerate() {
                        put_bits(&mut data, 8 * b, 8, *byte as u128);
                        put_bits(&mut keep, b, 1, 1);
                    }
                    (*last as u64, *vc as u64, 1)
                }
                None => (0, 0, 0),
            };
            e.set(h[0], &data);
            e.set(h[1], &keep);
            e.set(h[2], &scalar(last));
            e.set(h[3], &scalar(vc));
            e.set(h[4], &scalar(valid));
            let readies = [rng.chance(ready_percent), rng.chance(ready_percent)];
            e.set(h[10], &scalar(readies[0] as u64));
            e.set(self.vc1_ports[i][4], &scalar(readies[1] as u64));
            // Native flow control requests due now.
            let due = self.nfc_requests.iter().position(|r| r.1 == i && r.0 <= self.cycles[i]);
            let mut nfc_offered = None;
            if !self.nfc_requests.is_empty() || due.is_some() {
                let (pv, pd) = (e.port("s_axis_nfc_tvalid"), e.port("s_axis_nfc_tdata"));
                let data = due.map_or(0, |d| self.nfc_requests[d].2);
                e.set(pv, &scalar(due.is_some() as u64));
                e.set(pd, &scalar(data as u64));
                nfc_offered = due;
            }
            let mut credit_rng = Rng::new(self.cycles[i] * 2 + i as u64 + 1);
            if self.credit_percent > 0 {
                let bits: Vec<bool> = (0..2).map(|_| credit_rng.chance(self.credit_percent)).collect();
                for (v, b) in bits.iter().enumerate() {
                    self.credits_returned[i][v] += *b as u64;
                }
                let p = e.port("rx_credit_return");
                e.set(p, &scalar(bits[0] as u64 | (bits[1] as u64) << 1));
            }
            // Receive side: the channel from the other end.
            e.settle();
            if self.credit_percent > 0 {
                let p = e.port("tx_credit");
                let pulses = e.get(p)[0];
                for v in 0..2 {
                    self.credits_seen[i][v] += pulses >> v & 1;
                }
            }
            if let Some(d) = nfc_offered {
                let pr = e.port("s_axis_nfc_tready");
                if e.get(pr)[0] & 1 == 1 {
                    self.nfc_requests.remove(d);
                    let pv = e.port("s_axis_nfc_tvalid");
                    e.set(pv, &Value::default());
                }
            }
            self.up[i] = e.get(h[13])[0] != 0;
            took[i] = valid == 1 && e.get(h[5])[0] != 0;
            for vc in 0..2 {
                let (pd, pk, pl, pv) = if vc == 0 { (h[6], h[7], h[8], h[9]) } else { (self.vc1_ports[i][0], self.vc1_ports[i][1], self.vc1_ports[i][2], self.vc1_ports[i][3]) };
                if e.get(pv)[0] != 0 && readies[vc] {
                    let d = e.get(pd);
                    let k = e.get(pk);
                    let bytes: Vec<u8> = (0..word_bytes).filter(|b| get_bits(&k, *b, 1) == 1).map(|b| get_bits(&d, 8 * b, 8) as u8).collect();
                    popped[i][vc] = Some((bytes, e.get(pl)[0] != 0));
                }
            }
            let t = e.get(h[12]);
            tx[i] = (0..self.config.lanes).map(|k| get_bits(&t, 66 * k, 66)).collect::<Vec<u128>>();
        }
        // Handshakes.
        for i in 0..2 {
            if took[i] {
                if let Some(ev) = events.as_mut() {
                    if i == 0 && ev.first_in.is_none() {
                        ev.first_in = Some(self.cycle);
                    }
                }
                let src = &mut traffic.as_mut().unwrap().0[i];
                src.offset += word_bytes;
                if src.offset >= src.queue.front().unwrap().bytes.len() {
                    src.queue.pop_front();
                    src.offset = 0;
                }
                src.offered = false;
            }
            for vc in 0..2 {
                if let Some((bytes, last)) = popped[i][vc].take() {
                    if let Some(ev) = events.as_mut() {
                        if i == 1 && ev.first_out.is_none() {
                            ev.first_out = Some(self.cycle);
                        }
                        if i == 1 {
                            ev.last_out = Some(self.cycle);
                        }
                    }
                    let (_, sinks, expect) = traffic.as_mut().expect("a packet arrived where none was sent");
                    let sink = &mut sinks[i];
                    sink.partial[vc].extend_from_slice(&bytes);
                    if last {
                        let got = Packet { vc, bytes: std::mem::take(&mut sink.partial[vc]) };
                        let want = expect[i][vc].pop_front();
                        if want.as_ref() != Some(&got) {
                            let later = expect[i][vc].iter().position(|p| *p == got);
                            let diff = want.as_ref().map(|w| (w.bytes.len(), w.bytes.iter().zip(&got.bytes).position(|(a, b)| a != b)));
                            panic!(
                                "endpoint {} vc {vc} at cycle {}: packet of {} bytes differs from the next one sent on that channel (expected length and first differing byte {diff:?}; matches the one {later:?} places later)",
                                ["A", "B"][i],
                                self.cycle,
                                got.bytes.len()
                            );
                        }
                        if let Some(ev) = events.as_mut() {
                            ev.arrivals[i].push(self.cycle);
                            ev.delivered[i] += 1;
                            ev.payload_bytes[i] += got.bytes.len() as u64;
                        }
                    }
                }
            }
        }
        // Serial lanes through the channels of the senders whose clock rises, then the clock
        // edges: a receiver's `rx_clk` rises with its sender's `clk`.
        for i in (0..2).filter(|i| edges.clk(*i)) {
            let rx = self.channels[i].step(&tx[i]);
            let mut v = Value::default();
            for (k, block) in rx.iter().enumerate() {
                put_bits(&mut v, 66 * k, 66, *block);
            }
            let p = self.handles[1 - i].ports[11];
            self.ends[1 - i].set(p, &v);
        }
        for i in (0..2).filter(|i| edges.clk(*i) || edges.rx_clk(*i)) {
            self.ends[i].settle();
            self.ends[i].clock_edges(edges.clk(i), edges.rx_clk(i), false);
            self.cycles[i] += edges.clk(i) as u64;
        }
        self.cycle = self.cycles[0];
        self.up[0] && self.up[1]
    }

    /// Sends `traffic` and checks every packet: a corrupted, duplicated or reordered packet panics
    /// (naming end and cycle); no delivery for `stall_limit` cycles (a loss) is [`Error::Stuck`].
    pub fn run(&mut self, traffic: &Traffic, stall_limit: u64) -> Result<LinkRun, Error> {
        let mut rng = Rng::new(traffic.seed);
        let make = |rng: &mut Rng| {
            let len = traffic.min_bytes + rng.below((traffic.max_bytes - traffic.min_bytes + 1) as u64) as usize;
            Packet { vc: rng.below(2) as usize, bytes: (0..len).map(|_| rng.next_u64() as u8).collect() }
        };
        let mut sent: [Vec<Packet>; 2] = [vec![], vec![]];
        for dir in 0..2 {
            if dir == 1 && !traffic.both_ways {
                continue;
            }
            sent[dir] = (0..traffic.packets).map(|_| make(&mut rng)).collect();
        }
        let mut sources = [0, 1].map(|d| Source { queue: sent[d].iter().cloned().collect(), offset: 0, offered: false });
        // Expected at each receiving end (A gets what B sent), per virtual channel.
        let mut expect = [1, 0].map(|d| [0, 1].map(|vc| sent[d].iter().filter(|p| p.vc == vc).cloned().collect::<VecDeque<Packet>>()));
        let mut sinks = [Sink { partial: [vec![], vec![]] }, Sink { partial: [vec![], vec![]] }];
        let mut run = LinkRun::default();
        let total: usize = sent.iter().map(|s| s.len()).sum();
        let mut last_progress = self.cycle;
        let mut delivered_before = 0;
        let start = self.cycle;
        let mut valid_rng = Rng::new(traffic.seed ^ 0xABCD);
        loop {
            let delivered: usize = run.delivered.iter().sum();
            if delivered == total {
                break;
            }
            if delivered != delivered_before {
                delivered_before = delivered;
                last_progress = self.cycle;
            }
            if self.cycle - last_progress > stall_limit {
                return Err(Error::Stuck(format!("no packet delivered for {stall_limit} cycles at cycle {} ({delivered} of {total} delivered)", self.cycle)));
            }
            for src in sources.iter_mut() {
                if !src.offered && !src.queue.is_empty() && valid_rng.chance(traffic.valid_percent) {
                    src.offered = true;
                }
            }
            self.step(Some((&mut sources, &mut sinks, &mut expect)), &mut rng, traffic.ready_percent, &mut Some(&mut run));
        }
        run.cycles = self.cycle - start;
        run.sent = sent;
        let slips = self.ends.iter_mut().all(|e| e.has_port("slips"));
        for name in ["frames_sent", "frames_retransmitted", "frames_received", "crc_errors", "lock_losses", "slips"] {
            if name == "slips" && !slips {
                continue;
            }
            let v = [self.counter(0, name), self.counter(1, name)];
            run.counters.push((name.to_string(), v));
        }
        Ok(run)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::link::Value;

    /// Records the clock edges it gets and how often `rx_serial` is written; outputs read zero.
    struct Recorder {
        names: Vec<String>,
        values: Vec<Value>,
        edges: Vec<(bool, bool)>,
        rx_writes: u64,
    }

    impl Device for Recorder {
        fn port(&mut self, name: &str) -> usize {
            self.names.iter().position(|n| n == name).unwrap_or_else(|| {
                self.names.push(name.to_string());
                self.values.push(Value::default());
                self.names.len() - 1
            })
        }
        fn has_port(&mut self, _: &str) -> bool {
            true
        }
        fn set(&mut self, port: usize, value: &Value) {
            self.rx_writes += (self.names[port] == "rx_serial") as u64;
            self.values[port] = *value;
        }
        fn get(&mut self, port: usize) -> Value {
            self.values[port]
        }
        fn settle(&mut self) {}
        fn clock_edges(&mut self, clk: bool, rx_clk: bool, _: bool) {
            self.edges.push((clk, rx_clk));
        }
        fn has_rx_clock(&self) -> bool {
            true
        }
    }

    #[test]
    fn each_end_receives_on_its_partners_clock() {
        let ends = [0, 1].map(|_| Recorder { names: vec![], values: vec![], edges: vec![], rx_writes: 0 });
        let channel = ChannelConfig::clean(1, 3);
        let mut pair = LinkPair::new(LinkConfig { lanes: 1, ..Default::default() }, ends, [channel.clone(), channel]).with_periods([6400, 6402]).unwrap();
        pair.idle(10_000);
        let [a, b] = &pair.ends;
        // Some end's `clk` rises at every instant, so both ends get edges at every instant.
        assert_eq!(a.edges.len(), b.edges.len());
        for (ea, eb) in a.edges.iter().zip(&b.edges) {
            assert_eq!((ea.1, eb.1), (eb.0, ea.0), "rx_clk is the partner's clk");
        }
        let clks = [a, b].map(|e| e.edges.iter().filter(|e| e.0).count() as u64);
        assert_eq!(clks, [10_000, 9999 * 6400 / 6402 + 1]);
        assert_eq!(pair.cycles, clks);
        assert_eq!([a.rx_writes, b.rx_writes], [clks[1], clks[0]], "a channel moves on its sender's clock");
    }
}
