//! Airfoil split over nodes ([`weft_ip::app::partition`]): every element owned once, every
//! remote read covered by exactly one halo entry, every owned element's increments computed on
//! its owner, and METIS's cut against a plain split of the numbering.

use std::collections::BTreeSet;
use weft_ip::airfoil::naca0012::naca0012;
use weft_ip::app::partition::halo::Halo;
use weft_ip::app::partition::{partition, LoopArgs, Method, Partition};
use weft_ip::app::{Application, Arg};

const AIRFOIL: &str = include_str!("../../examples/apps/airfoil.app");

fn airfoil(grid: (usize, usize)) -> (weft_ip::airfoil::Mesh, Application<f64>) {
    let mesh = naca0012(grid.0, grid.1).unwrap();
    let app = Application::<f64>::load("airfoil.app", AIRFOIL, &mesh.data()).unwrap();
    (mesh, app)
}

/// The rules a partition and its halos must keep, checked element by element.
fn check(app: &Application<f64>, loops: &[LoopArgs], p: &Partition, h: &Halo) {
    let a = &app.app;
    for s in a.sets() {
        // Owned once: the parts' owned lists cover the set exactly.
        let mut seen = vec![0u32; a.set_size(s)];
        for part in 0..p.parts {
            p.owned(s, part).iter().for_each(|&e| seen[e as usize] += 1);
            for list in [&h.exec[part][s.index()], &h.import[part][s.index()]] {
                assert!(list.windows(2).all(|w| w[0] < w[1]), "a halo list of `{}` is not strictly ascending", a.set_name(s));
                assert!(list.iter().all(|&e| p.owner[s.index()][e as usize] as usize != part), "part {part} imports an element of `{}` it owns", a.set_name(s));
            }
            // The owners' exports to a part are exactly its imports.
            let mut from_owners: Vec<u32> = (0..p.parts).filter(|&q| q != part).flat_map(|q| h.exports(p, q, part, s)).collect();
            from_owners.sort_unstable();
            assert_eq!(from_owners, h.import[part][s.index()]);
        }
        assert!(seen.iter().all(|&n| n == 1), "an element of `{}` owned {} times", a.set_name(s), seen.iter().max().unwrap());
    }
    for &(name, set, args) in loops {
        let writes = args.iter().any(|arg| matches!(arg, Arg::Indirect(_, _, _, acc) if acc.writes()));
        for part in 0..p.parts {
            let executed: BTreeSet<u32> = h.executed(p, part, set, writes).into_iter().collect();
            for &e in &executed {
                for arg in args {
                    let (to, t) = match *arg {
                        Arg::Direct(..) => (set, e),
                        Arg::Indirect(_, m, i, _) => {
                            let (_, _, to, dim, values) = a.map_info(m);
                            (to, values[e as usize * dim + i])
                        }
                        Arg::Global(..) => continue,
                    };
                    if p.owner[to.index()][t as usize] as usize != part {
                        let list = &h.import[part][to.index()];
                        assert_eq!(list.iter().filter(|&&x| x == t).count(), 1, "{name}, part {part}: remote element {t} of `{}` not covered once", a.set_name(to));
                    }
                }
            }
            // Every increment or write through a map to an owned element runs on its owner.
            for arg in args {
                let Arg::Indirect(_, m, i, acc) = *arg else { continue };
                if !acc.writes() {
                    continue;
                }
                let (_, _, to, dim, values) = a.map_info(m);
                for e in 0..a.set_size(set) {
                    if p.owner[to.index()][values[e * dim + i] as usize] as usize == part {
                        assert!(executed.contains(&(e as u32)), "{name}: element {e} increments part {part}'s element but part {part} does not run it");
                    }
                }
            }
        }
    }
}

