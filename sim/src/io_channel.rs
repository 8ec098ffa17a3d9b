//! A board's IO channel between two nodes (the 520N's OpenCL channels over its QSFPs): one
//! 256-bit word per cycle in each direction, taken at the earliest `latency + 1` edges after it
//! left (as the serial channel model, `crate::channel`), from a
//! receive buffer whose free entries the sender needs. The buffer's space comes back to the
//! sender `latency` cycles after the receiver takes a word, as the board's own flow control
//! over the cable does; a buffer of twice the latency and more keeps a channel at one word a
//! cycle. The simulation tops' channel (`weft_ip::system::channel::io_channel`) is the same model.

use std::collections::VecDeque;

use crate::link::Value;

/// Words of the receive buffer the model gives each channel: more than a round trip of the
/// 520N's 520 ns cable at 156.25 MHz (2 × 82 cycles), so flow control never slows a channel
/// that the receiver drains.
pub const BUFFER_WORDS: usize = 256;

/// One direction of one IO channel.
#[derive(Clone, Debug)]
pub struct IoChannel {
    latency: u64,
    now: u64,
    credits: usize,
    flight: VecDeque<(u64, Value)>,
    buffer: VecDeque<Value>,
    returns: VecDeque<u64>,
    /// Words carried so far.
    pub words: u64,
}

impl IoChannel {
    /// A channel of `latency` cycles (at least 1) and a receive buffer of `buffer` words.
    pub fn new(latency: usize, buffer: usize) -> IoChannel {
        IoChannel { latency: latency.max(1) as u64, now: 0, credits: buffer, flight: VecDeque::new(), buffer: VecDeque::new(), returns: VecDeque::new(), words: 0 }
    }

    /// The sender may hand over a word at the coming edge (`tready`).
    pub fn ready(&self) -> bool {
        self.credits > 0
    }

    /// The word the receiver is offered (`tvalid`, `tdata`).
    pub fn head(&self) -> Option<&Value> {
        self.buffer.front()
    }

    /// One clock edge: `sent` is the word the sender handed over at it (only while
    /// [`IoChannel::ready`]), `taken` whether the receiver took the head.
    pub fn step(&mut self, sent: Option<Value>, taken: bool) {
        self.now += 1;
        if let Some(word) = sent {
            assert!(self.credits > 0, "a word sent into a full IO channel");
            self.credits -= 1;
            self.words += 1;
            self.flight.push_back((self.now + self.latency, word));
        }
        if taken && self.buffer.pop_front().is_some() {
            self.returns.push_back(self.now + self.latency);
        }
        while self.flight.front().is_some_and(|f| f.0 <= self.now) {
            let (_, word) = self.flight.pop_front().unwrap();
            self.buffer.push_back(word);
        }
        while self.returns.front().is_some_and(|&t| t <= self.now) {
            self.returns.pop_front();
            self.credits += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::link::scalar;

    #[test]
    fn a_word_takes_the_latency_and_space_comes_back_a_latency_later() {
        let mut ch = IoChannel::new(5, 2);
        ch.step(Some(scalar(7)), false);
        for _ in 0..5 {
            assert!(ch.head().is_none());
            ch.step(None, false);
        }
        // Sent at edge 1, taken at edge 7 at the earliest: latency + 1 edges, as the serial channel.
        assert_eq!(ch.head().map(|v| v[0]), Some(7));
        ch.step(Some(scalar(8)), false);
        assert!(!ch.ready(), "two words in flight or buffered fill a buffer of two");
        ch.step(None, true);
        for _ in 0..5 {
            assert!(!ch.ready());
            ch.step(None, false);
        }
        assert!(ch.ready(), "the space of the word taken at edge 8 is back for edge 14");
    }
}
