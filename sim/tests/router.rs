//! The router in the built-in simulator: tori of router netlists under random traffic, header
//! errors in flight, latency and throughput against their bounds, and the IntraNode
//! length policing driven port by port.

use weft_sim::link::{Device, NetlistDevice, Value};
use weft_sim::network::{HeaderErrors, Injection, Pattern, Torus, Traffic};
use weft_sim::weft_ip::router::header::{check, Checked, Header};
use weft_sim::weft_ip::router::{router, RouterConfig};
use weft_sim::weft_ip::weft_hdl::netlist::eval::Evaluator;

fn small(dims: [usize; 3]) -> RouterConfig {
    RouterConfig { dims, vc_buffer_flits: 32, max_packet_bytes: 256, ..Default::default() }
}

fn traffic(injection: Injection, seed: u64) -> Traffic {
    Traffic { pattern: Pattern::UniformRandom, injection, min_bytes: 0, max_bytes: 256, valid_percent: 80, ready_percent: 70, seed }
}

#[test]
fn random_packets_arrive_once_intact_in_order_with_minimal_hops() {
    for (dims, width) in [([4, 2, 1], 128), ([2, 2, 2], 128), ([4, 2, 1], 256), ([3, 1, 3], 128)] {
        let config = RouterConfig { width, ..small(dims) };
        let mut torus = Torus::netlist(&config).unwrap();
        torus.reset();
        let run = torus.run(&traffic(Injection::Queued(600), 3), 2000).unwrap().unwrap_or_else(|s| panic!("{dims:?}: stuck {s:?}"));
        assert_eq!(run.deliveries.len(), 600);
        assert_eq!(torus.counter_sum("*_dropped"), 0);
        // Every flit that left a router was counted once at its output.
        let flits: usize = run.deliveries.iter().map(|d| d.flits).sum();
        let local_out: u64 = (0..config.local_ports).map(|p| (0..config.nodes()).map(|n| torus.counter(n, &format!("p{p}_flits"))).sum::<u64>()).sum();
        assert_eq!(local_out, flits as u64, "{dims:?}");
    }
}

/// One or two header bits flipped on the links: single errors are corrected and counted at the
/// next router, double errors counted and the packet dropped; every other packet arrives.
#[test]
fn header_bit_errors_are_corrected_or_detected_and_counted() {
    let config = small([4, 2, 1]);
    let mut torus = Torus::netlist(&config).unwrap();
    torus.errors = HeaderErrors { single_permille: 100, double_permille: 20 };
    torus.reset();
    let run = torus.run(&traffic(Injection::Queued(1500), 9), 2000).unwrap().unwrap_or_else(|s| panic!("stuck {s:?}"));
    let [single, double] = torus.injected;
    assert!(single > 50 && double > 10, "too few errors injected: {single} single, {double} double");
    assert_eq!(torus.counter_sum("*_ecc_corrected"), single);
    assert_eq!(torus.counter_sum("*_ecc_uncorrectable"), double);
    assert_eq!(torus.counter_sum("*_dropped"), double);
    assert_eq!(run.deliveries.len() as u64, 1500 - double);
}

/// Zero load: IntraNode → IntraNode on one node within 6 cycles (first beat in to first beat
/// out), and at most 3 more cycles per router-to-router hop.
#[test]
fn zero_load_latency_is_within_the_bounds() {
    let config = RouterConfig { dims: [4, 4, 1], ..RouterConfig::default() };
    let latency = |src: (usize, usize), dst: (usize, usize)| {
        let mut torus = Torus::netlist(&config).unwrap();
        torus.reset();
        let t = Traffic { injection: Injection::One { src, dst, bytes: 64 }, valid_percent: 100, ready_percent: 100, ..traffic(Injection::Queued(0), 1) };
        let d = torus.run(&t, 100).unwrap().unwrap().deliveries[0];
        d.head_out - d.head_in
    };
    let local = latency((0, 0), (0, 1));
    assert!(local <= 6, "local latency {local} cycles");
    // Node 10 = (2, 2): four hops from node 0.
    let far = latency((0, 0), (10, 0));
    let per_hop = (far - local) as f64 / 4.0;
    assert!(per_hop <= 3.0, "{per_hop} cycles per hop");
    println!("zero-load: local {local} cycles, 4 hops {far} cycles ({per_hop} per hop)");
}

