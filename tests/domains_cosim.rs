//! A netlist with two clock domains: the built-in simulator (stepping each domain on its own
//! period) and Verilator (driving both clocks) give the same values at every clock edge, and a
//! crossing without a synchroniser is refused naming both ends.

use weft::hdl::netlist::eval::{Clocks, Evaluator};
use weft::hdl::netlist::Netlist;
use weft::sim::cosim::Model;

/// An 8-bit counter on `clk`, sent Gray-coded through a two-flop synchroniser into `rx_clk`,
/// where it is decoded and registered. Outputs `count` (clk) and `seen` (rx_clk).
fn gray_crossing() -> Netlist {
    let mut net = Netlist::new();
    let count = net.register("count", 8, 0);
    let next = net.add_const(count.q, 1);
    net.drive(count, next);
    let one = net.constant(1, 8);
    let half = net.shr(count.q, one);
    let gray = net.xor(count.q, half);
    let gray = net.history(gray, None, Some(0));
    net.name(gray, "gray");
    let rx = net.domain_named("rx_clk");
    net.set_domain(rx);
    let synced = net.synchronize(gray, 2, "gray_rx");
    // Gray to binary: bit i is the XOR of bits i and above.
    let mut binary = net.bit(synced, 7);
    let mut bit = binary;
    for i in (0..7).rev() {
        let g = net.bit(synced, i);
        bit = net.xor(bit, g);
        binary = net.concat(binary, bit);
    }
    let seen = net.history(binary, None, Some(0));
    net.name(seen, "seen");
    net.output("count", count.q);
    net.output("seen", seen);
    net
}

fn run_both(periods: [u64; 2], events: usize) -> usize {
    let net = gray_crossing();
    let dir = std::env::temp_dir().join(format!("weft-domains-{}-{}", std::process::id(), periods[1]));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("gray_crossing.v");
    let spec = weft::hdl::export::ModuleSpec { family: "test", name: "gray_crossing".into(), summary: "two clock domains".into(), parameters: vec![], hidden_ports: vec![] };
    std::fs::write(&file, weft::hdl::export::export_netlist(&spec, &net).unwrap()).unwrap();
    weft::tools::verilator_lint(&file, "gray_crossing").unwrap();
    let mut v = Model::build(&file, "gray_crossing").unwrap();
    let [clk, rst, rx_clk, rx_rst, count, seen] = ["clk", "rst", "rx_clk", "rx_rst", "count", "seen"].map(|p| v.port(p).unwrap());
    let mut e = Evaluator::new(net);
    let rx = e.domain("rx_clk").unwrap();
    // Reset both domains with one edge each.
    e.settle();
    e.clock(true);
    e.settle();
    for (c, r) in [(clk, rst), (rx_clk, rx_rst)] {
        v.set(r, 1);
        v.set(c, 1);
        v.eval();
        v.set(c, 0);
        v.set(r, 0);
        v.eval();
    }
    let mut clocks = Clocks::new(&periods, &[0, periods[1] / 3]);
    let mut ahead_seen = 0;
    for k in 0..events {
        let rising = clocks.advance();
        let edges: Vec<(usize, bool)> = rising.iter().map(|d| (if *d == 0 { 0 } else { rx }, false)).collect();
        e.settle();
        e.clock_domains(&edges);
        e.settle();
        let ports: Vec<_> = rising.iter().map(|d| if *d == 0 { clk } else { rx_clk }).collect();
        v.edges(&ports);
        let (c, s) = (e.get_output("count") as u64, e.get_output("seen") as u64);
        assert_eq!((c, s), (v.get(count), v.get(seen)), "event {k} at t={}: built-in (count, seen) differs from Verilator", clocks.now);
        // The receiver sees the counter at most a few of its own cycles late, never ahead.
        let lag = c.wrapping_sub(s) & 0xff;
        assert!(lag <= 8, "event {k}: seen {s} lags count {c} by {lag}");
        ahead_seen += (lag == 0) as usize;
    }
    std::fs::remove_dir_all(&dir).ok();
    ahead_seen
}

#[test]
fn two_domains_match_verilator_at_every_edge() {
    // Faster receiver, slower receiver, and two clocks 300 ppm apart.
    run_both([10, 7], 4000);
    run_both([7, 10], 4000);
    run_both([6400, 6402], 4000);
}

#[test]
fn an_unmarked_crossing_is_refused_naming_both_ends() {
    let mut net = Netlist::new();
    let a = net.register("tx_count", 4, 0);
    let next = net.add_const(a.q, 1);
    net.drive(a, next);
    let rx = net.domain_named("rx_clk");
    net.set_domain(rx);
    let b = net.history(a.q, None, Some(0));
    net.name(b, "rx_copy");
    net.output("copy", b);
    let err = net.check_domains().unwrap_err();
    assert!(matches!(err, weft::hdl::Error::Design(_)), "{err:?}");
    let err = err.to_string();
    assert!(err.contains("`rx_copy`") && err.contains("`tx_count`") && err.contains("`rx_clk`") && err.contains("`clk`"), "{err}");
    let marked = gray_crossing();
    assert!(marked.check_domains().is_ok());
}