#[test]
fn metis_and_bisection_partitions_keep_the_halo_rules() {
    let (mesh, app) = airfoil((50, 66));
    let loops = app.loop_args();
    let cells = app.set_id("cells").unwrap();
    let coords = Method::Geometric { coords: app.dat_id("p_x").unwrap() };
    for parts in [2, 4, 8] {
        for method in [Method::Metis, coords] {
            let p = partition(&app.app, &loops, cells, parts, method).unwrap();
            let h = Halo::build(&app.app, &loops, &p);
            check(&app, &loops, &p, &h);
            // Balance: every part within 5 % of the average cell count.
            let sizes: Vec<usize> = (0..parts).map(|q| p.owned(cells, q).len()).collect();
            let average = mesh.cells.len() as f64 / parts as f64;
            assert!(sizes.iter().all(|&n| (n as f64) < 1.05 * average), "{method:?}, {parts} parts: cells {sizes:?}");
            println!("{method:?}, {parts} parts: cells {sizes:?}, edge cut {}, {} elements imported", p.edge_cut, h.imported());
        }
    }
}

/// The dual graph's cut, counted from the mesh's own edge list: METIS cuts fewer edges than
/// splitting the cells' numbering into equal blocks, and the same mesh gives the same parts.
#[test]
fn metis_cuts_fewer_edges_than_a_plain_split_and_is_deterministic() {
    let (mesh, app) = airfoil((50, 66));
    let loops = app.loop_args();
    let cells = app.set_id("cells").unwrap();
    let n = mesh.cells.len();
    let cut = |owner: &[u32]| mesh.edges.iter().filter(|e| owner[e.cells[0] as usize] != owner[e.cells[1] as usize]).count();
    for parts in [4, 8] {
        let p = partition(&app.app, &loops, cells, parts, Method::Metis).unwrap();
        let metis_cut = cut(&p.owner[cells.index()]);
        assert_eq!(metis_cut, p.edge_cut, "the partition's own count");
        let blocks: Vec<u32> = (0..n).map(|c| (c * parts / n) as u32).collect();
        assert!(metis_cut < cut(&blocks), "{parts} parts: METIS cuts {metis_cut}, blocks {}", cut(&blocks));
        let again = partition(&app.app, &loops, cells, parts, Method::Metis).unwrap();
        assert!(again.owner == p.owner, "{parts} parts: a second run gave other parts");
        println!("{parts} parts: METIS cuts {metis_cut} edges, blocks of the numbering {}", cut(&blocks));
    }
}

#[test]
fn bad_requests_are_refused_with_the_reason() {
    let (_, app) = airfoil((4, 6));
    let loops = app.loop_args();
    let cells = app.set_id("cells").unwrap();
    let e = partition(&app.app, &loops, cells, 0, Method::Metis).unwrap_err().to_string();
    assert!(e.contains("0 parts: allowed 1..=4096"), "{e}");
    let e = partition(&app.app, &loops, cells, 100, Method::Metis).unwrap_err().to_string();
    assert!(e.contains("fewer than the 100 parts"), "{e}");
    let bad = Method::Geometric { coords: app.dat_id("p_adt").unwrap() };
    let e = partition(&app.app, &loops, cells, 2, bad).unwrap_err().to_string();
    assert!(e.contains("dimension 1: allowed 2 or 3"), "{e}");
}

