//! The node with its transceivers inside, ready for the board's pins: `<cfg>_gt_top.v` and
//! `<cfg>_gt_top.xdc` (U200, U280).
//!
//! - `<cfg>_gt_top.v` instantiates `<cfg>_node_gt` and the GT wizard IPs of `<cfg>_gt.tcl`
//!   (`<cfg>_gt_qsfp<k>`, their ports as the wizard gives them with the common block, the reset
//!   controller and the width-sizing helper inside and the user clocking outside: PG182), the
//!   reference-clock buffers (`IBUFDS_GTE4`) and the user clocks (`BUFG_GT`): the node's fabric
//!   clock `clk` is the first channel's `TXOUTCLK` (line rate / 66 with the asynchronous
//!   gearbox: 156.25 MHz at 10.3125 Gb/s) and every channel's `TXUSRCLK`/`TXUSRCLK2`; each link
//!   receives on its first channel's `RXOUTCLK`, which is its `<e>_rx_clk` and its channels'
//!   `RXUSRCLK`/`RXUSRCLK2`. Resets: `rst` and `<e>_rx_rst` stay high until the IPs' reset
//!   controllers report their transmit and receive resets done (two registers on each clock). The
//!   top also drives the SI546's frequency select (high for 161.1328125 MHz) and output enable
//!   (low: on), and brings out `clk` and `rst` for the host logic beside the node.
//! - `<cfg>_gt_top.xdc`: the cages' lane and reference-clock pins, the reference clocks' periods
//!   and the control pins, from the board's master XDC. The free-running 125 MHz clock of
//!   the reset controllers (`freerun_clk`) comes from the user's design and is constrained there.

use std::fmt::Write;

use weft_hdl::netlist::verilog::Port;

use super::config::SystemConfig;
use super::transceivers::{assignment, cage_sites, cages, Cage, Drive, LaneRate};
use crate::Error;

/// The GT wizard's ports for `n` channels in one quad, as `<cfg>_gt.tcl` configures it: (name,
/// width, output).
pub fn ip_ports(n: usize) -> Vec<(&'static str, usize, bool)> {
    vec![
        ("gtwiz_userclk_tx_active_in", 1, false),
        ("gtwiz_userclk_rx_active_in", 1, false),
        ("gtwiz_reset_clk_freerun_in", 1, false),
        ("gtwiz_reset_all_in", 1, false),
        ("gtwiz_reset_tx_pll_and_datapath_in", 1, false),
        ("gtwiz_reset_tx_datapath_in", 1, false),
        ("gtwiz_reset_rx_pll_and_datapath_in", 1, false),
        ("gtwiz_reset_rx_datapath_in", 1, false),
        ("gtwiz_reset_rx_cdr_stable_out", 1, true),
        ("gtwiz_reset_tx_done_out", 1, true),
        ("gtwiz_reset_rx_done_out", 1, true),
        ("gtwiz_userdata_tx_in", 64 * n, false),
        ("gtwiz_userdata_rx_out", 64 * n, true),
        ("gtrefclk00_in", 1, false),
        ("qpll0outclk_out", 1, true),
        ("qpll0outrefclk_out", 1, true),
        ("gtyrxn_in", n, false),
        ("gtyrxp_in", n, false),
        ("gtytxn_out", n, true),
        ("gtytxp_out", n, true),
        ("rxgearboxslip_in", n, false),
        ("rxusrclk_in", n, false),
        ("rxusrclk2_in", n, false),
        ("txheader_in", 6 * n, false),
        ("txsequence_in", 7 * n, false),
        ("txusrclk_in", n, false),
        ("txusrclk2_in", n, false),
        ("gtpowergood_out", n, true),
        ("rxdatavalid_out", 2 * n, true),
        ("rxheader_out", 6 * n, true),
        ("rxheadervalid_out", 2 * n, true),
        ("rxoutclk_out", n, true),
        ("rxpmaresetdone_out", n, true),
        ("rxprgdivresetdone_out", n, true),
        ("rxstartofseq_out", 2 * n, true),
        ("txoutclk_out", n, true),
        ("txpmaresetdone_out", n, true),
        ("txprgdivresetdone_out", n, true),
    ]
}

