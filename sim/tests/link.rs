//! The reliable link in the built-in simulator: two endpoints, two channel models.

use weft_ip::link::LinkConfig;
use weft_sim::channel::ChannelConfig;
use weft_sim::link::{netlist_device, Device, LinkPair, Traffic};

fn pair(config: &LinkConfig, channels: [ChannelConfig; 2]) -> LinkPair<weft_sim::link::NetlistDevice> {
    let ends = [netlist_device(config).unwrap(), netlist_device(config).unwrap()];
    let mut pair = LinkPair::new(config.clone(), ends, channels);
    pair.reset();
    pair
}

#[test]
fn clean_link_trains_and_delivers() {
    for lanes in [1, 2, 4] {
        let config = LinkConfig { lanes, max_frame_words: 16, replay_words: 256, vc_buffer_words: 64, ..Default::default() };
        let mut ch = ChannelConfig::clean(lanes, 8);
        ch.bit_offset = (0..lanes).map(|k| 7 + 13 * k).collect();
        ch.skew = (0..lanes).map(|k| k % 3).collect();
        let mut pair = pair(&config, [ch.clone(), ChannelConfig { seed: 2, ..ch }]);
        let t = pair.train(20_000).expect("channel up");
        eprintln!("lanes {lanes}: up after {t} cycles");
        let traffic = Traffic { packets: 300, min_bytes: 1, max_bytes: 300, valid_percent: 70, ready_percent: 60, both_ways: true, seed: 5 };
        let run = pair.run(&traffic, 5000).unwrap();
        eprintln!("{run:?}");
    }
}

#[test]
fn bit_errors_both_ways_deliver_exactly_once() {
    let config = LinkConfig { lanes: 2, max_frame_words: 16, replay_words: 256, vc_buffer_words: 64, retransmit_timeout: 256, ..Default::default() };
    let mut ch = ChannelConfig::clean(2, 10);
    ch.bit_offset = vec![3, 40];
    ch.skew = vec![2, 0];
    let mut pair = pair(&config, [ch.clone(), ChannelConfig { seed: 9, ..ch.clone() }]);
    pair.train(20_000).expect("channel up");
    for c in pair.channels.iter_mut() {
        c.config_mut().bit_error_rate = 2e-5;
    }
    // Sync-header and control-block hits on top of the random errors.
    let now = pair.cycle;
    for i in 0..200u64 {
        pair.channels[(i % 2) as usize].scheduled.push((now + 50 + 37 * i, (i % 2) as usize, (i % 3) as usize));
    }
    let traffic = Traffic { packets: 5000, min_bytes: 1, max_bytes: 200, valid_percent: 80, ready_percent: 70, both_ways: true, seed: 11 };
    let run = pair.run(&traffic, 20_000).unwrap();
    eprintln!("{run:?} flipped {} {}", pair.channels[0].flipped_bits, pair.channels[1].flipped_bits);
    let counter = |name: &str| run.counters.iter().find(|c| c.0 == name).unwrap().1;
    assert!(counter("crc_errors").iter().sum::<u64>() > 0, "errors must have hit frames");
    assert!(counter("frames_retransmitted").iter().sum::<u64>() > 0);
}

/// A trained one-lane pair whose A → B channel then corrupts `bad` sync headers in a row,
/// starting `offset` cycles later; B's lock losses 150 cycles after that.
fn lock_loss_pair(bad: u64, offset: u64) -> (LinkPair<weft_sim::link::NetlistDevice>, u64) {
    let config = LinkConfig { lanes: 1, max_frame_words: 8, replay_words: 64, vc_buffer_words: 32, ..Default::default() };
    let mut ch = ChannelConfig::clean(1, 4);
    ch.bit_offset = vec![29];
    let mut pair = pair(&config, [ch.clone(), ch]);
    pair.train(20_000).expect("channel up");
    assert_eq!([pair.counter(0, "retrains"), pair.counter(1, "retrains")], [0, 0], "the first training is no retrain");
    let now = pair.cycle;
    pair.channels[0].outage = Some((now + 10 + offset, now + 10 + offset + bad));
    for _ in 0..150 + offset {
        pair.train(1);
    }
    let losses = pair.counter(1, "lock_losses");
    (pair, losses)
}

