//! A torus of routers under traffic, checked packet by packet: every packet arrives exactly
//! once, intact, at the right node and port, with `hops` equal to the minimal distance, a valid
//! `ecc`, and in order per flow. One harness drives the built-in simulator (one netlist
//! evaluator per router, links wired here, where header bits can be flipped in flight) and
//! Verilator (the generated torus top), through [`Device`].

use std::collections::{HashMap, VecDeque};
use std::path::Path;

use weft_ip::router::header::{check, Checked, Header};
use weft_ip::router::route::distance;
use weft_ip::router::{router, Direction, RouterConfig};
use weft_ip::system::{node, NodeConfig};
use weft_ip::weft_hdl::netlist::eval::Evaluator;
use weft_ip::weft_hdl::testbench::Rng;

use crate::channel::{Channel, ChannelConfig};
use crate::link::{Device, NetlistDevice, Value, VerilatorDevice};

fn bits(v: &Value, lo: usize, width: usize) -> u128 {
    let mut out = 0u128;
    for i in 0..width {
        let b = lo + i;
        out |= (((v[b / 64] >> (b % 64)) & 1) as u128) << i;
    }
    out
}

fn value(chunks: &[u128]) -> Value {
    let mut v = [0u64; 5];
    for (k, c) in chunks.iter().enumerate() {
        v[2 * k] = *c as u64;
        v[2 * k + 1] = (*c >> 64) as u64;
    }
    v
}

fn scalar(x: u64) -> Value {
    [x, 0, 0, 0, 0]
}

/// Local port handles: s tdata, tlast, tvalid, tready; m tdata, tkeep, tlast, tvalid, tready.
type LocalPorts = [usize; 9];
/// Link handles at the sending router (m data, keep, last, user, valid, credit in, tready) and
/// at the receiving one (s data, keep, last, user, valid, credit out).
struct Link {
    from: usize,
    to: usize,
    out: [usize; 7],
    inp: [usize; 6],
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
    to: usize,
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
    Nodes { lanes: usize, latency: usize },
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
    pub config: RouterConfig,
    devices: Vec<D>,
    local: Vec<Vec<(usize, LocalPorts)>>,
    links: Vec<Link>,
    serials: Vec<Serial>,
    pub errors: HeaderErrors,
    error_rng: Rng,
    /// Ids of packets whose header was double-flipped (dropped in the network).
    pub lost: Vec<u64>,
    pub injected: [u64; 2],
    pub cycle: u64,
    injector: Option<Injector>,
}

impl Torus<NetlistDevice> {
    /// The built-in simulator: one router netlist per node.
    pub fn netlist(config: &RouterConfig) -> Result<Torus<NetlistDevice>, String> {
        let net = router(config)?;
        let devices = (0..config.nodes()).map(|_| NetlistDevice::new(Evaluator::new(net.clone()))).collect();
        Ok(Torus::new(config.clone(), devices, Kind::Routers))
    }

    /// The built-in simulator: one node netlist per node, serial lanes through channel models.
    pub fn netlist_nodes(config: &NodeConfig, latency: usize) -> Result<Torus<NetlistDevice>, String> {
        let net = node(config)?;
        let devices = (0..config.router.nodes()).map(|_| NetlistDevice::new(Evaluator::new(net.clone()))).collect();
        Ok(Torus::new(config.router.clone(), devices, Kind::Nodes { lanes: config.link.lanes, latency }))
    }
}

impl Torus<VerilatorDevice> {
    /// Verilator: the router of `config` generated into `dir` and verilated once, one model
    /// instance per node, links wired here as in the built-in simulator.
    pub fn verilated(config: &RouterConfig, dir: &Path) -> Result<Torus<VerilatorDevice>, String> {
        let (name, text) = crate::catalog::router_verilog_for(config).map_err(|e| e.to_string())?;
        std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
        // Configurations share a module name: the file is named by its content too, and written
        // whole under a temporary name first, so tests running side by side never read a
        // half-written or foreign file.
        let hash = text.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ b as u64).wrapping_mul(0x0100_0000_01b3));
        let file = dir.join(format!("{name}-{hash:016x}.v"));
        static WRITES: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = WRITES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let partial = dir.join(format!("{name}-{hash:016x}.v.{}-{n}", std::process::id()));
        std::fs::write(&partial, text).map_err(|e| e.to_string())?;
        std::fs::rename(&partial, &file).map_err(|e| e.to_string())?;
        let devices = (0..config.nodes()).map(|_| VerilatorDevice::new(&file, &name).map_err(|e| e.to_string())).collect::<Result<Vec<_>, _>>()?;
        Ok(Torus::new(config.clone(), devices, Kind::Routers))
    }
}

