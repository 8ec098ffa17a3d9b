//! A neighbour exchange: every node's host streams its own packets (header, then payload words)
//! into one IntraNode port, all hosts from the same cycle at full rate, and takes the packets that
//! arrive on that port, as the DG halo exchange does each stage.

use crate::link::Value;
use crate::Error;
use weft_ip::router::header::Header;

use super::{bits, scalar, value, Torus};
use crate::link::Device;

/// A packet a host sends: to `dst` (node, port), with this tag, user word and payload.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Message {
    /// Destination (node, IntraNode port); the port must be the exchange's.
    pub dst: (usize, usize),
    /// The header's `tag`.
    pub tag: u16,
    /// The header's `user` word.
    pub user: u32,
    /// The payload, 32-bit words (1 to `max_packet_bytes / 4`), word 0 in the lowest lane.
    pub words: Vec<u32>,
}

/// A packet a host took: its header as it arrived, and its payload words.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Received {
    /// The header as it arrived (source filled in and `hops` counted by the fabric).
    pub header: Header,
    /// The payload words, as many as the header's `length` / 4.
    pub words: Vec<u32>,
}

/// What an exchange took and gave.
#[derive(Clone, Debug)]
pub struct Exchanged {
    /// Cycles from the first header beat offered to the last payload beat taken.
    pub cycles: u64,
    /// Per node, the packets it took, in arrival order.
    pub received: Vec<Vec<Received>>,
}

impl<D: Device> Torus<D> {
    /// Sends `messages[n]` from node `n`'s port `port` (in order) and takes every packet arriving
    /// on port `port` of any node, until each node has as many as were addressed to it. Fails
    /// after `limit` cycles, or on a packet whose `tlast` disagrees with its header's length.
    pub fn exchange(&mut self, port: usize, messages: &[Vec<Message>], limit: u64) -> Result<Exchanged, Error> {
        self.exchange_with(port, messages, limit, &mut |_| {})
    }

    /// [`Torus::exchange`] with `at_each` run every cycle (to pull a cable, say).
    pub fn exchange_with(&mut self, port: usize, messages: &[Vec<Message>], limit: u64, at_each: &mut dyn FnMut(&mut Self)) -> Result<Exchanged, Error> {
        let config = self.config.clone();
        let nodes = config.nodes();
        let lanes = config.width / 32;
        let chunks = config.width / 128;
        if messages.len() != nodes {
            return Err(Error::Config(format!("messages for {} nodes, the torus has {nodes}", messages.len())));
        }
        let mut expected = vec![0usize; nodes];
        let mut beats: Vec<Vec<(Vec<u128>, bool)>> = vec![];
        for (n, list) in messages.iter().enumerate() {
            let mut b = vec![];
            for m in list {
                if m.dst.0 >= nodes || m.dst.1 != port || m.words.is_empty() || 4 * m.words.len() > config.max_packet_bytes {
                    return Err(Error::Config(format!(
                        "node {n}: a message to {:?} of {} words: want a node below {nodes}, port {port}, 1 ..= {} words",
                        m.dst,
                        m.words.len(),
                        config.max_packet_bytes / 4
                    )));
                }
                expected[m.dst.0] += 1;
                let header = Header { dst: config.coords(m.dst.0), dst_port: port, length: 4 * m.words.len(), tag: m.tag, user: m.user, ..Header::default() };
                let mut head = vec![header.pack() & ((1 << 120) - 1)];
                head.resize(chunks, 0);
                b.push((head, false));
                let words: Vec<&[u32]> = m.words.chunks(lanes).collect();
                for (i, w) in words.iter().enumerate() {
                    let data = (0..chunks).map(|k| (0..4).fold(0u128, |acc, j| acc | (w.get(4 * k + j).copied().unwrap_or(0) as u128) << (32 * j))).collect();
                    b.push((data, i + 1 == words.len()));
                }
            }
            beats.push(b);
        }
        let handles: Vec<(usize, _)> = (0..nodes)
            .map(|n| self.local[n].iter().find(|l| l.0 == port).map(|l| (l.1, l.2)).ok_or_else(|| Error::Config(format!("node {n} has no host stream on port {port}"))))
            .collect::<Result<_, Error>>()?;
        let mut next = vec![0usize; nodes];
        let mut received: Vec<Vec<Received>> = vec![vec![]; nodes];
        // The packet being taken: its header and the words still to come.
        let mut current: Vec<Option<(Header, Vec<u32>, usize)>> = vec![None; nodes];
        let start = self.cycle;
        while (0..nodes).any(|n| received[n].len() < expected[n] || next[n] < beats[n].len()) {
            if self.cycle - start > limit {
                let got: Vec<usize> = received.iter().map(Vec::len).collect();
                return Err(Error::Stuck(format!("exchange not complete after {limit} cycles: packets taken {got:?} of {expected:?}, beats sent {next:?}")));
            }
            let active = self.next_instant();
            for n in 0..nodes {
                let (dev, h) = handles[n];
                let offered = next[n] < beats[n].len();
                let (data, last) = if offered { (value(&beats[n][next[n]].0), beats[n][next[n]].1) } else { (Value::default(), false) };
                let d = &mut self.devices[dev];
                d.set(h.s_tdata, &data);
                d.set(h.s_tlast, &scalar(last as u64));
                d.set(h.s_tvalid, &scalar(offered as u64));
                d.set(h.m_tready, &scalar(1));
            }
            for d in self.devices.iter_mut() {
                d.settle();
            }
            for n in 0..nodes {
                let (dev, h) = handles[n];
                let d = &mut self.devices[dev];
                if !active[n] {
                    continue;
                }
                if next[n] < beats[n].len() && d.get(h.s_tready)[0] & 1 == 1 {
                    next[n] += 1;
                }
                if d.get(h.m_tvalid)[0] & 1 == 0 {
                    continue;
                }
                let data = d.get(h.m_tdata);
                let last = d.get(h.m_tlast)[0] & 1 == 1;
                match current[n].take() {
                    None => {
                        let header = Header::unpack(bits(&data, 0, 128));
                        if !header.length.is_multiple_of(4) || header.length == 0 || last {
                            return Err(Error::Mismatch(format!("node {n} at cycle {}: a packet header with length {}, last {last}", self.cycle, header.length)));
                        }
                        current[n] = Some((header, vec![], header.length / 4));
                    }
                    Some((header, mut words, left)) => {
                        let take = left.min(lanes);
                        words.extend((0..take).map(|i| bits(&data, 32 * i, 32) as u32));
                        if last != (take == left) {
                            return Err(Error::Mismatch(format!("node {n} at cycle {}: a packet's tlast disagrees with its length {}", self.cycle, header.length)));
                        }
                        if last {
                            received[n].push(Received { header, words });
                        } else {
                            current[n] = Some((header, words, left - take));
                        }
                    }
                }
            }
            at_each(self);
            self.clock_instant(&active);
        }
        Ok(Exchanged { cycles: self.cycle - start, received })
    }
}