/// A Verilog range for `width` bits (none for one bit), with its trailing space.
pub(super) fn range(width: usize) -> String {
    if width == 1 {
        String::new()
    } else {
        format!("[{}:0] ", width - 1)
    }
}

/// The cages the links use: (cage index, the used channel sites in lane order).
pub(super) fn used_cages(config: &SystemConfig) -> Result<Vec<(usize, Vec<&'static str>)>, Error> {
    let links = assignment(config)?;
    Ok((0..2).map(|k| (k, cage_sites(&links, k))).filter(|(_, s)| !s.is_empty()).collect())
}

/// `<cfg>_gt_top.v` at `rate`, around `<cfg>_node_gt` whose ports (clocks and resets aside) are
/// `node_gt` and whose clocks other than the fabric's and the links' receive clocks (a kernel
/// clock) are `other_clocks`, each with its reset: those come from outside the top.
pub fn gt_top(config: &SystemConfig, node_gt: &[Port], other_clocks: &[(String, String)], rate: LaneRate) -> Result<String, Error> {
    let name = &config.name;
    let links = assignment(config)?;
    let cages_used = used_cages(config)?;
    let board = cages(config.board.name).expect("checked by the assignment");
    // Each link's channels: (cage, index within the cage's IP).
    let channel = |k: usize, site: &str| cages_used.iter().find(|(c, _)| *c == k).and_then(|(_, s)| s.iter().position(|x| *x == site)).expect("an assigned site");
    let wired = |p: &str| ["_gt_txheader", "_gt_txdata", "_gt_rxgearboxslip", "_gt_rxheader", "_gt_rxdata"].iter().any(|s| p.contains(s));
    let passed: Vec<&Port> = node_gt.iter().filter(|p| !wired(&p.name)).collect();

    let mut t = format!(
        "// {name}_gt_top — {name}_node_gt on the {board}'s QSFP28 cages: the GT wizard IPs of {name}_gt.tcl ({gbps} Gb/s from {mhz} MHz), their reference clocks and user clocks; the node's fabric clock is the transmit user clock\n// Generated by weft {version}; do not edit. Regenerate with `weft generate`.\n`timescale 1ns/1ps\n\n",
        board = config.board.name,
        gbps = rate.gbps,
        mhz = rate.refclk_mhz,
        version = env!("CARGO_PKG_VERSION")
    );
    let mut header = vec!["freerun_clk".to_string(), "freerun_rst".to_string()];
    for (k, _) in &cages_used {
        header.extend(["refclk_p", "refclk_n", "rx_p", "rx_n", "tx_p", "tx_n"].iter().chain(board[*k].controls.iter().map(|c| &c.0)).map(|s| format!("qsfp{k}_{s}")));
    }
    header.extend(["clk".to_string(), "rst".to_string()]);
    header.extend(other_clocks.iter().flat_map(|(c, r)| [c.clone(), r.clone()]));
    header.extend(passed.iter().map(|p| p.name.clone()));
    writeln!(t, "module {name}_gt_top(\n{}\n);", header.iter().map(|h| format!("    {h}")).collect::<Vec<_>>().join(",\n")).unwrap();
    t.push_str("    // free-running clock of the transceivers' reset controllers (125 MHz: the IPs' FREERUN_FREQUENCY) and its reset\n    input wire freerun_clk;\n    input wire freerun_rst;\n");
    for (k, sites) in &cages_used {
        let n = sites.len();
        writeln!(t, "    // QSFP{k} (quad {}): reference clock ({}), lanes {}, control pins", board[*k].quad, rate.refclk, sites.join(", ")).unwrap();
        writeln!(t, "    input wire qsfp{k}_refclk_p;\n    input wire qsfp{k}_refclk_n;").unwrap();
        for (p, dir) in [("rx_p", "input"), ("rx_n", "input"), ("tx_p", "output"), ("tx_n", "output")] {
            writeln!(t, "    {dir} wire {}qsfp{k}_{p};", range(n)).unwrap();
        }
        for (suffix, _, _) in board[*k].controls {
            writeln!(t, "    output wire qsfp{k}_{suffix};").unwrap();
        }
    }
    t.push_str("    // the node's fabric clock (the transmit user clock) and its reset, for the logic beside the node\n    output wire clk;\n    output wire rst;\n");
    if !other_clocks.is_empty() {
        t.push_str("    // the node's other clocks (kernels' clocks) and their resets, from your design\n");
        for (c, r) in other_clocks {
            writeln!(t, "    input wire {c};\n    input wire {r};").unwrap();
        }
    }
    t.push_str("    // the node's ports\n");
    for p in &passed {
        writeln!(t, "    {} wire {}{};", if p.output { "output" } else { "input" }, range(p.width), p.name).unwrap();
    }

    let fast = rate.refclk == "clk1";
    for (k, sites) in &cages_used {
        let n = sites.len();
        let q = format!("qsfp{k}");
        writeln!(t, "\n    // ---- QSFP{k}: reference clock, transceivers {}", sites.join(", ")).unwrap();
        writeln!(t, "    wire {q}_refclk;\n    /* verilator lint_off PINCONNECTEMPTY */\n    IBUFDS_GTE4 #(.REFCLK_HROW_CK_SEL(2'b00)) {q}_refclk_buf (.I({q}_refclk_p), .IB({q}_refclk_n), .CEB(1'b0), .O({q}_refclk), .ODIV2());\n    /* verilator lint_on PINCONNECTEMPTY */").unwrap();
        t.push_str("    // the cage's control pins: the reference oscillator on, at the rate's frequency; the module out of reset\n");
        for (suffix, _, drive) in board[*k].controls {
            let bit = match drive {
                Drive::Low => false,
                Drive::High => true,
                Drive::Fast => fast,
                Drive::Slow => !fast,
            };
            writeln!(t, "    assign {q}_{suffix} = 1'b{};", u8::from(bit)).unwrap();
        }
        // The IP gives every channel's clocks, reset status and 6-bit headers; the top uses each
        // link's first channel's clocks and the headers' two bits.
        t.push_str("    /* verilator lint_off UNUSEDSIGNAL */\n");
        for (w, width) in [
            ("txoutclk", n),
            ("rxoutclk", n),
            ("txpmaresetdone", n),
            ("rxpmaresetdone", n),
            ("txusrclk", n),
            ("rxusrclk", n),
            ("rxgearboxslip", n),
            ("txdata", 64 * n),
            ("rxdata", 64 * n),
            ("txheader", 6 * n),
            ("rxheader", 6 * n),
        ] {
            writeln!(t, "    wire {}{q}_{w};", range(width)).unwrap();
        }
        writeln!(t, "    /* verilator lint_on UNUSEDSIGNAL */\n    wire {q}_tx_done;\n    wire {q}_rx_done;\n    wire {q}_rx_active;").unwrap();
    }

    t.push_str("\n    // ---- the fabric clock: the first channel's TXOUTCLK, every channel's transmit user clock\n");
    let (k0, _) = cages_used[0];
    writeln!(t, "    BUFG_GT fabric_clk_buf (.I(qsfp{k0}_txoutclk[0]), .CE(1'b1), .CEMASK(1'b0), .CLR(!qsfp{k0}_txpmaresetdone[0]), .CLRMASK(1'b0), .DIV(3'b000), .O(clk));").unwrap();
    for (k, sites) in &cages_used {
        writeln!(t, "    assign qsfp{k}_txusrclk = {{{}{{clk}}}};", sites.len()).unwrap();
    }
    t.push_str("    // the user clock runs once its buffer is out of clear: two registers on it\n");
    writeln!(t, "    reg [1:0] tx_active_sync = 2'b00;\n    always @(posedge clk or negedge qsfp{k0}_txpmaresetdone[0])\n        if (!qsfp{k0}_txpmaresetdone[0]) tx_active_sync <= 2'b00;\n        else tx_active_sync <= {{tx_active_sync[0], 1'b1}};").unwrap();
    let tx_done: Vec<String> = cages_used.iter().map(|(k, _)| format!("qsfp{k}_tx_done")).collect();
    writeln!(t, "    // the fabric's reset: until every transmitter's reset is done\n    reg [1:0] rst_sync = 2'b11;\n    always @(posedge clk) rst_sync <= {{rst_sync[0], !({})}};\n    assign rst = rst_sync[1];", tx_done.join(" & ")).unwrap();

    for (e, lanes) in &links {
        let en = e.name();
        let (k, first) = lanes[0];
        let c0 = channel(k, first);
        let q = format!("qsfp{k}");
        writeln!(t, "\n    // ---- link {en}: lanes on {}; it receives on {first}'s RXOUTCLK", lanes.iter().map(|l| l.1).collect::<Vec<_>>().join(", ")).unwrap();
        writeln!(t, "    wire {en}_rx_clk;\n    wire {en}_rx_rst;").unwrap();
        writeln!(t, "    BUFG_GT {en}_rx_clk_buf (.I({q}_rxoutclk[{c0}]), .CE(1'b1), .CEMASK(1'b0), .CLR(!{q}_rxpmaresetdone[{c0}]), .CLRMASK(1'b0), .DIV(3'b000), .O({en}_rx_clk));").unwrap();
        writeln!(t, "    reg [1:0] {en}_rx_active_sync = 2'b00;\n    always @(posedge {en}_rx_clk or negedge {q}_rxpmaresetdone[{c0}])\n        if (!{q}_rxpmaresetdone[{c0}]) {en}_rx_active_sync <= 2'b00;\n        else {en}_rx_active_sync <= {{{en}_rx_active_sync[0], 1'b1}};").unwrap();
        writeln!(
            t,
            "    reg [1:0] {en}_rx_rst_sync = 2'b11;\n    always @(posedge {en}_rx_clk) {en}_rx_rst_sync <= {{{en}_rx_rst_sync[0], !{q}_rx_done}};\n    assign {en}_rx_rst = {en}_rx_rst_sync[1];"
        )
        .unwrap();
        for (l, (k, site)) in lanes.iter().enumerate() {
            let c = channel(*k, site);
            let q = format!("qsfp{k}");
            writeln!(t, "    wire [1:0] {en}_gt_txheader{l};\n    wire [63:0] {en}_gt_txdata{l};\n    wire {en}_gt_rxgearboxslip{l};").unwrap();
            writeln!(t, "    assign {q}_rxusrclk[{c}] = {en}_rx_clk;").unwrap();
            writeln!(t, "    assign {q}_txdata[{}:{}] = {en}_gt_txdata{l};", 64 * c + 63, 64 * c).unwrap();
            writeln!(t, "    assign {q}_txheader[{}:{}] = {{4'b0000, {en}_gt_txheader{l}}};", 6 * c + 5, 6 * c).unwrap();
            writeln!(t, "    assign {q}_rxgearboxslip[{c}] = {en}_gt_rxgearboxslip{l};").unwrap();
            writeln!(t, "    wire [63:0] {en}_gt_rxdata{l} = {q}_rxdata[{}:{}];", 64 * c + 63, 64 * c).unwrap();
            writeln!(t, "    wire [1:0] {en}_gt_rxheader{l} = {q}_rxheader[{}:{}];", 6 * c + 1, 6 * c).unwrap();
        }
    }
    for (k, _) in &cages_used {
        let active: Vec<String> = links.iter().filter(|(_, l)| l[0].0 == *k).map(|(e, _)| format!("{}_rx_active_sync[1]", e.name())).collect();
        writeln!(t, "    assign qsfp{k}_rx_active = {};", if active.is_empty() { "1'b1".to_string() } else { active.join(" & ") }).unwrap();
    }

    for (k, sites) in &cages_used {
        let n = sites.len();
        let q = format!("qsfp{k}");
        writeln!(t, "\n    // ---- the GT wizard IP of QSFP{k} ({name}_gt.tcl)").unwrap();
        let connect = |port: &str, width: usize, output: bool| -> String {
            match port {
                "gtwiz_userclk_tx_active_in" => "tx_active_sync[1]".into(),
                "gtwiz_userclk_rx_active_in" => format!("{q}_rx_active"),
                "gtwiz_reset_clk_freerun_in" => "freerun_clk".into(),
                "gtwiz_reset_all_in" => "freerun_rst".into(),
                "gtwiz_reset_tx_done_out" => format!("{q}_tx_done"),
                "gtwiz_reset_rx_done_out" => format!("{q}_rx_done"),
                "gtwiz_userdata_tx_in" => format!("{q}_txdata"),
                "gtwiz_userdata_rx_out" => format!("{q}_rxdata"),
                "gtrefclk00_in" => format!("{q}_refclk"),
                "gtyrxn_in" => format!("{q}_rx_n"),
                "gtyrxp_in" => format!("{q}_rx_p"),
                "gtytxn_out" => format!("{q}_tx_n"),
                "gtytxp_out" => format!("{q}_tx_p"),
                "rxgearboxslip_in" => format!("{q}_rxgearboxslip"),
                "rxusrclk_in" | "rxusrclk2_in" => format!("{q}_rxusrclk"),
                "txusrclk_in" | "txusrclk2_in" => format!("{q}_txusrclk"),
                "txheader_in" => format!("{q}_txheader"),
                "rxheader_out" => format!("{q}_rxheader"),
                "txoutclk_out" => format!("{q}_txoutclk"),
                "rxoutclk_out" => format!("{q}_rxoutclk"),
                "txpmaresetdone_out" => format!("{q}_txpmaresetdone"),
                "rxpmaresetdone_out" => format!("{q}_rxpmaresetdone"),
                // The asynchronous gearbox has no sequence counter; no reset is asked by hand.
                _ if !output => format!("{{{width}{{1'b0}}}}"),
                _ => String::new(),
            }
        };
        let lines: Vec<String> = ip_ports(n).into_iter().map(|(p, w, o)| format!("        .{p}({})", connect(p, w, o))).collect();
        // Outputs left open: the PLL's clocks, power-good, the gearbox's data-valid flags (the
        // asynchronous gearbox's user data is valid every user-clock cycle).
        writeln!(t, "    /* verilator lint_off PINCONNECTEMPTY */\n    {name}_gt_qsfp{k} {q}_gt (\n{}\n    );\n    /* verilator lint_on PINCONNECTEMPTY */", lines.join(",\n")).unwrap();
    }

    writeln!(t, "\n    // ---- the node").unwrap();
    let mut conns = vec![".clk(clk)".to_string(), ".rst(rst)".to_string()];
    conns.extend(other_clocks.iter().flat_map(|(c, r)| [format!(".{c}({c})"), format!(".{r}({r})")]));
    for (e, lanes) in &links {
        let en = e.name();
        conns.extend([format!(".{en}_rx_clk({en}_rx_clk)"), format!(".{en}_rx_rst({en}_rx_rst)")]);
        for l in 0..lanes.len() {
            conns.extend(["txheader", "txdata", "rxgearboxslip", "rxheader", "rxdata"].iter().map(|s| format!(".{en}_gt_{s}{l}({en}_gt_{s}{l})")));
        }
    }
    conns.extend(passed.iter().map(|p| format!(".{0}({0})", p.name)));
    writeln!(t, "    {name}_node_gt node (\n{}\n    );\nendmodule", conns.iter().map(|c| format!("        {c}")).collect::<Vec<_>>().join(",\n")).unwrap();
    Ok(t)
}

