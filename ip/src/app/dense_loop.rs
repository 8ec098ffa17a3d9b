//! A `dense` loop built into a design over the program's memories: element by element (in the
//! loop's schedule, the same schedule memory and format as a kernel loop's), the element's map
//! rows are read, each operand's C entries are gathered one a cycle, every product's dense
//! operator ([`super::dense`], P lanes) runs once per value of an entry (F times), and each
//! result's R entries are written back one a cycle through their map. The phases do not overlap,
//! so an element takes
//!
//! `1 + (C_max + 1) + F·(L_max + 1) + R_max` cycles
//!
//! (the slot, the gather, F products of L = C·T + L_mul + L_add + 2 cycles each plus the cycle
//! that takes them, the write-back; C_max, R_max and L_max over the loop's products), a no-op slot
//! 1 cycle and a row of the schedule 1 cycle more to read it. Products of one loop run side by
//! side on the same gathered values.

use std::collections::BTreeMap;
use std::rc::Rc;

use weft_hdl::float::{FloatFormat, FloatOperator};
use weft_hdl::netlist::{Design, Sig};
use weft_hdl::pipeline::Stages;

use super::datapath::LoopUnit;
use super::dense::{dense_netlist, Dense};
use super::memories::{adder_stages, slot_bits, Stores};
use super::plan::Plan;
use super::products::DenseBody;
use super::program::Arg;
use super::run::{Application, Element};
use super::store::{bits_for, delay, Store};
use crate::Error;

/// A product's operator shape at `stages`.
fn shape(rows: usize, cols: usize, lanes: usize, stages: &Stages) -> Dense {
    Dense { rows, cols, lanes, mul_stages: stages.of(FloatOperator::Mul), add_stages: adder_stages(stages) }
}

/// Cycles of loop `name` (a dense loop with `body`) from the edge that takes `start` until
/// `busy` falls, for the plan's schedule.
pub(super) fn cycles(plan: &Plan, name: &str, body: &DenseBody, stages: &Stages) -> usize {
    let slots = &plan.schedules[name];
    let (c, r) = body.widest();
    let l = body.products.iter().map(|p| shape(p.rows, p.cols, body.lanes, stages).latency()).max().unwrap_or(0);
    let f = body.products.first().map_or(0, |p| p.dim);
    let element = 1 + (c + 1) + f * (l + 1) + r;
    let elements = slots.iter().flatten().count();
    1 + slots.len() / plan.pipelines + (slots.len() - elements) + elements * element
}

