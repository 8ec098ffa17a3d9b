//! A partitioned application on its nodes' compiled programs, each with its halo engine
//! ([`super::engine`]): the engines refresh the halos through a [`Network`] cycle by cycle with
//! no host; the host only does a step's global reductions (start from the identity before the
//! loop, combine through the [`Fabric`] after it). A node's engine sees the sync step only once
//! the host's part of it is done, so the fabric is quiet while a reduction runs.

use std::collections::BTreeMap;

use num_bigint::BigUint;
use weft_hdl::netlist::eval::Evaluator;
use weft_hdl::pipeline::Stages;

use super::super::hardware::Compiled;
use super::super::host::{Host, LoopPorts};
use super::super::run::{Application, Element, MeshData};
use super::engine::{halo_engine, HaloTables};
use super::halo::Halo;
use super::local::Local;
use super::nodes::compile_node;
use super::run::{apply, identity, reductions, Fabric};
use super::Partition;
use crate::router::RouterConfig;
use crate::Error;

/// The packets between the engines: every node's IntraNode port for the engine, one beat (128
/// bits, `tlast`) each way per cycle.
pub trait Network {
    /// One cycle: node `n` offers `offer[n]` and takes a delivered beat when `ready[n]`. Returns
    /// per node whether its offer was taken, the beat delivered to it (only when ready), and
    /// whether its clock rose (a node whose clock did not rise takes and delivers nothing).
    fn cycle(&mut self, offer: &[Option<(u128, bool)>], ready: &[bool]) -> Result<Cycle, Error>;
}

/// A fabric that carries both the host's reductions and the engines' packets.
pub trait EngineFabric<T: Element>: Fabric<T> + Network {}

impl<T: Element, X: Fabric<T> + Network> EngineFabric<T> for X {}

/// What one network cycle did.
#[derive(Clone, Debug, Default)]
pub struct Cycle {
    /// Per node: its offer was taken.
    pub taken: Vec<bool>,
    /// Per node: the beat delivered to it.
    pub delivered: Vec<Option<(u128, bool)>>,
    /// Per node: its clock rose.
    pub active: Vec<bool>,
}

/// One node: its share, application, program, halo engine and their simulators.
pub struct EngineNode<T: Element> {
    /// The node's share.
    pub share: Local,
    /// The application on the node's mesh.
    pub app: Application<T>,
    /// The node's program.
    pub compiled: Compiled,
    /// The engine's tables.
    pub tables: HaloTables,
    /// The program in the built-in simulator.
    pub program: Evaluator,
    /// The engine in the built-in simulator.
    pub engine: Evaluator,
}

fn big(x: u128) -> BigUint {
    BigUint::from(x)
}

fn small(x: &BigUint) -> u128 {
    x.iter_u64_digits().take(2).enumerate().fold(0u128, |acc, (i, d)| acc | (d as u128) << (64 * i))
}

/// Builds and loads every node of `partition` on `config`'s torus: program, engine and tables.
pub fn engine_nodes<T: Element>(
    app: &Application<T>,
    mesh: &MeshData,
    partition: &Partition,
    halo: &Halo,
    stages: &Stages,
    config: &RouterConfig,
    load: &dyn Fn(&MeshData) -> Result<Application<T>, Error>,
) -> Result<Vec<EngineNode<T>>, Error> {
    (0..partition.parts)
        .map(|q| {
            let (share, node_app, compiled) = compile_node(app, mesh, partition, halo, stages, load, q)?;
            let mut program = Evaluator::new(compiled.net.clone());
            program.reset(2);
            Host { app: &node_app, plan: &compiled.plan, name: "" }.load_program(&mut program, &compiled.loops);
            let tables = HaloTables::build(app, partition, halo, q, &share, &compiled, config)?;
            let mut engine = Evaluator::new(halo_engine(&tables)?);
            engine.reset(2);
            load_tables(&mut engine, &tables);
            Ok(EngineNode { share, app: node_app, compiled, tables, program, engine })
        })
        .collect()
}

