//! A torus of routers under traffic, checked packet by packet: every packet arrives exactly
//! once, intact, at the right node and port, with `hops` equal to the minimal distance, a valid
//! `ecc`, and in order per flow. One harness drives the built-in simulator (one netlist
//! evaluator per router, links wired here, where header bits can be flipped in flight) and
//! Verilator (the generated torus top), through [`Device`].
//!
//! This file assembles the torus: devices, the links and serial lanes between them, header-bit
//! and `inject_err` error injection. Traffic is in `traffic`, the run loop and its checks in
//! `run`, the AXI4-Lite master in `axil`, per-node clocks in `clocks`, restarts in `faults`.

mod allreduce;
pub mod app_nodes;
mod axil;
mod bits;
mod cables;
mod clocks;
mod exchange;
mod faults;
mod io_cables;
pub mod mesh_app;
mod ports;
mod run;
mod step;
mod traffic;

use crate::Error;
use std::path::Path;

use weft_ip::router::header::Header;
use weft_ip::router::{router, Direction, RouterConfig};
use weft_ip::system::{node, NodeConfig};
use weft_ip::weft_hdl::netlist::eval::Evaluator;
use weft_ip::weft_hdl::testbench::Rng;

use crate::channel::{Channel, ChannelConfig};
use crate::link::{scalar, Device, NetlistDevice, Value, VerilatorDevice};
use clocks::{ClockDrive, NodeClocks};
use io_cables::IoCable;
use ports::{LinkPorts, LocalPorts};

pub use allreduce::{AllreduceRun, Batch};
pub use exchange::{Exchanged, Message, Received};
pub use faults::{route_nodes, Restart};
pub use run::{Delivery, NetRun, Stuck};
pub use step::Stepped;
pub use traffic::{Injection, Packet, Pattern, Traffic};

pub(crate) use bits::{bits, serial_value, value};

/// A link between two routers: the sender's output stream (and its `tready`, held high: the
/// link is credit-controlled) and the receiver's input stream.
struct Link {
    from: usize,
    to: usize,
    out: LinkPorts,
    out_ready: usize,
    inp: LinkPorts,
    /// Next flit on this link is a head flit (for header error injection).
    expect_head: bool,
}

/// Header bit flips in flight on the links (built-in simulator only).
#[derive(Clone, Debug, Default)]
pub struct HeaderErrors {
    /// Chance, in parts per thousand, that a head flit gets one bit flipped.
    pub single_permille: u64,
    /// Chance, in parts per thousand, that a head flit gets two bits flipped (the packet is then
    /// dropped by the next router, and not expected).
    pub double_permille: u64,
}

/// A serial link between two nodes: the blocks one endpoint sends, through a channel model,
/// into the facing endpoint of the neighbour.
struct Serial {
    from: usize,
    /// The direction it leaves `from` in.
    direction: Direction,
    to: usize,
    /// The cable is pulled: the receiver sees no blocks.
    pulled: bool,
    /// The receiving endpoint's clock domain (`<e>_rx_clk`).
    rx_domain: String,
    tx: usize,
    rx: usize,
    lanes: usize,
    channel: Channel,
}

/// What the devices of a [`Torus`] are.
pub enum Kind {
    /// Routers, joined link to link by wires here (flits and credits).
    Routers,
    /// Nodes (router, link endpoints, register window), their serial lanes joined through
    /// channel models of this latency.
    Nodes {
        /// Serial lanes per link.
        lanes: usize,
        /// Channel latency in cycles (at least 1).
        latency: usize,
    },
    /// One device holding the whole torus (`<cfg>_sim`): IntraNode ports `s_axis_n<n>_p<p>_*`,
    /// links inside, `inject_err` and `link_up`.
    SimTop,
}

/// Random `inject_err` pulses on a simulation top: each existing link flips a payload bit in a
/// cycle with probability `per_million` / 10^6.
struct Injector {
    port: usize,
    links: Vec<usize>,
    per_million: u64,
    rng: Rng,
    pulses: u64,
}

