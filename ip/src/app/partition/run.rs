//! The partitioned reference: an application's program run over the parts of a [`Partition`]
//! in software, as the nodes run it — the bit-exact target of the distributed hardware.
//!
//! Each part keeps its own copy of every dat. Elements a part neither owns nor imports hold NaN
//! from the start, so a missing halo entry shows as NaN in a result instead of silently reading
//! the initial mesh. For every loop step of the program, part by part:
//!
//! 1. the part runs the loop over the elements it executes ([`Halo::executed`]: the owned
//!    ones in ascending order, then — when the loop writes through a map — its exec halo);
//! 2. each reduced global (`Inc`, `Min`, `Max`) starts at the operator's identity on every part
//!    (+0, +∞, −∞), and the parts' results are combined by the [`Fabric`] — for a torus, in the
//!    collective unit's order ([`unit_combine`]) — then `old ∘ combined` is the global's new
//!    value on every node;
//! 3. after the loop, every dat it wrote that some loop reads on elements their node does not
//!    own ([`Halo::read_remotely`]) is refreshed in every part's import halo from the elements'
//!    owners (owner to reader, OP2's exchange), by the [`Fabric`].

use std::collections::BTreeMap;

use super::super::program::{Access, Arg, SetId};
use super::super::run::{Application, Element};
use super::halo::Halo;
use super::Partition;
use crate::router::RouterConfig;
use crate::system::allreduce::{Collective, ElementType, ReduceOp};
use crate::Error;

/// How the parts of a partitioned run talk: in memory ([`InMemory`]), or as packets through a
/// simulated torus (`weft_sim`'s mesh applications).
pub trait Fabric<T: Element> {
    /// Combines the parts' results (indexed by part) of a reduction of kind `Inc`, `Min` or
    /// `Max`.
    fn combine(&mut self, acc: Access, parts: &[Vec<T>]) -> Result<Vec<T>, Error>;
    /// Copies dat `dat` (on set `set`, `dim` values an element) into every part's import halo
    /// from the elements' owners.
    fn refresh(&mut self, dat: &str, set: SetId, dim: usize, values: &mut [BTreeMap<String, Vec<T>>], partition: &Partition, halo: &Halo) -> Result<(), Error>;
}

/// The parts in one memory: reductions combined in the collective unit's order on the torus
/// `config` ([`unit_combine`]), halos copied from the owners.
pub struct InMemory<'a> {
    /// The torus the parts stand for (part `n` on node `n`).
    pub config: &'a RouterConfig,
}

impl<T: Element> Fabric<T> for InMemory<'_> {
    fn combine(&mut self, acc: Access, parts: &[Vec<T>]) -> Result<Vec<T>, Error> {
        Ok(unit_combine(self.config)(acc, parts))
    }

    fn refresh(&mut self, dat: &str, set: SetId, dim: usize, values: &mut [BTreeMap<String, Vec<T>>], partition: &Partition, halo: &Halo) -> Result<(), Error> {
        for p in 0..partition.parts {
            for &e in &halo.import[p][set.index()] {
                let o = partition.owner[set.index()][e as usize] as usize;
                let (lo, hi) = (e as usize * dim, (e as usize + 1) * dim);
                let fresh = values[o][dat][lo..hi].to_vec();
                values[p].get_mut(dat).ok_or_else(|| Error::Config(format!("no dat `{dat}`")))?[lo..hi].copy_from_slice(&fresh);
            }
        }
        Ok(())
    }
}

/// Every part's dats after a partitioned run, by dat name; and the assembled values.
pub struct Parts<T> {
    /// `[part][dat name]`: the part's copy (NaN where it neither owns nor imports).
    pub values: Vec<BTreeMap<String, Vec<T>>>,
}

impl<T: Element> Parts<T> {
    /// Dat `name` as its owners hold it: element by element from the part that owns it.
    pub fn assembled(&self, app: &Application<T>, partition: &Partition, name: &str) -> Option<Vec<T>> {
        let d = app.dat_id(name)?;
        let (_, set, dim) = app.app.dat_info(d);
        let owner = &partition.owner[set.index()];
        let mut out = self.values[0].get(name)?.clone();
        for (e, o) in owner.iter().enumerate() {
            out[e * dim..(e + 1) * dim].copy_from_slice(&self.values[*o as usize][name][e * dim..(e + 1) * dim]);
        }
        Some(out)
    }
}

