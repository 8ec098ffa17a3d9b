//! The transceiver wrapper (`weft_ip::link::gt`) in the built-in simulator on the behavioural
//! model of a 64B/66B gearbox (`weft_sim::transceiver`): from any initial alignment it slips the
//! gearbox exactly as many times as the alignment is off (no bit errors), locks, and then hands
//! the node every block as it was sent, at one fixed delay; after the line realigns it loses
//! lock and finds it again; with bit errors only the blocks that were hit differ; transmit
//! carries each block's header and payload to the transceiver's ports. Then the reliable link
//! and two nodes on their own clocks, each behind wrappers and a hardware gearbox model.

use num_bigint::BigUint;
use weft_sim::channel::ChannelConfig;
use weft_sim::transceiver::GtModel;
use weft_sim::weft_ip::link::gt::{gt_wrapper, SLIP_WAIT};
use weft_sim::weft_ip::weft_hdl::netlist::eval::Evaluator;
use weft_sim::weft_ip::weft_hdl::testbench::Rng;

const LATENCY: usize = 5;

struct Bench {
    sim: Evaluator,
    gt: GtModel,
    rng: Rng,
    sent: Vec<u128>,
    slip: Vec<bool>,
}

fn word(x: &BigUint) -> u128 {
    x.iter_u64_digits().take(2).enumerate().fold(0u128, |a, (i, d)| a | (d as u128) << (64 * i))
}

impl Bench {
    fn new(lanes: usize, offsets: Vec<usize>, ber: f64, seed: u64) -> Bench {
        let mut sim = Evaluator::new(gt_wrapper(lanes).unwrap());
        sim.reset(2);
        let config = ChannelConfig { lanes, latency: LATENCY, skew: vec![0; lanes], bit_offset: offsets, bit_error_rate: ber, seed };
        let mut b = Bench { sim, gt: GtModel::new(config, 4), rng: Rng::new(seed), sent: vec![], slip: vec![false; lanes] };
        // The receiver leaves reset once the line carries blocks (the transceiver's reset done).
        for _ in 0..LATENCY + 2 {
            let blocks: Vec<(u8, u64)> = (0..lanes).map(|_| (0b01, b.rng.next_u64())).collect();
            b.sent.push((blocks[0].1 as u128) << 2 | 1);
            b.gt.step(&blocks, &b.slip);
        }
        b
    }

    /// One cycle on lane 0 (and the others alike): a random block with a valid header in;
    /// returns lane 0's locked bit and the block the node gets.
    fn cycle(&mut self) -> (bool, u128) {
        let lanes = self.slip.len();
        let blocks: Vec<(u8, u64)> = (0..lanes).map(|_| (if self.rng.below(2) == 0 { 0b01 } else { 0b10 }, self.rng.next_u64())).collect();
        self.sent.push((blocks[0].1 as u128) << 2 | blocks[0].0 as u128);
        let rx = self.gt.step(&blocks, &self.slip);
        for (l, (h, d)) in rx.iter().enumerate() {
            let (hw, dw) = (self.sim.input(&format!("gt_rxheader{l}")).unwrap(), self.sim.input(&format!("gt_rxdata{l}")).unwrap());
            self.sim.set(hw, *h as u128);
            self.sim.set(dw, *d as u128);
        }
        self.sim.settle();
        for l in 0..lanes {
            self.slip[l] = self.sim.get_output_big(&format!("gt_rxgearboxslip{l}")) == BigUint::from(1u8);
        }
        let locked = word(&self.sim.get_output_big("gt_locked")) & 1 == 1;
        let node = word(&(self.sim.get_output_big("rx_serial") & ((BigUint::from(1u8) << 66) - 1u8)));
        self.sim.clock(false);
        (locked, node)
    }

    /// Runs until lane 0 locks; returns the cycles it took.
    fn lock(&mut self, limit: usize) -> usize {
        for c in 0..limit {
            if self.cycle().0 {
                return c;
            }
        }
        panic!("no lock in {limit} cycles");
    }

    /// After lock: `cycles` more, each block the node gets compared with what was sent; returns
    /// (the delay, blocks that differ).
    fn delivered(&mut self, cycles: usize) -> (usize, usize) {
        let mut delay = None;
        let mut wrong = 0;
        for _ in 0..cycles {
            let (locked, block) = self.cycle();
            assert!(locked, "lock lost");
            let t = self.sent.len() - 1;
            let d = *delay.get_or_insert_with(|| (LATENCY..LATENCY + 3).find(|&d| self.sent[t - d] == block).expect("the first block after lock is one sent"));
            wrong += usize::from(self.sent[t - d] != block);
        }
        (delay.unwrap(), wrong)
    }
}

