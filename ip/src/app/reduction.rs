//! A global `inc` reduction in hardware, in a fixed order. The loop's pipeline delivers one
//! element's value per cycle; an adder of latency A cannot take a running sum at that rate, so
//! the values go round a ring through the adder: the value of the k-th element (k from 0) is
//! added into partial sum k mod A (the first A into +0). A cycles after the last value every
//! partial is final; a second adder then folds them into the global's old value in the order
//! old + p0 + p1 + … + p(A−1), one every A + 1 cycles. [`super::App::set_interleave`] computes
//! the same order in software.

use std::rc::Rc;

use weft_hdl::float::{operator_netlist, FloatFormat, FloatOperator};
use weft_hdl::netlist::{Design, Sig};

use crate::Error;

fn bits_for(n: usize) -> usize {
    (usize::BITS - n.max(1).leading_zeros()) as usize
}

/// Reduces `value` (valid when `valid`; `n` values in consecutive cycles after `start`) into
/// `old` with adders of `lanes` stages. Returns the sum (once the unit is done) and whether the
/// unit is still working.
pub(super) fn reduce<'d>(d: &'d Design, name: &str, format: FloatFormat, lanes: usize, start: Sig<'d>, valid: Sig<'d>, value: Sig<'d>, old: Sig<'d>, n: usize) -> Result<(Sig<'d>, Sig<'d>), Error> {
    let w = format.width();
    let a = lanes.max(1);
    let adder = Rc::new(operator_netlist(FloatOperator::Add, format, a)?);
    let zero = d.lit(0, w);
    let minus_zero = d.lit(1 << (w - 1), w);
    let lit = |v: usize, of: Sig<'d>| of.lit(v as u128, of.width);

    // c: cycles since the first value (0 at it), and c mod A.
    let cb = bits_for(n + 2 * a + 2);
    let running = d.reg(&format!("{name}_running"), 1, 0);
    let cycle = d.reg(&format!("{name}_cycle"), cb, 0);
    let residue = d.reg(&format!("{name}_residue"), bits_for(a), 0);
    let counting = running.q | valid;
    let c = running.q.mux(cycle.q, d.lit(0, cb));
    let r = running.q.mux(residue.q, d.lit(0, residue.q.width));
    let saturated = c.ge(lit(n + 2 * a, c));
    running.next_when(valid, d.lit(1, 1)).next_when(start, d.lit(0, 1));
    cycle.next_when(counting & !saturated, c + 1u32).next_when(start, d.lit(0, cb));
    residue.next_when(counting, r.eq(lit(a - 1, r)).mux(lit(0, r), r + 1u32)).next_when(start, lit(0, r));

    // The ring: value k goes into partial k mod A; adding −0 keeps a partial exactly; the
    // first lap adds into +0.
    let ring = d.instance(&adder, &format!("{name}_ring_add"), &format!("{name}_ring"));
    let tap = ring.output("m_axis_tdata");
    let x = valid.mux(value, minus_zero);
    let y = c.lt(lit(a, c)).mux(zero, tap);
    ring.input("s_axis_tdata").define(y.cat(x));
    ring.input("s_axis_tvalid").define(d.lit(1, 1));
    ring.input("s_axis_tlast").define(d.lit(0, 1));
    ring.input("m_axis_tready").define(d.lit(1, 1));

    // The fold: step j, fed when the tap shows partial j, adds it into the sum; its result is
    // out A cycles later and the next step is fed one cycle after that (c mod A is then j + 1).
    let fold = d.instance(&adder, &format!("{name}_fold_add"), &format!("{name}_fold"));
    let step = d.reg(&format!("{name}_step"), bits_for(a), 0);
    let timer = d.reg(&format!("{name}_timer"), bits_for(a + 1), 0);
    let folding = d.reg(&format!("{name}_folding"), 1, 0);
    let done = d.reg(&format!("{name}_done"), 1, 0);
    let sum = d.reg(&format!("{name}_sum"), w, 0);
    // Every partial is final from c = n + A − 1 on.
    let begin = running.q & !folding.q & !done.q & c.ge(lit(n + a, c)) & r.is_zero();
    let next = folding.q & timer.q.is_zero();
    let last_step = step.q.eq(lit(a - 1, step.q));
    let feed = begin | next & !last_step;
    fold.input("s_axis_tdata").define(tap.cat(begin.mux(old, sum.q)));
    fold.input("s_axis_tvalid").define(feed);
    fold.input("s_axis_tlast").define(d.lit(0, 1));
    fold.input("m_axis_tready").define(d.lit(1, 1));
    sum.next_when(folding.q & timer.q.eq(lit(1, timer.q)), fold.output("m_axis_tdata"));
    timer.next_when(folding.q & timer.q.any(), timer.q - 1u32).next_when(feed, lit(a, timer.q));
    step.next_when(next & !last_step, step.q + 1u32).next_when(begin | start, lit(0, step.q));
    folding.next_when(next & last_step, d.lit(0, 1)).next_when(begin, d.lit(1, 1)).next_when(start, d.lit(0, 1));
    done.next_when(next & last_step, d.lit(1, 1)).next_when(start, d.lit(0, 1));
    Ok((sum.q, counting & !done.q))
}

