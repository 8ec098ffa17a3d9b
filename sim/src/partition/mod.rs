//! A torus of generated nodes split over processes (MPI ranks, started with `mpirun -n R weft
//! netsim …`): each process simulates the nodes it owns, and a cable between two processes
//! carries its blocks in batches, once per window of `W` cycles.
//!
//! The lookahead. A block a transmitter sends at its cycle `t` reaches the receiver `L` of the
//! sender's cycles later (`L` = the channel latency). Every cable here is the channel model at
//! the sender with latency `L − W` (the bit errors drawn there, from the cable's own generator),
//! then a delay line of `W` cycles at the receiver: together exactly the `L`-cycle channel of
//! the one-process harness ([`crate::network::Torus`]). A window lasts `W` periods of the
//! fastest clock, so a block leaves the delay line no earlier than the window after the one in
//! which it was sent: processes swap one batch per window and simulate a window between swaps
//! with no loss of accuracy. Every cable takes this form, whether its two ends share a process
//! or not, and traffic is drawn per node ([`traffic`]): the packets, their cycles and the bit
//! errors are the same for any number of processes and any window.
//!
//! Clocks. Each node runs on its own oscillator ([`Oscillators`]: one for all, or each within
//! ±ppm of the nominal frequency at its own phase). Every process follows the clocks of its
//! nodes and of the nodes sending to them, instant by instant: a node's logic moves on its own
//! edges, and each link's receive domain (`<e>_rx_clk`) and the cable into it on the edges of
//! the node sending, as a recovered clock does; the link's elastic buffer crosses into the
//! node's clock.
//!
//! A run, in each node's own cycles: reset, the coordinates written through its register window
//! ([`COORDINATE_CYCLES`]), `bring_up` idle cycles after which every link must be up, then the
//! load's `cycles` of traffic (bit errors on from here) and `drain` cycles; fixed lengths, so no
//! process waits on a global decision. A [`Cut`] pulls a cable for a while: its receiver gets
//! no blocks over it, as from a pulled cable between the one-process harness's nodes.

mod exchange;
mod oscillators;
pub mod traffic;

use std::collections::VecDeque;

use weft_ip::router::{Direction, RouterConfig};
use weft_ip::system::NodeConfig;

use crate::channel::{Channel, ChannelConfig};
use weft_ip::weft_hdl::netlist::eval::Clocks;

use crate::link::{scalar, Device, Value};
use crate::network::{bits, serial_value};
use crate::Error;

pub use exchange::{Alone, Exchange};
pub use oscillators::{Oscillators, NOMINAL};
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
    /// Each node's clock.
    pub clocks: Oscillators,
}

/// Cycles of each node's clock for the write of its coordinates (address, data, response).
pub const COORDINATE_CYCLES: u64 = 16;

/// The cable leaving `node` in `direction` pulled from cycle `from` of the sender's traffic (0 =
/// its first cycle) for `cycles` cycles: during them its receiver gets no blocks over it.
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
        self.clocks.validate(config.nodes(), &self.node.link)?;
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

/// Handles of an owned node's port 0, link status, register-window write and clocks.
struct Ports {
    s: [usize; 4],
    m: [usize; 4],
    link_up: usize,
    axil: [usize; 10],
    clk: usize,
}

struct Owned<D: Device> {
    node: usize,
    device: D,
    ports: Ports,
    source: traffic::Source,
    sink: traffic::Sink,
    /// The coordinate write: address and data still to hand over, response seen.
    write: [bool; 3],
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
    /// (owned index, `<e>_rx_serial`, `<e>_rx_clk`) when the receiver is here, with the delay
    /// line.
    rx: Option<(usize, usize, usize)>,
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
    /// The clocks this process follows (its nodes' and those of the nodes sending to them), in
    /// node order.
    schedule: Clocks,
    /// Each node's place among the followed clocks.
    follows: Vec<Option<usize>>,
    /// Edges so far of each followed clock.
    edges: Vec<u64>,
}

