//! MIDG2 written as a weft application (`examples/apps/midg.app`: dense loops for Dr, Ds, Dt and
//! LIFT, kernel loops for the curls, the flux and the update, the Runge–Kutta stages in its
//! program) computes bit for bit what the solver's software model (`midg::solver::Maxwell`,
//! written independently as MIDG2's loops) computes: every field at every node after three time
//! steps of the cavity mode, in binary32 (the file's type) and binary64.

use weft_ip::app::{Application, Element};
use weft_ip::midg::solver::{cavity_mode, Maxwell};
use weft_ip::midg::{app, Geometry, Operators, TetMesh};

const MIDG: &str = include_str!("../../examples/apps/midg.app");

/// The cavity mode on `refine`³ sub-cubes: the solver model and the application loaded in `T`
/// with the model's time step.
fn cavity<T: Element>(refine: usize) -> (Maxwell<T>, Application<T>) {
    cavity_at(app::ORDER, MIDG, refine)
}

/// The same at order `n`, the application from `text`.
fn cavity_at<T: Element>(n: usize, text: &str, refine: usize) -> (Maxwell<T>, Application<T>) {
    let mesh = TetMesh::unit_cube(refine).unwrap();
    let op = Operators::new(n);
    let g = Geometry::new(&mesh, &mesh.connect().unwrap(), &op).unwrap();
    let initial = |x: f64, y: f64, z: f64| cavity_mode(x, y, z, 0.0);
    let model = Maxwell::<T>::from_parts(&op, &g, mesh.elements.len(), &initial);
    let data = app::from_parts(&op, &g, mesh.elements.len(), &initial);
    let mut a = Application::<T>::load_as("examples/apps/midg.app", text, &data).unwrap();
    a.set_global("dt", &[T::from_f64(model.dt)]).unwrap();
    (model, a)
}

fn same_as_the_model<T: Element>(refine: usize, steps: usize) {
    let (model, a) = cavity::<T>(refine);
    same_after(model, a, refine, steps);
}

fn same_after<T: Element>(mut model: Maxwell<T>, mut a: Application<T>, refine: usize, steps: usize) {
    a.run_as(None, Some(steps), &mut |_, _| {}).unwrap();
    for _ in 0..steps {
        model.step();
    }
    let u = a.dat("p_u").unwrap();
    let np = model.np;
    let mut differ = 0;
    for i in 0..model.k * np {
        for c in 0..6 {
            if u[i * 6 + c].to_lane() != model.fields[c][i].to_lane() {
                differ += 1;
            }
        }
    }
    assert_eq!(differ, 0, "{refine}³ cubes, {steps} steps: {differ} of {} values differ from the model", model.k * np * 6);
    let largest = model.fields[4].iter().fold(0.0f64, |m, v| m.max(v.to_f64().unwrap().abs()));
    assert!(largest > 0.5, "Ey has decayed to {largest}: the run did nothing");
}

#[test]
fn the_application_is_the_solver_model_bit_for_bit_in_binary32() {
    same_as_the_model::<f32>(2, 3);
}

#[test]
fn the_application_is_the_solver_model_bit_for_bit_in_binary64() {
    same_as_the_model::<f64>(1, 2);
}

/// `midg::app::source(n)` writes the file at MIDG2's other orders: at N = 1, 2 and 4 the
/// application equals the solver model of that order bit for bit after two steps (binary32, 48
/// elements: at N = 1 one sub-cube's nodes are all on the walls, where the mode is zero); order 5
/// is refused by name.
#[test]
fn the_application_at_orders_1_2_and_4_is_the_solver_model() {
    for n in [1, 2, 4] {
        let text = app::source(n).unwrap();
        let (model, a) = cavity_at::<f32>(n, &text, 2);
        assert_eq!(model.np, (n + 1) * (n + 2) * (n + 3) / 6);
        same_after(model, a, 2, 2);
    }
    assert_eq!(app::source(3).unwrap(), MIDG, "order 3 is the shipped file");
    let err = app::source(5).unwrap_err().to_string();
    assert!(err.contains("order 5") && err.contains("1 ..= 4"), "{err}");
}