#[test]
fn it_slips_the_gearbox_into_alignment_and_delivers_every_block() {
    for offset in [0, 1, 17, 40, 65] {
        let mut b = Bench::new(1, vec![offset], 0.0, 7 + offset as u64);
        let took = b.lock(66 * (SLIP_WAIT as usize + 8) + 200);
        let want = (66 - offset) % 66;
        assert_eq!(b.gt.slips, want as u64, "offset {offset}: slips");
        assert_eq!(word(&b.sim.get_output_big("gt_slips0")), want as u128, "offset {offset}: the counter");
        let (delay, wrong) = b.delivered(2000);
        assert_eq!(wrong, 0, "offset {offset}: blocks differ");
        assert!((LATENCY + 1..=LATENCY + 2).contains(&delay), "offset {offset}: delay {delay}");
        println!("offset {offset}: locked after {took} cycles, {want} slips, delay {delay}");
    }
}

#[test]
fn it_relocks_after_the_line_realigns_and_rides_out_bit_errors() {
    let mut b = Bench::new(2, vec![9, 30], 0.0, 11);
    b.lock(66 * 48);
    b.delivered(500);
    let before = b.gt.slips;
    // The line moves by 7 bits on lane 0: lock is lost and found again 59 slips on.
    b.gt.channel.config_mut().bit_offset[0] += 7;
    let mut lost = false;
    for _ in 0..66 * 48 {
        let (locked, _) = b.cycle();
        lost |= !locked;
        if lost && locked {
            break;
        }
    }
    assert!(lost, "lock was not lost");
    assert!(b.slip.iter().all(|s| !s));
    let lane0 = b.gt.slips - before;
    assert!(lane0 >= 59, "slips after realigning: {lane0}");
    let (_, wrong) = b.delivered(1000);
    assert_eq!(wrong, 0);
    // Bit errors at 10⁻⁴: lock holds, and only blocks that were hit differ.
    b.gt.channel.config_mut().bit_error_rate = 1e-4;
    let flipped = b.gt.channel.flipped_bits;
    let (_, wrong) = b.delivered(20_000);
    let hit = b.gt.channel.flipped_bits - flipped;
    assert!(hit > 0 && wrong as u64 <= hit, "{wrong} blocks differ, {hit} bits flipped on two lanes");
    println!("relocked after {lane0} slips; 20,000 blocks at 1e-4: {wrong} differ, {hit} bits flipped");
}

#[test]
fn transmit_carries_header_and_payload() {
    let mut sim = Evaluator::new(gt_wrapper(2).unwrap());
    sim.reset(2);
    let mut rng = Rng::new(3);
    for _ in 0..100 {
        let blocks: Vec<u128> = (0..2).map(|_| ((rng.next_u64() as u128) << 2 | rng.below(4) as u128) & ((1 << 66) - 1)).collect();
        let serial = (BigUint::from(blocks[1]) << 66) | BigUint::from(blocks[0]);
        let w = sim.input("tx_serial").unwrap();
        sim.set_big(w, &serial);
        sim.settle();
        for (l, b) in blocks.iter().enumerate() {
            assert_eq!(word(&sim.get_output_big(&format!("gt_txheader{l}"))), b & 3);
            assert_eq!(word(&sim.get_output_big(&format!("gt_txdata{l}"))), b >> 2);
        }
    }
    assert!(gt_wrapper(0).is_err() && gt_wrapper(17).unwrap_err().to_string().contains("1..=16"));
}

