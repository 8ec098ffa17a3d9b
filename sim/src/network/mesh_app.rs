//! A partitioned mesh application's communication on a simulated torus
//! ([`weft_ip::app::partition::run::Fabric`]): part `n` is node `n`. Global reductions go through
//! the nodes' collective engine (an allreduce of every node's partial), halo refreshes travel as
//! packets between the nodes' hosts on one IntraNode port. The nodes' arithmetic stays in
//! software; what the fabric changes is how values move, so the run must equal the in-memory
//! partitioned reference bit for bit.
//!
//! A refresh packet carries values of one dat from its owner to one reader: `tag` = the dat's
//! number (in the order the run first refreshes them), `user` = the position of its first element
//! in the owner's export list to that reader ([`Halo::exports`], ascending), the payload the
//! elements' values (binary64 as two words, low first). The reader places each packet by its
//! header — source node, tag, position — never by arrival order.

use std::collections::BTreeMap;

use weft_ip::app::partition::engines::{Cycle, Network};
use weft_ip::app::partition::halo::Halo;
use weft_ip::app::partition::run::{engine_operands, Fabric};
use weft_ip::app::partition::Partition;
use weft_ip::app::{Access, Element, SetId};
use weft_ip::router::Direction;
use weft_ip::system::allreduce::Collective;

use super::{Message, Torus};
use crate::link::Device;

/// Traffic a run put on the fabric.
#[derive(Clone, Debug, Default)]
pub struct MeshTraffic {
    /// Halo refreshes (one exchange between all nodes each).
    pub refreshes: usize,
    /// Refresh packets and their payload bytes.
    pub packets: usize,
    /// Payload bytes of the refresh packets.
    pub bytes: usize,
    /// Cycles the refreshes took, summed.
    pub refresh_cycles: u64,
    /// Reductions through the collective engine, and their cycles summed.
    pub reductions: usize,
    /// Cycles the reductions took, summed.
    pub reduction_cycles: u64,
}

/// The torus as a partitioned run's fabric.
pub struct TorusFabric<'t, D: Device> {
    /// The nodes, each with the collective engine on `engine`.
    pub torus: &'t mut Torus<D>,
    /// The engine's IntraNode ports `[a, b]`.
    pub engine: [usize; 2],
    /// The hosts' IntraNode port for halo packets.
    pub port: usize,
    /// Cycles any one exchange or reduction may take.
    pub limit: u64,
    /// A cable to pull during the refresh number `.3` (from 0): leaving node `.0` toward `.1`,
    /// for `.2` cycles from the refresh's start.
    pub cut: Option<(usize, Direction, u64, usize)>,
    /// For halo engines beside the nodes ([`Network`]): a cable to pull, leaving node `.0`
    /// toward `.1`, from torus cycle `.2` (counted from the first network cycle) for `.3`
    /// cycles — through the reductions' cycles too.
    pub cut_cycles: Option<(usize, Direction, u64, u64)>,
    /// The torus cycle of the first network cycle.
    pub network_start: Option<u64>,
    /// What the run has sent so far.
    pub traffic: MeshTraffic,
    tags: Vec<String>,
}

impl<'t, D: Device> TorusFabric<'t, D> {
    /// The fabric of `torus`, the engine on `engine`, halo packets on `port`.
    pub fn new(torus: &'t mut Torus<D>, engine: [usize; 2], port: usize, limit: u64) -> TorusFabric<'t, D> {
        TorusFabric { torus, engine, port, limit, cut: None, cut_cycles: None, network_start: None, traffic: MeshTraffic::default(), tags: vec![] }
    }
}

fn words<T: Element>(x: T) -> Vec<u32> {
    let bits = x.to_lane();
    if std::mem::size_of::<T>() == 8 {
        vec![bits as u32, (bits >> 32) as u32]
    } else {
        vec![bits as u32]
    }
}

impl<D: Device, T: Element> Fabric<T> for TorusFabric<'_, D> {
    fn combine(&mut self, acc: Access, parts: &[Vec<T>]) -> Result<Vec<T>, weft_ip::Error> {
        let (ty, op, inputs) = engine_operands(acc, parts);
        let (cut, start) = (self.cut_cycles, self.network_start);
        let run = self
            .torus
            .collectives(Collective::Allreduce, self.engine, ty, op, &[inputs], 256, None, self.limit, &mut |t| pull(t, cut, start))
            .map_err(|e| weft_ip::Error::Config(format!("reduction: {e}")))?;
        let results = run.results.into_iter().next().unwrap_or_default();
        if results.iter().any(|r| *r != results[0]) {
            return Err(weft_ip::Error::Config("reduction: the nodes received different results".into()));
        }
        self.traffic.reductions += 1;
        self.traffic.reduction_cycles += run.cycles;
        Ok(results[0].iter().map(|b| T::from_lane(*b as u64)).collect())
    }