/// Writes the engine's tables through its `halo_*_wr_*` ports (of the engine, or of a module
/// that holds it).
pub fn load_tables(sim: &mut dyn LoopPorts, tables: &HaloTables) {
    let words = [("halo_packets", tables.packet_words()), ("halo_sends", tables.sends.iter().map(|&a| a as u128).collect()), ("halo_recv", tables.recv.iter().map(|&a| a as u128).collect())];
    for (name, values) in words {
        for (i, v) in values.iter().enumerate() {
            sim.set(&format!("{name}_wr_en"), &big(1));
            sim.set(&format!("{name}_wr_addr"), &big(i as u128));
            sim.set(&format!("{name}_wr_data"), &big(*v));
            sim.edge();
        }
        sim.set(&format!("{name}_wr_en"), &big(0));
    }
}

/// What a run with engines did.
#[derive(Clone, Debug, Default)]
pub struct EngineRun {
    /// Network cycles from `start` until every program's `busy` fell; a host reduction runs
    /// within one of them (its torus cycles are not counted here).
    pub cycles: u64,
    /// Per node, the elements its engine received.
    pub received: Vec<u64>,
    /// Per node, data packets that arrived while it was at no refresh step (`halo_unexpected`).
    pub unexpected: Vec<u64>,
    /// Data packets and tokens the engines sent.
    pub packets: u64,
    /// Tokens among them.
    pub tokens: u64,
}