/// `<cfg>_gt_top.xdc` at `rate`: lane pins, reference-clock pins and periods, control pins.
pub fn gt_xdc(config: &SystemConfig, rate: LaneRate) -> Result<String, Error> {
    let board = cages(config.board.name).expect("checked by the assignment");
    let clock = usize::from(rate.refclk == "clk1");
    let mut t = format!(
        "# {name}_gt_top.xdc — the {b}'s QSFP28 pins for {name}_gt_top at {gbps} Gb/s: lanes, the {mhz} MHz reference clocks ({clk}), the control pins (from the board's master XDC)\n# Generated by weft {version}; do not edit. Regenerate with `weft generate`.\n",
        name = config.name,
        b = config.board.name,
        gbps = rate.gbps,
        mhz = rate.refclk_mhz,
        clk = rate.refclk,
        version = env!("CARGO_PKG_VERSION")
    );
    for (k, sites) in used_cages(config)? {
        let cage = &board[k];
        let q = format!("qsfp{k}");
        writeln!(t, "\n# QSFP{k}: quad {}", cage.quad).unwrap();
        let (p, n) = cage.refclk[clock];
        writeln!(t, "set_property PACKAGE_PIN {p} [get_ports {q}_refclk_p]\nset_property PACKAGE_PIN {n} [get_ports {q}_refclk_n]").unwrap();
        writeln!(t, "create_clock -period {:.3} -name {q}_refclk [get_ports {q}_refclk_p]", 1000.0 / rate.refclk_mhz).unwrap();
        for (c, site) in sites.iter().enumerate() {
            let lane = cage.sites.iter().position(|s| s == site).expect("a site of the cage");
            let ((rp, rn), (tp, tn)) = (cage.rx[lane], cage.tx[lane]);
            writeln!(t, "# channel {site}").unwrap();
            for (pin, port) in [(rp, "rx_p"), (rn, "rx_n"), (tp, "tx_p"), (tn, "tx_n")] {
                writeln!(t, "set_property PACKAGE_PIN {pin} [get_ports {{{q}_{port}[{c}]}}]").unwrap();
            }
        }
        control_pins(&mut t, &q, cage);
    }
    Ok(t)
}

