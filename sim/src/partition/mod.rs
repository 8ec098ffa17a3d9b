//! A torus of generated nodes split over processes (MPI ranks, started with `mpirun -n R weft
//! netsim …`): each process simulates the nodes it owns, and a cable between two processes
//! carries its blocks in batches, once per window of `W` cycles.
//!
//! The lookahead. A block a transmitter sends at cycle `t` reaches the receiver `L` cycles later
//! (`L` = the channel latency). Every cable here is the channel model at the sender with latency
//! `L − W` (the bit errors drawn there, from the cable's own generator), then a delay line of `W`
//! cycles at the receiver: together exactly the `L`-cycle channel of the one-process harness
//! ([`crate::network::Torus`]). A receiver in window `k` only reads what its senders produced in
//! window `k − 1` or before, so processes swap one batch per window and simulate `W` cycles
//! between swaps with no loss of accuracy. Every cable takes this form, whether its two ends
//! share a process or not, and traffic is drawn per node ([`traffic`]): the packets, their cycles
//! and the bit errors are the same for any number of processes.
//!
//! A run: reset, the coordinates written through each node's register window, `bring_up` idle
//! cycles after which every link must be up, then the load's `cycles` of traffic (bit errors on
//! from here) and `drain` cycles; fixed lengths, so no process waits on a global decision. A
//! [`Cut`] pulls a cable for a while: its channel model, at the sender, delivers no blocks, as a
//! pulled cable between the one-process harness's nodes does.

mod exchange;
pub mod traffic;

use std::collections::VecDeque;

use weft_ip::router::{Direction, RouterConfig};
use weft_ip::system::NodeConfig;

use crate::channel::{Channel, ChannelConfig};
use crate::link::{scalar, Device, Value};
use crate::network::{bits, serial_value};
use crate::Error;

pub use exchange::{Alone, Exchange};
pub use traffic::{Delivered, Load, Sent};

/// The run: the torus, its cables, the window, the load and who owns which node.
#[derive(Clone, Debug)]
pub struct Setup {
    /// The nodes: torus, width, lanes.
    pub node: NodeConfig,
    /// Channel latency `L` in cycles (at least 2).
    pub latency: usize,
    /// Cycles between swaps, `W`: 1 ..= `L` − 1.
    pub window: usize,
    /// Bit error rate on every cable, per bit, from the first cycle of traffic.
    pub bit_error_rate: f64,
    /// Idle cycles after the coordinates are written; every link must be up after them.
    pub bring_up: u64,
    /// The traffic.
    pub load: Load,
    /// The rank that simulates each node.
    pub owner: Vec<usize>,
    /// Cables pulled for a while during the traffic.
    pub cuts: Vec<Cut>,
}

/// The cable leaving `node` in `direction` pulled from cycle `from` of the traffic (0 = its first
/// cycle) for `cycles` cycles.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cut {
    /// The sending node.
    pub node: usize,
    /// The direction the cable leaves it in.
    pub direction: Direction,
    /// First pulled cycle, counted from the first cycle of traffic.
    pub from: u64,
    /// How long it stays pulled.
    pub cycles: u64,
}

impl Setup {
    /// Checks the window against the latency, the payload range against the node's largest
    /// packet and that every node has an owner; the error names the value and what is allowed.
    pub fn validate(&self) -> Result<(), Error> {
        let config = &self.node.router;
        if self.owner.len() != config.nodes() {
            return Err(Error::Config(format!("partition: {} owners for {} nodes", self.owner.len(), config.nodes())));
        }
        if self.latency < 2 || !(1..self.latency).contains(&self.window) {
            return Err(Error::Config(format!(
                "window = {} cycles with a channel latency of {}: allowed 1 ..= {} (the latency − 1; the latency at least 2)",
                self.window,
                self.latency,
                self.latency.max(2) - 1
            )));
        }
        for (i, c) in self.cuts.iter().enumerate() {
            if c.node >= config.nodes() {
                return Err(Error::Config(format!("cut {i}: node {} is out of range: allowed 0..={}", c.node, config.nodes() - 1)));
            }
            if config.dims[c.direction.dim] < 2 {
                return Err(Error::Config(format!("cut {i}: direction {} has no cable: the torus is {:?}", c.direction.name(), config.dims)));
            }
            if c.cycles == 0 {
                return Err(Error::Config(format!("cut {i}: 0 cycles: allowed 1 and more")));
            }
        }
        let (lo, hi) = self.load.bytes;
        if lo > hi || hi > config.max_packet_bytes {
            return Err(Error::Config(format!("payload bytes {lo} ..= {hi}: allowed MIN ≤ MAX ≤ {} (the node's max_packet_bytes)", config.max_packet_bytes)));
        }
        Ok(())
    }
}

