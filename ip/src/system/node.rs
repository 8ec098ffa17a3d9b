//! One node of the fabric: the router, one reliable link endpoint per torus link, the merge of
//! each endpoint's two virtual-channel streams into the router, and the AXI4-Lite register
//! window, composed into one netlist.
//!
//! Links are bidirectional: the endpoint `xp` faces the + neighbour in X (it carries the router's
//! `xp` output, and what it receives is travelling −, into the router's `xn` input); `xn` faces
//! the − neighbour. A dimension of size 2 still has both endpoints (two cables to the one
//! neighbour); its − router ports do not exist, so those directions carry only link protocol.
//!
//! Self-test (any width): the register window's self-test registers drive a packet generator
//! and a checker ([`crate::selftest`]); with control bit 0 set they own IntraNode port 0 (the
//! user's port 0 then neither offers nor accepts), bit 1 rising starts the generator, bit 2
//! clears the checker.
//!
//! Ports: `clk`, `rst`; `s_axil_*` (register window, map in docs/contract.md and [`counter_names`]);
//! IntraNode ports `s_axis_p<p>_*` / `m_axis_p<p>_*` as the router's; per endpoint
//! `<e>_rx_serial` / `<e>_tx_serial` (66 bits per lane, lane k at bits `66k+65:66k`) and
//! `<e>_channel_up`; `link_up` = every channel up. Over IO channels (`LinkConfig::io_channels`)
//! each endpoint is an [`crate::link::io_link`] instead, with ports `m_axis_<e>_ch<k>_*` (to the
//! board's channel k toward that neighbour) and `s_axis_<e>_ch<k>_*` (from it) in place of the
//! serial lanes. With receive clocks (`LinkConfig::rx_clock`,
//! on in the shipped nodes), `<e>_rx_serial` is synchronous to `<e>_rx_clk` (reset
//! `<e>_rx_rst`), the clock recovered from the neighbour's transmitter; every other port to `clk`.

use crate::Error;
use std::rc::Rc;

use weft_hdl::netlist::{Axis, AxisShape, Design, Inst, Netlist, Sig, Sink, Source};

use super::allreduce;
use super::io_links::io_link_to;
use super::kernel_port::{kernel_port, KernelPort};
use crate::axil::node_window;
use crate::axis::gearbox::from_words;
use crate::link::io_link::io_link;
use crate::link::{endpoint, LinkConfig};
use crate::regmap::{allreduce_registers, node_map_with_kernels, Register};
use crate::router::{router, Direction, RouterConfig};
use crate::selftest::{checker, generator};

/// The parameters of a node; [`NodeConfig::validate`] checks that its parts fit together.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeConfig {
    /// The router: torus, IntraNode ports, datapath width, buffers.
    pub router: RouterConfig,
    /// Every link endpoint's parameters; `lanes` must be the router's `width` / 64.
    pub link: LinkConfig,
    /// Kernels wired to IntraNode ports (those ports are then inside the node).
    pub kernels: Vec<KernelPort>,
    /// The allreduce engine ([`crate::system::allreduce`]), if the node has one.
    pub allreduce: Option<Allreduce>,
}

/// Where a node's allreduce engine sits and what it reduces.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Allreduce {
    /// IntraNode ports `[a, b]`: port `a`'s stream ports become the engine's host side, port `b`
    /// is inside the node.
    pub ports: [usize; 2],
    /// The element type of every lane (the operator is chosen per operation at run time).
    pub element: allreduce::ElementType,
    /// Ports `[a, b]` of further chain engines (stripe 1, 2, …; at most
    /// [`allreduce::MAX_STRIPES`] − 1), each reducing a slice of a long vector along its own
    /// chain ([`allreduce::stripes`]); port `a` is its host's, port `b` inside the node.
    pub stripes: Vec<[usize; 2]>,
}

impl Allreduce {
    /// The engine on `ports` for elements of `element`, without stripes.
    pub fn new(ports: [usize; 2], element: allreduce::ElementType) -> Allreduce {
        Allreduce { ports, element, stripes: vec![] }
    }

