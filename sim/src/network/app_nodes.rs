//! A partitioned mesh application with no host after the load: each node's application module
//! (`weft_ip::app::partition::app_node`: compiled program, halo engine, reduction bridge) in the
//! built-in simulator or in Verilator ([`AppSim`]) beside its generated node, its halo packets on IntraNode port
//! [`HALO_PORT`] and its reductions on the host side of the collective engine's port `a`, both
//! beat by beat, every cycle of the torus.

use num_bigint::BigUint;
use weft_ip::app::hardware::Compiled;
use weft_ip::app::host::{Host, LoopPorts};
use weft_ip::app::partition::app_node::app_node;
use weft_ip::app::partition::bridge::BridgeSpec;
use weft_ip::app::partition::engine::{HaloTables, HALO_PORT};
use weft_ip::app::partition::engines::load_tables;
use weft_ip::app::partition::halo::Halo;
use weft_ip::app::partition::local::Local;
use weft_ip::app::partition::nodes::compile_node;
use weft_ip::app::partition::Partition;
use weft_ip::app::{Application, Element, MeshData};
use weft_ip::router::Direction;
use weft_ip::weft_hdl::netlist::eval::Evaluator;
use weft_ip::weft_hdl::netlist::verilog;
use weft_ip::weft_hdl::pipeline::Stages;

use std::path::PathBuf;

use super::Torus;
use crate::cosim::Model;
use crate::link::Device;
use crate::Error;

/// Where the nodes' application modules run.
#[derive(Clone, Debug)]
pub enum AppSim {
    /// The built-in simulator.
    BuiltIn,
    /// Verilator, one model per node, its Verilog written to (and kept in) this folder.
    Verilator(PathBuf),
}

/// One node's share and its application module, loaded in its simulator.
pub struct AppNode<T: Element> {
    /// The node's share.
    pub share: Local,
    /// The application on the node's mesh.
    pub app: Application<T>,
    /// The node's program.
    pub compiled: Compiled,
    /// Its halo engine's tables.
    pub tables: HaloTables,
    /// Its reduction bridge.
    pub bridge: BridgeSpec,
    /// The module, loaded.
    pub sim: Box<dyn LoopPorts>,
}

impl<T: Element> AppNode<T> {
    /// Dat `name` as the module holds it, in the node's element order.
    pub fn read(&mut self, name: &str) -> Vec<T> {
        Host { app: &self.app, plan: &self.compiled.plan, name: "" }.read(self.sim.as_mut(), name)
    }

    /// Global `name` as the module holds it.
    pub fn read_global(&mut self, name: &str) -> Vec<T> {
        Host { app: &self.app, plan: &self.compiled.plan, name: "" }.read_global(self.sim.as_mut(), name)
    }
}

/// Builds every node's module for `partition` of `app` on `torus` in the built-in simulator
/// and loads it (program, tables). The modules are `<name><node>`.
#[allow(clippy::too_many_arguments)]
pub fn app_nodes<T: Element, D: Device>(
    name: &str,
    app: &Application<T>,
    mesh: &MeshData,
    partition: &Partition,
    halo: &Halo,
    stages: &Stages,
    torus: &Torus<D>,
    load: &dyn Fn(&MeshData) -> Result<Application<T>, weft_ip::Error>,
) -> Result<Vec<AppNode<T>>, weft_ip::Error> {
    app_nodes_in(&AppSim::BuiltIn, name, app, mesh, partition, halo, stages, torus, load).map_err(weft_ip::Error::from)
}

