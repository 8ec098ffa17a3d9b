//! A wired system end to end on the generated RTL: `examples/wired_ring.toml` (a ring of four
//! nodes, the user's DSL kernel `axpby.wk` on IntraNode port 1 of every node) generated, checked
//! (Verilator -Wall lint, Icarus, constraints, FuseSoC), and its simulation top run in Verilator.
//! Node B = 0 sends packets to node A = 1, port 1: those tagged 7 feed A's kernel, whose answers
//! go to its destination register's reset value, node C = 3, port 0; others are dropped there.
//! Every tagged packet is answered once, in order, with the header the kernel port writes and the
//! kernel's software model applied to its payload bit for bit; node 1's counters (read through
//! the `_sim_async` top's register read channel, every node on one clock here) account for every
//! packet: taken, answered, or dropped for its tag.

use std::path::Path;

use weft::sim::cosim::Model;
use weft_hdl::testbench::Rng;
use weft_ip::kernels::operand;
use weft_ip::router::header::Header;

#[test]
fn a_dsl_kernel_on_node_a_answers_node_b_at_node_c_in_verilator() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let config = weft::system::load(&root.join("examples/wired_ring.toml")).unwrap();
    let dir = std::env::temp_dir().join(format!("weft-wired-{}", std::process::id()));
    let (generated, constraints) = (dir.join("generated"), dir.join("constraints"));
    weft::system::generate(&config, &generated, &constraints).unwrap();
    let summary = weft::system::check(&config, &generated, &constraints).unwrap();
    println!("{summary}");

    let name = &config.name;
    let node = std::fs::read_to_string(generated.join(format!("system/{name}_node.v"))).unwrap();
    let sim = std::fs::read_to_string(generated.join(format!("system/{name}_sim.v"))).unwrap();
    let file = dir.join(format!("{name}_sim.v"));
    std::fs::write(&file, node + &sim).unwrap();
    let mut m = Model::build(&file, &format!("{name}_sim_async")).unwrap();
    let clocks: Vec<_> = (0..4).map(|n| m.port(&format!("clk_n{n}")).unwrap()).collect();
    let resets: Vec<_> = (0..4).map(|n| m.port(&format!("rst_n{n}")).unwrap()).collect();
    let tick = |m: &mut Model| m.edges(&clocks);
    let p = |m: &Model, n: &str| m.port(n).unwrap();
    let (b_data, b_last, b_valid, b_ready) = (p(&m, "s_axis_n0_p0_tdata"), p(&m, "s_axis_n0_p0_tlast"), p(&m, "s_axis_n0_p0_tvalid"), p(&m, "s_axis_n0_p0_tready"));
    let (c_data, c_last, c_valid, c_ready) = (p(&m, "m_axis_n3_p0_tdata"), p(&m, "m_axis_n3_p0_tlast"), p(&m, "m_axis_n3_p0_tvalid"), p(&m, "m_axis_n3_p0_tready"));
    // Every other output port takes what comes (nothing should) and is watched.
    let others: Vec<_> = (0..4).filter(|&n| n != 3).map(|n| format!("m_axis_n{n}_p0")).collect();
    let other_valid: Vec<_> = others.iter().map(|o| p(&m, &format!("{o}_tvalid"))).collect();
    for o in &others {
        let r = p(&m, &format!("{o}_tready"));
        m.set(r, 1);
    }
    m.set(c_ready, 0);
    for r in &resets {
        m.set(*r, 1);
    }
    for _ in 0..4 {
        tick(&mut m);
    }
    for r in &resets {
        m.set(*r, 0);
    }
    let up = p(&m, "link_up");
    let mut cycles = 0;
    while m.get(up) == 0 {
        tick(&mut m);
        cycles += 1;
        assert!(cycles < 20_000, "links not up");
    }

    // Packets from B: header (to A, port 1), then payload words of whole or partial beats.
    let kernel = weft_ip::system::kernel_port::KernelPort {
        port: 1,
        source: include_str!("../examples/kernels/axpby.wk").into(),
        origin: String::new(),
        input_tag: 7,
        output_tag: 9,
        dst: 0,
        kernel_clock: false,
    }
    .kernel()
    .unwrap();
    let mut rng = Rng::new(5);
    let mut beats: Vec<(Vec<u32>, bool)> = vec![];
    let mut expected: Vec<(usize, Vec<u32>)> = vec![];
    for _ in 0..120 {
        let tag = if rng.chance(80) { 7 } else { 8 };
        let words = 1 + rng.below(60) as usize;
        let payload: Vec<u32> = (0..words).map(|_| operand(&mut rng)).collect();
        let h = Header { dst: [1, 0, 0], dst_port: 1, tag, length: 4 * words, ..Default::default() }.pack() & ((1 << 120) - 1);
        beats.push(((0..4).map(|j| (h >> (32 * j)) as u32).collect(), false));
        let chunks: Vec<&[u32]> = payload.chunks(4).collect();
        for (i, c) in chunks.iter().enumerate() {
            beats.push((c.to_vec(), i + 1 == chunks.len()));
        }
        if tag == 7 {
            let mut padded = payload.clone();
            padded.resize(words.div_ceil(3) * 3, 0);
            let lanes: Vec<Vec<u32>> = padded.chunks(3).map(|c| c.to_vec()).collect();
            expected.push((lanes.len(), kernel.evaluate_vector_beats(&lanes).concat()));
        }
    }
    let (mut sent, mut got, mut current, mut idle) = (0usize, vec![], None::<(Header, Vec<u32>)>, 0u64);
    while got.len() < expected.len() {
        idle += 1;
        assert!(idle < 50_000, "stuck with {} of {} answers, {sent} of {} beats sent", got.len(), expected.len(), beats.len());
        let offering = sent < beats.len() && rng.chance(80);
        if offering {
            m.set_words(b_data, &beats[sent].0);
            m.set(b_last, beats[sent].1 as u64);
        }
        m.set(b_valid, offering as u64);
        let ready = rng.chance(70);
        m.set(c_ready, ready as u64);
        m.eval();
        if offering && m.get(b_ready) == 1 {
            sent += 1;
        }
        for v in &other_valid {
            assert_eq!(m.get(*v), 0, "a packet left at a node other than C");
        }
        if ready && m.get(c_valid) == 1 {
            idle = 0;
            let words = m.get_words(c_data).to_vec();
            let last = m.get(c_last) == 1;
            match current.as_mut() {
                None => current = Some((Header::unpack((0..4).fold(0u128, |v, j| v | (words[j] as u128) << (32 * j))), vec![])),
                Some((_, payload)) => payload.extend(words),
            }
            if last {
                got.push(current.take().unwrap());
            }
        }
        tick(&mut m);
    }
    for (i, ((beats, want), (h, payload))) in expected.iter().zip(&got).enumerate() {
        assert_eq!((h.src, h.src_port, h.tag, h.length, h.hops), ([1, 0, 0], 1, 9, 8 * beats, 2), "header of answer {i}");
        assert_eq!(&payload[..want.len()], &want[..], "payload of answer {i}");
    }
    // Node 1's kernel counters: every packet sent is taken (tag 7) or dropped (tag 8).
    let names = weft_ip::system::node::counter_names(&config.node);
    let (araddr, arvalid, arready, rdata, rvalid) = (p(&m, "axil_araddr_n1"), p(&m, "axil_arvalid_n1"), p(&m, "axil_arready_n1"), p(&m, "axil_rdata_n1"), p(&m, "axil_rvalid_n1"));
    let rready = p(&m, "axil_rready_n1");
    m.set(rready, 1);
    let read = |m: &mut Model, name: &str| -> u64 {
        let addr = 0x100 + 4 * names.iter().position(|n| n == name).unwrap() as u64;
        m.set(araddr, addr);
        m.set(arvalid, 1);
        for _ in 0..100 {
            m.eval();
            let taken = m.get(arready) == 1;
            tick(m);
            if taken {
                m.set(arvalid, 0);
            }
            if m.get(rvalid) == 1 {
                return m.get(rdata);
            }
        }
        panic!("no read data for {name}");
    };
    let sent = beats.iter().filter(|b| b.1).count() as u64;
    let (taken, answered, dropped) = (read(&mut m, "p1_kernel_packets_in"), read(&mut m, "p1_kernel_packets_out"), read(&mut m, "p1_kernel_dropped"));
    assert_eq!((taken, answered, taken + dropped), (expected.len() as u64, expected.len() as u64, sent), "node 1's kernel counters");
    println!("{} answers from node 1's kernel at node 3; node 0 sent {sent}, node 1 counted {taken} taken, {answered} answered, {dropped} dropped", got.len());
    let _ = std::fs::remove_dir_all(&dir);
}
