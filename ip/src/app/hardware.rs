//! A loop of an application compiled to hardware: its data, maps and schedule in on-chip
//! memories (laid out by [`super::plan`]), and the loop's datapath: P pipelines, each taking one slot of a schedule row a cycle, gathering
//! (schedule word, map row, data row), running the kernel and writing back; an accumulator per
//! memory bank for what they increment; global reductions. A whole program is built over the same memories by
//! [`super::sequencer`].
//!
//! Compiled: arguments read directly or through maps; written or rw directly; incremented
//! directly or through maps; `read`, `inc`, `min` and `max` globals. Writes through maps and a
//! datum both incremented and read in one loop are refused by name.
//!
//! Ports: `start` (a one-cycle pulse) runs the loop over its schedule; `busy` is high until the
//! last result is written. The host fills the memories while the loop is idle: `<dat>_wr_*`
//! (one element's values, component 0 in the low bits, at the element's address), `<map>_wr_*`
//! (an element's entries as addresses, entry 0 in the low bits), `<loop>_schedule_wr_*` (a row
//! of P slots, slot p at bits p·(1 + a): bit 0 set for an element, its a-bit address above) and
//! reads data back through `<dat>_rd_addr` → `<dat>_rd_data` a cycle later; `<global>_value` in,
//! `<global>_result` out; counters `<loop>_elements` and `<loop>_noops` (slots issued with an
//! element and without), and `<loop>_hazards` and `<loop>_bank_conflicts` for a loop that
//! increments.

use weft_hdl::netlist::{Design, Netlist, Sig};
use weft_hdl::pipeline::Stages;

use super::memories::{adder_stages, slot_bits, targets, Stores};
use super::plan::Plan;
use super::program::{Access, Arg};
use super::run::{Application, Body, Element};
use crate::Error;

/// A compiled loop: its netlist, the cycles from the edge that takes `start` until `busy` falls,
/// and the plan its host follows.
pub struct Compiled {
    /// The hardware: memories, datapath (or sequencer) and ports.
    pub net: Netlist,
    /// Cycles from the edge that takes `start` until `busy` falls, with the file's counts.
    pub cycles: usize,
    /// Where every element lives and each loop's schedule.
    pub plan: Plan,
    /// The loops built, in the order they first run.
    pub loops: Vec<String>,
    /// What the cycles are made of (a program's steps and repeats).
    pub costs: Vec<Cost>,
}

/// The cycles of a compiled program's parts, from the schedules and pipeline depths.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Cost {
    /// A fixed number of cycles (a loop run, or one sequencer step).
    Cycles(usize),
    /// A sync step with its id: one cycle, the edge that takes `sync_done` (the wait before it
    /// is not counted).
    Sync(u32),
    /// A repeat: its count (an outermost repeat's count can be set when starting) and body.
    Repeat {
        /// Passes through the body, as the file gives it.
        count: usize,
        /// An outermost repeat, whose count the `iterations` input can replace.
        outermost: bool,
        /// The cycles of one pass.
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
                    Cost::Sync(_) => 1,
                    // Its begin step, then per pass the body and the end step.
                    Cost::Repeat { count, outermost, body } => 1 + if *outermost { iterations.unwrap_or(*count) } else { *count } * (sum(body, iterations) + 1),
                })
                .sum()
        }
        sum(&self.costs, iterations)
    }

    /// The run cut at its sync steps, with the outermost repeats run `iterations` times: per
    /// stretch, the cycles from the previous sync step's `sync_done` edge (or the edge that
    /// takes `start`) up to the sync step, and that step's id (`None` for the last stretch, up
    /// to `busy` falling). Without sync steps, one stretch of [`Compiled::cycles_with`].
    pub fn phases(&self, iterations: Option<usize>) -> Vec<(usize, Option<u32>)> {
        fn walk(costs: &[Cost], iterations: Option<usize>, open: &mut usize, out: &mut Vec<(usize, Option<u32>)>) {
            for c in costs {
                match c {
                    Cost::Cycles(n) => *open += n,
                    Cost::Sync(id) => {
                        out.push((*open, Some(*id)));
                        *open = 1;
                    }
                    Cost::Repeat { count, outermost, body } => {
                        *open += 1;
                        for _ in 0..if *outermost { iterations.unwrap_or(*count) } else { *count } {
                            walk(body, iterations, open, out);
                            *open += 1;
                        }
                    }
                }
            }
        }
        let (mut open, mut out) = (0, vec![]);
        walk(&self.costs, iterations, &mut open, &mut out);
        out.push((open, None));
        out
    }
}

