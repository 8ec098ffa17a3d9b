//! The node as a Vitis RTL kernel (torus_4x2x1, a U280 system): kernel.xml read by Python's XML
//! parser against the wrapper's Verilog ports and the register map compiled by
//! systemrdl-compiler; the v++ linker config's stream connections against kernel.xml; the
//! package_xo script against stub Vivado commands, which also refuse a script naming a bus the
//! kernel does not have; the wrapper with the node through Verilator -Wall.

use std::process::Command;

use weft::system::{generate, shipped, vitis};
use weft::tools::ports::ports;
use weft::tools::verilator_lint_files;

#[test]
fn vitis_kernel_files_agree_with_the_wrapper_and_the_register_map() {
    let config = shipped().into_iter().find(|c| c.name == "torus_4x2x1").unwrap();
    let dir = std::env::temp_dir().join(format!("weft_vitis_{}", std::process::id()));
    generate(&config, &dir.join("generated"), &dir.join("constraints")).unwrap();
    let system = dir.join("generated/system");
    let (top, xml, tcl, cfg) = (system.join("torus_4x2x1_krnl.v"), system.join("torus_4x2x1_kernel.xml"), system.join("torus_4x2x1_package_xo.tcl"), system.join("torus_4x2x1_vpp.cfg"));

    verilator_lint_files(&[system.join("torus_4x2x1_node.v").as_path(), top.as_path()], "torus_4x2x1_krnl").unwrap();
    let wrapper = ports(&std::fs::read_to_string(&top).unwrap(), "torus_4x2x1_krnl").unwrap();
    assert!(wrapper.iter().any(|p| p.name == "ap_clk" && p.input) && wrapper.iter().any(|p| p.name == "ap_rst_n" && p.input));
    assert!(!wrapper.iter().any(|p| p.name == "clk" || p.name == "rst"), "Vitis kernels take ap_clk/ap_rst_n only");

    // kernel.xml through Python's parser: ports (name, mode, width) and scalar args (name, offset).
    let script = "import sys, json, xml.etree.ElementTree as ET\nk = ET.parse(sys.argv[1]).getroot().find('kernel')\nprint(json.dumps({'name': k.get('name'), 'control': k.get('hwControlProtocol'), 'ports': [[p.get('name'), p.get('mode'), int(p.get('dataWidth')), p.get('portType')] for p in k.find('ports')], 'args': [[a.get('name'), int(a.get('offset'), 16), a.get('port'), a.get('addressQualifier')] for a in k.find('args')]}))";
    let out = Command::new("python3").args(["-c", script, xml.to_str().unwrap()]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let k: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(k["name"], "torus_4x2x1_krnl");
    assert_eq!(k["control"], "ap_ctrl_none");
    let mut streams = 0;
    for p in k["ports"].as_array().unwrap() {
        let (name, mode, width, kind) = (p[0].as_str().unwrap(), p[1].as_str().unwrap(), p[2].as_u64().unwrap(), p[3].as_str().unwrap());
        if kind == "addressable" {
            assert_eq!(name, "s_axi_control");
            assert!(wrapper.iter().any(|w| w.name == "s_axi_control_awaddr"));
            continue;
        }
        streams += 1;
        let tdata = wrapper.iter().find(|w| w.name == format!("{name}_tdata")).unwrap_or_else(|| panic!("kernel.xml port {name} has no {name}_tdata in the wrapper"));
        assert_eq!(tdata.width as u64, width, "{name} width");
        assert_eq!(mode, if tdata.input { "read_only" } else { "write_only" }, "{name} direction");
        assert!(wrapper.iter().any(|w| w.name == format!("{name}_tvalid")), "{name}_tvalid");
    }
    assert_eq!(streams, wrapper.iter().filter(|w| w.name.ends_with("_tdata")).count(), "every wrapper stream in kernel.xml");

    // Scalar arguments sit at the RDL's read-write registers.
    let rdl = Command::new("python3").args([concat!(env!("CARGO_MANIFEST_DIR"), "/tests/regmap/compile_rdl.py"), system.join("torus_4x2x1.rdl").to_str().unwrap()]).output().unwrap();
    assert!(rdl.status.success(), "{}", String::from_utf8_lossy(&rdl.stderr));
    let regs: serde_json::Value = serde_json::from_slice(&rdl.stdout).unwrap();
    let writable: Vec<(String, u64)> = regs
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["fields"].as_array().unwrap().iter().any(|f| f["sw_writable"].as_bool().unwrap()))
        .map(|r| (r["name"].as_str().unwrap().to_string(), r["addr"].as_u64().unwrap()))
        .collect();
    let scalars: Vec<(String, u64)> = k["args"].as_array().unwrap().iter().filter(|a| a[3] == "0").map(|a| (a[0].as_str().unwrap().to_string(), a[1].as_u64().unwrap())).collect();
    assert_eq!(scalars, writable, "scalar arguments against the RDL's writable registers");

    // Linker config: the instance's stream ends are kernel.xml streams in the right direction.
    let stream_ports: Vec<(String, String)> = k["ports"].as_array().unwrap().iter().map(|p| (p[0].as_str().unwrap().to_string(), p[1].as_str().unwrap().to_string())).collect();
    let text = std::fs::read_to_string(&cfg).unwrap();
    assert!(text.contains("nk=torus_4x2x1_krnl:1:weft"));
    let connects: Vec<&str> = text.lines().filter_map(|l| l.strip_prefix("stream_connect=")).collect();
    assert_eq!(connects.len(), 2, "port 0's kernel both ways");
    for c in connects {
        let (from, to) = c.split_once(':').unwrap();
        for (end, mode) in [(from, "write_only"), (to, "read_only")] {
            if let Some(port) = end.strip_prefix("weft.") {
                assert!(stream_ports.contains(&(port.to_string(), mode.to_string())), "{c}: weft.{port} is not a {mode} stream of the kernel");
            }
        }
    }

    // The package script against stub Vivado, and a broken copy it must refuse.
    let buses: Vec<String> = wrapper.iter().filter_map(|p| p.name.strip_suffix("_tdata").map(String::from)).chain(["s_axi_control".to_string()]).collect();
    vitis::check_package(&tcl, "torus_4x2x1_krnl", &buses).unwrap();
    let broken = system.join("broken_package_xo.tcl");
    std::fs::write(&broken, std::fs::read_to_string(&tcl).unwrap().replace("s_axis_p1", "s_axis_p9")).unwrap();
    let err = vitis::check_package(&broken, "torus_4x2x1_krnl", &buses).unwrap_err();
    assert!(err.to_string().contains("no bus s_axis_p9"), "{err}");
    std::fs::remove_dir_all(&dir).ok();
}

