//! A behavioural model of a transceiver's 64B/66B gearbox interface (UltraScale+ GTY/GTH with the
//! asynchronous gearbox and an 8-byte interface): per lane and user-clock cycle the fabric hands
//! the transmitter a 2-bit header and 64 data bits and takes the same from the receiver. On the
//! line the blocks travel through the [`Channel`] model (latency, the receiver's random initial
//! alignment, bit errors); a one-cycle pulse on a lane's `RXGEARBOXSLIP` moves its receive
//! gearbox to the next alignment (one bit later) [`GtModel::slip_latency`] cycles on.

use std::collections::VecDeque;

use crate::channel::{Channel, ChannelConfig, BLOCK_BITS};

/// One direction of a link through two transceivers.
pub struct GtModel {
    /// The line between them.
    pub channel: Channel,
    /// Cycles from a slip pulse to the gearbox's new alignment.
    pub slip_latency: u64,
    /// Per lane: the cycles at which slips take effect.
    pending: Vec<VecDeque<u64>>,
    /// Per lane: the slip input in the previous cycle (a slip is a rising edge).
    last_slip: Vec<bool>,
    /// Slips taken so far, all lanes.
    pub slips: u64,
}

impl GtModel {
    /// A model over a channel of `config`; slips take effect `slip_latency` cycles after the
    /// pulse.
    pub fn new(config: ChannelConfig, slip_latency: u64) -> GtModel {
        let lanes = config.lanes;
        GtModel { channel: Channel::new(config), slip_latency, pending: vec![VecDeque::new(); lanes], last_slip: vec![false; lanes], slips: 0 }
    }

    /// One cycle: `tx[l]` = (`TXHEADER`, `TXDATA`) of lane `l`, `slip[l]` its receiver's
    /// `RXGEARBOXSLIP`; returns each lane's (`RXHEADER`, `RXDATA`).
    pub fn step(&mut self, tx: &[(u8, u64)], slip: &[bool]) -> Vec<(u8, u64)> {
        let now = self.channel.cycle;
        for (l, &s) in slip.iter().enumerate() {
            if s && !self.last_slip[l] {
                self.pending[l].push_back(now + self.slip_latency);
            }
            self.last_slip[l] = s;
            while self.pending[l].front().is_some_and(|&at| at <= now) {
                self.pending[l].pop_front();
                let offset = &mut self.channel.config_mut().bit_offset[l];
                *offset = (*offset + 1) % BLOCK_BITS;
                self.slips += 1;
            }
        }
        let blocks: Vec<u128> = tx.iter().map(|&(h, d)| (d as u128) << 2 | (h & 0b11) as u128).collect();
        self.channel.step(&blocks).into_iter().map(|w| ((w & 0b11) as u8, (w >> 2) as u64)).collect()
    }
}
