//! One loop built into a design over the program's memories: a sequencer that issues one row of
//! the schedule a cycle (P slots, one per pipeline), per pipeline the gathers (schedule word, map
//! row, data row: three registered reads) and the kernel, the write-back of what the kernels
//! write, the accumulators of what they increment ([`super::accumulate`]) and the global
//! reductions ([`super::reduction`]).

use std::rc::Rc;

use weft_hdl::float::{operator_netlist, FloatFormat, FloatOperator};
use weft_hdl::netlist::{Design, Sig};
use weft_hdl::pipeline::Stages;

use super::accumulate::{accumulate, Update};
use super::kernel::Lane;
use super::memories::{adder_stages, slot_bits, targets, Stores};
use super::plan::Plan;
use super::program::{Access, Arg};
use super::run::{Application, Element};
use super::store::{bits_for, delay, Store};
use crate::Error;

/// A loop built into a design.
pub(super) struct LoopUnit<'d> {
    pub busy: Sig<'d>,
    /// The result of each reduced global, by argument.
    pub results: Vec<(usize, Sig<'d>)>,
    /// Cycles from the edge that takes `start` until `busy` falls.
    pub cycles: usize,
}

/// One pipeline's view of the loop: per argument the row it gathered and the address it reached
/// (at the kernel's output), the kernel's valid and data out.
struct Pipe<'d> {
    valid: Sig<'d>,
    done: Sig<'d>,
    out: Sig<'d>,
    rows: Vec<Sig<'d>>,
    addresses: Vec<Sig<'d>>,
}