/// [`app_nodes`] with the modules in `sim`: in Verilator, each node's module is written as
/// `<name><node>.v`, verilated (or taken from the build cache) and reset.
#[allow(clippy::too_many_arguments)]
pub fn app_nodes_in<T: Element, D: Device>(
    sim: &AppSim,
    name: &str,
    app: &Application<T>,
    mesh: &MeshData,
    partition: &Partition,
    halo: &Halo,
    stages: &Stages,
    torus: &Torus<D>,
    load: &dyn Fn(&MeshData) -> Result<Application<T>, weft_ip::Error>,
) -> Result<Vec<AppNode<T>>, Error> {
    let config = &torus.config;
    (0..partition.parts)
        .map(|q| {
            let (share, node_app, compiled) = compile_node(app, mesh, partition, halo, stages, load, q)?;
            let tables = HaloTables::build(app, partition, halo, q, &share, &compiled, config)?;
            let bridge = BridgeSpec::build(app, config.width, config.max_packet_bytes)?;
            let module = format!("{name}{q}");
            let net = app_node(&module, &compiled.net, &tables, &bridge)?;
            let mut sim: Box<dyn LoopPorts> = match sim {
                AppSim::BuiltIn => {
                    let mut e = Evaluator::new(net);
                    e.reset(2);
                    Box::new(e)
                }
                AppSim::Verilator(work) => {
                    std::fs::create_dir_all(work)?;
                    let file = work.join(format!("{module}.v"));
                    std::fs::write(&file, verilog::module(&net, &module))?;
                    let mut m = Model::build(&file, &module)?;
                    let rst = m.port("rst")?;
                    m.set(rst, 1);
                    m.tick();
                    m.tick();
                    m.set(rst, 0);
                    Box::new(m)
                }
            };
            Host { app: &node_app, plan: &compiled.plan, name: "" }.load_program(sim.as_mut(), &compiled.loops);
            load_tables(sim.as_mut(), &tables);
            Ok(AppNode { share, app: node_app, compiled, tables, bridge, sim })
        })
        .collect()
}

/// What a run with no host did.
#[derive(Clone, Debug, Default)]
pub struct AppRun {
    /// Torus cycles from `start` until every program's `busy` fell.
    pub cycles: u64,
    /// Per node: the reductions its bridge sent to the collective engine.
    pub reductions: Vec<u64>,
    /// Per node: the engine's timeout reports its bridge saw.
    pub timeouts: Vec<u64>,
    /// Per node: halo elements its engine received.
    pub received: Vec<u64>,
    /// Per node: data packets that reached its engine outside a refresh step.
    pub unexpected: Vec<u64>,
    /// Per node: what its program did when, in order.
    pub timeline: Vec<Vec<Interval>>,
}

/// A stretch of one node's run, in torus cycles from `start`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Interval {
    /// What ran.
    pub what: Phase,
    /// The cycle it began (the end of the one before).
    pub from: u64,
    /// The cycle it ended.
    pub to: u64,
}

/// What a node's program was doing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Phase {
    /// A run of the loop, with the sequencer's steps since the last interval.
    Loop(String),
    /// A sync step (its id): the reductions and halo refreshes there.
    Sync(u32),
}

/// Follows one node's `sync` and `<loop>_runs` outputs into intervals.
struct Tracker {
    loops: Vec<String>,
    runs: Vec<u128>,
    syncing: Option<u32>,
    since: u64,
    timeline: Vec<Interval>,
}

impl Tracker {
    fn observe(&mut self, sim: &mut dyn LoopPorts, cycle: u64) {
        for (k, name) in self.loops.iter().enumerate() {
            let runs = small(&sim.get(&format!("{name}_runs")));
            if runs != self.runs[k] {
                self.runs[k] = runs;
                self.timeline.push(Interval { what: Phase::Loop(name.clone()), from: self.since, to: cycle });
                self.since = cycle;
            }
        }
        let sync = sim.get("sync") == big(1);
        match (self.syncing, sync) {
            (None, true) => {
                self.syncing = Some(small(&sim.get("sync_id")) as u32);
                self.since = cycle;
            }
            (Some(id), false) => {
                self.timeline.push(Interval { what: Phase::Sync(id), from: self.since, to: cycle });
                self.syncing = None;
                self.since = cycle;
            }
            _ => {}
        }
    }
}

fn big(x: u128) -> BigUint {
    BigUint::from(x)
}

fn small(x: &BigUint) -> u128 {
    pieces(x, 1)[0]
}

/// `x` in `n` pieces of 128 bits, low first.
fn pieces(x: &BigUint, n: usize) -> Vec<u128> {
    let digits: Vec<u64> = x.iter_u64_digits().collect();
    (0..n).map(|k| digits.get(2 * k).copied().unwrap_or(0) as u128 | (digits.get(2 * k + 1).copied().unwrap_or(0) as u128) << 64).collect()
}

fn whole(pieces: &[u128]) -> BigUint {
    pieces.iter().rev().fold(BigUint::default(), |acc, p| (acc << 128) | BigUint::from(*p))
}

