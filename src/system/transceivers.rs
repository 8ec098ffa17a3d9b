//! The node on the U200's and U280's transceivers: every link's lanes on the GTY channels of the QSFP28
//! cages, with the 64B/66B asynchronous gearbox.
//!
//! - `<cfg>_gt.tcl` creates one GT wizard IP (`gtwizard_ultrascale`, preset `GTY-10GBASE-R`, an
//!   8-byte user interface on a 64-bit internal datapath) per cage used, `<cfg>_gt_qsfp<k>`, at
//!   the chosen lane rate: 10.3125 Gb/s from the 156.25 MHz reference (`clk0`) or 25.78125 Gb/s
//!   from 161.1328125 MHz (`clk1`). `weft generate` writes the 10.3125 Gb/s script (the node's
//!   156.25 MHz fabric clock is then the transmit user clock); [`gt_tcl`] gives either. The IP
//!   holds the quad's PLL and the reset controller; the user clocks stay outside it
//!   (`LOCATE_*_USER_CLOCKING` = `EXAMPLE_DESIGN`): every channel's `TXUSRCLK`/`TXUSRCLK2` is
//!   the node's fabric clock (with the asynchronous gearbox, line rate / 66), and each link
//!   receives on its own clock, a `BUFG_GT` of its first channel's `RXOUTCLK` feeding its lanes'
//!   `RXUSRCLK`/`RXUSRCLK2` and `<e>_rx_clk` — links in one cage come from different
//!   neighbours, so they cannot share the IP's single receive user clock.
//! - `<cfg>_node_gt.v`: the node with a transceiver wrapper ([`weft_ip::link::gt`]) on every
//!   link: per link `e` and lane `l` the ports `<e>_gt_txheader<l>`, `<e>_gt_txdata<l>`,
//!   `<e>_gt_rxheader<l>`, `<e>_gt_rxdata<l>` and `<e>_gt_rxgearboxslip<l>` to connect to the
//!   IP's per-channel slices (channel order as [`assignment`] gives it), `<e>_gt_locked`, and
//!   `<e>_rx_clk`, that link's receive user clock.
//!
//! Lanes are given to links in the node's endpoint order (X+, X−, Y+, Y−, Z+, Z−), cage by cage,
//! four channels a cage; a node needing more lanes than the board's two cages hold is refused.

use weft_hdl::netlist::{verilog, Design, Netlist};
use weft_ip::link::gt::gt_wrapper;
use weft_ip::router::Direction;

use super::config::{SystemConfig, Vendor};
use super::tops::elsewhere;
use crate::Error;

/// What the top drives on one of a cage's control pins.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Drive {
    /// Constant 0.
    Low,
    /// Constant 1.
    High,
    /// 1 when the lane rate takes the 161.1328125 MHz reference (`clk1`), else 0.
    Fast,
    /// 0 when the lane rate takes the 161.1328125 MHz reference, else 1.
    Slow,
}