/// What a performance model needs of loop `name`: its kernel's latency at `stages`, whether it
/// increments a datum, and whether it sums a global.
pub fn loop_shape<T: Element>(app: &Application<T>, name: &str, stages: &Stages) -> Result<(usize, bool, bool), Error> {
    let l = app.loops.get(name).ok_or_else(|| Error::Config(format!("no loop `{name}`")))?;
    let latency = l.kernel(name)?.kernel.netlist(stages)?.1.latency;
    let increments = l.args.iter().any(|arg| matches!(arg, Arg::Direct(_, Access::Inc) | Arg::Indirect(_, _, _, Access::Inc)));
    let reduces = l.args.iter().any(|arg| matches!(arg, Arg::Global(_, Access::Inc)));
    Ok((latency, increments, reduces))
}

/// The hardware of loop `name` of `app`, with the kernel's operators at `stages`.
pub fn compile_loop<T: Element>(app: &Application<T>, name: &str, stages: &Stages) -> Result<Compiled, Error> {
    compile_loop_with(app, name, stages, 1)
}

/// [`compile_loop`] with `pipelines` pipelines (1 ..= 8).
pub fn compile_loop_with<T: Element>(app: &Application<T>, name: &str, stages: &Stages, pipelines: usize) -> Result<Compiled, Error> {
    let l = app.loops.get(name).ok_or_else(|| Error::Config(format!("no loop `{name}`")))?;
    if matches!(l.body, Body::Kernel(_)) {
        targets(app, name)?;
    }
    let plan = Plan::with_pipelines(app, adder_stages(stages), pipelines)?;
    let d = Design::new();
    let stores = Stores::new(&d, app, &plan, &[name]);
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
    let unit = match &l.body {
        Body::Kernel(_) => super::datapath::build_loop(&d, app, &plan, &stores, name, start, &globals, stages)?,
        Body::Dense(body) => super::dense_loop::build_dense_loop(&d, app, &plan, &stores, name, start, body, stages)?,
    };
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

/// The public description of loop `name`, compiled as `compiled` (from [`compile_loop`]), as
/// module `module`.
pub fn loop_spec<T: Element>(app: &Application<T>, name: &str, module: &str, compiled: &Compiled) -> weft_hdl::export::ModuleSpec {
    let l = &app.loops[name];
    let mut parameters = vec![("precision".to_string(), T::PRECISION.name().to_string())];
    if compiled.plan.pipelines > 1 {
        parameters.push(("pipelines".into(), compiled.plan.pipelines.to_string()));
    }
    parameters.push(("cycles".into(), format!("{} from start until busy falls", compiled.cycles)));
    weft_hdl::export::ModuleSpec {
        family: "app",
        name: module.to_string(),
        summary: format!("loop `{name}` over {} elements, compiled from its application file", app.app.set_size(l.set)),
        parameters,
        hidden_ports: vec![],
    }
}

/// The Verilog of `compiled` under `spec`.
pub fn loop_verilog(compiled: &Compiled, spec: &weft_hdl::export::ModuleSpec) -> Result<String, Error> {
    weft_hdl::export::export_netlist(spec, &compiled.net).map_err(|e| Error::Config(e.0))
}
