//! AXI4-Stream width converters (`axis_adapter_w<in>_to_w<out>`), as netlists: one beat splits
//! into narrower beats, or narrower beats gather into one, with `tkeep` and `tlast` honoured.
//!
//! Down (`n` = in / out segments per beat): a beat leaves as its segments 0 ..= the last one with
//! any `tkeep` bit set (segment 0 at least), `tlast` on the final one; `tkeep` of each segment
//! is carried. Up: segments fill from 0; a group leaves when it holds `n` segments or ends with
//! `tlast` (the missing segments then have `tkeep` = 0). Both sustain the narrow side's full
//! rate; `s_axis_tready` of the up converter comes from registers only.

use crate::Error;
use weft_hdl::netlist::{Design, Netlist, Reg, Sig, Wire};
use weft_hdl::sig;

fn check(w_in: usize, w_out: usize) -> Result<usize, Error> {
    let (wide, narrow) = (w_in.max(w_out), w_in.min(w_out));
    let ok_width = |w: usize| w.is_multiple_of(8) && (8..=128).contains(&w);
    if !ok_width(narrow) || wide % narrow != 0 || wide / narrow < 2 || wide / narrow > 16 {
        return Err(Error::Config(format!("axis adapter {w_in} -> {w_out} bits: the narrow side must be 8..=128 bits in whole bytes and the wide side 2..=16 times it")));
    }
    Ok(wide / narrow)
}

/// Bits of a segment index for `n` segments (at least one).
fn segment_bits(n: usize) -> usize {
    ((usize::BITS - (n - 1).leading_zeros()) as usize).max(1)
}

/// A wide input port as `n` segments of `w` bits, least significant first.
fn wide_input<'d>(d: &'d Design, port: &str, n: usize, w: usize) -> Vec<Sig<'d>> {
    let all = d.input(port, n * w);
    (0..n).map(|k| all.bits(w * k, w)).collect()
}

/// `n` registers `<name><i>` of `width` bits.
fn regs<'d>(d: &'d Design, name: &str, n: usize, width: usize) -> Vec<Reg<'d>> {
    (0..n).map(|i| d.reg(&format!("{name}{i}"), width, 0)).collect()
}

/// Splits `w_in`-bit beats into `w_out`-bit beats.
pub fn downsize(w_in: usize, w_out: usize) -> Result<Netlist, Error> {
    let n = check(w_in, w_out)?;
    if w_in < w_out {
        return Err(Error::Config(format!("axis downsize {w_in} -> {w_out}: output wider than input")));
    }
    let (w, k) = (w_out, w_out / 8);
    let d = Design::new();
    let data = wide_input(&d, "s_axis_tdata", n, w);
    let keep = wide_input(&d, "s_axis_tkeep", n, k);
    let last = d.input("s_axis_tlast", 1);
    let valid = d.input("s_axis_tvalid", 1);
    let ready = d.input("m_axis_tready", 1);
    let sb = segment_bits(n);
    let full = d.reg("full", 1, 0);
    let seg = d.reg("segment", sb, 0);
    let held_last = d.reg("held_last", 1, 0);
    let held_data = regs(&d, "held_data", n, w);
    let held_keep = regs(&d, "held_keep", n, k);

    d.section("out: the held beat's segments in turn, up to the last one with a keep bit set");
    // The final segment: the last one with a keep bit set (0 when none is).
    sig!(final_seg = (1..n).fold(d.lit(0, sb), |f, i| held_keep[i].q.any().mux(i, f)));
    let at = |i: usize| seg.q.eq(i);
    let out_data = (1..n).fold(held_data[0].q, |o, i| at(i).mux(held_data[i].q, o));
    let out_keep = (1..n).fold(held_keep[0].q, |o, i| at(i).mux(held_keep[i].q, o));
    sig!(at_final = seg.q.eq(final_seg));
    d.output("m_axis_tdata", out_data);
    d.output("m_axis_tkeep", out_keep);
    d.output("m_axis_tlast", held_last.q & at_final);
    d.output("m_axis_tvalid", full.q);

    d.section("in: the next beat loads as the final segment leaves");
    sig!(take = full.q & ready, done = take & at_final);
    sig!(s_ready = !full.q | done);
    d.output("s_axis_tready", s_ready);
    sig!(load = valid & s_ready);
    full.clear_when(done).set_when(load);
    seg.next_when(take, seg.q + 1u32).clear_when(load);
    held_last.next_when(load, last);
    for i in 0..n {
        held_data[i].next_when(load, data[i]);
        held_keep[i].next_when(load, keep[i]);
    }
    Ok(d.finish())
}