/// The whole program compiled to hardware (dense operators with 4 lanes for Dr, Ds, Dt and LIFT,
/// pipelines for the curls, the flux and the update, the sequencer running the five stages) in
/// the built-in simulator: after one time step every field at every node is the solver model's
/// bit for bit, in the cycles the compiler's model gives.
#[test]
fn the_compiled_program_is_the_solver_model_bit_for_bit() {
    use weft_hdl::float::FloatFormat;
    use weft_hdl::netlist::eval::Evaluator;
    use weft_hdl::pipeline::Stages;
    use weft_ip::app::host::Host;
    use weft_ip::app::sequencer::compile_program;
    let steps = 1;
    let (mut model, a) = cavity::<f32>(1);
    let compiled = compile_program(&a, &Stages::balanced(FloatFormat::BINARY32)).unwrap();
    let expected = compiled.cycles_with(Some(steps));
    let mut ev = Evaluator::new(compiled.net);
    ev.reset(2);
    let host = Host { app: &a, plan: &compiled.plan, name: "" };
    host.load_program(&mut ev, &compiled.loops);
    ev.set_input("iterations", steps as u128);
    let took = host.run(&mut ev, 100_000_000).unwrap();
    for _ in 0..steps {
        model.step();
    }
    let u = host.read(&mut ev, "p_u");
    let differ = (0..model.k * model.np).flat_map(|i| (0..6).map(move |c| (i, c))).filter(|&(i, c)| u[i * 6 + c].to_bits() != model.fields[c][i].to_bits()).count();
    assert_eq!(differ, 0, "{differ} of {} values differ from the model", model.k * model.np * 6);
    assert_eq!(took, expected, "cycles: the compiler's model");
    ev.settle();
    assert_eq!(ev.get_output("derivatives_elements"), (5 * steps * model.k) as u128, "elements of the dense loop");
    eprintln!("MIDG2 N = 3, {} elements, {steps} step(s) in {took} cycles", model.k);
}

/// Split over the eight nodes of a 2×2×2 torus (METIS on the elements' face graph, nodes and
/// face nodes following their element), with face halos refreshed from their owners: every
/// element's values are computed by its owner in the single node's order, so after two time
/// steps the assembled fields are the single node's bit for bit, and a halo entry left out
/// poisons the run.
#[test]
fn partitioned_over_eight_nodes_is_the_single_node_bit_for_bit() {
    use weft_ip::app::partition::halo::Halo;
    use weft_ip::app::partition::run::{run, InMemory};
    use weft_ip::app::partition::{partition, Method};
    use weft_ip::router::RouterConfig;
    let mesh = TetMesh::unit_cube(2).unwrap();
    let (data, dt) = app::mesh_data(&mesh, app::ORDER, &|x, y, z| cavity_mode(x, y, z, 0.0)).unwrap();
    let load = || {
        let mut a = Application::<f32>::load("examples/apps/midg.app", MIDG, &data).unwrap();
        a.set_global("dt", &[dt as f32]).unwrap();
        a
    };
    let mut single = load();
    single.run_as(None, Some(2), &mut |_, _| {}).unwrap();
    let mut split = load();
    let loops = split.loop_args();
    let elements = split.set_id("elements").unwrap();
    let config = RouterConfig { dims: [2, 2, 2], ..Default::default() };
    let p = partition(&split.app, &loops, elements, 8, Method::Metis).unwrap();
    let mut h = Halo::build(&split.app, &loops, &p);
    drop(loops);
    let counts: Vec<usize> = (0..8).map(|n| p.owner[elements.index()].iter().filter(|o| **o == n).count()).collect();
    assert!(counts.iter().all(|c| (5..=7).contains(c)), "elements per node {counts:?}");
    let got = run(&mut split, &p, &h, &mut InMemory { config: &config }, Some(2), &mut |_, _| {}).unwrap();
    let want = single.dat("p_u").unwrap();
    let assembled = got.assembled(&split, &p, "p_u").unwrap();
    assert!(assembled.iter().zip(want).all(|(a, b)| a.to_bits() == b.to_bits()), "the split run differs from the single node");
    let imported: usize = h.import.iter().map(|sets| sets.iter().map(Vec::len).sum::<usize>()).sum();
    assert!(imported > 0, "no halo");
    // One node without one of its imports: its flux reads a value nobody refreshed.
    let nodes = split.set_id("nodes").unwrap().index();
    let node = (0..8).find(|&n| !h.import[n][nodes].is_empty()).unwrap();
    h.import[node][nodes].pop();
    let mut poisoned = load();
    let bad = run(&mut poisoned, &p, &h, &mut InMemory { config: &config }, Some(2), &mut |_, _| {}).unwrap();
    let bad = bad.assembled(&poisoned, &p, "p_u").unwrap();
    assert!(bad.iter().zip(want).any(|(a, b)| a.to_bits() != b.to_bits()), "a missing halo entry changed nothing");
}
