//! The generated Airfoil accelerators in Verilator on meshes of 10³ and 10⁴ cells: every
//! residual bit-exact to the C-semantics reference over the same schedule, for seed 002's
//! colouring schedule and weft's list schedule, with one and four pipelines. No-op slots carry a
//! real edge's indices, so an accelerator that committed a no-op would fail the comparison.

use std::path::Path;

use weft::ip::airfoil::{accelerator, generate};
use weft::sim::airfoil::check_mesh;
use weft::sim::catalog::AIRFOIL;
use weft::sim::link::{Device, VerilatorDevice};

fn check(pipelines: usize, meshes: &[(usize, usize)]) {
    let params = AIRFOIL.iter().find(|p| p.pipelines == pipelines).unwrap();
    let timing = accelerator(params).unwrap().1;
    let name = params.name();
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("generated/airfoil/{name}.v"));
    let mut dev = VerilatorDevice::new(&file, &name).unwrap_or_else(|e| panic!("{e}"));
    dev.clock(true);
    dev.clock(true);
    for &(around, out) in meshes {
        let mesh = generate(around, out, 0xA1 ^ around as u64).unwrap();
        for p in check_mesh(&mut dev, params, &timing, &mesh, 3).unwrap_or_else(|e| panic!("{e}")) {
            let r = &p.run;
            println!(
                "{name}: {} cells, {} edges, {}: {} rows ({} no-op slots), edges in {} cycles, load {}, unload {}",
                mesh.cells.len(),
                mesh.edges.len(),
                p.schedule,
                r.rows,
                p.noop_slots,
                r.edge_cycles,
                r.load_cycles,
                r.unload_cycles
            );
        }
    }
}

#[test]
fn one_pipeline_is_bit_exact_on_meshes_of_a_thousand_and_ten_thousand_cells() {
    check(1, &[(40, 25), (200, 50)]);
}

#[test]
fn four_pipelines_are_bit_exact_on_ten_thousand_cells() {
    check(4, &[(200, 50)]);
}
