//! The node as a Vitis RTL kernel, the way seed 004's Communication IP ships (an `.xo` that
//! `v++ --link` stream-connects to the user's kernels): a wrapper `<cfg>_krnl` with Vitis's
//! clock and reset (`ap_clk`, active-low `ap_rst_n`) and control interface (`s_axi_control` =
//! the register window), `kernel.xml`, the Tcl that packages it with `package_xo`, and the
//! `v++` linker configuration. Only for Xilinx boards.
//!
//! Vitis kernels expose AXI interfaces only, so each link endpoint's lanes become AXI4-Stream
//! ports to and from a transceiver kernel (`m_axis_<e>_tx`, `s_axis_<e>_rx`: one 66-bit block
//! per lane per cycle, each lane padded to 72 bits; `tx` is always valid, a cycle without `rx`
//! valid is a lost block), and the `channel_up`/`link_up` wires are read in the register window
//! (link status) instead. Those streams are on `ap_clk` (the transceiver kernel crosses its
//! recovered clocks), so each endpoint receives on `ap_clk` here; its elastic buffer then only
//! absorbs the stream's gaps.

use crate::Error;
use std::path::Path;

use weft_hdl::netlist::{Design, Netlist, Reset, Sig};
use weft_ip::regmap::Register;
use weft_tools::ports::PortDecl;

use super::config::SystemConfig;

/// Bits of one lane on the kernel's transceiver streams (a 66-bit block padded to bytes).
pub const LANE_BITS: usize = 72;

/// Link endpoints of the node: names with a `<e>_rx_serial` port, and their lane counts.
fn endpoints<'a>(ports: impl IntoIterator<Item = (&'a str, usize)>) -> Vec<(String, usize)> {
    ports.into_iter().filter_map(|(name, width)| name.strip_suffix("_rx_serial").map(|e| (e.to_string(), width / 66))).collect()
}

/// The kernel's ports: (name, input, width).
pub fn kernel_ports(node: &[PortDecl]) -> Vec<(String, bool, usize)> {
    let mut ports = vec![("ap_clk".to_string(), true, 1), ("ap_rst_n".to_string(), true, 1)];
    // Wired kernels on their own clock: Vitis's second kernel clock.
    if node.iter().any(|p| p.name == "kernel_clk") {
        ports.extend([("ap_clk_2".to_string(), true, 1), ("ap_rst_n_2".to_string(), true, 1)]);
    }
    ports.extend(host_ports(node));
    for (e, lanes) in endpoints(node.iter().map(|p| (p.name.as_str(), p.width))) {
        ports.push((format!("m_axis_{e}_tx_tdata"), false, lanes * LANE_BITS));
        ports.push((format!("m_axis_{e}_tx_tvalid"), false, 1));
        ports.push((format!("s_axis_{e}_rx_tdata"), true, lanes * LANE_BITS));
        ports.push((format!("s_axis_{e}_rx_tvalid"), true, 1));
        ports.push((format!("s_axis_{e}_rx_tready"), false, 1));
    }
    ports
}

/// The node's register window as `s_axi_control_*`, then its IntraNode streams: (name, input,
/// width), as a kernel around the node declares them.
pub fn host_ports(node: &[PortDecl]) -> Vec<(String, bool, usize)> {
    let control = node.iter().filter_map(|p| p.name.strip_prefix("s_axil_").map(|sig| (format!("s_axi_control_{sig}"), p.input, p.width)));
    let streams = node.iter().filter(|p| p.name.starts_with("s_axis_p") || p.name.starts_with("m_axis_p")).map(|p| (p.name.clone(), p.input, p.width));
    control.chain(streams).collect()
}

