//! The node with its transceivers inside as a Vitis RTL kernel (U280): `<cfg>_gt_krnl.v`,
//! `<cfg>_gt_kernel.xml`, `<cfg>_gt_package_xo.tcl` and `<cfg>_gt_vpp.cfg`, a ready-to-link kernel
//! the way AuroraFlow ships its Aurora kernel per QSFP28 cage.
//!
//! - `<cfg>_gt_krnl` wraps `<cfg>_gt_top` (the node, the GT wizard IPs, reference and user
//!   clocks): the node runs on the transceivers' transmit user clock (line rate / 66), so the
//!   kernel's AXI interfaces, which Vitis clocks with `ap_clk`, cross into it in
//!   `<cfg>_gt_krnl_cdc`: the register window (`s_axi_control`) through an AXI4-Lite crossing
//!   ([`weft_ip::axil_crossing`]), each IntraNode stream through an asynchronous FIFO of
//!   [`STREAM_DEPTH`] beats.
//! - Board-facing interfaces as the platform names them: per cage `gt_serial_port<k>`
//!   (`xilinx.com:interface:gt:1.0`, four lanes) and `gt_refclk<k>` (a differential clock), and
//!   `clk_gt_freerun`, the reset controllers' free-running clock. The linker configuration
//!   connects them to the U280 XDMA platform's `io_gt_qsfp<k>_00`, `io_clk_qsfp<k>_refclka_00`
//!   (the cage's MGTREFCLK0, 156.25 MHz) and `ii_level0_wire/ulp_m_aclk_freerun_ref_00`
//!   (100 MHz); the IPs are created with a 100 MHz free-running clock for it.
//! - Resets: `ap_rst_n` restarts the transceivers (their reset controllers' `reset_all`) and
//!   the crossings; each side of a crossing is held in reset while the other side is, so no
//!   pointer survives a reset on one side only, and the `ap_clk` side takes no request while
//!   it is held. The register window answers once the transmitters are out of reset (the node
//!   has no clock before).

use std::fmt::Write;
use std::path::Path;

use weft_hdl::netlist::stream::{Axis, AxisShape, Source};
use weft_hdl::netlist::{verilog, Design, Netlist, Reset, Sig};
use weft_ip::regmap::Register;
use weft_tools::ports::PortDecl;

use super::config::SystemConfig;
use super::gt_top::{range, used_cages};
use crate::Error;

/// Beats of each IntraNode stream's clock-crossing FIFO (at least 8 pass one beat a cycle of
/// the slower clock).
pub const STREAM_DEPTH: usize = 16;

/// The reset controllers' free-running clock on the platform, MHz.
pub const FREERUN_MHZ: u32 = 100;

/// The platform's free-running clock the kernel's `clk_gt_freerun` is connected to.
pub const PLATFORM_FREERUN: &str = "ii_level0_wire/ulp_m_aclk_freerun_ref_00";

/// The platform's GT interface of cage `k`.
pub fn platform_gt(k: usize) -> String {
    format!("io_gt_qsfp{k}_00")
}

/// The platform's reference clock of cage `k`: MGTREFCLK0, 156.25 MHz.
pub fn platform_refclk(k: usize) -> String {
    format!("io_clk_qsfp{k}_refclka_00")
}

/// The IntraNode streams of the node: (port prefix on the node, shape).
fn streams(node: &[PortDecl]) -> Vec<(String, AxisShape)> {
    let has = |n: &str| node.iter().find(|p| p.name == n).map(|p| p.width);
    node.iter()
        .filter_map(|p| p.name.strip_suffix("_tdata").filter(|b| b.starts_with("s_axis_p") || b.starts_with("m_axis_p")).map(|b| (b.to_string(), p.width)))
        .map(|(b, w)| {
            let shape =
                AxisShape { data: w, keep: has(&format!("{b}_tkeep")).is_some(), last: has(&format!("{b}_tlast")).is_some(), user: has(&format!("{b}_tuser")).unwrap_or(0), always_ready: false };
            (b, shape)
        })
        .collect()
}

