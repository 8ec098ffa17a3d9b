//! `weft bench airfoil`: seed 002's performance model ([`weft_ip::airfoil::model`]) beside the
//! generated accelerator in Verilator.
//!
//! - **Simulated**: `airfoil_p1` and `airfoil_p4` on O-grids of 10³ and 10⁴ cells, both
//!   schedules; each pass checked bit for bit against the C reference. Per on-chip phase (load,
//!   edges, unload) the cycles simulated beside the cycles the model predicts (one command, one
//!   edge row, one read a cycle; t_FPGA = slots / P + the pipeline's fill), and the edge phase as
//!   seed 002's model counts it (no fill).
//! - **Design space**: the model's time for one `res_calc` pass over a 10⁵-cell mesh, pipelines
//!   1–8 × clock × partition size, with the DRAM and PCIe bandwidths given.

use crate::Error;
use std::path::Path;

use serde::Serialize;
use weft_ip::airfoil::model::{on_chip, predict, Machine};
use weft_ip::airfoil::{accelerator, generate};
use weft_sim::airfoil::check_mesh;
use weft_sim::catalog::AIRFOIL;
use weft_sim::link::{Device, VerilatorDevice};
use weft_sim::plot::{Plot, Series};

/// Meshes simulated: (cells round the body, layers out).
pub const MESHES: [(usize, usize); 2] = [(40, 25), (200, 50)];
/// The design-space mesh: 500 × 200 = 10⁵ cells.
pub const SPACE_MESH: (usize, usize) = (500, 200);
pub const CLOCKS_MHZ: [f64; 3] = [100.0, 150.0, 200.0];
pub const PARTITIONS: [usize; 3] = [2048, 8192, 32768];

#[derive(Clone, Debug, Serialize)]
pub struct Simulated {
    pub module: String,
    pub cells: usize,
    pub edges: usize,
    pub schedule: String,
    pub noop_slots: usize,
    /// Load, edges, unload: cycles simulated and predicted.
    pub simulated: [u64; 3],
    pub predicted: [u64; 3],
    /// The edge phase as seed 002's model counts it: slots / P, without the pipeline's fill.
    pub seed_model_edges: u64,
}

#[derive(Clone, Debug, Serialize)]
pub struct SpacePoint {
    pub pipelines: usize,
    pub clock_mhz: f64,
    pub partition_cells: usize,
    pub seconds: f64,
}

#[derive(Clone, Debug, Serialize)]
pub struct Report {
    pub dram_gbs: f64,
    pub pcie_gbs: f64,
    pub lambda: usize,
    /// Cycles from the last edge row in to its last residual written (model's fill).
    pub fill_cycles: usize,
    pub simulated: Vec<Simulated>,
    pub space_cells: usize,
    pub space: Vec<SpacePoint>,
}

pub fn run_all(generated: &Path, dram_gbs: f64, pcie_gbs: f64, progress: &mut dyn FnMut(&str)) -> Result<Report, Error> {
    let mut simulated = vec![];
    let (mut lambda, mut fill) = (0, 0);
    for params in &AIRFOIL {
        let name = params.name();
        let timing = accelerator(params)?.1;
        (lambda, fill) = (timing.lambda, timing.edge_to_res);
        progress(&format!("building {name} in Verilator"));
        let mut dev = VerilatorDevice::new(&generated.join(format!("airfoil/{name}.v")), &name)?;
        dev.clock(true);
        dev.clock(true);
        for (around, out) in MESHES {
            let mesh = generate(around, out, 0xA1 ^ around as u64)?;
            for p in check_mesh(&mut dev, params, &timing, &mesh, 3)? {
                let r = &p.run;
                let predicted = on_chip(mesh.x.len(), mesh.cells.len(), p.slots, params.pipelines, fill);
                let seed_model_edges = on_chip(mesh.x.len(), mesh.cells.len(), p.slots, params.pipelines, 0)[1];
                simulated.push(Simulated {
                    module: name.clone(),
                    cells: mesh.cells.len(),
                    edges: mesh.edges.len(),
                    schedule: p.schedule.into(),
                    noop_slots: p.noop_slots,
                    simulated: [r.load_cycles, r.edge_cycles, r.unload_cycles],
                    predicted,
                    seed_model_edges,
                });
                progress(&format!("{name}: {} cells, {} schedule bit-exact", mesh.cells.len(), p.schedule));
            }
        }
    }
    let mesh = generate(SPACE_MESH.0, SPACE_MESH.1, 1)?;
    let mut space = vec![];
    for pipelines in 1..=8 {
        for clock_mhz in CLOCKS_MHZ {
            for partition_cells in PARTITIONS {
                let m = Machine { dram_gbs, pcie_gbs, clock_mhz, pipelines, fill_cycles: fill };
                space.push(SpacePoint { pipelines, clock_mhz, partition_cells, seconds: predict(&mesh, partition_cells, &m) });
            }
        }
    }
    Ok(Report { dram_gbs, pcie_gbs, lambda, fill_cycles: fill, simulated, space_cells: mesh.cells.len(), space })
}

