//! The host of a compiled loop: it fills the memories from the application's data, maps and
//! schedules (translating element indices to the plan's addresses), runs the loop and reads back
//! what it wrote.

use std::collections::BTreeMap;

use num_bigint::BigUint;
use weft_hdl::netlist::eval::Evaluator;

use super::plan::Plan;
use super::program::Arg;
use super::run::{Application, Element};
use crate::Error;

/// A simulator of a compiled loop, as its host drives it: ports by name, values of any width.
pub trait LoopPorts {
    /// Drives input `port` with `value`; it holds until set again.
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

/// One entry of a compiled program's print log.
#[derive(Clone, Debug, PartialEq)]
pub struct Printed<T> {
    /// The `print` step's number in program order (from 0).
    pub step: usize,
    /// The iteration it was logged in: the outermost repeat's count, from 1.
    pub iteration: usize,
    /// Every global, by name.
    pub values: BTreeMap<String, Vec<T>>,
}

/// The host of a compiled loop: fills its memories from `app`'s current data and maps and the
/// plan's schedule, runs the loop, and reads back what it wrote.
pub struct Host<'a, T: Element> {
    /// The application whose data, maps and globals are loaded and compared.
    pub app: &'a Application<T>,
    /// The plan the hardware was compiled with: addresses and schedules.
    pub plan: &'a Plan,
    /// The loop to load and run.
    pub name: &'a str,
}

fn pack(values: impl DoubleEndedIterator<Item = u64>, bits: usize) -> BigUint {
    values.rev().fold(BigUint::default(), |acc, x| (acc << bits) | BigUint::from(x))
}