/// The routers or nodes of a torus, one device each, joined here.
pub struct Torus<D: Device> {
    /// The torus: dimensions, IntraNode ports, datapath width, maximum packet.
    pub config: RouterConfig,
    devices: Vec<D>,
    /// Per node: (IntraNode port, device, handles) of each port the device has.
    local: Vec<Vec<(usize, usize, LocalPorts)>>,
    links: Vec<Link>,
    serials: Vec<Serial>,
    ios: Vec<IoCable>,
    /// Header bit flips to inject on the router links (none by default).
    pub errors: HeaderErrors,
    error_rng: Rng,
    /// Ids of packets whose header was double-flipped (dropped in the network).
    pub lost: Vec<u64>,
    /// Head flits given one and two flipped bits so far.
    pub injected: [u64; 2],
    /// Cycles so far (of node 0's clock when the nodes have their own).
    pub cycle: u64,
    injector: Option<Injector>,
    node_clocks: Option<NodeClocks>,
    /// Nodes held in reset, now or before (see [`Torus::hold_in_reset`]).
    pub restarts: Vec<Restart>,
}

impl Torus<NetlistDevice> {
    /// The built-in simulator: one router netlist per node.
    pub fn netlist(config: &RouterConfig) -> Result<Torus<NetlistDevice>, Error> {
        let net = router(config)?;
        let devices = (0..config.nodes()).map(|_| NetlistDevice::new(Evaluator::new(net.clone()))).collect();
        Ok(Torus::new(config.clone(), devices, Kind::Routers))
    }

    /// The built-in simulator: one node netlist per node, serial lanes through channel models.
    pub fn netlist_nodes(config: &NodeConfig, latency: usize) -> Result<Torus<NetlistDevice>, Error> {
        Ok(Torus::netlist_nodes_of(config, &node(config)?, latency))
    }

    /// [`Torus::netlist_nodes`] with every node as `net`: a design with the node's ports (the
    /// node on transceiver models, say).
    pub fn netlist_nodes_of(config: &NodeConfig, net: &weft_ip::weft_hdl::netlist::Netlist, latency: usize) -> Torus<NetlistDevice> {
        let devices = (0..config.router.nodes()).map(|_| NetlistDevice::new(Evaluator::new(net.clone()))).collect();
        Torus::new(config.router.clone(), devices, Kind::Nodes { lanes: config.link.lanes, latency })
    }
}

impl Torus<VerilatorDevice> {
    /// Verilator: the router of `config` generated into `dir` and verilated once, one model
    /// instance per node, links wired here as in the built-in simulator.
    pub fn verilated(config: &RouterConfig, dir: &Path) -> Result<Torus<VerilatorDevice>, Error> {
        let (name, text) = weft_ip::router::spec::router_verilog_for(config)?;
        std::fs::create_dir_all(dir)?;
        // Configurations share a module name: the file is named by its content too, and written
        // whole under a temporary name first, so tests running side by side never read a
        // half-written or foreign file.
        let hash = text.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ b as u64).wrapping_mul(0x0100_0000_01b3));
        let file = dir.join(format!("{name}-{hash:016x}.v"));
        static WRITES: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = WRITES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let partial = dir.join(format!("{name}-{hash:016x}.v.{}-{n}", std::process::id()));
        std::fs::write(&partial, text)?;
        std::fs::rename(&partial, &file)?;
        let devices = (0..config.nodes()).map(|_| VerilatorDevice::new(&file, &name)).collect::<Result<Vec<_>, _>>()?;
        Ok(Torus::new(config.clone(), devices, Kind::Routers))
    }
}

impl Torus<VerilatorDevice> {
    /// Verilator on a generated node file: one model instance per node, serial lanes through
    /// channel models of this latency.
    pub fn verilated_nodes(config: &NodeConfig, file: &Path, top: &str, latency: usize) -> Result<Torus<VerilatorDevice>, Error> {
        let devices = (0..config.router.nodes()).map(|_| VerilatorDevice::new(file, top)).collect::<Result<Vec<_>, _>>()?;
        Ok(Torus::new(config.router.clone(), devices, Kind::Nodes { lanes: config.link.lanes, latency }))
    }
}