impl Torus<VerilatorDevice> {
    /// Verilator on a generated node file: one model instance per node, serial lanes through
    /// channel models of this latency.
    pub fn verilated_nodes(config: &NodeConfig, file: &Path, top: &str, latency: usize) -> Result<Torus<VerilatorDevice>, String> {
        let devices = (0..config.router.nodes()).map(|_| VerilatorDevice::new(file, top).map_err(|e| e.to_string())).collect::<Result<Vec<_>, _>>()?;
        Ok(Torus::new(config.router.clone(), devices, Kind::Nodes { lanes: config.link.lanes, latency }))
    }
}

impl Torus<VerilatorDevice> {
    /// Verilator on a whole-torus simulation top (`<cfg>_sim` and the node module in `file`):
    /// one model, links and channel models inside it.
    pub fn verilated_sim(config: &RouterConfig, file: &Path, top: &str) -> Result<Torus<VerilatorDevice>, String> {
        let device = VerilatorDevice::new(file, top).map_err(|e| e.to_string())?;
        Ok(Torus::new(config.clone(), vec![device], Kind::SimTop))
    }

    /// Pulses `inject_err` of the simulation top on random existing links, each with
    /// probability `per_million` / 10^6 per cycle.
    pub fn inject_errors(&mut self, per_million: u64, seed: u64) {
        let port = self.devices[0].port("inject_err");
        let links = (0..self.config.nodes())
            .flat_map(|n| Direction::ALL.into_iter().filter(|d| self.config.dims[d.dim] >= 2).map(move |d| 6 * n + 2 * d.dim + usize::from(!d.plus)))
            .collect();
        self.injector = Some(Injector { port, links, per_million, rng: Rng::new(seed), pulses: 0 });
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
            let ports = (0..config.local_ports)
                .map(|p| {
                    let (s, m) = (prefix("s_axis", p), prefix("m_axis", p));
                    let names = [
                        format!("{s}_tdata"),
                        format!("{s}_tlast"),
                        format!("{s}_tvalid"),
                        format!("{s}_tready"),
                        format!("{m}_tdata"),
                        format!("{m}_tkeep"),
                        format!("{m}_tlast"),
                        format!("{m}_tvalid"),
                        format!("{m}_tready"),
                    ];
                    (dev, names.map(|x| devices[dev].port(&x)))
                })
                .collect();
            local.push(ports);
        }
        let mut links = vec![];
        let mut serials = vec![];
        if let Kind::Nodes { lanes, latency } = kind {
            for n in 0..nodes {
                for e in Direction::ALL.into_iter().filter(|d| config.dims[d.dim] >= 2) {
                    let to = config.neighbour(n, e);
                    let facing = Direction { dim: e.dim, plus: !e.plus };
                    let tx = devices[n].port(&format!("{}_tx_serial", e.name()));
                    let rx = devices[to].port(&format!("{}_rx_serial", facing.name()));
                    let seed = 1000 + (6 * n + e.index()) as u64;
                    let channel = Channel::new(ChannelConfig { seed, ..ChannelConfig::clean(lanes, latency) });
                    serials.push(Serial { from: n, to, tx, rx, lanes, channel });
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
                    let out = ["tdata", "tkeep", "tlast", "tuser", "tvalid", "credit", "tready"].map(|x| devices[n].port(&format!("{m}_{x}")));
                    let inp = ["tdata", "tkeep", "tlast", "tuser", "tvalid", "credit"].map(|x| devices[to].port(&format!("{s}_{x}")));
                    links.push(Link { from: n, to, out, inp, expect_head: true });
                }
            }
        }
        Torus { config, devices, local, links, serials, errors: HeaderErrors::default(), error_rng: Rng::new(99), lost: vec![], injected: [0; 2], cycle: 0, injector: None }
    }

    /// A router's counter (`packets`, `xp_flits`, … as in the router's `stat_<name>` ports).
    pub fn counter(&mut self, node: usize, name: &str) -> u64 {
        let (dev, port) = (node, format!("stat_{name}"));
        let p = self.devices[dev].port(&port);
        self.devices[dev].settle();
        self.devices[dev].get(p)[0]
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

    pub fn reset(&mut self) {
        for _ in 0..3 {
            for d in self.devices.iter_mut() {
                d.settle();
                d.clock(true);
            }
        }
    }

    /// Moves every serial link's blocks through its channel model (the devices settled first);
    /// the receivers see them at the next clock edge.
    fn wire_serials(&mut self) {
        if let Some(inj) = self.injector.as_mut() {
            let mut v = [0u64; 5];
            for &bit in &inj.links {
                if inj.rng.below(1_000_000) < inj.per_million {
                    v[bit / 64] |= 1 << (bit % 64);
                    inj.pulses += 1;
                }
            }
            self.devices[0].set(inj.port, &v);
        }
        for s in self.serials.iter_mut() {
            let tx = self.devices[s.from].get(s.tx);
            let blocks: Vec<u128> = (0..s.lanes).map(|k| bits(&tx, 66 * k, 66)).collect();
            let rx = s.channel.step(&blocks);
            let mut v = [0u64; 5];
            for (k, b) in rx.iter().enumerate() {
                for i in 0..66 {
                    let bit = 66 * k + i;
                    v[bit / 64] |= ((b >> i & 1) as u64) << (bit % 64);
                }
            }
            self.devices[s.to].set(s.rx, &v);
        }
        if !self.serials.is_empty() {
            for d in self.devices.iter_mut() {
                d.settle();
            }
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

    /// One cycle without traffic: sources idle, sinks ready.
    fn idle_cycle(&mut self) {
        for n in 0..self.local.len() {
            for &(dev, h) in &self.local[n] {
                self.devices[dev].set(h[2], &scalar(0));
                self.devices[dev].set(h[8], &scalar(1));
            }
        }
        if !self.links.is_empty() {
            self.wire_links();
        }
        for d in self.devices.iter_mut() {
            d.settle();
        }
        self.wire_serials();
        for d in self.devices.iter_mut() {
            d.clock(false);
        }
        self.cycle += 1;
    }

    /// Writes a node's register through its AXI4-Lite port (every other node idles meanwhile).
    pub fn axil_write(&mut self, node: usize, addr: u32, data: u32) -> Result<(), String> {
        let names = ["s_axil_awaddr", "s_axil_awvalid", "s_axil_wdata", "s_axil_wstrb", "s_axil_wvalid", "s_axil_bready", "s_axil_bvalid", "s_axil_bresp", "s_axil_awready", "s_axil_wready"];
        let p: Vec<usize> = names.iter().map(|n| self.devices[node].port(n)).collect();
        let d = &mut self.devices[node];
        d.set(p[0], &scalar(addr as u64));
        d.set(p[1], &scalar(1));
        d.set(p[2], &scalar(data as u64));
        d.set(p[3], &scalar(0xF));
        d.set(p[4], &scalar(1));
        d.set(p[5], &scalar(1));
        let (mut aw, mut w) = (false, false);
        for _ in 0..100 {
            let d = &mut self.devices[node];
            d.settle();
            aw |= d.get(p[8])[0] & 1 == 1;
            w |= d.get(p[9])[0] & 1 == 1;
            if d.get(p[6])[0] & 1 == 1 {
                let resp = d.get(p[7])[0];
                self.idle_cycle();
                let d = &mut self.devices[node];
                d.set(p[5], &scalar(0));
                return if resp == 0 { Ok(()) } else { Err(format!("node {node}: write to {addr:#x} answered {resp}")) };
            }
            self.idle_cycle();
            let d = &mut self.devices[node];
            if aw {
                d.set(p[1], &scalar(0));
            }
            if w {
                d.set(p[4], &scalar(0));
            }
        }
        Err(format!("node {node}: AXI4-Lite write to {addr:#x} got no response"))
    }

    /// Reads a node's register through its AXI4-Lite port; returns (data, resp).
    pub fn axil_read(&mut self, node: usize, addr: u32) -> Result<(u32, u32), String> {
        let names = ["s_axil_araddr", "s_axil_arvalid", "s_axil_rready", "s_axil_arready", "s_axil_rvalid", "s_axil_rdata", "s_axil_rresp"];
        let p: Vec<usize> = names.iter().map(|n| self.devices[node].port(n)).collect();
        let d = &mut self.devices[node];
        d.set(p[0], &scalar(addr as u64));
        d.set(p[1], &scalar(1));
        d.set(p[2], &scalar(1));
        for _ in 0..100 {
            let d = &mut self.devices[node];
            d.settle();
            let taken = d.get(p[3])[0] & 1 == 1;
            if d.get(p[4])[0] & 1 == 1 {
                let (data, resp) = (d.get(p[5])[0] as u32, d.get(p[6])[0] as u32);
                self.idle_cycle();
                let d = &mut self.devices[node];
                d.set(p[1], &scalar(0));
                d.set(p[2], &scalar(0));
                return Ok((data, resp));
            }
            self.idle_cycle();
            if taken {
                let d = &mut self.devices[node];
                d.set(p[1], &scalar(0));
            }
        }
        Err(format!("node {node}: AXI4-Lite read of {addr:#x} got no response"))
    }

    /// Runs idle cycles (sources quiet, sinks ready).
    pub fn idle(&mut self, cycles: u64) {
        for _ in 0..cycles {
            self.idle_cycle();
        }
    }

    /// Nodes: writes each node's coordinates into its register window, then runs until every
    /// link is up; returns the cycles it took.
    pub fn bring_up(&mut self, limit: u64) -> Result<u64, String> {
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
        Err(format!("links not up after {limit} cycles"))
    }

    /// Moves every link's flits and credits from one router to the next (built-in simulator).
    fn wire_links(&mut self) {
        for l in self.links.iter_mut() {
            let sent: Vec<Value> = l.out[..5].iter().map(|p| self.devices[l.from].get(*p)).collect();
            let credit = self.devices[l.to].get(l.inp[5]);
            let mut data = sent[0];
            let valid = sent[4][0] & 1 == 1;
            if valid && l.expect_head {
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
            if valid {
                l.expect_head = sent[2][0] & 1 == 1;
            }
            let to = &mut self.devices[l.to];
            to.set(l.inp[0], &data);
            for k in 1..5 {
                to.set(l.inp[k], &sent[k]);
            }
            let from = &mut self.devices[l.from];
            from.set(l.out[5], &credit);
            from.set(l.out[6], &scalar(1));
        }
    }
}

/// A packet of the traffic: `user` carries its id, so a receiver can name it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Packet {
    pub id: u64,
    pub src: (usize, usize),
    pub dst: (usize, usize),
    pub tag: u16,
    pub payload: Vec<u8>,
    /// Cycle it was created (queued at its source).
    pub created: u64,
}

impl Packet {
    /// The header the sender writes (`src_*`, `hops` and `ecc` left to the fabric).
    fn header(&self, config: &RouterConfig) -> u128 {
        let h = Header { dst: config.coords(self.dst.0), dst_port: self.dst.1, length: self.payload.len(), tag: self.tag, user: self.id as u32, ..Default::default() };
        h.pack() & ((1 << 120) - 1)
    }

    pub fn flits(&self, config: &RouterConfig) -> usize {
        config.packet_flits(self.payload.len())
    }
}

/// Where packets go.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pattern {
    /// Any node, any port, uniformly (the source's own node included).
    UniformRandom,
    /// Node index bits rotated by half their count (the matrix transpose of the node index).
    Transpose,
    /// A neighbour, in a random direction the torus has.
    NearestNeighbour,
    /// The same node, the next IntraNode port (a permutation: no two sources share an output).
    NextPort,
}

impl Pattern {
    pub fn name(self) -> &'static str {
        match self {
            Pattern::UniformRandom => "uniform",
            Pattern::Transpose => "transpose",
            Pattern::NearestNeighbour => "neighbour",
            Pattern::NextPort => "next port",
        }
    }

    pub fn destination(self, config: &RouterConfig, src: usize, rng: &mut Rng) -> usize {
        let nodes = config.nodes();
        match self {
            Pattern::UniformRandom => rng.below(nodes as u64) as usize,
            Pattern::Transpose => {
                let b = nodes.trailing_zeros() as usize;
                assert!(nodes.is_power_of_two() && b % 2 == 0, "transpose needs 4^k nodes");
                let h = b / 2;
                ((src >> h) | (src << h)) & (nodes - 1)
            }
            Pattern::NearestNeighbour => {
                let dirs = config.directions();
                config.neighbour(src, dirs[rng.below(dirs.len() as u64) as usize])
            }
            Pattern::NextPort => src,
        }
    }
}

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
    pub id: u64,
    pub created: u64,
    /// Cycle its header left the source, arrived at the sink, and its tail arrived.
    pub head_in: u64,
    pub head_out: u64,
    pub tail_out: u64,
    pub flits: usize,
}

