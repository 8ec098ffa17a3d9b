//! The run loop of a torus under traffic, and its scoreboard: every packet is checked on
//! arrival (exactly once, intact, at the right node and port, minimal hops, valid `ecc`, in
//! order per flow), and its times are recorded.

use crate::link::Value;
use crate::Error;
use std::collections::{HashMap, VecDeque};

use weft_ip::router::header::{check, Checked, Header};
use weft_ip::router::route::distance;
use weft_ip::weft_hdl::testbench::Rng;

use super::traffic::{Injection, Packet, Pattern, Traffic};
use super::{bits, scalar, value, Torus};
use crate::link::Device;

struct Source {
    queue: VecDeque<Packet>,
    /// Beat index of the front packet; whether a beat is on offer (kept until taken).
    beat: usize,
    offered: bool,
}

#[derive(Default)]
struct Sink {
    /// The packet being received: its header, payload so far, the cycle its head arrived.
    current: Option<(u128, Vec<u8>, u64)>,
}

/// A delivered packet's times.
#[derive(Clone, Copy, Debug)]
pub struct Delivery {
    /// The packet's [`Packet::id`](crate::network::Packet::id).
    pub id: u64,
    /// Cycle it was created (queued at its source).
    pub created: u64,
    /// Cycle its header beat entered the network at the source port.
    pub head_in: u64,
    /// Cycle its header beat left the network at the destination port.
    pub head_out: u64,
    /// Cycle its last beat left the network.
    pub tail_out: u64,
    /// Flits of the packet, the header's included.
    pub flits: usize,
}

/// What a run saw.
#[derive(Clone, Debug, Default)]
pub struct NetRun {
    /// Cycles the run took (of node 0's clock when the nodes have their own).
    pub cycles: u64,
    /// Packets created.
    pub sent: usize,
    /// Every packet delivered, in the order of arrival.
    pub deliveries: Vec<Delivery>,
    /// Flits that left the network at each cycle of the run (index = cycle − start).
    pub ejected_flits: Vec<u32>,
    /// Creation cycle of every packet sent.
    pub created: Vec<u64>,
    /// Packets lost to a node restart (each allowed by [`Torus::hold_in_reset`]'s rule).
    pub lost: Vec<u64>,
}

/// Why a run stopped early.
#[derive(Clone, Debug)]
pub struct Stuck {
    /// The cycle at which the run gave up.
    pub cycle: u64,
    /// Packets delivered by then.
    pub delivered: usize,
    /// Packets created by then.
    pub sent: usize,
}

impl<D: Device> Torus<D> {
    /// Runs `traffic` until every packet has arrived; every packet is checked on arrival, and a
    /// wrong one fails the run with `Err`. `Ok(Err(stuck))` when nothing arrived for
    /// `stall_limit` cycles while packets were outstanding (a deadlock, or a lost packet).
    pub fn run(&mut self, traffic: &Traffic, stall_limit: u64) -> Result<Result<NetRun, Stuck>, Error> {
        self.run_with(traffic, stall_limit, &mut |_| {})
    }