impl Torus<VerilatorDevice> {
    /// Verilator on a whole-torus simulation top (`<cfg>_sim` and the node module in `file`):
    /// one model, links and channel models inside it.
    pub fn verilated_sim(config: &RouterConfig, file: &Path, top: &str) -> Result<Torus<VerilatorDevice>, Error> {
        let device = VerilatorDevice::new(file, top)?;
        Ok(Torus::new(config.clone(), vec![device], Kind::SimTop))
    }

    /// `inject_err` pulses so far.
    pub fn injected_pulses(&self) -> u64 {
        self.injector.as_ref().map_or(0, |i| i.pulses)
    }
}

impl<D: Device> Torus<D> {
    fn new(config: RouterConfig, mut devices: Vec<D>, kind: Kind) -> Torus<D> {
        let nodes = config.nodes();
        let sim_top = matches!(kind, Kind::SimTop);
        let mut local = vec![];
        for n in 0..nodes {
            let dev = if sim_top { 0 } else { n };
            let prefix = |s: &str, p: usize| if sim_top { format!("{s}_n{n}_p{p}") } else { format!("{s}_p{p}") };
            // A port inside the node (a wired kernel's, the allreduce engine's) has no handles.
            let present: Vec<usize> = (0..config.local_ports).filter(|p| devices[dev].has_port(&format!("{}_tdata", prefix("s_axis", *p)))).collect();
            let ports = present
                .into_iter()
                .map(|p| {
                    let (s, m) = (prefix("s_axis", p), prefix("m_axis", p));
                    (p, dev, LocalPorts::find(&mut devices[dev], &s, &m))
                })
                .collect();
            local.push(ports);
        }
        let mut links = vec![];
        let mut serials = vec![];
        let mut ios = vec![];
        if let Kind::Nodes { lanes, latency } = kind {
            for n in 0..nodes {
                for e in Direction::ALL.into_iter().filter(|d| config.dims[d.dim] >= 2) {
                    let to = config.neighbour(n, e);
                    let facing = e.opposite();
                    if let Some(cables) = IoCable::between(&mut devices, &config, n, e, latency) {
                        ios.extend(cables);
                        continue;
                    }
                    let tx = devices[n].port(&format!("{}_tx_serial", e.name()));
                    let rx = devices[to].port(&format!("{}_rx_serial", facing.name()));
                    let seed = 1000 + (6 * n + e.index()) as u64;
                    let channel = Channel::new(ChannelConfig { seed, ..ChannelConfig::clean(lanes, latency) });
                    serials.push(Serial { from: n, direction: e, to, pulled: false, rx_domain: format!("{}_rx_clk", facing.name()), tx, rx, lanes, channel });
                }
            }
        } else if let Kind::Routers = kind {
            for n in 0..nodes {
                // The coordinates a register window would hold.
                for (axis, c) in ["local_x", "local_y", "local_z"].iter().zip(config.coords(n)) {
                    let p = devices[n].port(axis);
                    devices[n].set(p, &scalar(c as u64));
                }
                for d in config.directions() {
                    let to = config.neighbour(n, d);
                    let dn = d.name();
                    let m = format!("m_axis_{dn}");
                    let s = format!("s_axis_{dn}");
                    let out = LinkPorts::find(&mut devices[n], &m);
                    let out_ready = devices[n].port(&format!("{m}_tready"));
                    let inp = LinkPorts::find(&mut devices[to], &s);
                    links.push(Link { from: n, to, out, out_ready, inp, expect_head: true });
                }
            }
        }
        Torus {
            config,
            devices,
            local,
            links,
            serials,
            ios,
            errors: HeaderErrors::default(),
            error_rng: Rng::new(99),
            lost: vec![],
            injected: [0; 2],
            cycle: 0,
            injector: None,
            node_clocks: None,
            restarts: vec![],
        }
    }

