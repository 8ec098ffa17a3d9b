//! The halo engine with no host at the refresh steps: four compiled Airfoil nodes (960 cells,
//! METIS), each with its halo engine, in the built-in simulator cycle by cycle; the engines'
//! packets cross a model network (random latency per packet, in order per pair of nodes, random
//! back-pressure on the senders). The host only combines the global reduction. After 2
//! iterations every node's owned values equal the partitioned reference in the nodes' compiled
//! order bit for bit, every data packet reached a node waiting at the step it belongs to, and
//! every node received exactly the elements its import halo lists.

use std::collections::{BTreeMap, VecDeque};

use num_bigint::BigUint;
use weft_hdl::float::{FloatFormat, FloatOperator};
use weft_hdl::netlist::eval::Evaluator;
use weft_hdl::pipeline::Stages;
use weft_hdl::testbench::Rng;
use weft_ip::airfoil::naca0012::naca0012;
use weft_ip::app::host::{Host, LoopPorts};
use weft_ip::app::partition::engine::{halo_engine, HaloTables, TOKEN_TAG};
use weft_ip::app::partition::halo::Halo;
use weft_ip::app::partition::nodes::compile_node;
use weft_ip::app::partition::run::{chain_combine, reductions, run_in, InMemory};
use weft_ip::app::partition::{partition, Method};
use weft_ip::app::{Access, Application, MeshData};
use weft_ip::router::header::Header;
use weft_ip::router::RouterConfig;

const AIRFOIL: &str = include_str!("../../examples/apps/airfoil.app");

fn big(x: u128) -> BigUint {
    BigUint::from(x)
}

fn small(x: &BigUint) -> u128 {
    x.iter_u64_digits().take(2).enumerate().fold(0u128, |acc, (i, d)| acc | (d as u128) << (64 * i))
}

/// A packet on its way: deliverable from `at`.
struct Flight {
    at: u64,
    beats: Vec<(u128, bool)>,
}