/// What one process saw of its nodes.
#[derive(Clone, Debug, Default)]
pub struct Outcome {
    /// Packets its nodes created.
    pub sent: Vec<Sent>,
    /// Packets that arrived at its nodes, in order of arrival per node.
    pub delivered: Vec<Delivered>,
    /// Bits flipped on the cables its nodes send on.
    pub flipped_bits: u64,
    /// Swaps with other processes.
    pub swaps: u64,
    /// Wall-clock seconds spent in them (the other side's lateness included).
    pub swap_seconds: f64,
    /// Cycles simulated.
    pub cycles: u64,
}

/// Handles of an owned node's port 0, link status and register-window write.
struct Ports {
    s: [usize; 4],
    m: [usize; 4],
    link_up: usize,
    axil: [usize; 10],
}

struct Owned<D: Device> {
    node: usize,
    device: D,
    ports: Ports,
    source: traffic::Source,
    sink: traffic::Sink,
}

/// One direction of a cable: sent by `from` in direction `dir`, received by `to`.
struct Cable {
    from: usize,
    dir: Direction,
    to_rank: usize,
    from_rank: usize,
    lanes: usize,
    /// (owned index, `<e>_tx_serial`) when the sender is here, with its channel model.
    tx: Option<(usize, usize, Channel)>,
    /// (owned index, `<e>_rx_serial`) when the receiver is here, with the delay line.
    rx: Option<(usize, usize)>,
    line: VecDeque<Vec<u128>>,
    /// Blocks for another process, since the last swap.
    outbox: Vec<u128>,
}

/// The nodes of one process and the cables that touch them.
pub struct Partitioned<D: Device> {
    setup: Setup,
    rank: usize,
    owned: Vec<Owned<D>>,
    cables: Vec<Cable>,
    cycle: u64,
    /// The first cycle of traffic, once it has begun.
    traffic_start: Option<u64>,
}

impl<D: Device> Partitioned<D> {
    /// The nodes `setup.owner` gives to `rank`, each a device from `make`; checks the window.
    pub fn new(setup: Setup, rank: usize, mut make: impl FnMut() -> Result<D, Error>) -> Result<Partitioned<D>, Error> {
        setup.validate()?;
        let config = &setup.node.router;
        let mut owned = vec![];
        for n in (0..config.nodes()).filter(|&n| setup.owner[n] == rank) {
            let mut device = make()?;
            let mut p = |name: &str| device.port(name);
            let ports = Ports {
                s: ["tdata", "tlast", "tvalid", "tready"].map(|s| p(&format!("s_axis_p0_{s}"))),
                m: ["tdata", "tlast", "tvalid", "tready"].map(|s| p(&format!("m_axis_p0_{s}"))),
                link_up: p("link_up"),
                axil: ["awaddr", "awvalid", "wdata", "wstrb", "wvalid", "bready", "bvalid", "bresp", "awready", "wready"].map(|s| p(&format!("s_axil_{s}"))),
            };
            owned.push(Owned { node: n, device, ports, source: traffic::Source::new(n, setup.load.seed), sink: Default::default() });
        }
        let nodes: Vec<usize> = owned.iter().map(|o: &Owned<D>| o.node).collect();
        let index = |n: usize| nodes.iter().position(|&o| o == n);
        let lanes = setup.node.link.lanes;
        let mut cables = vec![];
        // Every node's endpoints, in node order: the same cables, and generators, in every process.
        for n in 0..config.nodes() {
            for e in Direction::ALL.into_iter().filter(|d| config.dims[d.dim] >= 2) {
                let to = config.neighbour(n, e);
                let (from_rank, to_rank) = (setup.owner[n], setup.owner[to]);
                if from_rank != rank && to_rank != rank {
                    continue;
                }
                let tx = index(n).map(|i| {
                    let port = owned[i].device.port(&format!("{}_tx_serial", e.name()));
                    let seed = 1000 + (6 * n + e.index()) as u64;
                    let channel = Channel::new(ChannelConfig { seed, ..ChannelConfig::clean(lanes, setup.latency - setup.window) });
                    (i, port, channel)
                });
                let rx = index(to).map(|i| (i, owned[i].device.port(&format!("{}_rx_serial", e.opposite().name()))));
                let line = std::iter::repeat_n(vec![0; lanes], setup.window).collect();
                cables.push(Cable { from: n, dir: e, to_rank, from_rank, lanes, tx, rx, line, outbox: vec![] });
            }
        }
        Ok(Partitioned { setup, rank, owned, cables, cycle: 0, traffic_start: None })
    }

