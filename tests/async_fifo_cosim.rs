//! The generated `axis_async_fifo_w128_d64` in Verilator with two independent clocks: write
//! clock slower and faster than the read clock at random ratios and phases, random handshakes;
//! every beat leaves intact, in order, exactly once.

use std::collections::VecDeque;
use std::path::Path;

use weft::hdl::testbench::Rng;
use weft::sim::cosim::{Model, PortId};

/// One rising and falling edge of the clock `clk`.
fn pulse(m: &mut Model, clk: PortId) {
    m.set(clk, 1);
    m.eval();
    m.set(clk, 0);
    m.eval();
}

#[test]
fn random_clock_ratios_lose_duplicate_or_reorder_nothing() {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("generated/axis/axis_async_fifo_w128_d64.v");
    let mut m = Model::build(&file, "axis_async_fifo_w128_d64").unwrap();
    let p = |m: &Model, n: &str| m.port(n).unwrap();
    let (s_clk, s_rst, m_clk, m_rst) = (p(&m, "s_clk"), p(&m, "s_rst"), p(&m, "m_clk"), p(&m, "m_rst"));
    let (s_data, s_keep, s_last, s_valid, s_ready) = (p(&m, "s_axis_tdata"), p(&m, "s_axis_tkeep"), p(&m, "s_axis_tlast"), p(&m, "s_axis_tvalid"), p(&m, "s_axis_tready"));
    let (m_data, m_keep, m_last, m_valid, m_ready) = (p(&m, "m_axis_tdata"), p(&m, "m_axis_tkeep"), p(&m, "m_axis_tlast"), p(&m, "m_axis_tvalid"), p(&m, "m_axis_tready"));
    let mut rng = Rng::new(2026);
    let mut runs = 0;
    for run in 0..12 {
        // A much slower and a much faster write clock, then periods 5..=60 on each side.
        let (s_period, m_period) = match run {
            0 => (50, 7),
            1 => (7, 50),
            _ => (5 + rng.below(56), 5 + rng.below(56)),
        };
        let (valid_percent, ready_percent) = (30 + rng.below(71), 30 + rng.below(71));
        let beats = 1500;
        // Reset both domains.
        m.set(s_rst, 1);
        m.set(m_rst, 1);
        m.set(s_valid, 0);
        m.set(m_ready, 0);
        for _ in 0..4 {
            pulse(&mut m, s_clk);
            pulse(&mut m, m_clk);
        }
        m.set(s_rst, 0);
        m.set(m_rst, 0);
        let (mut next_s, mut next_m) = (rng.below(s_period), rng.below(m_period));
        let mut expected: VecDeque<(Vec<u32>, u64, u64)> = VecDeque::new();
        let mut offered: Option<(Vec<u32>, u64, u64)> = None;
        let (mut sent, mut received, mut ready, mut steps) = (0, 0, false, 0u64);
        while received < beats {
            steps += 1;
            assert!(steps < 2_000_000, "timed out at {received} of {beats} ({s_period}:{m_period})");
            if next_s <= next_m {
                m.eval();
                if offered.is_some() && m.get(s_ready) == 1 {
                    expected.push_back(offered.take().unwrap());
                    sent += 1;
                }
                pulse(&mut m, s_clk);
                if offered.is_none() && sent < beats && rng.chance(valid_percent) {
                    let data: Vec<u32> = (0..4).map(|_| rng.next_u64() as u32).collect();
                    offered = Some((data, rng.below(1 << 16), rng.below(2)));
                }
                if let Some((d, k, l)) = &offered {
                    m.set_words(s_data, d);
                    m.set(s_keep, *k);
                    m.set(s_last, *l);
                }
                m.set(s_valid, offered.is_some() as u64);
                next_s += s_period;
            } else {
                m.eval();
                if ready && m.get(m_valid) == 1 {
                    let got = (m.get_words(m_data).to_vec(), m.get(m_keep), m.get(m_last));
                    let want = expected.pop_front().expect("a beat that was never sent left the FIFO");
                    assert_eq!(got, want, "beat {received} ({s_period}:{m_period})");
                    received += 1;
                }
                pulse(&mut m, m_clk);
                ready = rng.chance(ready_percent);
                m.set(m_ready, ready as u64);
                next_m += m_period;
            }
        }
        // Nothing more may come out.
        m.set(m_ready, 1);
        for _ in 0..50 {
            pulse(&mut m, s_clk);
            pulse(&mut m, m_clk);
            assert_eq!(m.get(m_valid), 0, "extra beat after the last ({s_period}:{m_period})");
        }
        runs += 1;
    }
    assert_eq!(runs, 12);
}
