//! A link endpoint restarted (held in reset) while its partner keeps sending: the session
//! protocol (`link::endpoint::session`) brings the link back by itself, and the credits of both
//! consumers stay exact. Each side has a sender that sends a flit only with a credit of the
//! consumer behind the partner (as a router does) and a consumer that takes every word offered
//! and frees it later (a router's input buffer of `CAPACITY` flits). The restarted side loses its
//! consumer's contents and its sender's packet in flight with its state, as a node does.

use std::collections::VecDeque;

use weft_ip::link::{endpoint, LinkConfig};
use weft_ip::weft_hdl::netlist::eval::Evaluator;
use weft_ip::weft_hdl::testbench::Rng;

/// Flits the consumer behind each side holds (the sender's credits per virtual channel).
const CAPACITY: u64 = 24;
const LATENCY: usize = 7;

struct Sender {
    /// Packets to send: (id, vc, words).
    queue: VecDeque<(u64, usize, usize)>,
    beat: usize,
    credits: [u64; 2],
    /// Cycle the first beat of each packet was taken.
    taken_at: Vec<(u64, u64)>,
}

struct Consumer {
    held: [u64; 2],
    /// Per VC, the packet being received: (id, words so far).
    current: [Option<(u64, usize)>; 2],
    delivered: Vec<u64>,
}

/// Data word of beat `beat` of packet `id` (what the receiver checks).
fn word(id: u64, beat: usize) -> u128 {
    (id << 16 | beat as u64) as u128 ^ 0x5A5A_0000_0000_0000
}

