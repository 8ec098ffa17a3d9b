//! One node of the fabric: the router, one reliable link endpoint per torus link, the merge of
//! each endpoint's two virtual-channel streams into the router, and the AXI4-Lite register
//! window, composed into one netlist.
//!
//! Links are bidirectional: the endpoint `xp` faces the + neighbour in X (it carries the router's
//! `xp` output, and what it receives is travelling −, into the router's `xn` input); `xn` faces
//! the − neighbour. A dimension of size 2 still has both endpoints (two cables to the one
//! neighbour); its − router ports do not exist, so those directions carry only link protocol.
//!
//! Self-test (128-bit nodes): the register window's self-test registers drive a packet generator
//! and a checker ([`crate::selftest`]); with control bit 0 set they own IntraNode port 0 (the
//! user's port 0 then neither offers nor accepts), bit 1 rising starts the generator, bit 2
//! clears the checker.
//!
//! Ports: `clk`, `rst`; `s_axil_*` (register window, map in DESIGN.md and [`counter_names`]);
//! IntraNode ports `s_axis_p<p>_*` / `m_axis_p<p>_*` as the router's; per endpoint
//! `<e>_rx_serial` / `<e>_tx_serial` (66 bits per lane, lane k at bits `66k+65:66k`) and
//! `<e>_channel_up`; `link_up` = every channel up.

use std::collections::HashMap;
use std::rc::Rc;

use weft_hdl::netlist::{Netlist, Wire};

use crate::axil::{node_window, SELFTEST_STATUS_NAMES};
use crate::link::{endpoint, LinkConfig};
use crate::router::{router, Direction, RouterConfig};
use crate::selftest::{checker, generator};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeConfig {
    pub router: RouterConfig,
    pub link: LinkConfig,
}

