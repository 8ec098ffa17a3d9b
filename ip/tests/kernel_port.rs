//! A kernel wired to an IntraNode port, in the built-in simulator: random packets with the
//! kernel's tag and others, payloads of any length, random back-pressure on both sides. Every
//! packet with the kernel's tag and a payload is answered by one packet to the destination, with
//! the output tag, its length, and the kernel's software model applied to the payload (zero
//! padded to whole beats) bit for bit; every other packet is dropped and counted.

use weft_hdl::netlist::eval::Evaluator;
use weft_hdl::testbench::Rng;
use weft_ip::kernels::operand;
use weft_ip::router::header::Header;
use weft_ip::system::kernel_port::{kernel_port, pack_dst, KernelPort};

const AXPBY: &str = "kernel axpby: f32\ninput a, x, y\noutput s = a*x + y, d = a*x - y\n";

/// A packet as words: the header (128 bits) then the payload's 32-bit words.
struct Packet {
    tag: u16,
    words: Vec<u32>,
}

/// Runs `packets` through the wrapper of `kp` on a `width`-bit port; returns the answers as
/// (header, payload words) and the `dropped` counter.
/// With a kernel on its own clock, the fabric and kernel clocks run at the given periods (the
/// streams are on the fabric clock).
fn run_clocked(kp: &KernelPort, width: usize, packets: &[Packet], seed: u64, (fabric_period, kernel_period): (u64, u64)) -> (Vec<(Header, Vec<u32>)>, u128) {
    let net = kernel_port(width, 1024, kp).unwrap();
    net.check_domains().unwrap();
    let mut e = Evaluator::new(net);
    e.reset(2);
    let mut rng = Rng::new(seed);
    let flit_words = width / 32;
    // Beats in: (data words, keep, last).
    let mut beats: Vec<(Vec<u32>, u128, bool)> = vec![];
    for p in packets {
        let h = Header { tag: p.tag, length: 4 * p.words.len(), ..Default::default() }.pack();
        let mut head = vec![0u32; flit_words];
        for (j, w) in head.iter_mut().take(4).enumerate() {
            *w = (h >> (32 * j)) as u32;
        }
        beats.push((head, (1u128 << (width / 8)) - 1, p.words.is_empty()));
        let chunks: Vec<&[u32]> = p.words.chunks(flit_words).collect();
        for (i, c) in chunks.iter().enumerate() {
            let mut data = c.to_vec();
            let keep = (1u128 << (4 * c.len())) - 1;
            data.resize(flit_words, 0xDEAD_BEEF);
            beats.push((data, keep, i + 1 == chunks.len()));
        }
    }
    let set_words = |e: &mut Evaluator, port: &str, words: &[u32]| {
        let value = num_bigint::BigUint::from_slice(&words[..width / 32]);
        let w = e.input(port).unwrap();
        e.set_big(w, &value);
    };
    let get_words = |e: &Evaluator, port: &str| -> Vec<u32> { (0..width / 32).map(|j| e.get_output_bits(port, 32 * j, 32) as u32).collect() };
    let (mut sent, mut answers, mut current): (usize, Vec<(Header, Vec<u32>)>, Option<(Header, Vec<u32>)>) = (0, vec![], None);
    let mut idle = 0;
    let (mut tf, mut tk) = (0u64, kernel_period / 3);
    while idle < 2000 {
        if kp.kernel_clock && tk < tf {
            e.settle();
            e.clock_domains(&[(1, false)]);
            tk += kernel_period;
            continue;
        }
        tf += fabric_period;
        idle += 1;
        let offering = sent < beats.len() && rng.chance(75);
        if offering {
            set_words(&mut e, "s_axis_tdata", &beats[sent].0);
            e.set_input("s_axis_tkeep", beats[sent].1);
            e.set_input("s_axis_tlast", beats[sent].2 as u128);
        }
        e.set_input("s_axis_tvalid", offering as u128);
        e.set_input("dst", pack_dst(1, 2, 3, 1) as u128);
        let ready = rng.chance(60);
        e.set_input("m_axis_tready", ready as u128);
        e.settle();
        if offering && e.get_output("s_axis_tready") == 1 {
            sent += 1;
            idle = 0;
        }
        if ready && e.get_output("m_axis_tvalid") == 1 {
            idle = 0;
            let words = get_words(&e, "m_axis_tdata");
            let last = e.get_output("m_axis_tlast") == 1;
            match current.as_mut() {
                None => {
                    let bits = (0..4).fold(0u128, |v, j| v | (words[j] as u128) << (32 * j));
                    current = Some((Header::unpack(bits), vec![]));
                }
                Some((_, payload)) => payload.extend(words),
            }
            if last {
                answers.push(current.take().unwrap());
            }
        }
        if kp.kernel_clock {
            e.clock_domains(&[(0, false)]);
        } else {
            e.clock(false);
        }
    }
    assert_eq!(sent, beats.len(), "seed {seed}: the wrapper stopped taking packets");
    assert!(current.is_none(), "seed {seed}: an answer was cut");
    e.settle();
    (answers, e.get_output("dropped"))
}