#[test]
fn lock_is_lost_after_invalid_headers_and_regained() {
    // IEEE 802.3 49.2.13.2.2: lock is lost when 16 invalid sync headers fall in one window of
    // 64. Over every phase of the window, 15 bad headers in a row never lose it, and 16 lose it
    // at exactly the 64 − 16 + 1 phases where all of them fall in one window.
    let mut losing = vec![];
    for offset in 0..64 {
        assert_eq!(lock_loss_pair(15, offset).1, 0, "15 bad headers at phase {offset} must not lose lock");
        let losses = lock_loss_pair(16, offset).1;
        assert!(losses <= 1, "16 bad headers lost lock {losses} times");
        if losses == 1 {
            losing.push(offset);
        }
    }
    assert_eq!(losing.len(), 49, "phases at which 16 bad headers lose lock: {losing:?}");
    let (mut pair, losses) = lock_loss_pair(16, losing[0]);
    assert_eq!(losses, 1);
    let regained = pair.train(20_000).expect("channel back up");
    eprintln!("regained after {regained} cycles");
    // B lost lock and retrained; the time since it came up restarted then.
    assert_eq!(pair.counter(1, "retrains"), 1);
    pair.idle(50);
    let up = pair.counter(1, "up_cycles");
    // B's channel may come up a little before A's (a round trip of the 4-cycle channels).
    assert!((50..=50 + 16).contains(&up), "B up for {up} cycles, 50 after both channels came back");
    let traffic = Traffic { packets: 200, min_bytes: 1, max_bytes: 100, valid_percent: 80, ready_percent: 70, both_ways: true, seed: 3 };
    pair.run(&traffic, 5000).unwrap();
}

/// Native flow control: A sends XOFF, B's frames to A stop (A's to B keep flowing) until A sends
/// XON; a pause of 200 stops B's frames for about 200 cycles; every packet still arrives once.
#[test]
fn native_flow_control_pauses_the_partner() {
    let config = LinkConfig::default();
    let mut pair = pair(&config, [ChannelConfig::clean(2, 10), ChannelConfig::clean(2, 10)]);
    pair.train(50_000).expect("channel up");
    let now = pair.cycle;
    let (xoff, xon, pause) = (now + 200, now + 2200, now + 3000);
    pair.nfc_requests = vec![(xoff, 0, 1 << 8), (xon, 0, 0), (pause, 0, 200)];
    let traffic = Traffic { packets: 400, min_bytes: 64, max_bytes: 256, valid_percent: 100, ready_percent: 100, both_ways: true, seed: 8 };
    let run = pair.run(&traffic, 5000).unwrap();
    let at_a = &run.arrivals[0];
    let at_b = &run.arrivals[1];
    let during = |arrivals: &Vec<u64>, from: u64, to: u64| arrivals.iter().filter(|c| (from..to).contains(*c)).count();
    assert_eq!(during(at_a, xoff + 100, xon), 0, "B kept sending to A under XOFF");
    assert!(during(at_b, xoff + 100, xon) > 10, "A's own frames must not stop");
    assert!(during(at_a, xon, xon + 300) > 0, "B did not resume after XON");
    let window: Vec<u64> = at_a.iter().copied().filter(|c| (pause..pause + 600).contains(c)).collect();
    let gap = window.windows(2).map(|w| w[1] - w[0]).max().unwrap_or(0);
    assert!((190..400).contains(&gap), "pause of 200 gave a gap of {gap} cycles");
    assert!(pair.nfc_requests.is_empty());
}

