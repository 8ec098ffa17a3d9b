//! Traffic of a partitioned run, made and checked at each node alone so that it does not depend
//! on which process holds the node: every node draws its packets from its own generator (seeded
//! by the run's seed and the node), and records what arrives at it.

use weft_ip::router::header::Header;
use weft_ip::router::RouterConfig;
use weft_ip::weft_hdl::testbench::Rng;

use crate::network::Pattern;

/// The offered load: where packets go, how many, how long.
#[derive(Clone, Debug)]
pub struct Load {
    /// Where packets go (their destination port is always 0).
    pub pattern: Pattern,
    /// Packets each node creates per cycle (a chance per cycle; above 1 it queues more).
    pub rate: f64,
    /// Shortest and longest payload in bytes (uniform between them).
    pub bytes: (usize, usize),
    /// Cycles during which packets are created.
    pub cycles: u64,
    /// Cycles after that for the packets in flight to arrive.
    pub drain: u64,
    /// Seed of every node's generator.
    pub seed: u64,
}

/// Payload byte `i` of packet `k` of node `src`: a mix of the three, so any byte out of place
/// shows.
pub fn payload_byte(src: usize, k: u64, i: usize) -> u8 {
    let mut x = (src as u64) << 40 ^ k << 16 ^ i as u64;
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    (x ^ (x >> 31)) as u8
}

/// A packet a node created: its number at that node, destination node, payload bytes and the
/// cycle it was created.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sent {
    /// The node that created it.
    pub src: usize,
    /// Its number among that node's packets, from 0 (the header's `user` word).
    pub k: u64,
    /// Destination node (port 0).
    pub dst: usize,
    /// Payload bytes.
    pub bytes: usize,
    /// Cycle it was created.
    pub created: u64,
}

/// A packet that left the fabric at a node's port 0.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Delivered {
    /// The node it arrived at.
    pub node: usize,
    /// The source node its header names.
    pub src: usize,
    /// Its number at the source (`user`).
    pub k: u64,
    /// Payload bytes (`length`).
    pub bytes: usize,
    /// Router-to-router hops its header counted.
    pub hops: usize,
    /// Destination node its header names.
    pub dst: usize,
    /// Cycle its header left the fabric.
    pub head: u64,
    /// Cycle its last beat left.
    pub tail: u64,
    /// Every payload byte as the source made it.
    pub intact: bool,
}

/// Words per record when gathered.
pub const SENT_WORDS: usize = 5;
/// Words per record when gathered.
pub const DELIVERED_WORDS: usize = 9;

impl Sent {
    /// The record as words, for a gather.
    pub fn words(&self) -> [u64; SENT_WORDS] {
        [self.src as u64, self.k, self.dst as u64, self.bytes as u64, self.created]
    }

    /// The record from its words.
    pub fn from_words(w: &[u64]) -> Sent {
        Sent { src: w[0] as usize, k: w[1], dst: w[2] as usize, bytes: w[3] as usize, created: w[4] }
    }
}

impl Delivered {
    /// The record as words, for a gather.
    pub fn words(&self) -> [u64; DELIVERED_WORDS] {
        [self.node as u64, self.src as u64, self.k, self.bytes as u64, self.hops as u64, self.dst as u64, self.head, self.tail, self.intact as u64]
    }

    /// The record from its words.
    pub fn from_words(w: &[u64]) -> Delivered {
        Delivered { node: w[0] as usize, src: w[1] as usize, k: w[2], bytes: w[3] as usize, hops: w[4] as usize, dst: w[5] as usize, head: w[6], tail: w[7], intact: w[8] == 1 }
    }
}

/// A node's source on port 0: its generator, the packets waiting, the beat on offer.
pub(super) struct Source {
    node: usize,
    rng: Rng,
    queue: std::collections::VecDeque<Sent>,
    beat: usize,
    made: u64,
}

impl Source {
    pub(super) fn new(node: usize, seed: u64) -> Source {
        Source { node, rng: Rng::new(seed ^ (node as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15)), queue: Default::default(), beat: 0, made: 0 }
    }

    /// Draws this cycle's new packets (while `creating`), records them in `sent`.
    pub(super) fn create(&mut self, config: &RouterConfig, load: &Load, cycle: u64, sent: &mut Vec<Sent>) {
        let mut chance = load.rate;
        while chance > 0.0 {
            let draw = self.rng.next_u64() as f64 / u64::MAX as f64;
            if draw < chance.min(1.0) {
                let dst = load.pattern.destination(config, self.node, &mut self.rng);
                let span = (load.bytes.1 - load.bytes.0) as u64 + 1;
                let bytes = load.bytes.0 + self.rng.below(span) as usize;
                let p = Sent { src: self.node, k: self.made, dst, bytes, created: cycle };
                self.made += 1;
                self.queue.push_back(p);
                sent.push(p);
            }
            chance -= 1.0;
        }
    }

    /// The beat on offer (data in 64-bit words, low first, and `tlast`), if any.
    pub(super) fn offer(&self, config: &RouterConfig) -> Option<(Vec<u64>, bool)> {
        let p = self.queue.front()?;
        let flit = config.flit_bytes();
        let beats = config.packet_flits(p.bytes);
        let mut words = vec![0u64; flit / 8];
        if self.beat == 0 {
            let h = Header { dst: config.coords(p.dst), dst_port: 0, length: p.bytes, user: p.k as u32, ..Default::default() };
            let bits = h.pack() & ((1 << 120) - 1);
            words[0] = bits as u64;
            words[1] = (bits >> 64) as u64;
        } else {
            for j in 0..flit {
                let i = (self.beat - 1) * flit + j;
                if i < p.bytes {
                    words[j / 8] |= (payload_byte(p.src, p.k, i) as u64) << (8 * (j % 8));
                }
            }
        }
        Some((words, self.beat + 1 == beats))
    }

    /// The beat on offer was taken.
    pub(super) fn taken(&mut self, config: &RouterConfig) {
        let beats = self.queue.front().map_or(0, |p| config.packet_flits(p.bytes));
        self.beat += 1;
        if self.beat == beats {
            self.queue.pop_front();
            self.beat = 0;
        }
    }
}

/// A node's sink on port 0: the packet arriving.
#[derive(Default)]
pub(super) struct Sink {
    current: Option<(Header, Vec<u8>, u64)>,
}

impl Sink {
    /// A beat left the fabric at `node` in `cycle` (data in 64-bit words, low first); returns the
    /// packet it ended, checked against its source's bytes.
    pub(super) fn beat(&mut self, config: &RouterConfig, node: usize, words: &[u64], last: bool, cycle: u64) -> Option<Delivered> {
        match self.current.as_mut() {
            None => {
                let h = Header::unpack(words[0] as u128 | (words[1] as u128) << 64);
                self.current = Some((h, vec![], cycle));
            }
            Some((_, bytes, _)) => bytes.extend(words.iter().flat_map(|w| w.to_le_bytes())),
        }
        if !last {
            return None;
        }
        let (h, mut bytes, head) = self.current.take()?;
        let src = config.node(h.src);
        bytes.truncate(h.length);
        let intact = bytes.len() == h.length && bytes.iter().enumerate().all(|(i, &b)| b == payload_byte(src, h.user as u64, i));
        Some(Delivered { node, src, k: h.user as u64, bytes: h.length, hops: h.hops, dst: config.node(h.dst), head, tail: cycle, intact })
    }
}