/// One QSFP28 cage: its GTY quad, four channel sites and the board's pins for them (from the
/// board's master XDC).
#[derive(Clone, Copy, Debug)]
pub struct Cage {
    /// The quad as the board's documentation names it.
    pub quad: &'static str,
    /// The channel sites, lane 0 first.
    pub sites: [&'static str; 4],
    /// Receive pins (P, N) of each lane.
    pub rx: [(&'static str, &'static str); 4],
    /// Transmit pins (P, N) of each lane.
    pub tx: [(&'static str, &'static str); 4],
    /// The quad's reference-clock pins (P, N): `clk0` (156.25 MHz from the SI570) and `clk1`
    /// (161.1328125 MHz from the cage's own oscillator, at its default frequency select).
    pub refclk: [(&'static str, &'static str); 2],
    /// Control outputs: port suffix, pin, what the top drives (the reference oscillator's
    /// frequency select and enable, the module's reset and low-power pins).
    pub controls: &'static [(&'static str, &'static str, Drive)],
    /// The control pins' I/O standard.
    pub control_standard: &'static str,
}

/// The cages of a board, QSFP0 first: the U280's on GTY quads 134 and 135 (the SI546's frequency
/// select and enable; the module's sideband pins are not wired to the FPGA), the U200's on 231 and
/// 230 (the SI5335's frequency select, the module's reset, low-power and select pins).
pub fn cages(board: &str) -> Option<[Cage; 2]> {
    match board {
        "u280" => Some([
            Cage {
                quad: "134",
                sites: ["X0Y40", "X0Y41", "X0Y42", "X0Y43"],
                rx: [("L53", "L54"), ("K51", "K52"), ("J53", "J54"), ("H51", "H52")],
                tx: [("L48", "L49"), ("L44", "L45"), ("K46", "K47"), ("J48", "J49")],
                refclk: [("T42", "T43"), ("R40", "R41")],
                controls: &[("fs", "G32", Drive::Fast), ("oe_b", "H32", Drive::Low)],
                control_standard: "LVCMOS18",
            },
            Cage {
                quad: "135",
                sites: ["X0Y44", "X0Y45", "X0Y46", "X0Y47"],
                rx: [("G53", "G54"), ("F51", "F52"), ("E53", "E54"), ("D51", "D52")],
                tx: [("G48", "G49"), ("E48", "E49"), ("C48", "C49"), ("A49", "A50")],
                refclk: [("P42", "P43"), ("M42", "M43")],
                controls: &[("fs", "G33", Drive::Fast), ("oe_b", "H30", Drive::Low)],
                control_standard: "LVCMOS18",
            },
        ]),
        "u200" => Some([
            Cage {
                quad: "231",
                sites: ["X1Y48", "X1Y49", "X1Y50", "X1Y51"],
                rx: [("N4", "N3"), ("M2", "M1"), ("L4", "L3"), ("K2", "K1")],
                tx: [("N9", "N8"), ("M7", "M6"), ("L9", "L8"), ("K7", "K6")],
                refclk: [("M11", "M10"), ("K11", "K10")],
                controls: &[("fs0", "AT20", Drive::Slow), ("fs1", "AU22", Drive::Fast), ("resetl", "BE17", Drive::High), ("lpmode", "BD18", Drive::Low), ("modsell", "BE16", Drive::Low)],
                control_standard: "LVCMOS12",
            },
            Cage {
                quad: "230",
                sites: ["X1Y44", "X1Y45", "X1Y46", "X1Y47"],
                rx: [("U4", "U3"), ("T2", "T1"), ("R4", "R3"), ("P2", "P1")],
                tx: [("U9", "U8"), ("T7", "T6"), ("R9", "R8"), ("P7", "P6")],
                refclk: [("T11", "T10"), ("P11", "P10")],
                controls: &[("fs0", "AR22", Drive::Slow), ("fs1", "AU20", Drive::Fast), ("resetl", "BC18", Drive::High), ("lpmode", "AV22", Drive::Low), ("modsell", "AY20", Drive::Low)],
                control_standard: "LVCMOS12",
            },
        ]),
        _ => None,
    }
}

/// A lane rate the wrapper supports: Gb/s, its reference clock in MHz and that clock's input.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LaneRate {
    /// Line rate, Gb/s.
    pub gbps: f64,
    /// Reference clock, MHz.
    pub refclk_mhz: f64,
    /// The quad's reference-clock input carrying it.
    pub refclk: &'static str,
}

/// 10.3125 Gb/s (user clock 156.25 MHz, the node's fabric clock) and 25.78125 Gb/s (user
/// clock 390.625 MHz on the 8-byte interface: the node's clock must then run at that rate).
pub const RATES: [LaneRate; 2] = [LaneRate { gbps: 10.3125, refclk_mhz: 156.25, refclk: "clk0" }, LaneRate { gbps: 25.78125, refclk_mhz: 161.1328125, refclk: "clk1" }];