    /// Every engine's ports, the collective unit's first.
    pub fn engines(&self) -> Vec<[usize; 2]> {
        std::iter::once(self.ports).chain(self.stripes.iter().copied()).collect()
    }
}

impl NodeConfig {
    /// Checks the router and link, that the link's word is the router's width, that kernel and
    /// allreduce ports exist and are distinct, and that a maximum-size packet fits one link
    /// frame; the error names the field.
    pub fn validate(&self) -> Result<(), Error> {
        self.router.validate()?;
        self.link.validate()?;
        if 64 * self.link.lanes != self.router.width {
            return Err(Error::Config(format!(
                "node: link `lanes` = {} carries {} bits per word, the router `width` is {}: lanes must be width / 64",
                self.link.lanes,
                64 * self.link.lanes,
                self.router.width
            )));
        }
        if let Some(a) = &self.allreduce {
            if a.stripes.len() >= allreduce::MAX_STRIPES {
                return Err(Error::Config(format!("node: {} allreduce stripes besides the unit: allowed 0..={}", a.stripes.len(), allreduce::MAX_STRIPES - 1)));
            }
            let mut taken = vec![];
            for (k, pair) in a.engines().iter().enumerate() {
                let engine = if k == 0 { "allreduce".to_string() } else { format!("allreduce stripe {k}") };
                for (p, name) in pair.iter().zip(["a", "b"]) {
                    if *p >= self.router.local_ports {
                        return Err(Error::Config(format!("node: {engine} port {name} = {p}: allowed ports 0..={}", self.router.local_ports - 1)));
                    }
                    if self.kernels.iter().any(|k| k.port == *p) {
                        return Err(Error::Config(format!("node: {engine} port {name} = {p} also has a kernel: one user a port")));
                    }
                    if taken.contains(p) {
                        return Err(Error::Config(format!("node: {engine} port {name} = {p} is taken by another engine port: one user a port")));
                    }
                    taken.push(*p);
                }
            }
        }
        for kp in &self.kernels {
            if kp.port >= self.router.local_ports {
                return Err(Error::Config(format!("node: a kernel on IntraNode port {}: allowed ports 0..={}", kp.port, self.router.local_ports - 1)));
            }
            if self.kernels.iter().filter(|k| k.port == kp.port).count() > 1 {
                return Err(Error::Config(format!("node: IntraNode port {} has more than one kernel: one kernel a port", kp.port)));
            }
        }
        // A packet must travel in one frame: a link restart then never leaves half a packet.
        let flits = self.router.max_packet_flits();
        if !self.link.io_channels && flits > self.link.max_frame_words {
            return Err(Error::Config(format!(
                "node: a packet of `max_packet_bytes` = {} is {flits} flits, more than the link's `max_frame_words` = {}: packets must fit one frame",
                self.router.max_packet_bytes, self.link.max_frame_words
            )));
        }
        Ok(())
    }

    /// The link endpoints: one per direction of every dimension of size 2 or more.
    pub fn endpoints(&self) -> Vec<Direction> {
        Direction::ALL.into_iter().filter(|d| self.router.dims[d.dim] >= 2).collect()
    }
}

/// Names of the counters the register window shows from 0x100, in address order.
pub fn counter_names(config: &NodeConfig) -> Vec<String> {
    let mut names = vec![];
    for p in 0..config.router.local_ports {
        names.push(format!("p{p}_packets"));
    }
    for d in config.router.directions() {
        names.push(format!("{}_packets", d.name()));
    }
    for p in 0..config.router.local_ports {
        names.push(format!("p{p}_dropped"));
    }
    for d in config.router.directions() {
        names.push(format!("{}_ecc_corrected", d.name()));
    }
    for e in config.endpoints() {
        for c in link_counters(&config.link) {
            names.push(format!("{}_{c}", e.name()));
        }
    }
    for kp in &config.kernels {
        for c in KERNEL_COUNTERS {
            names.push(format!("p{}_kernel_{c}", kp.port));
        }
    }
    if let Some(a) = &config.allreduce {
        names.extend(allreduce::unit::UNIT_COUNTERS.iter().map(|c| format!("allreduce_{c}")));
        for k in 1..=a.stripes.len() {
            names.extend(allreduce::COUNTERS.iter().map(|c| format!("allreduce_s{k}_{c}")));
        }
    }
    names
}

