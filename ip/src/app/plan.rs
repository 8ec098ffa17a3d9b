//! What the compiler decides from the mesh before it builds hardware: where each set's elements
//! live in memory, and the order in which each loop issues its elements.
//!
//! - **Layouts.** A datum incremented through a map is read, added to and written back by one
//!   accumulator per memory bank, each taking one update a cycle; an element that increments
//!   several elements of a set in the same cycle (an edge adding into its two cells) needs them in
//!   different banks. Such a set gets `B` banks (the most increments one element of any loop makes
//!   into it, rounded up to a power of two, doubled while the greedy colouring of
//!   [`super::layout`] does not fit: a quadrilateral mesh's cells fit in 2, a graph with odd
//!   cycles needs more), its elements coloured over the banks and addressed `offset·B + bank`.
//!   Other sets keep address = index.
//! - **Schedules.** A loop that increments through a map issues its elements in weft's list
//!   schedule ([`super::schedule::list_rows`]): two elements that add into one element are at
//!   least λ cycles apart, λ being the accumulator's read, add and write-back; no-ops fill the
//!   gaps. Other loops issue their elements in index order.

use std::collections::BTreeMap;

use super::program::{Access, Arg, SetId};
use super::run::{Application, Element};
use super::schedule::{list_rows, Rows, Slot};
use crate::Error;

/// Where a set's elements live.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SetLayout {
    /// Banks of the memories incremented through maps (1: no banks).
    pub banks: usize,
    /// The address of each element.
    pub address: Vec<u32>,
    /// Addresses in each memory of the set (a power of two, a multiple of `banks`).
    pub capacity: usize,
}

/// The compiler's decisions for an application on its mesh.
#[derive(Clone, Debug)]
pub struct Plan {
    /// Per set, by [`SetId::index`].
    pub layouts: Vec<SetLayout>,
    /// Per loop: its slots, an element index or a no-op.
    pub schedules: BTreeMap<String, Vec<Slot>>,
    /// Cycles between two increments of one element: the accumulator's read, add and write.
    pub lambda: usize,
    /// Pipelines per loop: a schedule is rows of this many slots, one row a cycle.
    pub pipelines: usize,
}

/// The most banks a set's memories are split into.
const MAX_BANKS: usize = 64;

/// Elements looked ahead by the list schedule, per pipeline.
const WINDOW: usize = 64;

impl Plan {
    /// The plan for every loop of `app` with one pipeline, with accumulators whose adders have
    /// `adder` stages.
    pub fn new<T: Element>(app: &Application<T>, adder: usize) -> Result<Plan, Error> {
        Plan::with_pipelines(app, adder, 1)
    }

    /// [`Plan::new`] for `pipelines` pipelines per loop: every set's memories get at least that
    /// many banks (consecutive elements in different banks where no colouring is needed), and
    /// each row of a schedule keeps its elements' increments and direct writes in different
    /// banks.
    pub fn with_pipelines<T: Element>(app: &Application<T>, adder: usize, pipelines: usize) -> Result<Plan, Error> {
        Plan::with_extents(app, adder, pipelines, &BTreeMap::new())
    }

