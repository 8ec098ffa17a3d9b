//! MIDG2 (`examples/apps/midg.app`, N = 3) over the generated nodes of `torus_2x2x2` with no
//! host after the load: each node's application module (compiled program — dense operators for
//! Dr, Ds, Dt and LIFT, the curl, flux and update pipelines, the sequencer running the
//! Runge–Kutta stages — beside its halo engine and reduction bridge) generated as Verilog and
//! run in Verilator, attached beat by beat to its generated node (Verilator too: two models per
//! node, `weft_sim::network::app_nodes`); the engines swap the face halos as packets through the
//! routers and links at the program's sync steps. With bit errors on every cable and one cable
//! pulled during the run, every node's owned fields equal the partitioned software model's bit
//! for bit after three time steps — and so the single node's and the solver model's, which
//! `-p weft-ip --test midg_app` shows equal. Verilating the eight application modules takes
//! about 10 minutes the first time (builds are cached): opt-in, `cargo test --release --test
//! midg_torus -- --ignored`.

use weft::ip::app::partition::halo::Halo;
use weft::ip::app::partition::run::{run_in, InMemory};
use weft::ip::app::partition::{partition, Method};
use weft::ip::app::{Application, MeshData};
use weft::ip::midg::solver::cavity_mode;
use weft::ip::midg::{app, TetMesh};
use weft::ip::router::Direction;
use weft::ip::system::allreduce::{Collective, ElementType, ReduceOp};
use weft::ip::weft_hdl::float::FloatFormat;
use weft::ip::weft_hdl::pipeline::Stages;
use weft::sim::network::app_nodes::{app_nodes_in, run_app_nodes, AppSim};

const MIDG: &str = include_str!("../examples/apps/midg.app");

#[test]
#[ignore]
fn midg2_with_no_host_over_torus_2x2x2_is_the_partitioned_model() {
    let steps = 3;
    let mut system = weft::system::shipped()[1].clone();
    system.node.router.local_ports = 3;
    let rc = system.node.router.clone();
    let mesh = TetMesh::unit_cube(2).unwrap();
    let (data, dt) = app::mesh_data(&mesh, app::ORDER, &|x, y, z| cavity_mode(x, y, z, 0.0)).unwrap();
    let load = |m: &MeshData| -> Result<Application<f32>, weft::ip::Error> {
        let mut a = Application::<f32>::load("examples/apps/midg.app", MIDG, m)?;
        a.set_global("dt", &[dt as f32])?;
        Ok(a)
    };
    let a = load(&data).unwrap();
    let loops = a.loop_args();
    let p = partition(&a.app, &loops, a.set_id("elements").unwrap(), rc.nodes(), Method::Metis).unwrap();
    let h = Halo::build(&a.app, &loops, &p);
    drop(loops);
    let stages = Stages::balanced(FloatFormat::BINARY32);
    let work = std::env::temp_dir().join(format!("weft-test-midg-torus-{}", std::process::id()));
    let mut torus = weft::bench::allreduce::engine_torus(&system, ElementType::F32, &work, &mut |line| eprintln!("{line}")).unwrap();
    let _ = std::fs::remove_dir_all(&work);
    let modules = std::env::temp_dir().join(format!("weft-test-midg-apps-{}", std::process::id()));
    let mut nodes = app_nodes_in(&AppSim::Verilator(modules.clone()), "midg", &a, &data, &p, &h, &stages, &torus, &load).unwrap();
    let _ = std::fs::remove_dir_all(&modules);
    let orders: Vec<_> = nodes.iter().map(|n| n.share.global_orders(&a, &n.compiled.plan.schedules)).collect();
    let mut reference = load(&data).unwrap();
    let want = run_in(&mut reference, &p, &h, &mut InMemory { config: &rc }, Some(&orders), Some(steps), &mut |_, _| {}).unwrap();

    // MIDG2 reduces nothing; the collective engine is programmed as for any application.
    torus.program_collective(Collective::Allreduce, weft::bench::allreduce::PORTS, ReduceOp::Sum).unwrap();
    torus.set_bit_error_rate(2e-6);
    let cut = Some((1, Direction { dim: 0, plus: true }, 20_000, 10_000));
    let run = run_app_nodes(&mut torus, &mut nodes, weft::bench::allreduce::PORTS, steps as u32, cut, 5_000_000).unwrap();
    let flipped = torus.flipped_bits();
    let (_, set, dim) = a.app.dat_info(a.dat_id("p_u").unwrap());
    let w = want.assembled(&a, &p, "p_u").unwrap();
    let mut compared = 0;
    for (q, n) in nodes.iter_mut().enumerate() {
        let values = n.read("p_u");
        for (l, &e) in n.share.globals[set.index()].iter().enumerate() {
            if p.owner[set.index()][e as usize] as usize == q {
                for c in 0..dim {
                    assert_eq!(values[l * dim + c].to_bits(), w[e as usize * dim + c].to_bits(), "node {q}, p_u[{e}][{c}]");
                    compared += 1;
                }
            }
        }
    }
    assert_eq!(compared, a.app.set_size(set) * dim, "every field value is owned by one node");
    assert!(run.timeouts.iter().all(|&t| t == 0), "engine timeouts {:?}", run.timeouts);
    assert!(run.unexpected.iter().all(|&u| u == 0), "data packets outside a refresh step {:?}", run.unexpected);
    // Each node receives its import halo of p_u at each of the 5 stages of every step.
    for (q, n) in nodes.iter().enumerate() {
        let imports: usize = n.tables.steps.iter().map(|s| s.expected).sum();
        assert_eq!(imports, h.import[q][set.index()].len(), "node {q}: import halo");
        assert_eq!(run.received[q] as usize, imports * 5 * steps, "node {q}: halo elements received");
    }
    assert!(flipped > 0, "no bit was flipped");
    eprintln!(
        "MIDG2 N = 3 over torus_2x2x2, no host: {} elements, {steps} steps in {} torus cycles; {} halo elements received; {flipped} bits flipped, a cable pulled for 10,000 cycles",
        mesh.elements.len(),
        run.cycles,
        run.received.iter().sum::<u64>()
    );
}

/// The compiled single-node program (6 elements) as Verilog passes Verilator's lint with -Wall.
#[test]
fn the_compiled_program_lints() {
    use weft::ip::app::sequencer::{compile_program, program_verilog};
    let mesh = TetMesh::unit_cube(1).unwrap();
    let (data, _) = app::mesh_data(&mesh, app::ORDER, &|x, y, z| cavity_mode(x, y, z, 0.0)).unwrap();
    let a = Application::<f32>::load("examples/apps/midg.app", MIDG, &data).unwrap();
    let compiled = compile_program(&a, &Stages::balanced(FloatFormat::BINARY32)).unwrap();
    let dir = std::env::temp_dir().join(format!("weft-test-midg-lint-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("midg.v");
    let text = program_verilog(&a, "midg", &compiled).unwrap();
    assert!(text.contains("module midg_derivatives_ur"), "the dense operator of `ur = Dr * u` is not its own module");
    std::fs::write(&file, text).unwrap();
    let lint = weft::tools::verilator_lint(&file, "midg");
    let _ = std::fs::remove_dir_all(&dir);
    lint.unwrap();
}
