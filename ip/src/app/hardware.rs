//! A loop of an application compiled to hardware: its data and maps in on-chip memories, a
//! sequencer that issues one element per cycle, gathers (a map row read, then the data rows it
//! names), the loop's kernel as a pipeline, and the write-back of what the kernel writes.
//!
//! This is the compiler's first part: loops whose arguments are read directly or through maps
//! and written directly (`read`, `write`, `rw` on the loop's own set) — `save_soln`, `adt_calc`
//! and `update` without its reduction. Increments through maps (which need the λ schedule) and
//! global reductions are refused by name.
//!
//! Ports: `start` (a one-cycle pulse) runs the loop over every element; `busy` is high until the
//! last result is written. The host fills and reads the memories through `<dat>_wr_en`,
//! `<dat>_wr_addr`, `<dat>_wr_data` (one element's values, component 0 in the low bits) and
//! `<dat>_rd_addr` → `<dat>_rd_data` (a cycle later: every read port is registered, so each
//! memory maps to block RAM), and fills maps through `<map>_wr_*` (an element's entries,
//! entry 0 in the low bits), while the loop is idle.

use std::rc::Rc;

use num_bigint::BigUint;
use weft_hdl::netlist::eval::Evaluator;

use weft_hdl::netlist::{Design, Mem, Netlist, Sig};
use weft_hdl::pipeline::Stages;

use super::kernel::Lane;
use super::program::{Access, Arg, DatId, MapId};
use super::run::{Application, Element};
use crate::Error;

fn bits_for(n: usize) -> usize {
    (usize::BITS - n.saturating_sub(1).max(1).leading_zeros()) as usize
}

/// The number of memory words that hold `n` elements (a power of two).
fn depth(n: usize) -> usize {
    n.max(2).next_power_of_two()
}

