//! A whole program compiled to hardware: every loop it runs built over one set of memories
//! ([`super::hardware`]), the globals in registers, and a sequencer that steps through the
//! program — loops, constant assignments, repeats, prints — with no host in the loop.
//!
//! The program becomes a list of steps; a step counter walks it. A loop step pulses that loop's
//! `start` and waits until its `busy` falls, then writes its reductions into their globals; an
//! assignment writes its constant (computed from constants and set sizes when compiling); a
//! repeat's end jumps back while its counter is below its count; a `print` step, when the
//! iteration (the outermost repeat's count, from 1) is a multiple of its period, logs every
//! global into `print_log` for the host to read and evaluate the printed expression.
//!
//! Ports, beside the memories' host ports of [`super::hardware`] (`<dat>_*`, `<map>_*`,
//! `<loop>_schedule_*`): `start` runs the program, `busy` is high until it ends;
//! `iterations` (32 bits) is the outermost repeat's count (0: the file's); `<global>_wr_en` and
//! `<global>_wr_data` set a global, `<global>_value` shows it; `print_log_rd_addr` →
//! `print_log_rd_data` (bits 15:0 the print step's number in program order, 47:16 the
//! iteration, then every global by name, components from the low bits) and `prints` (entries
//! logged); counters `iteration`, `<loop>_runs`, `<loop>_elements`, `<loop>_noops`, `<loop>_hazards`,
//! `<loop>_bank_conflicts`.

use std::collections::{BTreeMap, BTreeSet};

use weft_hdl::netlist::{Design, Sig};
use weft_hdl::pipeline::Stages;

use super::datapath::build_loop;
use super::dense_loop::build_dense_loop;
use super::hardware::{Compiled, Cost};
use super::memories::{adder_stages, slot_bits, Stores};
use super::plan::Plan;
use super::program::Arg;
use super::run::{Application, Body, Element};
use super::store::{bits_for, Store};
use super::text::Step;
use crate::Error;

/// One step of the flattened program.
enum Micro {
    Loop(String),
    /// Global (by position in `globals`) ← constant (one value for every component).
    Assign(usize, u64),
    /// Repeat `r` begins: its counter to 0.
    Begin(usize),
    /// Repeat `r` ends: back to step `to` while its counter + 1 < its count.
    End(usize, usize),
    /// Log every global when the iteration is a multiple of `every` (always outside repeats).
    Print(usize, bool),
    /// Wait, showing `sync` and this id, until the host pulses `sync_done` (a node of a
    /// partitioned application: [`NodeShare`]).
    Sync(u32),
}

/// How one node of a partitioned application runs its program
/// ([`crate::app::partition::local`]): how many of a set's first elements each loop issues, and
/// the loops before and after which the node waits for its host — to start a reduction from
/// the operator's identity, to combine it with the other nodes', to refresh halos. Sync ids:
/// `2·k` before and `2·k + 1` after the `k`-th loop in name order.
#[derive(Clone, Debug, Default)]
pub struct NodeShare {
    /// Per loop: the set's first elements it issues (all when not named).
    pub extents: BTreeMap<String, usize>,
    /// Loops the node waits before.
    pub sync_before: BTreeSet<String>,
    /// Loops the node waits after.
    pub sync_after: BTreeSet<String>,
}

/// A repeat: its count, and whether it is outermost (its count is the iteration).
struct Repeat {
    count: usize,
    outermost: bool,
}

/// Flattens `steps` (inside a repeat when `inside`); `repeats` collects the repeats.
fn flatten<T: Element>(app: &Application<T>, share: &NodeShare, steps: &[Step], globals: &[(String, usize)], inside: bool, micro: &mut Vec<Micro>, repeats: &mut Vec<Repeat>) -> Result<(), Error> {
    for step in steps {
        match step {
            Step::Loop(name) => {
                let k = app.loops.keys().position(|n| *n == name.text).unwrap_or(0) as u32;
                if share.sync_before.contains(&name.text) {
                    micro.push(Micro::Sync(2 * k));
                }
                micro.push(Micro::Loop(name.text.clone()));
                if share.sync_after.contains(&name.text) {
                    micro.push(Micro::Sync(2 * k + 1));
                }
            }
            Step::Assign(global, expression) => {
                let g = globals.iter().position(|(n, _)| *n == global.text).ok_or_else(|| Error::Config(format!("`{}` is not a global", global.text)))?;
                micro.push(Micro::Assign(g, app.constant(expression)?));
            }
            Step::Repeat(count, inner) => {
                let r = repeats.len();
                repeats.push(Repeat { count: *count, outermost: !inside });
                micro.push(Micro::Begin(r));
                let to = micro.len();
                flatten(app, share, inner, globals, true, micro, repeats)?;
                micro.push(Micro::End(r, to));
            }
            Step::Print(every, _) => micro.push(Micro::Print(*every, inside)),
        }
    }
    Ok(())
}