/// The partitioned reference ([`weft_ip::app::partition::run`]): with one part it is the
/// single-node run bit for bit; over the 8 nodes of a 4×2×1 torus (and 4 of a 2×2×1) it stays
/// within rounding of it after 5 iterations, with no NaN anywhere a node reads; and a halo with
/// one entry missing poisons the result.
#[test]
fn the_partitioned_reference_matches_the_single_node_run() {
    use weft_ip::app::partition::run::{run, InMemory};
    use weft_ip::router::RouterConfig;
    let grid = (16, 20);
    let (_, single_app) = airfoil(grid);
    let mut single = single_app;
    single.run_as(None, Some(5), &mut |_, _| {}).unwrap();
    let want_q = single.dat("p_q").unwrap().to_vec();
    let want_rms = single.global("rms").unwrap()[0];
    for (dims, exact) in [([1, 1, 1], true), ([2, 2, 1], false), ([4, 2, 1], false)] {
        let (_, mut app) = airfoil(grid);
        let loops = app.loop_args();
        let cells = app.set_id("cells").unwrap();
        let config = RouterConfig { dims, ..Default::default() };
        let p = partition(&app.app, &loops, cells, config.nodes(), Method::Metis).unwrap();
        let h = Halo::build(&app.app, &loops, &p);
        drop(loops);
        let parts = run(&mut app, &p, &h, &mut InMemory { config: &config }, Some(5), &mut |_, _| {}).unwrap();
        let q = parts.assembled(&app, &p, "p_q").unwrap();
        let rms = app.global("rms").unwrap()[0];
        assert!(q.iter().all(|x| x.is_finite()), "{dims:?}: a NaN reached an owned value");
        if exact {
            assert!(q.iter().zip(&want_q).all(|(a, b)| a.to_bits() == b.to_bits()) && rms.to_bits() == want_rms.to_bits(), "one part differs from the single node");
        } else {
            // Relative to the largest magnitude: some components are exactly zero on one node.
            let scale = want_q.iter().fold(0.0f64, |m, x| m.max(x.abs()));
            let worst = q.iter().zip(&want_q).map(|(a, b)| (a - b).abs() / scale).fold(0.0, f64::max);
            assert!(worst < 1e-12 && ((rms - want_rms) / want_rms).abs() < 1e-12, "{dims:?}: q off by {worst:e}, rms {rms:e} against {want_rms:e}");
            println!("{} nodes: q within {worst:.1e} of the single node, rms {rms:.15e} ({want_rms:.15e})", config.nodes());
        }
    }
    // One import entry fewer: the value it stood for is NaN on that node, and it spreads.
    let (_, mut app) = airfoil(grid);
    let loops = app.loop_args();
    let cells = app.set_id("cells").unwrap();
    let config = RouterConfig { dims: [2, 2, 1], ..Default::default() };
    let p = partition(&app.app, &loops, cells, 4, Method::Metis).unwrap();
    let mut h = Halo::build(&app.app, &loops, &p);
    drop(loops);
    h.import[0][cells.index()].remove(0);
    let parts = run(&mut app, &p, &h, &mut InMemory { config: &config }, Some(2), &mut |_, _| {}).unwrap();
    assert!(parts.assembled(&app, &p, "p_q").unwrap().iter().any(|x| x.is_nan()), "a missing halo entry went unseen");
}

/// Each node's share as its own mesh ([`weft_ip::app::partition::local`]): every map of an issued
/// element leads to the same element as the global map, the node's mesh loads into the
/// application, and its compiled program issues exactly each loop's executed elements — the
/// node's first elements — once per iteration.
#[test]
fn each_nodes_mesh_compiles_to_a_program_over_its_executed_elements() {
    use weft_hdl::float::FloatFormat;
    use weft_hdl::pipeline::Stages;
    use weft_ip::app::partition::local::local;
    use weft_ip::app::sequencer::{compile_program_share, NodeShare};
    let grid = (50, 66);
    let mesh = naca0012(grid.0, grid.1).unwrap().data();
    let app = Application::<f64>::load("airfoil.app", AIRFOIL, &mesh).unwrap();
    let loops = app.loop_args();
    let cells = app.set_id("cells").unwrap();
    let p = partition(&app.app, &loops, cells, 4, Method::Metis).unwrap();
    let h = Halo::build(&app.app, &loops, &p);
    let mut cycles = vec![];
    for node in 0..4 {
        let l = local(&app, &mesh, &p, &h, node).unwrap();
        let node_app = Application::<f64>::load("airfoil.app", AIRFOIL, &l.mesh).unwrap();
        for m in app.app.maps() {
            let (name, from, _, dim, global) = app.app.map_info(m);
            let local_map = &l.mesh.maps[name].1;
            let issued = loops.iter().filter(|x| x.1 == from).map(|x| l.extents[x.0]).max().unwrap_or(0);
            for e in 0..issued {
                for i in 0..dim {
                    let g = l.globals[from.index()][e] as usize;
                    let to = app.app.map_info(m).2;
                    assert_eq!(l.globals[to.index()][local_map[e * dim + i] as usize], global[g * dim + i], "node {node}, map {name}, local element {e}");
                }
            }
        }
        let compiled = compile_program_share(&node_app, &Stages::balanced(FloatFormat::BINARY64), 1, &NodeShare { extents: l.extents.clone(), ..Default::default() }).unwrap();
        for (name, slots) in &compiled.plan.schedules {
            let mut issued: Vec<u32> = slots.iter().flatten().copied().collect();
            issued.sort_unstable();
            assert_eq!(issued, (0..l.extents[name] as u32).collect::<Vec<_>>(), "node {node}, loop {name}");
        }
        cycles.push(compiled.cycles_with(Some(1)));
    }
    println!("9,900 cells on 4 nodes, one pipeline each: cycles an iteration per node (the compiler's model) {cycles:?}");
}

