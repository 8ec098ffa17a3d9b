//! A mesh application split over nodes, as OP2 splits it over MPI ranks.
//!
//! - **The primary set** (Airfoil: cells) is split by METIS k-way on its dual graph (two cells
//!   are neighbours when an edge maps to both), each element weighted by the loop iterations it
//!   will own ([`split::work_weights`]); or, as the fallback, by recursive coordinate bisection
//!   of the elements' positions ([`Method::Geometric`]).
//! - **Every other set follows** through its maps: an element with a map into an assigned set
//!   goes with the first element it maps to (an edge with its first cell); an element that only
//!   a map from an assigned set reaches goes with the lowest-numbered element that maps to it (a
//!   node with its first cell). The owner computes its elements (owner-compute).
//! - **Halos** ([`halo::Halo`]), OP2's semantics: a loop that increments or writes through a map
//!   also runs, redundantly, the elements owned elsewhere that reach an element it owns (the
//!   **exec halo**), so every owned element gets all of its increments locally and no
//!   increment travels back; everything the executed elements read and do not own is a
//!   read-only copy (the **import halo**, OP2's non-exec halo), refreshed from its owner when a
//!   loop has changed it. Redundant execution is chosen over a reverse exchange of increments
//!   because it needs one exchange direction (owner to reader) and no second summation order:
//!   each owned value is computed on one node, in that node's order.

pub mod app_node;
pub mod bridge;
pub mod engine;
pub mod engines;
pub mod halo;
pub mod local;
pub mod nodes;
pub mod run;
pub mod split;
pub mod tables;

use super::program::{App, Arg, DatId, SetId};
use crate::Error;

/// A loop as the partitioner sees it: its name, the set it runs over and its arguments.
pub type LoopArgs<'a> = (&'a str, SetId, &'a [Arg]);

/// How the primary set is split.
#[derive(Clone, Copy, Debug)]
pub enum Method {
    /// METIS k-way on the dual graph, with work weights.
    Metis,
    /// Recursive coordinate bisection of the positions in dat `coords`, with work weights.
    Geometric {
        /// Dimension-2 or -3 coordinates on the primary set or on a set it maps to.
        coords: DatId,
    },
}

/// Which node owns every element of every set.
#[derive(Clone, Debug)]
pub struct Partition {
    /// Parts (nodes).
    pub parts: usize,
    /// The set that was split; the others follow it.
    pub primary: SetId,
    /// Per set (indexed by [`SetId::index`]): the owning part of every element.
    pub owner: Vec<Vec<u32>>,
    /// Dual-graph edges between different parts.
    pub edge_cut: usize,
}

/// Splits `app` (its loops `loops`) into `parts` parts through `primary` with `method`. A set
/// that no chain of maps joins to the primary set is an error naming it.
pub fn partition<T: num_traits::Float>(app: &App<T>, loops: &[LoopArgs], primary: SetId, parts: usize, method: Method) -> Result<Partition, Error> {
    if parts == 0 || parts > 4096 {
        return Err(Error::Config(format!("partition: {parts} parts: allowed 1..=4096")));
    }
    let n = app.set_size(primary);
    if n < parts {
        return Err(Error::Config(format!("partition: set `{}` has {n} elements, fewer than the {parts} parts", app.set_name(primary))));
    }
    let (xadj, adjncy) = split::dual_graph(app, primary);
    let weights = split::work_weights(app, loops, primary);
    let part = match method {
        Method::Metis => split::metis(&xadj, &adjncy, &weights, parts)?.0,
        Method::Geometric { coords } => split::bisection(&split::positions(app, primary, coords)?, &weights, parts),
    };
    let edge_cut = (0..n).map(|v| (xadj[v]..xadj[v + 1]).filter(|&k| part[adjncy[k as usize] as usize] != part[v]).count()).sum::<usize>() / 2;
    let mut owner: Vec<Option<Vec<u32>>> = app.sets().iter().map(|_| None).collect();
    owner[primary.index()] = Some(part);
    // Propagate through maps until every set has owners.
    loop {
        let mut changed = false;
        for s in app.sets() {
            if owner[s.index()].is_some() {
                continue;
            }
            if let Some(o) = follow(app, &owner, s) {
                owner[s.index()] = Some(o);
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    let owner = app
        .sets()
        .into_iter()
        .map(|s| owner[s.index()].take().ok_or_else(|| Error::Config(format!("partition: set `{}` has no chain of maps to `{}`, so no owner", app.set_name(s), app.set_name(primary)))))
        .collect::<Result<_, _>>()?;
    Ok(Partition { parts, primary, owner, edge_cut })
}

/// Owners for set `s` from an assigned set it maps to (the first target's owner) or that maps to
/// it (the lowest-numbered source's owner); `None` when neither exists yet.
fn follow<T: num_traits::Float>(app: &App<T>, owner: &[Option<Vec<u32>>], s: SetId) -> Option<Vec<u32>> {
    for m in app.maps() {
        let (_, from, to, dim, values) = app.map_info(m);
        if from == s {
            if let Some(o) = &owner[to.index()] {
                return Some(values.chunks(dim).map(|t| o[t[0] as usize]).collect());
            }
        }
    }
    for m in app.maps() {
        let (_, from, to, dim, values) = app.map_info(m);
        if to == s {
            if let Some(o) = &owner[from.index()] {
                let mut out: Vec<Option<u32>> = vec![None; app.set_size(s)];
                for (e, t) in values.chunks(dim).enumerate() {
                    for &x in t {
                        out[x as usize].get_or_insert(o[e]);
                    }
                }
                // An element no map reaches stays with part 0.
                return Some(out.into_iter().map(|x| x.unwrap_or(0)).collect());
            }
        }
    }
    None
}

impl Partition {
    /// The elements of `set` part `p` owns, ascending.
    pub fn owned(&self, set: SetId, p: usize) -> Vec<u32> {
        self.owner[set.index()].iter().enumerate().filter(|(_, o)| **o as usize == p).map(|(e, _)| e as u32).collect()
    }
}
