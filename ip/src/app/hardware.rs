//! A loop of an application compiled to hardware: its data, maps and schedule in on-chip
//! memories ([`super::store`], laid out by [`super::plan`]), a sequencer that issues one slot of
//! the schedule per cycle, gathers (a map row read, then the data rows it names), the loop's
//! kernel as a pipeline, the write-back of what it writes, an accumulator per memory bank for
//! what it increments, and global reductions ([`super::reduction`]).
//!
//! Compiled: arguments read directly or through maps; written or rw directly; incremented
//! directly or through maps; `read`, `inc`, `min` and `max` globals. Writes through maps and a
//! datum both incremented and read in one loop are refused by name.
//!
//! **Increments.** An element's increment of a datum goes to the bank its target address names:
//! the bank reads the old value (registered), adds in an adder of A stages, and writes the sum
//! back, λ = A + 2 cycles after the increment left the kernel. The schedule keeps two increments
//! of one element λ apart and an element's increments in different banks; the counters `hazards`
//! (an increment of an element fewer than λ cycles after the last) and `bank_conflicts` (two
//! increments of one bank in a cycle: one is lost) say when a schedule broke that rule.
//!
//! Ports: `start` (a one-cycle pulse) runs the loop over its schedule; `busy` is high until the
//! last result is written. The host fills the memories while the loop is idle: `<dat>_wr_*`
//! (one element's values, component 0 in the low bits, at the element's address), `<map>_wr_*`
//! (an element's entries as addresses, entry 0 in the low bits), `<loop>_schedule_wr_*` (a slot:
//! bit 0 set for an element, its address above) and reads data back through `<dat>_rd_addr` →
//! `<dat>_rd_data` a cycle later; `<global>_value` in, `<global>_result` out.

use std::rc::Rc;

use weft_hdl::float::{operator_netlist, FloatFormat, FloatOperator};
use weft_hdl::netlist::{Design, Netlist, Sig};
use weft_hdl::pipeline::Stages;

use super::kernel::Lane;
use super::plan::Plan;
use super::program::{Access, Arg, DatId, MapId};
use super::run::{Application, Element};
use super::store::{bits_for, Store};
use crate::Error;

/// A compiled loop: its netlist, the cycles from the edge that takes `start` until `busy` falls,
/// and the plan its host follows.
pub struct Compiled {
    pub net: Netlist,
    pub cycles: usize,
    pub plan: Plan,
    /// The loops built, in the order they first run.
    pub loops: Vec<String>,
    /// What the cycles are made of (a program's steps and repeats).
    pub costs: Vec<Cost>,
}

/// The cycles of a compiled program's parts, from the schedules and pipeline depths.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Cost {
    Cycles(usize),
    /// A repeat: its count (an outermost repeat's count can be set when starting) and body.
    Repeat {
        count: usize,
        outermost: bool,
        body: Vec<Cost>,
    },
}

impl Compiled {
    /// The cycles from the edge that takes `start` until `busy` falls, with the outermost repeats
    /// run `iterations` times (`None`: the file's counts).
    pub fn cycles_with(&self, iterations: Option<usize>) -> usize {
        fn sum(costs: &[Cost], iterations: Option<usize>) -> usize {
            costs
                .iter()
                .map(|c| match c {
                    Cost::Cycles(n) => *n,
                    // Its begin step, then per pass the body and the end step.
                    Cost::Repeat { count, outermost, body } => 1 + if *outermost { iterations.unwrap_or(*count) } else { *count } * (sum(body, iterations) + 1),
                })
                .sum()
        }
        sum(&self.costs, iterations)
    }
}

/// The adder stages of the accumulators and reductions.
pub(super) fn adder_stages(stages: &Stages) -> usize {
    stages.of(FloatOperator::Add).max(1)
}

pub(super) fn slot_bits<T: Element>() -> usize {
    match T::PRECISION {
        super::text::Precision::F64 => 64,
        super::text::Precision::F32 => 32,
    }
}

/// `x` delayed by `cycles` registers, the last named `name`.
fn delay<'d>(d: &'d Design, x: Sig<'d>, cycles: usize, name: &str) -> Sig<'d> {
    let mut y = x;
    for c in 0..cycles {
        let w = d.net().history(y.wire, None, None);
        y = d.sig(w);
        if c + 1 == cycles {
            y = y.named(name);
        }
    }
    y
}

