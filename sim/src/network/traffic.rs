//! Traffic for a torus run: the packets, where they go ([`Pattern`]), how sources get them
//! ([`Injection`]), and the whole description ([`Traffic`]).

use weft_ip::router::header::Header;
use weft_ip::router::RouterConfig;
use weft_ip::weft_hdl::testbench::Rng;

/// A packet of the traffic: `user` carries its id, so a receiver can name it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Packet {
    /// Number of the packet in its run, from 1 (its header's `user` word holds the low 32 bits).
    pub id: u64,
    /// Source (node, IntraNode port); nodes are numbered `x + X·(y + Y·z)`.
    pub src: (usize, usize),
    /// Destination (node, IntraNode port).
    pub dst: (usize, usize),
    /// The header's `tag`.
    pub tag: u16,
    /// The payload bytes, 0 to the configured maximum.
    pub payload: Vec<u8>,
    /// Cycle it was created (queued at its source).
    pub created: u64,
}

impl Packet {
    /// The header the sender writes (`src_*`, `hops` and `ecc` left to the fabric).
    pub(super) fn header(&self, config: &RouterConfig) -> u128 {
        let h = Header { dst: config.coords(self.dst.0), dst_port: self.dst.1, length: self.payload.len(), tag: self.tag, user: self.id as u32, ..Default::default() };
        h.pack() & ((1 << 120) - 1)
    }

    /// Flits (beats) the packet takes on the datapath of `config`: the header flit, then the
    /// payload's.
    pub fn flits(&self, config: &RouterConfig) -> usize {
        config.packet_flits(self.payload.len())
    }
}

/// Where packets go.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pattern {
    /// Any node, any port, uniformly (the source's own node included).
    UniformRandom,
    /// Node index bits rotated by half their count (the matrix transpose of the node index).
    Transpose,
    /// A neighbour, in a random direction the torus has.
    NearestNeighbour,
    /// The same node, the next IntraNode port (a permutation: no two sources share an output).
    NextPort,
}

impl Pattern {
    /// The pattern's name in benchmark tables: `uniform`, `transpose`, `neighbour`, `next port`.
    pub fn name(self) -> &'static str {
        match self {
            Pattern::UniformRandom => "uniform",
            Pattern::Transpose => "transpose",
            Pattern::NearestNeighbour => "neighbour",
            Pattern::NextPort => "next port",
        }
    }

    /// The destination node of a packet from node `src`, drawing from `rng` where the pattern
    /// is random. [`Pattern::Transpose`] panics unless the torus has 4^k nodes.
    pub fn destination(self, config: &RouterConfig, src: usize, rng: &mut Rng) -> usize {
        let nodes = config.nodes();
        match self {
            Pattern::UniformRandom => rng.below(nodes as u64) as usize,
            Pattern::Transpose => {
                let b = nodes.trailing_zeros() as usize;
                assert!(nodes.is_power_of_two() && b.is_multiple_of(2), "transpose needs 4^k nodes");
                let h = b / 2;
                ((src >> h) | (src << h)) & (nodes - 1)
            }
            Pattern::NearestNeighbour => {
                let dirs = config.directions();
                config.neighbour(src, dirs[rng.below(dirs.len() as u64) as usize])
            }
            Pattern::NextPort => src,
        }
    }
}

/// How sources get their packets.
#[derive(Clone, Copy, Debug)]
pub enum Injection {
    /// This many packets, queued at random sources before the first cycle.
    Queued(usize),
    /// Each IntraNode port creates a packet with probability `rate / local_ports` per cycle
    /// (so `rate` packets per node per cycle, which may exceed 1) for `cycles` cycles; the run
    /// then ends when every packet has arrived or `drain` more cycles have passed.
    Bernoulli {
        /// Packets created per node per cycle (offered load).
        rate: f64,
        /// Cycles during which packets are created.
        cycles: u64,
        /// Cycles the run may go on after that for every packet to arrive.
        drain: u64,
    },
    /// Every source always has a packet waiting (full offered load) for this many cycles.
    Saturated {
        /// Cycles during which sources are kept full.
        cycles: u64,
    },
    /// One packet of `bytes` from `src` to `dst` (node, port): zero-load latency.
    One {
        /// Source (node, port).
        src: (usize, usize),
        /// Destination (node, port).
        dst: (usize, usize),
        /// Payload bytes.
        bytes: usize,
    },
    /// `count` packets of `bytes` queued at `src` for `dst` at the start, and as many from `dst`
    /// to `src` when `both_ways`: a stream for bandwidth.
    Stream {
        /// Source (node, port).
        src: (usize, usize),
        /// Destination (node, port).
        dst: (usize, usize),
        /// Payload bytes per packet.
        bytes: usize,
        /// Packets per direction.
        count: usize,
        /// Also stream from `dst` back to `src`.
        both_ways: bool,
    },
    /// Every node but `root` sends `bytes` in packets of at most `packet` bytes from its port 0
    /// to `root`'s port `node % local_ports` (the gather of a gather-then-broadcast).
    Gather {
        /// The node gathered to.
        root: usize,
        /// Bytes each other node sends.
        bytes: usize,
        /// Largest packet payload, in bytes.
        packet: usize,
    },
    /// `root` sends `bytes` in packets of at most `packet` bytes to port 0 of every other node,
    /// node `j`'s copy from its port `j % local_ports` (the broadcast).
    Broadcast {
        /// The node broadcasting.
        root: usize,
        /// Bytes each other node receives.
        bytes: usize,
        /// Largest packet payload, in bytes.
        packet: usize,
    },
    /// Every node sends `bytes` in packets of at most `packet` bytes from its port 0 to port 0 of
    /// its successor on the snake ring (the allreduce chain, [`weft_ip::system::allreduce::chain`],
    /// closed: consecutive nodes are neighbours): one step of an endpoint ring collective.
    Ring {
        /// Bytes each node sends to its successor.
        bytes: usize,
        /// Largest packet payload, in bytes.
        packet: usize,
    },
}

/// Traffic generation for [`Torus::run`](super::Torus::run).
#[derive(Clone, Debug)]
pub struct Traffic {
    /// Where random packets go (used by `Queued`, `Bernoulli` and `Saturated`).
    pub pattern: Pattern,
    /// How many packets there are and when sources get them.
    pub injection: Injection,
    /// Shortest random payload in bytes (lengths are uniform in `min_bytes..=max_bytes`).
    pub min_bytes: usize,
    /// Longest random payload in bytes, at most the configured maximum packet.
    pub max_bytes: usize,
    /// Percent of cycles a source offers its beat (0 to 100).
    pub valid_percent: u64,
    /// Percent of cycles a sink takes one (0 to 100).
    pub ready_percent: u64,
    /// Seed of the packets, their destinations and the random handshakes.
    pub seed: u64,
}
