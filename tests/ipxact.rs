//! The IP-XACT component of each shipped node, read by two independent readers: ipyxact (bus
//! interfaces, ports) and peakrdl-ipxact, whose import of the memory map must equal the
//! generated SystemRDL as systemrdl-compiler compiles it (register names, addresses, fields,
//! resets, software access). The component's ports are the node Verilog's, read here from the
//! module's declarations; every bus interface maps only existing ports.

use std::collections::BTreeMap;
use std::process::Command;

use weft::system::{generate, shipped};

/// `name → (direction, width)` of the top module's port declarations in `text`.
fn verilog_ports(text: &str, top: &str) -> BTreeMap<String, (String, u64)> {
    let body = text.split(&format!("module {top}(")).nth(1).unwrap().split("endmodule").next().unwrap();
    let mut ports = BTreeMap::new();
    for line in body.lines().map(str::trim) {
        for dir in ["input", "output"] {
            if let Some(rest) = line.strip_prefix(&format!("{dir} wire ")) {
                let rest = rest.trim_end_matches(';');
                let (width, name) = match rest.strip_prefix('[') {
                    Some(r) => {
                        let (range, name) = r.split_once(']').unwrap();
                        let (hi, lo) = range.split_once(':').unwrap();
                        (hi.parse::<u64>().unwrap() - lo.parse::<u64>().unwrap() + 1, name.trim())
                    }
                    None => (1, rest.trim()),
                };
                ports.insert(name.to_string(), (if dir == "input" { "in" } else { "out" }.to_string(), width));
            }
        }
    }
    ports
}

#[test]
fn components_read_back_with_independent_ip_xact_readers() {
    for config in shipped() {
        let name = config.name.clone();
        let dir = std::env::temp_dir().join(format!("weft_ipxact_{}_{name}", std::process::id()));
        generate(&config, &dir.join("generated"), &dir.join("constraints")).unwrap();
        let system = dir.join("generated/system");
        let component = system.join(format!("{name}_ip/component.xml"));
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/ipxact/read.py");
        let out = Command::new("python3").args([script, component.to_str().unwrap(), system.join(format!("{name}.rdl")).to_str().unwrap()]).output().expect("python3 is needed");
        assert!(out.status.success(), "{name}: an IP-XACT reader refused the component (scripts/setup.sh installs them):\n{}", String::from_utf8_lossy(&out.stderr));
        let read: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();

        let regs = read["ipxact_regs"].as_array().unwrap();
        assert!(regs.len() >= 10, "{name}: {} registers imported", regs.len());
        assert_eq!(read["ipxact_regs"], read["rdl_regs"], "{name}: the memory map through peakrdl-ipxact against the RDL");

        let verilog = std::fs::read_to_string(system.join(format!("{name}_node.v"))).unwrap();
        let want = verilog_ports(&verilog, &format!("{name}_node"));
        let got: BTreeMap<String, (String, u64)> = read["ports"].as_object().unwrap().iter().map(|(k, v)| (k.clone(), (v[0].as_str().unwrap().to_string(), v[1].as_u64().unwrap()))).collect();
        assert_eq!(got, want, "{name}: component ports against the Verilog");

        let buses = read["buses"].as_object().unwrap();
        let mut expected: Vec<String> = want.keys().filter(|p| p.ends_with("_tdata")).map(|p| p.trim_end_matches("_tdata").to_string()).collect();
        expected.extend(["s_axil", "clk", "rst"].map(String::from));
        for bus in &expected {
            let maps = buses.get(bus).unwrap_or_else(|| panic!("{name}: no bus interface {bus}")).as_array().unwrap();
            for port in maps {
                assert!(want.contains_key(port.as_str().unwrap()), "{name}: {bus} maps {port}, which the Verilog lacks");
            }
        }
        assert_eq!(buses["s_axil"].as_array().unwrap().len(), 17, "{name}: every AXI4-Lite signal mapped");
        std::fs::remove_dir_all(&dir).ok();
    }
}