/// Checks what the compiler builds for loop `name`; returns the dat each argument reaches
/// (`None`: a global).
fn targets<T: Element>(app: &Application<T>, name: &str) -> Result<Vec<Option<DatId>>, Error> {
    let l = app.loops.get(name).ok_or_else(|| Error::Config(format!("no loop `{name}`")))?;
    let a = &app.app;
    let mut targets: Vec<Option<DatId>> = vec![];
    for (k, arg) in l.args.iter().enumerate() {
        let (dat, via) = match *arg {
            Arg::Direct(dat, _) => (Some(dat), false),
            Arg::Indirect(dat, _, _, _) => (Some(dat), true),
            Arg::Global(..) => (None, false),
        };
        if let (Access::Write | Access::Rw, true) = (arg.access(), via) {
            return Err(Error::Config(format!(
                "loop `{name}`, argument {k}: {:?} through a map is not compiled to hardware yet (allowed: read and inc through a map; read, write, rw and inc directly)",
                arg.access()
            )));
        }
        if let (Access::Write | Access::Rw, Some(dat)) = (arg.access(), dat) {
            let dim = a.dat_info(dat).2;
            if let Some(i) = (0..dim).find(|i| !l.kernel.outputs.contains(&(k, *i))) {
                return Err(Error::Config(format!("loop `{name}`, argument {k}: the kernel does not set component {i}; a written argument's kernel sets all {dim}")));
            }
            if targets.iter().zip(&l.args).any(|(t, b)| *t == Some(dat) && matches!(b.access(), Access::Write | Access::Rw)) {
                return Err(Error::Config(format!("loop `{name}`, argument {k}: a second argument writes `{}`", a.dat_info(dat).0)));
            }
        }
        targets.push(dat);
    }
    for (k, arg) in l.args.iter().enumerate() {
        let Some(dat) = targets[k] else { continue };
        let incremented = l.args.iter().zip(&targets).any(|(b, t)| *t == Some(dat) && b.access() == Access::Inc);
        if incremented && arg.access() != Access::Inc {
            return Err(Error::Config(format!(
                "loop `{name}`, argument {k}: `{}` is incremented in this loop and also {:?}; compiled loops only increment a datum they increment",
                a.dat_info(dat).0,
                arg.access()
            )));
        }
    }
    Ok(targets)
}

/// The memories of a design: one store per dat and per map, and the schedules.
pub(super) struct Stores<'d> {
    pub dats: Vec<(DatId, Store<'d>)>,
    pub maps: Vec<(MapId, Store<'d>)>,
}

impl<'d> Stores<'d> {
    /// Stores for the dats and maps of `loops`: a dat incremented in any loop of the application
    /// is banked as its set's layout says; other memories have one bank.
    pub fn new<T: Element>(d: &'d Design, app: &Application<T>, plan: &Plan, loops: &[&str]) -> Stores<'d> {
        let a = &app.app;
        let slot = slot_bits::<T>();
        let mut stores = Stores { dats: vec![], maps: vec![] };
        let incremented = |dat: DatId| app.loops.values().flat_map(|l| &l.args).any(|arg| matches!(*arg, Arg::Direct(x, Access::Inc) | Arg::Indirect(x, _, _, Access::Inc) if x == dat));
        for name in loops {
            for arg in &app.loops[*name].args {
                if let Arg::Direct(dat, _) | Arg::Indirect(dat, _, _, _) = *arg {
                    if !stores.dats.iter().any(|(x, _)| *x == dat) {
                        let (dat_name, set, dim) = a.dat_info(dat);
                        let lay = plan.layout(set);
                        let banks = if incremented(dat) { lay.banks } else { 1 };
                        d.section(&format!("dat {dat_name}: {} elements of {dim} values, {banks} bank(s)", a.set_size(set)));
                        stores.dats.push((dat, Store::new(d, dat_name, dim * slot, banks, lay.capacity)));
                    }
                }
                if let Arg::Indirect(_, map, _, _) = *arg {
                    if !stores.maps.iter().any(|(x, _)| *x == map) {
                        let (map_name, from, to, mdim, _) = a.map_info(map);
                        d.section(&format!("map {map_name}: {} elements of {mdim} entries", a.set_size(from)));
                        let ib = bits_for(plan.layout(to).capacity);
                        stores.maps.push((map, Store::new(d, map_name, mdim * ib, 1, plan.layout(from).capacity)));
                    }
                }
            }
        }
        stores
    }

    pub fn dat(&self, dat: DatId) -> &Store<'d> {
        &self.dats.iter().find(|(x, _)| *x == dat).expect("a store for every dat a loop uses").1
    }

    fn map(&self, map: MapId) -> &Store<'d> {
        &self.maps.iter().find(|(x, _)| *x == map).expect("a store for every map a loop uses").1
    }

    /// Host ports on every memory, then each bank's write port.
    pub fn finish(&self) {
        for (_, s) in &self.dats {
            s.host_ports(true);
            s.finish();
        }
        for (_, s) in &self.maps {
            s.host_ports(false);
            s.finish();
        }
    }
}