/// Starts every node for `iterations` and runs the torus until every program is done; the
/// collective engine on `engine` ports `[a, b]` must be programmed for the bridges' operator.
/// `cut` pulls a cable (leaving node `.0` toward `.1`) from cycle `.2` for `.3` cycles. Fails
/// after `limit` cycles.
pub fn run_app_nodes<T: Element, D: Device>(
    torus: &mut Torus<D>,
    nodes: &mut [AppNode<T>],
    engine: [usize; 2],
    iterations: u32,
    cut: Option<(usize, Direction, u64, u64)>,
    limit: u64,
) -> Result<AppRun, Error> {
    let n = nodes.len();
    for x in nodes.iter_mut() {
        let s = x.sim.as_mut();
        LoopPorts::set(s, "iterations", &big(iterations as u128));
        LoopPorts::set(s, "start", &big(1));
        LoopPorts::edge(s);
        LoopPorts::set(s, "start", &big(0));
    }
    let ports = [HALO_PORT, engine[0]];
    let chunks = torus.config.width / 128;
    let keep = (BigUint::from(1u8) << (torus.config.width / 8)) - 1u8;
    let streams = ["halo", "reduce"];
    let start = torus.cycle;
    let mut cycles = 0u64;
    let mut trackers: Vec<Tracker> = nodes.iter().map(|x| Tracker { loops: x.compiled.loops.clone(), runs: vec![0; x.compiled.loops.len()], syncing: None, since: 0, timeline: vec![] }).collect();
    while nodes.iter_mut().any(|x| LoopPorts::get(x.sim.as_mut(), "busy") == big(1)) {
        for (t, x) in trackers.iter_mut().zip(nodes.iter_mut()) {
            t.observe(x.sim.as_mut(), cycles);
        }
        cycles += 1;
        if cycles > limit {
            return Err(Error::Stuck(format!("the application did not finish in {limit} cycles")));
        }
        if let Some((node, d, from, length)) = cut {
            let at = torus.cycle - start;
            if at == from || at == from + length {
                torus.cut(node, d, at == from);
            }
        }
        let offers: Vec<Vec<Option<(Vec<u128>, bool)>>> = streams
            .iter()
            .map(|s| {
                nodes
                    .iter_mut()
                    .map(|x| {
                        (LoopPorts::get(x.sim.as_mut(), &format!("{s}_m_axis_tvalid")) == big(1))
                            .then(|| (pieces(&LoopPorts::get(x.sim.as_mut(), &format!("{s}_m_axis_tdata")), chunks), LoopPorts::get(x.sim.as_mut(), &format!("{s}_m_axis_tlast")) == big(1)))
                    })
                    .collect()
            })
            .collect();
        let stepped = torus.step_ports(&ports, &offers, &[vec![true; n], vec![true; n]])?;
        for (q, x) in nodes.iter_mut().enumerate() {
            if !stepped[0].active[q] {
                continue;
            }
            for (k, s) in streams.iter().enumerate() {
                let beat = &stepped[k].delivered[q];
                LoopPorts::set(x.sim.as_mut(), &format!("{s}_m_axis_tready"), &big(stepped[k].taken[q] as u128));
                LoopPorts::set(x.sim.as_mut(), &format!("{s}_s_axis_tvalid"), &big(beat.is_some() as u128));
                LoopPorts::set(x.sim.as_mut(), &format!("{s}_s_axis_tdata"), &beat.as_ref().map_or(BigUint::default(), |b| whole(&b.0)));
                LoopPorts::set(x.sim.as_mut(), &format!("{s}_s_axis_tlast"), &big(beat.as_ref().is_some_and(|b| b.1) as u128));
                LoopPorts::set(x.sim.as_mut(), &format!("{s}_s_axis_tkeep"), &keep);
            }
            LoopPorts::edge(x.sim.as_mut());
        }
    }
    if let Some((node, d, _, _)) = cut {
        torus.cut(node, d, false);
    }
    for (t, x) in trackers.iter_mut().zip(nodes.iter_mut()) {
        t.observe(x.sim.as_mut(), cycles);
    }
    let mut count = |name: &str| -> Vec<u64> { nodes.iter_mut().map(|x| small(&LoopPorts::get(x.sim.as_mut(), name)) as u64).collect() };
    Ok(AppRun {
        cycles,
        reductions: count("reduce_operations"),
        timeouts: count("reduce_timeouts"),
        received: count("halo_elements_received"),
        unexpected: count("halo_unexpected"),
        timeline: trackers.into_iter().map(|t| t.timeline).collect(),
    })
}