/// The partitioned reference in the nodes' hardware order ([`weft_ip::app::partition::run::run_in`]):
/// with one part and that node's compiled schedules it is the single-node hardware-order
/// reference bit for bit; over 4 nodes, each in its own compiled schedules, it stays within
/// rounding of it.
#[test]
fn the_partitioned_reference_runs_in_each_nodes_compiled_order() {
    use weft_hdl::float::{FloatFormat, FloatOperator};
    use weft_hdl::pipeline::Stages;
    use weft_ip::app::partition::local::local;
    use weft_ip::app::partition::run::{run_in, InMemory};
    use weft_ip::app::plan::Plan;
    use weft_ip::app::sequencer::{compile_program_share, NodeShare};
    use weft_ip::router::RouterConfig;
    let grid = (16, 20);
    let mesh = naca0012(grid.0, grid.1).unwrap().data();
    let stages = Stages::balanced(FloatFormat::BINARY64);
    let lanes = stages.of(FloatOperator::Add);
    let mut single = Application::<f64>::load("airfoil.app", AIRFOIL, &mesh).unwrap();
    single.app.set_interleave(Some(lanes));
    let plan = Plan::new(&single, lanes).unwrap();
    single.run_as(Some(&plan.schedules), Some(3), &mut |_, _| {}).unwrap();
    let want_q = single.dat("p_q").unwrap().to_vec();
    let want_rms = single.global("rms").unwrap()[0];
    for dims in [[1, 1, 1], [2, 2, 1]] {
        let config = RouterConfig { dims, ..Default::default() };
        let mut app = Application::<f64>::load("airfoil.app", AIRFOIL, &mesh).unwrap();
        let loops = app.loop_args();
        let cells = app.set_id("cells").unwrap();
        let p = partition(&app.app, &loops, cells, config.nodes(), Method::Metis).unwrap();
        let h = Halo::build(&app.app, &loops, &p);
        drop(loops);
        let orders: Vec<_> = (0..config.nodes())
            .map(|node| {
                let l = local(&app, &mesh, &p, &h, node).unwrap();
                let node_app = Application::<f64>::load("airfoil.app", AIRFOIL, &l.mesh).unwrap();
                let compiled = compile_program_share(&node_app, &stages, 1, &NodeShare { extents: l.extents.clone(), ..Default::default() }).unwrap();
                l.global_orders(&app, &compiled.plan.schedules)
            })
            .collect();
        app.app.set_interleave(Some(lanes));
        let parts = run_in(&mut app, &p, &h, &mut InMemory { config: &config }, Some(&orders), Some(3), &mut |_, _| {}).unwrap();
        let q = parts.assembled(&app, &p, "p_q").unwrap();
        let rms = app.global("rms").unwrap()[0];
        if config.nodes() == 1 {
            assert!(
                q.iter().zip(&want_q).all(|(a, b)| a.to_bits() == b.to_bits()) && rms.to_bits() == want_rms.to_bits(),
                "one node in its compiled order differs from the single-node hardware order"
            );
        } else {
            let scale = want_q.iter().fold(0.0f64, |m, x| m.max(x.abs()));
            let worst = q.iter().zip(&want_q).map(|(a, b)| (a - b).abs() / scale).fold(0.0, f64::max);
            assert!(q.iter().all(|x| x.is_finite()) && worst < 1e-12 && ((rms - want_rms) / want_rms).abs() < 1e-12, "4 nodes: q off by {worst:e}, rms {rms:e} against {want_rms:e}");
        }
    }
}