/// The hardware of loop `name` of `app`, with the kernel's operators at `stages`; returns the
/// design and the clock edges from the one that takes `start` until `busy` falls: that edge, one
/// element issued per cycle, two cycles of gather (map row, data row) and the pipeline's latency.
pub fn compile_loop<T: Element>(app: &Application<T>, name: &str, stages: &Stages) -> Result<(Netlist, usize), Error> {
    let l = app.loops.get(name).ok_or_else(|| Error::Config(format!("no loop `{name}`")))?;
    let a = &app.app;
    let slot = match T::PRECISION {
        super::text::Precision::F64 => 64,
        super::text::Precision::F32 => 32,
    };
    let n = a.set_size(l.set);
    let (kernel_net, schedule) = l.kernel.kernel.netlist(stages)?;
    let latency = schedule.latency;
    let d = Design::new();

    // The dat each argument reaches (`None`: a global), checked against what the compiler builds.
    let mut targets: Vec<Option<DatId>> = vec![];
    for (k, arg) in l.args.iter().enumerate() {
        let (dat, via) = match *arg {
            Arg::Direct(dat, _) => (Some(dat), false),
            Arg::Indirect(dat, _, _, _) => (Some(dat), true),
            Arg::Global(_, Access::Read | Access::Inc) => (None, false),
            Arg::Global(_, access) => return Err(Error::Config(format!("loop `{name}`, argument {k}: a {access:?} reduction is not compiled to hardware yet (allowed: read and inc globals)"))),
        };
        match (arg.access(), via) {
            (Access::Read | Access::Inc, _) if dat.is_none() => {}
            (Access::Read, _) | (Access::Write | Access::Rw, false) => {}
            (access, _) => {
                return Err(Error::Config(format!("loop `{name}`, argument {k}: {access:?} through a map is not compiled to hardware yet (allowed: read through a map; read, write, rw directly)")))
            }
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

    // ---- memories: one per dat and per map the loop uses ----
    let mut dats: Vec<(DatId, Mem)> = vec![];
    for dat in targets.iter().flatten() {
        if dats.iter().any(|(x, _)| x == dat) {
            continue;
        }
        let (dat_name, set, dim) = a.dat_info(*dat);
        d.section(&format!("dat {dat_name}: {} elements of {dim} values", a.set_size(set)));
        let words = depth(a.set_size(set));
        let mem = d.memory(&format!("{dat_name}_mem"), dim * slot, words);
        // Every read port is registered, so the memory maps to block RAM.
        let host_rd = d.input(&format!("{dat_name}_rd_addr"), bits_for(words));
        d.output(&format!("{dat_name}_rd_data"), mem.read_registered(d.lit(1, 1), host_rd, &format!("{dat_name}_rd_value")));
        dats.push((*dat, mem));
    }
    let mut maps: Vec<(MapId, Mem, usize)> = vec![];
    for arg in &l.args {
        if let Arg::Indirect(_, map, _, _) = *arg {
            if maps.iter().any(|(x, _, _)| *x == map) {
                continue;
            }
            let (map_name, _, to, mdim, _) = a.map_info(map);
            d.section(&format!("map {map_name}: {n} elements of {mdim} entries"));
            let ib = bits_for(depth(a.set_size(to)));
            let mem = d.memory(&format!("{map_name}_mem"), mdim * ib, depth(n));
            let (en, addr, data) = (d.input(&format!("{map_name}_wr_en"), 1), d.input(&format!("{map_name}_wr_addr"), bits_for(depth(n))), d.input(&format!("{map_name}_wr_data"), mdim * ib));
            mem.write(en, addr, data);
            maps.push((map, mem, ib));
        }
    }

    // ---- sequencer: one element per cycle from `start` ----
    d.section("sequencer");
    let eb = bits_for(depth(n));
    let start = d.input("start", 1);
    let issuing = d.reg("issuing", 1, 0);
    let element = d.reg("element", eb, 0);
    let last = element.q.eq(element.q.lit((n - 1) as u128, eb));
    let begin = start & !issuing.q;
    issuing.next_when(issuing.q & last, d.lit(0, 1)).next_when(begin, d.lit(1, 1));
    element.next_when(issuing.q & !last, element.q + 1u32).next_when(begin, d.lit(0, eb));

    // ---- gather: map rows at the element, then the data rows they name ----
    d.section("gather: map rows at the element, then the data rows they name");
    let delayed = |x: Sig<'_>, name: &str| {
        let w = d.net().history(x.wire, None, None);
        d.sig(w).named(name)
    };
    let element_1 = delayed(element.q, "element_d1");
    let mut rows: Vec<Sig> = vec![];
    for (k, arg) in l.args.iter().enumerate() {
        let Some(target) = targets[k] else {
            // A global: its value, set by the host before `start`.
            let Arg::Global(g, _) = *arg else { unreachable!() };
            let (global, dim) = (app.global_name(g), app.app.global_values(g).len());
            rows.push(d.input(&format!("{global}_value"), dim * slot));
            continue;
        };
        let mem = dats.iter().find(|(x, _)| *x == target).unwrap().1;
        let ab = bits_for(depth(a.set_size(a.dat_info(target).1)));
        let addr = match *arg {
            Arg::Indirect(_, map, i, _) => {
                let (_, m, ib) = maps.iter().find(|(x, _, _)| *x == map).unwrap();
                let row = m.read_registered(d.lit(1, 1), element.q, &format!("{}_row", l.kernel_arg_name(k)));
                row.bits(i * ib, *ib).resize(ab)
            }
            _ => element_1.resize(ab),
        };
        rows.push(mem.read_registered(d.lit(1, 1), addr, &format!("{}_value", l.kernel_arg_name(k))));
    }

    // ---- the kernel pipeline ----
    d.section(&format!("kernel {name}: {latency} cycles"));
    let lanes: Vec<Sig> = l
        .kernel
        .lanes
        .iter()
        .map(|lane| match *lane {
            Lane::Arg(k, i) => rows[k].bits(i * slot, slot),
            Lane::Const(bits) => d.lit(bits as u128, slot),
        })
        .collect();
    let kernel = d.instance(&Rc::new(kernel_net), name, "kernel");
    let gathered = delayed(delayed(issuing.q, "issued_d1"), "gathered");
    let data = lanes.iter().rev().copied().reduce(|hi, lo| hi.cat(lo)).unwrap();
    let width = kernel.input("s_axis_tdata").width;
    kernel.input("s_axis_tdata").define(data.resize(width));
    kernel.input("s_axis_tvalid").define(gathered);
    kernel.input("s_axis_tlast").define(d.lit(0, 1));
    kernel.input("m_axis_tready").define(d.lit(1, 1));

    // ---- write-back ----
    d.section("write-back: what the kernel writes, at the element that issued it");
    let done = kernel.output("m_axis_tvalid");
    let out = kernel.output("m_axis_tdata");
    // The pipeline never stalls (its output is always taken): the element index travels beside it.
    let mut element_out = element_1;
    for c in 1..latency + 2 {
        element_out = delayed(element_out, &format!("element_d{}", c + 1));
    }
    for (dat, mem) in &dats {
        let (dat_name, set, dim) = a.dat_info(*dat);
        let ab = bits_for(depth(a.set_size(set)));
        let (en, addr, host) = (d.input(&format!("{dat_name}_wr_en"), 1), d.input(&format!("{dat_name}_wr_addr"), ab), d.input(&format!("{dat_name}_wr_data"), dim * slot));
        match (0..l.args.len()).find(|k| targets[*k] == Some(*dat) && matches!(l.args[*k].access(), Access::Write | Access::Rw)) {
            None => mem.write(en, addr, host),
            Some(k) => {
                let value = (0..dim).rev().map(|i| out.bits(l.kernel.outputs.iter().position(|o| *o == (k, i)).unwrap() * slot, slot)).reduce(|hi, lo| hi.cat(lo)).unwrap();
                mem.write(done | en, done.mux(element_out.resize(ab), addr), done.mux(value, host));
            }
        }
    }
    // ---- global reductions ----
    let format = if slot == 64 { weft_hdl::float::FloatFormat::BINARY64 } else { weft_hdl::float::FloatFormat::BINARY32 };
    let adder = stages.of(weft_hdl::float::FloatOperator::Add).max(1);
    let mut reducing = d.lit(0, 1);
    for (k, arg) in l.args.iter().enumerate() {
        if let Arg::Global(g, Access::Inc) = *arg {
            let global = app.global_name(g);
            d.section(&format!("reduction of {global}: {adder}-way interleaved partial sums, folded in order"));
            let dim = app.app.global_values(g).len();
            let mut sums = vec![];
            for i in 0..dim {
                let j = l.kernel.outputs.iter().position(|o| *o == (k, i)).ok_or_else(|| Error::Config(format!("loop `{name}`: the kernel does not add to component {i} of `{global}`")))?;
                let (sum, working) = super::reduction::reduce(&d, &format!("{global}{i}"), format, adder, begin, done, out.bits(j * slot, slot), rows[k].bits(i * slot, slot), n)?;
                sums.push(sum);
                reducing = reducing | working;
            }
            d.output(&format!("{global}_result"), sums.into_iter().rev().reduce(|hi, lo| hi.cat(lo)).unwrap());
        }
    }
    // Elements issued and not yet written.
    let ob = bits_for(n + 1) + 1;
    let outstanding = d.reg("outstanding", ob, 0);
    outstanding.next(outstanding.q + issuing.q.zext(ob) - done.zext(ob));
    d.output("busy", issuing.q | outstanding.q.any() | reducing);
    let fold = if l.args.iter().any(|x| matches!(x, Arg::Global(_, Access::Inc))) { fold_cycles(n, adder) } else { 0 };
    Ok((d.finish(), 1 + n + 2 + latency + fold))
}

/// Cycles a reduction adds after the last value: the first fold waits for every partial (A − 1
/// cycles, then up to A − 1 more for partial 0 to come round), then A steps of A + 1 cycles.
fn fold_cycles(n: usize, a: usize) -> usize {
    // The last value is at c = n − 1; folding begins at the first c ≥ n + A with c mod A = 0
    // and ends A·(A + 1) cycles later, when `busy` falls.
    let begin = (n + a).div_ceil(a) * a;
    begin + a * (a + 1) - (n - 1)
}

/// The public description of loop `name` compiled as module `module`.
pub fn loop_spec<T: Element>(app: &Application<T>, name: &str, module: &str, stages: &Stages) -> Result<weft_hdl::export::ModuleSpec, Error> {
    let (_, cycles) = compile_loop(app, name, stages)?;
    let l = &app.loops[name];
    Ok(weft_hdl::export::ModuleSpec {
        family: "app",
        name: module.to_string(),
        summary: format!("loop `{name}` over {} elements, compiled from its application file", app.app.set_size(l.set)),
        parameters: vec![("precision".into(), T::PRECISION.name().into()), ("cycles".into(), format!("{cycles} from start until busy falls"))],
        hidden_ports: vec![],
    })
}

/// The Verilog of loop `name` compiled as [`compile_loop`] builds it, under `spec`.
pub fn loop_verilog<T: Element>(app: &Application<T>, name: &str, stages: &Stages, spec: &weft_hdl::export::ModuleSpec) -> Result<String, Error> {
    let (net, _) = compile_loop(app, name, stages)?;
    weft_hdl::export::export_netlist(spec, &net).map_err(|e| Error::Config(e.0))
}

/// A simulator of a compiled loop, as its host drives it: ports by name, values of any width.
pub trait LoopPorts {
    fn set(&mut self, port: &str, value: &BigUint);
    /// Settles and reads an output.
    fn get(&mut self, port: &str) -> BigUint;
    /// One rising clock edge.
    fn edge(&mut self);
}

impl LoopPorts for Evaluator {
    fn set(&mut self, port: &str, value: &BigUint) {
        let w = self.input(port).unwrap_or_else(|| panic!("the loop has no input `{port}`"));
        self.set_big(w, value);
    }
    fn get(&mut self, port: &str) -> BigUint {
        self.settle();
        self.get_output_big(port)
    }
    fn edge(&mut self) {
        self.settle();
        self.clock(false);
    }
}

/// The host of a compiled loop: fills its memories from `app`'s current data and maps, runs the
/// loop, and reads back what it wrote.
pub struct Host<'a, T: Element> {
    pub app: &'a Application<T>,
    pub name: &'a str,
}