/// `stream` with its handshake closed while `hold` is high.
fn held<'d>(d: &'d Design, stream: Source<'d>, hold: Sig<'d>) -> Source<'d> {
    let a = stream.0;
    let ready = d.later(1);
    a.ready.expect("a stream with tready").define(ready & !hold);
    Source(Axis { valid: a.valid & !hold, ready: Some(ready), ..a })
}

/// `<cfg>_gt_krnl_cdc`: the kernel's `ap_clk` side (`s_axi_control`, `s_axis_p<i>`,
/// `m_axis_p<i>`) and the node's side on `clk` (`m_axil` to the node's register window,
/// `to_node_p<i>` into the node's `s_axis_p<i>`, `from_node_p<i>` from its `m_axis_p<i>`).
/// Each side's crossings reset with `ap_side_rst` / `node_side_rst` and take nothing while
/// `ap_side_hold` / `node_side_hold` is high.
pub fn bridge(node: &[PortDecl]) -> Netlist {
    let d = Design::new();
    d.net().set_domain_ports(0, "ap_clk", Reset::Named("ap_side_rst".into()));
    let n = d.net().domain_named("clk");
    d.net().set_domain_ports(n, "clk", Reset::Named("node_side_rst".into()));
    let ap_hold = d.input("ap_side_hold", 1);
    d.net().set_domain(n);
    let node_hold = d.input("node_side_hold", 1);
    d.net().set_domain(0);
    let addr = node.iter().find(|p| p.name == "s_axil_awaddr").map_or(12, |p| p.width);
    d.section("the register window: s_axi_control (ap_clk) to the node's s_axil (clk)");
    weft_ip::axil_crossing::crossing(&d, "s_axi_control", "m_axil", addr, 0, n, Some(ap_hold));
    for (name, shape) in streams(node) {
        let i = &name[8..];
        if name.starts_with("s_axis") {
            d.section(&format!("IntraNode port {i}: s_axis_p{i} (ap_clk) into the node"));
            let input = held(&d, d.axis_in(&name, shape), ap_hold);
            let out = d.stream_crossing(&format!("p{i}_in_cdc"), STREAM_DEPTH, &input, 0, n);
            d.net().set_domain(n);
            d.connect(&out, &d.axis_out(&format!("to_node_p{i}"), shape)).expect("same shape");
        } else {
            d.section(&format!("IntraNode port {i}: from the node to m_axis_p{i} (ap_clk)"));
            d.net().set_domain(n);
            let input = held(&d, d.axis_in(&format!("from_node_p{i}"), shape), node_hold);
            let out = d.stream_crossing(&format!("p{i}_out_cdc"), STREAM_DEPTH, &input, n, 0);
            d.net().set_domain(0);
            d.connect(&out, &d.axis_out(&name, shape)).expect("same shape");
        }
        d.net().set_domain(0);
    }
    d.finish()
}

/// The kernel's ports as its header declares them: (name, input, width).
pub fn kernel_ports(config: &SystemConfig, node: &[PortDecl]) -> Result<Vec<(String, bool, usize)>, Error> {
    let mut ports = vec![("ap_clk".to_string(), true, 1), ("ap_rst_n".to_string(), true, 1), ("clk_gt_freerun".to_string(), true, 1)];
    for (k, sites) in used_cages(config)? {
        let lanes = sites.len();
        ports.extend([(format!("gt_refclk{k}_p"), true, 1), (format!("gt_refclk{k}_n"), true, 1)]);
        for (p, input) in [("grx_p", true), ("grx_n", true), ("gtx_p", false), ("gtx_n", false)] {
            ports.push((format!("gt_serial_port{k}_{p}"), input, lanes));
        }
    }
    ports.extend(super::vitis::host_ports(node));
    Ok(ports)
}