/// Airfoil on 4 nodes' compiled programs in the built-in simulator
/// ([`weft_ip::app::partition::nodes`]): each node's accelerator runs its share, and at its sync
/// steps the host starts and combines the reduction and refreshes the halos from the owners'
/// memories. After 2 iterations every node's owned values of every dat and the rms equal the
/// partitioned reference in the nodes' compiled order bit for bit, and every stretch between
/// sync steps took the cycles of the compiler's model.
#[test]
fn compiled_nodes_compute_the_partitioned_reference() {
    use weft_hdl::float::{FloatFormat, FloatOperator};
    use weft_hdl::netlist::eval::Evaluator;
    use weft_hdl::pipeline::Stages;
    use weft_ip::app::partition::nodes::{nodes, run_nodes};
    use weft_ip::app::partition::run::{run_in, InMemory};
    use weft_ip::router::RouterConfig;
    let mesh = naca0012(16, 20).unwrap().data();
    let stages = Stages::balanced(FloatFormat::BINARY64);
    let load = |m: &weft_ip::app::MeshData| Application::<f64>::load("airfoil.app", AIRFOIL, m);
    let app = load(&mesh).unwrap();
    let loops = app.loop_args();
    let cells = app.set_id("cells").unwrap();
    let config = RouterConfig { dims: [2, 2, 1], ..Default::default() };
    let p = partition(&app.app, &loops, cells, 4, Method::Metis).unwrap();
    let h = Halo::build(&app.app, &loops, &p);
    drop(loops);
    let mut built = nodes(&app, &mesh, &p, &h, &stages, &load, &|c| {
        let mut e = Evaluator::new(c.net.clone());
        e.reset(2);
        e
    })
    .unwrap();
    let orders: Vec<_> = built.iter().map(|n| n.share.global_orders(&app, &n.compiled.plan.schedules)).collect();
    let got = run_nodes(&app, &mut built, &p, &h, &mut InMemory { config: &config }, 2, 10_000_000).unwrap();
    let rms_hw = {
        let n = &mut built[0];
        weft_ip::app::host::Host { app: &n.app, plan: &n.compiled.plan, name: "" }.read_global(&mut n.sim, "rms")[0]
    };
    let mut reference = load(&mesh).unwrap();
    reference.app.set_interleave(Some(stages.of(FloatOperator::Add)));
    let want = run_in(&mut reference, &p, &h, &mut InMemory { config: &config }, Some(&orders), Some(2), &mut |_, _| {}).unwrap();
    for dat in ["p_q", "p_qold", "p_adt", "p_res"] {
        let (w, g) = (want.assembled(&app, &p, dat).unwrap(), got.parts.assembled(&app, &p, dat).unwrap());
        let differ = w.iter().zip(&g).filter(|(a, b)| a.to_bits() != b.to_bits()).count();
        assert_eq!(differ, 0, "{dat}: {differ} values differ from the partitioned reference");
    }
    assert_eq!(rms_hw.to_bits(), reference.global("rms").unwrap()[0].to_bits(), "rms");
    // Every stretch between sync steps takes on every node what the compiler's model of that
    // node's program gives.
    for (p, n) in built.iter().enumerate() {
        let model: Vec<u64> = n.compiled.phases(Some(2)).iter().map(|s| s.0 as u64).collect();
        let simulated: Vec<u64> = got.phases.iter().map(|s| s[p]).collect();
        assert_eq!(simulated, model, "node {p}: cycles between sync steps");
    }
    println!("4 compiled nodes, 960 cells, 2 iterations: {} edges, {} sync steps", got.cycles, got.syncs);
}
