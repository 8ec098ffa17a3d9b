//! IP-XACT (IEEE 1685-2009, the revision Vivado's IP catalog reads) `component.xml` for a node:
//! the ports read back from its Verilog, bus interfaces for each AXI4-Stream port pair
//! (`xilinx.com:interface:axis:1.0`), the AXI4-Lite window (`aximm`) with its memory map from
//! the register map, the clock (with `ASSOCIATED_BUSIF` and `ASSOCIATED_RESET`) and the
//! active-high reset, and the Verilog file set.

use weft_ip::regmap::{Register, Source};
use weft_tools::ports::PortDecl;

/// Escapes text for XML content and attributes.
fn esc(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// AXI4-Stream signals in the order Vivado's `axis_rtl` abstraction lists them.
const AXIS: [&str; 5] = ["tdata", "tkeep", "tlast", "tvalid", "tready"];
const AXIL: [&str; 17] = ["awaddr", "awvalid", "awready", "wdata", "wstrb", "wvalid", "wready", "bresp", "bvalid", "bready", "araddr", "arvalid", "arready", "rdata", "rresp", "rvalid", "rready"];

fn bus(name: &str, bus_type: (&str, &str), mode: &str, maps: &[(String, String)], parameters: &[(&str, String)]) -> String {
    let mut s = format!("    <spirit:busInterface>\n      <spirit:name>{name}</spirit:name>\n");
    s.push_str(&format!("      <spirit:busType spirit:vendor=\"xilinx.com\" spirit:library=\"{}\" spirit:name=\"{}\" spirit:version=\"1.0\"/>\n", bus_type.0, bus_type.1));
    s.push_str(&format!("      <spirit:abstractionType spirit:vendor=\"xilinx.com\" spirit:library=\"{}\" spirit:name=\"{}_rtl\" spirit:version=\"1.0\"/>\n", bus_type.0, bus_type.1));
    s.push_str(&format!("      {mode}\n      <spirit:portMaps>\n"));
    for (logical, physical) in maps {
        s.push_str(&format!(
            "        <spirit:portMap>\n          <spirit:logicalPort>\n            <spirit:name>{logical}</spirit:name>\n          </spirit:logicalPort>\n          <spirit:physicalPort>\n            <spirit:name>{physical}</spirit:name>\n          </spirit:physicalPort>\n        </spirit:portMap>\n"
        ));
    }
    s.push_str("      </spirit:portMaps>\n");
    if !parameters.is_empty() {
        s.push_str("      <spirit:parameters>\n");
        for (n, v) in parameters {
            s.push_str(&format!("        <spirit:parameter>\n          <spirit:name>{n}</spirit:name>\n          <spirit:value>{}</spirit:value>\n        </spirit:parameter>\n", esc(v)));
        }
        s.push_str("      </spirit:parameters>\n");
    }
    s.push_str("    </spirit:busInterface>\n");
    s
}

fn access(r: &Register) -> &'static str {
    if r.writable() {
        "read-write"
    } else {
        "read-only"
    }
}

fn memory_map(map: &[Register]) -> String {
    let mut s = String::from("  <spirit:memoryMaps>\n    <spirit:memoryMap>\n      <spirit:name>s_axil</spirit:name>\n      <spirit:addressBlock>\n        <spirit:name>regs</spirit:name>\n        <spirit:baseAddress>0</spirit:baseAddress>\n        <spirit:range>4096</spirit:range>\n        <spirit:width>32</spirit:width>\n        <spirit:usage>register</spirit:usage>\n");
    for r in map {
        s.push_str(&format!(
            "        <spirit:register>\n          <spirit:name>{}</spirit:name>\n          <spirit:description>{}</spirit:description>\n          <spirit:addressOffset>0x{:X}</spirit:addressOffset>\n          <spirit:size>32</spirit:size>\n          <spirit:volatile>{}</spirit:volatile>\n          <spirit:access>{}</spirit:access>\n",
            r.name,
            esc(&r.desc),
            r.addr,
            matches!(r.source, Source::Input { .. }),
            access(r)
        ));
        if let Some(v) = r.reset() {
            let mask: u64 = if r.fields.is_empty() { (1u64 << r.width) - 1 } else { r.fields.iter().map(|f| ((1u64 << f.width) - 1) << f.lsb).fold(0, |a, m| a | m) };
            s.push_str(&format!(
                "          <spirit:reset>\n            <spirit:value>0x{:X}</spirit:value>\n            <spirit:mask>0x{mask:X}</spirit:mask>\n          </spirit:reset>\n",
                v as u64 & mask
            ));
        }
        let fields: Vec<(String, usize, usize, String)> =
            if r.fields.is_empty() { vec![("value".into(), 0, r.width, String::new())] } else { r.fields.iter().map(|f| (f.name.clone(), f.lsb, f.width, f.desc.clone())).collect() };
        for (name, lsb, width, desc) in fields {
            let desc = if desc.is_empty() { String::new() } else { format!("            <spirit:description>{}</spirit:description>\n", esc(&desc)) };
            s.push_str(&format!(
                "          <spirit:field>\n            <spirit:name>{name}</spirit:name>\n{desc}            <spirit:bitOffset>{lsb}</spirit:bitOffset>\n            <spirit:bitWidth>{width}</spirit:bitWidth>\n            <spirit:access>{}</spirit:access>\n          </spirit:field>\n",
                access(r)
            ));
        }
        s.push_str("        </spirit:register>\n");
    }
    s.push_str("      </spirit:addressBlock>\n    </spirit:memoryMap>\n  </spirit:memoryMaps>\n");
    s
}