impl<D: Device> Partitioned<D> {
    /// The nodes `setup.owner` gives to `rank`, each a device from `make`; checks the setup.
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
                clk: p("clk"),
            };
            owned.push(Owned { node: n, device, ports, source: traffic::Source::new(n, setup.load.seed), sink: Default::default(), write: [true, true, false] });
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
                let rx = index(to).map(|i| {
                    let end = e.opposite().name();
                    (i, owned[i].device.port(&format!("{end}_rx_serial")), owned[i].device.port(&format!("{end}_rx_clk")))
                });
                let line = std::iter::repeat_n(vec![0; lanes], setup.window).collect();
                cables.push(Cable { from: n, dir: e, to_rank, from_rank, lanes, tx, rx, line, outbox: vec![] });
            }
        }
        let mut followed: Vec<usize> = nodes.clone();
        followed.extend(cables.iter().map(|c| c.from));
        followed.sort_unstable();
        followed.dedup();
        let clocks = &setup.clocks;
        let schedule = Clocks::new(&followed.iter().map(|&n| clocks.periods[n]).collect::<Vec<_>>(), &followed.iter().map(|&n| clocks.phases[n]).collect::<Vec<_>>());
        let mut follows = vec![None; config.nodes()];
        for (f, &n) in followed.iter().enumerate() {
            follows[n] = Some(f);
        }
        let edges = vec![0; followed.len()];
        Ok(Partitioned { setup, rank, owned, cables, schedule, follows, edges })
    }

    /// Edges of every node's clock in a run: the coordinate write, bring-up, traffic and drain.
    fn edges_per_node(&self) -> u64 {
        COORDINATE_CYCLES + self.setup.bring_up + self.setup.load.cycles + self.setup.load.drain
    }

    /// The whole run; `exchange` joins the processes. Errors when a link is not up after
    /// bring-up or a register write is refused or unanswered.
    pub fn run(&mut self, exchange: &mut dyn Exchange) -> Result<Outcome, Error> {
        let mut out = Outcome::default();
        for o in self.owned.iter_mut() {
            for _ in 0..3 {
                o.device.settle();
                o.device.clock(true);
            }
            // Out of reset: from here each domain is clocked alone.
            o.device.clock(false);
        }
        let total = self.edges_per_node();
        let clocks = &self.setup.clocks;
        let last = (0..self.setup.node.router.nodes()).map(|n| clocks.edge(n, total - 1)).max().unwrap_or(0);
        // A window lasts W periods of the fastest clock: no block reaches its receiver's delay
        // line output sooner than W of its sender's periods after it was sent.
        let span = self.setup.window as u64 * clocks.shortest();
        for k in 0..=last / span {
            while self.schedule.peek() < (k + 1) * span {
                let rising: Vec<usize> = self.schedule.advance().into_iter().filter(|&f| self.edges[f] < total).collect();
                if !rising.is_empty() {
                    self.instant(&rising, &mut out)?;
                }
            }
            self.swap(exchange, &mut out)?;
        }
        out.flipped_bits = self.cables.iter().filter_map(|c| c.tx.as_ref()).map(|t| t.2.flipped_bits).sum();
        out.cycles = total;
        Ok(out)
    }

    /// One instant: the nodes `rising` (indices into the followed clocks) have a clock edge.
    /// Each owned one drives its register window and port 0 as its own cycle count says; each
    /// cable whose sender rises moves one block, and its receiver's receive domain (on the
    /// sender's clock, as a recovered clock is) takes one.
    fn instant(&mut self, rising: &[usize], out: &mut Outcome) -> Result<(), Error> {
        let config: &RouterConfig = &self.setup.node.router;
        let (bring_up, load) = (&self.setup.bring_up, &self.setup.load);
        let start = COORDINATE_CYCLES + bring_up;
        let mut up = vec![false; self.edges.len()];
        for &f in rising {
            up[f] = true;
        }
        let follows = &self.follows;
        let rises = |n: usize| follows[n].is_some_and(|f| up[f]);
        let edges = &self.edges;
        let cycle_of = |n: usize| follows[n].map(|f| edges[f]).expect("a followed node");
        let words = config.flit_bytes() / 8;
        for o in self.owned.iter_mut().filter(|o| rises(o.node)) {
            let cycle = cycle_of(o.node);
            if (start..start + load.cycles).contains(&cycle) {
                o.source.create(config, load, cycle, &mut out.sent);
            }
            let offer = o.source.offer(config);
            let mut data = Value::default();
            if let Some((words, _)) = &offer {
                data[..words.len()].copy_from_slice(words);
            }
            let (d, a, w) = (&mut o.device, o.ports.axil, o.write);
            d.set(o.ports.s[0], &data);
            d.set(o.ports.s[1], &scalar(offer.as_ref().is_some_and(|o| o.1) as u64));
            d.set(o.ports.s[2], &scalar(offer.is_some() as u64));
            d.set(o.ports.m[3], &scalar(1));
            // The node's coordinates into its register window (0x008).
            let c = config.coords(o.node);
            for (port, v) in [(a[0], 0x008), (a[1], w[0] as u64), (a[2], (c[0] | c[1] << 8 | c[2] << 16) as u64), (a[3], 0xF), (a[4], w[1] as u64), (a[5], (!w[2] && cycle < COORDINATE_CYCLES) as u64)]
            {
                d.set(port, &scalar(v));
            }
            d.settle();
            if !o.write[2] && d.get(a[6])[0] & 1 == 1 {
                if d.get(a[7])[0] != 0 {
                    return Err(Error::Mismatch(format!("node {}: the coordinate write was answered {}", o.node, d.get(a[7])[0])));
                }
                o.write[2] = true;
            }
            o.write[0] &= d.get(a[8])[0] & 1 == 0;
            o.write[1] &= d.get(a[9])[0] & 1 == 0;
            if cycle + 1 == COORDINATE_CYCLES && !o.write[2] {
                return Err(Error::Stuck(format!("node {}: the coordinate write got no response in {COORDINATE_CYCLES} cycles", o.node)));
            }
            if cycle == start && d.get(o.ports.link_up)[0] & 1 == 0 {
                return Err(Error::Stuck(format!("node {}: links not up {bring_up} cycles after the coordinates were written", o.node)));
            }
            if d.get(o.ports.s[2])[0] & 1 == 1 && d.get(o.ports.s[3])[0] & 1 == 1 {
                o.source.taken(config);
            }
            if d.get(o.ports.m[2])[0] & 1 == 1 {
                let data = d.get(o.ports.m[0]);
                let last = d.get(o.ports.m[1])[0] & 1 == 1;
                if let Some(p) = o.sink.beat(config, o.node, &data[..words], last, cycle) {
                    out.delivered.push(p);
                }
            }
        }
        // Per owned node, the clocks that rise on it.
        let mut clocks: Vec<Vec<usize>> = self.owned.iter().map(|o| if rises(o.node) { vec![o.ports.clk] } else { vec![] }).collect();
        let cuts = &self.setup.cuts;
        for c in self.cables.iter_mut().filter(|c| rises(c.from)) {
            let cycle = cycle_of(c.from);
            if let Some((i, port, channel)) = c.tx.as_mut() {
                // Bit errors from the first cycle of traffic, as the one-process harness's runs.
                if cycle == start {
                    channel.config_mut().bit_error_rate = self.setup.bit_error_rate;
                }
                let tx = self.owned[*i].device.get(*port);
                let blocks: Vec<u128> = (0..c.lanes).map(|k| bits(&tx, 66 * k, 66)).collect();
                let y = channel.step(&blocks);
                if c.rx.is_some() {
                    c.line.push_back(y);
                } else {
                    c.outbox.extend(y);
                }
            }
            if let Some((i, port, clk)) = c.rx {
                let mut blocks = c.line.pop_front().ok_or_else(|| Error::Stuck("a cable's delay line ran dry".into()))?;
                // Pulled at the receiving end, so that the split of the cable into channel
                // model and delay line (the window) does not move the cut.
                let pulled = |cut: &Cut| cut.node == c.from && cut.direction == c.dir && cycle.checked_sub(start).is_some_and(|t| (cut.from..cut.from + cut.cycles).contains(&t));
                if cuts.iter().any(pulled) {
                    blocks.fill(0);
                }
                self.owned[i].device.set(port, &serial_value(&blocks));
                clocks[i].push(clk);
            }
        }
        for (o, clocks) in self.owned.iter_mut().zip(&clocks).filter(|(_, c)| !c.is_empty()) {
            o.device.edges(clocks);
        }
        for &f in rising {
            self.edges[f] += 1;
        }
        Ok(())
    }

    /// Sends every remote-bound cable's blocks since the last swap (their count first) and fills
    /// the delay lines of the cables whose sender is elsewhere.
    fn swap(&mut self, exchange: &mut dyn Exchange, out: &mut Outcome) -> Result<(), Error> {
        let mut batches: Vec<(usize, Vec<u64>)> = vec![];
        for c in self.cables.iter_mut().filter(|c| c.tx.is_some() && c.rx.is_none()) {
            let mut words = vec![(c.outbox.len() / c.lanes) as u64];
            words.extend(c.outbox.drain(..).flat_map(|b| [b as u64, (b >> 64) as u64]));
            match batches.iter_mut().find(|b| b.0 == c.to_rank) {
                Some(b) => b.1.extend(words),
                None => batches.push((c.to_rank, words)),
            }
        }
        if batches.is_empty() {
            return Ok(());
        }
        let start = std::time::Instant::now();
        let received = exchange.swap(&batches);
        out.swap_seconds += start.elapsed().as_secs_f64();
        out.swaps += 1;
        for (from, words) in received {
            let short = || Error::Mismatch(format!("rank {}: rank {from} sent {} words, fewer than its cables need", self.rank, words.len()));
            let mut at = 0;
            for c in self.cables.iter_mut().filter(|c| c.tx.is_none() && c.rx.is_some() && c.from_rank == from) {
                let count = *words.get(at).ok_or_else(short)? as usize;
                let want = 2 * count * c.lanes;
                let chunk = words.get(at + 1..at + 1 + want).ok_or_else(short)?;
                for cycle in chunk.chunks(2 * c.lanes) {
                    c.line.push_back(cycle.chunks(2).map(|w| w[0] as u128 | (w[1] as u128) << 64).collect());
                }
                at += 1 + want;
            }
        }
        Ok(())
    }
}