/// Random packets: half with the kernel's tag; payloads of 0 … `max_beats` kernel beats and
/// sometimes a few words short of a whole beat.
fn packets(rng: &mut Rng, count: usize, in_words: usize, max_beats: usize) -> Vec<Packet> {
    (0..count)
        .map(|_| {
            let tag = if rng.chance(50) { 7 } else { rng.below(20) as u16 };
            let mut n = in_words * rng.below(max_beats as u64 + 1) as usize;
            if n > 0 && rng.chance(20) {
                n -= 1 + rng.below(in_words as u64 - 1).min(n as u64 - 1) as usize;
            }
            Packet { tag, words: (0..n).map(|_| operand(rng)).collect() }
        })
        .collect()
}

fn check(source: &str, width: usize, seed: u64) {
    check_clocked(source, width, seed, None);
}

/// [`check`] with the kernel on its own clock when `periods` (fabric, kernel) are given.
fn check_clocked(source: &str, width: usize, seed: u64, periods: Option<(u64, u64)>) {
    let kp = KernelPort { port: 1, source: source.into(), origin: "test".into(), input_tag: 7, output_tag: 9, dst: 0, kernel_clock: periods.is_some() };
    let k = kp.kernel().unwrap();
    let (in_words, out_words) = (k.inputs.len(), k.outputs.len());
    let mut rng = Rng::new(seed);
    let packets = packets(&mut rng, 150, in_words, 12);
    let (answers, dropped) = run_clocked(&kp, width, &packets, seed, periods.unwrap_or((10, 10)));
    let fed: Vec<&Packet> = packets.iter().filter(|p| p.tag == 7 && !p.words.is_empty()).collect();
    assert!(fed.len() > 40, "seed {seed}: only {} packets fed the kernel", fed.len());
    assert_eq!(dropped as usize, packets.iter().filter(|p| p.tag != 7).count(), "seed {seed}: dropped counter");
    assert_eq!(answers.len(), fed.len(), "seed {seed}: one answer per fed packet");
    for (i, (p, (h, payload))) in fed.iter().zip(&answers).enumerate() {
        let mut words = p.words.clone();
        words.resize(words.len().div_ceil(in_words) * in_words, 0);
        let beats: Vec<Vec<u32>> = words.chunks(in_words).map(|c| c.to_vec()).collect();
        let want: Vec<u32> = k.evaluate_vector_beats(&beats).concat();
        assert_eq!((h.dst, h.dst_port, h.tag, h.length), ([1, 2, 3], 1, 9, 4 * beats.len() * out_words), "seed {seed}: header of answer {i}");
        assert_eq!(&payload[..want.len()], &want[..], "seed {seed}: payload of answer {i}");
        assert!(payload.len() - want.len() < width / 32, "seed {seed}: answer {i} has a spare beat");
    }
}

#[test]
fn a_wired_kernel_answers_each_tagged_packet_with_its_model_on_128_bit_ports() {
    check(AXPBY, 128, 1);
}

#[test]
fn a_wired_kernel_answers_each_tagged_packet_with_its_model_on_256_bit_ports() {
    check(AXPBY, 256, 2);
    check(include_str!("../../examples/kernels/dg_rk_update.wk"), 256, 3);
}

/// The kernel on its own clock, 3.7 times slower and 2.3 times faster than the fabric: the same
/// answers through the clock-crossing FIFOs.
#[test]
fn a_wired_kernel_on_its_own_clock_answers_the_same() {
    check_clocked(AXPBY, 128, 5, Some((10, 37)));
    check_clocked(AXPBY, 256, 6, Some((23, 10)));
    check_clocked(include_str!("../../examples/kernels/stencil3.wk"), 128, 7, Some((10, 29)));
}

