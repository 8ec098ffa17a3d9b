//! An element-local dense operator: `y = A·x` for one element's vector `x` (C values) with a
//! constant matrix `A` (R × C) — MIDG2's Dr, Ds, Dt (Np × Np) and LIFT (Np × 4·Nfp) — folded
//! over P lanes of one multiplier and one adder each.
//!
//! Lane `l` owns rows `l, l + P, l + 2P, …` (⌈R/P⌉ of them). Column by column, each lane issues
//! one multiply-add per cycle for each of its rows, padded to T = max(⌈R/P⌉, L_add) slots so
//! that a row's running sum is out of the adder before its next column arrives: row r's sum
//! is `((0 + a_r0·x_0) + a_r1·x_1) + …` in column order, rounded after every operation — the
//! order of a plain loop, and so bit-exact with `solver::Maxwell`'s `acc = acc + a·x`.
//!
//! Timing: the element is taken in the cycle `s_axis_tvalid & s_axis_tready`; its result is on
//! `m_axis_*` [`Dense::latency`] = C·T + L_mul + L_add + 2 cycles later and held until taken;
//! the next element is taken in the cycle the result leaves (or at once when idle), so one
//! element every C·T + L_mul + L_add + 2 cycles at best ([`Dense::interval`]): the II of one
//! element is C·T, plus the pipeline's fill, which elements do not overlap.
//!
//! Ports: `s_axis_tdata[C·w−1:0]` (value `c` at bits `c·w`), `s_axis_tvalid`, `s_axis_tready`;
//! `m_axis_tdata[R·w−1:0]` (row `r` at bits `r·w`), `m_axis_tvalid`, `m_axis_tready`.

use std::rc::Rc;

use weft_hdl::float::{operator_netlist, FloatFormat, FloatOperator};
use weft_hdl::netlist::{Design, Netlist, Sig};

use super::constants::rom;
use super::store::bits_for;
use crate::Error;

/// The operator's shape and timing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Dense {
    /// Rows R.
    pub rows: usize,
    /// Columns C.
    pub cols: usize,
    /// Lanes P (1 ..= R).
    pub lanes: usize,
    /// Multiplier and adder stages.
    pub mul_stages: usize,
    /// Adder stages (at least 1).
    pub add_stages: usize,
}

impl Dense {
    /// Slots per column: T = max(⌈R/P⌉, L_add).
    pub fn slots(&self) -> usize {
        self.rows.div_ceil(self.lanes).max(self.add_stages)
    }

    /// Cycles from the cycle that takes an element to the first cycle its result is valid.
    pub fn latency(&self) -> usize {
        self.cols * self.slots() + self.mul_stages + self.add_stages + 2
    }

    /// Cycles between elements taken when the input never waits and the output is always ready
    /// (the next is taken in the cycle the result leaves).
    pub fn interval(&self) -> usize {
        self.latency()
    }
}

/// `x` delayed by `cycles` registers named `<name>_d<k>`.
fn delay<'d>(d: &'d Design, x: Sig<'d>, cycles: usize, name: &str) -> Sig<'d> {
    (0..cycles).fold(x, |y, k| {
        let r = d.reg(&format!("{name}_d{k}"), y.width, 0);
        r.next(y);
        r.q
    })
}

