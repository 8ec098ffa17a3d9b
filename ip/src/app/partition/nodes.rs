//! A partitioned application on its nodes' compiled programs: each node's accelerator
//! ([`local`] share, [`compile_program_share`]) runs its loops on its own memories, and waits at
//! its sync steps while its host does what the nodes share — start a reduction from the
//! operator's identity, combine the nodes' partial results through the [`Fabric`], refresh the
//! import halos from the owners' memories. The same arithmetic as [`super::run::run_in`] with
//! the nodes' compiled schedules, so the two agree bit for bit.

use std::collections::BTreeMap;

use num_bigint::BigUint;
use weft_hdl::pipeline::Stages;

use super::super::host::{Host, LoopPorts};
use super::super::program::{Access, Arg};
use super::super::run::{Application, Element, MeshData};
use super::super::sequencer::{compile_program_share, NodeShare};
use super::halo::Halo;
use super::local::{local, Local};
use super::run::{apply, dat_names, identity, reductions, refreshed, Fabric, Parts};
use super::Partition;
use crate::app::hardware::Compiled;
use crate::Error;

/// One node: its share, its application on that share, its compiled program and its simulator.
pub struct Node<T: Element, S: LoopPorts> {
    /// The node's share of the mesh.
    pub share: Local,
    /// The application bound to the node's mesh.
    pub app: Application<T>,
    /// The node's compiled program.
    pub compiled: Compiled,
    /// The simulated hardware.
    pub sim: S,
}

/// What a run on the nodes gave.
pub struct NodesRun<T> {
    /// Every element each node holds, in global numbering (NaN elsewhere).
    pub parts: Parts<T>,
    /// Clock edges of the slowest node from `start` until every node's `busy` fell.
    pub cycles: u64,
    /// Sync steps every node passed.
    pub syncs: usize,
    /// The run cut at its sync steps as [`Compiled::phases`] cuts it: per stretch, each node's
    /// clock edges (the last stretch up to `busy` falling).
    pub phases: Vec<Vec<u64>>,
}

/// Builds every node of `partition`: `load` binds the application to a node's mesh, the program
/// is compiled with `stages` and one pipeline, and `sim` makes its simulator (loaded with the
/// node's memories and schedules).
pub fn nodes<T: Element, S: LoopPorts>(
    app: &Application<T>,
    mesh: &MeshData,
    partition: &Partition,
    halo: &Halo,
    stages: &Stages,
    load: &dyn Fn(&MeshData) -> Result<Application<T>, Error>,
    sim: &dyn Fn(&Compiled) -> S,
) -> Result<Vec<Node<T, S>>, Error> {
    let mut out = vec![];
    for p in 0..partition.parts {
        let (share, node_app, compiled) = compile_node(app, mesh, partition, halo, stages, load, p)?;
        let mut s = sim(&compiled);
        Host { app: &node_app, plan: &compiled.plan, name: "" }.load_program(&mut s, &compiled.loops);
        out.push(Node { share, app: node_app, compiled, sim: s });
    }
    Ok(out)
}

/// Node `p` of `partition`: its share, the application bound to its mesh (`load`), and its
/// program compiled with `stages` and one pipeline, waiting for its host before every loop that
/// reduces a global and after every loop that reduces or writes a dat read across a boundary.
pub fn compile_node<T: Element>(
    app: &Application<T>,
    mesh: &MeshData,
    partition: &Partition,
    halo: &Halo,
    stages: &Stages,
    load: &dyn Fn(&MeshData) -> Result<Application<T>, Error>,
    p: usize,
) -> Result<(Local, Application<T>, Compiled), Error> {
    let loops = app.loop_args();
    let reduces = |args: &[Arg]| !reductions(app, args).is_empty();
    let refreshes = |args: &[Arg]| !refreshed(app, args).is_empty();
    let share = local(app, mesh, partition, halo, p)?;
    let node_app = load(&share.mesh)?;
    let plan = NodeShare {
        extents: share.extents.clone(),
        sync_before: loops.iter().filter(|l| reduces(l.2)).map(|l| l.0.to_string()).collect(),
        sync_after: loops.iter().filter(|l| reduces(l.2) || refreshes(l.2)).map(|l| l.0.to_string()).collect(),
    };
    let compiled = compile_program_share(&node_app, stages, 1, &plan)?;
    Ok((share, node_app, compiled))
}