/// A loop built into a design.
pub(super) struct LoopUnit<'d> {
    pub busy: Sig<'d>,
    /// The sum of each `inc` global, by argument.
    pub results: Vec<(usize, Sig<'d>)>,
    /// Cycles from the edge that takes `start` until `busy` falls.
    pub cycles: usize,
}

/// Builds loop `name` into `d` over `stores`, started by `start`; `globals` gives each global
/// argument's value (by argument index).
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
    let a = &app.app;
    let slot = slot_bits::<T>();
    let (kernel_net, schedule) = l.kernel.kernel.netlist(stages)?;
    let latency = schedule.latency;
    let slots = &plan.schedules[name];
    let ab = bits_for(plan.layout(l.set).capacity);

    // ---- sequencer: one slot of the schedule per cycle from `start` ----
    d.section(&format!("loop {name}: sequencer, {} slots ({} no-ops)", slots.len(), super::schedule::noops(slots)));
    let sched = Store::new(d, &format!("{name}_schedule"), 1 + ab, 1, slots.len().max(2).next_power_of_two());
    sched.host_ports(false);
    sched.finish();
    let sb = sched.address_bits();
    let issuing = d.reg(&format!("{name}_issuing"), 1, 0);
    let counter = d.reg(&format!("{name}_slot"), sb, 0);
    let last = counter.q.eq(counter.q.lit((slots.len() - 1) as u128, sb));
    let begin = start & !issuing.q;
    issuing.next_when(issuing.q & last, d.lit(0, 1)).next_when(begin, d.lit(1, 1));
    counter.next_when(issuing.q & !last, counter.q + 1u32).next_when(begin, d.lit(0, sb));
    let word = sched.read(counter.q, &format!("{name}_slot_word"));
    let valid = (delay(d, issuing.q, 1, &format!("{name}_issued")) & word.bits(0, 1)).named(&format!("{name}_element_valid"));
    let element = word.bits(1, ab).named(&format!("{name}_element"));

    // ---- gather: map rows at the element, then the data rows they name ----
    d.section(&format!("loop {name}: gather, map rows at the element, then the data rows they name"));
    let element_1 = delay(d, element, 1, &format!("{name}_element_d1"));
    let mut rows: Vec<Sig> = vec![];
    // The address each argument reaches, a cycle before its row arrives.
    let mut addresses: Vec<Sig> = vec![];
    for (k, arg) in l.args.iter().enumerate() {
        let arg_name = format!("{name}_{}", l.kernel_arg_name(k));
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
        addresses.push(addr);
        // An increment's buffer starts at zero.
        rows.push(if arg.access() == Access::Inc { d.lit(0, store.width) } else { store.read(addr, &format!("{arg_name}_value")) });
    }

    // ---- the kernel pipeline ----
    d.section(&format!("loop {name}: kernel, {latency} cycles"));
    let lanes: Vec<Sig> = l
        .kernel
        .lanes
        .iter()
        .map(|lane| match *lane {
            Lane::Arg(k, i) => rows[k].bits(i * slot, slot),
            Lane::Const(bits) => d.lit(bits as u128, slot),
        })
        .collect();
    let kernel = d.instance(&Rc::new(kernel_net), name, &format!("{name}_kernel"));
    let gathered = delay(d, valid, 2, &format!("{name}_gathered"));
    let data = lanes.iter().rev().copied().reduce(|hi, lo| hi.cat(lo)).unwrap_or(d.lit(0, 1));
    let width = kernel.input("s_axis_tdata").width;
    kernel.input("s_axis_tdata").define(data.resize(width));
    kernel.input("s_axis_tvalid").define(gathered);
    kernel.input("s_axis_tlast").define(d.lit(0, 1));
    kernel.input("m_axis_tready").define(d.lit(1, 1));
    let done = kernel.output("m_axis_tvalid");
    let out = kernel.output("m_axis_tdata");
    let value = |k: usize, dim: usize| (0..dim).rev().map(|i| out.bits(l.kernel.outputs.iter().position(|o| *o == (k, i)).map_or(0, |j| j * slot), slot)).reduce(|hi, lo| hi.cat(lo)).unwrap();
    // The pipeline never stalls (its output is always taken): addresses travel beside it.
    let at_output = |k: usize| delay(d, addresses[k], latency + 1, &format!("{name}_{}_address_out", l.kernel_arg_name(k)));

    // ---- write-back and increments ----
    d.section(&format!("loop {name}: write-back, what the kernel writes at the element that issued it"));
    for (k, arg) in l.args.iter().enumerate() {
        if let (Some(dat), Access::Write | Access::Rw) = (targets[k], arg.access()) {
            stores.dat(dat).write(done, at_output(k), value(k, a.dat_info(dat).2));
        }
    }
    let adder = adder_stages(stages);
    let format = if slot == 64 { FloatFormat::BINARY64 } else { FloatFormat::BINARY32 };
    let add_net = Rc::new(operator_netlist(FloatOperator::Add, format, adder)?);
    let mut accumulating = d.lit(0, 1);
    let (mut conflicts, mut hazards) = (vec![], vec![]);
    for (dat, store) in &stores.dats {
        let incs: Vec<usize> = (0..l.args.len()).filter(|k| targets[*k] == Some(*dat) && l.args[*k].access() == Access::Inc).collect();
        if incs.is_empty() {
            continue;
        }
        let (dat_name, _, dim) = a.dat_info(*dat);
        d.section(&format!("loop {name}: increments of {dat_name}, {} bank(s) each read, add and write back (λ = {} cycles)", store.banks(), plan.lambda));
        let updates: Vec<(Sig, Sig)> = incs.iter().map(|k| (at_output(*k), value(*k, dim))).collect();
        for b in 0..store.banks() {
            let p = format!("{name}_{dat_name}_bank{b}");
            let hits: Vec<Sig> = updates.iter().map(|(addr, _)| done & store.in_bank(*addr, b)).collect();
            for i in 0..hits.len() {
                for j in i + 1..hits.len() {
                    conflicts.push(hits[i] & hits[j]);
                }
            }
            let ob = store.address_bits() - bits_for(store.banks()) * usize::from(store.banks() > 1);
            let mut offset = d.lit(0, ob);
            let mut increment = d.lit(0, store.width);
            for ((addr, inc), h) in updates.iter().zip(&hits) {
                offset = offset | h.mux(store.offset_of(addr.resize(store.address_bits())), d.lit(0, ob));
                increment = increment | h.mux(*inc, d.lit(0, store.width));
            }
            let in_valid = d.reg(&format!("{p}_valid"), 1, 0);
            in_valid.next(d.cat(&hits).any());
            let in_off = d.reg(&format!("{p}_offset"), ob, 0);
            in_off.next(offset);
            let in_inc = d.reg(&format!("{p}_increment"), store.width, 0);
            in_inc.next(increment);
            // An increment of an element still in the accumulator (fewer than λ cycles ago).
            let mut recent = vec![];
            let (mut v, mut o) = (in_valid.q, in_off.q);
            for c in 1..plan.lambda {
                v = delay(d, v, 1, &format!("{p}_recent{c}_valid"));
                o = delay(d, o, 1, &format!("{p}_recent{c}_offset"));
                recent.push(v & o.eq(in_off.q));
            }
            hazards.push(in_valid.q & d.cat(&recent).any());
            let old = store.read_bank(b, in_valid.q, in_off.q, &format!("{p}_old"));
            let add_valid = delay(d, in_valid.q, 1, &format!("{p}_add_valid"));
            let add_off = delay(d, in_off.q, 1, &format!("{p}_add_offset"));
            let add_inc = delay(d, in_inc.q, 1, &format!("{p}_add_increment"));
            let mut sums = vec![];
            let mut sum_valid = d.lit(0, 1);
            for i in 0..dim {
                let add = d.instance(&add_net, &format!("{name}_accumulate_add"), &format!("{p}_add{i}"));
                add.input("s_axis_tdata").define(add_inc.bits(i * slot, slot).cat(old.bits(i * slot, slot)));
                add.input("s_axis_tvalid").define(add_valid);
                add.input("s_axis_tlast").define(d.lit(0, 1));
                add.input("m_axis_tready").define(d.lit(1, 1));
                sums.push(add.output("m_axis_tdata"));
                sum_valid = add.output("m_axis_tvalid");
            }
            let sum = sums.into_iter().rev().reduce(|hi, lo| hi.cat(lo)).unwrap();
            store.write_bank(b, sum_valid, delay(d, add_off, adder, &format!("{p}_sum_offset")), sum);
            // Busy until the last sum is written.
            let tail = d.reg(&format!("{p}_tail"), bits_for(plan.lambda + 2), 0);
            tail.next(in_valid.q.mux(tail.q.lit(plan.lambda as u128 - 1, tail.q.width), tail.q.any().mux(tail.q - 1u32, tail.q)));
            accumulating = accumulating | in_valid.q | tail.q.any();
        }
    }
    if !conflicts.is_empty() {
        d.counter(&format!("{name}_bank_conflicts"), d.cat(&conflicts).any());
        d.counter(&format!("{name}_hazards"), d.cat(&hazards).any());
    }

    // ---- global reductions ----
    let mut reducing = d.lit(0, 1);
    let mut results = vec![];
    let first = slots.iter().position(Option::is_some).unwrap_or(0);
    let span = slots.iter().rposition(Option::is_some).map_or(1, |last| last + 1 - first);
    for (k, arg) in l.args.iter().enumerate() {
        if let Arg::Global(g, Access::Inc) = *arg {
            let global = app.global_name(g);
            d.section(&format!("loop {name}: reduction of {global}, {adder}-way interleaved partial sums, folded in order"));
            let dim = a.global_values(g).len();
            let mut sums = vec![];
            for i in 0..dim {
                if !l.kernel.outputs.contains(&(k, i)) {
                    return Err(Error::Config(format!("loop `{name}`: the kernel does not add to component {i} of `{global}`")));
                }
                let (sum, working) = super::reduction::reduce(d, &format!("{name}_{global}{i}"), format, adder, begin, done, value(k, dim).bits(i * slot, slot), rows[k].bits(i * slot, slot), span)?;
                sums.push(sum);
                reducing = reducing | working;
            }
            results.push((k, sums.into_iter().rev().reduce(|hi, lo| hi.cat(lo)).unwrap()));
        }
    }

    for (k, arg) in l.args.iter().enumerate() {
        if let Arg::Global(g, access @ (Access::Min | Access::Max)) = *arg {
            let global = app.global_name(g);
            d.section(&format!("loop {name}: {access:?} of {global}, one comparison a cycle"));
            let dim = a.global_values(g).len();
            let mut parts = vec![];
            for i in 0..dim {
                if !l.kernel.outputs.contains(&(k, i)) {
                    return Err(Error::Config(format!("loop `{name}`: the kernel does not give component {i} of `{global}`")));
                }
                let running = d.reg(&format!("{name}_{global}{i}_{}", if access == Access::Max { "max" } else { "min" }), slot, 0);
                let better = super::reduction::extreme(d, format, running.q, value(k, dim).bits(i * slot, slot), access == Access::Max);
                running.next_when(done, better).next_when(begin, rows[k].bits(i * slot, slot));
                parts.push(running.q);
            }
            results.push((k, parts.into_iter().rev().reduce(|hi, lo| hi.cat(lo)).unwrap()));
        }
    }

    // Elements issued and not yet out of the kernel.
    let ob = bits_for(slots.len() + 2) + 1;
    let outstanding = d.reg(&format!("{name}_outstanding"), ob, 0);
    outstanding.next(outstanding.q + valid.zext(ob) - done.zext(ob));
    let busy = issuing.q | delay(d, issuing.q, 1, &format!("{name}_issued_d1")) | outstanding.q.any() | accumulating | reducing;
    let increments = stores.dats.iter().any(|(dat, _)| l.args.iter().zip(&targets).any(|(arg, t)| *t == Some(*dat) && arg.access() == Access::Inc));
    let reduces = l.args.iter().any(|x| matches!(x, Arg::Global(_, Access::Inc)));
    // Counting the edge that takes `start` as the first: slot s is issued in cycle s + 1, its
    // element's result leaves the kernel in cycle s + 4 + latency (the schedule read, two gather
    // reads, the kernel). `busy` falls a cycle after the last result (X), λ cycles later if the
    // loop increments, after the reduction's fold if it reduces, and never before the issue of
    // the schedule's trailing no-ops has ended (cycle L + 2).
    let last_result = first + span - 1 + 4 + latency;
    let mut cycles = (slots.len() + 2).max(last_result + 1 + if increments { plan.lambda } else { 0 });
    if reduces {
        cycles = cycles.max(last_result + 1 + fold_cycles(span, adder));
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

/// What a performance model needs of loop `name`: its kernel's latency at `stages`, whether it
/// increments a datum, and whether it sums a global.
pub fn loop_shape<T: Element>(app: &Application<T>, name: &str, stages: &Stages) -> Result<(usize, bool, bool), Error> {
    let l = app.loops.get(name).ok_or_else(|| Error::Config(format!("no loop `{name}`")))?;
    let latency = l.kernel.kernel.netlist(stages)?.1.latency;
    let increments = l.args.iter().any(|arg| matches!(arg, Arg::Direct(_, Access::Inc) | Arg::Indirect(_, _, _, Access::Inc)));
    let reduces = l.args.iter().any(|arg| matches!(arg, Arg::Global(_, Access::Inc)));
    Ok((latency, increments, reduces))
}

/// The hardware of loop `name` of `app`, with the kernel's operators at `stages`.
pub fn compile_loop<T: Element>(app: &Application<T>, name: &str, stages: &Stages) -> Result<Compiled, Error> {
    targets(app, name)?;
    let plan = Plan::new(app, adder_stages(stages))?;
    let d = Design::new();
    let stores = Stores::new(&d, app, &plan, &[name]);
    let l = &app.loops[name];
    let slot = slot_bits::<T>();
    let globals: Vec<(usize, Sig)> = l
        .args
        .iter()
        .enumerate()
        .filter_map(|(k, arg)| match *arg {
            Arg::Global(g, _) => Some((k, d.input(&format!("{}_value", app.global_name(g)), app.app.global_values(g).len() * slot))),
            _ => None,
        })
        .collect();
    let start = d.input("start", 1);
    let unit = build_loop(&d, app, &plan, &stores, name, start, &globals, stages)?;
    for (k, sum) in &unit.results {
        let Arg::Global(g, _) = l.args[*k] else { unreachable!() };
        d.output(&format!("{}_result", app.global_name(g)), *sum);
    }
    d.output("busy", unit.busy);
    stores.finish();
    let cycles = unit.cycles;
    drop(stores);
    Ok(Compiled { net: d.finish(), cycles, plan, loops: vec![name.to_string()], costs: vec![Cost::Cycles(cycles)] })
}

/// The public description of loop `name` compiled as module `module`.
pub fn loop_spec<T: Element>(app: &Application<T>, name: &str, module: &str, stages: &Stages) -> Result<weft_hdl::export::ModuleSpec, Error> {
    let compiled = compile_loop(app, name, stages)?;
    let l = &app.loops[name];
    Ok(weft_hdl::export::ModuleSpec {
        family: "app",
        name: module.to_string(),
        summary: format!("loop `{name}` over {} elements, compiled from its application file", app.app.set_size(l.set)),
        parameters: vec![("precision".into(), T::PRECISION.name().into()), ("cycles".into(), format!("{} from start until busy falls", compiled.cycles))],
        hidden_ports: vec![],
    })
}

/// The Verilog of loop `name` compiled as [`compile_loop`] builds it, under `spec`.
pub fn loop_verilog<T: Element>(app: &Application<T>, name: &str, stages: &Stages, spec: &weft_hdl::export::ModuleSpec) -> Result<String, Error> {
    let compiled = compile_loop(app, name, stages)?;
    weft_hdl::export::export_netlist(spec, &compiled.net).map_err(|e| Error::Config(e.0))
}
