//! An independent decoder, written from the specifications and sharing no code with the
//! generator, reads the blocks the link transmitter puts on the lanes and recovers the packets.
//!
//! From IEEE 802.3 clause 49 / Aurora 64B/66B SP011: 66-bit blocks, bit 0 first; a two-bit sync
//! header (0 then 1 = data, 1 then 0 = control) then 64 payload bits scrambled bit-serially by
//! s(n) = d(n) ^ s(n-39) ^ s(n-58); payload byte k is bits 8k..8k+7. Control block types:
//! 0x78 idle family, 0x1E separator (byte 1 = count), 0xD2 user-K 0. From weft's link format
//! (ip/src/link/endpoint.rs docs): header word, payload words, separator trailer with CRC-32C
//! (RFC 3720) of everything before plus the info word.

use weft::ip::link::LinkConfig;
use weft::sim::channel::ChannelConfig;
use weft::sim::link::{netlist_device, LinkPair, Packet, Traffic};

/// Bit-serial descrambler of one lane.
struct Descrambler {
    history: std::collections::VecDeque<u8>,
}

impl Descrambler {
    fn new() -> Self {
        Descrambler { history: std::iter::repeat_n(0, 58).collect() }
    }
    fn bit(&mut self, s: u8) -> u8 {
        let d = s ^ self.history[58 - 39] ^ self.history[0];
        self.history.pop_front();
        self.history.push_back(s);
        d
    }
}

enum Block {
    Data([u8; 8]),
    Control([u8; 8]),
    Invalid,
}

fn decode(block: u128, lane: &mut Descrambler) -> Block {
    let bit = |i: usize| ((block >> i) & 1) as u8;
    let mut bytes = [0u8; 8];
    for i in 0..64 {
        bytes[i / 8] |= lane.bit(bit(2 + i)) << (i % 8);
    }
    match (bit(0), bit(1)) {
        (0, 1) => Block::Data(bytes),
        (1, 0) => Block::Control(bytes),
        _ => Block::Invalid,
    }
}

fn crc32c(bytes: &[u8]) -> u32 {
    let mut crc = 0xFFFF_FFFFu32;
    for byte in bytes {
        crc ^= *byte as u32;
        for _ in 0..8 {
            crc = if crc & 1 == 1 { (crc >> 1) ^ 0x82F6_3B78 } else { crc >> 1 };
        }
    }
    !crc
}

#[test]
fn crc32c_check_value() {
    assert_eq!(crc32c(b"123456789"), 0xE306_9283);
}

#[test]
fn independent_decoder_recovers_the_transmitted_packets() {
    for lanes in [1, 2] {
        let config = LinkConfig { lanes, max_frame_words: 32, replay_words: 256, vc_buffer_words: 128, ..Default::default() };
        let ends = [netlist_device(&config).unwrap(), netlist_device(&config).unwrap()];
        let ch = ChannelConfig::clean(lanes, 6);
        let mut pair = LinkPair::new(config.clone(), ends, [ch.clone(), ch]);
        pair.channels[0].record = Some(vec![]);
        pair.reset();
        pair.train(20_000).expect("channel up");
        let traffic = Traffic { packets: 300, min_bytes: 1, max_bytes: 700, valid_percent: 70, ready_percent: 70, both_ways: true, seed: 8 };
        let run = pair.run(&traffic, 10_000).unwrap();
        let blocks = pair.channels[0].record.take().unwrap();

        let mut lanes_state: Vec<Descrambler> = (0..lanes).map(|_| Descrambler::new()).collect();
        let mut frame: Option<Vec<u8>> = None;
        let mut partial: [Vec<u8>; 2] = [vec![], vec![]];
        let mut packets: [Vec<Packet>; 2] = [vec![], vec![]];
        let mut frames = 0;
        let mut expected_seq = 0u8;
        for cycle in &blocks {
            let decoded: Vec<Block> = cycle.iter().zip(lanes_state.iter_mut()).map(|(b, l)| decode(*b, l)).collect();
            if decoded.iter().all(|b| matches!(b, Block::Data(_))) {
                let word: Vec<u8> = decoded.iter().flat_map(|b| if let Block::Data(d) = b { d.to_vec() } else { vec![] }).collect();
                frame.get_or_insert_with(Vec::new).extend(word);
                continue;
            }
            let Block::Control(c) = &decoded[0] else { panic!("invalid sync header from the transmitter") };
            match c[0] {
                0x78 | 0xD2 => {} // idles, clock compensation, bonding; acknowledgements
                0x1E => {
                    assert_eq!(c[1], 6, "trailer separator carries 6 bytes");
                    let bytes = frame.take().expect("separator outside a frame");
                    let word = 8 * lanes;
                    let mut covered = bytes.clone();
                    covered.extend([c[6], 0, 0, 0, 0, 0, 0, 0]);
                    assert_eq!(crc32c(&covered).to_le_bytes(), c[2..6], "CRC-32C of frame {frames}");
                    let (header, payload) = bytes.split_at(word);
                    assert_eq!(header[0] & 0x3F, expected_seq % 64, "sequence numbers in order on a clean channel");
                    expected_seq = expected_seq.wrapping_add(1);
                    let vc = ((header[0] >> 6) & 1) as usize;
                    let valid_last = (c[6] & 0x3F) as usize;
                    let used = payload.len() - word + valid_last;
                    partial[vc].extend_from_slice(&payload[..used]);
                    if c[6] & 0x80 != 0 {
                        packets[vc].push(Packet { vc, bytes: std::mem::take(&mut partial[vc]) });
                    }
                    frames += 1;
                }
                other => panic!("unexpected control block type {other:#04x}"),
            }
        }
        for vc in 0..2 {
            let sent: Vec<Packet> = run.sent[0].iter().filter(|p| p.vc == vc).cloned().collect();
            assert_eq!(packets[vc], sent, "lanes {lanes}, vc {vc}: decoded packets");
        }
        assert!(frames >= 300);
    }
}