/// The XDC lines of a cage's control pins: pin, I/O standard, no timing to them (static levels).
fn control_pins(t: &mut String, q: &str, cage: &Cage) {
    for (suffix, pin, _) in cage.controls {
        writeln!(t, "set_property -dict {{PACKAGE_PIN {pin} IOSTANDARD {}}} [get_ports {q}_{suffix}]", cage.control_standard).unwrap();
    }
    let ports: Vec<String> = cage.controls.iter().map(|c| format!("{q}_{}", c.0)).collect();
    if !ports.is_empty() {
        writeln!(t, "set_false_path -to [get_ports {{{}}}]", ports.join(" ")).unwrap();
    }
}

/// Verilog stubs of what `<cfg>_gt_top.v` instantiates from Vivado's library and IP (the
/// wizard IPs with [`ip_ports`], `IBUFDS_GTE4`, `BUFG_GT`), for linting the top outside Vivado.
pub fn stubs(config: &SystemConfig) -> Result<String, Error> {
    let mut t = String::from("/* verilator lint_off UNUSEDSIGNAL */\n/* verilator lint_off UNDRIVEN */\n/* verilator lint_off DECLFILENAME */\n/* verilator lint_off UNUSEDPARAM */\n");
    t.push_str("module IBUFDS_GTE4 #(parameter [1:0] REFCLK_HROW_CK_SEL = 2'b00) (input wire I, input wire IB, input wire CEB, output wire O, output wire ODIV2);\n    assign O = I & !IB & !CEB;\n    assign ODIV2 = O;\nendmodule\n");
    t.push_str("module BUFG_GT(input wire I, input wire CE, input wire CEMASK, input wire CLR, input wire CLRMASK, input wire [2:0] DIV, output wire O);\n    assign O = I & CE & !CLR;\nendmodule\n");
    for (k, sites) in used_cages(config)? {
        let ports = ip_ports(sites.len());
        let decls: Vec<String> = ports.iter().map(|(p, w, o)| format!("    {} wire {}{p}", if *o { "output" } else { "input" }, range(*w))).collect();
        writeln!(t, "module {}_gt_qsfp{k}(\n{}\n);", config.name, decls.join(",\n")).unwrap();
        for (p, w, o) in &ports {
            if *o {
                writeln!(t, "    assign {p} = {w}'d0;").unwrap();
            }
        }
        t.push_str("endmodule\n");
    }
    t.push_str("/* verilator lint_on UNUSEDSIGNAL */\n/* verilator lint_on UNDRIVEN */\n/* verilator lint_on DECLFILENAME */\n/* verilator lint_on UNUSEDPARAM */\n");
    Ok(t)
}