/// `<cfg>_gt_krnl.v`: the crossing module, then the kernel around `<cfg>_gt_top` (ports of the
/// node in `node`, the top's ports in `gt_top`).
pub fn kernel_file(config: &SystemConfig, node: &[PortDecl], gt_top: &[PortDecl]) -> Result<String, Error> {
    let name = &config.name;
    let top = format!("{name}_gt_krnl");
    let cdc = format!("{top}_cdc");
    let bridge = bridge(node);
    let mut t = format!(
        "// {top}: {name}_gt_top as a Vitis RTL kernel (ap_ctrl_none) with the transceivers inside.\n// Generated by weft {version}; do not edit. Regenerate with `weft generate`.\n// s_axi_control (the register window) and the IntraNode streams are on ap_clk and cross into the\n// node's clock, the transmit user clock; gt_serial_port<k> and gt_refclk<k> go to the platform's\n// QSFP28 cage k, clk_gt_freerun to its {FREERUN_MHZ} MHz free-running clock.\n`timescale 1ns/1ps\n\n",
        version = env!("CARGO_PKG_VERSION")
    );
    // The crossing module shares the kernel's file.
    t.push_str(&format!("/* verilator lint_off DECLFILENAME */\n{}/* verilator lint_on DECLFILENAME */\n", verilog::module(&bridge, &cdc)));
    let ports = kernel_ports(config, node)?;
    writeln!(t, "\nmodule {top}(\n{}\n);", ports.iter().map(|(p, _, _)| format!("    {p}")).collect::<Vec<_>>().join(",\n")).unwrap();
    t.push_str("    // Vitis's kernel clock and active-low reset; the transceivers' free-running clock\n");
    for (p, input, width) in &ports {
        if p.starts_with("gt_refclk") && p.ends_with("_p") {
            writeln!(t, "    // QSFP28 cage {}: reference clock and lanes", &p[9..p.len() - 2]).unwrap();
        }
        if p == "s_axi_control_awaddr" {
            t.push_str("    // the register window and the IntraNode streams, on ap_clk\n");
        }
        writeln!(t, "    {} wire {}{p};", if *input { "input" } else { "output" }, range(*width)).unwrap();
    }
    t.push_str(
        "\n    // ---- resets: ap_rst_n registered; it restarts the transceivers (through the free-running\n    // clock's domain) and both sides of the crossings, each side held while the other is\n    wire clk;\n    wire rst;\n    reg ap_rst = 1'b1;\n    always @(posedge ap_clk) ap_rst <= !ap_rst_n;\n    (* ASYNC_REG = \"TRUE\" *) reg [1:0] freerun_rst_sync = 2'b11;\n    always @(posedge clk_gt_freerun) freerun_rst_sync <= {freerun_rst_sync[0], ap_rst};\n    (* ASYNC_REG = \"TRUE\" *) reg [1:0] ap_rst_on_clk = 2'b11;\n    always @(posedge clk) ap_rst_on_clk <= {ap_rst_on_clk[0], ap_rst};\n    wire node_side_rst = rst | ap_rst_on_clk[1];\n    (* ASYNC_REG = \"TRUE\" *) reg [1:0] node_rst_on_ap = 2'b11;\n    always @(posedge ap_clk) node_rst_on_ap <= {node_rst_on_ap[0], node_side_rst};\n    wire ap_side_rst = ap_rst | node_rst_on_ap[1];\n",
    );
    // Wires between the crossing and the top: the crossing's node-side ports.
    let bridge_ports = verilog::header_ports(&bridge);
    t.push_str("\n    // ---- between the crossings and the node\n");
    for p in bridge_ports.iter().filter(|p| p.name.starts_with("m_axil_") || p.name.starts_with("to_node_") || p.name.starts_with("from_node_")) {
        writeln!(t, "    wire {}{};", range(p.width), p.name).unwrap();
    }
    t.push_str("\n    // ---- the crossings\n");
    let conns: Vec<String> = bridge_ports
        .iter()
        .map(|p| {
            let to = match p.name.as_str() {
                "ap_side_hold" => "ap_side_rst".to_string(),
                "node_side_hold" => "node_side_rst".to_string(),
                n => n.to_string(),
            };
            format!("        .{}({to})", p.name)
        })
        .collect();
    writeln!(t, "    {cdc} cdc (\n{}\n    );", conns.join(",\n")).unwrap();
    t.push_str("\n    // ---- the node with its transceivers\n");
    let mut conns = vec![];
    for p in gt_top {
        let to = if p.name == "freerun_clk" {
            "clk_gt_freerun".to_string()
        } else if p.name == "freerun_rst" {
            "freerun_rst_sync[1]".to_string()
        } else if p.name == "clk" || p.name == "rst" {
            p.name.clone()
        } else if let Some(rest) = p.name.strip_prefix("qsfp") {
            let (k, sig) = rest.split_once('_').expect("qsfp<k>_<signal>");
            match sig {
                "refclk_p" | "refclk_n" => format!("gt_refclk{k}_{}", &sig[7..]),
                "rx_p" | "rx_n" => format!("gt_serial_port{k}_grx_{}", &sig[3..]),
                "tx_p" | "tx_n" => format!("gt_serial_port{k}_gtx_{}", &sig[3..]),
                // The cage's oscillator and module pins belong to the platform.
                _ => String::new(),
            }
        } else if let Some(sig) = p.name.strip_prefix("s_axil_") {
            format!("m_axil_{sig}")
        } else if let Some(rest) = p.name.strip_prefix("s_axis_p") {
            format!("to_node_p{rest}")
        } else if let Some(rest) = p.name.strip_prefix("m_axis_p") {
            format!("from_node_p{rest}")
        } else if p.input {
            return Err(Error::Input(format!("{name}_gt_krnl: the node's input `{}` has no source in a Vitis kernel (a system with a kernel clock or a wired kernel is not supported here)", p.name)));
        } else {
            // Status outputs (block lock per lane) are read in the register window.
            String::new()
        };
        conns.push(format!("        .{}({to})", p.name));
    }
    writeln!(t, "    /* verilator lint_off PINCONNECTEMPTY */\n    {name}_gt_top gt (\n{}\n    );\n    /* verilator lint_on PINCONNECTEMPTY */\nendmodule", conns.join(",\n")).unwrap();
    Ok(t)
}