/// Runs `app`'s program over the parts of `partition` (halos `halo`), the outermost repeat
/// `iterations` times when given; `print` gets the program's prints. Returns every part's dats;
/// the globals end in `app`.
pub fn run<T: Element>(
    app: &mut Application<T>,
    partition: &Partition,
    halo: &Halo,
    fabric: &mut dyn Fabric<T>,
    iterations: Option<usize>,
    print: &mut dyn FnMut(usize, T),
) -> Result<Parts<T>, Error> {
    run_in(app, partition, halo, fabric, None, iterations, print)
}

/// [`run`] with part `p` issuing loop `l`'s elements in `orders[p][l]` (global element numbers;
/// no-ops skipped) where given: each node's compiled schedules, mapped through its numbering
/// ([`super::local::Local::global_orders`]). With `app`'s interleave and pipelines set as the
/// nodes' hardware has them, this is the distributed hardware's bit-exact target.
pub fn run_in<T: Element>(
    app: &mut Application<T>,
    partition: &Partition,
    halo: &Halo,
    fabric: &mut dyn Fabric<T>,
    orders: Option<&[BTreeMap<String, Vec<Option<u32>>>]>,
    iterations: Option<usize>,
    print: &mut dyn FnMut(usize, T),
) -> Result<Parts<T>, Error> {
    let names: Vec<(String, usize, usize)> = dat_names(app);
    // Every part's copy: owned and imported elements from the mesh, NaN elsewhere.
    let mut values: Vec<BTreeMap<String, Vec<T>>> = (0..partition.parts)
        .map(|p| {
            names
                .iter()
                .map(|(name, set, dim)| {
                    let all = app.dat(name).unwrap_or(&[]);
                    let mut mine = vec![T::nan(); all.len()];
                    let import = &halo.import[p][*set];
                    for (e, o) in partition.owner[*set].iter().enumerate() {
                        if *o as usize == p || import.binary_search(&(e as u32)).is_ok() {
                            mine[e * dim..(e + 1) * dim].copy_from_slice(&all[e * dim..(e + 1) * dim]);
                        }
                    }
                    (name.clone(), mine)
                })
                .collect()
        })
        .collect();
    let mut each_loop = |app: &mut Application<T>, name: &str| -> Result<(), Error> {
        let (set, args) = {
            let (_, set, args) = app.loop_args().into_iter().find(|l| l.0 == name).ok_or_else(|| Error::Config(format!("no loop `{name}`")))?;
            (set, args.to_vec())
        };
        let exec = args.iter().any(super::split::writes_indirectly);
        let used: Vec<String> = args.iter().filter_map(|a| dat_of(a).map(|d| app.app.dat_info(d).0.to_string())).collect();
        let reduced = reductions(app, &args);
        let old: Vec<Vec<T>> = reduced.iter().map(|(g, _)| app.global(g).unwrap_or(&[]).to_vec()).collect();
        let mut partials: Vec<Vec<Vec<T>>> = vec![vec![]; reduced.len()];
        let written: Vec<String> = args.iter().filter(|a| a.access().writes()).filter_map(|a| dat_of(a).map(|d| app.app.dat_info(d).0.to_string())).collect();
        for (p, mine) in values.iter_mut().enumerate() {
            for d in &used {
                app.set_dat(d, &mine[d])?;
            }
            for ((g, acc), o) in reduced.iter().zip(&old) {
                app.set_global(g, &vec![identity::<T>(*acc); o.len()])?;
            }
            let order: Vec<Option<u32>> = match orders.and_then(|o| o[p].get(name)) {
                Some(order) => order.clone(),
                None => halo.executed(partition, p, set, exec).into_iter().map(Some).collect(),
            };
            app.run_loop_part(name, &order)?;
            for d in &written {
                mine.insert(d.clone(), app.dat(d).unwrap_or(&[]).to_vec());
            }
            for (k, (g, _)) in reduced.iter().enumerate() {
                partials[k].push(app.global(g).unwrap_or(&[]).to_vec());
            }
        }
        for (((g, acc), o), parts) in reduced.iter().zip(&old).zip(&partials) {
            let combined = fabric.combine(*acc, parts)?;
            let new: Vec<T> = o.iter().zip(&combined).map(|(a, b)| apply(*acc, *a, *b)).collect();
            app.set_global(g, &new)?;
        }
        // Owner to reader: the import halo of every written dat some loop reads remotely.
        for d in refreshed(app, &args) {
            let (_, set, dim) = names.iter().find(|n| n.0 == d).cloned().unwrap_or_default();
            fabric.refresh(&d, app.app.sets()[set], dim, &mut values, partition, halo)?;
        }
        Ok(())
    };
    app.run_with(iterations, &mut each_loop, print)?;
    Ok(Parts { values })
}