/// The counters of each wired kernel (outputs of [`kernel_port`]).
const KERNEL_COUNTERS: [&str; 3] = ["packets_in", "packets_out", "dropped"];

/// The counters of each link endpoint in the register window.
fn link_counters(link: &LinkConfig) -> Vec<&'static str> {
    if link.io_channels {
        return crate::link::io_link::COUNTERS.to_vec();
    }
    let mut names = vec!["frames_sent", "frames_retransmitted", "crc_errors", "lock_losses", "retrains", "up_cycles", "partner_restarts", "frames_dropped"];
    if link.rx_clock {
        names.push("slips");
    }
    names
}

/// The node's register map (the window's addresses, for the hardware and for software).
pub fn register_map(config: &NodeConfig) -> Vec<Register> {
    let kernels: Vec<(usize, u32)> = config.kernels.iter().map(|k| (k.port, k.dst)).collect();
    let mut map = node_map_with_kernels(config.router.dims, &counter_names(config), true, &kernels);
    if let Some(a) = &config.allreduce {
        map.extend(allreduce_registers(&allreduce::FLAGS.into_iter().zip(allreduce::FLAG_MEANINGS).collect::<Vec<_>>(), a.element, a.stripes.len()));
        map.sort_by_key(|r| r.addr);
    }
    map
}