/// `<cfg>_gt_kernel.xml`: as the plain kernel's, for this kernel's streams.
pub fn kernel_xml(config: &SystemConfig, node: &[PortDecl], map: &[Register]) -> Result<String, Error> {
    let streams: Vec<(String, bool, usize)> = kernel_ports(config, node)?.into_iter().filter(|(n, _, _)| n.ends_with("_tdata") && !n.starts_with("s_axi_control")).collect();
    Ok(super::vitis::kernel_xml_for(&format!("{}_gt_krnl", config.name), &streams, map))
}

/// The Vivado batch script that packages `<cfg>_gt_krnl` into `<cfg>_gt.xo`: the GT wizard IPs
/// from `<cfg>_gt.tcl` (their free-running clock set to the platform's), the Verilog, the
/// board-facing bus interfaces, then `package_xo`.
pub fn package_tcl(config: &SystemConfig, node: &[PortDecl]) -> Result<String, Error> {
    let name = &config.name;
    let top = format!("{name}_gt_krnl");
    let buses: Vec<String> = kernel_ports(config, node)?.into_iter().filter_map(|(n, _, _)| n.strip_suffix("_tdata").map(String::from)).collect();
    let mut t = format!(
        "# Packages {top} (the node with its transceivers) as a Vitis RTL kernel:\n# vivado -mode batch -source {name}_gt_package_xo.tcl writes {name}_gt.xo beside this script.\n# Generated by weft {version}; do not edit. Regenerate with `weft generate`.\nset root [file dirname [file normalize [info script]]]\ncreate_project -force {name}_gt_krnl_pack $root/{name}_gt_krnl_pack -part {part}\n# The GT wizard IPs, their reset controllers on the platform's {FREERUN_MHZ} MHz free-running clock\nsource $root/{name}_gt.tcl\n",
        version = env!("CARGO_PKG_VERSION"),
        part = config.board.part
    );
    let cages = used_cages(config)?;
    for (k, _) in &cages {
        writeln!(t, "set_property -dict [list CONFIG.FREERUN_FREQUENCY {{{FREERUN_MHZ}}}] [get_ips {name}_gt_qsfp{k}]\ngenerate_target all [get_ips {name}_gt_qsfp{k}]").unwrap();
    }
    writeln!(
        t,
        "add_files -norecurse [list $root/{name}_node.v $root/{name}_node_gt.v $root/{name}_gt_top.v $root/{top}.v]\nset_property top {top} [current_fileset]\nupdate_compile_order -fileset sources_1\nipx::package_project -root_dir $root/{top}_ip -vendor weft -library kernel -taxonomy /KernelIP -import_files -set_current false\nipx::unload_core $root/{top}_ip/component.xml\nipx::edit_ip_in_project -upgrade true -name {top}_edit -directory $root/{top}_pack $root/{top}_ip/component.xml\nset core [ipx::current_core]\nset_property sdx_kernel true $core\nset_property sdx_kernel_type rtl $core\n# clk_gt_freerun is a plain port, not a kernel clock\nipx::remove_bus_interface clk_gt_freerun $core"
    )
    .unwrap();
    for (k, _) in &cages {
        writeln!(t, "# QSFP28 cage {k}: the lanes as a GT interface, the reference clock as a differential clock").unwrap();
        writeln!(t, "ipx::add_bus_interface gt_serial_port{k} $core\nset_property interface_mode master [ipx::get_bus_interfaces gt_serial_port{k} -of_objects $core]\nset_property abstraction_type_vlnv xilinx.com:interface:gt_rtl:1.0 [ipx::get_bus_interfaces gt_serial_port{k} -of_objects $core]\nset_property bus_type_vlnv xilinx.com:interface:gt:1.0 [ipx::get_bus_interfaces gt_serial_port{k} -of_objects $core]").unwrap();
        for (logical, physical) in [("GRX_P", "grx_p"), ("GRX_N", "grx_n"), ("GTX_P", "gtx_p"), ("GTX_N", "gtx_n")] {
            writeln!(t, "ipx::add_port_map {logical} [ipx::get_bus_interfaces gt_serial_port{k} -of_objects $core]\nset_property physical_name gt_serial_port{k}_{physical} [ipx::get_port_maps {logical} -of_objects [ipx::get_bus_interfaces gt_serial_port{k} -of_objects $core]]").unwrap();
        }
        writeln!(t, "ipx::add_bus_interface gt_refclk{k} $core\nset_property interface_mode slave [ipx::get_bus_interfaces gt_refclk{k} -of_objects $core]\nset_property abstraction_type_vlnv xilinx.com:interface:diff_clock_rtl:1.0 [ipx::get_bus_interfaces gt_refclk{k} -of_objects $core]\nset_property bus_type_vlnv xilinx.com:interface:diff_clock:1.0 [ipx::get_bus_interfaces gt_refclk{k} -of_objects $core]").unwrap();
        for (logical, physical) in [("CLK_P", "p"), ("CLK_N", "n")] {
            writeln!(t, "ipx::add_port_map {logical} [ipx::get_bus_interfaces gt_refclk{k} -of_objects $core]\nset_property physical_name gt_refclk{k}_{physical} [ipx::get_port_maps {logical} -of_objects [ipx::get_bus_interfaces gt_refclk{k} -of_objects $core]]").unwrap();
        }
    }
    writeln!(
        t,
        "foreach busif {{s_axi_control {buses}}} {{\n    ipx::associate_bus_interfaces -busif $busif -clock ap_clk $core\n}}\nipx::update_checksums $core\nipx::check_integrity -kernel $core\nipx::save_core $core\nclose_project -delete\npackage_xo -force -xo_path $root/{name}_gt.xo -kernel_name {top} -ip_directory $root/{top}_ip -kernel_xml $root/{name}_gt_kernel.xml",
        buses = buses.join(" ")
    )
    .unwrap();
    Ok(t)
}