/// Gathers `w_in`-bit beats into `w_out`-bit beats.
pub fn upsize(w_in: usize, w_out: usize) -> Result<Netlist, Error> {
    let n = check(w_in, w_out)?;
    if w_out < w_in {
        return Err(Error::Config(format!("axis upsize {w_in} -> {w_out}: output narrower than input")));
    }
    let (w, k) = (w_in, w_in / 8);
    let d = Design::new();
    let data = d.input("s_axis_tdata", w);
    let keep = d.input("s_axis_tkeep", k);
    let last = d.input("s_axis_tlast", 1);
    let valid = d.input("s_axis_tvalid", 1);
    let ready = d.input("m_axis_tready", 1);
    let sb = segment_bits(n);
    let seg = d.reg("segment", sb, 0);
    // A completed group waiting for the output register (only when the output was busy).
    let pending = d.reg("pending", 1, 0);
    let group_data = regs(&d, "group_data", n, w);
    let group_keep = regs(&d, "group_keep", n, k);
    let group_last = d.reg("group_last", 1, 0);
    let out_valid = d.reg("out_valid", 1, 0);
    let out_data = regs(&d, "out_data", n, w);
    let out_keep = regs(&d, "out_keep", n, k);
    let out_last = d.reg("out_last", 1, 0);

    d.section("in: beats fill the group's segments from 0");
    sig!(s_ready = !pending.q);
    d.output("s_axis_tready", s_ready);
    sig!(take_in = valid & s_ready);
    sig!(closes = take_in & (seg.q.eq(n - 1) | last));
    let here = |i: usize| seg.q.eq(i);
    let later = |i: usize| seg.q.lt(i);
    for i in 0..n {
        let write = (take_in & here(i)).named(&format!("write{i}"));
        group_data[i].next_when(write, data);
        // Keep bits: this segment's on write; later segments cleared when a group closes early.
        group_keep[i].next_when(write, keep).clear_when(closes & later(i));
    }
    group_last.next_when(take_in, last);
    seg.next_when(take_in, seg.q + 1u32).clear_when(closes);

    d.section("out: the output register loads a pending group first, else a group closing now");
    sig!(out_free = !out_valid.q | ready);
    sig!(from_pending = pending.q & out_free);
    sig!(load_out = from_pending | (closes & out_free & !pending.q));
    // The group as it stands after this beat: earlier segments from the registers, this one
    // from the input, later ones empty.
    for i in 0..n {
        let now_data = here(i).mux(data, group_data[i].q);
        let now_keep = later(i).mux(0, here(i).mux(keep, group_keep[i].q));
        out_data[i].next_when(load_out, pending.q.mux(group_data[i].q, now_data));
        out_keep[i].next_when(load_out, pending.q.mux(group_keep[i].q, now_keep));
    }
    out_last.next_when(load_out, pending.q.mux(group_last.q, last));
    out_valid.clear_when(ready).set_when(load_out);
    // A group closing while the output is busy waits in the group registers.
    sig!(park = closes & !out_free);
    pending.clear_when(from_pending).set_when(park);
    d.output("m_axis_tdata", d.cat(&out_data.iter().rev().map(|r| r.q).collect::<Vec<_>>()));
    d.output("m_axis_tkeep", d.cat(&out_keep.iter().rev().map(|r| r.q).collect::<Vec<_>>()));
    d.output("m_axis_tlast", out_last.q);
    d.output("m_axis_tvalid", out_valid.q);
    Ok(d.finish())
}

