//! The halos of a [`Partition`]: what each part executes beyond what it owns, what it must hold
//! copies of, and so what each owner sends to whom (see the module above for the semantics).

use super::super::program::{App, Arg, DatId, SetId};
use super::split::writes_indirectly;
use super::{LoopArgs, Partition};

/// Exec and import halos of every part, per set, ascending global indices.
#[derive(Clone, Debug)]
pub struct Halo {
    /// `[part][set]`: elements owned elsewhere that the part executes, in the loops over the set
    /// that write through a map, because they reach an element the part owns.
    pub exec: Vec<Vec<Vec<u32>>>,
    /// `[part][set]`: elements owned elsewhere whose values the part holds copies of: every
    /// element an executed element reaches through a map, and the exec halo's own elements.
    pub import: Vec<Vec<Vec<u32>>>,
}

impl Halo {
    /// The halos of `partition` for the loops `loops` of `app`.
    pub fn build<T: num_traits::Float>(app: &App<T>, loops: &[LoopArgs], partition: &Partition) -> Halo {
        let (parts, sets) = (partition.parts, app.sets().len());
        let mut exec = vec![vec![vec![]; sets]; parts];
        for s in app.sets() {
            let maps: Vec<_> =
                loops.iter().filter(|l| l.1 == s).flat_map(|l| l.2.iter().filter(|a| writes_indirectly(a))).map(|a| if let Arg::Indirect(_, m, _, _) = a { *m } else { unreachable!() }).collect();
            let own = &partition.owner[s.index()];
            for m in maps {
                let (_, _, to, dim, values) = app.map_info(m);
                for (e, targets) in values.chunks(dim).enumerate() {
                    for &t in targets {
                        let q = partition.owner[to.index()][t as usize];
                        if q != own[e] {
                            exec[q as usize][s.index()].push(e as u32);
                        }
                    }
                }
            }
        }
        exec.iter_mut().flatten().for_each(|v: &mut Vec<u32>| {
            v.sort_unstable();
            v.dedup();
        });
        let mut import = exec.clone();
        for &(_, s, args) in loops {
            let runs_exec = args.iter().any(writes_indirectly);
            // Parts that execute each element: its owner, and with an exec halo the others.
            let mut runners: Vec<Vec<u32>> = partition.owner[s.index()].iter().map(|o| vec![*o]).collect();
            if runs_exec {
                for (p, sets) in exec.iter().enumerate() {
                    sets[s.index()].iter().for_each(|&e| runners[e as usize].push(p as u32));
                }
            }
            for arg in args {
                let Arg::Indirect(_, m, i, _) = *arg else { continue };
                let (_, _, to, dim, values) = app.map_info(m);
                for (e, ps) in runners.iter().enumerate() {
                    let t = values[e * dim + i];
                    for &p in ps {
                        if partition.owner[to.index()][t as usize] != p {
                            import[p as usize][to.index()].push(t);
                        }
                    }
                }
            }
        }
        import.iter_mut().flatten().for_each(|v: &mut Vec<u32>| {
            v.sort_unstable();
            v.dedup();
        });
        Halo { exec, import }
    }

    /// The elements of `set` part `p` executes in a loop: the owned ones, then, when the loop
    /// writes through a map (`exec`), the exec halo.
    pub fn executed(&self, partition: &Partition, p: usize, set: SetId, exec: bool) -> Vec<u32> {
        let mut out = partition.owned(set, p);
        if exec {
            out.extend(&self.exec[p][set.index()]);
        }
        out
    }

    /// Part `p`'s numbering of `set`, local index → global: the owned elements, then the exec
    /// halo, then the rest of the import halo (OP2's core, exec and non-exec order), each
    /// ascending, so neighbours in the mesh's numbering stay neighbours.
    pub fn local(&self, partition: &Partition, p: usize, set: SetId) -> Vec<u32> {
        let exec = &self.exec[p][set.index()];
        let mut out = self.executed(partition, p, set, true);
        out.extend(self.import[p][set.index()].iter().filter(|e| exec.binary_search(e).is_err()));
        out
    }

    /// What part `from` sends part `to` of `set` when its values change: `to`'s import
    /// elements that `from` owns, ascending.
    pub fn exports(&self, partition: &Partition, from: usize, to: usize, set: SetId) -> Vec<u32> {
        self.import[to][set.index()].iter().copied().filter(|&e| partition.owner[set.index()][e as usize] as usize == from).collect()
    }

    /// Whether some loop of `loops` reads dat `d` on elements their node may not own — through a
    /// map, or directly on the exec halo — so a loop that writes it must refresh the import halos.
    pub fn read_remotely(loops: &[LoopArgs], d: DatId) -> bool {
        loops.iter().any(|(_, _, args)| {
            let exec = args.iter().any(writes_indirectly);
            args.iter().any(|a| match *a {
                Arg::Indirect(x, _, _, acc) => x == d && acc.reads(),
                Arg::Direct(x, acc) => x == d && exec && acc.reads(),
                Arg::Global(..) => false,
            })
        })
    }

    /// Elements in every part's import halo, summed over sets and parts.
    pub fn imported(&self) -> usize {
        self.import.iter().flatten().map(|v| v.len()).sum()
    }
}