/// `<cfg>_gt_vpp.cfg`: one instance `weft` on the platform's cages, reference clocks and
/// free-running clock, and the IntraNode ports' kernels as in the plain kernel's configuration.
pub fn connectivity(config: &SystemConfig, node: &[PortDecl]) -> Result<String, Error> {
    let name = &config.name;
    let top = format!("{name}_gt_krnl");
    let mut t = format!(
        "# v++ --link --config {name}_gt_vpp.cfg {name}_gt.xo <your kernels>.xo ...: the node with its transceivers as one\n# kernel instance `weft` on the U280 XDMA platform's QSFP28 cages. Generated by weft.\n# ap_clk carries the register window and the IntraNode streams (the kernels' clock); the node runs\n# on the transceivers' clock inside.\nkernel_frequency=0:{}\n\n[connectivity]\nnk={top}:1:weft\nconnect={PLATFORM_FREERUN}:weft/clk_gt_freerun\n",
        config.kernel_mhz.unwrap_or(config.fabric_mhz)
    );
    for (k, _) in used_cages(config)? {
        writeln!(t, "connect={}:weft/gt_refclk{k}\nconnect=weft/gt_serial_port{k}:{}", platform_refclk(k), platform_gt(k)).unwrap();
    }
    t.push_str(&super::vitis::stream_connects(config, node));
    Ok(t)
}