/// Runs every node's program for `iterations`, the engines' packets and the host's reductions
/// through `fabric`; fails after `limit` cycles.
pub fn run_engines<T: Element>(app: &Application<T>, nodes: &mut [EngineNode<T>], fabric: &mut dyn EngineFabric<T>, iterations: u32, limit: u64) -> Result<EngineRun, Error> {
    let loops = app.loop_args();
    let n = nodes.len();
    for node in nodes.iter_mut() {
        let p = &mut node.program;
        LoopPorts::set(p, "iterations", &big(iterations as u128));
        LoopPorts::set(p, "sync_done", &big(0));
        LoopPorts::set(p, "start", &big(1));
        LoopPorts::edge(p);
        LoopPorts::set(p, "start", &big(0));
    }
    // Per node: the sync id whose host part is done in this visit.
    let mut host_done: Vec<Option<u32>> = vec![None; n];
    let mut saved: BTreeMap<String, Vec<T>> = BTreeMap::new();
    let mut outgoing: Vec<usize> = vec![0; n];
    let mut run = EngineRun { received: vec![0; n], unexpected: vec![0; n], ..EngineRun::default() };
    let mut cycle = 0u64;
    loop {
        if nodes.iter_mut().all(|x| LoopPorts::get(&mut x.program, "busy") == big(0)) {
            break;
        }
        cycle += 1;
        if cycle > limit {
            return Err(Error::Mismatch(format!("the nodes did not finish in {limit} cycles")));
        }
        let state: Vec<(bool, u32)> = nodes.iter_mut().map(|x| (LoopPorts::get(&mut x.program, "sync") == big(1), small(&LoopPorts::get(&mut x.program, "sync_id")) as u32)).collect();
        for q in 0..n {
            let (sync, id) = state[q];
            if !sync {
                host_done[q] = None;
                continue;
            }
            if host_done[q] == Some(id) {
                continue;
            }
            let reduced = reductions(app, loops[id as usize / 2].2);
            if reduced.is_empty() {
                host_done[q] = Some(id);
            } else if id.is_multiple_of(2) {
                // Before the loop: the node's reduction starts from the operator's identity.
                for (g, acc) in &reduced {
                    let x = &mut nodes[q];
                    let host = Host { app: &x.app, plan: &x.compiled.plan, name: "" };
                    let old = host.read_global(&mut x.program, g);
                    host.write_global(&mut x.program, g, &vec![identity::<T>(*acc); old.len()]);
                    saved.insert(g.clone(), old);
                }
                host_done[q] = Some(id);
            } else if state.iter().all(|s| *s == (true, id)) && host_done.iter().all(|x| *x != Some(id)) {
                // After it, with every node there: combine the partials, add to the old value.
                for (g, acc) in &reduced {
                    let parts: Vec<Vec<T>> = nodes.iter_mut().map(|x| Host { app: &x.app, plan: &x.compiled.plan, name: "" }.read_global(&mut x.program, g)).collect();
                    let combined = fabric.combine(*acc, &parts)?;
                    let new: Vec<T> = saved[g].iter().zip(&combined).map(|(a, b)| apply(*acc, *a, *b)).collect();
                    for x in nodes.iter_mut() {
                        Host { app: &x.app, plan: &x.compiled.plan, name: "" }.write_global(&mut x.program, g, &new);
                    }
                }
                host_done.iter_mut().for_each(|x| *x = Some(id));
            }
        }
        // The engines see a step once the host's part is done.
        let mut offer = vec![None; n];
        for (q, x) in nodes.iter_mut().enumerate() {
            let (sync, id) = state[q];
            let e = &mut x.engine;
            LoopPorts::set(e, "sync", &big((sync && host_done[q] == Some(id)) as u128));
            LoopPorts::set(e, "sync_id", &big(id as u128));
            for dat in &x.tables.dats {
                let v = LoopPorts::get(&mut x.program, &format!("{}_rd_data", dat.name));
                LoopPorts::set(e, &format!("{}_rd_data", dat.name), &v);
            }
            if LoopPorts::get(e, "m_axis_tvalid") == big(1) {
                offer[q] = Some((small(&LoopPorts::get(e, "m_axis_tdata")), LoopPorts::get(e, "m_axis_tlast") == big(1)));
            }
        }
        let net = fabric.cycle(&offer, &vec![true; n])?;
        for (q, x) in nodes.iter_mut().enumerate() {
            if !net.active[q] {
                continue;
            }
            let e = &mut x.engine;
            LoopPorts::set(e, "m_axis_tready", &big(net.taken[q] as u128));
            let beat = net.delivered[q];
            LoopPorts::set(e, "s_axis_tvalid", &big(beat.is_some() as u128));
            LoopPorts::set(e, "s_axis_tdata", &big(beat.map_or(0, |b| b.0)));
            LoopPorts::set(e, "s_axis_tlast", &big(beat.is_some_and(|b| b.1) as u128));
            LoopPorts::set(e, "s_axis_tkeep", &big(0xFFFF));
            if let (true, Some((data, last))) = (net.taken[q], offer[q]) {
                if outgoing[q] == 0 {
                    run.packets += 1;
                    run.tokens += u64::from(crate::router::header::Header::unpack(data).tag == super::engine::TOKEN_TAG);
                }
                outgoing[q] = if last { 0 } else { outgoing[q] + 1 };
            }
            for dat in &x.tables.dats {
                for port in ["rd_addr", "wr_en", "wr_addr", "wr_data"] {
                    let v = LoopPorts::get(e, &format!("{}_{port}", dat.name));
                    LoopPorts::set(&mut x.program, &format!("{}_{port}", dat.name), &v);
                }
            }
            let (sync, id) = state[q];
            let done = sync && host_done[q] == Some(id) && LoopPorts::get(e, "halo_done") == big(1);
            LoopPorts::set(&mut x.program, "sync_done", &big(done as u128));
            LoopPorts::edge(&mut x.program);
            LoopPorts::edge(e);
        }
    }
    for (q, x) in nodes.iter_mut().enumerate() {
        run.received[q] = small(&LoopPorts::get(&mut x.engine, "halo_elements_received")) as u64;
        run.unexpected[q] = small(&LoopPorts::get(&mut x.engine, "halo_unexpected")) as u64;
    }
    run.cycles = cycle;
    Ok(run)
}