    /// A router's counter (`packets`, `xp_flits`, … as in the router's `stat_<name>` ports).
    pub fn counter(&mut self, node: usize, name: &str) -> u64 {
        self.output(node, &format!("stat_{name}"))
    }

    /// Output `port` of node `node`'s model, settled (low 64 bits).
    pub fn output(&mut self, node: usize, port: &str) -> u64 {
        let p = self.devices[node].port(port);
        self.devices[node].settle();
        self.devices[node].get(p)[0]
    }

    /// The sum of a counter over all nodes and the ports that have it (`*` stands for the port).
    pub fn counter_sum(&mut self, pattern: &str) -> u64 {
        let mut ports: Vec<String> = (0..self.config.local_ports).map(|p| format!("p{p}")).collect();
        ports.extend(self.config.directions().iter().map(|d| d.name()));
        let mut sum = 0;
        for n in 0..self.config.nodes() {
            for p in &ports {
                let name = pattern.replace('*', p);
                let (dev, port) = (n, format!("stat_{name}"));
                if self.devices[dev].has_port(&port) {
                    sum += self.counter(n, &name);
                }
            }
        }
        sum
    }

    /// Whether every link is up (every device's `link_up`).
    pub fn link_up(&mut self) -> bool {
        (0..self.devices.len()).all(|n| {
            let p = self.devices[n].port("link_up");
            self.devices[n].settle();
            self.devices[n].get(p)[0] & 1 == 1
        })
    }

    /// Holds every device in reset for three edges of every clock (all nodes together).
    pub fn reset(&mut self) {
        if let Some(NodeClocks { drive: ClockDrive::Ports { clk, rst }, .. }) = self.node_clocks.as_ref() {
            let (clk, rst) = (clk.clone(), rst.clone());
            for &r in &rst {
                self.devices[0].set(r, &scalar(1));
            }
            for _ in 0..3 {
                self.devices[0].edges(&clk);
            }
            for &r in &rst {
                self.devices[0].set(r, &scalar(0));
            }
            return;
        }
        for _ in 0..3 {
            for d in self.devices.iter_mut() {
                d.settle();
                d.clock(true);
            }
        }
    }

    /// Moves the blocks of every serial link whose sender's clock rises (`active`) through its
    /// channel model (the devices settled first); the receivers see them at that clock edge.
    fn wire_serials(&mut self, active: &[bool]) {
        if let Some(inj) = self.injector.as_mut() {
            let mut v = Value::default();
            for &bit in &inj.links {
                if inj.rng.below(1_000_000) < inj.per_million {
                    v[bit / 64] |= 1 << (bit % 64);
                    inj.pulses += 1;
                }
            }
            self.devices[0].set(inj.port, &v);
        }
        for s in self.serials.iter_mut().filter(|s| active[s.from]) {
            let tx = self.devices[s.from].get(s.tx);
            let blocks: Vec<u128> = (0..s.lanes).map(|k| bits(&tx, 66 * k, 66)).collect();
            let mut rx = s.channel.step(&blocks);
            if s.pulled {
                rx.fill(0);
            }
            self.devices[s.to].set(s.rx, &serial_value(&rx));
        }
        for c in &self.ios {
            c.drive(&mut self.devices);
        }
        if !self.serials.is_empty() || !self.ios.is_empty() {
            for d in self.devices.iter_mut() {
                d.settle();
            }
        }
        // IO channels: what moves at this edge (one clock for every node).
        for c in self.ios.iter_mut().filter(|c| active[c.from]) {
            c.step(&mut self.devices);
        }
    }

    /// Bit errors on every serial link (nodes only), at this rate per bit.
    pub fn set_bit_error_rate(&mut self, rate: f64) {
        for s in self.serials.iter_mut() {
            s.channel.config_mut().bit_error_rate = rate;
        }
    }

