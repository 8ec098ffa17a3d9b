//! The generated whole-torus simulation tops (`<cfg>_sim`) of both shipped systems in
//! Verilator: the boot sequencers write every node's coordinates, every node's register window
//! answers writes and reads from outside, the links train, and random
//! packets of every size from every port of every node to random destinations arrive exactly
//! once, intact, in order per flow, with minimal hops — while `inject_err` flips payload bits on
//! random links throughout.

use std::path::Path;

use weft::sim::network::{Injection, Pattern, Torus, Traffic};

// One test per shipped system, so that the two run side by side.
#[test]
fn torus_4x2x1_sim_delivers_under_inject_err() {
    deliver(0);
}

#[test]
fn torus_2x2x2_sim_delivers_under_inject_err() {
    deliver(1);
}

fn deliver(which: usize) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = std::env::temp_dir().join(format!("weft-system-sim-{}-{which}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    {
        let system = weft::system::shipped().swap_remove(which);
        let name = &system.name;
        // The model is built from one file: the node and the top, as the core file's sim target lists them.
        let node = std::fs::read_to_string(root.join(format!("generated/system/{name}_node.v"))).unwrap();
        let sim = std::fs::read_to_string(root.join(format!("generated/system/{name}_sim.v"))).unwrap();
        let file = dir.join(format!("{name}_sim.v"));
        std::fs::write(&file, node + &sim).unwrap();
        let start = std::time::Instant::now();
        let mut torus = Torus::verilated_sim(&system.node.router, &file, &format!("{name}_sim")).unwrap();
        let built = start.elapsed();
        torus.reset();
        let up = torus.bring_up(20_000).unwrap();
        // Zero-load hop, as soon as the links are up: a header-only packet from node 0 to its X+
        // neighbour and back, from the cycle its beat is offered to the cycle it leaves, both
        // counted — at most 40 cycles with the 16-cycle channel.
        let rc = &system.node.router;
        let neighbour = rc.neighbour(0, weft_ip::router::Direction { dim: 0, plus: true });
        for (src, dst) in [((0, 0), (neighbour, 0)), ((neighbour, 0), (0, 0))] {
            let one = Traffic { pattern: Pattern::UniformRandom, injection: Injection::One { src, dst, bytes: 0 }, min_bytes: 0, max_bytes: 0, valid_percent: 100, ready_percent: 100, seed: 1 };
            let run = torus.run(&one, 1_000).unwrap().unwrap();
            let hop = run.deliveries[0].head_out - run.deliveries[0].created + 1;
            println!("{name}_sim: header-only packet {src:?} → {dst:?}: {hop} cycles");
            assert!(hop <= 40, "{name}_sim: {src:?} → {dst:?} took {hop} cycles");
        }
        // Every node's register window from outside: the boot sequencer's coordinates, then a
        // write to each node's scratch register read back from every node.
        for n in 0..rc.nodes() {
            let c = rc.coords(n);
            assert_eq!(torus.axil_read(n, 0x008).unwrap(), ((c[0] | c[1] << 8 | c[2] << 16) as u32, 0), "{name}_sim: node {n}'s coordinates");
            torus.axil_write(n, 0x010, 0x5EED_0000 + n as u32).unwrap();
        }
        for n in 0..rc.nodes() {
            assert_eq!(torus.axil_read(n, 0x010).unwrap(), (0x5EED_0000 + n as u32, 0), "{name}_sim: node {n}'s scratch register");
        }
        torus.inject_errors(200, 7); // 2·10^-4 per link per cycle
        let packets = 1500;
        let traffic = Traffic {
            pattern: Pattern::UniformRandom,
            injection: Injection::Queued(packets),
            min_bytes: 0,
            max_bytes: system.node.router.max_packet_bytes,
            valid_percent: 85,
            ready_percent: 75,
            seed: 31,
        };
        let run = torus.run(&traffic, 20_000).unwrap().unwrap_or_else(|s| panic!("{name}_sim: stuck {s:?}"));
        assert_eq!(run.deliveries.len(), packets);
        assert!(torus.injected_pulses() > 50, "{name}_sim: only {} inject_err pulses", torus.injected_pulses());
        println!("{name}_sim: built in {built:.0?}, links up after {up} cycles; {packets} packets in {} cycles with {} inject_err pulses", run.cycles, torus.injected_pulses());
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The simulation top of a ring over the board's IO channels (`examples/ring_520n_io.toml` as
/// four nodes with smaller buffers): every node's window answers from outside, a header-only
/// packet to the X+ neighbour takes the cable and a few cycles, random packets of every size
/// arrive exactly once, intact and in order, also while the cable leaving node 0 in X+ is
/// pulled for a while (the channel's words wait; nothing is lost, as the board's link keeps
/// them). Opt-in (`-- --ignored`): a third Verilator build beside the shipped tops' costs the
/// default run minutes on two cores; the IO nodes run in the built-in simulator by default
/// (`weft-sim`'s `io_nodes`).
#[test]
#[ignore]
fn ring_520n_io_sim_delivers_through_a_pulled_cable() {
    use weft_ip::router::Direction;
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = std::env::temp_dir().join(format!("weft-system-sim-io-{}", std::process::id()));
    let mut system = weft::system::load(&root.join("examples/ring_520n_io.toml")).unwrap();
    system.node.router.dims = [4, 1, 1];
    system.node.router.vc_buffer_flits = 64;
    system.node.router.max_packet_bytes = 1024;
    let name = system.name.clone();
    weft::system::generate(&system, &dir.join("generated"), &dir.join("constraints")).unwrap();
    let read = |f: &str| std::fs::read_to_string(dir.join("generated/system").join(f)).unwrap();
    let file = dir.join(format!("{name}_sim_all.v"));
    std::fs::write(&file, read(&format!("{name}_node.v")) + &read(&format!("{name}_sim.v"))).unwrap();
    let mut torus = Torus::verilated_sim(&system.node.router, &file, &format!("{name}_sim")).unwrap();
    torus.reset();
    let up = torus.bring_up(2_000).unwrap();
    let rc = system.node.router.clone();
    for n in 0..rc.nodes() {
        assert_eq!(torus.axil_read(n, 0x008).unwrap(), (rc.coords(n)[0] as u32, 0), "node {n}'s coordinates");
    }
    let one =
        Traffic { pattern: Pattern::UniformRandom, injection: Injection::One { src: (0, 0), dst: (1, 0), bytes: 0 }, min_bytes: 0, max_bytes: 0, valid_percent: 100, ready_percent: 100, seed: 1 };
    let run = torus.run(&one, 1_000).unwrap().unwrap();
    let hop = run.deliveries[0].head_out - run.deliveries[0].created + 1;
    let cable = system.channel_latency as u64;
    assert!(hop > cable && hop <= cable + 16, "header-only packet to the X+ neighbour: {hop} cycles over an {cable}-cycle cable");
    let packets = 600;
    let traffic = Traffic { pattern: Pattern::UniformRandom, injection: Injection::Queued(packets), min_bytes: 0, max_bytes: 1024, valid_percent: 85, ready_percent: 75, seed: 8 };
    let x_plus = Direction { dim: 0, plus: true };
    torus.cut(0, x_plus, true);
    let start = torus.cycle;
    let pulled = 3_000;
    let run = torus.run_with(&traffic, pulled + 10_000, &mut |t| {
        if t.cycle == start + pulled {
            t.cut(0, x_plus, false);
        }
    });
    let run = run.unwrap().unwrap_or_else(|s| panic!("{name}_sim: stuck {s:?}"));
    assert_eq!(run.deliveries.len(), packets);
    assert!(run.cycles > pulled, "the run ended before the cable came back");
    println!("{name}_sim (4 nodes): up after {up} cycles; header-only hop {hop} cycles over an {cable}-cycle cable; {packets} packets in {} cycles with X+ of node 0 pulled for {pulled}", run.cycles);
    let _ = std::fs::remove_dir_all(&dir);
}
