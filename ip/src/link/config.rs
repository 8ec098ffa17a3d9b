//! Parameters of a link endpoint, checked before any hardware is built.

use crate::Error;

/// Frames in flight are numbered modulo 2^SEQ_BITS; at most half the space minus one may be
/// unacknowledged, so a receiver can tell a retransmitted duplicate from a frame after a gap.
pub const SEQ_BITS: usize = 6;
/// The most frames that may be unacknowledged at once: 2^(SEQ_BITS−1) − 1 = 31.
pub const MAX_IN_FLIGHT: u128 = (1 << (SEQ_BITS - 1)) - 1;
/// Channel-bonding blocks go out every this many cycles while the channel trains; lanes may be
/// skewed by up to half of it (7 cycles) and still bond.
pub const BOND_PERIOD: u128 = 16;
/// The largest lane-to-lane skew, in cycles, that channel bonding absorbs: half of
/// [`BOND_PERIOD`] minus one.
pub const MAX_SKEW: usize = 7;
/// A stand-alone acknowledgement may take a cycle from a frame at most this often.
pub const ACK_INTERVAL: u128 = 64;

/// The parameters of a link endpoint; [`LinkConfig::validate`] states the allowed ranges.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LinkConfig {
    /// Bonded lanes, 1..=8; the channel word is 64 bits per lane.
    pub lanes: usize,
    /// Longest frame the link forms, in channel words, 1..=256 (longer user packets span
    /// several frames).
    pub max_frame_words: usize,
    /// Replay buffer, in channel words: frames wait here until acknowledged. A power of two
    /// from `2·max_frame_words` to 4096.
    pub replay_words: usize,
    /// Receive buffer of each of the two virtual channels, in channel words: a power of two
    /// from `max_frame_words` to 4096.
    pub vc_buffer_words: usize,
    /// Cycles without acknowledgement progress before go-back-N retransmission, 16..=65535.
    pub retransmit_timeout: usize,
    /// Cycles between clock-compensation bursts, 64..=65535. PG074 ("Framing Efficiency"): a
    /// CC sequence of at most eight CC blocks every 4,992 user_clk cycles.
    pub cc_interval: usize,
    /// Clock-compensation blocks per burst, 1..=8.
    pub cc_burst: usize,
    /// Read the replay buffer and the virtual-channel buffers (words and their side
    /// information) through a register (a synchronous read port, what block RAM offers) instead
    /// of asynchronously. No cycle is lost: the read address is the next value of the read
    /// pointer, and no word is read in the cycle it is written (the scheduler sees a replay word
    /// a cycle after it entered; a virtual channel releases a frame a cycle after its last word
    /// and side information were written at the earliest).
    pub registered_reads: bool,
    /// The receive side runs on its own clock, `rx_clk`, recovered from the partner's
    /// transmitter (two boards never share an oscillator): block lock, deskew and bonding on
    /// `rx_clk`, then an elastic buffer into `clk` that deletes or inserts clock-compensation
    /// blocks (3 cycles more latency). Off: one clock for both directions.
    pub rx_clock: bool,
    /// The links are the board's own flow-controlled 256-bit IO channels (the 520N's OpenCL
    /// board support package): a node then joins each neighbour through
    /// [`super::io_link`] over `lanes / 4` channels instead of this endpoint, and the other
    /// fields but `lanes` do not apply.
    pub io_channels: bool,
}

impl Default for LinkConfig {
    fn default() -> Self {
        LinkConfig {
            lanes: 2,
            max_frame_words: 128,
            replay_words: 1024,
            vc_buffer_words: 512,
            retransmit_timeout: 1024,
            cc_interval: 4992,
            cc_burst: 8,
            registered_reads: true,
            rx_clock: false,
            io_channels: false,
        }
    }
}

fn range(field: &str, value: usize, lo: usize, hi: usize) -> Result<(), Error> {
    if (lo..=hi).contains(&value) {
        Ok(())
    } else {
        Err(Error::Config(format!("link `{field}` = {value}: allowed range is {lo} ..= {hi}")))
    }
}

fn power_of_two(field: &str, value: usize) -> Result<(), Error> {
    if value.is_power_of_two() {
        Ok(())
    } else {
        Err(Error::Config(format!("link `{field}` = {value}: must be a power of two")))
    }
}

impl LinkConfig {
    /// Checks every field against its allowed range; the error names the field and the range.
    pub fn validate(&self) -> Result<(), Error> {
        range("lanes", self.lanes, 1, 8)?;
        range("max_frame_words", self.max_frame_words, 1, 256)?;
        range("replay_words", self.replay_words, 2 * self.max_frame_words, 4096)?;
        power_of_two("replay_words", self.replay_words)?;
        range("vc_buffer_words", self.vc_buffer_words, self.max_frame_words, 4096)?;
        power_of_two("vc_buffer_words", self.vc_buffer_words)?;
        range("retransmit_timeout", self.retransmit_timeout, 16, 65535)?;
        range("cc_interval", self.cc_interval, 64, 65535)?;
        range("cc_burst", self.cc_burst, 1, 8)?;
        if self.io_channels && (self.lanes != 4 && self.lanes != 8 || self.rx_clock) {
            return Err(Error::Config(format!(
                "link `io_channels` with `lanes` = {}{}: IO channels need 4 or 8 lanes (one or two 256-bit channels) and no receive clock",
                self.lanes,
                if self.rx_clock { " and `rx_clock`" } else { "" }
            )));
        }
        Ok(())
    }

    /// Channel word in bytes.
    pub fn word_bytes(&self) -> usize {
        8 * self.lanes
    }
}

pub(crate) fn log2(value: usize) -> usize {
    value.trailing_zeros() as usize
}

/// Bits to hold `0 ..= value`.
pub(crate) fn bits_for(value: usize) -> usize {
    (usize::BITS - value.leading_zeros()) as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn impossible_configurations_name_the_field() {
        let bad = LinkConfig { lanes: 0, ..Default::default() };
        assert_eq!(bad.validate().unwrap_err(), crate::Error::Config("link `lanes` = 0: allowed range is 1 ..= 8".into()));
        let bad = LinkConfig { vc_buffer_words: 64, ..Default::default() };
        assert!(bad.validate().unwrap_err().to_string().contains("vc_buffer_words"));
        let bad = LinkConfig { replay_words: 1000, ..Default::default() };
        assert!(bad.validate().unwrap_err().to_string().contains("power of two"));
        assert!(LinkConfig::default().validate().is_ok());
    }
}