/// With every output free (each port sends to the next port of its node), every IntraNode port
/// moves one flit per cycle, for one-flit and for long packets.
#[test]
fn one_flit_per_port_per_cycle_when_outputs_are_free() {
    for bytes in [0, 256] {
        let config = RouterConfig { dims: [1, 1, 1], local_ports: 3, vc_buffer_flits: 32, max_packet_bytes: 256, ..Default::default() };
        let mut torus = Torus::netlist(&config).unwrap();
        torus.reset();
        let t = Traffic { pattern: Pattern::NextPort, injection: Injection::Saturated { cycles: 2000 }, min_bytes: bytes, max_bytes: bytes, valid_percent: 100, ready_percent: 100, seed: 4 };
        let run = torus.run(&t, 100).unwrap().unwrap();
        let steady = &run.ejected_flits[100..1900];
        let rate = steady.iter().map(|f| *f as f64).sum::<f64>() / steady.len() as f64;
        assert!(rate >= 2.99, "{bytes}-byte packets: {rate} flits per cycle over 3 ports");
    }
}

// ---- IntraNode length policing, one router driven directly ----

struct One {
    dev: NetlistDevice,
    config: RouterConfig,
}

fn v(x: u128) -> Value {
    let mut v = Value::default();
    v[0] = x as u64;
    v[1] = (x >> 64) as u64;
    v
}

impl One {
    fn new() -> One {
        let config = RouterConfig { dims: [1, 1, 1], vc_buffer_flits: 32, max_packet_bytes: 256, ..Default::default() };
        let dev = NetlistDevice::new(Evaluator::new(router(&config).unwrap()));
        let mut one = One { dev, config };
        for _ in 0..3 {
            one.dev.settle();
            one.dev.clock(true);
        }
        one
    }

    fn set(&mut self, name: &str, x: u128) {
        let p = self.dev.port(name);
        self.dev.set(p, &v(x));
    }

    fn get(&mut self, name: &str) -> u128 {
        let p = self.dev.port(name);
        let x = self.dev.get(p);
        x[0] as u128 | (x[1] as u128) << 64
    }

    /// Offers `beats` (data, tlast) on port 0 with port 1 always ready; returns what port 1
    /// delivered (data, tkeep, tlast) in the following cycles.
    fn send(&mut self, beats: &[(u128, bool)]) -> Vec<(u128, u128, bool)> {
        let mut out = vec![];
        let mut i = 0;
        for _ in 0..beats.len() * 2 + 20 {
            let (data, last) = beats.get(i).copied().unwrap_or((0, false));
            self.set("s_axis_p0_tdata", data);
            self.set("s_axis_p0_tlast", last as u128);
            self.set("s_axis_p0_tvalid", (i < beats.len()) as u128);
            self.set("m_axis_p1_tready", 1);
            self.dev.settle();
            if i < beats.len() && self.get("s_axis_p0_tready") == 1 {
                i += 1;
            }
            if self.get("m_axis_p1_tvalid") == 1 {
                out.push((self.get("m_axis_p1_tdata"), self.get("m_axis_p1_tkeep"), self.get("m_axis_p1_tlast") == 1));
            }
            self.dev.clock(false);
        }
        assert_eq!(i, beats.len(), "the port did not take every beat");
        out
    }
}

fn header(length: usize, dst_x: usize) -> u128 {
    Header { dst: [dst_x, 0, 0], dst_port: 1, length, tag: 7, user: 42, ..Default::default() }.pack() & ((1 << 120) - 1)
}