/// The consumer credits tunnelled through the link: every flit freed behind B becomes exactly
/// one `tx_credit` pulse at A (and the other way), per VC, while data and bit errors flow.
#[test]
fn consumer_credits_cross_the_link_exactly() {
    let config = LinkConfig::default();
    let mut ch = ChannelConfig::clean(2, 12);
    ch.bit_error_rate = 1e-5;
    let back = ChannelConfig { seed: 9, ..ch.clone() };
    let mut pair = pair(&config, [ch, back]);
    pair.train(50_000).expect("channel up");
    pair.credit_percent = 30;
    let traffic = Traffic { packets: 500, min_bytes: 1, max_bytes: 600, valid_percent: 90, ready_percent: 80, both_ways: true, seed: 4 };
    pair.run(&traffic, 20_000).unwrap();
    // Stop returning, let the last totals cross.
    pair.credit_percent = 0;
    for e in pair.ends.iter_mut() {
        let port = e.port("rx_credit_return");
        e.set(port, &Default::default());
    }
    let before = pair.credits_seen;
    // Count the pulses that still arrive while idle.
    let mut late = [[0u64; 2]; 2];
    for _ in 0..2000 {
        for (i, e) in pair.ends.iter_mut().enumerate() {
            let p = e.port("tx_credit");
            e.settle();
            let pulses = e.get(p)[0];
            for v in 0..2 {
                late[i][v] += pulses >> v & 1;
            }
        }
        pair.idle(1);
    }
    for side in 0..2 {
        for v in 0..2 {
            let seen = before[side][v] + late[side][v];
            assert_eq!(seen, pair.credits_returned[1 - side][v], "side {side} vc {v}");
            assert!(seen > 1000, "too few credits exercised: {seen}");
        }
    }
}

#[test]
fn unequal_periods_need_an_rx_clock() {
    let config = LinkConfig { lanes: 1, max_frame_words: 8, replay_words: 64, vc_buffer_words: 32, ..Default::default() };
    let ends = [netlist_device(&config).unwrap(), netlist_device(&config).unwrap()];
    assert!(!ends[0].has_rx_clock());
    let ch = ChannelConfig::clean(1, 4);
    let pair = LinkPair::new(config.clone(), ends, [ch.clone(), ch.clone()]);
    let err = pair.with_periods([6400, 6402]).err().expect("refused");
    assert!(err.contains("no `rx_clk` domain"), "{err}");
    // Equal periods (any value) are today's single clock.
    let ends = [netlist_device(&config).unwrap(), netlist_device(&config).unwrap()];
    let mut pair = LinkPair::new(config, ends, [ch.clone(), ch]).with_periods([6400, 6400]).unwrap();
    pair.reset();
    pair.train(20_000).expect("channel up");
}

/// The built-in simulator with receive clocks: A at 6.402 ns, B at 6.400 ns (312 ppm apart), bit
/// errors both ways, 1- and 2-lane links: nothing lost, duplicated or reordered, and each elastic
/// buffer slips once per word of drift.
#[test]
fn independent_clocks_lose_nothing() {
    for lanes in [1, 2] {
        let config = LinkConfig { lanes, rx_clock: true, max_frame_words: 16, replay_words: 256, vc_buffer_words: 64, cc_interval: 1000, ..Default::default() };
        let ends = [netlist_device(&config).unwrap(), netlist_device(&config).unwrap()];
        let mut ch = ChannelConfig::clean(lanes, 9);
        ch.bit_offset = (0..lanes).map(|k| 21 + 30 * k).collect();
        ch.skew = (0..lanes).map(|k| 3 * k).collect();
        let back = ChannelConfig { seed: 3, ..ch.clone() };
        let mut pair = LinkPair::new(config, ends, [ch, back]).with_periods([6402, 6400]).unwrap();
        pair.reset();
        pair.train(20_000).expect("channel up");
        for c in pair.channels.iter_mut() {
            c.config_mut().bit_error_rate = 1e-5;
        }
        let start = pair.cycles;
        let traffic = Traffic { packets: 5000, min_bytes: 1, max_bytes: 300, valid_percent: 90, ready_percent: 80, both_ways: true, seed: 17 };
        let run = pair.run(&traffic, 20_000).unwrap();
        let drift = (pair.cycles[0] - start[0]).abs_diff(pair.cycles[1] - start[1]);
        let counter = |name: &str| run.counters.iter().find(|c| c.0 == name).unwrap().1;
        eprintln!("lanes {lanes}: {} cycles, drift {drift}, {:?}", run.cycles, run.counters);
        assert!(drift >= 10, "drift {drift}");
        assert!(counter("crc_errors").iter().sum::<u64>() > 0);
        for s in counter("slips") {
            assert!(s.abs_diff(drift) <= 16, "slips {:?} against a drift of {drift} words", counter("slips"));
        }
    }
}