/// How sources get their packets.
#[derive(Clone, Copy, Debug)]
pub enum Injection {
    /// This many packets, queued at random sources before the first cycle.
    Queued(usize),
    /// Each IntraNode port creates a packet with probability `rate / local_ports` per cycle
    /// (so `rate` packets per node per cycle, which may exceed 1) for `cycles` cycles; the run
    /// then ends when every packet has arrived or `drain` more cycles have passed.
    Bernoulli { rate: f64, cycles: u64, drain: u64 },
    /// Every source always has a packet waiting (full offered load) for this many cycles.
    Saturated { cycles: u64 },
    /// One packet of `bytes` from `src` to `dst` (node, port): zero-load latency.
    One { src: (usize, usize), dst: (usize, usize), bytes: usize },
    /// `count` packets of `bytes` queued at `src` for `dst` at the start, and as many from `dst`
    /// to `src` when `both_ways`: a stream for bandwidth.
    Stream { src: (usize, usize), dst: (usize, usize), bytes: usize, count: usize, both_ways: bool },
}

/// Traffic generation for [`Torus::run`].
#[derive(Clone, Debug)]
pub struct Traffic {
    pub pattern: Pattern,
    pub injection: Injection,
    pub min_bytes: usize,
    pub max_bytes: usize,
    /// Percent of cycles a source offers its beat, and a sink takes one.
    pub valid_percent: u64,
    pub ready_percent: u64,
    pub seed: u64,
}