/// Runs the packaging script in `tclsh` against stub Vivado commands (the plain kernel's, with
/// the IP and bus-interface commands): files that exist, the kernel's top, the streams, the
/// IPs `<cfg>_gt.tcl` creates, and every port map naming a port of the kernel (`ports`); then
/// checks that every `connect=weft/<interface>` of the linker configuration names a bus
/// interface the script declared.
pub fn check(config: &SystemConfig, package: &Path, linker: &Path, ports: &[String], buses: &[String]) -> Result<(), Error> {
    let declared = super::vitis::check_package_with(package, &format!("{}_gt_krnl", config.name), buses, ports, GT_STUBS)?;
    let text = std::fs::read_to_string(linker).map_err(|e| Error::from(e).context(linker.display()))?;
    for line in text.lines().filter_map(|l| l.strip_prefix("connect=")) {
        for end in line.split(':') {
            if let Some(intf) = end.strip_prefix("weft/") {
                if intf != "clk_gt_freerun" && !declared.iter().any(|d| d == intf) {
                    return Err(Error::Check(format!("{}: connect names weft/{intf}, which {} does not declare", linker.display(), package.display())));
                }
                if intf == "clk_gt_freerun" && !ports.iter().any(|p| p == intf) {
                    return Err(Error::Check(format!("{}: the kernel has no port clk_gt_freerun", linker.display())));
                }
            }
        }
    }
    Ok(())
}

/// Stub commands for the IPs and bus interfaces: `create_ip` (the GT wizard only),
/// `get_ips` of a created IP, bus interfaces added before use, physical names that are ports.
const GT_STUBS: &str = r#"
set ips {}
set declared {}
proc create_ip {args} {
    global ips problems
    if {[opt $args -name] ne "gtwizard_ultrascale"} { lappend problems "create_ip: not the GT wizard" }
    lappend ips [opt $args -module_name]
}
proc get_ips {name} { global ips problems; if {[lsearch -exact $ips $name] < 0} { lappend problems "get_ips $name: no such IP" }; return $name }
proc generate_target {what ip} {}
namespace eval ipx {
    proc remove_bus_interface {name core} {
        global ports problems
        if {[lsearch -exact $ports $name] < 0} { lappend problems "remove_bus_interface: the kernel has no port $name" }
    }
    proc add_bus_interface {name core} { global declared; lappend declared $name }
    proc get_bus_interfaces {name args} {
        global declared problems
        if {[lsearch -exact $declared $name] < 0} { lappend problems "get_bus_interfaces $name: not added" }
        return [list busif $name]
    }
    proc add_port_map {logical busif} { return [list portmap $logical] }
    proc get_port_maps {logical args} { return [list portmap $logical] }
}
"#;
