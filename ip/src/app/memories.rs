//! What the compiler builds for a loop, and the memories of a design: one store per dat and
//! per map ([`Store`]), banked as the plan says.

use weft_hdl::float::FloatOperator;
use weft_hdl::netlist::Design;
use weft_hdl::pipeline::Stages;

use super::plan::Plan;
use super::program::{Access, Arg, DatId, MapId};
use super::run::{Application, Element};
use super::store::{bits_for, Store};
use crate::Error;

/// The adder stages of the accumulators and reductions.
pub(super) fn adder_stages(stages: &Stages) -> usize {
    stages.of(FloatOperator::Add).max(1)
}

pub(super) fn slot_bits<T: Element>() -> usize {
    T::PRECISION.bits()
}

/// Checks what the compiler builds for loop `name`; returns the dat each argument reaches
/// (`None`: a global).
pub(super) fn targets<T: Element>(app: &Application<T>, name: &str) -> Result<Vec<Option<DatId>>, Error> {
    let l = app.loops.get(name).ok_or_else(|| Error::Config(format!("no loop `{name}`")))?;
    let a = &app.app;
    let kernel = l.kernel(name)?;
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
            if let Some(i) = (0..dim).find(|i| !kernel.outputs.contains(&(k, *i))) {
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
    /// (or, with several pipelines, written) is banked as its set's layout says; other memories
    /// have one bank.
    pub fn new<T: Element>(d: &'d Design, app: &Application<T>, plan: &Plan, loops: &[&str]) -> Stores<'d> {
        let a = &app.app;
        let slot = slot_bits::<T>();
        let mut stores = Stores { dats: vec![], maps: vec![] };
        let written = |dat: DatId| app.loops.values().flat_map(|l| &l.args).any(|arg| matches!(*arg, Arg::Direct(x, Access::Write | Access::Rw) if x == dat));
        let incremented = |dat: DatId| app.loops.values().flat_map(|l| &l.args).any(|arg| matches!(*arg, Arg::Direct(x, Access::Inc) | Arg::Indirect(x, _, _, Access::Inc) if x == dat));
        for name in loops {
            for arg in &app.loops[*name].args {
                if let Arg::Direct(dat, _) | Arg::Indirect(dat, _, _, _) = *arg {
                    if !stores.dats.iter().any(|(x, _)| *x == dat) {
                        let (dat_name, set, dim) = a.dat_info(dat);
                        let lay = plan.layout(set);
                        // Several pipelines write a datum in one cycle, to different banks.
                        let banks = if incremented(dat) || plan.pipelines > 1 && written(dat) { lay.banks } else { 1 };
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

    pub fn map(&self, map: MapId) -> &Store<'d> {
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