/// What a run saw.
#[derive(Clone, Debug, Default)]
pub struct NetRun {
    pub cycles: u64,
    pub sent: usize,
    pub deliveries: Vec<Delivery>,
    /// Flits that left the network at each cycle of the run (index = cycle − start).
    pub ejected_flits: Vec<u32>,
    /// Creation cycle of every packet sent.
    pub created: Vec<u64>,
}

/// Why a run stopped early.
#[derive(Clone, Debug)]
pub struct Stuck {
    pub cycle: u64,
    pub delivered: usize,
    pub sent: usize,
}

impl<D: Device> Torus<D> {
    /// Runs `traffic` until every packet has arrived; every packet is checked on arrival, and a
    /// wrong one fails the run with `Err`. `Ok(Err(stuck))` when nothing arrived for
    /// `stall_limit` cycles while packets were outstanding (a deadlock, or a lost packet).
    pub fn run(&mut self, traffic: &Traffic, stall_limit: u64) -> Result<Result<NetRun, Stuck>, String> {
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
        let fb = config.flit_bytes();
        let mut last_progress = self.cycle;
        loop {
            let outstanding = run.sent - run.deliveries.len() - self.lost.len();
            let creating = match traffic.injection {
                Injection::Queued(_) | Injection::One { .. } | Injection::Stream { .. } => false,
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
                return Ok(Err(Stuck { cycle: self.cycle, delivered: run.deliveries.len(), sent: run.sent }));
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
            if !self.links.is_empty() {
                self.wire_links();
            }
            // Sources and sinks.
            let mut readies = vec![false; nodes * ports];
            for n in 0..nodes {
                for p in 0..ports {
                    let i = n * ports + p;
                    let (dev, h) = self.local[n][p];
                    let src = &mut sources[i];
                    if !src.offered && !src.queue.is_empty() && rng.chance(traffic.valid_percent) {
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
                                (0..config.width / 128)
                                    .map(|k| bytes.iter().enumerate().skip(16 * k).take(16).fold(0u128, |acc, (b, x)| acc | (*x as u128) << (8 * (b - 16 * k))))
                                    .collect()
                            };
                            (value(&chunks), src.beat + 1 == beats)
                        }
                        _ => ([0; 5], false),
                    };
                    let d = &mut self.devices[dev];
                    d.set(h[0], &data);
                    d.set(h[1], &scalar(last as u64));
                    d.set(h[2], &scalar(src.offered as u64));
                    readies[i] = ready_rng.chance(traffic.ready_percent);
                    d.set(h[8], &scalar(readies[i] as u64));
                }
            }
            for d in self.devices.iter_mut() {
                d.settle();
            }
            let mut ejected = 0u32;
            for n in 0..nodes {
                for p in 0..ports {
                    let i = n * ports + p;
                    let (dev, h) = self.local[n][p];
                    let src = &mut sources[i];
                    if src.offered && self.devices[dev].get(h[3])[0] & 1 == 1 {
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
                    if !(readies[i] && self.devices[dev].get(h[7])[0] & 1 == 1) {
                        continue;
                    }
                    ejected += 1;
                    let d = &mut self.devices[dev];
                    let data = d.get(h[4]);
                    let keep = d.get(h[5]);
                    let last = d.get(h[6])[0] & 1 == 1;
                    let sink = &mut sinks[i];
                    let where_ = format!("node {n} port {p} at cycle {}", self.cycle);
                    match sink.current.as_mut() {
                        None => {
                            let header = bits(&data, 0, 128);
                            if bits(&keep, 0, fb) != (1 << fb) - 1 && fb < 128 {
                                return Err(format!("{where_}: header beat with tkeep {:#x}", bits(&keep, 0, fb)));
                            }
                            sink.current = Some((header, vec![], self.cycle));
                        }
                        Some((_, payload, _)) => {
                            for b in 0..fb {
                                if bits(&keep, b, 1) == 1 {
                                    payload.push(bits(&data, 8 * b, 8) as u8);
                                } else if !last {
                                    return Err(format!("{where_}: tkeep {:#x} on a beat before the last", bits(&keep, 0, fb)));
                                }
                            }
                        }
                    }
                    if !last {
                        continue;
                    }
                    let (header, payload, head_cycle) = sink.current.take().unwrap();
                    if check(header) != Checked::Clean(header) {
                        return Err(format!("{where_}: header {header:#034x} arrives with bad check bits"));
                    }
                    let h = Header::unpack(header);
                    let src = (config.node(h.src), h.src_port);
                    if config.node(h.dst) != n || h.dst_port != p {
                        return Err(format!("{where_}: packet {} from {src:?} for node {:?} port {} delivered here", h.user, h.dst, h.dst_port));
                    }
                    let flow = flows.get_mut(&(src, (n, p))).ok_or_else(|| format!("{where_}: packet {} from {src:?}: no such flow sent", h.user))?;
                    while flow.front().is_some_and(|f| self.lost.contains(&f.id)) {
                        flow.pop_front();
                    }
                    let want = flow.pop_front().ok_or_else(|| format!("{where_}: packet {} from {src:?} arrives twice", h.user))?;
                    if want.id as u32 != h.user {
                        let later = flow.iter().position(|f| f.id as u32 == h.user);
                        return Err(format!("{where_}: flow {src:?} -> ({n}, {p}): packet {} arrives where {} was next ({later:?} places later: out of order)", h.user, want.id));
                    }
                    if h.length != want.payload.len() || payload != want.payload || h.tag != want.tag || h.kind != 0 {
                        return Err(format!("{where_}: packet {} corrupted: length {} (sent {}), tag {:#x} (sent {:#x}), payload equal: {}", h.user, h.length, want.payload.len(), h.tag, want.tag, payload == want.payload));
                    }
                    let hops = distance(&config, config.coords(src.0), config.coords(n));
                    if h.hops != hops {
                        return Err(format!("{where_}: packet {} took {} hops, the minimal distance is {hops}", h.user, h.hops));
                    }
                    run.deliveries.push(Delivery { id: want.id, created: want.created, head_in: head_in[&want.id], head_out: head_cycle, tail_out: self.cycle, flits: want.flits(&config) });
                    last_progress = self.cycle;
                }
            }
            run.ejected_flits.push(ejected);
            self.wire_serials();
            for d in self.devices.iter_mut() {
                d.clock(false);
            }
            self.cycle += 1;
        }
        run.cycles = self.cycle - start;
        Ok(Ok(run))
    }
}