impl<T: Element> Host<'_, T> {
    fn slot() -> usize {
        T::PRECISION.bits()
    }

    /// Writes `rows` (address, word) through the `<prefix>_wr_*` port.
    fn write(sim: &mut dyn LoopPorts, prefix: &str, rows: impl Iterator<Item = (u32, BigUint)>) {
        let one = BigUint::from(1u8);
        for (addr, row) in rows {
            sim.set(&format!("{prefix}_wr_en"), &one);
            sim.set(&format!("{prefix}_wr_addr"), &BigUint::from(addr));
            sim.set(&format!("{prefix}_wr_data"), &row);
            sim.edge();
        }
        sim.set(&format!("{prefix}_wr_en"), &BigUint::default());
    }

    /// Loads every dat and map the loop uses, its globals and its schedule.
    pub fn load(&self, sim: &mut dyn LoopPorts) {
        sim.set("start", &BigUint::default());
        self.load_into(sim, &mut vec![], true);
    }

    /// [`Host::load`] skipping the memories named in `done` (and adding those it loads); the
    /// globals' `<global>_value` inputs too when `globals`.
    fn load_into(&self, sim: &mut dyn LoopPorts, done: &mut Vec<String>, globals: bool) {
        let l = &self.app.loops[self.name];
        let a = &self.app.app;
        for arg in &l.args {
            if let Arg::Direct(dat, _) | Arg::Indirect(dat, _, _, _) = *arg {
                let (name, set, dim) = a.dat_info(dat);
                if !done.contains(&name.to_string()) {
                    let address = &self.plan.layout(set).address;
                    let rows = a.values(dat).chunks(dim).zip(address).map(|(c, at)| (*at, pack(c.iter().map(|x| x.to_lane()), Self::slot())));
                    Self::write(sim, name, rows);
                    done.push(name.to_string());
                }
            }
            if let (Arg::Global(g, _), true) = (*arg, globals) {
                let value = pack(a.global_values(g).iter().map(|x| x.to_lane()), Self::slot());
                sim.set(&format!("{}_value", self.app.global_name(g)), &value);
            }
            if let Arg::Indirect(_, map, _, _) = *arg {
                let (name, from, to, mdim, values) = a.map_info(map);
                if !done.contains(&name.to_string()) {
                    let (source, target) = (self.plan.layout(from), self.plan.layout(to));
                    let ib = super::store::bits_for(target.capacity);
                    let rows = values.chunks(mdim).zip(&source.address).map(|(c, at)| (*at, pack(c.iter().map(|x| u64::from(target.address[*x as usize])), ib)));
                    Self::write(sim, name, rows);
                    done.push(name.to_string());
                }
            }
        }
        // A row of P slots a word, slot p at bits p·(1 + a): bit 0 set for an element, its
        // address above.
        let lay = self.plan.layout(l.set);
        let width = 1 + super::store::bits_for(lay.capacity);
        let slot = |s: &Option<u32>| s.map_or(BigUint::default(), |e| (BigUint::from(lay.address[e as usize]) << 1) | BigUint::from(1u8));
        let rows = self.plan.schedules[self.name].chunks(self.plan.pipelines).enumerate().map(|(r, row)| (r as u32, row.iter().rev().fold(BigUint::default(), |acc, s| (acc << width) | slot(s))));
        Self::write(sim, &format!("{}_schedule", self.name), rows);
    }

    /// Loads a compiled program: every memory of `loops`, their schedules, and every global.
    pub fn load_program(&self, sim: &mut dyn LoopPorts, loops: &[String]) {
        sim.set("start", &BigUint::default());
        let mut done = vec![];
        for name in loops {
            Host { app: self.app, plan: self.plan, name }.load_into(sim, &mut done, false);
        }
        for (name, g, _) in self.app.global_ids() {
            let value = pack(self.app.app.global_values(g).iter().map(|x| x.to_lane()), Self::slot());
            sim.set(&format!("{name}_wr_en"), &BigUint::from(1u8));
            sim.set(&format!("{name}_wr_data"), &value);
            sim.edge();
            sim.set(&format!("{name}_wr_en"), &BigUint::default());
        }
    }

    /// What a compiled program logged at its `print` steps: per entry, the step's number in
    /// program order, the iteration and every global by name.
    pub fn prints(&self, sim: &mut dyn LoopPorts) -> Vec<Printed<T>> {
        let field = |word: &BigUint, lo: usize, bits: usize| ((word >> lo) & ((BigUint::from(1u8) << bits) - 1u8)).iter_u64_digits().next().unwrap_or(0) as usize;
        let n = sim.get("prints").iter_u64_digits().next().unwrap_or(0) as usize;
        let globals = self.app.global_ids();
        (0..n)
            .map(|i| {
                sim.set("print_log_rd_addr", &BigUint::from(i));
                sim.edge();
                let word = sim.get("print_log_rd_data");
                let (step, iteration) = (field(&word, 0, 16), field(&word, 16, 32));
                let mut rest = word >> 48;
                let mut values = BTreeMap::new();
                for (name, _, dim) in &globals {
                    values.insert(name.clone(), Self::values(&rest, *dim));
                    rest >>= dim * Self::slot();
                }
                Printed { step, iteration, values }
            })
            .collect()
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
        let value = sim.get(&format!("{name}_result"));
        Self::values(&value, self.app.global(name).map_or(0, <[T]>::len))
    }

    /// `dim` values packed in `word`, the first in the low bits.
    fn values(word: &BigUint, dim: usize) -> Vec<T> {
        let mask = (BigUint::from(1u8) << Self::slot()) - 1u8;
        (0..dim).map(|i| T::from_lane(((word >> (i * Self::slot())) & &mask).iter_u64_digits().next().unwrap_or(0))).collect()
    }

    /// A compiled program's global `name` (its `<name>_value` output).
    pub fn read_global(&self, sim: &mut dyn LoopPorts, name: &str) -> Vec<T> {
        let value = sim.get(&format!("{name}_value"));
        Self::values(&value, self.app.global(name).map_or(0, <[T]>::len))
    }

    /// Writes dat `name` into the hardware's memory: `values`, element by element (`dim` values
    /// each), through its write port.
    pub fn write_dat(&self, sim: &mut dyn LoopPorts, name: &str, values: &[T]) {
        let a = &self.app.app;
        let dat = self.app.dat_id(name).expect("a dat of the application");
        let (_, set, dim) = a.dat_info(dat);
        let rows = values.chunks(dim).zip(&self.plan.layout(set).address).map(|(c, at)| (*at, pack(c.iter().map(|x| x.to_lane()), Self::slot())));
        Self::write(sim, name, rows);
    }

    /// Sets a compiled program's global `name` through `<name>_wr_*` (while it is idle or waits
    /// at a sync step).
    pub fn write_global(&self, sim: &mut dyn LoopPorts, name: &str, values: &[T]) {
        sim.set(&format!("{name}_wr_data"), &pack(values.iter().map(|x| x.to_lane()), Self::slot()));
        sim.set(&format!("{name}_wr_en"), &BigUint::from(1u8));
        sim.edge();
        sim.set(&format!("{name}_wr_en"), &BigUint::default());
    }

    /// The values of dat `name` as the hardware holds them, in element order.
    pub fn read(&self, sim: &mut dyn LoopPorts, name: &str) -> Vec<T> {
        let a = &self.app.app;
        let dat = self.app.dat_id(name).expect("a dat of the application");
        let (_, set, dim) = a.dat_info(dat);
        let mut out = vec![];
        for at in &self.plan.layout(set).address {
            sim.set(&format!("{name}_rd_addr"), &BigUint::from(*at));
            sim.edge();
            out.extend(Self::values(&sim.get(&format!("{name}_rd_data")), dim));
        }
        out
    }
}