impl NodeConfig {
    pub fn validate(&self) -> Result<(), String> {
        self.router.validate()?;
        self.link.validate()?;
        if 64 * self.link.lanes != self.router.width {
            return Err(format!(
                "node: link `lanes` = {} carries {} bits per word, the router `width` is {}: lanes must be width / 64",
                self.link.lanes,
                64 * self.link.lanes,
                self.router.width
            ));
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
        for c in ["frames_sent", "frames_retransmitted", "crc_errors", "lock_losses"] {
            names.push(format!("{}_{c}", e.name()));
        }
    }
    names
}

/// A named placeholder for a value defined later (one per name).
fn placeholder(net: &mut Netlist, fwd: &mut HashMap<String, Wire>, name: String, width: usize) -> Wire {
    *fwd.entry(name).or_insert_with(|| net.forward(width))
}

fn opposite(d: Direction) -> Direction {
    Direction { dim: d.dim, plus: !d.plus }
}

/// Builds the node netlist.
pub fn node(config: &NodeConfig) -> Result<Netlist, String> {
    config.validate()?;
    let rc = &config.router;
    let lanes = config.link.lanes;
    let kb = rc.width / 8;
    let chunks = rc.width / 128;
    let router_net = router(rc)?;
    let link_net = Rc::new(endpoint(&config.link)?);
    let counters = counter_names(config);
    // The self-test block takes IntraNode port 0 when enabled; it is 128 bits wide.
    let selftest = rc.width == 128;
    let regs_net = node_window(rc.dims, counters.len(), selftest)?;
    let dirs = rc.directions();
    let endpoints = config.endpoints();

    let mut n = Netlist::new();
    let net = &mut n;
    let zero1 = net.constant(0, 1);

    // Placeholders for values that close loops between the blocks.
    let mut fwd: HashMap<String, Wire> = HashMap::new();

    // ---- register window ----
    let mut counter_inputs = vec![];
    for (i, _) in counters.iter().enumerate() {
        counter_inputs.push(placeholder(net, &mut fwd, format!("counter{i}"), 32));
    }
    let axil_in: HashMap<String, Wire> = ["s_axil_awaddr:12", "s_axil_awvalid:1", "s_axil_wdata:32", "s_axil_wstrb:4", "s_axil_wvalid:1", "s_axil_bready:1", "s_axil_araddr:12", "s_axil_arvalid:1", "s_axil_rready:1"]
        .iter()
        .map(|s| {
            let (name, w) = s.split_once(':').unwrap();
            (name.to_string(), net.input(name, w.parse().unwrap()))
        })
        .collect();
    let link_status = placeholder(net, &mut fwd, "link_status".into(), 32);
    let status_inputs: Vec<Wire> = (0..SELFTEST_STATUS_NAMES.len()).map(|i| placeholder(net, &mut fwd, format!("selftest{i}"), 32)).collect();
    let regs = net.instance(&Rc::new(regs_net), "regs", "regs", &|port| {
        if let Some(w) = axil_in.get(port) {
            return Some(*w);
        }
        if port == "link_status" {
            return Some(link_status);
        }
        if let Some(lo) = port.strip_prefix("selftest@") {
            return status_inputs.get(lo.parse::<usize>().ok()? / 32).copied();
        }
        let lo: usize = port.strip_prefix("counters@")?.parse().ok()?;
        counter_inputs.get(lo / 32).copied()
    })?;
    for o in ["s_axil_awready", "s_axil_wready", "s_axil_bvalid", "s_axil_bresp", "s_axil_arready", "s_axil_rvalid", "s_axil_rdata", "s_axil_rresp"] {
        net.output(o, regs[o]);
    }

    // ---- router inputs ----
    let mut router_in: HashMap<String, Wire> = HashMap::new();
    for axis in ["x", "y", "z"] {
        router_in.insert(format!("local_{axis}"), regs[&format!("local_{axis}")]);
    }
    for p in 0..rc.local_ports {
        let s = format!("s_axis_p{p}");
        for k in 0..chunks {
            let name = format!("{s}_tdata@{}", 128 * k);
            router_in.insert(name.clone(), net.input(&name, 128));
        }
        for sig in ["tlast", "tvalid"] {
            let name = format!("{s}_{sig}");
            router_in.insert(name.clone(), net.input(&name, 1));
        }
        let name = format!("m_axis_p{p}_tready");
        router_in.insert(name.clone(), net.input(&name, 1));
    }
    // Self-test: with control bit 0 set, port 0 of the router talks to the generator and the
    // checker instead of the user (whose port then neither offers nor accepts).
    let enable = if selftest { net.bit(regs["st_control"], 0) } else { zero1 };
    let user_port0: HashMap<String, Wire> = router_in.iter().filter(|(k, _)| k.starts_with("s_axis_p0_") || k.starts_with("m_axis_p0_")).map(|(k, v)| (k.clone(), *v)).collect();
    if selftest {
        let gen_data = placeholder(net, &mut fwd, "gen_data".into(), 128);
        let gen_last = placeholder(net, &mut fwd, "gen_last".into(), 1);
        let gen_valid = placeholder(net, &mut fwd, "gen_valid".into(), 1);
        let one = net.constant(1, 1);
        let data = net.mux(enable, gen_data, user_port0["s_axis_p0_tdata@0"]);
        let last = net.mux(enable, gen_last, user_port0["s_axis_p0_tlast"]);
        let valid = net.mux(enable, gen_valid, user_port0["s_axis_p0_tvalid"]);
        let ready = net.mux(enable, one, user_port0["m_axis_p0_tready"]);
        router_in.insert("s_axis_p0_tdata@0".into(), data);
        router_in.insert("s_axis_p0_tlast".into(), last);
        router_in.insert("s_axis_p0_tvalid".into(), valid);
        router_in.insert("m_axis_p0_tready".into(), ready);
    }
    for d in &dirs {
        let dn = d.name();
        // Flits travelling d arrive through the endpoint facing the other way; see the merge.
        for k in 0..chunks {
            let f = placeholder(net, &mut fwd, format!("merge_{dn}_data{k}"), 128);
            router_in.insert(format!("s_axis_{dn}_tdata@{}", 128 * k), f);
        }
        for (sig, w) in [("tkeep", kb), ("tlast", 1), ("tuser", 1), ("tvalid", 1)] {
            let f = placeholder(net, &mut fwd, format!("merge_{dn}_{sig}"), w);
            router_in.insert(format!("s_axis_{dn}_{sig}"), f);
        }
        let f = placeholder(net, &mut fwd, format!("link_{dn}_tready"), 1);
        router_in.insert(format!("m_axis_{dn}_tready"), f);
        let f = placeholder(net, &mut fwd, format!("link_{dn}_tx_credit"), 2);
        router_in.insert(format!("m_axis_{dn}_credit"), f);
    }
    let r = net.instance(&Rc::new(router_net), "router", "router", &|port| router_in.get(port).copied())?;
    let user = net.not(enable);
    for p in 0..rc.local_ports {
        for o in ["s_axis_p{p}_tready", "m_axis_p{p}_tkeep", "m_axis_p{p}_tlast", "m_axis_p{p}_tvalid"] {
            let name = o.replace("{p}", &p.to_string());
            let w = if p == 0 && (o.contains("tready") || o.contains("tvalid")) { net.and(r[&name], user) } else { r[&name] };
            net.output(&name, w);
        }
        for k in 0..chunks {
            let name = format!("m_axis_p{p}_tdata@{}", 128 * k);
            net.output(&name, r[&name]);
        }
    }

    if selftest {
        let reg = |name: &str| regs[&format!("st_{name}")];
        let control = reg("control");
        let start_level = net.bit(control, 1);
        let was = net.register("st_start_seen", 1, 0);
        net.drive(was, start_level);
        let not_was = net.not(was.q);
        let start = net.and(start_level, not_was);
        let clear = net.bit(control, 2);
        let valid = net.and(r["m_axis_p0_tvalid"], enable);
        let chk_in: HashMap<String, Wire> = HashMap::from([
            ("s_axis_tdata".to_string(), r["m_axis_p0_tdata@0"]),
            ("s_axis_tkeep".into(), r["m_axis_p0_tkeep"]),
            ("s_axis_tlast".into(), r["m_axis_p0_tlast"]),
            ("s_axis_tvalid".into(), valid),
            ("seed".into(), reg("seed")),
            ("expected".into(), reg("expected")),
            ("clear".into(), clear),
        ]);
        let chk = net.instance(&Rc::new(checker()), "selftest_checker", "selftest_checker", &|port| chk_in.get(port).copied())?;
        let gen_ready = net.and(r["s_axis_p0_tready"], enable);
        let gen_in: HashMap<String, Wire> = HashMap::from([
            ("start".to_string(), start),
            ("count".into(), reg("count")),
            ("length".into(), reg("length")),
            ("dst".into(), reg("dst")),
            ("tag".into(), reg("tag")),
            ("seed".into(), reg("seed")),
            ("done_in".into(), chk["complete"]),
            ("m_axis_tready".into(), gen_ready),
        ]);
        let g = net.instance(&Rc::new(generator()), "selftest_generator", "selftest_generator", &|port| gen_in.get(port).copied())?;
        net.resolve(fwd["gen_data"], g["m_axis_tdata"]);
        net.resolve(fwd["gen_last"], g["m_axis_tlast"]);
        net.resolve(fwd["gen_valid"], g["m_axis_tvalid"]);
        let busy = net.zext(g["busy"], 32);
        let complete = net.zext(chk["complete"], 32);
        let complete = net.shl_const(complete, 1);
        let status = net.or(busy, complete);
        for (i, w) in [g["sent"], g["cycles"], status, chk["packets"], chk["bytes"], chk["errors"]].into_iter().enumerate() {
            net.resolve(fwd[&format!("selftest{i}")], w);
        }
    }

    // ---- link endpoints and merges ----
    let mut ups = vec![];
    for e in &endpoints {
        let en = e.name();
        let sends = dirs.contains(e); // the router's output e leaves here
        let receives = dirs.contains(&opposite(*e)); // flits travelling opposite(e) arrive here
        let mut link_in: HashMap<String, Wire> = HashMap::new();
        for j in 0..lanes {
            let w = if sends {
                let chunk = r[&format!("m_axis_{en}_tdata@{}", 128 * (j / 2))];
                net.slice(chunk, 64 * (j % 2), 64)
            } else {
                net.constant(0, 64)
            };
            link_in.insert(format!("s_axis_tdata@{}", 64 * j), w);
            let serial = net.input(&format!("{en}_rx_serial@{}", 66 * j), 66);
            link_in.insert(format!("rx_serial@{}", 66 * j), serial);
        }
        for (sig, w) in [("tkeep", kb), ("tlast", 1), ("tuser", 1), ("tvalid", 1)] {
            let v = if sends { r[&format!("m_axis_{en}_{sig}")] } else { net.constant(0, w) };
            link_in.insert(format!("s_axis_{sig}"), v);
        }
        let credit_back = if receives { r[&format!("s_axis_{}_credit", opposite(*e).name())] } else { net.constant(0, 2) };
        link_in.insert("rx_credit_return".into(), credit_back);
        link_in.insert("s_axis_nfc_tvalid".into(), zero1);
        let nfc0 = net.constant(0, 16);
        link_in.insert("s_axis_nfc_tdata".into(), nfc0);
        let ready: Vec<Wire> = (0..2).map(|_| net.forward(1)).collect();
        link_in.insert("m_axis_vc0_tready".into(), ready[0]);
        link_in.insert("m_axis_vc1_tready".into(), ready[1]);
        let l = net.instance(&link_net, "link", &format!("link_{en}"), &|port| link_in.get(port).copied())?;
        for j in 0..lanes {
            net.output(&format!("{en}_tx_serial@{}", 66 * j), l[&format!("tx_serial@{}", 66 * j)]);
        }
        net.output(&format!("{en}_channel_up"), l["channel_up"]);
        ups.push(l["channel_up"]);
        if sends {
            net.resolve(fwd[&format!("link_{en}_tready")], l["s_axis_tready"]);
            net.resolve(fwd[&format!("link_{en}_tx_credit")], l["tx_credit"]);
        }
        // Merge: whole packets from the two VC streams, round robin, into the router input (which
        // always has room: its sender held credits for every flit).
        let busy = net.register(&format!("merge_{en}_busy"), 1, 0);
        let cur = net.register(&format!("merge_{en}_vc"), 1, 0);
        let prefer = net.register(&format!("merge_{en}_prefer"), 1, 0);
        let v0 = l["m_axis_vc0_tvalid"];
        let v1 = l["m_axis_vc1_tvalid"];
        let no0 = net.not(v0);
        let may1 = net.or(prefer.q, no0);
        let pick = net.and(v1, may1);
        let has = net.or(v0, v1);
        let sel = net.mux(busy.q, cur.q, pick);
        let idle = net.not(busy.q);
        let starts = net.and(idle, has);
        let act = net.or(busy.q, has);
        let valid = net.mux(sel, v1, v0);
        let valid = net.and(valid, act);
        let last = net.mux(sel, l["m_axis_vc1_tlast"], l["m_axis_vc0_tlast"]);
        let ends = net.and(valid, last);
        let not_end = net.not(ends);
        let b = net.and(act, not_end);
        net.drive(busy, b);
        net.drive(cur, sel);
        let other = net.not(pick);
        net.hold_unless(prefer, starts, other);
        let not_sel = net.not(sel);
        let r0 = net.and(act, not_sel);
        let r1 = net.and(act, sel);
        net.resolve(ready[0], r0);
        net.resolve(ready[1], r1);
        if receives {
            let dn = opposite(*e).name();
            for k in 0..chunks {
                let mut parts = vec![];
                for j in [2 * k + 1, 2 * k] {
                    let a = l[&format!("m_axis_vc1_tdata@{}", 64 * j)];
                    let b = l[&format!("m_axis_vc0_tdata@{}", 64 * j)];
                    parts.push(net.mux(sel, a, b));
                }
                let chunk = net.concat(parts[0], parts[1]);
                net.resolve(fwd[&format!("merge_{dn}_data{k}")], chunk);
            }
            let keep = net.mux(sel, l["m_axis_vc1_tkeep"], l["m_axis_vc0_tkeep"]);
            net.resolve(fwd[&format!("merge_{dn}_tkeep")], keep);
            net.resolve(fwd[&format!("merge_{dn}_tlast")], last);
            net.resolve(fwd[&format!("merge_{dn}_tuser")], sel);
            net.resolve(fwd[&format!("merge_{dn}_tvalid")], valid);
        }
        // Link counters for the register window.
        for name in ["frames_sent", "frames_retransmitted", "crc_errors", "lock_losses"] {
            let i = counters.iter().position(|x| *x == format!("{en}_{name}")).unwrap();
            net.resolve(fwd[&format!("counter{i}")], l[name]);
        }
    }
    let link_up = if ups.is_empty() { net.constant(1, 1) } else { net.and_all(&ups) };
    net.output("link_up", link_up);
    // Link status register: bit d per endpoint, bit 31 all up.
    let mut status = net.constant(0, 32);
    for (e, up) in endpoints.iter().zip(&ups) {
        let bit = net.zext(*up, 32);
        let bit = net.shl_const(bit, e.index());
        status = net.or(status, bit);
    }
    let all = net.zext(link_up, 32);
    let all = net.shl_const(all, 31);
    let status = net.or(status, all);
    net.resolve(fwd["link_status"], status);
    // Router counters for the register window.
    for (i, name) in counters.iter().enumerate() {
        if let Some(w) = r.get(&format!("stat_{name}")) {
            net.resolve(fwd[&format!("counter{i}")], *w);
        }
    }
    Ok(n)
}
