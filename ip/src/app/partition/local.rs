//! One node's share of a partitioned application as its own mesh: every set in the node's
//! numbering ([`Halo::local`]: owned elements, the exec halo, the rest of the import halo), maps
//! and mesh data renumbered to it, and how many of a set's first elements each loop issues — what
//! the node's compiled accelerator holds and runs ([`crate::app::sequencer::compile_program_share`] with the extents in a [`crate::app::sequencer::NodeShare`]).

use std::collections::BTreeMap;

use super::super::run::{Application, Element, MeshData};
use super::halo::Halo;
use super::split::writes_indirectly;
use super::Partition;
use crate::Error;

/// Node `p`'s mesh.
#[derive(Clone, Debug)]
pub struct Local {
    /// Sets, maps and mesh data in the node's numbering.
    pub mesh: MeshData,
    /// Per set (by [`crate::app::SetId::index`]): local index → global index.
    pub globals: Vec<Vec<u32>>,
    /// Per loop: the set's first elements it issues — the owned ones, and the exec halo when the
    /// loop writes through a map.
    pub extents: BTreeMap<String, usize>,
}

/// Node `p`'s share of `app` bound to `mesh`, split by `partition` with halos `halo`. An
/// element a loop issues whose map leads outside the node's elements is an error (the halo would
/// be incomplete); a map entry of an element no loop issues is 0.
pub fn local<T: Element>(app: &Application<T>, mesh: &MeshData, partition: &Partition, halo: &Halo, p: usize) -> Result<Local, Error> {
    let a = &app.app;
    let sets = a.sets();
    let globals: Vec<Vec<u32>> = sets.iter().map(|s| halo.local(partition, p, *s)).collect();
    let mut to_local: Vec<Vec<u32>> = sets.iter().map(|s| vec![u32::MAX; a.set_size(*s)]).collect();
    for (s, g) in globals.iter().enumerate() {
        for (l, &e) in g.iter().enumerate() {
            to_local[s][e as usize] = l as u32;
        }
    }
    let mut extents = BTreeMap::new();
    for (name, set, args) in app.loop_args() {
        let mut n = partition.owned(set, p).len();
        if args.iter().any(writes_indirectly) {
            n += halo.exec[p][set.index()].len();
        }
        extents.insert(name.to_string(), n);
    }
    let mut out = MeshData::default();
    for s in &sets {
        out.sets.insert(a.set_name(*s).to_string(), globals[s.index()].len());
    }
    for m in a.maps() {
        let (name, from, to, dim, values) = a.map_info(m);
        // Elements of `from` that some loop issues: the largest extent of a loop over it.
        let issued = app.loop_args().iter().filter(|l| l.1 == from).map(|l| extents[l.0]).max().unwrap_or(0);
        let mut local_values = Vec::with_capacity(globals[from.index()].len() * dim);
        for (l, &g) in globals[from.index()].iter().enumerate() {
            for i in 0..dim {
                let t = to_local[to.index()][values[g as usize * dim + i] as usize];
                if t == u32::MAX && l < issued {
                    return Err(Error::Config(format!(
                        "node {p}: element {g} of `{}` reaches element {} of `{}` through `{name}`, which the node does not hold",
                        a.set_name(from),
                        values[g as usize * dim + i],
                        a.set_name(to)
                    )));
                }
                local_values.push(if t == u32::MAX { 0 } else { t });
            }
        }
        out.maps.insert(name.to_string(), (dim, local_values));
    }
    for (name, (dim, values)) in &mesh.dats {
        let d = app.dat_id(name).ok_or_else(|| Error::Config(format!("mesh dat `{name}` is not a dat of the application")))?;
        let set = a.dat_info(d).1;
        let local_values = globals[set.index()].iter().flat_map(|&g| values[g as usize * dim..(g as usize + 1) * dim].iter().copied()).collect();
        out.dats.insert(name.clone(), (*dim, local_values));
    }
    out.matrices = mesh.matrices.clone();
    Ok(Local { mesh: out, globals, extents })
}

impl Local {
    /// `schedules` (a compiled plan's for this node, in its numbering) in the global element
    /// numbers of `app`'s loops, for [`super::run::run_in`].
    pub fn global_orders<T: Element>(&self, app: &Application<T>, schedules: &BTreeMap<String, Vec<Option<u32>>>) -> BTreeMap<String, Vec<Option<u32>>> {
        app.loop_args()
            .into_iter()
            .filter_map(|(name, set, _)| {
                let slots = schedules.get(name)?;
                Some((name.to_string(), slots.iter().map(|s| s.map(|l| self.globals[set.index()][l as usize])).collect()))
            })
            .collect()
    }
}