/// `<cfg>_krnl`: the node behind Vitis's port conventions, as a netlist design that instantiates
/// the node module (`node`: the node design).
pub fn kernel_design(config: &SystemConfig, node: &Netlist) -> Result<Netlist, Error> {
    let node_ports = weft_hdl::netlist::verilog::ports(node);
    let has_kernel_clock = node.domains.iter().any(|d| d.name == "kernel_clk");
    let node = super::tops::elsewhere(node);
    let d = Design::new();
    // The node's synchronous active-high resets, registered from Vitis's active-low ones.
    let low = |port: &str, reset: &str| Reset::Low { port: port.into(), reset: reset.into() };
    d.net().set_domain_ports(0, "ap_clk", low("ap_rst_n", "rst"));
    if has_kernel_clock {
        d.net().set_domain_ports(1, "ap_clk_2", low("ap_rst_n_2", "rst_2"));
    }
    d.section(&format!("{}_node", config.name));
    // The transceiver kernel's streams arrive on ap_clk (it crossed them already); the wired
    // kernels run on Vitis's second kernel clock.
    let inst = d.instance_clocked(&node, &format!("{}_node", config.name), "node", &|c| if c == "kernel_clk" { "ap_clk_2".into() } else { "ap_clk".into() });
    for p in &node_ports {
        let outer = match p.name.strip_prefix("s_axil_") {
            Some(sig) => format!("s_axi_control_{sig}"),
            None if p.name.starts_with("s_axis_p") || p.name.starts_with("m_axis_p") => p.name.clone(),
            // Serial lanes, below; link state is read through the register window.
            None => continue,
        };
        if p.output {
            d.output(&outer, inst.output(&p.name));
        } else {
            inst.input(&p.name).define(d.input(&outer, p.width));
        }
    }
    d.section(&format!("link lanes: 66-bit blocks in {LANE_BITS}-bit slots"));
    for (e, lanes) in endpoints(node_ports.iter().map(|p| (p.name.as_str(), p.width))) {
        let tx = inst.output(&format!("{e}_tx_serial"));
        let slots: Vec<Sig> = (0..lanes).rev().map(|l| d.lit(0, LANE_BITS - 66).cat(tx.bits(66 * l, 66))).collect();
        d.output(&format!("m_axis_{e}_tx_tdata"), d.cat(&slots));
        d.output(&format!("m_axis_{e}_tx_tvalid"), d.lit(1, 1));
        let rx = d.input(&format!("s_axis_{e}_rx_tdata"), lanes * LANE_BITS);
        let rx_valid = d.input(&format!("s_axis_{e}_rx_tvalid"), 1);
        let blocks: Vec<Sig> = (0..lanes).rev().map(|l| rx.bits(LANE_BITS * l, 66)).collect();
        inst.input(&format!("{e}_rx_serial")).define(rx_valid.mux(d.cat(&blocks), d.lit(0, 66 * lanes)));
        d.output(&format!("s_axis_{e}_rx_tready"), d.lit(1, 1));
    }
    Ok(d.finish())
}

/// The Verilog of `<cfg>_krnl`.
pub fn kernel_top(config: &SystemConfig, node: &Netlist) -> Result<String, Error> {
    let top = format!("{}_krnl", config.name);
    let mut t = format!(
        "// {top}: {name}_node as a Vitis RTL kernel (ap_ctrl_none). Generated by weft.\n\
         // ap_clk is the fabric clock ({mhz} MHz), ap_rst_n its active-low reset; s_axi_control is the\n\
         // register window; link lanes travel as AXI4-Stream to and from a transceiver kernel, one\n\
         // 66-bit block per lane per cycle in {LANE_BITS}-bit slots.\n",
        name = config.name,
        mhz = config.fabric_mhz
    );
    t.push_str(&weft_hdl::netlist::verilog::module(&kernel_design(config, node)?, &top));
    Ok(t)
}

/// `kernel.xml`: the kernel's interfaces for `v++`; every read-write register is a scalar
/// argument on `s_axi_control` at its address.
pub fn kernel_xml(config: &SystemConfig, node: &[PortDecl], map: &[Register]) -> String {
    let streams: Vec<(String, bool, usize)> = kernel_ports(node).into_iter().filter(|(n, _, _)| n.ends_with("_tdata")).collect();
    kernel_xml_for(&format!("{}_krnl", config.name), &streams, map)
}

/// `kernel.xml` of kernel `top` with the streams `streams` (their `_tdata` ports: name, input,
/// width) and the register window of `map` on `s_axi_control`.
pub fn kernel_xml_for(top: &str, streams: &[(String, bool, usize)], map: &[Register]) -> String {
    let mut ports = vec!["      <port name=\"s_axi_control\" mode=\"slave\" range=\"0x1000\" dataWidth=\"32\" portType=\"addressable\" base=\"0x0\"/>".to_string()];
    let mut args = vec![];
    let mut id = 0;
    for r in map.iter().filter(|r| r.writable()) {
        args.push(format!(
            "      <arg name=\"{}\" addressQualifier=\"0\" id=\"{id}\" port=\"s_axi_control\" size=\"0x4\" offset=\"0x{:X}\" hostOffset=\"0x0\" hostSize=\"0x4\" type=\"uint\"/>",
            r.name, r.addr
        ));
        id += 1;
    }
    for (name, input, width) in streams {
        if let Some(bus) = name.strip_suffix("_tdata") {
            let mode = if *input { "read_only" } else { "write_only" };
            ports.push(format!("      <port name=\"{bus}\" mode=\"{mode}\" dataWidth=\"{width}\" portType=\"stream\"/>"));
            args.push(format!(
                "      <arg name=\"{bus}\" addressQualifier=\"4\" id=\"{id}\" port=\"{bus}\" size=\"0x0\" offset=\"0x0\" hostOffset=\"0x0\" hostSize=\"0x0\" type=\"stream&lt;qdma_axis&lt;{width},0,0,0&gt;&gt;&amp;\"/>"
            ));
            id += 1;
        }
    }
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!-- {top}: generated by weft. -->\n<root versionMajor=\"1\" versionMinor=\"6\">\n  <kernel name=\"{top}\" language=\"ip_c\" vlnv=\"weft:kernel:{top}:1.0\" attributes=\"\" preferredWorkGroupSizeMultiple=\"0\" workGroupSize=\"1\" interrupt=\"false\" hwControlProtocol=\"ap_ctrl_none\">\n    <ports>\n{}\n    </ports>\n    <args>\n{}\n    </args>\n  </kernel>\n</root>\n",
        ports.join("\n"),
        args.join("\n")
    )
}

