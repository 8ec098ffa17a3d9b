//! The engine's built-in-simulator testbench: one engine with random packets on every input and
//! random gaps and back-pressure everywhere, each output checked beat by beat against software
//! ([`ReduceOp::apply`] in the documented order, headers from the program; the host's packets as
//! the packet format delivers them: every header field, its check bits and the last beat's `tkeep`).
//! The bench plays both neighbours' side of the grants: it grants the beats of every partial
//! packet the engine sends (after a random delay) and checks that the engine never has more beats
//! ungranted than its receiver's buffer holds, and that it grants every beat it takes, to the node
//! that sent it.

use crate::Error;
use weft_hdl::netlist::eval::Evaluator;
use weft_hdl::testbench::Rng;

use super::element::{ElementType, ReduceOp};
use super::engine::{buffer_beats, engine, FLAGS, GRANT_TAG, PARTIAL_TAG, RESULT_TAG};
use crate::router::header::{with_ecc, Header};
use crate::router::RouterConfig;

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
    let (report, mismatches, _, _) = run_engine(ty, op, root, words, seed, false, false)?;
    if mismatches != 0 {
        return Err(Error::Mismatch(format!("seed {seed}: the engine counted {mismatches} id mismatches where every id agreed")));
    }
    Ok(report)
}

/// A chain node whose partial packet 1 carries another operation id than the contribution it
/// joins: returns the engine's `id_mismatches` and the beats of that packet (every result is
/// still checked).
pub fn check_wrong_id(seed: u64) -> Result<(u64, u64), Error> {
    let (_, mismatches, beats, _) = run_engine(ElementType::F32, ReduceOp::Sum, false, 120, seed, true, false)?;
    Ok((mismatches, beats))
}

/// A chain node sending more partial beats than its receiver's buffer holds, its grants withheld
/// until it stops: returns the beats it had sent ungranted when it stopped (every output is still
/// checked, and the engine must have stopped only because its next packet did not fit).
pub fn check_credit(seed: u64) -> Result<usize, Error> {
    run_engine(ElementType::F32, ReduceOp::Sum, false, 1_500, seed, false, true)?.3.ok_or_else(|| Error::Mismatch(format!("seed {seed}: the engine never stopped for want of room")))
}

