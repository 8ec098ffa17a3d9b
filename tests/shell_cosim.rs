//! The generated board shells (`<cfg>_shell`: the node, kernel-clock IntraNode ports behind
//! clock-crossing FIFOs) in Verilator with two independent clocks — the configured frequencies
//! and a kernel clock slower than the fabric — random valid/ready on both sides: packets between
//! the node's two IntraNode ports (one or both on the kernel clock) arrive exactly once, intact,
//! in order, with the header the router writes.

use std::collections::VecDeque;
use std::path::Path;

use weft::hdl::testbench::Rng;
use weft::ip::router::header::Header;
use weft::sim::cosim::{Model, PortId};
use weft::system::config::PortClock;

struct Source {
    queue: VecDeque<(u32, Vec<u8>)>,
    beat: usize,
    valid: bool,
}

#[derive(Default)]
struct Sink {
    beats: Vec<(u128, u32)>,
    ready: bool,
    expected: VecDeque<(u32, Vec<u8>)>,
    received: usize,
}

struct Ports {
    s_data: PortId,
    s_last: PortId,
    s_valid: PortId,
    s_ready: PortId,
    m_data: PortId,
    m_keep: PortId,
    m_last: PortId,
    m_valid: PortId,
    m_ready: PortId,
}

fn words(v: u128) -> [u32; 4] {
    [v as u32, (v >> 32) as u32, (v >> 64) as u32, (v >> 96) as u32]
}

fn beat_of(packet: &(u32, Vec<u8>), dst_port: usize, beat: usize) -> (u128, bool) {
    let (id, payload) = packet;
    let flits = 1 + payload.len().div_ceil(16);
    let data = if beat == 0 {
        let h = Header { dst: [0, 0, 0], dst_port, length: payload.len(), tag: 7, user: *id, ..Default::default() };
        h.pack() & ((1 << 120) - 1)
    } else {
        payload[(beat - 1) * 16..(beat * 16).min(payload.len())].iter().enumerate().fold(0u128, |acc, (i, b)| acc | (*b as u128) << (8 * i))
    };
    (data, beat + 1 == flits)
}

/// One rising edge of a clock domain: handshakes sampled before the edge, then new random
/// valid/ready for the next one.
#[allow(clippy::too_many_arguments)]
fn edge(m: &mut Model, clk: PortId, ports: &[Ports], domain: &[usize], sources: &mut [Source], sinks: &mut [Sink], rng: &mut Rng) {
    m.eval();
    for &p in domain {
        let h = &ports[p];
        let src = &mut sources[p];
        if src.valid && m.get(h.s_ready) & 1 == 1 {
            src.valid = false;
            let (_, last) = beat_of(src.queue.front().unwrap(), 1 - p, src.beat);
            src.beat += 1;
            if last {
                src.queue.pop_front();
                src.beat = 0;
            }
        }
        let sink = &mut sinks[p];
        if sink.ready && m.get(h.m_valid) & 1 == 1 {
            let d = m.get_words(h.m_data).to_vec();
            let data = d.iter().enumerate().fold(0u128, |acc, (i, w)| acc | (*w as u128) << (32 * i));
            let keep = m.get(h.m_keep) as u32;
            sink.beats.push((data, keep));
            if m.get(h.m_last) & 1 == 1 {
                let beats = std::mem::take(&mut sink.beats);
                let header = Header::unpack(beats[0].0);
                let (id, payload) = sink.expected.pop_front().unwrap_or_else(|| panic!("port {p}: a packet arrived that was not sent"));
                assert_eq!((header.user, header.length, header.src_port, header.dst_port), (id, payload.len(), 1 - p, p), "port {p}: header of packet {id}");
                let got: Vec<u8> = beats[1..].iter().flat_map(|(d, _)| (0..16).map(move |i| (d >> (8 * i)) as u8)).take(payload.len()).collect();
                assert_eq!(got, payload, "port {p}: payload of packet {id}");
                assert_eq!(beats.len(), 1 + payload.len().div_ceil(16), "port {p}: beats of packet {id}");
                sink.received += 1;
            }
        }
    }
    m.set(clk, 1);
    m.eval();
    m.set(clk, 0);
    m.eval();
    for &p in domain {
        let h = &ports[p];
        let src = &mut sources[p];
        // AXI4-Stream: an offered beat stays offered until taken; a new one may wait.
        if !src.valid && !src.queue.is_empty() && rng.chance(70) {
            let (data, last) = beat_of(src.queue.front().unwrap(), 1 - p, src.beat);
            m.set_words(h.s_data, &words(data));
            m.set(h.s_last, last as u64);
            src.valid = true;
        }
        m.set(h.s_valid, src.valid as u64);
        sinks[p].ready = rng.chance(70);
        m.set(h.m_ready, sinks[p].ready as u64);
    }
}

