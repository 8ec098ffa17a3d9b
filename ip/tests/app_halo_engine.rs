//! The halo engine with no host at the refresh steps: four compiled Airfoil nodes (960 cells,
//! METIS), each with its halo engine, in the built-in simulator cycle by cycle
//! ([`run_engines`]); the engines' packets cross a model network (random latency per packet, in
//! order per pair of nodes, random back-pressure on the senders, 128-byte packets so every export
//! list spans several). The host only combines the global reduction. After 2 iterations every
//! node's owned values equal the partitioned reference in the nodes' compiled order bit for bit,
//! no data packet reached a node that was not waiting at a refresh step, and every node received
//! exactly its import halo at every visit of a refresh step.

use std::collections::{BTreeMap, VecDeque};

use weft_hdl::float::{FloatFormat, FloatOperator};
use weft_hdl::pipeline::Stages;
use weft_hdl::testbench::Rng;
use weft_ip::airfoil::naca0012::naca0012;
use weft_ip::app::host::Host;
use weft_ip::app::partition::engines::{engine_nodes, run_engines, Cycle, Network};
use weft_ip::app::partition::halo::Halo;
use weft_ip::app::partition::run::{run_in, Fabric, InMemory};
use weft_ip::app::partition::{partition, Method, Partition};
use weft_ip::app::{Access, Application, MeshData, SetId};
use weft_ip::router::header::Header;
use weft_ip::router::RouterConfig;
use weft_ip::Error;

const AIRFOIL: &str = include_str!("../../examples/apps/airfoil.app");

/// Packets delivered whole after a random latency, in order per pair of nodes, one beat a cycle
/// per node; senders held back at random.
struct Model {
    config: RouterConfig,
    rng: Rng,
    cycle: u64,
    outgoing: Vec<Vec<(u128, bool)>>,
    flights: Vec<VecDeque<(u64, Vec<(u128, bool)>)>>,
    last_at: BTreeMap<(usize, usize), u64>,
    delivering: Vec<VecDeque<(u128, bool)>>,
}

impl Fabric<f64> for Model {
    fn combine(&mut self, acc: Access, parts: &[Vec<f64>]) -> Result<Vec<f64>, Error> {
        InMemory { config: &self.config }.combine(acc, parts)
    }

    fn refresh(&mut self, dat: &str, set: SetId, dim: usize, values: &mut [BTreeMap<String, Vec<f64>>], partition: &Partition, halo: &Halo) -> Result<(), Error> {
        InMemory { config: &self.config }.refresh(dat, set, dim, values, partition, halo)
    }
}

impl Network for Model {
    fn cycle(&mut self, offer: &[Option<(u128, bool)>], ready: &[bool]) -> Result<Cycle, Error> {
        let n = offer.len();
        let mut out = Cycle { taken: vec![false; n], delivered: vec![None; n], active: vec![true; n] };
        for q in 0..n {
            if self.delivering[q].is_empty() && self.flights[q].front().is_some_and(|f| f.0 <= self.cycle) {
                self.delivering[q] = self.flights[q].pop_front().unwrap().1.into();
            }
            if ready[q] {
                out.delivered[q] = self.delivering[q].pop_front();
            }
            let Some((data, last)) = offer[q] else { continue };
            if !self.rng.chance(70) {
                continue;
            }
            out.taken[q] = true;
            self.outgoing[q].push((data, last));
            if last {
                let mut beats = std::mem::take(&mut self.outgoing[q]);
                // The router fills in the source.
                let mut header = Header::unpack(beats[0].0);
                header.src = self.config.coords(q);
                beats[0].0 = header.pack();
                let to = self.config.node(header.dst);
                let at = (self.cycle + 5 + self.rng.below(60)).max(self.last_at.get(&(q, to)).map_or(0, |t| t + 1));
                self.last_at.insert((q, to), at);
                let pos = self.flights[to].iter().position(|f| f.0 > at).unwrap_or(self.flights[to].len());
                self.flights[to].insert(pos, (at, beats));
            }
        }
        self.cycle += 1;
        Ok(out)
    }
}

