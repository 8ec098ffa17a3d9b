//! The engine's built-in-simulator testbench: one engine with random packets on every input and
//! random gaps and back-pressure everywhere, each output checked beat by beat against software
//! (binary32 sums of the documented order, headers from the program; the host's packets as the
//! packet format delivers them: every header field, its check bits and the last beat's `tkeep`).

use crate::Error;
use weft_hdl::netlist::eval::Evaluator;
use weft_hdl::testbench::Rng;

use super::engine::{engine, FLAGS, PARTIAL_TAG, RESULT_TAG};
use crate::router::header::{with_ecc, Header};

/// A stream's beats: data, keep, last.
type Beats = Vec<(u128, u128, bool)>;

fn flag(name: &str) -> u128 {
    1 << FLAGS.iter().position(|f| *f == name).unwrap()
}

/// Packets of `lengths` words from `words`, each a header beat (the engine reads `length`) then the
/// payload four words a beat; `keep` marks the valid bytes.
fn packets(words: &[u32], lengths: &[usize], header: impl Fn(usize) -> u128) -> Beats {
    let mut out = vec![];
    let mut at = 0;
    for &n in lengths {
        out.push((header(n), 0xFFFF, false));
        let p = &words[at..at + n];
        at += n;
        for (i, c) in p.chunks(4).enumerate() {
            let data = c.iter().enumerate().fold(0u128, |acc, (j, w)| acc | (*w as u128) << (32 * j));
            out.push((data, (1u128 << (4 * c.len())) - 1, (i + 1) * 4 >= n));
        }
    }
    out
}

/// The header the engine forges toward the router (`dst`, `tag`, `length`; the router fills the
/// rest).
fn head(dst: u32, tag: u16, words: usize) -> u128 {
    let d = dst as usize;
    Header { dst: [d & 63, d >> 6 & 63, d >> 12 & 63], dst_port: d >> 18 & 15, tag, length: 4 * words, ..Default::default() }.pack() & ((1 << 120) - 1)
}

/// A result header as delivered to the host at `at`: from and to `at`, no hops, check bits.
fn delivered(at: u32, words: usize) -> u128 {
    let h = head(at, RESULT_TAG, words);
    let d = at as usize;
    with_ecc(Header { src: [d & 63, d >> 6 & 63, d >> 12 & 63], src_port: d >> 18 & 15, ..Header::unpack(h) }.pack())
}