/// Per link: its endpoint and, per lane, (cage, channel site).
pub fn assignment(config: &SystemConfig) -> Result<Vec<(Direction, Vec<(usize, &'static str)>)>, Error> {
    let board = config.board.name;
    let cages = cages(board).ok_or_else(|| Error::Input(format!("`board` = \"{board}\": transceiver wrappers are generated for the u200 and u280")))?;
    let lanes = config.node.link.lanes;
    let endpoints = config.node.endpoints();
    if endpoints.len() * lanes > 8 {
        return Err(Error::Input(format!("{} links of {lanes} lanes need {} transceiver channels; the {board}'s two QSFP28 cages have 8", endpoints.len(), endpoints.len() * lanes)));
    }
    Ok(endpoints.iter().enumerate().map(|(k, e)| (*e, (0..lanes).map(|l| ((k * lanes + l) / 4, cages[(k * lanes + l) / 4].sites[(k * lanes + l) % 4])).collect())).collect())
}

/// The channel sites of cage `k` the links use, in lane order.
pub(super) fn cage_sites(links: &[(Direction, Vec<(usize, &'static str)>)], k: usize) -> Vec<&'static str> {
    links.iter().flat_map(|(_, lanes)| lanes.iter().filter(|(c, _)| *c == k).map(|(_, s)| *s)).collect()
}

/// The Vivado script that creates the GT wizard IPs at `rate`.
pub fn gt_tcl(config: &SystemConfig, rate: LaneRate) -> Result<String, Error> {
    let links = assignment(config)?;
    let cages = cages(config.board.name).expect("checked by the assignment");
    let mut text = format!(
        "# {name}_gt.tcl — the transceivers of {name}_node_gt on the {board}: 64B/66B, asynchronous gearbox, {gbps} Gb/s from {mhz} MHz ({clk}).\n# Generated by weft {version}; do not edit. Regenerate with `weft generate`.\n",
        name = config.name,
        board = config.board.name,
        gbps = rate.gbps,
        mhz = rate.refclk_mhz,
        clk = rate.refclk,
        version = env!("CARGO_PKG_VERSION")
    );
    for (k, cage) in cages.iter().enumerate() {
        let used = cage_sites(&links, k);
        if used.is_empty() {
            continue;
        }
        let ip = format!("{}_gt_qsfp{k}", config.name);
        let links_here: Vec<String> = links.iter().filter(|(_, lanes)| lanes.iter().any(|(c, _)| *c == k)).map(|(e, _)| e.name()).collect();
        text.push_str(&format!("\n# QSFP{k} (quad {}): links {}\n", cage.quad, links_here.join(", ")));
        text.push_str(&format!("create_ip -name gtwizard_ultrascale -vendor xilinx.com -library ip -module_name {ip}\n"));
        text.push_str(&format!("set_property -dict [list CONFIG.preset {{GTY-10GBASE-R}}] [get_ips {ip}]\n"));
        let props = properties(rate, &used);
        text.push_str("set_property -dict [list \\\n");
        for (key, value) in props {
            text.push_str(&format!("    CONFIG.{key} {{{value}}} \\\n"));
        }
        text.push_str(&format!("] [get_ips {ip}]\ngenerate_target all [get_ips {ip}]\n"));
    }
    Ok(text)
}

/// The GT wizard parameters weft sets for a cage whose channels `sites` are used, at `rate`.
fn properties(rate: LaneRate, sites: &[&str]) -> Vec<(String, String)> {
    let refclk: Vec<String> = sites.iter().map(|s| format!("{s} {}", rate.refclk)).collect();
    let mut props: Vec<(String, String)> =
        [("CHANNEL_ENABLE", sites.join(" ")), ("TX_MASTER_CHANNEL", sites[0].to_string()), ("RX_MASTER_CHANNEL", sites[0].to_string())].map(|(k, v)| (k.to_string(), v)).to_vec();
    for side in ["TX", "RX"] {
        let coding = if side == "TX" { "TX_DATA_ENCODING" } else { "RX_DATA_DECODING" };
        props.push((coding.to_string(), "64B66B_ASYNC".into()));
        for (key, value) in [
            ("LINE_RATE", rate.gbps.to_string()),
            ("REFCLK_FREQUENCY", rate.refclk_mhz.to_string()),
            ("REFCLK_SOURCE", refclk.join(" ")),
            ("USER_DATA_WIDTH", "64".into()),
            ("INT_DATA_WIDTH", "64".into()),
        ] {
            props.push((format!("{side}_{key}"), value));
        }
    }
    props.push(("FREERUN_FREQUENCY".into(), "125".into()));
    // The quad's PLL and the reset controller inside the IP; the user clocks outside it: each
    // link's lanes come from another neighbour, recovered at its own frequency, so a cage's
    // channels cannot share the IP's one receive user clock (the RX master channel's); and every
    // channel transmits on the node's one fabric clock.
    // The width-sizing helper in the IP: its data ports are `gtwiz_userdata_tx_in` and
    // `gtwiz_userdata_rx_out`, 64 bits a channel.
    for (key, value) in [
        ("LOCATE_COMMON", "CORE"),
        ("LOCATE_RESET_CONTROLLER", "CORE"),
        ("LOCATE_TX_USER_CLOCKING", "EXAMPLE_DESIGN"),
        ("LOCATE_RX_USER_CLOCKING", "EXAMPLE_DESIGN"),
        ("LOCATE_USER_DATA_WIDTH_SIZING", "CORE"),
    ] {
        props.push((key.into(), value.into()));
    }
    props
}

/// `<cfg>_node_gt`: the node (defined in its own file) with a transceiver wrapper on every link.
pub fn node_gt(config: &SystemConfig, node: &Netlist) -> Result<Netlist, Error> {
    let links = assignment(config)?;
    let lanes = config.node.link.lanes;
    let wrapper = std::rc::Rc::new(gt_wrapper(lanes)?);
    let node_ports = verilog::ports(node);
    let d = Design::new();
    d.section(&format!("{}_node", config.name));
    let n = d.instance(&elsewhere(node), &format!("{}_node", config.name), "node");
    let mut wired = vec![];
    for (e, sites) in &links {
        let en = e.name();
        d.section(&format!("link {en}: lanes on channels {}", sites.iter().map(|s| s.1).collect::<Vec<_>>().join(", ")));
        let rx_clock = format!("{en}_rx_clk");
        let g = d.instance_clocked(&wrapper, "gt_lanes", &format!("gt_{en}"), &|_| rx_clock.clone());
        g.input("tx_serial").define(n.output(&format!("{en}_tx_serial")));
        n.input(&format!("{en}_rx_serial")).define(g.output("rx_serial"));
        for l in 0..lanes {
            for port in ["txheader", "txdata", "rxgearboxslip"] {
                d.output(&format!("{en}_gt_{port}{l}"), g.output(&format!("gt_{port}{l}")));
            }
            for (port, width) in [("rxheader", 2), ("rxdata", 64)] {
                g.input(&format!("gt_{port}{l}")).define(d.input(&format!("{en}_gt_{port}{l}"), width));
            }
        }
        d.output(&format!("{en}_gt_locked"), g.output("gt_locked"));
        wired.extend([format!("{en}_tx_serial"), format!("{en}_rx_serial")]);
    }
    for port in node_ports.iter().filter(|p| !wired.contains(&p.name)) {
        if port.output {
            d.output(&port.name, n.output(&port.name));
        } else {
            n.input(&port.name).define(d.input(&port.name, port.width));
        }
    }
    Ok(d.finish())
}

/// Whether `config`'s board gets transceiver files.
pub fn applies(config: &SystemConfig) -> bool {
    config.board.vendor == Vendor::Xilinx && cages(config.board.name).is_some()
}

/// The stub Vivado commands [`check_gt_tcl`] runs the script against.
const STUBS: &str = r#"
set problems {}
set ips {}
set allowed {preset CHANNEL_ENABLE TX_MASTER_CHANNEL RX_MASTER_CHANNEL TX_LINE_RATE RX_LINE_RATE TX_REFCLK_FREQUENCY RX_REFCLK_FREQUENCY TX_REFCLK_SOURCE RX_REFCLK_SOURCE TX_DATA_ENCODING RX_DATA_DECODING TX_USER_DATA_WIDTH TX_INT_DATA_WIDTH RX_USER_DATA_WIDTH RX_INT_DATA_WIDTH FREERUN_FREQUENCY LOCATE_COMMON LOCATE_RESET_CONTROLLER LOCATE_TX_USER_CLOCKING LOCATE_RX_USER_CLOCKING LOCATE_USER_DATA_WIDTH_SIZING}
proc create_ip {args} {
    global ips problems
    if {[lindex $args [expr {[lsearch $args -name] + 1}]] ne "gtwizard_ultrascale"} { lappend problems "create_ip: not the GT wizard" }
    lappend ips [lindex $args [expr {[lsearch $args -module_name] + 1}]]
}
proc get_ips {name} { global ips problems; if {[lsearch $ips $name] < 0} { lappend problems "get_ips $name: no such IP" }; return $name }
proc set_property {flag dict ip} {
    global allowed problems config
    foreach {key value} $dict {
        if {![string match CONFIG.* $key] || [lsearch $allowed [string range $key 7 end]] < 0} { lappend problems "$ip: $key is not a parameter weft sets" }
        dict set config $ip [string range $key 7 end] $value
    }
}
proc generate_target {what ip} {}
"#;

/// Runs the script in `tclsh` against stub Vivado commands, then checks what it configured:
/// every link's channel sites enabled on the cage the assignment names, the rate's line rate,
/// reference clock and clock input on both directions, the asynchronous 64B/66B gearbox.
pub fn check_gt_tcl(file: &std::path::Path, config: &SystemConfig, rate: LaneRate) -> Result<(), Error> {
    let links = assignment(config)?;
    let mut expect = String::new();
    for k in 0..2 {
        let sites = cage_sites(&links, k);
        if sites.is_empty() {
            continue;
        }
        let ip = format!("{}_gt_qsfp{k}", config.name);
        for (key, value) in [("preset".to_string(), "GTY-10GBASE-R".to_string())].into_iter().chain(properties(rate, &sites)) {
            expect.push_str(&format!("if {{![dict exists $config {ip} {key}] || [dict get $config {ip} {key}] ne {{{value}}}}} {{ lappend problems \"{ip}: {key} is not {{{value}}}\" }}\n"));
        }
    }
    let path = std::fs::canonicalize(file).map_err(|e| Error::from(e).context(file.display()))?;
    let script = format!("{STUBS}\nset config [dict create]\nsource {{{}}}\n{expect}foreach p $problems {{ puts $p }}\nexit [expr {{[llength $problems] > 0}}]\n", path.display());
    let dir = super::check_dir("weft-gt-tcl");
    std::fs::create_dir_all(&dir)?;
    let runner = dir.join("check_gt.tcl");
    std::fs::write(&runner, script)?;
    let out = weft_tools::run("tclsh", "apt-get install tcl", "tclsh", &[&runner.to_string_lossy()], &dir);
    let _ = std::fs::remove_dir_all(&dir);
    out.map(|_| ()).map_err(|e| Error::from(e).context(file.display()))
}