#[test]
fn a_wired_stencil_sees_each_packet_as_one_vector() {
    check(include_str!("../../examples/kernels/stencil3.wk"), 128, 4);
}

/// The kernel inside a node (one node, three IntraNode ports, the kernel on port 2), driven
/// through the node's ports and register window: answers go where `kernel_p2_dst` says after
/// reset, and where software writes it at run time; the kernel's counters count.
#[test]
fn a_node_routes_its_kernels_answers_to_the_destination_register() {
    use weft_ip::axil::Master;
    use weft_ip::link::LinkConfig;
    use weft_ip::regmap::kernel_dst_addr;
    use weft_ip::router::RouterConfig;
    use weft_ip::system::node::{counter_names, node, NodeConfig};
    let kp = KernelPort { port: 2, source: AXPBY.into(), origin: "test".into(), input_tag: 7, output_tag: 9, dst: pack_dst(0, 0, 0, 1), kernel_clock: false };
    let router = RouterConfig { dims: [1, 1, 1], local_ports: 3, vc_buffer_flits: 32, max_packet_bytes: 256, ..Default::default() };
    let config = NodeConfig { router, link: LinkConfig::default(), kernels: vec![kp.clone()], allreduce: None };
    let counters = counter_names(&config);
    let stat = |name: &str| 0x100 + 4 * counters.iter().position(|c| c == name).unwrap() as u32;
    let mut m = Master::new(node(&config).unwrap(), 4);
    assert_eq!(m.read(kernel_dst_addr(2)), (pack_dst(0, 0, 0, 1) as u128, 0), "destination after reset");
    let k = kp.kernel().unwrap();
    let mut rng = Rng::new(6);
    // Sends `count` packets of 3·n words to port 2 through port 0, returns the answers' ports.
    let mut round = |m: &mut Master, count: usize, want_port: usize| {
        let e = &mut m.eval;
        // Port 2 is inside the node: the kernel's.
        for p in 0..2 {
            e.set_input(&format!("m_axis_p{p}_tready"), 1);
        }
        for _ in 0..count {
            let n = 1 + rng.below(8) as usize;
            let words: Vec<u32> = (0..3 * n).map(|_| operand(&mut rng)).collect();
            let h = Header { dst: [0, 0, 0], dst_port: 2, tag: 7, length: 12 * n, ..Default::default() }.pack() & ((1 << 120) - 1);
            let mut beats = vec![(h, false)];
            let chunks: Vec<&[u32]> = words.chunks(4).collect();
            for (i, c) in chunks.iter().enumerate() {
                beats.push((c.iter().enumerate().fold(0u128, |v, (j, w)| v | (*w as u128) << (32 * j)), i + 1 == chunks.len()));
            }
            let want = k.evaluate_vector_beats(&words.chunks(3).map(|c| c.to_vec()).collect::<Vec<_>>()).concat();
            let (mut sent, mut got, mut cycles) = (0, vec![], 0);
            while got.len() < 1 + (want.len() * 32).div_ceil(128) {
                cycles += 1;
                assert!(cycles < 5000, "no answer");
                if sent < beats.len() {
                    e.set_input("s_axis_p0_tdata", beats[sent].0);
                    e.set_input("s_axis_p0_tlast", beats[sent].1 as u128);
                }
                e.set_input("s_axis_p0_tvalid", (sent < beats.len()) as u128);
                e.settle();
                if sent < beats.len() && e.get_output("s_axis_p0_tready") == 1 {
                    sent += 1;
                }
                for p in 0..2 {
                    if e.get_output(&format!("m_axis_p{p}_tvalid")) == 1 {
                        assert_eq!(p, want_port, "an answer left on port {p}");
                        got.push(e.get_output(&format!("m_axis_p{p}_tdata")));
                    }
                }
                e.clock(false);
            }
            let payload: Vec<u32> = got[1..].iter().flat_map(|v| (0..4).map(move |j| (v >> (32 * j)) as u32)).collect();
            assert_eq!(&payload[..want.len()], &want[..]);
        }
    };
    round(&mut m, 5, 1);
    assert_eq!(m.write(kernel_dst_addr(2), pack_dst(0, 0, 0, 0), 0xF, 0), 0);
    round(&mut m, 5, 0);
    assert_eq!(m.read(stat("p2_kernel_packets_in")).0, 10);
    assert_eq!(m.read(stat("p2_kernel_packets_out")).0, 10);
    assert_eq!(m.read(stat("p2_kernel_dropped")).0, 0);
}