pub fn table(r: &Report) -> String {
    let mut s = format!(
        "Airfoil res_calc accelerator, λ = {} rows, fill {} cycles: cycles simulated (Verilator, generated RTL) / predicted by the model (with fill); the edge phase also as seed 002's model counts it (no fill)\n",
        r.lambda, r.fill_cycles
    );
    s += "| module | cells | schedule | no-op slots | load | edges | unload | edges sim/model | seed 002 model | sim/seed 002 |\n| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n";
    for p in &r.simulated {
        let cell = |k: usize| format!("{} / {}", p.simulated[k], p.predicted[k]);
        let ratio = |m: u64| p.simulated[1] as f64 / m as f64;
        s += &format!(
            "| {} | {} | {} | {} | {} | {} | {} | {:.3} | {} | {:.3} |\n",
            p.module,
            p.cells,
            p.schedule,
            p.noop_slots,
            cell(0),
            cell(1),
            cell(2),
            ratio(p.predicted[1]),
            p.seed_model_edges,
            ratio(p.seed_model_edges)
        );
    }
    s += &format!("\nDesign space (model with fill): one res_calc pass over {} cells, DRAM {} GB/s, PCIe {} GB/s, time in µs\n", r.space_cells, r.dram_gbs, r.pcie_gbs);
    s += "| pipelines | clock MHz |";
    for p in PARTITIONS {
        s += &format!(" {p} cells |");
    }
    s += "\n| ---: | ---: |";
    s += &" ---: |".repeat(PARTITIONS.len());
    s += "\n";
    for pipelines in 1..=8 {
        for clock in CLOCKS_MHZ {
            s += &format!("| {pipelines} | {clock} |");
            for part in PARTITIONS {
                let t = r.space.iter().find(|x| x.pipelines == pipelines && x.clock_mhz == clock && x.partition_cells == part).map_or(0.0, |x| x.seconds);
                s += &format!(" {:.1} |", t * 1e6);
            }
            s += "\n";
        }
    }
    s
}

/// Execution time against pipelines, one curve per clock, at the middle partition size (seed
/// 002's "execution time vs number of pipelines and clock frequency").
pub fn plot(r: &Report) -> String {
    let part = PARTITIONS[1];
    let series: Vec<Series> = CLOCKS_MHZ
        .iter()
        .map(|c| Series { name: format!("{c} MHz"), points: r.space.iter().filter(|x| x.clock_mhz == *c && x.partition_cells == part).map(|x| (x.pipelines as f64, x.seconds * 1e6)).collect() })
        .collect();
    let y_max = r.space.iter().filter(|x| x.partition_cells == part).map(|x| x.seconds * 1e6).fold(0.0, f64::max) * 1.1;
    Plot { title: format!("res_calc over {} cells, partitions of {part} cells", r.space_cells), x_label: "pipelines".into(), y_label: "µs per pass".into(), log2_x: false, y_max, series }.svg()
}