/// Runs the program on `nodes` for `iterations` outermost iterations (`app` is the whole
/// application, for the loops' arguments), the shared steps through `fabric`; fails when the
/// nodes disagree on the sync step they wait at, or after `limit` edges.
pub fn run_nodes<T: Element, S: LoopPorts>(
    app: &Application<T>,
    nodes: &mut [Node<T, S>],
    partition: &Partition,
    halo: &Halo,
    fabric: &mut dyn Fabric<T>,
    iterations: u32,
    limit: u64,
) -> Result<NodesRun<T>, Error> {
    let loops = app.loop_args();
    let one = BigUint::from(1u8);
    let zero = BigUint::default();
    for n in nodes.iter_mut() {
        n.sim.set("iterations", &BigUint::from(iterations));
        n.sim.set("sync_done", &zero);
        n.sim.set("start", &one);
        n.sim.edge();
        n.sim.set("start", &zero);
    }
    let mut cycles = vec![1u64; nodes.len()];
    let mut phase = vec![1u64; nodes.len()];
    let mut phases = vec![];
    let mut saved: BTreeMap<String, Vec<T>> = BTreeMap::new();
    let mut syncs = 0;
    loop {
        // Every node runs until it waits at a sync step or has finished.
        for (p, n) in nodes.iter_mut().enumerate() {
            while n.sim.get("busy") == one && n.sim.get("sync") == zero {
                n.sim.edge();
                cycles[p] += 1;
                phase[p] += 1;
                if cycles[p] > limit {
                    return Err(Error::Mismatch(format!("node {p} neither finished nor reached a sync step in {limit} edges")));
                }
            }
        }
        phases.push(std::mem::replace(&mut phase, vec![1; nodes.len()]));
        let busy: Vec<bool> = nodes.iter_mut().map(|n| n.sim.get("busy") == one).collect();
        if busy.iter().all(|b| !b) {
            break;
        }
        let ids: Vec<BigUint> = nodes.iter_mut().map(|n| if n.sim.get("busy") == one { n.sim.get("sync_id") } else { BigUint::from(u32::MAX) }).collect();
        if ids.iter().any(|i| *i != ids[0]) {
            return Err(Error::Mismatch(format!("the nodes wait at different sync steps: {ids:?}")));
        }
        let id = ids[0].iter_u32_digits().next().unwrap_or(0) as usize;
        let args = loops[id / 2].2;
        let reduced: Vec<(String, Access)> =
            args.iter().filter_map(|a| if let Arg::Global(g, acc) = *a { (acc != Access::Read).then(|| (app.global_name(g).to_string(), acc)) } else { None }).collect();
        if id.is_multiple_of(2) {
            // Before the loop: every node's reduction starts from the operator's identity.
            for (g, acc) in &reduced {
                let old = {
                    let n = &mut nodes[0];
                    Host { app: &n.app, plan: &n.compiled.plan, name: "" }.read_global(&mut n.sim, g)
                };
                let start = vec![identity::<T>(*acc); old.len()];
                saved.insert(g.clone(), old);
                for n in nodes.iter_mut() {
                    Host { app: &n.app, plan: &n.compiled.plan, name: "" }.write_global(&mut n.sim, g, &start);
                }
            }
        } else {
            for (g, acc) in &reduced {
                let parts: Vec<Vec<T>> = nodes.iter_mut().map(|n| Host { app: &n.app, plan: &n.compiled.plan, name: "" }.read_global(&mut n.sim, g)).collect();
                let combined = fabric.combine(*acc, &parts)?;
                let old = saved.remove(g).unwrap_or_default();
                let new: Vec<T> = old.iter().zip(&combined).map(|(a, b)| apply(*acc, *a, *b)).collect();
                for n in nodes.iter_mut() {
                    Host { app: &n.app, plan: &n.compiled.plan, name: "" }.write_global(&mut n.sim, g, &new);
                }
            }
            for dat in refreshed(app, args) {
                let (_, dset, dim) = app.app.dat_info(app.dat_id(&dat).expect("a dat"));
                let mut values: Vec<BTreeMap<String, Vec<T>>> = nodes.iter_mut().map(|n| BTreeMap::from([(dat.clone(), held(n, &dat, dset.index(), dim, app.app.set_size(dset)))])).collect();
                fabric.refresh(&dat, dset, dim, &mut values, partition, halo)?;
                for (n, v) in nodes.iter_mut().zip(&values) {
                    let local: Vec<T> = n.share.globals[dset.index()].iter().flat_map(|&e| v[&dat][e as usize * dim..(e as usize + 1) * dim].iter().copied()).collect();
                    Host { app: &n.app, plan: &n.compiled.plan, name: "" }.write_dat(&mut n.sim, &dat, &local);
                }
            }
        }
        syncs += 1;
        for n in nodes.iter_mut() {
            n.sim.set("sync_done", &one);
            n.sim.edge();
            n.sim.set("sync_done", &zero);
        }
    }
    let values = nodes
        .iter_mut()
        .map(|n| {
            let mut out = BTreeMap::new();
            for (name, set, dim) in dat_names(app) {
                let size = app.app.set_size(app.app.sets()[set]);
                let values = held(n, &name, set, dim, size);
                out.insert(name, values);
            }
            out
        })
        .collect();
    Ok(NodesRun { parts: Parts { values }, cycles: cycles.into_iter().max().unwrap_or(0), syncs, phases })
}

/// Dat `name` as node `n` holds it, in global numbering (NaN where it holds nothing).
fn held<T: Element, S: LoopPorts>(n: &mut Node<T, S>, name: &str, set: usize, dim: usize, size: usize) -> Vec<T> {
    let local = Host { app: &n.app, plan: &n.compiled.plan, name: "" }.read(&mut n.sim, name);
    let mut out = vec![T::nan(); size * dim];
    for (l, &e) in n.share.globals[set].iter().enumerate() {
        out[e as usize * dim..(e as usize + 1) * dim].copy_from_slice(&local[l * dim..(l + 1) * dim]);
    }
    out
}