    /// The whole run; `exchange` joins the processes. Errors when a link is not up after
    /// bring-up or a register write is refused.
    pub fn run(&mut self, exchange: &mut dyn Exchange) -> Result<Outcome, Error> {
        let mut out = Outcome::default();
        for o in self.owned.iter_mut() {
            for _ in 0..3 {
                o.device.settle();
                o.device.clock(true);
            }
        }
        self.write_coordinates(exchange, &mut out)?;
        for _ in 0..self.setup.bring_up {
            self.cycle(exchange, &mut out, false)?;
        }
        for o in self.owned.iter_mut() {
            o.device.settle();
            if o.device.get(o.ports.link_up)[0] & 1 == 0 {
                return Err(Error::Stuck(format!("node {}: links not up {} cycles after the coordinates were written", o.node, self.setup.bring_up)));
            }
        }
        // Bit errors from the first cycle of traffic, as the one-process harness's runs.
        for c in self.cables.iter_mut().filter_map(|c| c.tx.as_mut()) {
            c.2.config_mut().bit_error_rate = self.setup.bit_error_rate;
        }
        self.traffic_start = Some(self.cycle);
        for _ in 0..self.setup.load.cycles {
            self.cycle(exchange, &mut out, true)?;
        }
        for _ in 0..self.setup.load.drain {
            self.cycle(exchange, &mut out, false)?;
        }
        out.flipped_bits = self.cables.iter().filter_map(|c| c.tx.as_ref()).map(|t| t.2.flipped_bits).sum();
        out.cycles = self.cycle;
        Ok(out)
    }

    /// Writes each node's coordinates into its register window (0x008), all nodes at once.
    fn write_coordinates(&mut self, exchange: &mut dyn Exchange, out: &mut Outcome) -> Result<(), Error> {
        let config = self.setup.node.router.clone();
        // Per node: address and data still to hand over, response seen.
        let mut state: Vec<[bool; 3]> = vec![[true, true, false]; self.owned.len()];
        for _ in 0..64 {
            for (o, s) in self.owned.iter_mut().zip(&state) {
                let c = config.coords(o.node);
                let a = &o.ports.axil;
                for (port, v) in [(a[0], 0x008), (a[1], s[0] as u64), (a[2], (c[0] | c[1] << 8 | c[2] << 16) as u64), (a[3], 0xF), (a[4], s[1] as u64), (a[5], !s[2] as u64)] {
                    o.device.set(port, &scalar(v));
                }
                o.device.settle();
            }
            for (o, s) in self.owned.iter_mut().zip(state.iter_mut()) {
                let a = o.ports.axil;
                let d = &mut o.device;
                if !s[2] && d.get(a[6])[0] & 1 == 1 {
                    if d.get(a[7])[0] != 0 {
                        return Err(Error::Mismatch(format!("node {}: the coordinate write was answered {}", o.node, d.get(a[7])[0])));
                    }
                    s[2] = true;
                }
                s[0] &= d.get(a[8])[0] & 1 == 0;
                s[1] &= d.get(a[9])[0] & 1 == 0;
            }
            self.cycle(exchange, out, false)?;
            if state.iter().all(|s| s[2]) {
                for o in self.owned.iter_mut() {
                    o.device.set(o.ports.axil[5], &scalar(0));
                }
                return Ok(());
            }
        }
        Err(Error::Stuck("a coordinate write got no response in 64 cycles".into()))
    }