/// Builds dense loop `name` (with `body`) into `d` over `stores`, started by `start`.
#[allow(clippy::too_many_arguments)]
pub(super) fn build_dense_loop<'d, T: Element>(
    d: &'d Design,
    app: &Application<T>,
    plan: &Plan,
    stores: &Stores<'d>,
    name: &str,
    start: Sig<'d>,
    body: &DenseBody,
    stages: &Stages,
) -> Result<LoopUnit<'d>, Error> {
    let l = &app.loops[name];
    let a = &app.app;
    let w = slot_bits::<T>();
    let format = if w == 64 { FloatFormat::BINARY64 } else { FloatFormat::BINARY32 };
    let f_n = body.products[0].dim;
    let (c_max, r_max) = body.widest();
    let slots = &plan.schedules[name];
    let pipes = plan.pipelines;
    let rows_n = slots.len() / pipes;
    let ab = bits_for(plan.layout(l.set).capacity);

    // ---- the schedule: one row read, then its slots one by one ----
    d.section(&format!("loop {name}: schedule, {rows_n} rows × {pipes} slot(s), an element at a time"));
    let sched = Store::new(d, &format!("{name}_schedule"), pipes * (1 + ab), 1, rows_n.max(2).next_power_of_two());
    sched.host_ports(false);
    sched.finish();
    // Phases: 0 idle, 1 read a row, 2 a slot, 3 gather, 4 feed, 5 wait, 6 write back.
    let phase = d.reg(&format!("{name}_phase"), 3, 0);
    let at = |k: u32| phase.q.eq(k);
    let row = d.reg(&format!("{name}_row"), sched.address_bits(), 0);
    let slot = d.reg(&format!("{name}_slot"), bits_for(pipes), 0);
    let word = sched.read(row.q, &format!("{name}_row_word"));
    let mut valid = d.lit(0, 1);
    let mut element = d.lit(0, ab);
    for p in 0..pipes {
        let here = slot.q.eq(p as u32);
        valid = here.mux(word.bits(p * (1 + ab), 1), valid);
        element = here.mux(word.bits(p * (1 + ab) + 1, ab), element);
    }
    let element = element.named(&format!("{name}_element"));
    let count_bits = bits_for(c_max.max(r_max) + 2);
    let index = d.reg(&format!("{name}_entry"), count_bits, 0);
    let field = d.reg(&format!("{name}_value"), bits_for(f_n + 1), 0);

    // ---- gather: each operand's entries through its map, one a cycle ----
    d.section(&format!("loop {name}: gather, {c_max} entries of {f_n} values"));
    let map_row = |map| stores.map(map).read(element, &format!("{name}_{}_row", a.map_info(map).0));
    let entry_of = |k: usize| match l.args[k] {
        Arg::Indirect(dat, map, _, _) => (dat, map),
        _ => unreachable!("a dense loop's arguments go through maps"),
    };
    let mut rows: BTreeMap<String, Sig> = BTreeMap::new();
    let mut row_of = |map| {
        let key = a.map_info(map).0.to_string();
        *rows.entry(key).or_insert_with(|| map_row(map))
    };
    let gathering = at(3);
    let captured = delay(d, gathering & index.q.lt(c_max as u32), 1, &format!("{name}_gathered"));
    let captured_at = delay(d, index.q, 1, &format!("{name}_gathered_entry"));
    // Per operand (by its first internal argument): the gathered entries, entry 0 lowest.
    let mut operands: BTreeMap<usize, Sig> = BTreeMap::new();
    for p in &body.products {
        if operands.contains_key(&p.x[0]) {
            continue;
        }
        let (dat, map) = entry_of(p.x[0]);
        let mrow = row_of(map);
        let ib = stores.map(map).width / a.map_info(map).3;
        let mut address = mrow.bits(0, ib);
        for j in 1..p.cols {
            address = index.q.eq(j as u32).mux(mrow.bits(j * ib, ib), address);
        }
        let value = stores.dat(dat).read(address, &format!("{name}_{}_entry", p.names.1));
        let entries: Vec<Sig> = (0..p.cols)
            .map(|j| {
                let r = d.reg(&format!("{name}_{}_{j}", p.names.1), f_n * w, 0);
                r.next_when(captured & captured_at.eq(j as u32), value);
                r.q
            })
            .collect();
        operands.insert(p.x[0], d.cat(&entries.into_iter().rev().collect::<Vec<_>>()));
    }

    // ---- the products: one dense operator each, once per value of an entry ----
    let feeding = at(4);
    let mut all_done = d.lit(1, 1);
    let mut outs = vec![];
    for p in &body.products {
        let sh = shape(p.rows, p.cols, body.lanes, stages);
        d.section(&format!("loop {name}: {} = {} * {}, {} lanes, {} cycles a value", p.names.0, p.matrix, p.names.1, sh.lanes, sh.latency()));
        let net = Rc::new(dense_netlist(&sh, format, &p.entries.iter().map(|&b| u128::from(b)).collect::<Vec<_>>())?);
        let x = operands[&p.x[0]];
        let mut column = d.lit(0, p.cols * w);
        for f in 0..f_n {
            let col: Vec<Sig> = (0..p.cols).rev().map(|j| x.bits((j * f_n + f) * w, w)).collect();
            column = field.q.eq(f as u32).mux(d.cat(&col), column);
        }
        let inst = d.instance(&net, &format!("{name}_{}", p.names.0), &format!("{name}_{}_product", p.names.0));
        inst.input("s_axis_tvalid").define(feeding);
        inst.input("s_axis_tdata").define(column);
        let done = inst.output("m_axis_tvalid");
        all_done = all_done & done;
        outs.push((p, inst));
    }
    let take = (at(5) & all_done).named(&format!("{name}_take"));
    let mut results = vec![];
    for (p, inst) in outs {
        inst.input("m_axis_tready").define(take);
        let out = inst.output("m_axis_tdata");
        // Result entry i, value f at bits (i·F + f)·w.
        let mut entries = vec![];
        for i in 0..p.rows {
            let values: Vec<Sig> = (0..f_n)
                .rev()
                .map(|f| {
                    let r = d.reg(&format!("{name}_{}_{i}_{f}", p.names.0), w, 0);
                    r.next_when(take & field.q.eq(f as u32), out.bits(i * w, w));
                    r.q
                })
                .collect();
            entries.push(d.cat(&values));
        }
        results.push((p, entries));
    }

    // ---- write back: each result's entries through its map, one a cycle ----
    d.section(&format!("loop {name}: write back, {r_max} entries"));
    let writing = at(6);
    for (p, entries) in &results {
        let (dat, map) = entry_of(p.y[0]);
        let mrow = row_of(map);
        let ib = stores.map(map).width / a.map_info(map).3;
        let (mut address, mut data) = (mrow.bits(0, ib), entries[0]);
        for (i, e) in entries.iter().enumerate().skip(1) {
            let here = index.q.eq(i as u32);
            address = here.mux(mrow.bits(i * ib, ib), address);
            data = here.mux(*e, data);
        }
        stores.dat(dat).write(writing & index.q.lt(p.rows as u32), address, data);
    }

    // ---- the phases ----
    let lit = |v: usize, width: usize| d.lit(v as u128, width);
    let begin = start & at(0);
    let last_slot = slot.q.eq((pipes - 1) as u32);
    let last_row = row.q.eq((rows_n - 1) as u32);
    let gathered = gathering & index.q.eq(c_max as u32);
    let last_field = field.q.eq((f_n - 1) as u32);
    let written = writing & index.q.eq((r_max - 1) as u32);
    // A slot ends when it is a no-op, or when its element is written back.
    let slot_ends = (at(2) & !valid) | written;
    let next_row = slot_ends & last_slot;
    phase
        .next_when(next_row & last_row, lit(0, 3))
        .next_when(next_row & !last_row, lit(1, 3))
        .next_when(slot_ends & !last_slot, lit(2, 3))
        .next_when(take & last_field, lit(6, 3))
        .next_when(take & !last_field, lit(4, 3))
        .next_when(feeding, lit(5, 3))
        .next_when(gathered, lit(4, 3))
        .next_when(at(2) & valid, lit(3, 3))
        .next_when(at(1), lit(2, 3))
        .next_when(begin, lit(1, 3));
    row.next_when(next_row, row.q + 1u32).next_when(begin, lit(0, row.q.width));
    slot.next_when(slot_ends, last_slot.mux(lit(0, slot.q.width), slot.q + 1u32)).next_when(begin, lit(0, slot.q.width));
    index.next_when(gathering | writing, index.q + 1u32).next_when(gathered | (take & last_field) | (at(2) & valid), lit(0, count_bits));
    field.next_when(take, last_field.mux(lit(0, field.q.width), field.q + 1u32)).next_when(begin, lit(0, field.q.width));
    d.counter(&format!("{name}_elements"), at(2) & valid);
    d.counter(&format!("{name}_noops"), at(2) & !valid);
    Ok(LoopUnit { busy: (!at(0)).named(&format!("{name}_busy")), results: vec![], cycles: cycles(plan, name, body, stages) })
}