    /// Bits flipped so far on the serial links.
    pub fn flipped_bits(&self) -> u64 {
        self.serials.iter().map(|s| s.channel.flipped_bits).sum()
    }

    /// One instant without traffic (a cycle of every node, unless each has its own clock):
    /// sources idle, sinks ready; returns the nodes whose clock rose.
    fn idle_cycle(&mut self) -> Vec<bool> {
        let active = self.next_instant();
        for n in 0..self.local.len() {
            for &(_, dev, h) in &self.local[n] {
                self.devices[dev].set(h.s_tvalid, &scalar(0));
                self.devices[dev].set(h.m_tready, &scalar(1));
            }
        }
        if !self.links.is_empty() {
            self.wire_links();
        }
        for d in self.devices.iter_mut() {
            d.settle();
        }
        self.clock_instant(&active);
        active
    }

    /// Idle instants until `node`'s clock has risen once.
    pub(super) fn idle_node_cycle(&mut self, node: usize) {
        while !self.idle_cycle()[node] {}
    }

    /// Runs idle cycles (sources quiet, sinks ready).
    pub fn idle(&mut self, cycles: u64) {
        for _ in 0..cycles {
            self.idle_node_cycle(0);
        }
    }

    /// Nodes: writes each node's coordinates into its register window, then runs until every
    /// link is up; returns the cycles it took.
    pub fn bring_up(&mut self, limit: u64) -> Result<u64, Error> {
        let start = self.cycle;
        // A simulation top writes the coordinates itself, after reset.
        let window = self.devices[0].has_port("s_axil_awaddr");
        for n in (0..self.config.nodes()).filter(|_| window) {
            let c = self.config.coords(n);
            self.axil_write(n, 0x008, (c[0] | c[1] << 8 | c[2] << 16) as u32)?;
        }
        let ups: Vec<usize> = (0..self.devices.len()).map(|n| self.devices[n].port("link_up")).collect();
        while self.cycle - start < limit {
            let all = (0..self.devices.len()).all(|n| {
                self.devices[n].settle();
                self.devices[n].get(ups[n])[0] & 1 == 1
            });
            if all {
                return Ok(self.cycle - start);
            }
            self.idle_cycle();
        }
        Err(Error::Stuck(format!("links not up after {limit} cycles")))
    }

    /// Moves every link's flits and credits from one router to the next (built-in simulator).
    fn wire_links(&mut self) {
        // Outputs are read settled: a wide tdata is assembled from its words by logic.
        for d in self.devices.iter_mut() {
            d.settle();
        }
        for l in self.links.iter_mut() {
            let [mut data, keep, last, user, valid] = l.out.flit.map(|p| self.devices[l.from].get(p));
            let credit = self.devices[l.to].get(l.inp.credit);
            let valid_now = valid[0] & 1 == 1;
            if valid_now && l.expect_head {
                let roll = self.error_rng.below(1000);
                let flips = if roll < self.errors.double_permille {
                    2
                } else if roll < self.errors.double_permille + self.errors.single_permille {
                    1
                } else {
                    0
                };
                if flips > 0 {
                    let a = self.error_rng.below(128) as usize;
                    let b = (a + 1 + self.error_rng.below(127) as usize) % 128;
                    let header = bits(&data, 0, 128);
                    if flips == 2 {
                        self.lost.push(Header::unpack(header).user as u64);
                    }
                    data[a / 64] ^= 1 << (a % 64);
                    if flips == 2 {
                        data[b / 64] ^= 1 << (b % 64);
                    }
                    self.injected[flips - 1] += 1;
                }
            }
            if valid_now {
                l.expect_head = last[0] & 1 == 1;
            }
            let to = &mut self.devices[l.to];
            for (port, value) in l.inp.flit.iter().zip([data, keep, last, user, valid]) {
                to.set(*port, &value);
            }
            let from = &mut self.devices[l.from];
            from.set(l.out.credit, &credit);
            from.set(l.out_ready, &scalar(1));
        }
    }
}
