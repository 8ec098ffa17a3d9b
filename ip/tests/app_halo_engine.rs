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

/// One refresh step of node 0's engine on a 2×2×1 torus with 1 … 5 packets to send (each of 2
/// elements of 64 bits, to nodes 1, 2, 3 in turn) and one packet of 2 elements to receive from
/// node 1, driven port by port: after the tokens every packet leaves once, as the protocol in
/// `partition::engine` describes it (destination, tag, position, length, the values at the send
/// table's addresses), the received values go to the receive table's addresses, and the step
/// ends. Tables of 2 and 4 packets, whose counter reaches the table's size, are among them.
#[test]
fn an_engine_sends_every_packet_of_its_step_whatever_the_table_size() {
    use weft_hdl::netlist::eval::Evaluator;
    use weft_ip::app::host::LoopPorts;
    use weft_ip::app::partition::engine::{halo_engine, HaloDat, HaloPacket, HaloStep, HaloTables, HALO_PORT, TOKEN_TAG};
    use weft_ip::app::partition::engines::load_tables;
    type Big = num_bigint::BigUint;
    let config = RouterConfig { dims: [2, 2, 1], local_ports: 3, ..Default::default() };
    let value = |a: u32| 0x0123_4567_0000_0000u128 | (a as u128) << 8 | 0xA5;
    for n in 1..=5usize {
        let dsts: Vec<usize> = (0..n).map(|k| 1 + k % 3).collect();
        let mut seen = BTreeMap::new();
        let packets: Vec<HaloPacket> = dsts
            .iter()
            .map(|&dst| {
                let before = seen.entry(dst).or_insert(0usize);
                let p = HaloPacket { dst, dat: 0, position: *before * 2, count: 2, new_dst: *before == 0 };
                *before += 1;
                p
            })
            .collect();
        let tables = HaloTables {
            node: 0,
            config: config.clone(),
            dats: vec![HaloDat { name: "u".into(), bits: 64, addr_bits: 4 }],
            steps: vec![HaloStep { sync_id: 3, sources: vec![1], first: 0, end: n, expected: 2 }],
            packets: packets.clone(),
            sends: (0..2 * n as u32).map(|k| 15 - k).collect(),
            recv_base: BTreeMap::from([((1, 0), 0)]),
            recv: vec![9, 12],
        };
        let mut e = Evaluator::new(halo_engine(&tables).unwrap());
        e.reset(2);
        load_tables(&mut e, &tables);
        let set = |e: &mut Evaluator, port: &str, v: u128| LoopPorts::set(e, port, &Big::from(v));
        let get = |e: &mut Evaluator, port: &str| u128::try_from(LoopPorts::get(e, port)).unwrap();
        let header = |src: usize, tag: u16, user: u32, length: usize| {
            Header { dst: config.coords(0), dst_port: HALO_PORT, src: config.coords(src), src_port: HALO_PORT, length, tag, hops: 1, kind: 0, user }.pack()
        };
        // Tokens from every destination, then node 1's packet: two elements.
        let mut incoming: VecDeque<(u128, bool)> = (1..4).map(|s| (header(s, TOKEN_TAG, 0, 0), true)).collect();
        incoming.extend([(header(1, 0, 0, 32), false), (0xBEEF, false), (0xCAFE, true)]);
        set(&mut e, "sync", 1);
        set(&mut e, "sync_id", 3);
        set(&mut e, "s_axis_tkeep", 0xFFFF);
        set(&mut e, "m_axis_tready", 1);
        let (mut sent, mut current, mut writes, mut last_addr) = (vec![], vec![], BTreeMap::new(), 0u128);
        let mut done_at = None;
        for cycle in 0..400 {
            set(&mut e, "u_rd_data", value(last_addr as u32));
            let beat = if cycle % 3 == 0 { incoming.pop_front() } else { None };
            set(&mut e, "s_axis_tvalid", beat.is_some() as u128);
            set(&mut e, "s_axis_tdata", beat.map_or(0, |b| b.0));
            set(&mut e, "s_axis_tlast", beat.is_some_and(|b| b.1) as u128);
            if get(&mut e, "m_axis_tvalid") == 1 {
                current.push(get(&mut e, "m_axis_tdata"));
                if get(&mut e, "m_axis_tlast") == 1 {
                    sent.push(std::mem::take(&mut current));
                }
            }
            if get(&mut e, "u_wr_en") == 1 {
                writes.insert(get(&mut e, "u_wr_addr"), get(&mut e, "u_wr_data"));
            }
            if get(&mut e, "halo_done") == 1 && done_at.is_none() {
                done_at = Some(cycle);
            }
            last_addr = get(&mut e, "u_rd_addr");
            LoopPorts::edge(&mut e);
        }
        assert!(done_at.is_some(), "{n} packets: the step never ended");
        assert_eq!(writes, BTreeMap::from([(9, 0xBEEF), (12, 0xCAFE)]), "{n} packets: received values");
        let (tokens, data): (Vec<_>, Vec<_>) = sent.iter().partition(|p| Header::unpack(p[0]).tag == TOKEN_TAG);
        assert_eq!(tokens.len(), 1, "{n} packets: one token to node 1");
        assert_eq!(Header::unpack(tokens[0][0]).dst, config.coords(1));
        assert_eq!(data.len(), n, "{n} packets: data packets sent");
        let mut k = 0;
        for (p, beats) in packets.iter().zip(&data) {
            let h = Header::unpack(beats[0]);
            assert_eq!((h.dst, h.dst_port, h.tag, h.user, h.length), (config.coords(p.dst), HALO_PORT, 0, p.position as u32, 32), "{n} packets");
            for v in &beats[1..] {
                assert_eq!(*v, value(tables.sends[k]), "{n} packets: element {k}");
                k += 1;
            }
        }
    }
}
