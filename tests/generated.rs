//! The generated Verilog: pinned by snapshots, and `generated/` must be what the generator
//! writes today.

use std::path::Path;

use weft::flow::generate;
use weft::sim::catalog::shipped;

#[test]
fn every_shipped_module_matches_its_snapshot() {
    for module in shipped() {
        let text = (module.verilog)(&module.spec).unwrap();
        insta::assert_snapshot!(module.spec.name.clone(), text);
    }
}

#[test]
fn generation_is_deterministic_and_generated_folder_is_current() {
    let dir = std::env::temp_dir().join(format!("weft-regen-{}", std::process::id()));
    let first = generate(&dir.join("a")).unwrap();
    let second = generate(&dir.join("b")).unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("generated");
    for (a, b) in first.iter().zip(&second) {
        let fresh = std::fs::read_to_string(a).unwrap();
        assert_eq!(fresh, std::fs::read_to_string(b).unwrap(), "{} differs between two runs", a.display());
        let relative = a.strip_prefix(dir.join("a")).unwrap();
        let committed = std::fs::read_to_string(root.join(relative)).unwrap_or_else(|_| panic!("generated/{} is missing: run `weft generate`", relative.display()));
        assert!(committed == fresh, "generated/{} is stale: run `weft generate` and commit it", relative.display());
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn top_level_ports_follow_the_naming_contract() {
    for module in shipped() {
        let text = (module.verilog)(&module.spec).unwrap();
        let declared = weft::system::ports::ports(&text, &module.spec.name).unwrap_or_else(|e| panic!("{}: {e}", module.spec.name));
        assert!(!declared.is_empty(), "{}: no ports read", module.spec.name);
        for port in declared.iter().map(|p| p.name.as_str()) {
            assert!(port.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'), "{}: port `{port}` is not a plain identifier", module.spec.name);
            // Besides streams: the FIFO fill level, and the link's serial lanes, status and counters.
            let link_ports = [
                "rx_serial",
                "tx_serial",
                "rx_credit_return",
                "tx_credit",
                "lane_up",
                "channel_up",
                "frames_sent",
                "frames_retransmitted",
                "frames_received",
                "crc_errors",
                "lock_losses",
                "slips",
                "retrains",
                "up_cycles",
                "partner_restarts",
                "frames_dropped",
                "rx_clk",
                "rx_rst",
                "packets_sent",
                "packets_received",
                "credit_words",
                "tx_waits",
            ];
            // The router: coordinates, per-VC credits beside its link streams, counters.
            let router_ok = module.spec.family == "router"
                && (port.starts_with("local_") || port.starts_with("stat_") || port.starts_with("s_axis_") && port.ends_with("_credit") || port.starts_with("m_axis_") && port.ends_with("_credit"));
            // Clock domains are `<domain>_clk` / `<domain>_rst` (the asynchronous FIFO).
            let domain_ok = ["s_clk", "s_rst", "m_clk", "m_rst"].contains(&port);
            // The register window: AXI4-Lite, its counter inputs and the coordinates it holds; the
            // AXI4-Lite crossing's master side.
            let axil_ok = module.spec.family == "axil" && (port.starts_with("s_axil_") || port.starts_with("m_axil_") || port == "counters" || port == "link_status" || port.starts_with("local_"));
            // A node: the register window, per link endpoint its serial lanes and status.
            let node_ok = module.spec.family == "system"
                && (port.starts_with("s_axil_") || port == "link_up" || ["_rx_serial", "_rx_clk", "_rx_rst", "_tx_serial", "_channel_up"].iter().any(|s| port.ends_with(s)));
            // The dispatcher counts packets with unknown tags.
            let dispatcher_ok = module.spec.name.starts_with("axis_dispatcher") && port == "dropped";
            // Self-test blocks: their configuration and counter ports.
            let selftest_ports =
                ["start", "count", "length", "dst", "tag", "seed", "done_in", "window", "received", "busy", "sent", "cycles", "expected", "clear", "packets", "errors", "bytes", "complete"];
            let selftest_ok = module.spec.family == "selftest" && selftest_ports.contains(&port);
            // The allreduce engine and the butterfly: their program, counters and idle state.
            let allreduce_ok =
                module.spec.family == "allreduce" && ["flags", "dst_a", "dst_b", "op", "timeout", "host_dst", "idle"].iter().chain(&weft_ip::system::allreduce::COUNTERS).any(|p| *p == port);
            // A compiled application loop: start/busy, its memories' and globals' host ports and
            // its counters.
            let app_suffixes = ["_wr_en", "_wr_addr", "_wr_data", "_rd_addr", "_rd_data", "_value", "_result", "_elements", "_noops", "_hazards", "_bank_conflicts"];
            let app_ok = module.spec.family == "app" && (["start", "busy"].contains(&port) || app_suffixes.iter().any(|s| port.ends_with(s)));
            let ok = router_ok
                || app_ok
                || allreduce_ok
                || domain_ok
                || axil_ok
                || node_ok
                || dispatcher_ok
                || selftest_ok
                || port == "clk"
                || port == "fill"
                || port == "rst"
                || module.spec.family == "link" && link_ports.contains(&port)
                || ["s_axis_", "m_axis_"].iter().any(|p| port.starts_with(p)) && ["tdata", "tkeep", "tlast", "tuser", "tvalid", "tready"].iter().any(|s| port.ends_with(s));
            assert!(ok, "{}: unexpected port {port}", module.spec.name);
        }
        assert!(text.contains("`timescale 1ns/1ps"));
        assert!(!text.contains("$"), "{}: `$` left in the output", module.spec.name);
    }
}

/// Netlist 2.0 in the shipped Verilog: the node keeps the router and one link module (defined
/// once, instantiated per torus link) as modules of their own; no declared wire or register has
/// an anonymous `n<digits>` name; every memory carries both vendors' RAM attributes.
#[test]
fn netlist_verilog_keeps_hierarchy_names_and_ram_attributes() {
    for module in shipped() {
        let text = (module.verilog)(&module.spec).unwrap();
        let name = &module.spec.name;
        let mut previous = "";
        for line in text.lines() {
            let t = line.trim_start();
            let t = t.strip_prefix("(* ASYNC_REG = \"TRUE\" *) ").unwrap_or(t);
            if let Some(rest) = t.strip_prefix("wire ").or_else(|| t.strip_prefix("reg ")) {
                let rest = if rest.starts_with('[') { rest.split_once("] ").map_or(rest, |x| x.1) } else { rest };
                let id: String = rest.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
                let anonymous = id.len() > 1 && id.starts_with('n') && id[1..].chars().all(|c| c.is_ascii_digit());
                assert!(!anonymous, "{name}: anonymous name in `{line}`");
                if t.starts_with("reg ") && rest.contains(" [0:") {
                    assert!(previous.contains("ram_style = ") && previous.contains("ramstyle = "), "{name}: memory without both RAM attributes: `{line}`");
                }
            }
            previous = t;
        }
        if module.spec.family == "system" {
            let defined = text.matches(&format!("module {name}_link(")).count();
            let instances = text.lines().filter(|l| l.starts_with(&format!("{name}_link link_"))).count();
            let endpoints = text.lines().filter(|l| l.trim_start().starts_with("output wire") && l.trim_end().ends_with("_channel_up;")).count();
            assert_eq!(defined, 1, "{name}: the link module is defined once");
            assert_eq!(instances, endpoints, "{name}: one link instance per endpoint");
            assert_eq!(text.matches(&format!("{name}_router router (")).count(), 1, "{name}: the router is instantiated");
        }
    }
}