    /// One cycle of every owned node: traffic at port 0 (new packets when `creating`), the
    /// cables, the clock edge; a swap at the end of each window.
    fn cycle(&mut self, exchange: &mut dyn Exchange, out: &mut Outcome, creating: bool) -> Result<(), Error> {
        let config: &RouterConfig = &self.setup.node.router;
        for o in self.owned.iter_mut() {
            if creating {
                o.source.create(config, &self.setup.load, self.cycle, &mut out.sent);
            }
            let offer = o.source.offer(config);
            let mut data = Value::default();
            if let Some((words, _)) = &offer {
                data[..words.len()].copy_from_slice(words);
            }
            let d = &mut o.device;
            d.set(o.ports.s[0], &data);
            d.set(o.ports.s[1], &scalar(offer.as_ref().is_some_and(|o| o.1) as u64));
            d.set(o.ports.s[2], &scalar(offer.is_some() as u64));
            d.set(o.ports.m[3], &scalar(1));
            d.settle();
        }
        let traffic_cycle = self.traffic_start.map(|t| self.cycle - t);
        let cuts = &self.setup.cuts;
        for c in self.cables.iter_mut() {
            if let Some((i, port, channel)) = c.tx.as_mut() {
                let tx = self.owned[*i].device.get(*port);
                let blocks: Vec<u128> = (0..c.lanes).map(|k| bits(&tx, 66 * k, 66)).collect();
                let mut y = channel.step(&blocks);
                let pulled = |cut: &Cut| cut.node == c.from && cut.direction == c.dir && traffic_cycle.is_some_and(|t| (cut.from..cut.from + cut.cycles).contains(&t));
                if cuts.iter().any(pulled) {
                    y.fill(0);
                }
                if c.rx.is_some() {
                    c.line.push_back(y);
                } else {
                    c.outbox.extend(y);
                }
            }
        }
        for c in self.cables.iter_mut() {
            if let Some((i, port)) = c.rx {
                let blocks = c.line.pop_front().ok_or_else(|| Error::Stuck("a cable's delay line ran dry".into()))?;
                self.owned[i].device.set(port, &serial_value(&blocks));
            }
        }
        let words = config.flit_bytes() / 8;
        for o in self.owned.iter_mut() {
            let d = &mut o.device;
            d.settle();
            if d.get(o.ports.s[2])[0] & 1 == 1 && d.get(o.ports.s[3])[0] & 1 == 1 {
                o.source.taken(config);
            }
            if d.get(o.ports.m[2])[0] & 1 == 1 {
                let data = d.get(o.ports.m[0]);
                let last = d.get(o.ports.m[1])[0] & 1 == 1;
                if let Some(p) = o.sink.beat(config, o.node, &data[..words], last, self.cycle) {
                    out.delivered.push(p);
                }
            }
            d.clock(false);
        }
        self.cycle += 1;
        if self.cycle.is_multiple_of(self.setup.window as u64) {
            self.swap(exchange, out)?;
        }
        Ok(())
    }

    /// Sends every remote-bound cable's window of blocks and fills the delay lines of the
    /// cables whose sender is elsewhere.
    fn swap(&mut self, exchange: &mut dyn Exchange, out: &mut Outcome) -> Result<(), Error> {
        let mut batches: Vec<(usize, Vec<u64>)> = vec![];
        for c in self.cables.iter_mut().filter(|c| c.tx.is_some() && c.rx.is_none()) {
            let words = c.outbox.drain(..).flat_map(|b| [b as u64, (b >> 64) as u64]);
            match batches.iter_mut().find(|b| b.0 == c.to_rank) {
                Some(b) => b.1.extend(words),
                None => batches.push((c.to_rank, words.collect())),
            }
        }
        if batches.is_empty() {
            return Ok(());
        }
        let start = std::time::Instant::now();
        let received = exchange.swap(&batches);
        out.swap_seconds += start.elapsed().as_secs_f64();
        out.swaps += 1;
        let per = 2 * self.setup.window;
        for (from, words) in received {
            let mut at = 0;
            for c in self.cables.iter_mut().filter(|c| c.tx.is_none() && c.rx.is_some() && c.from_rank == from) {
                let want = per * c.lanes;
                let chunk = words.get(at..at + want).ok_or_else(|| Error::Mismatch(format!("rank {}: rank {from} sent {} words, fewer than its cables need", self.rank, words.len())))?;
                for cycle in chunk.chunks(2 * c.lanes) {
                    c.line.push_back(cycle.chunks(2).map(|w| w[0] as u128 | (w[1] as u128) << 64).collect());
                }
                at += want;
            }
        }
        Ok(())
    }
}