/// The hardware of `app`'s whole program, with the kernels' operators at `stages`.
pub fn compile_program<T: Element>(app: &Application<T>, stages: &Stages) -> Result<Compiled, Error> {
    compile_program_with(app, stages, 1)
}

/// [`compile_program`] with `pipelines` pipelines per loop (1 ..= 8).
pub fn compile_program_with<T: Element>(app: &Application<T>, stages: &Stages, pipelines: usize) -> Result<Compiled, Error> {
    compile_program_share(app, stages, pipelines, &NodeShare::default())
}

/// [`compile_program_with`] for one node of a partitioned application ([`NodeShare`]): its loops
/// issue only their set's first elements ([`Plan::with_extents`]), and it waits for its host at
/// the sync steps (`sync`, `sync_id` out, `sync_done` in; the host may write globals while it
/// waits).
pub fn compile_program_share<T: Element>(app: &Application<T>, stages: &Stages, pipelines: usize, share: &NodeShare) -> Result<Compiled, Error> {
    let plan = Plan::with_extents(app, adder_stages(stages), pipelines, &share.extents)?;
    let slot = slot_bits::<T>();
    let globals: Vec<(String, usize)> = app.global_ids().into_iter().map(|(n, _, dim)| (n, dim)).collect();
    let mut micro = vec![];
    let mut repeats = vec![];
    flatten(app, share, app.program(), &globals, false, &mut micro, &mut repeats)?;
    let mut loops: Vec<&str> = vec![];
    for m in &micro {
        if let Micro::Loop(name) = m {
            if !app.loops.contains_key(name) {
                return Err(Error::Config(format!("the program runs `{name}`, which is not a loop of the application")));
            }
            if !loops.contains(&name.as_str()) {
                loops.push(name);
            }
        }
    }
    let d = Design::new();
    let stores = Stores::new(&d, app, &plan, &loops);

    // ---- globals ----
    d.section("globals: registers the host sets, loops read and reductions write");
    let regs: Vec<_> = globals.iter().map(|(name, dim)| d.reg(&format!("{name}_reg"), dim * slot, 0)).collect();
    for ((name, _), r) in globals.iter().zip(&regs) {
        d.output(&format!("{name}_value"), r.q);
    }

    // ---- the step counter ----
    d.section(&format!("sequencer: {} steps", micro.len()));
    let start = d.input("start", 1);
    let iterations = d.input("iterations", 32);
    let sb = bits_for(micro.len() + 1);
    let step = d.reg("step", sb, 0);
    let running = d.reg("running", 1, 0);
    let launched = d.reg("launched", 1, 0);
    let at = |i: usize| running.q & step.q.eq(i as u32);
    let counters: Vec<_> = repeats.iter().enumerate().map(|(r, _)| d.reg(&format!("repeat{r}_count"), 32, 0)).collect();
    // An outermost repeat's count: `iterations`, or the file's when it is 0.
    let count_of = |r: usize| {
        let file = d.lit(repeats[r].count as u128, 32);
        if repeats[r].outermost {
            iterations.any().mux(iterations, file)
        } else {
            file
        }
    };
    let iteration = d.reg("iteration_count", 32, 0);
    let mut advance = d.lit(0, 1);
    let mut jump: Vec<(Sig, usize)> = vec![];

    // ---- loops ----
    let mut units = vec![];
    for name in &loops {
        let l = &app.loops[*name];
        let mine: Vec<usize> = micro.iter().enumerate().filter(|(_, m)| matches!(m, Micro::Loop(n) if n == name)).map(|(i, _)| i).collect();
        let here = mine.iter().fold(d.lit(0, 1), |acc, i| acc | at(*i));
        let go = (here & !launched.q).named(&format!("{name}_start"));
        let values: Vec<(usize, Sig)> = l
            .args
            .iter()
            .enumerate()
            .filter_map(|(k, arg)| if let Arg::Global(g, _) = *arg { Some((k, regs[globals.iter().position(|(n, _)| n == app.global_name(g)).unwrap()].q)) } else { None })
            .collect();
        let unit = match &l.body {
            Body::Kernel(_) => build_loop(&d, app, &plan, &stores, name, go, &values, stages)?,
            Body::Dense(body) => build_dense_loop(&d, app, &plan, &stores, name, go, body, stages)?,
        };
        let finished = here & launched.q & !unit.busy;
        advance = advance | finished;
        d.counter(&format!("{name}_runs"), finished);
        units.push((here, finished, unit));
    }
    launched.next_when(units.iter().fold(d.lit(0, 1), |acc, (_, f, _)| acc | *f), d.lit(0, 1)).next_when(units.iter().fold(d.lit(0, 1), |acc, (h, _, _)| acc | (*h & !launched.q)), d.lit(1, 1));

    // ---- the other steps ----
    let log_depth = (micro.iter().filter(|m| matches!(m, Micro::Print(..))).count() * repeats.iter().filter(|r| r.outermost).map(|r| r.count).sum::<usize>().max(1)).max(2).next_power_of_two();
    let log = Store::new(&d, "print_log", 48 + globals.iter().map(|(_, dim)| dim * slot).sum::<usize>(), 1, log_depth);
    let prints = d.reg("prints_count", bits_for(log_depth + 1), 0);
    let mut logging = d.lit(0, 1);
    // Per print step: the iteration modulo its period.
    let mut phases = vec![];
    let mut syncing = d.lit(0, 1);
    let mut sync_id = d.lit(0, 16);
    let sync_done = micro.iter().any(|m| matches!(m, Micro::Sync(_))).then(|| d.input("sync_done", 1));
    for (i, m) in micro.iter().enumerate() {
        match *m {
            Micro::Loop(_) => {}
            Micro::Sync(id) => {
                syncing = syncing | at(i);
                sync_id = at(i).mux(d.lit(id as u128, 16), sync_id);
                advance = advance | (at(i) & sync_done.expect("a sync step has its input"));
            }
            Micro::Assign(g, bits) => {
                let value = (1..globals[g].1).fold(d.lit(bits as u128, slot), |acc, _| d.lit(bits as u128, slot).cat(acc));
                regs[g].next_when(at(i), value);
                advance = advance | at(i);
            }
            Micro::Begin(r) => {
                counters[r].next_when(at(i), d.lit(0, 32));
                if repeats[r].outermost {
                    iteration.next_when(at(i), d.lit(1, 32));
                }
                advance = advance | at(i);
            }
            Micro::End(r, to) => {
                let again = (counters[r].q + 1u32).lt(count_of(r));
                counters[r].next_when(at(i) & again, counters[r].q + 1u32);
                if repeats[r].outermost {
                    iteration.next_when(at(i) & again, iteration.q + 1u32);
                }
                jump.push((at(i) & again, to));
                advance = advance | (at(i) & !again);
            }
            Micro::Print(every, inside) => {
                let fire = if inside && every > 1 {
                    let phase = d.reg(&format!("print{i}_phase"), bits_for(every + 1), 0);
                    phases.push((phase, every));
                    at(i) & phase.q.eq((every - 1) as u32)
                } else {
                    at(i)
                };
                logging = logging | fire;
                advance = advance | at(i);
            }
        }
    }
    // A phase counts an outermost repeat's iterations from 1, modulo the period.
    let (mut begin, mut again) = (d.lit(0, 1), d.lit(0, 1));
    for (i, m) in micro.iter().enumerate() {
        match *m {
            Micro::Begin(r) if repeats[r].outermost => begin = begin | at(i),
            Micro::End(r, _) if repeats[r].outermost => again = again | (at(i) & (counters[r].q + 1u32).lt(count_of(r))),
            _ => {}
        }
    }
    for (phase, every) in &phases {
        let wrap = phase.q.eq((*every - 1) as u32);
        phase.next_when(again, wrap.mux(d.lit(0, phase.q.width), phase.q + 1u32)).next_when(begin, d.lit(0, phase.q.width));
    }
    // An entry: the print step's number (16 bits), the iteration (32), then every global.
    let mut which = d.lit(0, 16);
    for (n, i) in micro.iter().enumerate().filter(|(_, m)| matches!(m, Micro::Print(..))).map(|(i, _)| i).enumerate() {
        which = at(i).mux(d.lit(n as u128, 16), which);
    }
    let all = regs.iter().map(|r| r.q).fold(iteration.q.cat(which), |lo, hi| hi.cat(lo));
    log.write(logging, prints.q.resize(log.address_bits()), all);
    log.host_ports(true);
    log.finish();
    prints.next_when(logging, prints.q + 1u32).next_when(start & !running.q, d.lit(0, prints.q.width));
    d.output("prints", prints.q);
    d.output("iteration", iteration.q);

    // Reductions write their globals when their loop finishes; the host writes a global while
    // the program is idle.
    for (name, (_, finished, unit)) in loops.iter().zip(&units) {
        for (k, sum) in &unit.results {
            let Arg::Global(x, _) = app.loops[*name].args[*k] else { continue };
            let g = globals.iter().position(|(n, _)| n == app.global_name(x)).expect("a register for every global");
            regs[g].next_when(*finished, *sum);
        }
    }
    if sync_done.is_some() {
        d.output("sync", syncing);
        d.output("sync_id", sync_id);
    }
    for (g, (name, dim)) in globals.iter().enumerate() {
        let en = d.input(&format!("{name}_wr_en"), 1);
        let idle = if sync_done.is_some() { !running.q | syncing } else { !running.q };
        regs[g].next_when(en & idle, d.input(&format!("{name}_wr_data"), dim * slot));
    }

    let last = micro.len();
    let mut next = step.q + 1u32;
    for (when, to) in &jump {
        next = when.mux(d.lit(*to as u128, sb), next);
    }
    step.next_when(advance | jump.iter().fold(d.lit(0, 1), |acc, (w, _)| acc | *w), next).next_when(start & !running.q, d.lit(0, sb));
    running.next_when(running.q & step.q.eq(last as u32), d.lit(0, 1)).next_when(start & !running.q, d.lit(1, 1));
    d.output("busy", running.q);
    stores.finish();
    drop(stores);
    // The edge that takes `start`; each step's edges (a loop's own and the one that sees it
    // finish; one for every other step); the edge that clears `running`.
    let loop_cycles: Vec<(String, usize)> = loops.iter().zip(&units).map(|(n, (_, _, u))| (n.to_string(), u.cycles + 1)).collect();
    let mut costs = vec![Cost::Cycles(1)];
    costs.extend(model(&micro, &mut 0, &repeats, &loop_cycles));
    costs.push(Cost::Cycles(1));
    let loops = loops.iter().map(|l| l.to_string()).collect();
    let mut compiled = Compiled { net: d.finish(), cycles: 0, plan, loops, costs };
    compiled.cycles = compiled.cycles_with(None);
    Ok(compiled)
}