/// One engine as the root (`root`) or as a chain node, `words` elements in random packets.
pub fn check_engine(root: bool, words: usize, seed: u64) -> Result<String, Error> {
    let mut e = Evaluator::new(engine(128)?);
    e.reset(2);
    let mut rng = Rng::new(seed);
    let (dst_a, dst_b, host) = (0x0004_1003u32, 0x0000_2041u32, 0x0008_2042u32);
    let flags = if root { flag("root") | flag("use_a") | flag("use_b") | flag("fwd_a") | flag("fwd_b") } else { flag("use_a") | flag("fwd_b") };
    e.set_input("flags", flags);
    e.set_input("dst_a", dst_a as u128);
    e.set_input("dst_b", dst_b as u128);
    e.set_input("host_dst", host as u128);
    let mut lengths = vec![];
    let mut left = words;
    while left > 0 {
        let n = (1 + rng.below(40) as usize).min(left);
        lengths.push(n);
        left -= n;
    }
    let operand = |rng: &mut Rng| crate::kernels::operand(rng);
    let [h, a, b]: [Vec<u32>; 3] = [0, 1, 2].map(|_| (0..words).map(|_| operand(&mut rng)).collect());
    let f = |x: u32| f32::from_bits(x);
    let sums: Vec<u32> = (0..words).map(|k| if root { ((f(a[k]) + f(h[k])) + f(b[k])).to_bits() } else { ((f(a[k]) + f(h[k])) + -0.0f32).to_bits() }).collect();
    // Inputs; a result from port b passes unchanged at a chain node.
    let plain = |n| head(0, 0, n);
    let inputs: Vec<(&str, Beats, bool)> =
        vec![("s_axis_host", packets(&h, &lengths, plain), false), ("s_axis_a", packets(&a, &lengths, plain), true), ("s_axis_b", packets(&b, &lengths, plain), true)];
    let (result, to_a_tag) = if root { (&sums, RESULT_TAG) } else { (&b, PARTIAL_TAG) };
    let outputs: Vec<(&str, Beats)> = vec![
        ("m_axis_host", packets(result, &lengths, |n| delivered(host, n))),
        ("m_axis_a", packets(&sums, &lengths, |n| head(dst_a, to_a_tag, n))),
        ("m_axis_b", packets(result, &lengths, |n| head(dst_b, RESULT_TAG, n))),
    ];
    let mut next = [0usize; 3];
    let mut offered = [false; 3];
    let mut got = [0usize; 3];
    let total: usize = outputs.iter().map(|o| o.1.len()).sum();
    let mut cycle = 0u64;
    while got.iter().sum::<usize>() < total {
        cycle += 1;
        if cycle > 50 * total as u64 + 500 {
            return Err(Error::Mismatch(format!("seed {seed}: timed out with beats out {got:?} of {:?}, in {next:?}", outputs.iter().map(|o| o.1.len()).collect::<Vec<_>>())));
        }
        for (i, (name, beats, keep)) in inputs.iter().enumerate() {
            if !offered[i] && next[i] < beats.len() && rng.chance(70) {
                offered[i] = true;
            }
            if offered[i] {
                let (d, k, l) = beats[next[i]];
                e.set_input(&format!("{name}_tdata"), d);
                if *keep {
                    e.set_input(&format!("{name}_tkeep"), k);
                }
                e.set_input(&format!("{name}_tlast"), l as u128);
            }
            e.set_input(&format!("{name}_tvalid"), offered[i] as u128);
        }
        let ready: Vec<bool> = outputs.iter().map(|_| rng.chance(60)).collect();
        for (i, (name, _)) in outputs.iter().enumerate() {
            e.set_input(&format!("{name}_tready"), ready[i] as u128);
        }
        e.settle();
        for (i, (name, _, _)) in inputs.iter().enumerate() {
            if offered[i] && e.get_output(&format!("{name}_tready")) == 1 {
                next[i] += 1;
                offered[i] = false;
            }
        }
        for (i, (name, want)) in outputs.iter().enumerate() {
            if !(ready[i] && e.get_output(&format!("{name}_tvalid")) == 1) {
                continue;
            }
            let (wd, wk, wl) = *want.get(got[i]).ok_or_else(|| Error::Mismatch(format!("seed {seed}: {name} sends a beat more than {}", want.len())))?;
            let (d, l) = (e.get_output(&format!("{name}_tdata")), e.get_output(&format!("{name}_tlast")) == 1);
            // Only the valid words of a last beat are compared (the others are sums of nothing).
            let mask = (0..4).filter(|j| wk >> (4 * j) & 1 == 1).fold(0u128, |m, j| m | 0xFFFF_FFFFu128 << (32 * j));
            if d & mask != wd & mask || l != wl {
                return Err(Error::Mismatch(format!("seed {seed}, cycle {cycle}: {name} beat {} is {d:#034x} last {l}, want {wd:#034x} last {wl}", got[i])));
            }
            // The host's stream carries tkeep: the bytes the header's length counts.
            if *name == "m_axis_host" && e.get_output("m_axis_host_tkeep") != wk {
                return Err(Error::Mismatch(format!("seed {seed}, cycle {cycle}: {name} beat {} keeps {:#06x}, want {wk:#06x}", got[i], e.get_output("m_axis_host_tkeep"))));
            }
            got[i] += 1;
        }
        e.clock(false);
    }
    Ok(format!("{} ({} elements in {} packets): every output bit-exact under random valid 70 % / ready 60 %, {cycle} cycles", if root { "root" } else { "chain node" }, words, lengths.len()))
}
