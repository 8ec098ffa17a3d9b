//! The engine's built-in-simulator testbench: one engine with random packets on every input and
//! random gaps and back-pressure everywhere, each output checked beat by beat against software
//! ([`ReduceOp::apply`] in the documented order, headers from the program; the host's packets as
//! the packet format delivers them: every header field, its check bits and the last beat's `tkeep`).

use crate::Error;
use weft_hdl::netlist::eval::Evaluator;
use weft_hdl::testbench::Rng;

use super::element::{ElementType, ReduceOp};
use super::engine::{engine, FLAGS, PARTIAL_TAG, RESULT_TAG};
use crate::router::header::{with_ecc, Header};

/// A stream's beats: data, keep, last.
type Beats = Vec<(u128, u128, bool)>;

fn flag(name: &str) -> u128 {
    1 << FLAGS.iter().position(|f| *f == name).unwrap()
}

/// Packets of `lengths` elements of `bits` from `elements`, each a header beat (the engine reads
/// `length` and the operation id in `user`; `header(k, bytes)` builds packet `k`'s) then the
/// payload `128 / bits` elements a beat; `keep` marks the valid bytes.
fn packets(elements: &[u128], bits: usize, lengths: &[usize], header: impl Fn(usize, usize) -> u128) -> Beats {
    let lanes = 128 / bits;
    let mut out = vec![];
    let mut at = 0;
    for (k, &n) in lengths.iter().enumerate() {
        out.push((header(k, n * bits / 8), 0xFFFF, false));
        let p = &elements[at..at + n];
        at += n;
        for (i, c) in p.chunks(lanes).enumerate() {
            let data = c.iter().enumerate().fold(0u128, |acc, (j, w)| acc | w << (bits * j));
            out.push((data, (1u128 << (c.len() * bits / 8)) - 1, (i + 1) * lanes >= n));
        }
    }
    out
}

/// Operands of `ty` that exercise the operators: specials (±0, ±∞, NaN, the smallest subnormal,
/// the largest finite value; on int32 0, ±1 and the extremes), values near one (so sums round),
/// and any bit pattern.
pub fn operand(ty: ElementType, rng: &mut Rng) -> u128 {
    let Some(f) = ty.float() else {
        let special = [0u32, 1, u32::MAX, i32::MAX as u32, i32::MIN as u32];
        return match rng.below(3) {
            0 => special[rng.below(5) as usize],
            _ => rng.next_u64() as u32,
        } as u128;
    };
    let (w, man) = (f.width(), f.man);
    let sign = |rng: &mut Rng| (rng.below(2) as u128) << (w - 1);
    let random = |rng: &mut Rng| (0..w).step_by(64).fold(0u128, |acc, k| acc | (rng.next_u64() as u128) << k) & ((1u128 << w) - 1);
    match rng.below(10) {
        0 => [0, f.infinity(false), f.quiet_nan(), 1, (f.exp_max() - 1) << man | ((1 << man) - 1)][rng.below(5) as usize] | sign(rng),
        1..=5 => {
            let exponent = (f.bias() as u128 - 3 + rng.below(7) as u128) << man;
            sign(rng) | exponent | (random(rng) & ((1 << man) - 1))
        }
        _ => random(rng),
    }
}

/// The header the engine forges toward the router (`dst`, `tag`, `length` in bytes, the
/// operation id `id` in `user`; the router fills the rest).
fn head(dst: u32, tag: u16, bytes: usize, id: u32) -> u128 {
    let d = dst as usize;
    Header { dst: [d & 63, d >> 6 & 63, d >> 12 & 63], dst_port: d >> 18 & 15, tag, length: bytes, user: id, ..Default::default() }.pack() & ((1 << 120) - 1)
}

/// A result header as delivered to the host at `at`: from and to `at`, no hops, check bits.
fn delivered(at: u32, bytes: usize, id: u32) -> u128 {
    let h = head(at, RESULT_TAG, bytes, id);
    let d = at as usize;
    with_ecc(Header { src: [d & 63, d >> 6 & 63, d >> 12 & 63], src_port: d >> 18 & 15, ..Header::unpack(h) }.pack())
}