/// The component for module `top` (file `file`, ports `ports`), with register map `map`.
pub fn component(top: &str, file: &str, summary: &str, ports: &[PortDecl], map: &[Register]) -> String {
    let has = |n: &str| ports.iter().any(|p| p.name == n);
    let mut s = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!-- Generated by weft. -->\n");
    s.push_str("<spirit:component xmlns:spirit=\"http://www.spiritconsortium.org/XMLSchema/SPIRIT/1685-2009\" xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\">\n");
    s.push_str(&format!(
        "  <spirit:vendor>weft</spirit:vendor>\n  <spirit:library>weft</spirit:library>\n  <spirit:name>{top}</spirit:name>\n  <spirit:version>1.0</spirit:version>\n  <spirit:busInterfaces>\n"
    ));
    // Stream interfaces: every s_axis_*/m_axis_* prefix with a tdata port.
    let mut streams: Vec<String> = vec![];
    for p in ports {
        if let Some(prefix) = p.name.strip_suffix("_tdata") {
            if prefix.starts_with("s_axis_") || prefix.starts_with("m_axis_") {
                streams.push(prefix.to_string());
            }
        }
    }
    for prefix in &streams {
        let maps: Vec<(String, String)> = AXIS.iter().map(|sig| (sig.to_uppercase(), format!("{prefix}_{sig}"))).filter(|(_, phys)| has(phys)).collect();
        let mode = if prefix.starts_with("s_") { "<spirit:slave/>" } else { "<spirit:master/>" };
        s.push_str(&bus(prefix, ("interface", "axis"), mode, &maps, &[]));
    }
    let mut clocked: Vec<String> = streams.clone();
    if has("s_axil_awaddr") {
        let maps: Vec<(String, String)> = AXIL.iter().map(|sig| (sig.to_uppercase(), format!("s_axil_{sig}"))).filter(|(_, phys)| has(phys)).collect();
        s.push_str(&bus(
            "s_axil",
            ("interface", "aximm"),
            "<spirit:slave>\n        <spirit:memoryMapRef spirit:memoryMapRef=\"s_axil\"/>\n      </spirit:slave>",
            &maps,
            &[("PROTOCOL", "AXI4LITE".into())],
        ));
        clocked.insert(0, "s_axil".into());
    }
    s.push_str(&bus("rst", ("signal", "reset"), "<spirit:slave/>", &[("RST".into(), "rst".into())], &[("POLARITY", "ACTIVE_HIGH".into())]));
    // Each link's receive clock (recovered from its neighbour) and reset; its lanes are conduits.
    for p in ports.iter().filter(|p| p.name.ends_with("_rx_clk")) {
        let rst = p.name.replace("_rx_clk", "_rx_rst");
        s.push_str(&bus(&rst, ("signal", "reset"), "<spirit:slave/>", &[("RST".into(), rst.clone())], &[("POLARITY", "ACTIVE_HIGH".into())]));
        s.push_str(&bus(&p.name, ("signal", "clock"), "<spirit:slave/>", &[("CLK".into(), p.name.clone())], &[("ASSOCIATED_RESET", rst.clone())]));
    }
    s.push_str(&bus("clk", ("signal", "clock"), "<spirit:slave/>", &[("CLK".into(), "clk".into())], &[("ASSOCIATED_BUSIF", clocked.join(":")), ("ASSOCIATED_RESET", "rst".into())]));
    s.push_str("  </spirit:busInterfaces>\n");
    s.push_str(&memory_map(map));
    s.push_str(&format!(
        "  <spirit:model>\n    <spirit:views>\n      <spirit:view>\n        <spirit:name>xilinx_anylanguagesynthesis</spirit:name>\n        <spirit:envIdentifier>:vivado.xilinx.com:synthesis</spirit:envIdentifier>\n        <spirit:language>Verilog</spirit:language>\n        <spirit:modelName>{top}</spirit:modelName>\n        <spirit:fileSetRef>\n          <spirit:localName>xilinx_anylanguagesynthesis_view_fileset</spirit:localName>\n        </spirit:fileSetRef>\n      </spirit:view>\n    </spirit:views>\n    <spirit:ports>\n"
    ));
    for p in ports {
        let vector = if p.width > 1 {
            format!("\n          <spirit:vector>\n            <spirit:left>{}</spirit:left>\n            <spirit:right>0</spirit:right>\n          </spirit:vector>", p.width - 1)
        } else {
            String::new()
        };
        s.push_str(&format!(
            "      <spirit:port>\n        <spirit:name>{}</spirit:name>\n        <spirit:wire>\n          <spirit:direction>{}</spirit:direction>{vector}\n        </spirit:wire>\n      </spirit:port>\n",
            p.name,
            if p.input { "in" } else { "out" }
        ));
    }
    s.push_str("    </spirit:ports>\n  </spirit:model>\n");
    s.push_str(&format!(
        "  <spirit:fileSets>\n    <spirit:fileSet>\n      <spirit:name>xilinx_anylanguagesynthesis_view_fileset</spirit:name>\n      <spirit:file>\n        <spirit:name>{file}</spirit:name>\n        <spirit:fileType>verilogSource</spirit:fileType>\n      </spirit:file>\n    </spirit:fileSet>\n  </spirit:fileSets>\n  <spirit:description>{}</spirit:description>\n</spirit:component>\n",
        esc(summary)
    ));
    s
}