#[test]
fn intranode_ports_pad_truncate_and_drop_misfit_packets() {
    let mut r = One::new();
    assert_eq!(r.config.flit_bytes(), 16);
    // 40 bytes announced (3 payload flits), the source ends after one: padded with zeros.
    let out = r.send(&[(header(40, 0), false), (0xAAAA, true)]);
    assert_eq!(out.len(), 4);
    assert_eq!(out[1].0, 0xAAAA);
    assert_eq!((out[2].0, out[3].0), (0, 0));
    assert!(out[3].2 && !out[2].2);
    assert_eq!(out[3].1, 0xFF, "the last flit keeps 40 − 32 = 8 bytes");
    assert_eq!(r.get("stat_p0_length_errors"), 1);
    // The header leaves with src, hops and check bits written by the fabric.
    let h = out[0].0;
    assert_eq!(check(h), Checked::Clean(h));
    assert_eq!(Header::unpack(h), Header { dst: [0, 0, 0], dst_port: 1, src_port: 0, length: 40, tag: 7, user: 42, ..Default::default() });
    // 16 bytes announced, three payload flits sent: the extra two are discarded.
    let out = r.send(&[(header(16, 0), false), (1, false), (2, false), (3, true)]);
    assert_eq!(out.iter().map(|o| (o.0 & 0xF, o.2)).skip(1).collect::<Vec<_>>(), [(1, true)]);
    assert_eq!(out[1].1, 0xFFFF);
    assert_eq!(r.get("stat_p0_length_errors"), 2);
    // Longer than max_packet_bytes, and addressed outside the torus: dropped, counted.
    assert!(r.send(&[(header(300, 0), false), (1, false), (2, true)]).is_empty());
    assert!(r.send(&[(header(0, 3), true)]).is_empty());
    assert_eq!(r.get("stat_p0_dropped"), 2);
    assert_eq!(r.get("stat_p0_length_errors"), 2);
    // A well-formed packet still goes through whole.
    let out = r.send(&[(header(20, 0), false), (5, false), (6, true)]);
    assert_eq!(out.iter().map(|o| o.0 & 0xF).skip(1).collect::<Vec<_>>(), [5, 6]);
    assert_eq!(out[2].1, 0xF);
}

/// A header on a link asking for a turn no dimension-ordered route takes (back into an earlier
/// dimension, the other way round its ring, on in a direction whose routes take one link) can
/// only be a corrupted one: the switch has no path for it, and the router drops and counts it.
/// The turns routes do take still go through.
#[test]
fn link_inputs_drop_headers_routed_where_no_route_turns() {
    // Node (0, 0) of a 4×4 torus: the input a header-only packet arrives on, its destination
    // (x, y, port) and the output that delivers it (None: dropped).
    let cases = [
        ("xp", [1, 0, 0], Some("xp")),
        ("xp", [3, 0, 0], None),
        ("xp", [0, 1, 0], Some("yp")),
        ("xn", [0, 0, 1], Some("p1")),
        ("yp", [1, 1, 0], None),
        ("yp", [0, 2, 0], Some("yp")),
        ("yn", [0, 3, 0], None),
        ("yn", [0, 0, 0], Some("p0")),
    ];
    let config = RouterConfig { dims: [4, 4, 1], vc_buffer_flits: 32, max_packet_bytes: 256, ..Default::default() };
    let outputs = ["p0", "p1", "xp", "xn", "yp", "yn"];
    for (input, [x, y, port], expect) in cases {
        let mut dev = NetlistDevice::new(Evaluator::new(router(&config).unwrap()));
        let set = |dev: &mut NetlistDevice, name: &str, x: u128| {
            let p = dev.port(name);
            dev.set(p, &v(x));
        };
        for o in outputs {
            set(&mut dev, &format!("m_axis_{o}_tready"), 1);
        }
        for _ in 0..3 {
            dev.settle();
            dev.clock(true);
        }
        let h = Header { dst: [x, y, 0], dst_port: port, length: 0, src: [2, 2, 0], hops: 1, ..Default::default() }.pack();
        let s = format!("s_axis_{input}");
        let mut delivered = vec![];
        for cycle in 0..40 {
            let first = cycle == 2;
            set(&mut dev, &format!("{s}_tdata"), if first { h } else { 0 });
            set(&mut dev, &format!("{s}_tkeep"), 0xFFFF);
            set(&mut dev, &format!("{s}_tlast"), 1);
            set(&mut dev, &format!("{s}_tvalid"), first as u128);
            dev.settle();
            for o in outputs {
                let p = dev.port(&format!("m_axis_{o}_tvalid"));
                if dev.get(p)[0] == 1 {
                    delivered.push(o);
                }
            }
            dev.clock(false);
        }
        let p = dev.port(&format!("stat_{input}_dropped"));
        let dropped = dev.get(p)[0];
        assert_eq!(delivered, expect.into_iter().collect::<Vec<_>>(), "{input} to {x},{y} port {port}");
        assert_eq!(dropped, expect.is_none() as u64, "{input} to {x},{y} port {port}");
    }
}
