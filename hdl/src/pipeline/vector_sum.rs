//! Per-vector outputs: each output is the sum, over all beats of a vector (`tlast` ends it), of
//! a per-beat value, with one input beat per cycle sustained for any vector length, including
//! back-to-back one-beat vectors, despite the adder's latency `L`.
//!
//! How: a beat's value enters an accumulating adder together with the partial sum leaving that
//! adder in the same cycle, when that partial belongs to the same (still open) vector; in a cycle
//! without an input beat, an open vector's partial re-enters alone, so none is dropped. A vector
//! thus keeps at most `L` partials circulating. After its last beat each of them leaves the adder
//! exactly once within `L` cycles, the last beat's own partial last: a window of the last `L`
//! leaving partials holds all of them, and an adder tree sums the window (entries of other
//! vectors masked to zero) into the output. Vectors are told apart by an 8-bit id (a count of
//! `tlast`s), far more than the at most `L + 1` vectors in flight. Every register moves under
//! one clock enable, as in [`crate::netlist::block::feed_forward`], so back-pressure freezes the
//! whole circuit.

use crate::float::{FloatFormat, FloatOperator};
use crate::netlist::{Netlist, Wire};

const ID_BITS: usize = 8;

/// Builds the stream netlist: `lanes` are the `(lo, width)` slices of `s_axis_tdata`; `beat`
/// computes the per-beat values from them; output `j` is the per-vector sum of value `j`, at
/// `m_axis_tdata[j·w +: w]`, one output beat (with `tlast`) per vector. Adders have `add_stages`
/// stages (at least 1: the accumulation loop needs a register).
pub fn netlist(
    format: FloatFormat,
    add_stages: usize,
    lanes: &[(usize, usize)],
    beat: impl FnOnce(&mut Netlist, &[Wire]) -> Result<Vec<Wire>, String>,
) -> Result<Netlist, String> {
    let max = FloatOperator::Add.max_stages(format);
    if !(1..=max).contains(&add_stages) {
        return Err(format!("vector sum: adder stages {add_stages}: allowed range 1..={max} (the accumulation loop needs a register)"));
    }
    let w = format.width();
    let add = |net: &mut Netlist, a: Wire, b: Wire| FloatOperator::Add.build(net, format, add_stages, &[a, b]);
    let mut net = Netlist::new();
    let advance = net.forward(1);
    net.name(advance, "advance");
    net.enable = Some(advance);
    let valid_in = net.input("s_axis_tvalid", 1);
    let last_in = net.input("s_axis_tlast", 1);
    let inputs: Vec<Wire> = lanes.iter().map(|(lo, width)| net.input(&format!("s_axis_tdata@{lo}"), *width)).collect();
    let values = beat(&mut net, &inputs)?;
    if values.is_empty() {
        return Err("vector sum: no per-beat values".into());
    }

    // Beat control travels to the stage t where all per-beat values are ready.
    let t = values.iter().map(|v| net.stage_of(*v)).max().unwrap_or(0);
    let (mut valid, mut last) = (valid_in, last_in);
    for stage in 0..t {
        net.set_stage(stage);
        valid = net.reg(valid, Some(advance), Some(0));
        last = net.reg(last, Some(advance), None);
    }

    // Accumulation at stage t; the partial leaving the adder is fed back from stage t + L.
    net.set_stage(t);
    let open_id = net.forward(ID_BITS);
    let leaving_valid = net.forward(1);
    let leaving_id = net.forward(ID_BITS);
    let closes = net.and(valid, last);
    let step = net.and(closes, advance);
    let next_id = net.add_const(open_id, 1);
    let next_id = net.mux(step, next_id, open_id);
    let counter = net.history(next_id, None, Some(0));
    net.resolve(open_id, counter);
    net.name(open_id, "open_vector");
    let same = net.eq(leaving_id, open_id);
    let consumed = net.and(leaving_valid, same);
    let zero = net.constant(0, w);
    let slot_valid = net.or(valid, consumed);
    let mut partials = vec![];
    for &value in &values {
        net.set_stage(t);
        let leaving = net.forward(w);
        let a = net.mux(valid, value, zero);
        let b = net.mux(consumed, leaving, zero);
        let partial = add(&mut net, a, b)?;
        net.resolve(leaving, partial);
        partials.push(partial);
    }
    let f_stage = net.stage_of(partials[0]);
    let (mut pv, mut pid, mut plast) = (slot_valid, open_id, closes);
    for stage in t..f_stage {
        net.set_stage(stage);
        pv = net.reg(pv, Some(advance), Some(0));
        pid = net.reg(pid, Some(advance), None);
        plast = net.reg(plast, Some(advance), None);
    }
    net.resolve(leaving_valid, pv);
    net.resolve(leaving_id, pid);

    // Window of the partials that left in the previous L − 1 cycles, at stage t + L.
    net.set_stage(f_stage);
    // The counter as it is now (not delayed to this stage): is the leaving partial's vector open?
    let counter_now = net.forward(ID_BITS);
    net.resolve(counter_now, counter);
    let still_open = net.eq(pid, counter_now);
    let not_open = net.not(still_open);
    let is_final = net.and(pv, not_open);
    let (mut wv, mut wid) = (is_final, pid);
    let mut takes = vec![];
    for _ in 1..add_stages {
        wv = net.history(wv, Some(advance), Some(0));
        wid = net.history(wid, Some(advance), None);
        let same = net.eq(wid, pid);
        takes.push(net.and(wv, same));
    }
    let done = net.and(pv, plast);
    let mut sums = vec![];
    for partial in partials {
        net.set_stage(f_stage);
        let mut terms = vec![partial];
        let mut held = partial;
        for &take in &takes {
            held = net.history(held, Some(advance), None);
            terms.push(net.mux(take, held, zero));
        }
        while terms.len() > 1 {
            let mut next = vec![];
            for pair in terms.chunks(2) {
                next.push(if pair.len() == 2 { add(&mut net, pair[0], pair[1])? } else { pair[0] });
            }
            terms = next;
        }
        sums.push(terms[0]);
    }
    let out_stage = sums.iter().map(|s| net.stage_of(*s)).max().unwrap_or(f_stage);
    for (j, sum) in sums.iter().enumerate() {
        net.output(&format!("m_axis_tdata@{}", j * w), *sum);
    }
    net.balance_outputs();
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
    let one = net.constant(1, 1);
    net.output("m_axis_tvalid", out_valid);
    net.output("m_axis_tlast", one);
    net.output("s_axis_tready", advance);
    Ok(net)
}