    /// [`Plan::with_pipelines`] with the loops named in `extents` issuing only the first
    /// `extents[loop]` elements of their set: one node of a partitioned application, whose
    /// executed elements come first in its numbering ([`crate::app::partition::local`]).
    pub fn with_extents<T: Element>(app: &Application<T>, adder: usize, pipelines: usize, extents: &BTreeMap<String, usize>) -> Result<Plan, Error> {
        if !(1..=8).contains(&pipelines) {
            return Err(Error::Config(format!("pipelines = {pipelines} is out of range: allowed 1 ..= 8")));
        }
        let p = pipelines.next_power_of_two();
        let a = &app.app;
        let lambda = adder.max(1) + 2;
        let extent = |name: &str, size: usize| extents.get(name).map_or(size, |n| (*n).min(size));
        let sets = a.sets();
        // Per set: the groups of its elements one element of some loop increments together.
        let mut groups: Vec<Vec<Vec<u32>>> = vec![vec![]; sets.len()];
        let mut per_element = vec![1usize; sets.len()];
        let mut coloured = vec![false; sets.len()];
        for (name, l) in &app.loops {
            for s in &sets {
                let incs: Vec<&Arg> = l.args.iter().filter(|arg| matches!(arg, Arg::Direct(d, Access::Inc) | Arg::Indirect(d, _, _, Access::Inc) if a.dat_info(*d).1 == *s)).collect();
                if incs.len() < 2 && (p == 1 || incs.is_empty()) {
                    continue;
                }
                coloured[s.index()] = true;
                per_element[s.index()] = per_element[s.index()].max(incs.len());
                for e in 0..extent(name, a.set_size(l.set)) {
                    let targets: Vec<u32> = incs.iter().map(|arg| target(app, arg, e)).collect();
                    if let Some(i) = (1..targets.len()).find(|i| targets[..*i].contains(&targets[*i])) {
                        return Err(Error::Config(format!(
                            "loop `{name}`, element {e}: it increments element {} of `{}` twice; the compiled hardware takes one increment per element of a set and cycle",
                            targets[i],
                            a.set_name(*s)
                        )));
                    }
                    groups[s.index()].push(targets);
                }
            }
        }
        let mut layouts = vec![];
        for s in &sets {
            let n = a.set_size(*s);
            // With several pipelines, twice the banks a row needs, so the list schedule finds
            // rows of elements whose increments fall in different banks.
            let banks = (per_element[s.index()] * p * if p > 1 { 2 } else { 1 }).next_power_of_two();
            if !coloured[s.index()] {
                // Address = index: consecutive elements in consecutive banks.
                layouts.push(SetLayout { banks: p, address: (0..n as u32).collect(), capacity: n.max(2 * p).next_power_of_two() });
                continue;
            }
            // The least power of two of banks (up to MAX_BANKS) the greedy colouring fits in.
            let mut banks = banks;
            let laid = loop {
                match super::layout::layout(n, &groups[s.index()], banks, banks * n.max(1)) {
                    Ok(laid) => break laid,
                    Err(_) if banks < MAX_BANKS => banks *= 2,
                    Err(e) => return Err(Error::Config(format!("set `{}`: {e} (allowed up to {MAX_BANKS} banks)", a.set_name(*s)))),
                }
            };
            let fill = (0..banks as u32).map(|b| laid.bank.iter().filter(|x| **x == b).count()).max().unwrap_or(0);
            layouts.push(SetLayout { banks, address: laid.address, capacity: banks * fill.max(2).next_power_of_two() });
        }
        // Conflict keys: an element numbered across sets; its bank, numbered across sets too.
        let base: Vec<usize> = sets.iter().scan(0, |acc, s| Some(std::mem::replace(acc, *acc + a.set_size(*s)))).collect();
        let mut bank = vec![0u32; sets.iter().map(|s| a.set_size(*s)).sum()];
        for s in &sets {
            let lay = &layouts[s.index()];
            for (e, addr) in lay.address.iter().enumerate() {
                bank[base[s.index()] + e] = (s.index() * MAX_BANKS) as u32 + addr % lay.banks as u32;
            }
        }
        let mut schedules = BTreeMap::new();
        for (name, l) in &app.loops {
            let n = extent(name, a.set_size(l.set));
            // The increments, each with the set of the datum it adds into.
            let incs: Vec<(SetId, &Arg)> = l
                .args
                .iter()
                .filter_map(|arg| match *arg {
                    Arg::Direct(d, Access::Inc) | Arg::Indirect(d, _, _, Access::Inc) => Some((a.dat_info(d).1, arg)),
                    _ => None,
                })
                .collect();
            // With several pipelines, a row's direct writes go to different banks too.
            let writes = p > 1 && l.args.iter().any(|arg| matches!(arg, Arg::Direct(_, Access::Write | Access::Rw)));
            let slots = if incs.is_empty() && !writes {
                let mut slots: Vec<Slot> = (0..n as u32).map(Some).collect();
                slots.resize(n.div_ceil(p) * p, None);
                slots
            } else {
                let keys: Vec<Vec<u32>> = (0..n)
                    .map(|e| {
                        let mut k: Vec<u32> = incs.iter().map(|(s, arg)| (base[s.index()] + target(app, arg, e) as usize) as u32).collect();
                        if writes {
                            k.push((base[l.set.index()] + e) as u32);
                        }
                        k.sort_unstable();
                        k.dedup();
                        k
                    })
                    .collect();
                let window = if incs.is_empty() { 1 } else { lambda };
                list_rows(&keys, window, WINDOW * p, Rows { pipelines: p, banks: Some(&bank) }).map_err(|e| Error::Config(format!("loop `{name}`: {e}")))?
            };
            schedules.insert(name.clone(), slots);
        }
        Ok(Plan { layouts, schedules, lambda, pipelines: p })
    }

    /// The layout of set `s`: its banks, element addresses and memory capacity.
    pub fn layout(&self, s: SetId) -> &SetLayout {
        &self.layouts[s.index()]
    }
}

/// The element of its dat's set that argument `arg` of element `e` reaches.
fn target<T: Element>(app: &Application<T>, arg: &Arg, e: usize) -> u32 {
    match *arg {
        Arg::Direct(..) | Arg::Global(..) => e as u32,
        Arg::Indirect(_, m, i, _) => {
            let (_, _, _, dim, values) = app.app.map_info(m);
            values[e * dim + i]
        }
    }
}