/// Builds the operator for `matrix` (row-major, `shape.rows × shape.cols` values of `format`,
/// as bit patterns). A shape outside its ranges or a matrix of the wrong size is an error
/// naming the field.
pub fn dense_netlist(shape: &Dense, format: FloatFormat, matrix: &[u128]) -> Result<Netlist, Error> {
    let (r, c, p) = (shape.rows, shape.cols, shape.lanes);
    if !(1..=256).contains(&r) || !(1..=256).contains(&c) {
        return Err(Error::Config(format!("dense operator: {r} × {c}: rows and columns allowed 1 ..= 256")));
    }
    if !(1..=r).contains(&p) {
        return Err(Error::Config(format!("dense operator: lanes {p}: allowed range is 1 ..= {r} (the rows)")));
    }
    if matrix.len() != r * c {
        return Err(Error::Config(format!("dense operator: {} matrix entries for {r} × {c}", matrix.len())));
    }
    if shape.add_stages == 0 {
        return Err(Error::Config("dense operator: add_stages 0: the running sums need at least 1".into()));
    }
    let w = format.width();
    let t = shape.slots();
    let per_lane = r.div_ceil(p);
    let mul = Rc::new(operator_netlist(FloatOperator::Mul, format, shape.mul_stages)?);
    let add = Rc::new(operator_netlist(FloatOperator::Add, format, shape.add_stages)?);
    let d = Design::new();

    d.section("the element: taken when idle or as the last result leaves, held while it is worked on");
    let in_valid = d.input("s_axis_tvalid", 1);
    let in_data = d.input("s_axis_tdata", c * w);
    let out_ready = d.input("m_axis_tready", 1);
    let running = d.reg("running", 1, 0);
    let done = d.reg("done", 1, 0);
    let free = !running.q & (!done.q | out_ready);
    let take = (in_valid & free).named("take");
    d.output("s_axis_tready", free);
    let x = d.reg("x", c * w, 0);
    x.next_when(take, in_data);

    d.section(&format!("issue: column by column, {t} slots a column ({per_lane} rows a lane)"));
    let cb = bits_for(c);
    let sb = bits_for(t);
    let col = d.reg("column", cb.max(1), 0);
    let slot = d.reg("slot", sb.max(1), 0);
    let issuing = d.reg("issuing", 1, 0);
    let slot_end = slot.q.eq((t - 1) as u128);
    let col_end = col.q.eq((c - 1) as u128);
    slot.next_when(issuing.q, slot_end.mux(d.lit(0, slot.q.width), slot.q + 1u32)).next_when(take, d.lit(0, slot.q.width));
    col.next_when(issuing.q & slot_end, col.q + 1u32).next_when(take, d.lit(0, col.q.width));
    issuing.next_when(issuing.q & slot_end & col_end, d.lit(0, 1)).next_when(take, d.lit(1, 1));
    // The value of column `col`.
    let mut xc = d.lit(0, w);
    for k in 0..c {
        xc = col.q.eq(k as u128).mux(x.q.bits(k * w, w), xc);
    }
    let xc = xc.named("x_column");

    d.section("multiply-add: the running sum of a row goes round the adder once a column");
    // At the adder: the issue's first-column flag, last-column flag and slot, L_mul later.
    let first = delay(&d, issuing.q & col.q.eq(0u32), shape.mul_stages, "first_column");
    let last_in = delay(&d, issuing.q & col_end, shape.mul_stages, "last_column");
    let slot_in = delay(&d, slot.q, shape.mul_stages, "slot_at_adder");
    // And L_add after that, as the sum leaves.
    let last_out = delay(&d, last_in, shape.add_stages, "last_column_out");
    let slot_out = delay(&d, slot_in, shape.add_stages, "slot_out");
    let index = col.q.zext(cb + sb).shl_const(sb) | slot.q.zext(cb + sb);
    let mut y: Vec<Option<Sig>> = vec![None; r];
    let plus_zero = d.lit(0, w);
    for l in 0..p {
        // A[row(l, j)][k] at index k·2^sb + j; rows past R and slots past the lane's rows
        // give 0.
        let entries: Vec<u128> = (0..c << sb)
            .map(|i| {
                let (k, j) = (i >> sb, i & ((1 << sb) - 1));
                let row = l + j * p;
                if k < c && j < per_lane && row < r {
                    matrix[row * c + k]
                } else {
                    0
                }
            })
            .collect();
        let a = rom(&d, &entries, w, index).named(&format!("lane{l}_coefficient"));
        let m = d.instance(&mul, &format!("fp{w}_mul"), &format!("lane{l}_mul"));
        m.input("s_axis_tdata").define(xc.cat(a));
        m.input("s_axis_tvalid").define(d.lit(1, 1));
        m.input("s_axis_tlast").define(d.lit(0, 1));
        m.input("m_axis_tready").define(d.lit(1, 1));
        let product = m.output("m_axis_tdata");
        let s = d.instance(&add, &format!("fp{w}_add"), &format!("lane{l}_add"));
        let sum = s.output("m_axis_tdata");
        // The slot's sum from the previous column: out of the adder T − L_add cycles ago.
        let back = delay(&d, sum, t - shape.add_stages, &format!("lane{l}_carried"));
        s.input("s_axis_tdata").define(first.mux(plus_zero, back).cat(product));
        s.input("s_axis_tvalid").define(d.lit(1, 1));
        s.input("s_axis_tlast").define(d.lit(0, 1));
        s.input("m_axis_tready").define(d.lit(1, 1));
        for j in 0..per_lane {
            let row = l + j * p;
            if row < r {
                let yr = d.reg(&format!("y{row}"), w, 0);
                yr.next_when(last_out & slot_out.eq(j as u128), sum);
                y[row] = Some(yr.q);
            }
        }
    }

    d.section("the result: valid from the last row's capture until taken");
    let finish = d.reg("finishing", bits_for(shape.mul_stages + shape.add_stages + 1), 0);
    let draining = d.reg("draining", 1, 0);
    let issue_ends = issuing.q & slot_end & col_end;
    draining.next_when(draining.q & finish.q.eq(0u32), d.lit(0, 1)).next_when(issue_ends, d.lit(1, 1));
    finish.next_when(draining.q, finish.q - 1u32).next_when(issue_ends, d.lit((shape.mul_stages + shape.add_stages) as u128, finish.q.width));
    let complete = draining.q & finish.q.eq(0u32);
    running.next_when(complete, d.lit(0, 1)).next_when(take, d.lit(1, 1));
    done.next_when(out_ready & done.q, d.lit(0, 1)).next_when(complete, d.lit(1, 1));
    let rows: Vec<Sig> = y.into_iter().map(|s| s.expect("every row has a lane")).rev().collect();
    d.output("m_axis_tdata", d.cat(&rows));
    d.output("m_axis_tvalid", done.q);
    Ok(d.finish())
}