    fn refresh(&mut self, dat: &str, set: SetId, dim: usize, values: &mut [BTreeMap<String, Vec<T>>], partition: &Partition, halo: &Halo) -> Result<(), weft_ip::Error> {
        let config = self.torus.config.clone();
        let nodes = partition.parts;
        let tag = match self.tags.iter().position(|t| t == dat) {
            Some(t) => t,
            None => {
                self.tags.push(dat.to_string());
                self.tags.len() - 1
            }
        };
        let per_element = dim * if std::mem::size_of::<T>() == 8 { 2 } else { 1 };
        let per_packet = (config.max_packet_bytes / 4 / per_element).max(1);
        let mut messages: Vec<Vec<Message>> = vec![vec![]; nodes];
        for (from, outbox) in messages.iter_mut().enumerate() {
            for to in (0..nodes).filter(|&t| t != from) {
                let exports = halo.exports(partition, from, to, set);
                for (k, chunk) in exports.chunks(per_packet).enumerate() {
                    let payload: Vec<u32> = chunk.iter().flat_map(|&e| values[from][dat][e as usize * dim..(e as usize + 1) * dim].iter().flat_map(|x| words(*x))).collect();
                    self.traffic.bytes += 4 * payload.len();
                    outbox.push(Message { dst: (to, self.port), tag: tag as u16, user: (k * per_packet) as u32, words: payload });
                }
            }
        }
        self.traffic.packets += messages.iter().map(Vec::len).sum::<usize>();
        let cut = self.cut.filter(|c| c.3 == self.traffic.refreshes);
        let start = self.torus.cycle;
        let mut at_each = |t: &mut Torus<D>| {
            if let Some((node, d, cycles, _)) = cut {
                let at = t.cycle - start;
                if at == 1 || at == 1 + cycles {
                    t.cut(node, d, at == 1);
                }
            }
        };
        let done = self.torus.exchange_with(self.port, &messages, self.limit, &mut at_each).map_err(|e| weft_ip::Error::Config(format!("halo refresh of `{dat}`: {e}")))?;
        if let Some((node, d, _, _)) = cut {
            self.torus.cut(node, d, false);
        }
        self.traffic.refreshes += 1;
        self.traffic.refresh_cycles += done.cycles;
        // Each packet into its place: source node, dat by tag, position by the user word.
        for (to, packets) in done.received.iter().enumerate() {
            for p in packets {
                let from = config.node(p.header.src);
                let place = |what: &str| weft_ip::Error::Config(format!("node {to}: a halo packet from node {from} with tag {} and position {}: {what}", p.header.tag, p.header.user));
                let name = self.tags.get(p.header.tag as usize).ok_or_else(|| place("no such dat"))?;
                let exports = halo.exports(partition, from, to, set);
                let first = p.header.user as usize;
                let count = p.words.len() / per_element;
                if name != dat || p.words.len() % per_element != 0 || first + count > exports.len() {
                    return Err(place("outside what the owner sends this node"));
                }
                let target = values[to].get_mut(dat).ok_or_else(|| place("no such dat"))?;
                for (k, &e) in exports[first..first + count].iter().enumerate() {
                    for c in 0..dim {
                        let w = &p.words[k * per_element + c * (per_element / dim)..];
                        let bits = if per_element / dim == 2 { w[0] as u64 | (w[1] as u64) << 32 } else { w[0] as u64 };
                        target[e as usize * dim + c] = T::from_lane(bits);
                    }
                }
            }
        }
        Ok(())
    }
}

/// The torus as the halo engines' network: their packets enter and leave at IntraNode port
/// `port` of the generated nodes, beat by beat.
impl<D: Device> Network for TorusFabric<'_, D> {
    fn cycle(&mut self, offer: &[Option<(u128, bool)>], ready: &[bool]) -> Result<Cycle, weft_ip::Error> {
        let start = *self.network_start.get_or_insert(self.torus.cycle);
        pull(self.torus, self.cut_cycles, Some(start));
        let s = self.torus.step_port(self.port, offer, ready).map_err(|e| weft_ip::Error::Config(format!("halo engines' network: {e}")))?;
        let delivered = s.delivered.into_iter().map(|b| b.map(|(d, last)| (d[0], last))).collect();
        Ok(Cycle { taken: s.taken, delivered, active: s.active })
    }
}

/// Pulls the cable of `cut` at its first torus cycle after `start` and puts it back at its last.
fn pull<D: Device>(t: &mut Torus<D>, cut: Option<(usize, Direction, u64, u64)>, start: Option<u64>) {
    if let (Some((node, d, from, cycles)), Some(start)) = (cut, start) {
        let at = t.cycle - start;
        if at == from || at == from + cycles {
            t.cut(node, d, at == from);
        }
    }
}