/// The costs of the steps from `*i` to the end of the enclosing repeat (or the program).
fn model(micro: &[Micro], i: &mut usize, repeats: &[Repeat], loops: &[(String, usize)]) -> Vec<Cost> {
    let mut costs = vec![];
    while *i < micro.len() {
        let m = &micro[*i];
        *i += 1;
        match m {
            Micro::Loop(name) => costs.push(Cost::Cycles(loops.iter().find(|(n, _)| n == name).map_or(0, |(_, c)| *c))),
            Micro::Assign(..) | Micro::Print(..) => costs.push(Cost::Cycles(1)),
            Micro::Sync(id) => costs.push(Cost::Sync(*id)),
            Micro::Begin(r) => {
                let body = model(micro, i, repeats, loops);
                costs.push(Cost::Repeat { count: repeats[*r].count, outermost: repeats[*r].outermost, body });
            }
            Micro::End(..) => return costs,
        }
    }
    costs
}

/// The public description of `app`'s program compiled as module `module`.
pub fn program_spec<T: Element>(app: &Application<T>, module: &str, compiled: &Compiled) -> weft_hdl::export::ModuleSpec {
    weft_hdl::export::ModuleSpec {
        family: "app",
        name: module.to_string(),
        summary: format!("the whole program of {} ({} loops), compiled for its mesh", app.origin(), compiled.loops.len()),
        parameters: vec![
            ("precision".into(), T::PRECISION.name().into()),
            ("loops".into(), compiled.loops.join(", ")),
            ("cycles".into(), format!("{} from start until busy falls with the file's repeat counts", compiled.cycles)),
        ],
        hidden_ports: vec![],
    }
}

/// The Verilog of `compiled` (from [`compile_program`]) as module `module`.
pub fn program_verilog<T: Element>(app: &Application<T>, module: &str, compiled: &Compiled) -> Result<String, Error> {
    weft_hdl::export::export_netlist(&program_spec(app, module, compiled), &compiled.net).map_err(|e| Error::Config(e.0))
}
