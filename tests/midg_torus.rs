//! MIDG2 (`examples/apps/midg.app`, N = 3) over the generated nodes of `torus_2x2x2`: each node's
//! compiled program (dense operators for Dr, Ds, Dt and LIFT, the curl, flux and update
//! pipelines, the sequencer running the Runge–Kutta stages) in the built-in simulator, its face
//! halos carried at the program's sync steps as packets through the generated routers and links
//! (Verilator, one model per node; `weft_sim::network::mesh_app::TorusFabric`), placed by their
//! headers. With bit errors on every cable and one cable pulled during a refresh, every node's
//! owned fields equal the partitioned software model's bit for bit after three time steps — and
//! so the single node's and the solver model's, which `-p weft-ip --test midg_app` shows equal.
//! About 8 minutes (eight compiled nodes in the built-in simulator): opt-in,
//! `cargo test --release --test midg_torus -- --ignored`.

use weft::ip::app::partition::halo::Halo;
use weft::ip::app::partition::nodes::{nodes, run_nodes};
use weft::ip::app::partition::run::{run_in, InMemory};
use weft::ip::app::partition::{partition, Method};
use weft::ip::app::{Application, MeshData};
use weft::ip::midg::solver::cavity_mode;
use weft::ip::midg::{app, TetMesh};
use weft::ip::router::Direction;
use weft::ip::system::allreduce::ElementType;
use weft::ip::weft_hdl::float::FloatFormat;
use weft::ip::weft_hdl::netlist::eval::Evaluator;
use weft::ip::weft_hdl::pipeline::Stages;
use weft::sim::network::mesh_app::TorusFabric;

const MIDG: &str = include_str!("../examples/apps/midg.app");

#[test]
#[ignore]
fn midg2_compiled_nodes_over_torus_2x2x2_are_the_partitioned_model() {
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
    let mut built = nodes(&a, &data, &p, &h, &stages, &load, &|c| {
        let mut e = Evaluator::new(c.net.clone());
        e.reset(2);
        e
    })
    .unwrap();
    let orders: Vec<_> = built.iter().map(|n| n.share.global_orders(&a, &n.compiled.plan.schedules)).collect();
    let mut reference = load(&data).unwrap();
    let want = run_in(&mut reference, &p, &h, &mut InMemory { config: &rc }, Some(&orders), Some(steps), &mut |_, _| {}).unwrap();

    let work = std::env::temp_dir().join(format!("weft-test-midg-torus-{}", std::process::id()));
    let mut torus = weft::bench::allreduce::engine_torus(&system, ElementType::F32, &work, &mut |line| eprintln!("{line}")).unwrap();
    let _ = std::fs::remove_dir_all(&work);
    torus.set_bit_error_rate(2e-6);
    let mut fabric = TorusFabric::new(&mut torus, weft::bench::allreduce::PORTS, 2, 2_000_000);
    fabric.cut = Some((1, Direction { dim: 0, plus: true }, 10_000, 3));
    let got = run_nodes(&a, &mut built, &p, &h, &mut fabric, steps as u32, 50_000_000).unwrap();
    let traffic = fabric.traffic.clone();
    let flipped = torus.flipped_bits();
    let (_, set, dim) = a.app.dat_info(a.dat_id("p_u").unwrap());
    let w = want.assembled(&a, &p, "p_u").unwrap();
    let differ = (0..a.app.set_size(set)).filter(|&e| {
        let o = p.owner[set.index()][e] as usize;
        (0..dim).any(|c| got.parts.values[o]["p_u"][e * dim + c].to_bits() != w[e * dim + c].to_bits())
    });
    assert_eq!(differ.count(), 0, "owned fields differ from the partitioned model");
    assert!(flipped > 0, "no bit was flipped");
    eprintln!(
        "MIDG2 N = 3 over torus_2x2x2: {} elements, {steps} steps; {} accelerator cycles (slowest node), {} sync steps; {} halo refreshes ({} packets, {} bytes, {} cycles); {flipped} bits flipped",
        mesh.elements.len(),
        got.cycles,
        got.syncs,
        traffic.refreshes,
        traffic.packets,
        traffic.bytes,
        traffic.refresh_cycles
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
