//! The system generator: the shipped TOML files describe the shipped nodes, the committed
//! outputs are what the generator writes today, bad descriptions are refused by key (and no
//! input panics), and the constraint check fails on a port or cell the design lacks.

use std::path::{Path, PathBuf};

use weft::sim::catalog::{node_config, shipped as catalog};
use weft::system::{self, constraints::check_constraints, parse, shipped, Files};

const EXAMPLE: &str = include_str!("../examples/torus_4x2x1.toml");

fn temp(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("weft-system-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn shipped_descriptions_are_the_catalogue_nodes() {
    let systems = shipped();
    assert_eq!(systems.iter().map(|s| s.name.as_str()).collect::<Vec<_>>(), ["torus_4x2x1", "torus_2x2x2"]);
    for s in &systems {
        // docs/contract.md: shipped configurations have 2 IntraNode ports, a 128-bit datapath, ≥ 1024-byte payloads.
        assert_eq!(s.node.router.local_ports, 2);
        assert_eq!(s.node.router.width, 128);
        assert!(s.node.router.max_packet_bytes >= 1024);
        assert_eq!(s.node, node_config(s.node.router.dims), "{}: the TOML describes another node than the catalogue checks", s.name);
        let module = catalog().into_iter().find(|m| m.spec.name == format!("{}_node", s.name)).unwrap();
        let dir = temp(&format!("same-{}", s.name));
        system::generate(s, &dir, &dir.join("constraints")).unwrap();
        let from_toml = std::fs::read_to_string(dir.join(format!("system/{}_node.v", s.name))).unwrap();
        assert!(from_toml == (module.verilog)(&module.spec).unwrap(), "{}: node Verilog differs from the catalogue's", s.name);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

#[test]
fn committed_system_outputs_are_current_and_deterministic() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = temp("regen");
    for s in shipped() {
        let a = system::generate(&s, &dir.join("a/generated"), &dir.join("a/constraints")).unwrap();
        let b = system::generate(&s, &dir.join("b/generated"), &dir.join("b/constraints")).unwrap();
        for (a, b) in a.iter().zip(&b) {
            let fresh = std::fs::read_to_string(a).unwrap();
            assert_eq!(fresh, std::fs::read_to_string(b).unwrap(), "{} differs between two runs", a.display());
            let relative = a.strip_prefix(dir.join("a")).unwrap();
            let committed = std::fs::read_to_string(root.join(relative)).unwrap_or_else(|_| panic!("{} is missing: run `weft generate`", relative.display()));
            assert!(committed == fresh, "{} is stale: run `weft generate` and commit it", relative.display());
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Replaces the first line starting with `key` (or appends `line` when `key` is empty).
fn edit(key: &str, line: &str) -> String {
    if key.is_empty() {
        return format!("{EXAMPLE}\n{line}\n");
    }
    let mut done = false;
    EXAMPLE
        .lines()
        .map(|l| {
            if !done && l.starts_with(key) {
                done = true;
                line.to_string()
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn bad_descriptions_are_refused_by_key() {
    let cases = [
        (edit("name =", "nmae = \"x\""), "nmae"),
        (edit("board", "board = \"vc707\""), "board"),
        (edit("dims", "dims = [4, 0, 1]"), "torus.dims[1]"),
        (edit("dims", "dims = [4, 2]"), "torus.dims"),
        (edit("dims", "dims = [65, 1, 1]"), "torus.dims[0]"),
        (edit("dims", "dims = [4, -2, 1]"), "torus.dims[1]"),
        (edit("dims", "dims = \"4x2x1\""), "dims"),
        (edit("local_ports", "local_ports = 0"), "node.local_ports"),
        (edit("width", "width = 100"), "node.width"),
        (edit("width", "width = 64"), "node.width"),
        (edit("max_packet_bytes", "max_packet_bytes = 100000"), "node.max_packet_bytes"),
        (edit("vc_buffer_flits", "vc_buffer_flits = 8"), "vc_buffer_flits"),
        (edit("vc_buffer_flits", "vc_bufer_flits = 128"), "vc_bufer_flits"),
        (edit("fabric_mhz", "fabric_mhz = 0.0"), "clocks.fabric_mhz"),
        (edit("fabric_mhz", "fabric_mhz = nan"), "clocks.fabric_mhz"),
        (edit("fabric_mhz", ""), "fabric_mhz"),
        (edit("kernel_mhz", "kernel_mhz = 5000.0"), "clocks.kernel_mhz"),
        (edit("kernel_mhz", ""), "port[0].clock"),
        (edit("kernel =", "kernel = \"fft_1024\""), "port[0].kernel"),
        (edit("clock =", "clock = \"pcie\""), "port[0].clock"),
        (edit("index = 1", "index = 2"), "port[1].index"),
        (edit("index = 1", "index = 0"), "port[1].index"),
        (edit("channel_latency", "channel_latency = 0"), "sim.channel_latency"),
        (edit("", "[extra]\nkey = 1"), "extra"),
        (edit("[torus]", "[torsu]"), "torsu"),
        ("name = \"a\"".to_string(), "board"),
        ("name = ".to_string(), "line 1"),
        (edit("name =", "name = \"Torus-1\""), "name"),
        (edit("width", "width = 512\nlinks = \"pcie\""), "node.links"),
        // IO channels are the 520N board support package's, and 256 bits wide.
        (edit("width", "width = 512\nlinks = \"io_channels\""), "node.links"),
        (edit("width", "width = 128\nlinks = \"io_channels\"").replace("board = \"u280\"", "board = \"s10_520n\""), "node.width"),
    ];
    for (text, key) in cases {
        let err = parse(&text).expect_err(&format!("accepted a description that should fail on `{key}`")).to_string();
        assert!(err.contains(key), "error for `{key}` does not name it: {err}");
    }
    // The other boards and a design with no kernel clock are accepted.
    let plain = edit("kernel_mhz", "").replace("clock = \"kernel\"", "clock = \"fabric\"");
    for board in ["u200", "u280", "s10_520n"] {
        let s = parse(&plain.replace("board = \"u280\"", &format!("board = \"{board}\""))).unwrap();
        assert_eq!(s.board.name, board);
        assert!(!s.has_kernel_clock());
    }
}

#[test]
fn a_packet_too_long_for_the_buffer_names_both_keys_and_the_rule() {
    // The user raises only `max_packet_bytes`; `vc_buffer_flits` keeps its default (128 flits).
    let text = edit("vc_buffer_flits", "").replace("max_packet_bytes = 1024", "max_packet_bytes = 4096");
    let err = parse(&text).unwrap_err().to_string();
    for part in ["`node.max_packet_bytes` = 4096", "`node.vc_buffer_flits` = 128 (the default)", "257 flits", "1 + ceil(`node.max_packet_bytes` / 16)", "`node.vc_buffer_flits` = 512", "at most 2032"]
    {
        assert!(err.contains(part), "missing {part:?} in: {err}");
    }
    // Both set by the user: neither is called a default.
    let err = parse(&edit("vc_buffer_flits", "vc_buffer_flits = 32")).unwrap_err().to_string();
    assert!(err.contains("`node.max_packet_bytes` = 1024 needs 65 flits") && err.contains("`node.vc_buffer_flits` = 32 does not fit") && !err.contains("default"), "{err}");
}

#[test]
fn a_kernel_clock_without_kernel_ports_is_a_warning() {
    // The example runs ports on the kernel clock: nothing to warn about.
    assert!(parse(EXAMPLE).unwrap().warnings().is_empty());
    let unused = EXAMPLE.replace("clock = \"kernel\"", "clock = \"fabric\"");
    let warnings = parse(&unused).unwrap().warnings();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(warnings[0].contains("`clocks.kernel_mhz`") && warnings[0].contains("no effect"), "{warnings:?}");
}

#[test]
fn a_packet_travels_in_one_link_frame() {
    // 4000 bytes: 251 flits, and the links' frames grow to hold it.
    let big = edit("vc_buffer_flits", "vc_buffer_flits = 512").replace("max_packet_bytes = 1024", "max_packet_bytes = 4000");
    let system = parse(&big).unwrap();
    assert_eq!(system.node.link.max_frame_words, 251);
    // 4096 bytes need 257 flits, more than a frame's 256 words.
    let err = parse(&big.replace("max_packet_bytes = 4000", "max_packet_bytes = 4096")).unwrap_err().to_string();
    for part in ["`node.max_packet_bytes` = 4096", "257 flits", "one link frame", "at most 4080 bytes"] {
        assert!(err.contains(part), "missing {part:?} in: {err}");
    }
}

#[test]
fn every_refused_width_gives_the_same_allowed_values() {
    for w in [64, 100, 200, 1024] {
        let err = parse(&edit("width", &format!("width = {w}"))).unwrap_err().to_string();
        assert_eq!(err, format!("`node.width` = {w} is not allowed: allowed 128, 256 or 512 (bits; the links bond width / 64 lanes)"));
    }
}

#[test]
fn no_description_panics() {
    // Every prefix, and byte-level damage at many places: each parses or is refused, never panics.
    let bytes = EXAMPLE.as_bytes();
    for end in 0..bytes.len() {
        let _ = parse(&String::from_utf8_lossy(&bytes[..end]));
    }
    let mut seed = 0x1234_5678_9abc_def0u64;
    for _ in 0..3000 {
        let mut b = bytes.to_vec();
        for _ in 0..3 {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let at = (seed % b.len() as u64) as usize;
            b[at] = b"0123456789-=[]\"., abcxyz\n#9"[(seed >> 32) as usize % 27];
        }
        let _ = parse(&String::from_utf8_lossy(&b));
    }
    for huge in ["dims = [99999999999999999999, 1, 1]", "dims = [1e300, 1, 1]", "dims = [-9223372036854775808, 1, 1]"] {
        assert!(parse(&edit("dims", huge)).is_err());
    }
}

#[test]
fn constraint_check_finds_missing_ports_and_cells() {
    let dir = temp("constraints");
    let plain = edit("kernel_mhz", "").replace("clock = \"kernel\"", "clock = \"fabric\"").replace("board = \"u280\"", "board = \"u200\"");
    let mut configs = shipped();
    configs.push(parse(&plain).unwrap());
    for (i, s) in configs.into_iter().enumerate() {
        let gen = dir.join("generated");
        let cons = dir.join("constraints");
        system::generate(&s, &gen, &cons).unwrap();
        let files = Files::of(&s, &gen, &cons);
        // The check as `weft check` runs it passes on the generated files (also lint and Icarus).
        system::check(&s, &gen, &cons).unwrap();
        let text = std::fs::read_to_string(&files.constraint).unwrap();
        let top = s.top();
        let top_text = std::fs::read_to_string(files.shell.as_ref().unwrap_or(&files.node)).unwrap();
        let ports: Vec<String> = system::ports::ports(&top_text, &top).unwrap().into_iter().map(|p| p.name).collect();
        let node_text = std::fs::read_to_string(&files.node).unwrap();
        let paths = system::ports::instance_paths(&[&top_text, &node_text], &top);
        assert!(ports.contains(&"clk".to_string()));
        // The constraints name the clock and, with a kernel clock, every synchroniser.
        assert!(text.contains("create_clock -name fabric_clk -period 6.400"));
        if s.has_kernel_clock() {
            assert!(text.contains("set_clock_groups -asynchronous"));
            for p in s.ports.iter().filter(|p| p.clock == system::config::PortClock::Kernel) {
                for fifo in ["in", "out"] {
                    for sync in ["wr_gray_sync0", "rd_gray_sync0"] {
                        let reg = format!("cdc_p{}_{fifo}_{sync}", p.index);
                        assert!(paths.contains(&reg), "{top} lacks {reg}");
                        assert!(text.contains(&reg), "the constraints do not bound {reg}");
                    }
                }
            }
        }
        // A renamed port, clock or cell is caught, naming what is missing.
        let bad = dir.join(format!("bad.{}", files.constraint.extension().unwrap().to_string_lossy()));
        let mutations = [
            ("get_ports clk", "get_ports clock", "clock"),
            ("get_ports {clk}", "get_ports {clock}", "clock"),
            ("-group [get_clocks kernel_clk]", "-group [get_clocks kern_clk]", "kern_clk"),
            ("_in_wr_gray_sync0", "_in_wr_grey_sync0", "wr_grey_sync0"),
        ];
        let mut tried = 0;
        for (from, to, named) in mutations {
            if !text.contains(from) {
                continue;
            }
            tried += 1;
            std::fs::write(&bad, text.replacen(from, to, 1)).unwrap();
            let err = check_constraints(&bad, &ports, &paths).expect_err(&format!("{top}: `{to}` passed the check")).to_string();
            assert!(err.contains(named), "{top}: error does not name `{named}`: {err}");
        }
        assert!(tried >= 1);
        std::fs::write(&bad, format!("{text}\nset_propperty foo bar\n")).unwrap();
        assert!(check_constraints(&bad, &ports, &paths).is_err(), "{top}: an unknown command passed");
        // A core file naming a file that is not there fails FuseSoC's lint target (once: the
        // check lints and compiles every top again before it reaches FuseSoC).
        if i > 0 {
            continue;
        }
        let core = std::fs::read_to_string(&files.core).unwrap();
        std::fs::write(&files.core, core.replace("_node.v", "_nod.v")).unwrap();
        let err = system::check(&s, &gen, &cons).expect_err("a core file with a missing file passed").to_string();
        assert!(err.contains("FuseSoC") && err.contains("_nod.v"), "{err}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `[[kernel]]` entries: each bad value is refused naming its key and what is allowed; a good
/// one puts the kernel's counters and destination register into the node.
#[test]
fn wired_kernel_entries_are_checked_by_key() {
    let base = "name = \"w\"\nboard = \"u200\"\n[torus]\ndims = [4, 1, 1]\n[clocks]\nfabric_mhz = 156.25\n";
    let entry = |body: &str| format!("{base}[[kernel]]\n{body}\n");
    let good = "kernel = \"dg_rk_update\"\nport = 1\ninput_tag = 7\noutput_tag = 9\ndst = [3, 0, 0, 0]";
    let config = weft::system::parse(&entry(good)).unwrap();
    assert_eq!(config.node.kernels.len(), 1);
    let names = weft_ip::system::node::counter_names(&config.node);
    assert!(names.contains(&"p1_kernel_dropped".to_string()), "{names:?}");
    let refused = |body: &str, needle: &str| {
        let e = weft::system::parse(&entry(body)).unwrap_err();
        assert!(e.to_string().contains(needle), "{body:?}: {e}");
    };
    refused(&good.replace("dg_rk_update", "no_such"), "`kernel[0].kernel` = \"no_such\" is neither a shipped kernel");
    refused(&good.replace("\"dg_rk_update\"", "\"missing.wk\""), "`kernel[0].kernel` = \"missing.wk\"");
    refused(&good.replace("port = 1", "port = 2"), "`kernel[0].port` = 2 is out of range: allowed 0..=1");
    refused(&good.replace("input_tag = 7", "input_tag = 70000"), "`kernel[0].input_tag` = 70000 is out of range: allowed 0..=65535");
    refused(&good.replace("[3, 0, 0, 0]", "[4, 0, 0, 0]"), "`kernel[0].dst[0] (x)` = 4 is out of range: allowed 0..=3");
    refused(&good.replace("[3, 0, 0, 0]", "[3, 0, 0]"), "`kernel[0].dst` has 3 entries");
    refused(&format!("{good}\nclock = \"kernel\""), "`kernel[0].clock` = \"kernel\" needs `clocks.kernel_mhz`");
    refused(&format!("{good}\nclock = \"fast\""), "`kernel[0].clock` = \"fast\" is not allowed: \"fabric\" or \"kernel\"");
    let twice = format!("{base}[[port]]\nindex = 1\n[[kernel]]\n{good}\n");
    let e = weft::system::parse(&twice).unwrap_err();
    assert!(e.to_string().contains("`port[0]` describes IntraNode port 1, which `kernel[0]` is wired to"), "{e}");
}

/// A 256-bit node has the self-test block and may run ports on the kernel clock: its shell
/// (the FIFO design at 256 bits) passes the system checks.
#[test]
fn a_256_bit_node_has_self_test_and_kernel_clock_ports() {
    let text = "name = \"wide\"\nboard = \"u280\"\n[torus]\ndims = [2, 1, 1]\n[node]\nwidth = 256\nvc_buffer_flits = 64\n[clocks]\nfabric_mhz = 156.25\nkernel_mhz = 300.0\n[[port]]\nindex = 1\nclock = \"kernel\"\n";
    let config = weft::system::parse(text).unwrap();
    let map = weft_ip::system::node::register_map(&config.node);
    assert!(map.iter().any(|r| r.name == "selftest_control"), "no self-test registers at 256 bits");
    let dir = std::env::temp_dir().join(format!("weft-wide-{}", std::process::id()));
    let (generated, constraints) = (dir.join("generated"), dir.join("constraints"));
    weft::system::generate(&config, &generated, &constraints).unwrap();
    let shell = std::fs::read_to_string(generated.join("system/wide_shell.v")).unwrap();
    assert!(shell.contains("input wire [255:0] s_axis_p1_tdata;"), "the shell's kernel-clock port is not 256 bits");
    println!("{}", weft::system::check(&config, &generated, &constraints).unwrap());
    let _ = std::fs::remove_dir_all(&dir);
}

/// A wired kernel on the kernel clock: the node takes `kernel_clk`, the constraints bound the
/// skew of its crossing FIFOs' Gray pointers, and the system passes the checks (Verilator lint,
/// Icarus, every constrained cell exists, FuseSoC).
#[test]
fn a_wired_kernel_on_the_kernel_clock_passes_the_system_checks() {
    for (board, ext) in [("u200", "xdc"), ("s10_520n", "sdc")] {
        let text = format!("name = \"kc\"\nboard = \"{board}\"\n[torus]\ndims = [2, 1, 1]\n[clocks]\nfabric_mhz = 156.25\nkernel_mhz = 250.0\n[[kernel]]\nkernel = \"dg_rk_update\"\nport = 1\ninput_tag = 7\noutput_tag = 9\ndst = [1, 0, 0, 0]\nclock = \"kernel\"\n");
        let config = weft::system::parse(&text).unwrap();
        assert!(config.warnings().is_empty(), "{:?}", config.warnings());
        let dir = std::env::temp_dir().join(format!("weft-kc-{}-{board}", std::process::id()));
        let (generated, constraints) = (dir.join("generated"), dir.join("constraints"));
        weft::system::generate(&config, &generated, &constraints).unwrap();
        let node = std::fs::read_to_string(generated.join("system/kc_node.v")).unwrap();
        assert!(node.contains("kernel_clk;"), "the node has no kernel_clk port");
        let timing = std::fs::read_to_string(constraints.join(format!("{board}/kc.{ext}"))).unwrap();
        assert!(timing.contains("create_clock -name kernel_clk") && timing.contains("to_kernel_wr_gray"), "{timing}");
        println!("{board}: {}", weft::system::check(&config, &generated, &constraints).unwrap());
        let _ = std::fs::remove_dir_all(&dir);
    }
}

/// `[allreduce]`: the engine's ports are checked by key; a node with the engine has its
/// registers and counters and passes the system checks (Verilator lint of every top, the
/// register map's outside checks).
#[test]
fn allreduce_entries_are_checked_and_the_node_passes_the_system_checks() {
    let base = "name = \"ar\"\nboard = \"u200\"\n[torus]\ndims = [2, 2, 1]\n[clocks]\nfabric_mhz = 156.25\n";
    let config = weft::system::parse(&format!("{base}[allreduce]\nports = [0, 1]\n")).unwrap();
    assert_eq!(config.node.allreduce, Some(weft_ip::system::Allreduce::new([0, 1], weft_ip::system::allreduce::ElementType::F32)));
    let map = weft_ip::system::node::register_map(&config.node);
    let at = |name: &str| map.iter().find(|r| r.name == name).map(|r| r.addr);
    let names = ["allreduce_flags", "allreduce_dst_a", "allreduce_dst_b", "allreduce_op", "allreduce_type"];
    assert_eq!(names.map(at), [0x0A0, 0x0A4, 0x0A8, 0x0AC, 0x0B0].map(Some));
    for (name, ty) in [("bf16", weft_ip::system::allreduce::ElementType::Bf16), ("i32", weft_ip::system::allreduce::ElementType::I32)] {
        let typed = weft::system::parse(&format!("{base}[allreduce]\nports = [0, 1]\ntype = \"{name}\"\n")).unwrap();
        assert_eq!(typed.node.allreduce.as_ref().unwrap().element, ty);
    }
    assert!(at("stat_allreduce_mismatches").is_some(), "no allreduce counters");
    let refused = |body: &str, needle: &str| {
        let e = weft::system::parse(&format!("{base}{body}")).unwrap_err();
        assert!(e.to_string().contains(needle), "{body:?}: {e}");
    };
    // Stripes: each further engine's program after the unit's registers, its counters after the unit's.
    let striped = weft::system::parse(&format!("{base}[node]\nlocal_ports = 6\n[allreduce]\nports = [0, 1]\nstripes = [[2, 3], [4, 5]]\n")).unwrap();
    assert_eq!(striped.node.allreduce.as_ref().unwrap().stripes, vec![[2, 3], [4, 5]]);
    let map = weft_ip::system::node::register_map(&striped.node);
    let at = |name: &str| map.iter().find(|r| r.name == name).map(|r| r.addr);
    assert_eq!(["allreduce_s1_flags", "allreduce_s1_dst_b", "allreduce_s2_flags", "allreduce_s2_dst_b"].map(at), [0x0D8, 0x0E0, 0x0E4, 0x0EC].map(Some));
    assert!(at("stat_allreduce_s2_id_mismatches").is_some_and(|a| a > at("stat_allreduce_butterflies").unwrap()));
    refused("[node]\nlocal_ports = 6\n[allreduce]\nports = [0, 1]\nstripes = [[2]]\n", "`allreduce.stripes[0]` has 1 entries: give two");
    refused("[node]\nlocal_ports = 6\n[allreduce]\nports = [0, 1]\nstripes = [[2, 6]]\n", "`allreduce.stripes[0][1]` = 6 is out of range: allowed 0..=5");
    refused("[node]\nlocal_ports = 6\n[allreduce]\nports = [0, 1]\nstripes = [[2, 1]]\n", "allreduce stripe 1 port b = 1 is taken by another engine port");
    refused("[node]\nlocal_ports = 8\n[allreduce]\nports = [0, 1]\nstripes = [[2, 3], [4, 5], [6, 7]]\n", "3 allreduce stripes besides the unit: allowed 0..=2");
    refused("[allreduce]\nports = [0, 2]\n", "`allreduce.ports[1]` = 2 is out of range: allowed 0..=1");
    refused("[allreduce]\nports = [0]\n", "`allreduce.ports` has 1 entries");
    refused("[allreduce]\nports = [1, 1]\n", "allreduce port b = 1 is taken by another engine port");
    refused("[allreduce]\nports = [0, 1]\ntype = \"i8\"\n", "`allreduce.type` = \"i8\": allowed \"f32\", \"f64\", \"f16\", \"bf16\", \"i32\"");
    refused("[[port]]\nindex = 1\n[allreduce]\nports = [0, 1]\n", "`port[0]` describes IntraNode port 1, which is an allreduce engine's port b (`allreduce.ports[1]`)");
    refused("[[kernel]]\nkernel = \"dg_rk_update\"\nport = 1\ninput_tag = 7\noutput_tag = 9\ndst = [1, 0, 0, 0]\n[allreduce]\nports = [0, 1]\n", "allreduce port b = 1 also has a kernel");
    let dir = std::env::temp_dir().join(format!("weft-ar-{}", std::process::id()));
    let (generated, constraints) = (dir.join("generated"), dir.join("constraints"));
    weft::system::generate(&config, &generated, &constraints).unwrap();
    let node = std::fs::read_to_string(generated.join("system/ar_node.v")).unwrap();
    let ports: Vec<String> = weft::system::ports::ports(&node, "ar_node").unwrap().into_iter().map(|p| p.name).collect();
    let has = |p: &str| ports.iter().any(|x| x == p);
    assert!(node.contains("_collectives_w128 allreduce (") && has("s_axis_p0_tdata") && !has("s_axis_p1_tdata"), "the engine owns port 1 inside the node");
    // The linker configuration offers only the ports the kernel has.
    let vpp = std::fs::read_to_string(generated.join("system/ar_vpp.cfg")).unwrap();
    assert!(vpp.contains("weft.m_axis_p0") && !vpp.contains("weft.m_axis_p1"), "{vpp}");
    println!("{}", weft::system::check(&config, &generated, &constraints).unwrap());
    // With stripes: each stripe engine's port a is a host port of the node, its port b inside.
    let (generated, constraints) = (dir.join("striped/generated"), dir.join("striped/constraints"));
    weft::system::generate(&striped, &generated, &constraints).unwrap();
    let node = std::fs::read_to_string(generated.join("system/ar_node.v")).unwrap();
    let ports: Vec<String> = weft::system::ports::ports(&node, "ar_node").unwrap().into_iter().map(|p| p.name).collect();
    let hosts: Vec<bool> = (0..6).map(|p| ports.iter().any(|x| *x == format!("s_axis_p{p}_tdata"))).collect();
    assert_eq!(hosts, [true, false, true, false, true, false]);
    assert!(node.contains("allreduce_w128 allreduce_s1 (") && node.contains("allreduce_w128 allreduce_s2 ("), "two stripe engines");
    println!("{}", weft::system::check(&striped, &generated, &constraints).unwrap());
    let _ = std::fs::remove_dir_all(&dir);
}