/// Builds the node netlist.
pub fn node(config: &NodeConfig) -> Result<Netlist, Error> {
    config.validate()?;
    let rc = &config.router;
    let width = rc.width;
    let counters = counter_names(config);
    let dirs = rc.directions();
    let endpoints = config.endpoints();
    let link_net = Rc::new(endpoint(&config.link)?);
    let d = Design::new();

    d.section("register window");
    let regs = d.instance(&Rc::new(node_window(&register_map(config))?), "regs", "regs");
    for (port, bits) in [("awaddr", 12), ("awvalid", 1), ("wdata", 32), ("wstrb", 4), ("wvalid", 1), ("bready", 1), ("araddr", 12), ("arvalid", 1), ("rready", 1)] {
        regs.input(&format!("s_axil_{port}")).define(d.input(&format!("s_axil_{port}"), bits));
    }
    for port in ["awready", "wready", "bvalid", "bresp", "arready", "rvalid", "rdata", "rresp"] {
        d.output(&format!("s_axil_{port}"), regs.output(&format!("s_axil_{port}")));
    }
    let counter_port = regs.input("counters");
    let counter_in: Vec<Sig> = (0..counter_port.width / 32).map(|_| d.later(32)).collect();
    counter_port.define(from_words(&d, &counter_in));

    d.section("router");
    let router = d.instance(&Rc::new(router(rc)?), "router", "router");
    for axis in ["x", "y", "z"] {
        router.input(&format!("local_{axis}")).define(regs.output(&format!("local_{axis}")));
    }
    let local_in = AxisShape::data(width);
    let local_out = AxisShape::data(width).with_keep();
    let link_out = AxisShape::data(width).with_keep().with_user(1);
    let link_in = link_out.always_ready();
    // The collective unit (engine 0) and the stripes' chain engines, each with its ports.
    let mut engines = vec![];
    if let Some(a) = &config.allreduce {
        let chain_engine = if a.stripes.is_empty() { None } else { Some(Rc::new(allreduce::engine(width, a.element, rc.max_packet_bytes)?)) };
        for (k, pair) in a.engines().into_iter().enumerate() {
            let e = if k == 0 {
                d.section("allreduce engine");
                let e = d.instance(&Rc::new(allreduce::unit::unit(rc, a.element)?), &allreduce::unit::module_name(a.element, width), "allreduce");
                e.input("small_bytes").define(regs.output("allreduce_small_bytes"));
                e
            } else {
                d.section(&format!("allreduce stripe {k}: a chain engine for slice {k} of long vectors"));
                d.instance(chain_engine.as_ref().unwrap(), &allreduce::module_name(a.element, width), &format!("allreduce_s{k}"))
            };
            let prefix = if k == 0 { "allreduce".to_string() } else { format!("allreduce_s{k}") };
            for input in ["flags", "dst_a", "dst_b"] {
                e.input(input).define(regs.output(&format!("{prefix}_{input}")));
            }
            for input in ["op", "timeout"] {
                e.input(input).define(regs.output(&format!("allreduce_{input}")));
            }
            // The host's address: this node's coordinates and the engine's port a.
            let port_a = d.lit(pair[0] as u128, 4);
            e.input("host_dst").define(port_a.cat(regs.output("local_z")).cat(regs.output("local_y")).cat(regs.output("local_x")));
            let names: Vec<&str> = if k == 0 { allreduce::unit::UNIT_COUNTERS.to_vec() } else { allreduce::COUNTERS.to_vec() };
            for c in names {
                let i = counters.iter().position(|x| *x == format!("{prefix}_{c}")).unwrap();
                counter_in[i].define(e.output(c));
            }
            engines.push((e, pair));
        }
    }
    for p in 0..rc.local_ports {
        // The port's user: a wired kernel or an allreduce engine inside the node, or the node's
        // own stream ports.
        let side = engines.iter().enumerate().find_map(|(k, (_, pair))| pair.iter().position(|q| *q == p).map(|s| (k, s)));
        let (user_in, user_out) = match config.kernels.iter().find(|k| k.port == p) {
            _ if side.is_some() => {
                let (k, side) = side.unwrap();
                let (e, s) = (&engines[k].0, ["a", "b"][side]);
                if s == "a" && k > 0 {
                    // A stripe's host streams are the port's own.
                    d.connect(&d.axis_in(&format!("s_axis_p{p}"), local_in), &e.sink("s_axis_host", local_in))?;
                    d.connect(&e.source("m_axis_host", local_out), &d.axis_out(&format!("m_axis_p{p}"), local_out))?;
                } else if s == "a" {
                    // The host's streams reach the unit through the register-issue block.
                    let element = config.allreduce.as_ref().unwrap().element;
                    let issue = d.instance(&Rc::new(allreduce::issue::register_issue(width, element)?), &allreduce::issue::module_name(element, width), "allreduce_issue");
                    issue.input("go").define(regs.output("allreduce_issue_control").bit(0));
                    issue.input("value").define(regs.output("allreduce_issue_value_hi").cat(regs.output("allreduce_issue_value_lo")));
                    issue.input("op_id").define(regs.output("allreduce_issue_id"));
                    regs.input("allreduce_issue").define(issue.output("status").zext(32).cat(issue.output("result")));
                    d.connect(&d.axis_in(&format!("s_axis_p{p}"), local_in), &issue.sink("s_axis_stream", local_in))?;
                    d.connect(&issue.source("m_axis_unit", local_in), &e.sink("s_axis_host", local_in))?;
                    d.connect(&e.source("m_axis_host", local_out), &issue.sink("s_axis_unit", local_out))?;
                    d.connect(&issue.source("m_axis_stream", local_out), &d.axis_out(&format!("m_axis_p{p}"), local_out))?;
                }
                (e.source(&format!("m_axis_{s}"), local_in), e.sink(&format!("s_axis_{s}"), local_out))
            }
            Some(kp) => {
                d.section(&format!("the kernel on IntraNode port {p}"));
                let wrapper = d.instance(&Rc::new(kernel_port(width, rc.max_packet_bytes, kp)?), &format!("kernel_p{p}"), &format!("kernel_p{p}"));
                wrapper.input("dst").define(regs.output(&format!("kernel_p{p}_dst")));
                for c in KERNEL_COUNTERS {
                    let i = counters.iter().position(|x| *x == format!("p{p}_kernel_{c}")).unwrap();
                    counter_in[i].define(wrapper.output(c));
                }
                (wrapper.source("m_axis", local_in), wrapper.sink("s_axis", local_out))
            }
            None => (d.axis_in(&format!("s_axis_p{p}"), local_in), d.axis_out(&format!("m_axis_p{p}"), local_out)),
        };
        let to_router = router.sink(&format!("s_axis_p{p}"), local_in);
        let from_router = router.source(&format!("m_axis_p{p}"), local_out);
        // Every node carries the self-test block; it takes IntraNode port 0 when enabled.
        if p == 0 {
            selftest_on_port0(&d, width, &regs, &user_in, &user_out, &to_router, &from_router);
        } else {
            d.connect(&user_in, &to_router)?;
            d.connect(&from_router, &user_out)?;
        }
    }

    if config.link.io_channels {
        d.section("links over the board's IO channels");
    } else {
        d.section("link endpoints, each with the merge of its two virtual channels");
    }
    let io_net = config.link.io_channels.then(|| io_link(width)).transpose()?.map(Rc::new);
    let mut ups = vec![];
    let word = AxisShape::data(64 * config.link.lanes).with_keep();
    for e in &endpoints {
        let en = e.name();
        if let Some(io_net) = &io_net {
            ups.push(io_link_to(&d, io_net, width, &router, &dirs, *e, &counters, &counter_in)?);
            continue;
        }
        // Its receive side runs on the clock recovered from the neighbour's transmitter.
        let link = d.instance_clocked(&link_net, "link", &format!("link_{en}"), &|clock| if clock == "rx_clk" { format!("{en}_rx_clk") } else { clock.to_string() });
        let serial = link.input("rx_serial");
        serial.define(d.input(&format!("{en}_rx_serial"), serial.width));
        d.output(&format!("{en}_tx_serial"), link.output("tx_serial"));
        let up = link.output("channel_up");
        d.output(&format!("{en}_channel_up"), up);
        ups.push(up);
        link.input("s_axis_nfc_tvalid").define(0u32);
        link.input("s_axis_nfc_tdata").define(0u32);
        // The router's output e leaves here; flits travelling the other way arrive here.
        let to_link = link.sink("s_axis", word.with_user(1));
        if dirs.contains(e) {
            d.connect(&router.source(&format!("m_axis_{en}"), link_out), &to_link)?;
            router.input(&format!("m_axis_{en}_credit")).define(link.output("tx_credit"));
        } else {
            to_link.idle();
        }
        let arriving = e.opposite();
        let vcs = [0, 1].map(|v| link.source(&format!("m_axis_vc{v}"), word));
        let merged = merge(&d, &en, &vcs);
        if dirs.contains(&arriving) {
            let an = arriving.name();
            d.connect(&merged, &router.sink(&format!("s_axis_{an}"), link_in))?;
            link.input("rx_credit_return").define(router.output(&format!("s_axis_{an}_credit")));
        } else {
            link.input("rx_credit_return").define(0u32);
        }
        // Link counters for the register window.
        for name in link_counters(&config.link) {
            let i = counters.iter().position(|x| *x == format!("{en}_{name}")).unwrap();
            counter_in[i].define(link.output(name));
        }
    }
    let link_up = ups.iter().copied().reduce(|a, b| a & b).unwrap_or_else(|| d.lit(1, 1));
    d.output("link_up", link_up);

    d.section("link status (bit per endpoint, bit 31 all up) and router counters");
    let status = endpoints.iter().zip(&ups).fold(link_up.zext(32).shl_const(31), |acc, (e, up)| acc | up.zext(32).shl_const(e.index()));
    regs.input("link_status").define(status);
    for (i, name) in counters.iter().enumerate() {
        if router.has_output(&format!("stat_{name}")) {
            counter_in[i].define(router.output(&format!("stat_{name}")));
        }
    }
    Ok(d.finish())
}