/// One engine for elements of `ty` running `op`, as the root (`root`) or as a chain node,
/// `words` elements in random packets, each with a random operation id; the engine must count no
/// id mismatch.
pub fn check_engine(ty: ElementType, op: ReduceOp, root: bool, words: usize, seed: u64) -> Result<String, Error> {
    let (report, mismatches, _) = run_engine(ty, op, root, words, seed, false)?;
    if mismatches != 0 {
        return Err(Error::Mismatch(format!("seed {seed}: the engine counted {mismatches} id mismatches where every id agreed")));
    }
    Ok(report)
}

/// A chain node whose partial packet 1 carries another operation id than the contribution it
/// joins: returns the engine's `id_mismatches` and the beats of that packet (every result is
/// still checked).
pub fn check_wrong_id(seed: u64) -> Result<(u64, u64), Error> {
    let (_, mismatches, beats) = run_engine(ElementType::F32, ReduceOp::Sum, false, 120, seed, true)?;
    Ok((mismatches, beats))
}

fn run_engine(ty: ElementType, op: ReduceOp, root: bool, words: usize, seed: u64, wrong_id: bool) -> Result<(String, u64, u64), Error> {
    let bits = ty.bits();
    let mut e = Evaluator::new(engine(128, ty)?);
    e.reset(2);
    let mut rng = Rng::new(seed);
    let (dst_a, dst_b, host) = (0x0004_1003u32, 0x0000_2041u32, 0x0008_2042u32);
    let flags = if root { flag("root") | flag("use_a") | flag("use_b") | flag("fwd_a") | flag("fwd_b") } else { flag("use_a") | flag("fwd_b") };
    e.set_input("flags", flags);
    e.set_input("dst_a", dst_a as u128);
    e.set_input("dst_b", dst_b as u128);
    e.set_input("host_dst", host as u128);
    e.set_input("op", op.code() as u128);
    e.set_input("timeout", 0);
    let mut lengths = vec![];
    let mut left = words;
    while left > 0 {
        let n = (1 + rng.below(40) as usize).min(left);
        lengths.push(n);
        left -= n;
    }
    let [h, a, b]: [Vec<u128>; 3] = [0, 1, 2].map(|_| (0..words).map(|_| operand(ty, &mut rng)).collect());
    let ids: Vec<u32> = lengths.iter().map(|_| rng.next_u64() as u32).collect();
    // With `wrong_id`, partial packet 1 carries another id (its values still join).
    let partial_id = |k: usize| if wrong_id && k == 1 { ids[k] ^ 0x8000_0001 } else { ids[k] };
    let f = |x: u128, y: u128| op.apply(ty, x, y);
    let sums: Vec<u128> = (0..words).map(|k| f(f(a[k], h[k]), if root { b[k] } else { op.identity(ty) })).collect();
    // Inputs; a result from port b passes unchanged at a chain node.
    let contribution = |k, n| head(0, 0, n, ids[k]);
    let partial = |k, n| head(0, 0, n, partial_id(k));
    let inputs: Vec<(&str, Beats, bool)> =
        vec![("s_axis_host", packets(&h, bits, &lengths, contribution), false), ("s_axis_a", packets(&a, bits, &lengths, partial), true), ("s_axis_b", packets(&b, bits, &lengths, partial), true)];
    // Results and partials leave with the contribution's id; a result from port b with its own.
    let (result, to_a_tag) = if root { (&sums, RESULT_TAG) } else { (&b, PARTIAL_TAG) };
    let result_id = |k| if root { ids[k] } else { partial_id(k) };
    let outputs: Vec<(&str, Beats)> = vec![
        ("m_axis_host", packets(result, bits, &lengths, |k, n| delivered(host, n, result_id(k)))),
        ("m_axis_a", packets(&sums, bits, &lengths, |k, n| head(dst_a, to_a_tag, n, ids[k]))),
        ("m_axis_b", packets(result, bits, &lengths, |k, n| head(dst_b, RESULT_TAG, n, result_id(k)))),
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
            // Only the valid bytes of a last beat are compared (the others combine nothing).
            let mask = (0..16).filter(|j| wk >> j & 1 == 1).fold(0u128, |m, j| m | 0xFFu128 << (8 * j));
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
    let role = if root { "root" } else { "chain node" };
    let beats = lengths.get(1).map_or(0, |n| n.div_ceil(128 / bits)) as u64;
    let report = format!("{role}, {} {} ({words} elements in {} packets): every output bit-exact under random valid 70 % / ready 60 %, {cycle} cycles", ty.name(), op.name(), lengths.len());
    Ok((report, e.get_output("id_mismatches") as u64, beats))
}