impl<T: Element> Host<'_, T> {
    fn slot() -> usize {
        match T::PRECISION {
            super::text::Precision::F64 => 64,
            super::text::Precision::F32 => 32,
        }
    }

    fn write(sim: &mut dyn LoopPorts, prefix: &str, rows: impl Iterator<Item = BigUint>) {
        let one = BigUint::from(1u8);
        for (e, row) in rows.enumerate() {
            sim.set(&format!("{prefix}_wr_en"), &one);
            sim.set(&format!("{prefix}_wr_addr"), &BigUint::from(e));
            sim.set(&format!("{prefix}_wr_data"), &row);
            sim.edge();
        }
        sim.set(&format!("{prefix}_wr_en"), &BigUint::default());
    }

    /// Loads every dat and map the loop uses.
    pub fn load(&self, sim: &mut dyn LoopPorts) {
        let l = &self.app.loops[self.name];
        let a = &self.app.app;
        let mut done: Vec<String> = vec![];
        sim.set("start", &BigUint::default());
        for arg in &l.args {
            if let Arg::Direct(dat, _) | Arg::Indirect(dat, _, _, _) = *arg {
                let (name, _, dim) = a.dat_info(dat);
                if !done.contains(&name.to_string()) {
                    let rows = a.values(dat).chunks(dim).map(|c| c.iter().rev().fold(BigUint::default(), |acc, x| (acc << Self::slot()) | BigUint::from(x.to_lane()))).collect::<Vec<_>>();
                    Self::write(sim, name, rows.into_iter());
                    done.push(name.to_string());
                }
            }
            if let Arg::Global(g, _) = *arg {
                let value = a.global_values(g).iter().rev().fold(BigUint::default(), |acc, x| (acc << Self::slot()) | BigUint::from(x.to_lane()));
                sim.set(&format!("{}_value", self.app.global_name(g)), &value);
            }
            if let Arg::Indirect(_, map, _, _) = *arg {
                let (name, _, to, mdim, values) = a.map_info(map);
                if !done.contains(&name.to_string()) {
                    let ib = bits_for(depth(a.set_size(to)));
                    let rows = values.chunks(mdim).map(|c| c.iter().rev().fold(BigUint::default(), |acc, x| (acc << ib) | BigUint::from(*x))).collect::<Vec<_>>();
                    Self::write(sim, name, rows.into_iter());
                    done.push(name.to_string());
                }
            }
        }
    }

    /// Pulses `start` and clocks until `busy` falls; returns the edges from the one that takes
    /// `start`.
    pub fn run(&self, sim: &mut dyn LoopPorts, limit: usize) -> Result<usize, Error> {
        sim.set("start", &BigUint::from(1u8));
        sim.edge();
        sim.set("start", &BigUint::default());
        let mut cycles = 1;
        while sim.get("busy") != BigUint::default() {
            if cycles > limit {
                return Err(Error::Mismatch(format!("loop `{}` still busy after {limit} cycles", self.name)));
            }
            sim.edge();
            cycles += 1;
        }
        Ok(cycles)
    }

    /// What the loop's reduction of global `name` gives (after [`Host::run`]).
    pub fn global(&self, sim: &mut dyn LoopPorts, name: &str) -> Vec<T> {
        let mask = (BigUint::from(1u8) << Self::slot()) - 1u8;
        let value = sim.get(&format!("{name}_result"));
        let dim = self.app.global(name).map_or(0, <[T]>::len);
        (0..dim).map(|i| T::from_lane(((&value >> (i * Self::slot())) & &mask).iter_u64_digits().next().unwrap_or(0))).collect()
    }

    /// The values of dat `name` as the hardware holds them.
    pub fn read(&self, sim: &mut dyn LoopPorts, name: &str) -> Vec<T> {
        let a = &self.app.app;
        let dat = self.app.dat_id(name).expect("a dat of the application");
        let (_, set, dim) = a.dat_info(dat);
        let mask = (BigUint::from(1u8) << Self::slot()) - 1u8;
        let mut out = vec![];
        for e in 0..a.set_size(set) {
            sim.set(&format!("{name}_rd_addr"), &BigUint::from(e));
            sim.edge();
            let row = sim.get(&format!("{name}_rd_data"));
            for i in 0..dim {
                out.push(T::from_lane(((&row >> (i * Self::slot())) & &mask).iter_u64_digits().next().unwrap_or(0)));
            }
        }
        out
    }
}