#[test]
fn a_restarted_end_rejoins_and_every_credit_comes_back() {
    let config = LinkConfig { lanes: 1, max_frame_words: 16, replay_words: 64, vc_buffer_words: 32, ..Default::default() };
    let mut ends: Vec<Evaluator> = (0..2).map(|_| Evaluator::new(endpoint(&config).unwrap())).collect();
    let mut rng = Rng::new(5);
    let packets = 1500u64;
    let mut senders: Vec<Sender> = (0..2)
        .map(|i| Sender { queue: (0..packets).map(|n| (n + 1 + i as u64 * packets, rng.below(2) as usize, 1 + rng.below(16) as usize)).collect(), beat: 0, credits: [CAPACITY; 2], taken_at: vec![] })
        .collect();
    // Per side: packet id → (vc, words).
    let sent: Vec<std::collections::HashMap<u64, (usize, usize)>> = senders.iter().map(|s| s.queue.iter().map(|&(id, vc, w)| (id, (vc, w))).collect()).collect();
    let mut offered = [false; 2];
    let mut consumers: Vec<Consumer> = (0..2).map(|_| Consumer { held: [0; 2], current: [None, None], delivered: vec![] }).collect();
    let mut wires: Vec<VecDeque<u128>> = (0..2).map(|_| VecDeque::from(vec![0; LATENCY])).collect();
    for e in ends.iter_mut() {
        e.reset(3);
    }
    // Side 0 is held in reset from cycle `restart` for `held` cycles.
    let (restart, held) = (6_000u64, 2_000u64);
    let mut up_again = None;
    let mut last_delivery = 0;
    let mut cycle = 0u64;
    while cycle - last_delivery < 20_000 && consumers.iter().map(|c| c.delivered.len() as u64).sum::<u64>() < 2 * packets {
        let in_reset = (restart..restart + held).contains(&cycle);
        if cycle == restart {
            // The node's router restarts too: its buffers are empty, its packet in flight gone.
            consumers[0].held = [0; 2];
            consumers[0].current = [None, None];
            senders[0].credits = [CAPACITY; 2];
            if senders[0].beat > 0 {
                senders[0].queue.pop_front();
                senders[0].beat = 0;
            }
        }
        let mut frees = [[false; 2]; 2];
        for (i, e) in ends.iter_mut().enumerate() {
            let s = &senders[i];
            // An offer stays until taken (a router offers a flit only with a credit for it).
            offered[i] = offered[i] || s.queue.front().is_some_and(|p| s.credits[p.1] > 0) && rng.chance(80);
            offered[i] &= !(i == 0 && in_reset);
            let (id, vc, words) = s.queue.front().copied().unwrap_or((0, 0, 1));
            e.set_input("s_axis_tdata", word(id, s.beat));
            e.set_input("s_axis_tkeep", 0xff);
            e.set_input("s_axis_tlast", (s.beat + 1 == words) as u128);
            e.set_input("s_axis_tuser", vc as u128);
            e.set_input("s_axis_tvalid", offered[i] as u128);
            e.set_input("m_axis_vc0_tready", 1);
            e.set_input("m_axis_vc1_tready", 1);
            // Side 1's consumer is blocked downstream across the restart: flits of the old
            // session are still in it when the new one begins.
            let blocked = i == 1 && (restart..restart + held + 400).contains(&cycle);
            for v in 0..2 {
                frees[i][v] = consumers[i].held[v] > 0 && rng.chance(12) && !(i == 0 && in_reset) && !blocked;
            }
            e.set_input("rx_credit_return", frees[i][0] as u128 | (frees[i][1] as u128) << 1);
            e.set_input("rx_serial", *wires[1 - i].front().unwrap());
            e.settle();
        }
        for (i, e) in ends.iter_mut().enumerate() {
            if i == 0 && in_reset {
                // The router behind side 0 is in reset as well: it neither takes nor counts.
                continue;
            }
            let s = &mut senders[i];
            if let Some((id, vc, words)) = s.queue.front().copied() {
                if offered[i] && e.get_output("s_axis_tready") == 1 {
                    offered[i] = false;
                    s.credits[vc] -= 1;
                    if s.beat == 0 {
                        s.taken_at.push((id, cycle));
                    }
                    s.beat += 1;
                    if s.beat == words {
                        s.queue.pop_front();
                        s.beat = 0;
                    }
                }
            }
            let credits = e.get_output("tx_credit");
            for v in 0..2 {
                s.credits[v] += (credits >> v & 1) as u64;
                assert!(s.credits[v] <= CAPACITY, "side {i} vc {v}: {} credits, more than the consumer holds (cycle {cycle})", s.credits[v]);
            }
            let c = &mut consumers[i];
            for v in 0..2 {
                c.held[v] -= frees[i][v] as u64;
                if e.get_output(&format!("m_axis_vc{v}_tvalid")) == 0 {
                    continue;
                }
                c.held[v] += 1;
                assert!(c.held[v] <= CAPACITY, "side {i} vc {v}: the consumer overflows at cycle {cycle}");
                let data = e.get_output(&format!("m_axis_vc{v}_tdata"));
                let last = e.get_output(&format!("m_axis_vc{v}_tlast")) == 1;
                let id = (data ^ 0x5A5A_0000_0000_0000) as u64 >> 16;
                let beat = (data & 0xffff) as usize;
                let (cur, n) = c.current[v].get_or_insert((id, 0));
                assert_eq!((id, beat), (*cur, *n), "side {i} vc {v}: word out of place at cycle {cycle}");
                *n += 1;
                if last {
                    let (id, n) = c.current[v].take().unwrap();
                    assert_eq!((v, n), sent[1 - i][&id], "side {i}: packet {id} delivered on vc {v} with {n} words");
                    assert!(!c.delivered.contains(&id), "side {i}: packet {id} delivered twice");
                    c.delivered.push(id);
                    last_delivery = cycle;
                }
            }
        }
        for (i, e) in ends.iter_mut().enumerate() {
            wires[i].push_back(e.get_output("tx_serial"));
            wires[i].pop_front();
            e.clock(i == 0 && in_reset);
        }
        if cycle > restart + held
            && up_again.is_none()
            && ends.iter_mut().all(|e| {
                e.settle();
                e.get_output("channel_up") == 1
            })
        {
            up_again = Some(cycle - restart - held);
        }
        cycle += 1;
    }
    let up_again = up_again.expect("the link came back up by itself");
    let counter = |e: &mut Evaluator, name: &str| {
        e.settle();
        e.get_output(name)
    };
    let restarts = [counter(&mut ends[0], "partner_restarts"), counter(&mut ends[1], "partner_restarts")];
    let dropped = counter(&mut ends[1], "frames_dropped");
    assert_eq!(restarts, [0, 1], "partner restarts seen by each side");
    // Both ways, in order per virtual channel; what is missing was in flight at the restart.
    let cut = restart + held + up_again;
    for (i, c) in consumers.iter().enumerate() {
        let from = 1 - i;
        for v in 0..2 {
            let on_v: Vec<u64> = c.delivered.iter().copied().filter(|id| sent[from][id].0 == v).collect();
            assert!(on_v.windows(2).all(|w| w[0] < w[1]), "side {i} vc {v}: packets out of order");
        }
        for &(id, at) in &senders[from].taken_at {
            if at > cut {
                assert!(c.delivered.contains(&id), "packet {id} taken by side {from} at cycle {at}, after the link was back, is lost");
            }
        }
    }
    let lost: Vec<usize> = (0..2).map(|i| senders[1 - i].taken_at.len() - consumers[i].delivered.len()).collect();
    assert!(lost[0] > 0 && dropped > 0, "the restart cut nothing in flight (lost {lost:?}, dropped {dropped})");
    // Every credit came back: the senders hold the consumers' whole capacity once all is freed.
    for _ in 0..5000 {
        for (i, e) in ends.iter_mut().enumerate() {
            let frees: Vec<bool> = (0..2).map(|v| consumers[i].held[v] > 0).collect();
            for v in 0..2 {
                consumers[i].held[v] -= frees[v] as u64;
            }
            e.set_input("s_axis_tvalid", 0);
            e.set_input("rx_credit_return", frees[0] as u128 | (frees[1] as u128) << 1);
            e.set_input("rx_serial", *wires[1 - i].front().unwrap());
            e.settle();
            let credits = e.get_output("tx_credit");
            for v in 0..2 {
                senders[i].credits[v] += (credits >> v & 1) as u64;
            }
        }
        for (i, e) in ends.iter_mut().enumerate() {
            wires[i].push_back(e.get_output("tx_serial"));
            wires[i].pop_front();
            e.clock(false);
        }
    }
    for (i, s) in senders.iter().enumerate() {
        assert_eq!(s.credits, [CAPACITY; 2], "side {i}: credits after draining");
    }
    println!(
        "side 0 restarted for {held} cycles: link up {up_again} cycles after release; lost {lost:?} packets (to side 0, to side 1); side 1 dropped {dropped} frames; {} and {} packets delivered",
        consumers[0].delivered.len(),
        consumers[1].delivered.len()
    );
}