    /// [`Torus::run`], calling `at_each` before every instant (to pull a cable, hold a node in
    /// reset, … at a chosen cycle).
    pub fn run_with(&mut self, traffic: &Traffic, stall_limit: u64, at_each: &mut dyn FnMut(&mut Self)) -> Result<Result<NetRun, Stuck>, Error> {
        let config = self.config.clone();
        let nodes = config.nodes();
        let ports = config.local_ports;
        let mut rng = Rng::new(traffic.seed);
        let mut ready_rng = Rng::new(traffic.seed ^ 0x5EED);
        let mut sources: Vec<Source> = (0..nodes * ports).map(|_| Source { queue: VecDeque::new(), beat: 0, offered: false }).collect();
        let mut sinks: Vec<Sink> = (0..nodes * ports).map(|_| Sink::default()).collect();
        let mut flows: HashMap<((usize, usize), (usize, usize)), VecDeque<Packet>> = HashMap::new();
        let mut head_in: HashMap<u64, u64> = HashMap::new();
        let mut next_id = 0u64;
        let mut run = NetRun::default();
        let start = self.cycle;
        let make = |rng: &mut Rng, src: (usize, usize), created: u64, next_id: &mut u64| {
            let port = if traffic.pattern == Pattern::NextPort { (src.1 + 1) % ports } else { rng.below(ports as u64) as usize };
            let dst = (traffic.pattern.destination(&config, src.0, rng), port);
            let len = traffic.min_bytes + rng.below((traffic.max_bytes - traffic.min_bytes + 1) as u64) as usize;
            let payload = (0..len).map(|_| rng.next_u64() as u8).collect();
            *next_id += 1;
            Packet { id: *next_id, src, dst, tag: rng.next_u64() as u16, payload, created }
        };
        let enqueue = |p: Packet, sources: &mut Vec<Source>, flows: &mut HashMap<_, VecDeque<Packet>>, created: &mut Vec<u64>| {
            created.push(p.created);
            flows.entry((p.src, p.dst)).or_default().push_back(p.clone());
            sources[p.src.0 * ports + p.src.1].queue.push_back(p);
        };
        if let Injection::Queued(packets) = traffic.injection {
            for _ in 0..packets {
                let src = (rng.below(nodes as u64) as usize, rng.below(ports as u64) as usize);
                let p = make(&mut rng, src, self.cycle, &mut next_id);
                enqueue(p, &mut sources, &mut flows, &mut run.created);
            }
            run.sent = packets;
        }
        if let Injection::One { src, dst, bytes } = traffic.injection {
            let p = Packet { id: 1, src, dst, tag: 0x1234, payload: (0..bytes).map(|b| b as u8).collect(), created: self.cycle };
            enqueue(p, &mut sources, &mut flows, &mut run.created);
            run.sent = 1;
        }
        if let Injection::Stream { src, dst, bytes, count, both_ways } = traffic.injection {
            let directions = if both_ways { vec![(src, dst), (dst, src)] } else { vec![(src, dst)] };
            for i in 0..count {
                for &(s, d) in &directions {
                    next_id += 1;
                    let payload = (0..bytes).map(|b| (b + i) as u8).collect();
                    let p = Packet { id: next_id, src: s, dst: d, tag: i as u16, payload, created: self.cycle };
                    enqueue(p, &mut sources, &mut flows, &mut run.created);
                    run.sent += 1;
                }
            }
        }
        let spread = match traffic.injection {
            Injection::Gather { root, bytes, packet } => (0..nodes).filter(|&n| n != root).map(|n| ((n, 0), (root, n % ports), bytes, packet)).collect(),
            Injection::Broadcast { root, bytes, packet } => (0..nodes).filter(|&n| n != root).map(|n| ((root, n % ports), (n, 0), bytes, packet)).collect(),
            Injection::Ring { bytes, packet } => {
                let ring: Vec<usize> = weft_ip::system::allreduce::chain(config.dims).into_iter().map(|c| config.node(c)).collect();
                (0..nodes).map(|i| ((ring[i], 0), (ring[(i + 1) % nodes], 0), bytes, packet)).collect()
            }
            _ => vec![],
        };
        for (src, dst, bytes, packet) in spread {
            for k in 0..bytes.div_ceil(packet) {
                next_id += 1;
                let payload = (0..packet.min(bytes - k * packet)).map(|_| rng.next_u64() as u8).collect();
                let p = Packet { id: next_id, src, dst, tag: k as u16, payload, created: self.cycle };
                enqueue(p, &mut sources, &mut flows, &mut run.created);
                run.sent += 1;
            }
        }
        let fb = config.flit_bytes();
        let mut last_progress = self.cycle;
        loop {
            let outstanding = run.sent - run.deliveries.len() - self.lost.len() - run.lost.len();
            let creating = match traffic.injection {
                Injection::Queued(_) | Injection::One { .. } | Injection::Stream { .. } | Injection::Gather { .. } | Injection::Broadcast { .. } | Injection::Ring { .. } => false,
                Injection::Bernoulli { cycles, .. } => self.cycle - start < cycles,
                Injection::Saturated { cycles } => self.cycle - start < cycles,
            };
            if !creating && outstanding == 0 {
                break;
            }
            if let Injection::Bernoulli { cycles, drain, .. } = traffic.injection {
                if self.cycle - start >= cycles + drain {
                    break;
                }
            }
            if outstanding > 0 && self.cycle - last_progress > stall_limit {
                // Nothing moves: the run is over if every packet left may have been lost to a
                // restart, and stuck otherwise.
                let left: Vec<&Packet> = flows.values().flatten().filter(|p| !self.lost.contains(&p.id)).collect();
                if !left.iter().all(|p| self.may_lose(p.src.0, p.dst.0, head_in.get(&p.id).copied())) {
                    return Ok(Err(Stuck { cycle: self.cycle, delivered: run.deliveries.len(), sent: run.sent }));
                }
                run.lost.extend(left.iter().map(|p| p.id));
                break;
            }
            match traffic.injection {
                Injection::Bernoulli { rate, .. } if creating => {
                    for i in 0..nodes * ports {
                        if ((rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64) < rate / ports as f64 {
                            let p = make(&mut rng, (i / ports, i % ports), self.cycle, &mut next_id);
                            enqueue(p, &mut sources, &mut flows, &mut run.created);
                            run.sent += 1;
                        }
                    }
                }
                Injection::Saturated { .. } if creating => {
                    for i in 0..nodes * ports {
                        if sources[i].queue.is_empty() {
                            let p = make(&mut rng, (i / ports, i % ports), self.cycle, &mut next_id);
                            enqueue(p, &mut sources, &mut flows, &mut run.created);
                            run.sent += 1;
                        }
                    }
                }
                _ => {}
            }
            at_each(self);
            self.follow_restarts();
            // A node in reset: its sources offer nothing and give up a packet cut in the
            // middle, its sinks forget a packet half received.
            let held = self.held_nodes();
            for &n in &held {
                for p in 0..ports {
                    let src = &mut sources[n * ports + p];
                    src.offered = false;
                    if src.beat > 0 {
                        let cut = src.queue.pop_front().unwrap();
                        flows.get_mut(&(cut.src, cut.dst)).unwrap().retain(|f| f.id != cut.id);
                        run.lost.push(cut.id);
                        src.beat = 0;
                    }
                    sinks[n * ports + p].current = None;
                }
            }
            if !self.links.is_empty() {
                self.wire_links();
            }
            // Sources and sinks of the nodes whose clock rises now.
            let active = self.next_instant();
            let mut readies = vec![false; nodes * ports];
            for n in (0..nodes).filter(|&n| active[n]) {
                for k in 0..self.local[n].len() {
                    let (p, dev, h) = self.local[n][k];
                    let i = n * ports + p;
                    let src = &mut sources[i];
                    if !src.offered && !src.queue.is_empty() && !held.contains(&n) && rng.chance(traffic.valid_percent) {
                        src.offered = true;
                    }
                    let (data, last) = match (src.offered, src.queue.front()) {
                        (true, Some(pk)) => {
                            let beats = pk.flits(&config);
                            let chunks: Vec<u128> = if src.beat == 0 {
                                let mut c = vec![pk.header(&config)];
                                c.resize(config.width / 128, 0);
                                c
                            } else {
                                let lo = (src.beat - 1) * fb;
                                let bytes = &pk.payload[lo..(lo + fb).min(pk.payload.len())];
                                (0..config.width / 128).map(|k| bytes.iter().enumerate().skip(16 * k).take(16).fold(0u128, |acc, (b, x)| acc | (*x as u128) << (8 * (b - 16 * k)))).collect()
                            };
                            (value(&chunks), src.beat + 1 == beats)
                        }
                        _ => (Value::default(), false),
                    };
                    let d = &mut self.devices[dev];
                    d.set(h.s_tdata, &data);
                    d.set(h.s_tlast, &scalar(last as u64));
                    d.set(h.s_tvalid, &scalar(src.offered as u64));
                    readies[i] = ready_rng.chance(traffic.ready_percent);
                    d.set(h.m_tready, &scalar(readies[i] as u64));
                }
            }
            for d in self.devices.iter_mut() {
                d.settle();
            }
            let mut ejected = 0u32;
            for n in (0..nodes).filter(|&n| active[n]) {
                for k in 0..self.local[n].len() {
                    let (p, dev, h) = self.local[n][k];
                    let i = n * ports + p;
                    let src = &mut sources[i];
                    if src.offered && self.devices[dev].get(h.s_tready)[0] & 1 == 1 {
                        let pk = src.queue.front().unwrap();
                        if src.beat == 0 {
                            head_in.insert(pk.id, self.cycle);
                        }
                        src.beat += 1;
                        src.offered = false;
                        if src.beat == pk.flits(&config) {
                            src.queue.pop_front();
                            src.beat = 0;
                        }
                    }
                    if !(readies[i] && self.devices[dev].get(h.m_tvalid)[0] & 1 == 1) || held.contains(&n) {
                        continue;
                    }
                    ejected += 1;
                    let d = &mut self.devices[dev];
                    let data = d.get(h.m_tdata);
                    let keep = d.get(h.m_tkeep);
                    let last = d.get(h.m_tlast)[0] & 1 == 1;
                    let sink = &mut sinks[i];
                    let where_ = format!("node {n} port {p} at cycle {}", self.cycle);
                    match sink.current.as_mut() {
                        None => {
                            let header = bits(&data, 0, 128);
                            if bits(&keep, 0, fb) != (1 << fb) - 1 && fb < 128 {
                                return Err(Error::Mismatch(format!("{where_}: header beat with tkeep {:#x}", bits(&keep, 0, fb))));
                            }
                            sink.current = Some((header, vec![], self.cycle));
                        }
                        Some((_, payload, _)) => {
                            for b in 0..fb {
                                if bits(&keep, b, 1) == 1 {
                                    payload.push(bits(&data, 8 * b, 8) as u8);
                                } else if !last {
                                    return Err(Error::Mismatch(format!("{where_}: tkeep {:#x} on a beat before the last", bits(&keep, 0, fb))));
                                }
                            }
                        }
                    }
                    if !last {
                        continue;
                    }
                    let (header, payload, head_cycle) = sink.current.take().unwrap();
                    if check(header) != Checked::Clean(header) {
                        return Err(Error::Mismatch(format!("{where_}: header {header:#034x} arrives with bad check bits")));
                    }
                    let h = Header::unpack(header);
                    let src = (config.node(h.src), h.src_port);
                    if config.node(h.dst) != n || h.dst_port != p {
                        let sent = flows
                            .values()
                            .flatten()
                            .find(|f| f.id as u32 == h.user)
                            .map(|f| format!("sent from {:?} to {:?} at cycle {}, head in at {:?}", f.src, f.dst, f.created, head_in.get(&f.id)));
                        return Err(Error::Mismatch(format!(
                            "{where_}: packet {} from {src:?} for node {:?} port {} delivered here ({})",
                            h.user,
                            h.dst,
                            h.dst_port,
                            sent.unwrap_or("not outstanding".into())
                        )));
                    }
                    let flow = flows.get_mut(&(src, (n, p))).ok_or_else(|| Error::Mismatch(format!("{where_}: packet {} from {src:?}: no such flow sent", h.user)))?;
                    while let Some(f) = flow.front().filter(|f| f.id as u32 != h.user) {
                        let restart = self.may_lose(f.src.0, f.dst.0, head_in.get(&f.id).copied()) && flow.iter().any(|g| g.id as u32 == h.user);
                        if !(self.lost.contains(&f.id) || restart) {
                            break;
                        }
                        if restart && !self.lost.contains(&f.id) {
                            run.lost.push(f.id);
                        }
                        flow.pop_front();
                    }
                    let want = flow.pop_front().ok_or_else(|| Error::Mismatch(format!("{where_}: packet {} from {src:?} arrives twice", h.user)))?;
                    if want.id as u32 != h.user {
                        let later = flow.iter().position(|f| f.id as u32 == h.user);
                        let when = |id: u64| format!("head in at {:?}", head_in.get(&id));
                        return Err(Error::Mismatch(format!(
                            "{where_}: flow {src:?} -> ({n}, {p}): packet {} ({}) arrives where {} ({}) was next ({later:?} places later: out of order)",
                            h.user,
                            when(h.user as u64),
                            want.id,
                            when(want.id)
                        )));
                    }
                    if h.length != want.payload.len() || payload != want.payload || h.tag != want.tag || h.kind != 0 {
                        return Err(Error::Mismatch(format!(
                            "{where_}: packet {} corrupted: length {} (sent {}), tag {:#x} (sent {:#x}), payload equal: {}",
                            h.user,
                            h.length,
                            want.payload.len(),
                            h.tag,
                            want.tag,
                            payload == want.payload
                        )));
                    }
                    let hops = distance(&config, config.coords(src.0), config.coords(n));
                    if h.hops != hops {
                        return Err(Error::Mismatch(format!("{where_}: packet {} took {} hops, the minimal distance is {hops}", h.user, h.hops)));
                    }
                    run.deliveries.push(Delivery { id: want.id, created: want.created, head_in: head_in[&want.id], head_out: head_cycle, tail_out: self.cycle, flits: want.flits(&config) });
                    last_progress = self.cycle;
                }
            }
            run.ejected_flits.push(ejected);
            self.clock_instant(&active);
        }
        run.cycles = self.cycle - start;
        Ok(Ok(run))
    }
}