#[allow(clippy::too_many_arguments)]
fn run_engine(ty: ElementType, op: ReduceOp, root: bool, words: usize, seed: u64, wrong_id: bool, mut withhold: bool) -> Result<(String, u64, u64, Option<usize>), Error> {
    let bits = ty.bits();
    let max_packet = RouterConfig::default().max_packet_bytes;
    let mut e = Evaluator::new(engine(128, ty, max_packet)?);
    let capacity = buffer_beats(128, max_packet);
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
    // Grants: the bench's, due at a cycle, to the engine's port a between partial packets; the
    // engine's, counted per sender; partial packets it has sent and the bench not yet granted.
    let (mut due, mut granting, mut ungranted): (Vec<(u64, usize)>, Option<usize>, usize) = (vec![], None, 0);
    let mut grants_got = [0usize; 2];
    let (mut a_out_inside, mut a_out_beats, mut a_out_packets, mut last_a_out) = (false, 0usize, 0usize, 0u64);
    // Every packet's beats, header included: what the engine must grant back per input.
    let out_beats: Vec<usize> = lengths.iter().map(|n| 1 + (n * bits).div_ceil(128)).collect();
    let packet_beats: usize = out_beats.iter().sum();
    let mut stalled_at = None;
    let granted_all = |g: &[usize; 2]| g[0] == packet_beats && g[1] == if root { packet_beats } else { 0 };
    while got.iter().sum::<usize>() < total || !granted_all(&grants_got) {
        cycle += 1;
        if cycle > 50 * total as u64 + 500 {
            return Err(Error::Mismatch(format!(
                "seed {seed}: timed out with beats out {got:?} of {:?}, in {next:?}, beats granted back {grants_got:?} of {packet_beats}, idle {}",
                outputs.iter().map(|o| o.1.len()).collect::<Vec<_>>(),
                e.get_output("idle")
            )));
        }
        for (i, (name, beats, keep)) in inputs.iter().enumerate() {
            // A grant goes in between two packets of port a.
            let between = next[i] == 0 || beats[next[i] - 1].2;
            if i == 1 && !offered[i] && granting.is_none() && between && due.first().is_some_and(|t| t.0 <= cycle) {
                let beats = due.remove(0).1;
                granting = Some(beats);
                e.set_input("s_axis_a_tdata", head(0, GRANT_TAG, 0, beats as u32));
                e.set_input("s_axis_a_tkeep", 0xFFFF);
                e.set_input("s_axis_a_tlast", 1);
            }
            if i == 1 && granting.is_some() {
                e.set_input("s_axis_a_tvalid", 1);
                continue;
            }
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
        // Withheld grants: once the engine has sent nothing for 200 cycles, it must have stopped
        // for want of room (the next packet does not fit), and every grant is released.
        if withhold && stalled_at.is_none() && cycle > last_a_out + 200 && a_out_packets < out_beats.len() {
            if ungranted + out_beats[a_out_packets] <= capacity {
                return Err(Error::Mismatch(format!("seed {seed}, cycle {cycle}: stopped with {ungranted} beats ungranted, room for the next packet of {}", out_beats[a_out_packets])));
            }
            stalled_at = Some(ungranted);
            due.iter_mut().for_each(|d| d.0 = cycle);
            withhold = false;
        }
        let ready: Vec<bool> = outputs.iter().map(|_| rng.chance(60)).collect();
        for (i, (name, _)) in outputs.iter().enumerate() {
            e.set_input(&format!("{name}_tready"), ready[i] as u128);
        }
        e.settle();
        if let Some(beats) = granting.filter(|_| e.get_output("s_axis_a_tready") == 1) {
            granting = None;
            ungranted -= beats;
        }
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
            let d = e.get_output(&format!("{name}_tdata"));
            if i == 1 && !a_out_inside && Header::unpack(d).tag == GRANT_TAG {
                // A grant to the sender of the packet it used up: port a's (dst_b's node; at the
                // root dst_a's) or the root's port b's (dst_b's), at the port of this host.
                let h = Header::unpack(d);
                let to = (h.dst[0] | h.dst[1] << 6 | h.dst[2] << 12 | h.dst_port << 18) as u32;
                let side = usize::from(root && to & 0x3FFFF == dst_b & 0x3FFFF);
                let sender = if root { [dst_a, dst_b][side] } else { dst_b };
                let want_to = (sender & 0x3FFFF) | (host & !0x3FFFF);
                if to != want_to || h.length != 0 || h.user == 0 || e.get_output("m_axis_a_tlast") != 1 {
                    return Err(Error::Mismatch(format!("seed {seed}, cycle {cycle}: grant of {} beats to {to:#08x} length {} where {want_to:#08x}, header only", h.user, h.length)));
                }
                grants_got[side] += h.user as usize;
                if grants_got[side] > packet_beats {
                    return Err(Error::Mismatch(format!("seed {seed}, cycle {cycle}: {} beats granted, more than the {packet_beats} taken", grants_got[side])));
                }
                continue;
            }
            let (wd, wk, wl) = *want.get(got[i]).ok_or_else(|| Error::Mismatch(format!("seed {seed}: {name} sends a beat more than {}", want.len())))?;
            let l = e.get_output(&format!("{name}_tlast")) == 1;
            if i == 1 && !root {
                // The receiver's buffer must have room for the whole packet as it starts.
                if !a_out_inside {
                    a_out_beats = out_beats[a_out_packets];
                    a_out_packets += 1;
                    ungranted += a_out_beats;
                    if ungranted > capacity {
                        return Err(Error::Mismatch(format!(
                            "seed {seed}, cycle {cycle}: a partial packet started at beat {} with {ungranted} beats ungranted, more than the {capacity} its receiver holds",
                            got[i]
                        )));
                    }
                }
                if l {
                    due.push((if withhold { u64::MAX } else { cycle + 1 + rng.below(80) }, a_out_beats));
                }
                last_a_out = cycle;
            }
            if i == 1 {
                a_out_inside = !l;
            }
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
    Ok((report, e.get_output("id_mismatches") as u64, beats, stalled_at))
}

/// The butterfly ([`mod@super::butterfly`]) of every node of a torus of `dims`, in the built-in
/// simulator: `ops` allreduce operations back to back, each one packet of 1 element to
/// [`super::butterfly::BUTTERFLY_BYTES`] per host, random elements of `ty` with a random operation id, random gaps on the hosts' streams,
/// random back-pressure on every output, and a network that delivers each exchange packet (its
/// source filled in, as the router does) after a random delay, so partners' packets arrive in any
/// order and a partner may run an operation ahead. Every result packet is checked beat by beat
/// against [`super::butterfly::reference()`] and the header the host must get; every unit must
/// count no mismatch and end idle.
pub fn check_butterfly(ty: ElementType, op: ReduceOp, dims: [usize; 3], ops: usize, seed: u64) -> Result<String, Error> {
    use super::butterfly::{butterfly, reference, BUTTERFLY_BYTES, EXCHANGE_TAG};
    use crate::router::RouterConfig;
    use std::collections::VecDeque;
    let config = RouterConfig { dims, ..RouterConfig::default() };
    let p = config.nodes();
    let bits = ty.bits();
    let net = butterfly(128, ty, dims)?;
    let mut rng = Rng::new(seed);
    let addr = |n: usize| {
        let c = config.coords(n);
        (c[0] | c[1] << 6 | c[2] << 12 | 2 << 18) as u32
    };
    let mut units: Vec<Evaluator> = (0..p).map(|_| Evaluator::new(net.clone())).collect();
    for (n, e) in units.iter_mut().enumerate() {
        e.reset(2);
        e.set_input("host_dst", addr(n) as u128);
        e.set_input("op", op.code() as u128);
        e.set_input("timeout", 0);
    }
    // Each host's packets, and what each must get back.
    let (mut sends, mut wants) = (vec![vec![]; p], vec![vec![]; p]);
    for _ in 0..ops {
        let n = 1 + rng.below((BUTTERFLY_BYTES / ty.bytes()) as u64) as usize;
        let id = rng.next_u64() as u32;
        let vectors: Vec<Vec<u128>> = (0..p).map(|_| (0..n).map(|_| operand(ty, &mut rng)).collect()).collect();
        let results = reference(&config, &vectors, ty, op);
        for node in 0..p {
            sends[node].extend(packets(&vectors[node], bits, &[n], |_, b| head(0, 0, b, id)));
            wants[node].extend(packets(&results[node], bits, &[n], |_, b| delivered(addr(node), b, id)));
        }
    }
    let (mut next, mut offered, mut got) = (vec![0usize; p], vec![false; p], vec![0usize; p]);
    // Exchange packets on their way: (arrival cycle, beats), and the one being delivered.
    let mut outgoing: Vec<Vec<u128>> = vec![vec![]; p];
    let mut flying: Vec<Vec<(u64, Vec<u128>)>> = vec![vec![]; p];
    let mut arriving: Vec<VecDeque<u128>> = vec![VecDeque::new(); p];
    let total: usize = wants.iter().map(|w| w.len()).sum();
    let mut cycle = 0u64;
    while got.iter().sum::<usize>() < total {
        cycle += 1;
        if cycle > 400 * total as u64 + 2000 {
            return Err(Error::Mismatch(format!("seed {seed}: stuck after {cycle} cycles with result beats {got:?}")));
        }
        let mut ready = vec![(false, false); p];
        for n in 0..p {
            let e = &mut units[n];
            if !offered[n] && next[n] < sends[n].len() && rng.chance(70) {
                offered[n] = true;
            }
            if offered[n] {
                let (d, _, l) = sends[n][next[n]];
                e.set_input("s_axis_host_tdata", d);
                e.set_input("s_axis_host_tlast", l as u128);
            }
            e.set_input("s_axis_host_tvalid", offered[n] as u128);
            if arriving[n].is_empty() {
                if let Some(k) = flying[n].iter().position(|(t, _)| *t <= cycle) {
                    arriving[n] = flying[n].remove(k).1.into();
                }
            }
            let beat = arriving[n].front().copied();
            e.set_input("s_axis_net_tvalid", beat.is_some() as u128);
            e.set_input("s_axis_net_tdata", beat.unwrap_or(0));
            e.set_input("s_axis_net_tkeep", 0xFFFF);
            e.set_input("s_axis_net_tlast", (arriving[n].len() == 1) as u128);
            ready[n] = (rng.chance(60), rng.chance(60));
            e.set_input("m_axis_host_tready", ready[n].0 as u128);
            e.set_input("m_axis_net_tready", ready[n].1 as u128);
            e.settle();
        }
        for n in 0..p {
            let e = &mut units[n];
            if offered[n] && e.get_output("s_axis_host_tready") == 1 {
                next[n] += 1;
                offered[n] = false;
            }
            if !arriving[n].is_empty() && e.get_output("s_axis_net_tready") == 1 {
                arriving[n].pop_front();
            }
            if ready[n].1 && e.get_output("m_axis_net_tvalid") == 1 {
                outgoing[n].push(e.get_output("m_axis_net_tdata"));
                if e.get_output("m_axis_net_tlast") == 1 {
                    let mut beats = std::mem::take(&mut outgoing[n]);
                    let h = Header::unpack(beats[0]);
                    if h.tag & !1 != EXCHANGE_TAG {
                        return Err(Error::Mismatch(format!("seed {seed}: node {n} sent tag {:#06x}", h.tag)));
                    }
                    let c = config.coords(n);
                    beats[0] = with_ecc(Header { src: c, src_port: 2, ..h }.pack());
                    let to = config.node(h.dst);
                    flying[to].push((cycle + 1 + rng.below(60), beats));
                }
            }
            if ready[n].0 && e.get_output("m_axis_host_tvalid") == 1 {
                let (wd, wk, wl) = *wants[n].get(got[n]).ok_or_else(|| Error::Mismatch(format!("seed {seed}: node {n} delivers a beat more than {}", wants[n].len())))?;
                let (d, k, l) = (e.get_output("m_axis_host_tdata"), e.get_output("m_axis_host_tkeep"), e.get_output("m_axis_host_tlast") == 1);
                let mask = (0..16).filter(|j| wk >> j & 1 == 1).fold(0u128, |m, j| m | 0xFFu128 << (8 * j));
                if d & mask != wd & mask || l != wl || k != wk {
                    return Err(Error::Mismatch(format!("seed {seed}, cycle {cycle}: node {n} result beat {} is {d:#034x} keep {k:#06x} last {l}, want {wd:#034x} keep {wk:#06x} last {wl}", got[n])));
                }
                got[n] += 1;
            }
            e.clock(false);
        }
    }
    for (n, e) in units.iter_mut().enumerate() {
        e.settle();
        let counts = ["mismatches", "id_mismatches", "timeouts"].map(|c| e.get_output(c));
        if counts != [0, 0, 0] || e.get_output("idle") != 1 || e.get_output("results") != ops as u128 {
            return Err(Error::Mismatch(format!("seed {seed}: node {n} ends with mismatches, id mismatches, timeouts {counts:?}, idle {}, {} results", e.get_output("idle"), e.get_output("results"))));
        }
    }
    Ok(format!("{p} butterflies ({dims:?}), {} {}: {ops} operations of 1 to {} elements bit-exact at every node, {cycle} cycles", ty.name(), op.name(), BUTTERFLY_BYTES / ty.bytes()))
}