#[test]
fn four_airfoil_nodes_refresh_their_halos_without_a_host() {
    let mesh = naca0012(16, 20).unwrap().data();
    let stages = Stages::balanced(FloatFormat::BINARY64);
    let load = |m: &MeshData| Application::<f64>::load("airfoil.app", AIRFOIL, m);
    let app = load(&mesh).unwrap();
    let loops = app.loop_args();
    let cells = app.set_id("cells").unwrap();
    let config = RouterConfig { dims: [2, 2, 1], local_ports: 3, max_packet_bytes: 128, ..Default::default() };
    let p = partition(&app.app, &loops, cells, 4, Method::Metis).unwrap();
    let h = Halo::build(&app.app, &loops, &p);
    drop(loops);
    let iterations = 2;
    let mut nodes = engine_nodes(&app, &mesh, &p, &h, &stages, &config, &load).unwrap();
    let orders: Vec<_> = nodes.iter().map(|n| n.share.global_orders(&app, &n.compiled.plan.schedules)).collect();
    let mut model =
        Model { config: config.clone(), rng: Rng::new(5), cycle: 0, outgoing: vec![vec![]; 4], flights: vec![VecDeque::new(); 4], last_at: BTreeMap::new(), delivering: vec![VecDeque::new(); 4] };
    let run = run_engines(&app, &mut nodes, &mut model, iterations, 50_000).unwrap();

    let mut reference = load(&mesh).unwrap();
    reference.app.set_interleave(Some(stages.of(FloatOperator::Add)));
    let want = run_in(&mut reference, &p, &h, &mut InMemory { config: &config }, Some(&orders), Some(iterations as usize), &mut |_, _| {}).unwrap();
    for dat in ["p_q", "p_qold", "p_adt", "p_res"] {
        let (_, set, dim) = app.app.dat_info(app.dat_id(dat).unwrap());
        let w = want.assembled(&app, &p, dat).unwrap();
        for (q, n) in nodes.iter_mut().enumerate() {
            let values = Host { app: &n.app, plan: &n.compiled.plan, name: "" }.read(&mut n.program, dat);
            for (l, &e) in n.share.globals[set.index()].iter().enumerate() {
                if p.owner[set.index()][e as usize] as usize == q {
                    for c in 0..dim {
                        assert_eq!(values[l * dim + c].to_bits(), w[e as usize * dim + c].to_bits(), "node {q}, {dat}[{e}]");
                    }
                }
            }
        }
    }
    assert!(run.unexpected.iter().all(|&u| u == 0), "data packets outside a refresh step: {:?}", run.unexpected);
    // Each visit of a refresh step brings the node its import halo of the step's dats; the
    // visits are the sync steps of the compiled program.
    for (q, n) in nodes.iter().enumerate() {
        let visits = n.compiled.phases(Some(iterations as usize));
        let expected: usize = visits.iter().filter_map(|v| v.1).map(|id| n.tables.steps.iter().filter(|s| s.sync_id == id).map(|s| s.expected).sum::<usize>()).sum();
        let imports: usize = n.tables.steps.iter().map(|s| s.expected).sum();
        assert_eq!(imports, ["p_adt", "p_q"].iter().map(|d| h.import[q][app.app.dat_info(app.dat_id(d).unwrap()).1.index()].len()).sum::<usize>(), "node {q}: import halo");
        assert_eq!(run.received[q] as usize, expected, "node {q}: elements received");
    }
    println!("4 nodes, {iterations} iterations, {} cycles: {} packets ({} tokens), no host at a refresh", run.cycles, run.packets, run.tokens);
}

#[test]
fn a_datapath_not_a_multiple_of_128_bits_is_refused_by_name() {
    let mesh = naca0012(16, 20).unwrap().data();
    let load = |m: &MeshData| Application::<f64>::load("airfoil.app", AIRFOIL, m);
    let app = load(&mesh).unwrap();
    let loops = app.loop_args();
    let p = partition(&app.app, &loops, app.set_id("cells").unwrap(), 2, Method::Metis).unwrap();
    let h = Halo::build(&app.app, &loops, &p);
    drop(loops);
    let config = RouterConfig { dims: [2, 1, 1], local_ports: 3, width: 192, ..Default::default() };
    let err = engine_nodes(&app, &mesh, &p, &h, &Stages::balanced(FloatFormat::BINARY64), &config, &load).err().expect("refused").to_string();
    assert!(err.contains("router width 192") && err.contains("multiple of 128"), "{err}");
}