#[test]
fn shells_cross_clocks_without_loss_duplication_or_reordering() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = std::env::temp_dir().join(format!("weft-shell-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for system in weft::system::shipped() {
        let name = &system.name;
        let node = std::fs::read_to_string(root.join(format!("generated/system/{name}_node.v"))).unwrap();
        let shell = std::fs::read_to_string(root.join(format!("generated/system/{name}_shell.v"))).unwrap();
        let file = dir.join(format!("{name}_shell.v"));
        std::fs::write(&file, node + &shell).unwrap();
        let mut m = Model::build(&file, &format!("{name}_shell")).unwrap();
        let p = |m: &Model, n: &str| m.port(n).unwrap_or_else(|_| panic!("{name}_shell has no port {n}"));
        let ports: Vec<Ports> = (0..2)
            .map(|i| Ports {
                s_data: p(&m, &format!("s_axis_p{i}_tdata")),
                s_last: p(&m, &format!("s_axis_p{i}_tlast")),
                s_valid: p(&m, &format!("s_axis_p{i}_tvalid")),
                s_ready: p(&m, &format!("s_axis_p{i}_tready")),
                m_data: p(&m, &format!("m_axis_p{i}_tdata")),
                m_keep: p(&m, &format!("m_axis_p{i}_tkeep")),
                m_last: p(&m, &format!("m_axis_p{i}_tlast")),
                m_valid: p(&m, &format!("m_axis_p{i}_tvalid")),
                m_ready: p(&m, &format!("m_axis_p{i}_tready")),
            })
            .collect();
        let (clk, rst, kclk, krst) = (p(&m, "clk"), p(&m, "rst"), p(&m, "kernel_clk"), p(&m, "kernel_rst"));
        let kernel: Vec<usize> = (0..2).filter(|&i| system.ports[i].clock == PortClock::Kernel).collect();
        let fabric: Vec<usize> = (0..2).filter(|&i| system.ports[i].clock == PortClock::Fabric).collect();
        assert!(!kernel.is_empty(), "{name}: the shipped shell has no kernel-clock port");
        // Periods in ps: the configured clocks, then a kernel clock 3.7 times slower than the fabric.
        let fabric_ps = (1e6 / system.fabric_mhz) as u64;
        for kernel_ps in [(1e6 / system.kernel_mhz.unwrap()) as u64, fabric_ps * 37 / 10] {
            let mut rng = Rng::new(kernel_ps);
            for (c, r) in [(clk, rst), (kclk, krst)] {
                m.set(r, 1);
                for _ in 0..4 {
                    m.set(c, 1);
                    m.eval();
                    m.set(c, 0);
                    m.eval();
                }
                m.set(r, 0);
            }
            let mut sources: Vec<Source> = (0..2).map(|_| Source { queue: VecDeque::new(), beat: 0, valid: false }).collect();
            let mut sinks: Vec<Sink> = (0..2).map(|_| Sink::default()).collect();
            let per_port = 60;
            for i in 0..2 {
                for k in 0..per_port {
                    let len = rng.below(1025) as usize;
                    let payload: Vec<u8> = (0..len).map(|_| rng.next_u64() as u8).collect();
                    let id = (i * 1000 + k) as u32;
                    sources[i].queue.push_back((id, payload.clone()));
                    sinks[1 - i].expected.push_back((id, payload));
                }
            }
            let (mut tf, mut tk) = (0u64, kernel_ps / 3);
            let mut edges = 0u64;
            while sinks.iter().any(|s| s.received < per_port) {
                edges += 1;
                assert!(edges < 400_000, "{name}: stuck with {} and {} packets received", sinks[0].received, sinks[1].received);
                if tf <= tk {
                    edge(&mut m, clk, &ports, &fabric, &mut sources, &mut sinks, &mut rng);
                    tf += fabric_ps;
                } else {
                    edge(&mut m, kclk, &ports, &kernel, &mut sources, &mut sinks, &mut rng);
                    tk += kernel_ps;
                }
            }
            println!("{name}_shell: fabric {fabric_ps} ps, kernel {kernel_ps} ps: {} packets each way in {edges} clock edges", per_port);
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}