/// The collective unit's combination on the torus `config` (node `n` runs part `n`), in the
/// element type of `T`: a global's values go as one allreduce of the collectives' programs
/// ([`Collective::Allreduce`]), so in the butterfly's order up to its limit, else in the chain's
/// ([`Collective::reference`]).
pub fn unit_combine<T: Element>(config: &RouterConfig) -> impl Fn(Access, &[Vec<T>]) -> Vec<T> + '_ {
    move |acc, parts| {
        let (ty, op, bits) = engine_operands(acc, parts);
        let bytes = bits.first().map_or(0, |v| v.len()) * ty.bytes();
        let mut results = Collective::Allreduce.reference(config, &bits, ty, op, bytes.max(ty.bytes()));
        results.swap_remove(0).into_iter().map(|b| T::from_lane(b as u64)).collect()
    }
}

/// What the collective engine reduces for a reduction `acc` of the parts' results: the element
/// type of `T`, the operator, and every part's values as bits.
pub fn engine_operands<T: Element>(acc: Access, parts: &[Vec<T>]) -> (ElementType, ReduceOp, Vec<Vec<u128>>) {
    let ty = if std::mem::size_of::<T>() == 8 { ElementType::F64 } else { ElementType::F32 };
    let op = match acc {
        Access::Min => ReduceOp::Min,
        Access::Max => ReduceOp::Max,
        _ => ReduceOp::Sum,
    };
    (ty, op, parts.iter().map(|v| v.iter().map(|x| x.to_lane() as u128).collect()).collect())
}

/// The operator's identity: +0 for `Inc`, +∞ for `Min`, −∞ for `Max`.
pub(super) fn identity<T: Element>(acc: Access) -> T {
    match acc {
        Access::Min => T::infinity(),
        Access::Max => T::neg_infinity(),
        _ => T::zero(),
    }
}

/// `a ∘ b` for the reduction `acc`.
pub(super) fn apply<T: Element>(acc: Access, a: T, b: T) -> T {
    match acc {
        Access::Min => a.min(b),
        Access::Max => a.max(b),
        _ => a + b,
    }
}

/// The dat an argument reaches, if any.
pub(super) fn dat_of(a: &Arg) -> Option<super::super::program::DatId> {
    match *a {
        Arg::Direct(d, _) | Arg::Indirect(d, _, _, _) => Some(d),
        Arg::Global(..) => None,
    }
}

/// The globals a loop with `args` reduces, by name, with the kind of reduction.
pub fn reductions<T: Element>(app: &Application<T>, args: &[Arg]) -> Vec<(String, Access)> {
    args.iter().filter_map(|a| if let Arg::Global(g, acc) = *a { (acc != Access::Read).then(|| (app.global_name(g).to_string(), acc)) } else { None }).collect()
}

/// The dats a loop with `args` writes that some loop reads remotely: after it, their import
/// halos are refreshed.
pub fn refreshed<T: Element>(app: &Application<T>, args: &[Arg]) -> Vec<String> {
    let loops = app.loop_args();
    args.iter().filter(|a| a.access().writes()).filter_map(dat_of).filter(|d| Halo::read_remotely(&loops, *d)).map(|d| app.app.dat_info(d).0.to_string()).collect()
}

/// Every dat a loop uses: name, set index, dimension.
pub(super) fn dat_names<T: Element>(app: &Application<T>) -> Vec<(String, usize, usize)> {
    let mut out = vec![];
    for (_, _, args) in app.loop_args() {
        for a in args {
            if let Some(d) = dat_of(a) {
                let (name, set, dim) = app.app.dat_info(d);
                if !out.iter().any(|(n, _, _): &(String, usize, usize)| n == name) {
                    out.push((name.to_string(), set.index(), dim));
                }
            }
        }
    }
    out
}
