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
use crate::netlist::{Design, Netlist, Sig, Wire};
use crate::sig;
use crate::Error;

const ID_BITS: usize = 8;

/// Builds the stream netlist: `lanes` are the `(lo, width)` slices of `s_axis_tdata`; `beat`
/// computes the per-beat values from them; output `j` is the per-vector sum of value `j`, at
/// `m_axis_tdata[j·w +: w]`, one output beat (with `tlast`) per vector. Adders have `add_stages`
/// stages (at least 1: the accumulation loop needs a register).
pub fn netlist(format: FloatFormat, add_stages: usize, lanes: &[(usize, usize)], beat: impl FnOnce(&mut Netlist, &[Wire]) -> Result<Vec<Wire>, Error>) -> Result<Netlist, Error> {
    let max = FloatOperator::Add.max_stages(format);
    if !(1..=max).contains(&add_stages) {
        return Err(Error::Parameter(format!("vector sum: adder stages {add_stages}: allowed range 1..={max} (the accumulation loop needs a register)")));
    }
    let w = format.width();
    let d = Design::new();
    sig!(advance = d.later(1));
    d.net().enable = Some(advance.wire);
    let p = Pipe { d: &d, advance, format, add_stages };
    let valid_in = d.input("s_axis_tvalid", 1);
    let last_in = d.input("s_axis_tlast", 1);
    let data_in = d.input("s_axis_tdata", lanes.iter().map(|(lo, width)| lo + width).max().unwrap_or(1));
    let inputs: Vec<Wire> = lanes.iter().map(|(lo, width)| data_in.bits(*lo, *width).wire).collect();
    let values = beat(&mut d.net(), &inputs)?;
    let values: Vec<Sig> = values.iter().map(|v| d.sig(*v)).collect();
    if values.is_empty() {
        return Err(Error::Design("vector sum: no per-beat values".into()));
    }

    d.section("beat control travels to the stage t where all per-beat values are ready");
    let t = values.iter().map(|v| p.stage_of(*v)).max().unwrap_or(0);
    let valid = p.carry(valid_in, 0, t, Some(0));
    let last = p.carry(last_in, 0, t, None);

    d.section("accumulation at stage t; the partial leaving the adder is fed back from stage t + L");
    p.at(t);
    let leaving_valid = d.later(1);
    let leaving_id = d.later(ID_BITS);
    sig!(closes = valid & last);
    let open_vector = d.reg("open_vector", ID_BITS, 0);
    open_vector.next_when(closes & advance, open_vector.q + 1u32);
    let open_id = open_vector.q;
    sig!(consumed = leaving_valid & leaving_id.eq(open_id));
    sig!(slot_valid = valid | consumed);
    let mut partials = vec![];
    for &value in &values {
        p.at(t);
        let leaving = d.later(w);
        let partial = p.add(valid.mux(value, 0), consumed.mux(leaving, 0))?;
        leaving.define(partial);
        partials.push(partial);
    }
    // What leaves the adder at stage t + L: a valid partial, its vector, and whether its slot
    // closed the vector.
    let f_stage = p.stage_of(partials[0]);
    let leaving_pv = p.carry(slot_valid, t, f_stage, Some(0));
    let leaving_pid = p.carry(open_id, t, f_stage, None);
    let leaving_last = p.carry(closes, t, f_stage, None);
    leaving_valid.define(leaving_pv);
    leaving_id.define(leaving_pid);

    d.section("window of the partials that left in the previous L - 1 cycles, at stage t + L");
    p.at(f_stage);
    // The counter as it is now (not delayed to this stage): is the leaving partial's vector open?
    let id_now = d.later(ID_BITS);
    id_now.define(open_id);
    sig!(is_final = leaving_pv & leaving_pid.ne(id_now));
    // Entry k of the window left the adder k cycles ago; it counts when its vector was already
    // closed then (it did not re-enter) and is the vector leaving now.
    let (mut window_valid, mut window_id) = (is_final, leaving_pid);
    let mut takes = vec![];
    for _ in 1..add_stages {
        window_valid = p.hold(window_valid, Some(0));
        window_id = p.hold(window_id, None);
        takes.push(window_valid & window_id.eq(leaving_pid));
    }
    sig!(done = leaving_pv & leaving_last);
    let mut sums = vec![];
    for partial in partials {
        p.at(f_stage);
        let mut terms = vec![partial];
        let mut held = partial;
        for &take in &takes {
            held = p.hold(held, None);
            terms.push(take.mux(held, 0));
        }
        // An adder tree over the window.
        while terms.len() > 1 {
            let mut next = vec![];
            for pair in terms.chunks(2) {
                next.push(if pair.len() == 2 { p.add(pair[0], pair[1])? } else { pair[0] });
            }
            terms = next;
        }
        sums.push(terms[0]);
    }

    d.section("output stream");
    let out_stage = sums.iter().map(|s| p.stage_of(*s)).max().unwrap_or(f_stage);
    d.net().set_stage(out_stage);
    let data_out = d.net().join(&sums.iter().enumerate().map(|(j, sum)| (sum.wire, j * w)).collect::<Vec<_>>());
    d.output("m_axis_tdata", d.sig(data_out));
    d.net().balance_outputs();
    let out_valid = p.carry(done, f_stage, out_stage, Some(0));
    p.at(out_stage);
    let ready = d.input("m_axis_tready", 1);
    advance.define(!out_valid | ready);
    let out_valid = out_valid.named("out_valid");
    d.output("m_axis_tvalid", out_valid);
    d.output("m_axis_tlast", d.lit(1, 1));
    d.output("s_axis_tready", advance);
    // Register rules are applied when the design finishes, at the current stage: the vector
    // counter's rule belongs to stage t.
    p.at(t);
    Ok(d.finish())
}

/// Stage placement in the design, every register under the clock enable `advance`; and the
/// adder.
struct Pipe<'d> {
    d: &'d Design,
    advance: Sig<'d>,
    format: FloatFormat,
    add_stages: usize,
}

impl<'d> Pipe<'d> {
    /// Places what is built next at `stage`.
    fn at(&self, stage: usize) {
        self.d.net().set_stage(stage);
    }

    fn stage_of(&self, x: Sig<'d>) -> usize {
        self.d.net().stage_of(x.wire)
    }

    /// `x` through pipeline registers from stage `from` to stage `to` (`reset` for the ones that
    /// have one: valid bits).
    fn carry(&self, mut x: Sig<'d>, from: usize, to: usize, reset: Option<u128>) -> Sig<'d> {
        for stage in from..to {
            self.at(stage);
            let q = self.d.net().reg(x.wire, Some(self.advance.wire), reset);
            x = self.d.sig(q);
        }
        x
    }

    /// `a + b` in the floating-point format, starting when both are ready.
    fn add(&self, a: Sig<'d>, b: Sig<'d>) -> Result<Sig<'d>, Error> {
        let sum = FloatOperator::Add.build(&mut self.d.net(), self.format, self.add_stages, &[a.wire, b.wire])?;
        Ok(self.d.sig(sum))
    }

    /// `x` one beat earlier, at the same stage (a register of the window).
    fn hold(&self, x: Sig<'d>, reset: Option<u128>) -> Sig<'d> {
        let q = self.d.net().history(x.wire, Some(self.advance.wire), reset);
        self.d.sig(q)
    }
}
