//! `reduce_f32x4`: the sum of all lanes of all beats of a vector (`tlast` ends it), one input
//! beat per cycle for any vector length despite the adder's latency.
//!
//! How: the four lanes of a beat go through an adder tree. Their sum enters an accumulating
//! adder of latency `L` together with the partial sum leaving that adder in the same cycle, when
//! that partial belongs to the same (still open) vector; in a cycle without an input beat, an open
//! vector's partial re-enters alone, so none is dropped. A vector thus keeps at most `L` partials
//! circulating. After its last beat, each of them leaves the adder exactly once within `L`
//! cycles, the last beat's own partial last: a window of the last `L` leaving partials holds all
//! of them, and an adder tree sums the window (entries of other vectors masked to zero) into the
//! output. Vectors are told apart by an 8-bit id (a count of `tlast`s), far more than the at most
//! `L + 1` vectors in flight. Every register moves under one clock enable, as in
//! [`weft_hdl::netlist::block::feed_forward`], so back-pressure freezes the whole circuit.

use weft_hdl::float::{FloatFormat, FloatOperator};
use weft_hdl::netlist::{Netlist, Wire};

const LANES: usize = 4;
const ID_BITS: usize = 8;

/// Builds the netlist with adders of `add_stages` stages (at least 1: the accumulation loop
/// needs a register).
pub fn netlist(add_stages: usize) -> Result<Netlist, String> {
    if add_stages == 0 {
        return Err("reduce_f32x4: adder stages 0: allowed range 1..=5 (the accumulation loop needs a register)".into());
    }
    let f = FloatFormat::BINARY32;
    let add = |net: &mut Netlist, a: Wire, b: Wire| FloatOperator::Add.build(net, f, add_stages, &[a, b]);
    let mut net = Netlist::new();
    let advance = net.forward(1);
    net.name(advance, "advance");
    net.enable = Some(advance);
    let valid_in = net.input("s_axis_tvalid", 1);
    let last_in = net.input("s_axis_tlast", 1);
    let lanes: Vec<Wire> = (0..LANES).map(|i| net.input(&format!("s_axis_tdata@{}", 32 * i), 32)).collect();

    // Lane sum.
    let s01 = add(&mut net, lanes[0], lanes[1])?;
    let s23 = add(&mut net, lanes[2], lanes[3])?;
    let beat_sum = add(&mut net, s01, s23)?;
    let t = net.stage_of(beat_sum);
    let (mut valid, mut last) = (valid_in, last_in);
    for stage in 0..t {
        net.set_stage(stage);
        valid = net.reg(valid, Some(advance), Some(0));
        last = net.reg(last, Some(advance), None);
    }

    // Accumulation at stage t; the partial leaving the adder is fed back from stage t + L.
    net.set_stage(t);
    let leaving = net.forward(32);
    let leaving_valid = net.forward(1);
    let leaving_id = net.forward(ID_BITS);
    let leaving_last = net.forward(1);
    let open_id = net.forward(ID_BITS);
    let closes = net.and(valid, last);
    let step = net.and(closes, advance);
    let next_id = net.add_const(open_id, 1);
    let next_id = net.mux(step, next_id, open_id);
    let counter = net.history(next_id, None, Some(0));
    net.resolve(open_id, counter);
    net.name(open_id, "open_vector");
    let same = net.eq(leaving_id, open_id);
    let consumed = net.and(leaving_valid, same);
    let zero = net.constant(0, 32);
    let a = net.mux(valid, beat_sum, zero);
    let b = net.mux(consumed, leaving, zero);
    let slot_valid = net.or(valid, consumed);
    let slot_last = net.and(valid, last);
    let partial = add(&mut net, a, b)?;
    let f_stage = net.stage_of(partial);
    let (mut pv, mut pid, mut plast) = (slot_valid, open_id, slot_last);
    for stage in t..f_stage {
        net.set_stage(stage);
        pv = net.reg(pv, Some(advance), Some(0));
        pid = net.reg(pid, Some(advance), None);
        plast = net.reg(plast, Some(advance), None);
    }
    net.resolve(leaving, partial);
    net.resolve(leaving_valid, pv);
    net.resolve(leaving_id, pid);
    net.resolve(leaving_last, plast);

    // Window of the partials that left in the previous L - 1 cycles, at stage t + L.
    net.set_stage(f_stage);
    // The counter as it is now (not delayed to this stage): is the leaving partial's vector open?
    let counter_now = net.forward(ID_BITS);
    net.resolve(counter_now, counter);
    let still_open = net.eq(pid, counter_now);
    let not_open = net.not(still_open);
    let is_final = net.and(pv, not_open);
    let mut terms = vec![partial];
    let (mut wv, mut wid, mut wval) = (is_final, pid, partial);
    for _ in 1..add_stages {
        wv = net.history(wv, Some(advance), Some(0));
        wid = net.history(wid, Some(advance), None);
        wval = net.history(wval, Some(advance), None);
        let same = net.eq(wid, pid);
        let take = net.and(wv, same);
        terms.push(net.mux(take, wval, zero));
    }
    let done = net.and(pv, plast);
    // Adder tree over the window.
    while terms.len() > 1 {
        let mut next = vec![];
        for pair in terms.chunks(2) {
            next.push(if pair.len() == 2 { add(&mut net, pair[0], pair[1])? } else { pair[0] });
        }
        terms = next;
    }
    let sum = terms[0];
    let out_stage = net.stage_of(sum);
    let mut out_valid = done;
    for stage in f_stage..out_stage {
        net.set_stage(stage);
        out_valid = net.reg(out_valid, Some(advance), Some(0));
    }
    net.set_stage(out_stage);
    let ready = net.input("m_axis_tready", 1);
    let free = net.not(out_valid);
    let go = net.or(free, ready);
    net.resolve(advance, go);
    net.name(out_valid, "out_valid");
    net.output("m_axis_tdata@0", sum);
    net.output("m_axis_tvalid", out_valid);
    net.output("s_axis_tready", advance);
    Ok(net)
}