/// Built-in-simulator check of a converter netlist: random packets (1 ..= `max_bytes` bytes,
/// `tkeep` packed from byte 0) with random `tvalid`/`tready`; every packet must leave with the
/// same bytes and boundaries, every beat but a packet's last full, stalled beats unchanged.
pub fn check_packets(net: Netlist, w_in: usize, w_out: usize, packets: usize, max_bytes: usize, valid_percent: u64, ready_percent: u64, seed: u64) -> Result<u64, Error> {
    use num_bigint::BigUint;
    use weft_hdl::netlist::eval::Evaluator;
    use weft_hdl::testbench::Rng;
    let mut e = Evaluator::new(net);
    let (bi, bo) = (w_in / 8, w_out / 8);
    let wire = |e: &Evaluator, port: &str| -> Wire {
        let net = e.netlist();
        e.input(port).or_else(|| net.outputs.iter().find(|o| o.name == port).map(|o| o.wire)).unwrap_or_else(|| panic!("no port {port}"))
    };
    let ports: Vec<Wire> = ["s_axis_tdata", "s_axis_tkeep", "s_axis_tlast", "s_axis_tvalid", "m_axis_tready", "m_axis_tdata", "m_axis_tkeep", "m_axis_tlast", "m_axis_tvalid", "s_axis_tready"]
        .iter()
        .map(|p| wire(&e, p))
        .collect();
    // Values of up to 1024 bits as little-endian u128 words.
    let set = |e: &mut Evaluator, port: Wire, value: &[u128]| {
        let v = value.iter().rev().fold(BigUint::default(), |acc, w| (acc << 128) | BigUint::from(*w));
        e.set_big(port, &v);
    };
    let get = |e: &Evaluator, port: Wire| (0..8).map(|k| e.get_bits(port, 128 * k, 128)).collect::<Vec<u128>>();
    let bit = |v: &[u128], i: usize| v[i / 128] >> (i % 128) & 1;
    let mut rng = Rng::new(seed);
    let sent: Vec<Vec<u8>> = (0..packets).map(|_| (0..1 + rng.below(max_bytes as u64)).map(|_| rng.next_u64() as u8).collect()).collect();
    let (mut pkt, mut off, mut offered) = (0usize, 0usize, false);
    let mut got: Vec<Vec<u8>> = vec![vec![]];
    let mut stalled: Option<(Vec<u128>, Vec<u128>, u128)> = None;
    for _ in 0..3 {
        e.settle();
        e.clock(true);
    }
    let mut cycle = 0u64;
    while got.len() <= packets {
        cycle += 1;
        if cycle > 100 + 200 * packets as u64 * (max_bytes as u64 / bo as u64 + 2) {
            return Err(Error::Mismatch(format!("seed {seed}: timed out with {} of {packets} packets out", got.len() - 1)));
        }
        offered = offered || (pkt < packets && rng.chance(valid_percent));
        let ready = rng.chance(ready_percent);
        let mut data = vec![0u128; 8];
        let mut keep = vec![0u128; 8];
        let mut last = false;
        if offered {
            let p = &sent[pkt];
            let end = (off + bi).min(p.len());
            for (i, b) in p[off..end].iter().enumerate() {
                data[8 * i / 128] |= (*b as u128) << (8 * i % 128);
                keep[i / 128] |= 1 << (i % 128);
            }
            last = end == p.len();
        }
        set(&mut e, ports[0], &data);
        set(&mut e, ports[1], &keep);
        set(&mut e, ports[2], &[last as u128]);
        set(&mut e, ports[3], &[offered as u128]);
        set(&mut e, ports[4], &[ready as u128]);
        e.settle();
        if offered && get(&e, ports[9])[0] & 1 == 1 {
            offered = false;
            off += bi;
            if last {
                pkt += 1;
                off = 0;
            }
        }
        let valid = get(&e, ports[8])[0] & 1 == 1;
        let beat = (get(&e, ports[5]), get(&e, ports[6]), get(&e, ports[7])[0] & 1);
        if let Some(previous) = stalled.take() {
            if !valid || previous != beat {
                return Err(Error::Mismatch(format!("seed {seed}, cycle {cycle}: output beat changed or vanished while stalled")));
            }
        }
        if valid && ready {
            let (d, k, l) = beat;
            let ones = (0..bo).filter(|b| bit(&k, *b) == 1).count();
            if (0..ones).any(|b| bit(&k, b) == 0) || (l == 0 && ones != bo) {
                return Err(Error::Mismatch(format!("seed {seed}, cycle {cycle}: tkeep not packed or a beat before the last is not full")));
            }
            let current = got.last_mut().unwrap();
            for b in 0..ones {
                current.push((d[8 * b / 128] >> (8 * b % 128)) as u8);
            }
            if l == 1 {
                let i = got.len() - 1;
                if got[i] != sent[i] {
                    return Err(Error::Mismatch(format!("seed {seed}, cycle {cycle}: packet {i} of {} bytes arrives as {} bytes (or differs)", sent[i].len(), got[i].len())));
                }
                got.push(vec![]);
            }
        } else if valid {
            stalled = Some(beat);
        }
        e.clock(false);
    }
    Ok(cycle)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn converters_keep_packets_under_random_back_pressure() {
        for (w_in, w_out) in [(128, 64), (64, 128), (128, 32), (32, 128), (64, 8), (8, 64)] {
            for (valid, ready) in [(50, 50), (100, 30), (30, 100), (100, 100)] {
                let net = if w_in > w_out { downsize(w_in, w_out) } else { upsize(w_in, w_out) }.unwrap();
                check_packets(net, w_in, w_out, 300, 100, valid, ready, w_in as u64 * 7 + valid).unwrap_or_else(|e| panic!("{w_in} -> {w_out}: {e}"));
            }
        }
    }

    #[test]
    fn full_rate_on_the_narrow_side() {
        // 64 -> 128: one input beat per cycle; 128 -> 64: one output beat per cycle.
        let cycles = check_packets(upsize(64, 128).unwrap(), 64, 128, 200, 256, 100, 100, 1).unwrap();
        let beats: u64 = 200 * 16; // about: 200 packets of 1..=256 bytes, 8 bytes per beat
        assert!(cycles < beats + 200, "{cycles} cycles");
        let cycles = check_packets(downsize(128, 64).unwrap(), 128, 64, 200, 256, 100, 100, 1).unwrap();
        assert!(cycles < beats + 200, "{cycles} cycles");
    }

    #[test]
    fn impossible_widths_are_rejected() {
        assert!(downsize(128, 48).unwrap_err().to_string().contains("128 -> 48"));
        assert!(upsize(64, 64).is_err());
        assert!(downsize(64, 128).is_err());
    }
}