/// Whole packets from the two VC streams of a link into one stream with `tuser` = the VC (the
/// router input behind it always has room: its sender held credits). The VC served comes from
/// registers only, so no path runs from the link's valid through the node back into its pops:
/// the VC whose packet is under way, else `pick`, chosen a cycle earlier from the VCs offering
/// then (the other VC first after a packet, so the two alternate). A VC that starts offering
/// while `pick` names the other, idle one waits one cycle.
fn merge<'d>(d: &'d Design, en: &str, vcs: &[Source<'d>; 2]) -> Source<'d> {
    let busy = d.reg(&format!("merge_{en}_busy"), 1, 0);
    let cur = d.reg(&format!("merge_{en}_vc"), 1, 0);
    let pick = d.reg(&format!("merge_{en}_pick"), 1, 0);
    let (v0, v1) = (vcs[0].0.valid, vcs[1].0.valid);
    let sel = busy.q.mux(cur.q, pick.q).named(&format!("merge_{en}_sel"));
    let valid = sel.mux(v1, v0);
    let last = sel.mux(vcs[1].0.last.unwrap(), vcs[0].0.last.unwrap());
    busy.next(valid.mux(!last, busy.q));
    cur.next(sel);
    pick.next(sel.mux(v0, v1).mux(!sel, valid.mux(sel, pick.q)));
    vcs[0].ready(!sel);
    vcs[1].ready(sel);
    let shape = vcs[0].0.shape.with_user(1).always_ready();
    let data = sel.mux(vcs[1].0.data, vcs[0].0.data);
    Source(Axis { name: format!("merge_{en}"), shape, data, keep: Some(sel.mux(vcs[1].0.keep.unwrap(), vcs[0].0.keep.unwrap())), last: Some(last), user: Some(sel), valid, ready: None })
}

/// Self-test: with control bit 0 set, IntraNode port 0 of the router talks to the packet
/// generator and the checker instead of the user (whose port then neither offers nor accepts);
/// bit 1 rising starts the generator, bit 2 clears the checker.
fn selftest_on_port0<'d>(d: &'d Design, width: usize, regs: &Inst<'d>, user_in: &Source<'d>, user_out: &Sink<'d>, to_router: &Sink<'d>, from_router: &Source<'d>) {
    d.section("self-test on IntraNode port 0");
    let reg = |name: &str| regs.output(&format!("st_{name}"));
    let control = reg("control");
    let enable = control.bit(0).named("selftest_enable");
    let start_level = control.bit(1);
    let was = d.reg("st_start_seen", 1, 0);
    was.next(start_level);
    let checker = d.instance(&Rc::new(checker(width)), "selftest_checker", "selftest_checker");
    let generator = d.instance(&Rc::new(generator(width)), "selftest_generator", "selftest_generator");
    let (r_in, r_out) = (&to_router.0, &from_router.0);
    // Into the router: the generator or the user.
    let gen = |port: &str| generator.output(port);
    r_in.data.define(enable.mux(gen("m_axis_tdata"), user_in.0.data));
    r_in.last.unwrap().define(enable.mux(gen("m_axis_tlast"), user_in.0.last.unwrap()));
    r_in.valid.define(enable.mux(gen("m_axis_tvalid"), user_in.0.valid));
    let router_ready = to_router.ready();
    user_in.ready(router_ready & !enable);
    generator.input("m_axis_tready").define(router_ready & enable);
    // Out of the router: the checker or the user.
    let out = &user_out.0;
    out.data.define(r_out.data);
    out.keep.unwrap().define(r_out.keep.unwrap());
    out.last.unwrap().define(r_out.last.unwrap());
    out.valid.define(r_out.valid & !enable);
    from_router.ready(enable.mux(1u32, user_out.ready()));
    checker.input("s_axis_tdata").define(r_out.data);
    for (port, value) in [
        ("s_axis_tkeep", r_out.keep.unwrap()),
        ("s_axis_tlast", r_out.last.unwrap()),
        ("s_axis_tvalid", r_out.valid & enable),
        ("seed", reg("seed")),
        ("expected", reg("expected")),
        ("clear", control.bit(2)),
    ] {
        checker.input(port).define(value);
    }
    for (port, value) in [
        ("start", start_level & !was.q),
        ("count", reg("count")),
        ("length", reg("length")),
        ("dst", reg("dst")),
        ("tag", reg("tag")),
        ("seed", reg("seed")),
        ("done_in", checker.output("complete")),
        ("window", reg("window")),
        ("received", checker.output("packets")),
    ] {
        generator.input(port).define(value);
    }
    let status = gen("busy").zext(32) | checker.output("complete").zext(32).shl_const(1);
    let values = [gen("sent"), gen("cycles"), status, checker.output("packets"), checker.output("bytes"), checker.output("errors")];
    regs.input("selftest").define(from_words(d, &values));
}