/// The larger (`max`) or smaller of the running value `t` and a new value `b` as
/// [`super::program::extreme`] orders them, in one cycle: NaN loses to a number, −0 is below +0.
pub(super) fn extreme<'d>(d: &'d Design, format: FloatFormat, t: Sig<'d>, b: Sig<'d>, max: bool) -> Sig<'d> {
    let w = format.width();
    let mantissa = format.man;
    let nan = |x: Sig<'d>| x.bits(mantissa, w - 1 - mantissa).all() & x.bits(0, mantissa).any();
    // A key that orders non-NaN values as unsigned integers: negatives inverted, positives
    // above them.
    let key = |x: Sig<'d>| x.bits(w - 1, 1).mux(!x, x | d.lit(1 << (w - 1), w));
    let takes = if max { key(b).gt(key(t)) } else { key(b).lt(key(t)) };
    nan(t).mux(b, (nan(b) | !takes).mux(t, b))
}

/// Levels of a pairwise tree over `lanes` values.
pub(super) fn tree_depth(lanes: usize) -> usize {
    lanes.next_power_of_two().trailing_zeros() as usize
}

/// A row's values summed pairwise — ((v0 + v1) + (v2 + v3)) + … —, a lane without a value
/// giving −0 (which leaves any sum as it is); returns the sum and its valid
/// [`tree_depth`]`·A` cycles later (one lane: the value itself).
pub(super) fn row_sum<'d>(d: &'d Design, name: &str, format: FloatFormat, a: usize, lanes: &[(Sig<'d>, Sig<'d>)]) -> Result<(Sig<'d>, Sig<'d>), Error> {
    let any = lanes.iter().fold(d.lit(0, 1), |x, (v, _)| x | *v);
    if lanes.len() == 1 {
        return Ok(lanes[0]);
    }
    let w = format.width();
    let adder = Rc::new(operator_netlist(FloatOperator::Add, format, a.max(1))?);
    let mut level: Vec<Sig<'d>> = lanes.iter().map(|(v, x)| v.mux(*x, d.lit(1 << (w - 1), w))).collect();
    level.resize(lanes.len().next_power_of_two(), d.lit(1 << (w - 1), w));
    let mut valid = any;
    let mut depth = 0;
    while level.len() > 1 {
        let mut next = vec![];
        for (j, pair) in level.chunks(2).enumerate() {
            let add = d.instance(&adder, &format!("{name}_tree_add"), &format!("{name}_tree{depth}_{j}"));
            add.input("s_axis_tdata").define(pair[1].cat(pair[0]));
            add.input("s_axis_tvalid").define(valid);
            add.input("s_axis_tlast").define(d.lit(0, 1));
            add.input("m_axis_tready").define(d.lit(1, 1));
            next.push(add.output("m_axis_tdata"));
            if j == 0 {
                valid = add.output("m_axis_tvalid");
            }
        }
        // Every adder of a level shares the first one's valid.
        level = next;
        depth += 1;
    }
    Ok((valid, level[0]))
}
