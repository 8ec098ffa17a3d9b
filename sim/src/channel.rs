//! Channel model between two link endpoints: per lane a fixed latency plus skew, the receiver's
//! unknown bit alignment, and bit errors (at a rate, or at given cycles). The simulation tops'
//! channel (`weft_ip::system::channel`) is this model without skew, offsets or random errors.

use weft_ip::weft_hdl::testbench::Rng;

/// Bits of one block on a serial lane per cycle: a 64b/66b block, the 2-bit sync header in
/// bits 1:0 and 64 payload bits above.
pub const BLOCK_BITS: usize = 66;
const MASK: u128 = (1 << BLOCK_BITS) - 1;

pub use weft_ip::system::channel::INJECT_PAYLOAD_BIT;

/// One direction of a serial link: how every lane delays, misaligns and corrupts its blocks.
#[derive(Clone, Debug)]
pub struct ChannelConfig {
    /// Serial lanes, each carrying one 66-bit block per cycle.
    pub lanes: usize,
    /// Cycles from a block leaving the transmitter to reaching the receiver, at least 1; the
    /// receiver sees it one cycle later still (the edge that samples it), as the simulation
    /// tops' channel does.
    pub latency: usize,
    /// Extra cycles per lane (one entry per lane): lane-to-lane skew.
    pub skew: Vec<usize>,
    /// Bits by which each lane's receiver sees the stream shifted (one entry per lane, 0..66):
    /// the block alignment the receiver has to find.
    pub bit_offset: Vec<usize>,
    /// Probability that any one bit is flipped (the bit error rate, 0 to 1/66): each block gets
    /// one flipped bit with probability 66 × rate.
    pub bit_error_rate: f64,
    /// Seed of the random bit errors: the same seed gives the same errors.
    pub seed: u64,
}

impl ChannelConfig {
    /// A channel of `lanes` lanes and `latency` cycles without skew, misalignment or bit errors
    /// (seed 1).
    pub fn clean(lanes: usize, latency: usize) -> ChannelConfig {
        ChannelConfig { lanes, latency, skew: vec![0; lanes], bit_offset: vec![0; lanes], bit_error_rate: 0.0, seed: 1 }
    }
}

/// The channel model of one direction, stepped once per cycle of its transmitter's clock.
///
/// ```
/// use weft_sim::channel::{Channel, ChannelConfig};
///
/// // One lane, 3 cycles of latency: a block comes out of the fifth step after the one it went
/// // in at (latency + 1 for the receiver's sampling edge).
/// let mut channel = Channel::new(ChannelConfig::clean(1, 3));
/// let seen: Vec<u128> = (1..=8).map(|block| channel.step(&[block])[0]).collect();
/// assert_eq!(seen, [0, 0, 0, 0, 1, 2, 3, 4]);
/// assert_eq!((channel.cycle, channel.flipped_bits), (8, 0));
/// ```
pub struct Channel {
    config: ChannelConfig,
    /// Per lane: blocks in flight, newest last.
    pipes: Vec<std::collections::VecDeque<u128>>,
    previous: Vec<u128>,
    rng: Rng,
    /// Flips scheduled by the test: (cycle, lane, bit).
    pub scheduled: Vec<(u64, usize, usize)>,
    /// Cycles in which every block on every lane has its sync header destroyed (`[from, to)`).
    pub outage: Option<(u64, u64)>,
    /// Cycles stepped so far.
    pub cycle: u64,
    /// Bits flipped so far, at random and scheduled (an outage's destroyed headers not counted).
    pub flipped_bits: u64,
    /// When set, every block entering the channel (before errors), per cycle and lane.
    pub record: Option<Vec<Vec<u128>>>,
}

impl Channel {
    /// An empty channel (every lane's pipeline holds zeros). Panics unless `latency` is at
    /// least 1 and `skew` and `bit_offset` have one entry per lane.
    pub fn new(config: ChannelConfig) -> Channel {
        assert!(config.latency >= 1 && config.skew.len() == config.lanes && config.bit_offset.len() == config.lanes);
        let pipes = (0..config.lanes).map(|k| std::iter::repeat_n(0, config.latency + config.skew[k]).collect()).collect();
        let rng = Rng::new(config.seed);
        Channel { previous: vec![0; config.lanes], config, pipes, rng, scheduled: vec![], outage: None, cycle: 0, flipped_bits: 0, record: None }
    }

    /// The configuration, to change the bit error rate or bit offsets during a run (`lanes`,
    /// `latency` and `skew` are fixed when the channel is made: leave them as they are).
    pub fn config_mut(&mut self) -> &mut ChannelConfig {
        &mut self.config
    }

    /// One cycle: `tx` holds the block each lane transmits (one per lane, low 66 bits used);
    /// returns what each receiver sees.
    pub fn step(&mut self, tx: &[u128]) -> Vec<u128> {
        let mut out = Vec::with_capacity(self.config.lanes);
        if let Some(record) = self.record.as_mut() {
            record.push(tx.to_vec());
        }
        let block_error = self.config.bit_error_rate * BLOCK_BITS as f64;
        for k in 0..self.config.lanes {
            let mut block = tx[k] & MASK;
            if block_error > 0.0 && (self.rng.next_u64() as f64 / u64::MAX as f64) < block_error {
                block ^= 1 << self.rng.below(BLOCK_BITS as u64);
                self.flipped_bits += 1;
            }
            for &(cycle, lane, bit) in &self.scheduled {
                if cycle == self.cycle && lane == k {
                    block ^= 1 << bit;
                    self.flipped_bits += 1;
                }
            }
            if let Some((from, to)) = self.outage {
                if (from..to).contains(&self.cycle) {
                    block &= !0b11; // header 00: invalid
                }
            }
            self.pipes[k].push_back(block);
            let arrived = self.pipes[k].pop_front().unwrap();
            let offset = self.config.bit_offset[k];
            let seen = if offset == 0 { self.previous[k] } else { ((self.previous[k] >> offset) | (arrived << (BLOCK_BITS - offset))) & MASK };
            self.previous[k] = arrived;
            out.push(seen);
        }
        self.cycle += 1;
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delays_and_realigns() {
        let mut config = ChannelConfig::clean(1, 3);
        config.bit_offset = vec![5];
        let mut ch = Channel::new(config);
        let blocks: Vec<u128> = (1..=10u128).map(|i| (i * 0x1234_5678_9abc_def1) & MASK).collect();
        let mut seen = vec![];
        for b in &blocks {
            seen.push(ch.step(&[*b])[0]);
        }
        // Output at cycle t is bits 5.. of block t-4 followed by bits ..5 of block t-3.
        for t in 5..10 {
            let expect = ((blocks[t - 4] >> 5) | (blocks[t - 3] << 61)) & MASK;
            assert_eq!(seen[t], expect);
        }
    }
}