/// The reliable link through transceivers: both endpoints behind the wrapper and a hardware
/// gearbox model, lanes misaligned on the line, clocks 312 ppm apart, bit errors both ways:
/// every packet arrives once and in order (`LinkPair::run` checks it), each wrapper slipped its
/// gearbox into place and holds lock on every lane.
#[test]
fn the_link_runs_through_transceivers() {
    use weft_sim::link::{LinkPair, NetlistDevice, Traffic};
    use weft_sim::transceiver::endpoint_on_gearbox;
    use weft_sim::weft_ip::link::LinkConfig;
    let config = LinkConfig { lanes: 2, rx_clock: true, max_frame_words: 16, replay_words: 256, vc_buffer_words: 64, cc_interval: 1000, ..Default::default() };
    let ends = [0, 1].map(|_| NetlistDevice::new(Evaluator::new(endpoint_on_gearbox(&config, 4).unwrap())));
    let mut ch = ChannelConfig::clean(2, 9);
    ch.bit_offset = vec![23, 50];
    ch.skew = vec![0, 2];
    let back = ChannelConfig { seed: 4, bit_offset: vec![5, 61], ..ch.clone() };
    let mut pair = LinkPair::new(config, ends, [ch, back]).with_periods([6402, 6400]).unwrap();
    pair.reset();
    let up = pair.train(40_000).expect("channel up");
    for c in pair.channels.iter_mut() {
        c.config_mut().bit_error_rate = 1e-5;
    }
    let traffic = Traffic { packets: 2000, min_bytes: 1, max_bytes: 300, valid_percent: 90, ready_percent: 80, both_ways: true, seed: 21 };
    let run = pair.run(&traffic, 20_000).unwrap();
    // B sees A's lanes at offsets 23 and 50, A sees B's at 5 and 61: each lane slips its
    // gearbox 66 − offset times (mod 66; a line still idle at the start may cost one more lap).
    let slips: Vec<u64> = (0..2).flat_map(|side| (0..2).map(move |l| (side, l))).map(|(side, l)| pair.counter(side, &format!("gt_slips{l}"))).collect();
    let want = [61, 5, 43, 16];
    for (k, (s, w)) in slips.iter().zip(want).enumerate() {
        assert!(s % 66 == w && *s < 2 * 66, "side {}, lane {}: {s} slips, want {w} (mod 66)", k / 2, k % 2);
    }
    assert_eq!([pair.counter(0, "gt_locked"), pair.counter(1, "gt_locked")], [3, 3], "both lanes locked");
    println!("up after {up} cycles, {} cycles of traffic, slips {slips:?}, {} bits flipped", run.cycles, pair.channels[0].flipped_bits + pair.channels[1].flipped_bits);
}

/// Two boards on transceivers with their own oscillators (node 1 312 ppm slower): each node
/// (built-in simulator) with every link behind the wrapper and a gearbox model, lines misaligned,
/// bit errors on both cables; random packets both ways all arrive once, intact, in order per flow
/// (the harness checks), and every lane slipped exactly as far as its line is misaligned.
#[test]
fn two_boards_on_transceivers_with_their_own_clocks() {
    use weft_sim::network::{Injection, Pattern, Torus, Traffic};
    use weft_sim::transceiver::node_on_gearboxes;
    use weft_sim::weft_ip::link::LinkConfig;
    use weft_sim::weft_ip::router::Direction;
    use weft_sim::weft_ip::system::NodeConfig;
    let base = weft_sim::catalog::node_config([2, 1, 1]);
    let config = NodeConfig { link: LinkConfig { rx_clock: true, ..base.link.clone() }, ..base };
    let net = node_on_gearboxes(&config, 4).unwrap();
    let mut torus = Torus::netlist_nodes_async_of(&config, &net, 12, &[6400, 6402], &[0, 2500]).unwrap();
    let offset = |n: usize, d: Direction, l: usize| (11 + 17 * n + 23 * d.index() + 31 * l) % 66;
    torus.misalign(&offset);
    torus.reset();
    torus.bring_up(60_000).unwrap();
    torus.set_bit_error_rate(1e-5);
    let traffic = Traffic { pattern: Pattern::UniformRandom, injection: Injection::Queued(3000), min_bytes: 0, max_bytes: 512, valid_percent: 85, ready_percent: 75, seed: 8 };
    let run = torus.run(&traffic, 40_000).unwrap().unwrap_or_else(|s| panic!("stuck {s:?}"));
    assert_eq!(run.deliveries.len(), 3000);
    let edges = torus.node_edges().unwrap();
    assert!(edges[0] - edges[1] >= 5, "the clocks drifted {} cycles apart", edges[0] - edges[1]);
    for n in 0..2 {
        for d in config.endpoints() {
            for l in 0..config.link.lanes {
                let slips = torus.output(1 - n, &format!("{}_gt_slips{l}", d.opposite().name()));
                let want = ((66 - offset(n, d, l)) % 66) as u64;
                assert!(slips % 66 == want && slips < 2 * 66, "node {}, lane {l}: {slips} slips, want {want}", 1 - n);
            }
        }
    }
    println!("two boards 312 ppm apart on transceivers: 3000 packets in {} cycles ({} edges of drift), {} bits flipped", run.cycles, edges[0] - edges[1], torus.flipped_bits());
}