#[test]
fn four_airfoil_nodes_refresh_their_halos_without_a_host() {
    let mesh = naca0012(16, 20).unwrap().data();
    let stages = Stages::balanced(FloatFormat::BINARY64);
    let load = |m: &MeshData| Application::<f64>::load("airfoil.app", AIRFOIL, m);
    let app = load(&mesh).unwrap();
    let loops = app.loop_args();
    let cells = app.set_id("cells").unwrap();
    // Short packets (128 bytes: 4 elements of p_q), so that every export list spans several.
    let config = RouterConfig { dims: [2, 2, 1], local_ports: 3, max_packet_bytes: 128, ..Default::default() };
    let p = partition(&app.app, &loops, cells, 4, Method::Metis).unwrap();
    let h = Halo::build(&app.app, &loops, &p);
    let iterations = 2;

    // Each node: its program and its engine, loaded.
    struct Node {
        app: Application<f64>,
        share: weft_ip::app::partition::local::Local,
        compiled: weft_ip::app::hardware::Compiled,
        program: Evaluator,
        engine: Evaluator,
        tables: HaloTables,
    }
    let mut nodes: Vec<Node> = (0..4)
        .map(|q| {
            let (share, node_app, compiled) = compile_node(&app, &mesh, &p, &h, &stages, &load, q).unwrap();
            let mut program = Evaluator::new(compiled.net.clone());
            program.reset(2);
            Host { app: &node_app, plan: &compiled.plan, name: "" }.load_program(&mut program, &compiled.loops);
            let tables = HaloTables::build(&app, &p, &h, q, &share, &compiled, &config).unwrap();
            let mut engine = Evaluator::new(halo_engine(&tables).unwrap());
            engine.reset(2);
            let words = [("halo_packets", tables.packet_words()), ("halo_sends", tables.sends.iter().map(|&a| a as u128).collect()), ("halo_recv", tables.recv.iter().map(|&a| a as u128).collect())];
            for (name, values) in words {
                for (i, v) in values.iter().enumerate() {
                    LoopPorts::set(&mut engine, &format!("{name}_wr_en"), &big(1));
                    LoopPorts::set(&mut engine, &format!("{name}_wr_addr"), &big(i as u128));
                    LoopPorts::set(&mut engine, &format!("{name}_wr_data"), &big(*v));
                    LoopPorts::edge(&mut engine);
                }
                LoopPorts::set(&mut engine, &format!("{name}_wr_en"), &big(0));
            }
            Node { app: node_app, share, compiled, program, engine, tables }
        })
        .collect();
    let orders: Vec<_> = nodes.iter().map(|n| n.share.global_orders(&app, &n.compiled.plan.schedules)).collect();

    for n in nodes.iter_mut() {
        LoopPorts::set(&mut n.program, "iterations", &big(iterations));
        LoopPorts::set(&mut n.program, "sync_done", &big(0));
        LoopPorts::set(&mut n.program, "start", &big(1));
        LoopPorts::edge(&mut n.program);
        LoopPorts::set(&mut n.program, "start", &big(0));
    }
    let mut rng = Rng::new(5);
    let mut outgoing: Vec<Vec<(u128, bool)>> = vec![vec![]; 4];
    let mut flights: Vec<VecDeque<Flight>> = (0..4).map(|_| VecDeque::new()).collect();
    let mut last_at: BTreeMap<(usize, usize), u64> = BTreeMap::new();
    let mut delivering: Vec<Option<(usize, Flight)>> = (0..4).map(|_| None).collect();
    let mut host_for: Vec<Option<u32>> = vec![None; 4];
    let mut saved: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    let (mut data_packets, mut tokens) = (0, 0);
    let combine = chain_combine::<f64>(&config);
    for cycle in 0u64.. {
        assert!(cycle < 100_000, "stuck at cycle {cycle}");
        let busy: Vec<bool> = nodes.iter_mut().map(|n| LoopPorts::get(&mut n.program, "busy") == big(1)).collect();
        if busy.iter().all(|b| !b) {
            break;
        }
        let state: Vec<(bool, u32)> = nodes.iter_mut().map(|n| (LoopPorts::get(&mut n.program, "sync") == big(1), small(&LoopPorts::get(&mut n.program, "sync_id")) as u32)).collect();
        // The host's part of a sync step: the global reductions only.
        for q in 0..4 {
            let (sync, id) = state[q];
            if !sync {
                // This visit is over: the next visit of the same step starts afresh.
                host_for[q] = None;
                continue;
            }
            if host_for[q] == Some(id) {
                continue;
            }
            let args = loops[id as usize / 2].2;
            let reduced = reductions(&app, args);
            if reduced.is_empty() {
                host_for[q] = Some(id);
            } else if id % 2 == 0 {
                for (g, acc) in &reduced {
                    let n = &mut nodes[q];
                    let host = Host { app: &n.app, plan: &n.compiled.plan, name: "" };
                    let old = host.read_global(&mut n.program, g);
                    saved.insert(g.clone(), old.clone());
                    let identity = if *acc == Access::Inc { 0.0 } else { panic!("Airfoil reduces with inc only") };
                    host.write_global(&mut n.program, g, &vec![identity; old.len()]);
                }
                host_for[q] = Some(id);
            } else if state.iter().all(|s| *s == (true, id)) && host_for.iter().all(|x| *x != Some(id)) {
                for (g, acc) in &reduced {
                    let parts: Vec<Vec<f64>> = nodes.iter_mut().map(|n| Host { app: &n.app, plan: &n.compiled.plan, name: "" }.read_global(&mut n.program, g)).collect();
                    let sum = combine(*acc, &parts);
                    let new: Vec<f64> = saved[g].iter().zip(&sum).map(|(a, b)| a + b).collect();
                    for n in nodes.iter_mut() {
                        Host { app: &n.app, plan: &n.compiled.plan, name: "" }.write_global(&mut n.program, g, &new);
                    }
                }
                host_for.iter_mut().for_each(|x| *x = Some(id));
            }
        }
        for q in 0..4 {
            let n = &mut nodes[q];
            let (sync, id) = state[q];
            LoopPorts::set(&mut n.engine, "sync", &big(sync as u128));
            LoopPorts::set(&mut n.engine, "sync_id", &big(id as u128));
            for dat in &n.tables.dats {
                let v = LoopPorts::get(&mut n.program, &format!("{}_rd_data", dat.name));
                LoopPorts::set(&mut n.engine, &format!("{}_rd_data", dat.name), &v);
            }
            // The network's next beat for this node.
            if delivering[q].is_none() && flights[q].front().is_some_and(|f| f.at <= cycle) {
                let f = flights[q].pop_front().unwrap();
                let header = Header::unpack(f.beats[0].0);
                let from = config.node(header.src);
                if header.tag != TOKEN_TAG {
                    assert!(sync && n.tables.steps.iter().any(|s| s.sync_id == id), "node {q}: a data packet from node {from} arrived outside a refresh step");
                }
                delivering[q] = Some((0, f));
            }
            let beat = delivering[q].as_ref().map(|(i, f)| f.beats[*i]);
            LoopPorts::set(&mut n.engine, "s_axis_tvalid", &big(beat.is_some() as u128));
            LoopPorts::set(&mut n.engine, "s_axis_tdata", &big(beat.map_or(0, |b| b.0)));
            LoopPorts::set(&mut n.engine, "s_axis_tlast", &big(beat.is_some_and(|b| b.1) as u128));
            LoopPorts::set(&mut n.engine, "s_axis_tkeep", &big(0xFFFF));
            let ready = rng.chance(70);
            LoopPorts::set(&mut n.engine, "m_axis_tready", &big(ready as u128));
            if let Some((i, f)) = delivering[q].as_mut() {
                *i += 1;
                if *i == f.beats.len() {
                    delivering[q] = None;
                }
            }
            if LoopPorts::get(&mut n.engine, "m_axis_tvalid") == big(1) && ready {
                let (data, last) = (small(&LoopPorts::get(&mut n.engine, "m_axis_tdata")), LoopPorts::get(&mut n.engine, "m_axis_tlast") == big(1));
                outgoing[q].push((data, last));
                if last {
                    let beats = std::mem::take(&mut outgoing[q]);
                    let header = Header::unpack(beats[0].0);
                    let to = config.node(header.dst);
                    // The router fills in the source.
                    let mut filled = header;
                    filled.src = config.coords(q);
                    let mut beats = beats;
                    beats[0].0 = filled.pack();
                    if header.tag == TOKEN_TAG {
                        tokens += 1;
                    } else {
                        data_packets += 1;
                    }
                    let at = (cycle + 5 + rng.below(60)).max(last_at.get(&(q, to)).map_or(0, |t| t + 1));
                    last_at.insert((q, to), at);
                    let pos = flights[to].iter().position(|f| f.at > at).unwrap_or(flights[to].len());
                    flights[to].insert(pos, Flight { at, beats });
                }
            }
            for dat in &n.tables.dats {
                for port in ["rd_addr", "wr_en", "wr_addr", "wr_data"] {
                    let v = LoopPorts::get(&mut n.engine, &format!("{}_{port}", dat.name));
                    LoopPorts::set(&mut n.program, &format!("{}_{port}", dat.name), &v);
                }
            }
            let done = LoopPorts::get(&mut n.engine, "halo_done") == big(1) && host_for[q] == Some(id) && sync;
            LoopPorts::set(&mut n.program, "sync_done", &big(done as u128));
        }
        for n in nodes.iter_mut() {
            LoopPorts::edge(&mut n.program);
            LoopPorts::edge(&mut n.engine);
        }
    }

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
    // Each visit of a refresh step brings the node its import halo of the step's dats; the
    // visits are the sync steps of the compiled program.
    for (q, n) in nodes.iter_mut().enumerate() {
        let visits = n.compiled.phases(Some(iterations as usize));
        let expected: usize = visits.iter().filter_map(|v| v.1).map(|id| n.tables.steps.iter().filter(|s| s.sync_id == id).map(|s| s.expected).sum::<usize>()).sum();
        let imports: usize = n.tables.steps.iter().map(|s| s.expected).sum();
        assert_eq!(imports, ["p_adt", "p_q"].iter().map(|d| h.import[q][app.app.dat_info(app.dat_id(d).unwrap()).1.index()].len()).sum::<usize>(), "node {q}: import halo");
        let got = small(&LoopPorts::get(&mut n.engine, "halo_elements_received")) as usize;
        assert_eq!(got, expected, "node {q}: elements received");
    }
    println!("4 nodes, {iterations} iterations: {data_packets} data packets, {tokens} tokens, no host at a refresh");
}