/// Verilator's lint (-Wall) of `top` in `files` with [`stubs`] of the IPs and primitives.
pub(super) fn lint_with_stubs(config: &SystemConfig, files: &[&std::path::Path], top: &str) -> Result<(), Error> {
    let dir = super::check_dir("weft-gt-lint");
    std::fs::create_dir_all(&dir)?;
    let stub = dir.join("gt_stubs.v");
    std::fs::write(&stub, stubs(config)?)?;
    let all: Vec<&std::path::Path> = files.iter().copied().chain([stub.as_path()]).collect();
    let lint = weft_tools::verilator_lint_files(&all, top);
    let _ = std::fs::remove_dir_all(&dir);
    lint.map_err(|e| Error::from(e).context(format!("{top}: verilator lint failed")))
}

/// Checks the files of `gt`: the top with the node (`node`) and [`stubs`] passes Verilator's lint
/// with -Wall, and every port the XDC names exists on the top, every lane and reference-clock
/// port of the top gets a pin, and no pin is given twice.
pub fn check(config: &SystemConfig, node: &std::path::Path, gt: &super::Transceivers) -> Result<(), Error> {
    let top = format!("{}_gt_top", config.name);
    lint_with_stubs(config, &[node, gt.node_gt.as_path(), gt.top.as_path()], &top)?;
    let text = std::fs::read_to_string(&gt.top).map_err(|e| Error::from(e).context(gt.top.display()))?;
    let ports = weft_tools::ports::ports(&text, &top)?;
    // The stub `get_ports` matches Tcl globs, where `name[3]` matches `name3`: a bus is listed
    // by its bits that way, so an index past the bus matches nothing.
    let names: Vec<String> = ports.iter().flat_map(|p| std::iter::once(p.name.clone()).chain((0..if p.width > 1 { p.width } else { 0 }).map(move |b| format!("{}{b}", p.name)))).collect();
    super::constraints::check_constraints(&gt.xdc, &names, &[])?;
    let xdc = std::fs::read_to_string(&gt.xdc).map_err(|e| Error::from(e).context(gt.xdc.display()))?;
    let mut pins: Vec<(&str, &str)> = vec![];
    for line in xdc.lines() {
        let words: Vec<&str> = line.split_whitespace().collect();
        let pin = words.iter().position(|w| *w == "PACKAGE_PIN" || *w == "{PACKAGE_PIN").map(|i| words[i + 1]);
        // `[get_ports name]` or `[get_ports {name[k]}]`: the command's bracket, then the braces.
        let port = line.split("get_ports ").nth(1).map(|p| p.trim_end().trim_end_matches(']').trim_matches(|c| c == '{' || c == '}'));
        if let (Some(pin), Some(port)) = (pin, port) {
            if let Some((other, _)) = pins.iter().find(|(x, _)| *x == pin) {
                return Err(Error::Check(format!("{}: pin {pin} given to {port} and to {other}", gt.xdc.display())));
            }
            pins.push((pin, port));
        }
    }
    for p in ports.iter().filter(|p| p.name.starts_with("qsfp")) {
        let bits: Vec<String> = if p.width > 1 { (0..p.width).map(|b| format!("{}[{b}]", p.name)).collect() } else { vec![p.name.clone()] };
        for b in bits {
            if !pins.iter().any(|(_, port)| *port == b) {
                return Err(Error::Check(format!("{}: port {b} of {top} has no PACKAGE_PIN", gt.xdc.display())));
            }
        }
    }
    Ok(())
}