/// The Vivado batch script that packages the kernel into `<cfg>.xo` (`vivado -mode batch -source
/// <cfg>_package_xo.tcl`, from any folder).
pub fn package_tcl(config: &SystemConfig, node: &[PortDecl]) -> String {
    let name = &config.name;
    let top = format!("{name}_krnl");
    let buses: Vec<String> = kernel_ports(node).into_iter().filter_map(|(n, _, _)| n.strip_suffix("_tdata").map(String::from)).collect();
    format!(
        "# Packages {top} as a Vitis RTL kernel: vivado -mode batch -source {name}_package_xo.tcl\n\
         # writes {name}.xo beside this script. Generated by weft.\n\
         set root [file dirname [file normalize [info script]]]\n\
         create_project -force {name}_krnl_pack $root/{name}_krnl_pack -part {part}\n\
         add_files -norecurse [list $root/{name}_node.v $root/{name}_krnl.v]\n\
         set_property top {top} [current_fileset]\n\
         update_compile_order -fileset sources_1\n\
         ipx::package_project -root_dir $root/{name}_krnl_ip -vendor weft -library kernel -taxonomy /KernelIP -import_files -set_current false\n\
         ipx::unload_core $root/{name}_krnl_ip/component.xml\n\
         ipx::edit_ip_in_project -upgrade true -name {name}_krnl_edit -directory $root/{name}_krnl_pack $root/{name}_krnl_ip/component.xml\n\
         set core [ipx::current_core]\n\
         set_property sdx_kernel true $core\n\
         set_property sdx_kernel_type rtl $core\n\
         foreach busif {{s_axi_control {buses}}} {{\n\
         \x20   ipx::associate_bus_interfaces -busif $busif -clock ap_clk $core\n\
         }}\n\
         ipx::update_checksums $core\n\
         ipx::check_integrity -kernel $core\n\
         ipx::save_core $core\n\
         close_project -delete\n\
         package_xo -force -xo_path $root/{name}.xo -kernel_name {top} -ip_directory $root/{name}_krnl_ip -kernel_xml $root/{name}_kernel.xml\n",
        part = config.board.part,
        buses = buses.join(" ")
    )
}

/// The `v++ --link --config` file: the kernel's clock, one instance `weft`, and a
/// `stream_connect` pair for every IntraNode port with a kernel (each kernel's own `.xo`
/// provides `s_axis`/`m_axis`); the other ports and the transceiver streams as commented
/// templates.
pub fn connectivity(config: &SystemConfig, node: &[PortDecl]) -> String {
    let top = format!("{}_krnl", config.name);
    let mut t = format!(
        "# v++ --link --config {}_vpp.cfg {}.xo <your kernels>.xo ...: the Communication IP as one\n# kernel instance `weft`, user kernels on its IntraNode ports. Generated by weft.\nkernel_frequency=0:{}\n\n[connectivity]\nnk={top}:1:weft\n",
        config.name, config.name, config.fabric_mhz
    );
    t.push_str(&stream_connects(config, node));
    for (e, lanes) in endpoints(node.iter().map(|p| (p.name.as_str(), p.width))) {
        t.push_str(&format!(
            "# Link {e} ({lanes} lanes): to and from your transceiver kernel\n# stream_connect=weft.m_axis_{e}_tx:<gt kernel>.<tx>\n# stream_connect=<gt kernel>.<rx>:weft.s_axis_{e}_rx\n"
        ));
    }
    t
}