/// The node with its transceivers as a Vitis kernel (torus_4x2x1 on the U280): the kernel with
/// the node, its transceiver wrappers, the GT top and stubs of the IPs through Verilator -Wall;
/// kernel.xml's streams against the kernel's ports; the package script against stub Vivado
/// commands, refusing a port map to a port the kernel lacks; the linker configuration refused
/// when it connects an interface the script does not declare.
#[test]
fn transceiver_kernel_files_agree() {
    let config = shipped().into_iter().find(|c| c.name == "torus_4x2x1").unwrap();
    let dir = std::env::temp_dir().join(format!("weft_gt_krnl_{}", std::process::id()));
    generate(&config, &dir.join("generated"), &dir.join("constraints")).unwrap();
    let system = dir.join("generated/system");
    let file = |n: &str| system.join(format!("torus_4x2x1_{n}"));
    let stubs = dir.join("gt_stubs.v");
    std::fs::write(&stubs, weft::system::gt_top::stubs(&config).unwrap()).unwrap();
    let files = [file("node.v"), file("node_gt.v"), file("gt_top.v"), file("gt_krnl.v"), stubs];
    verilator_lint_files(&files.iter().map(|f| f.as_path()).collect::<Vec<_>>(), "torus_4x2x1_gt_krnl").unwrap();

    let kernel = ports(&std::fs::read_to_string(file("gt_krnl.v")).unwrap(), "torus_4x2x1_gt_krnl").unwrap();
    let names: Vec<String> = kernel.iter().map(|p| p.name.clone()).collect();
    for want in ["ap_clk", "ap_rst_n", "clk_gt_freerun", "gt_refclk0_p", "gt_serial_port1_gtx_n", "s_axi_control_rdata", "m_axis_p0_tkeep"] {
        assert!(names.iter().any(|n| n == want), "the kernel has no port {want}");
    }
    assert!(!names.iter().any(|n| n.contains("_fs") || n.contains("oe_b")), "the cage's oscillator pins belong to the platform");
    let xml = std::fs::read_to_string(file("gt_kernel.xml")).unwrap();
    let streams: Vec<&str> = xml.lines().filter(|l| l.contains("portType=\"stream\"")).collect();
    assert_eq!(streams.len(), names.iter().filter(|n| n.ends_with("_tdata") && n.contains("axis")).count());
    for p in kernel.iter().filter(|p| p.name.ends_with("_tdata") && p.name.contains("axis")) {
        let bus = p.name.strip_suffix("_tdata").unwrap();
        let mode = if p.input { "read_only" } else { "write_only" };
        assert!(streams.iter().any(|l| l.contains(&format!("name=\"{bus}\" mode=\"{mode}\" dataWidth=\"{}\"", p.width))), "{bus} in kernel.xml");
    }

    let buses: Vec<String> = names.iter().filter_map(|p| p.strip_suffix("_tdata").map(String::from)).chain(["s_axi_control".to_string()]).collect();
    let (package, linker) = (file("gt_package_xo.tcl"), file("gt_vpp.cfg"));
    weft::system::gt_kernel::check(&config, &package, &linker, &names, &buses).unwrap();
    let broken = system.join("broken_gt_package_xo.tcl");
    std::fs::write(&broken, std::fs::read_to_string(&package).unwrap().replace("gt_serial_port1_grx_n", "gt_serial_port1_grx_m")).unwrap();
    let err = weft::system::gt_kernel::check(&config, &broken, &linker, &names, &buses).unwrap_err().to_string();
    assert!(err.contains("gt_serial_port1_grx_m: the kernel has no such port"), "{err}");
    let bad_link = system.join("broken_gt_vpp.cfg");
    std::fs::write(&bad_link, std::fs::read_to_string(&linker).unwrap().replace("weft/gt_refclk1", "weft/gt_refclk2")).unwrap();
    let err = weft::system::gt_kernel::check(&config, &package, &bad_link, &names, &buses).unwrap_err().to_string();
    assert!(err.contains("weft/gt_refclk2"), "{err}");
    std::fs::remove_dir_all(&dir).ok();
}