/// Builds loop `name` into `d` over `stores`, started by `start`; `globals` gives each global
/// argument's value (by argument index).
#[allow(clippy::too_many_arguments)]
pub(super) fn build_loop<'d, T: Element>(
    d: &'d Design,
    app: &Application<T>,
    plan: &Plan,
    stores: &Stores<'d>,
    name: &str,
    start: Sig<'d>,
    globals: &[(usize, Sig<'d>)],
    stages: &Stages,
) -> Result<LoopUnit<'d>, Error> {
    let targets = targets(app, name)?;
    let l = &app.loops[name];
    let kernel = l.kernel(name)?;
    let a = &app.app;
    let slot = slot_bits::<T>();
    let (kernel_net, schedule) = kernel.kernel.netlist(stages)?;
    let kernel_net = Rc::new(kernel_net);
    let latency = schedule.latency;
    let slots = &plan.schedules[name];
    let pipes = plan.pipelines;
    let rows_n = slots.len() / pipes;
    let ab = bits_for(plan.layout(l.set).capacity);
    let pn = |p: usize| if pipes == 1 { String::new() } else { format!("_p{p}") };

    // ---- sequencer: one row of the schedule per cycle from `start` ----
    d.section(&format!("loop {name}: sequencer, {rows_n} rows × {pipes} pipeline(s), {} no-op slots", super::schedule::noops(slots)));
    let sched = Store::new(d, &format!("{name}_schedule"), pipes * (1 + ab), 1, rows_n.max(2).next_power_of_two());
    sched.host_ports(false);
    sched.finish();
    let sb = sched.address_bits();
    let issuing = d.reg(&format!("{name}_issuing"), 1, 0);
    let counter = d.reg(&format!("{name}_row"), sb, 0);
    let last = counter.q.eq(counter.q.lit((rows_n - 1) as u128, sb));
    let begin = start & !issuing.q;
    issuing.next_when(issuing.q & last, d.lit(0, 1)).next_when(begin, d.lit(1, 1));
    counter.next_when(issuing.q & !last, counter.q + 1u32).next_when(begin, d.lit(0, sb));
    let word = sched.read(counter.q, &format!("{name}_row_word"));
    let issued = delay(d, issuing.q, 1, &format!("{name}_issued"));

    let mut pipeline = vec![];
    let (mut elements, mut noops) = (vec![], vec![]);
    for p in 0..pipes {
        let w = p * (1 + ab);
        let valid = (issued & word.bits(w, 1)).named(&format!("{name}_element_valid{}", pn(p)));
        elements.push(valid);
        noops.push(issued & !word.bits(w, 1));
        let element = word.bits(w + 1, ab).named(&format!("{name}_element{}", pn(p)));

        // ---- gather: map rows at the element, then the data rows they name ----
        d.section(&format!("loop {name}: gather{}, map rows at the element, then the data rows they name", pn(p)));
        let element_1 = delay(d, element, 1, &format!("{name}_element_d1{}", pn(p)));
        let (mut rows, mut addresses) = (vec![], vec![]);
        for (k, arg) in l.args.iter().enumerate() {
            let arg_name = format!("{name}_{}{}", l.kernel_arg_name(k), pn(p));
            let Some(target) = targets[k] else {
                rows.push(globals.iter().find(|(j, _)| *j == k).expect("a value for every global argument").1);
                addresses.push(d.lit(0, 1));
                continue;
            };
            let store = stores.dat(target);
            let addr = match *arg {
                Arg::Indirect(_, map, i, _) => {
                    let m = stores.map(map);
                    let ib = m.width / a.map_info(map).3;
                    m.read(element, &format!("{arg_name}_row")).bits(i * ib, ib)
                }
                _ => element_1,
            };
            // The pipeline never stalls (its output is always taken): addresses travel beside it.
            addresses.push(delay(d, addr, latency + 1, &format!("{arg_name}_address_out")));
            // An increment's buffer starts at zero.
            rows.push(if arg.access() == Access::Inc { d.lit(0, store.width) } else { store.read(addr, &format!("{arg_name}_value")) });
        }

        // ---- the kernel pipeline ----
        d.section(&format!("loop {name}: kernel{}, {latency} cycles", pn(p)));
        let lanes: Vec<Sig> = kernel
            .lanes
            .iter()
            .map(|lane| match *lane {
                Lane::Arg(k, i) => rows[k].bits(i * slot, slot),
                Lane::Const(bits) => d.lit(bits as u128, slot),
            })
            .collect();
        let kernel = d.instance(&kernel_net, name, &format!("{name}_kernel{}", pn(p)));
        let data = lanes.iter().rev().copied().reduce(|hi, lo| hi.cat(lo)).unwrap_or(d.lit(0, 1));
        let width = kernel.input("s_axis_tdata").width;
        kernel.input("s_axis_tdata").define(data.resize(width));
        kernel.input("s_axis_tvalid").define(delay(d, valid, 2, &format!("{name}_gathered{}", pn(p))));
        kernel.input("s_axis_tlast").define(d.lit(0, 1));
        kernel.input("m_axis_tready").define(d.lit(1, 1));
        pipeline.push(Pipe { valid, done: kernel.output("m_axis_tvalid"), out: kernel.output("m_axis_tdata"), rows, addresses });
    }
    d.section(&format!("loop {name}: counters of the elements and no-op slots issued"));
    d.tally(&format!("{name}_elements"), &elements);
    d.tally(&format!("{name}_noops"), &noops);
    // Argument k's values (components 0.. from the low bits) out of a pipeline's kernel.
    let value = |pipe: &Pipe<'d>, k: usize, dim: usize| {
        (0..dim).rev().map(|i| pipe.out.bits(kernel.outputs.iter().position(|o| *o == (k, i)).map_or(0, |j| j * slot), slot)).reduce(|hi, lo| hi.cat(lo)).unwrap()
    };

    // ---- write-back and increments ----
    d.section(&format!("loop {name}: write-back, what the kernels write at the elements that issued it"));
    for pipe in &pipeline {
        for (k, arg) in l.args.iter().enumerate() {
            if let (Some(dat), Access::Write | Access::Rw) = (targets[k], arg.access()) {
                stores.dat(dat).write(pipe.done, pipe.addresses[k], value(pipe, k, a.dat_info(dat).2));
            }
        }
    }
    let adder = adder_stages(stages);
    let format = if slot == 64 { FloatFormat::BINARY64 } else { FloatFormat::BINARY32 };
    let add_net = Rc::new(operator_netlist(FloatOperator::Add, format, adder)?);
    let mut accumulating = d.lit(0, 1);
    let (mut conflicts, mut hazards) = (vec![], vec![]);
    let mut increments = false;
    for (dat, store) in &stores.dats {
        let incs: Vec<usize> = (0..l.args.len()).filter(|k| targets[*k] == Some(*dat) && l.args[*k].access() == Access::Inc).collect();
        if incs.is_empty() {
            continue;
        }
        increments = true;
        let (dat_name, _, dim) = a.dat_info(*dat);
        d.section(&format!("loop {name}: increments of {dat_name}, {} bank(s) each read, add and write back (λ = {} cycles)", store.banks(), plan.lambda));
        let updates: Vec<Update> = pipeline.iter().flat_map(|pipe| incs.iter().map(move |k| (pipe.done, pipe.addresses[*k], value(pipe, *k, dim)))).collect();
        let acc = accumulate(d, store, &updates, slot, plan.lambda, adder, &add_net, &format!("{name}_accumulate_add"), &format!("{name}_{dat_name}"));
        accumulating = accumulating | acc.busy;
        conflicts.extend(acc.conflicts);
        hazards.extend(acc.hazards);
    }
    if increments {
        d.counter(&format!("{name}_bank_conflicts"), conflicts.iter().fold(d.lit(0, 1), |x, c| x | *c));
        d.counter(&format!("{name}_hazards"), hazards.iter().fold(d.lit(0, 1), |x, h| x | *h));
    }

    // ---- global reductions ----
    let mut reducing = d.lit(0, 1);
    let mut results = vec![];
    let first = slots.iter().position(Option::is_some).unwrap_or(0) / pipes;
    let span = slots.iter().rposition(Option::is_some).map_or(1, |last| last / pipes + 1 - first);
    let tree = super::reduction::tree_depth(pipes) * adder;
    for (k, arg) in l.args.iter().enumerate() {
        let Arg::Global(g, access @ (Access::Inc | Access::Min | Access::Max)) = *arg else { continue };
        let global = app.global_name(g);
        let dim = a.global_values(g).len();
        let mut parts = vec![];
        for i in 0..dim {
            if !kernel.outputs.contains(&(k, i)) {
                return Err(Error::Config(format!("loop `{name}`: the kernel does not give component {i} of `{global}`")));
            }
            let lanes: Vec<(Sig, Sig)> = pipeline.iter().map(|pipe| (pipe.done, value(pipe, k, dim).bits(i * slot, slot))).collect();
            let old = pipeline[0].rows[k].bits(i * slot, slot);
            let unit = format!("{name}_{global}{i}");
            if access == Access::Inc {
                d.section(&format!("loop {name}: reduction of {global}, a row's values summed in a tree, {adder}-way interleaved partial sums, folded in order"));
                let (valid, sum) = super::reduction::row_sum(d, &unit, format, adder, &lanes)?;
                let (total, working) = super::reduction::reduce(d, &unit, format, adder, begin, valid, sum, old, span)?;
                parts.push(total);
                reducing = reducing | working;
            } else {
                d.section(&format!("loop {name}: {access:?} of {global}, a row's values compared in turn, one row a cycle"));
                let running = d.reg(&format!("{unit}_{}", if access == Access::Max { "max" } else { "min" }), slot, 0);
                let better = lanes.iter().fold(running.q, |acc, (done, v)| done.mux(super::reduction::extreme(d, format, acc, *v, access == Access::Max), acc));
                running.next_when(lanes.iter().fold(d.lit(0, 1), |x, (done, _)| x | *done), better).next_when(begin, old);
                parts.push(running.q);
            }
        }
        results.push((k, parts.into_iter().rev().reduce(|hi, lo| hi.cat(lo)).unwrap()));
    }

    // Elements issued and not yet out of the kernels.
    let ob = bits_for(slots.len() + 2) + 1;
    let outstanding = d.reg(&format!("{name}_outstanding"), ob, 0);
    let count = |sigs: Vec<Sig<'d>>| sigs.into_iter().fold(d.lit(0, ob), |acc, s| acc + s.zext(ob));
    outstanding.next(outstanding.q + count(pipeline.iter().map(|p| p.valid).collect()) - count(pipeline.iter().map(|p| p.done).collect()));
    let busy = issuing.q | delay(d, issuing.q, 1, &format!("{name}_issued_d1")) | outstanding.q.any() | accumulating | reducing;
    let reduces = l.args.iter().any(|x| matches!(x, Arg::Global(_, Access::Inc)));
    // Counting the edge that takes `start` as the first: row r is issued in cycle r + 1, its
    // elements' results leave the kernels in cycle r + 4 + latency (the schedule read, two gather
    // reads, the kernel). `busy` falls a cycle after the last result (X), λ cycles later if the
    // loop increments, after the row tree and the reduction's fold if it reduces, and never before
    // the issue of the schedule's trailing no-ops has ended (cycle rows + 2).
    let last_result = first + span - 1 + 4 + latency;
    let mut cycles = (rows_n + 2).max(last_result + 1 + if increments { plan.lambda } else { 0 });
    if reduces {
        cycles = cycles.max(last_result + tree + 1 + fold_cycles(span, adder));
    }
    Ok(LoopUnit { busy, results, cycles })
}

/// Cycles a reduction adds after the kernel's last value: the first fold waits for every partial
/// (A − 1 cycles, then up to A − 1 more for partial 0 to come round), then A steps of A + 1
/// cycles. Values come for `span` cycles from the first.
fn fold_cycles(span: usize, a: usize) -> usize {
    // The last value is at c = span − 1; folding begins at the first c ≥ span + A with
    // c mod A = 0 and ends A·(A + 1) cycles later, when `busy` falls.
    let begin = (span + a).div_ceil(a) * a;
    begin + a * (a + 1) - (span - 1)
}