/// The linker lines of the IntraNode ports of instance `weft`: a `stream_connect` pair for each
/// port with a kernel (its `.xo` provides `s_axis`/`m_axis`), a commented template for the others.
pub fn stream_connects(config: &SystemConfig, node: &[PortDecl]) -> String {
    let mut t = String::new();
    // Ports inside the node (an allreduce engine's port b) have no streams on the kernel.
    for p in config.ports.iter().filter(|p| node.iter().any(|q| q.name == format!("s_axis_p{}_tdata", p.index))) {
        match &p.kernel {
            Some(k) => {
                t.push_str(&format!("# IntraNode port {i}: {k}\nnk={k}:1:{k}_p{i}\nstream_connect=weft.m_axis_p{i}:{k}_p{i}.s_axis\nstream_connect={k}_p{i}.m_axis:weft.s_axis_p{i}\n", i = p.index))
            }
            None => {
                t.push_str(&format!("# IntraNode port {i}: connect a kernel with\n# stream_connect=weft.m_axis_p{i}:<kernel>.<in>\n# stream_connect=<kernel>.<out>:weft.s_axis_p{i}\n", i = p.index))
            }
        }
    }
    t
}

/// Runs the packaging script in `tclsh` against stub Vivado commands that check what it names:
/// files that exist, the kernel's top, bus interfaces the kernel has, the kernel XML.
pub fn check_package(tcl: &Path, top: &str, buses: &[String]) -> Result<(), Error> {
    check_package_with(tcl, top, buses, &[], "").map(|_| ())
}

/// [`check_package`] with further stub commands (`extra`, defined after the plain kernel's) and
/// the kernel's port names (`ports`: a `physical_name` must be one of them); returns the bus
/// interfaces the script added (the stubs' `declared` list, empty without `extra`).
pub fn check_package_with(tcl: &Path, top: &str, buses: &[String], ports: &[String], extra: &str) -> Result<Vec<String>, Error> {
    let list = |v: &[String]| v.iter().map(|s| format!("{{{s}}}")).collect::<Vec<_>>().join(" ");
    let script = format!(
        "set top {{{top}}}\nset buses [list {}]\nset ports [list {}]\n{STUBS}\n{extra}\nsource {{{}}}\nforeach p $problems {{ puts $p }}\nif {{!$packaged}} {{ puts \"package_xo never ran\" }}\nif {{[info exists declared]}} {{ puts \"declared: $declared\" }}\nexit [expr {{[llength $problems] > 0 || !$packaged}}]\n",
        list(buses),
        list(ports),
        std::fs::canonicalize(tcl).map_err(|e| Error::from(e).context(tcl.display()))?.display()
    );
    let dir = super::check_dir("weft-xo");
    std::fs::create_dir_all(&dir)?;
    let runner = dir.join("check_package.tcl");
    std::fs::write(&runner, script)?;
    let out = weft_tools::run("tclsh", "apt-get install tcl", "tclsh", &[&runner.to_string_lossy()], &dir);
    let _ = std::fs::remove_dir_all(&dir);
    let out = out.map_err(|e| Error::from(e).context(tcl.display()))?;
    let text = String::from_utf8_lossy(&out.stdout);
    Ok(text.lines().filter_map(|l| l.strip_prefix("declared: ")).flat_map(|l| l.split_whitespace().map(String::from)).collect())
}

/// Stub Vivado commands: they record what a real run would refuse.
const STUBS: &str = r#"
set problems {}
set packaged 0
proc opt {args name} { set i [lsearch $args $name]; if {$i < 0} { return {} }; return [lindex $args [expr {$i + 1}]] }
proc create_project {args} {}
proc add_files {args} {
    global problems
    foreach f [lindex $args end] { if {![file exists $f]} { lappend problems "add_files: $f does not exist" } }
}
proc current_fileset {args} { return sources_1 }
proc set_property {args} {
    global problems top ports
    if {[lindex $args 0] eq "top" && [lindex $args 1] ne $top} { lappend problems "top [lindex $args 1], the kernel is $top" }
    if {[lindex $args 0] eq "physical_name" && [lsearch -exact $ports [lindex $args 1]] < 0} { lappend problems "physical_name [lindex $args 1]: the kernel has no such port" }
}
proc update_compile_order {args} {}
proc close_project {args} {}
namespace eval ipx {
    proc package_project {args} {}
    proc unload_core {args} {}
    proc edit_ip_in_project {args} {}
    proc current_core {args} { return core }
    proc update_checksums {args} {}
    proc check_integrity {args} {}
    proc save_core {args} {}
    proc associate_bus_interfaces {args} {
        global problems buses
        set b [opt $args -busif]
        if {[lsearch -exact $buses $b] < 0} { lappend problems "associate_bus_interfaces: the kernel has no bus $b" }
        if {[opt $args -clock] ne "ap_clk"} { lappend problems "associate_bus_interfaces $b: clock [opt $args -clock]" }
    }
}
proc package_xo {args} {
    global problems top packaged
    set packaged 1
    if {[opt $args -kernel_name] ne $top} { lappend problems "package_xo: kernel_name [opt $args -kernel_name], the kernel is $top" }
    set xml [opt $args -kernel_xml]
    if {![file exists $xml]} { lappend problems "package_xo: $xml does not exist" }
}
"#;
