//! The transceiver wrapper's Verilog in the outside tools: for the shipped links' two lanes it
//! passes Verilator's lint with -Wall and synthesizes with Yosys (synth_xilinx); the figures are
//! printed. The U280 system's transceiver files: `<cfg>_node_gt` lints with the node, and
//! `<cfg>_gt.tcl` runs against stub Vivado commands that check every channel, rate and clock
//! (a script with one channel moved fails). Its behaviour on the gearbox model:
//! `cargo test --release -p weft-sim --test transceiver`.

use weft::hdl::export::{export_netlist, ModuleSpec};
use weft::ip::link::gt::gt_wrapper;
use weft::tools::{verilator_lint, yosys_synth};

#[test]
fn the_transceiver_wrapper_lints_and_synthesizes() {
    let spec = ModuleSpec { family: "link", name: "gt_wrapper_x2".into(), summary: "two lanes on a 64B/66B transceiver gearbox".into(), parameters: vec![], hidden_ports: vec![] };
    let text = export_netlist(&spec, &gt_wrapper(2).unwrap()).unwrap();
    let dir = std::env::temp_dir().join(format!("weft-test-gt-wrapper-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("gt_wrapper_x2.v");
    std::fs::write(&file, &text).unwrap();
    verilator_lint(&file, "gt_wrapper_x2").unwrap();
    let report = yosys_synth(&file, "gt_wrapper_x2").unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    assert!(report.luts > 0 && report.flip_flops > 0);
    println!("gt_wrapper_x2: {} LUT, {} FF, {} LUT levels", report.luts, report.flip_flops, report.logic_depth);
}

#[test]
fn the_u280_transceiver_files_lint_and_pass_the_stub_check() {
    use weft::system::transceivers::{assignment, check_gt_tcl, gt_tcl, RATES};
    let out = std::env::temp_dir().join(format!("weft-test-gt-files-{}", std::process::id()));
    let config = weft::system::shipped()[0].clone();
    assert_eq!(config.board.name, "u280");
    let written = weft::system::generate(&config, &out, &out.join("constraints")).unwrap();
    let dir = out.join("system");
    let (top, tcl) = (dir.join("torus_4x2x1_node_gt.v"), dir.join("torus_4x2x1_gt.tcl"));
    assert!(written.contains(&top) && written.contains(&tcl));
    weft::tools::verilator_lint_files(&[&dir.join("torus_4x2x1_node.v"), &top], "torus_4x2x1_node_gt").unwrap();
    check_gt_tcl(&tcl, &config, RATES[0]).unwrap();
    // Four links of two lanes: X+ and X− on QSFP0's four channels, Y+ and Y− on QSFP1's.
    let sites: Vec<(String, Vec<&str>)> = assignment(&config).unwrap().into_iter().map(|(e, l)| (e.name(), l.into_iter().map(|x| x.1).collect())).collect();
    assert_eq!(sites[0], ("xp".to_string(), vec!["X0Y40", "X0Y41"]));
    assert_eq!(sites[3], ("yn".to_string(), vec!["X0Y46", "X0Y47"]));
    // The 25.78125 Gb/s script passes for its own rate, not for the other.
    let fast = out.join("fast_gt.tcl");
    std::fs::write(&fast, gt_tcl(&config, RATES[1]).unwrap()).unwrap();
    check_gt_tcl(&fast, &config, RATES[1]).unwrap();
    assert!(check_gt_tcl(&fast, &config, RATES[0]).is_err());
    // A channel moved: refused.
    let moved = out.join("moved_gt.tcl");
    std::fs::write(&moved, std::fs::read_to_string(&tcl).unwrap().replacen("X0Y41 X0Y42", "X0Y42 X0Y41", 1)).unwrap();
    assert!(check_gt_tcl(&moved, &config, RATES[0]).is_err());
    // The node with its transceivers inside: lints with the IPs and primitives as stubs; its XDC
    // pins every lane and reference clock, QSFP0's first lane receiving on the master XDC's L53.
    let gt = weft::system::Transceivers { node_gt: top.clone(), tcl: tcl.clone(), top: dir.join("torus_4x2x1_gt_top.v"), xdc: dir.join("torus_4x2x1_gt_top.xdc") };
    assert!(written.contains(&gt.top) && written.contains(&gt.xdc));
    let node = dir.join("torus_4x2x1_node.v");
    weft::system::gt_top::check(&config, &node, &gt).unwrap();
    let xdc = std::fs::read_to_string(&gt.xdc).unwrap();
    assert!(xdc.contains("set_property PACKAGE_PIN L53 [get_ports {qsfp0_rx_p[0]}]"), "{xdc}");
    assert!(xdc.contains("set_property PACKAGE_PIN T42 [get_ports qsfp0_refclk_p]") && xdc.contains("create_clock -period 6.400"), "{xdc}");
    // A lane index past the cage, a pin given twice, a lane left without a pin: refused.
    for (what, broken) in [
        ("index past the bus", xdc.replace("{qsfp1_tx_n[3]}", "{qsfp1_tx_n[4]}")),
        ("pin given twice", xdc.replace("PACKAGE_PIN L54 ", "PACKAGE_PIN L53 ")),
        ("lane without a pin", xdc.lines().filter(|l| !l.contains("{qsfp1_rx_p[2]}")).collect::<Vec<_>>().join("\n")),
    ] {
        std::fs::write(&gt.xdc, &broken).unwrap();
        assert!(weft::system::gt_top::check(&config, &node, &gt).is_err(), "{what}: accepted");
    }
    let _ = std::fs::remove_dir_all(&out);
    // The U200 (a ring of four: X+ and X− on QSFP0, quad 231): its own pins, reference clock and
    // control pins (the SI5335's frequency select, the module's reset and low-power pins).
    let ring = weft::system::load(std::path::Path::new("examples/wired_ring.toml")).unwrap();
    assert_eq!(ring.board.name, "u200");
    let written = weft::system::generate(&ring, &out, &out.join("constraints")).unwrap();
    let gt = weft::system::Transceivers { node_gt: dir.join("wired_ring_node_gt.v"), tcl: dir.join("wired_ring_gt.tcl"), top: dir.join("wired_ring_gt_top.v"), xdc: dir.join("wired_ring_gt_top.xdc") };
    assert!(gt.files().iter().all(|f| written.contains(f)));
    check_gt_tcl(&gt.tcl, &ring, RATES[0]).unwrap();
    weft::system::gt_top::check(&ring, &dir.join("wired_ring_node.v"), &gt).unwrap();
    let xdc = std::fs::read_to_string(&gt.xdc).unwrap();
    for line in [
        "set_property PACKAGE_PIN N4 [get_ports {qsfp0_rx_p[0]}]",
        "set_property PACKAGE_PIN M11 [get_ports qsfp0_refclk_p]",
        "set_property -dict {PACKAGE_PIN BE17 IOSTANDARD LVCMOS12} [get_ports qsfp0_resetl]",
    ] {
        assert!(xdc.contains(line), "{line}\n{xdc}");
    }
    assert!(!xdc.contains("qsfp1"), "the ring's four channels fit QSFP0");
    let top = std::fs::read_to_string(&gt.top).unwrap();
    assert!(top.contains("assign qsfp0_resetl = 1'b1;") && top.contains("assign qsfp0_lpmode = 1'b0;"), "the module out of reset, not in low power");
    let _ = std::fs::remove_dir_all(&out);
    // Six links of two lanes need 12 channels: more than the U280's two cages.
    let cube = weft::system::parse(&std::fs::read_to_string("examples/torus_4x2x1.toml").unwrap().replace("dims = [4, 2, 1]", "dims = [2, 2, 2]")).unwrap();
    let err = assignment(&cube).unwrap_err().to_string();
    assert!(err.contains("12 transceiver channels") && err.contains("8"), "{err}");
}

/// The generated node on its transceivers in Verilator: `torus_4x2x1`'s node with every link
/// behind the wrapper and a hardware gearbox model (`weft_sim::transceiver::node_on_gearboxes`),
/// one model per node, every lane of every cable at its own bit alignment, bit errors on every
/// cable: the links come up, 2,000 random packets arrive exactly once, intact and in order per
/// flow (the harness checks each), and every lane's wrapper slipped its gearbox exactly as far
/// as its line is misaligned.
#[test]
fn generated_nodes_on_transceivers_deliver_random_packets() {
    use weft::ip::router::Direction;
    use weft::sim::network::{Injection, Pattern, Torus, Traffic};
    let config = weft::system::shipped()[0].node.clone();
    let net = weft::sim::transceiver::node_on_gearboxes(&config, 4).unwrap();
    let name = "torus_4x2x1_node_on_gt";
    let spec = ModuleSpec { family: "system", name: name.into(), summary: "the node on transceiver gearbox models".into(), parameters: vec![], hidden_ports: vec![] };
    let dir = std::env::temp_dir().join(format!("weft-test-node-on-gt-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join(format!("{name}.v"));
    std::fs::write(&file, export_netlist(&spec, &net).unwrap()).unwrap();
    let mut torus = Torus::verilated_nodes(&config, &file, name, 16).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    let offset = |n: usize, d: Direction, l: usize| (7 + 13 * n + 29 * d.index() + 37 * l) % 66;
    torus.misalign(&offset);
    torus.reset();
    let up = torus.bring_up(60_000).unwrap();
    torus.set_bit_error_rate(1e-5);
    let traffic =
        Traffic { pattern: Pattern::UniformRandom, injection: Injection::Queued(2000), min_bytes: 0, max_bytes: config.router.max_packet_bytes, valid_percent: 85, ready_percent: 75, seed: 5 };
    let run = torus.run(&traffic, 20_000).unwrap().unwrap_or_else(|s| panic!("stuck {s:?}"));
    assert_eq!(run.deliveries.len(), 2000);
    // The receiver of the cable leaving node n toward d is the neighbour's endpoint facing back.
    let rc = &config.router;
    for n in 0..rc.nodes() {
        for d in config.endpoints() {
            let to = rc.neighbour(n, d);
            for l in 0..config.link.lanes {
                let slips = torus.output(to, &format!("{}_gt_slips{l}", d.opposite().name()));
                let want = ((66 - offset(n, d, l)) % 66) as u64;
                assert!(slips % 66 == want && slips < 2 * 66, "node {to}, link {}, lane {l}: {slips} slips, want {want} (mod 66)", d.opposite().name());
            }
        }
    }
    println!("torus_4x2x1 on transceivers: links up after {up} cycles; 2000 packets in {} cycles, {} bits flipped", run.cycles, torus.flipped_bits());
}
