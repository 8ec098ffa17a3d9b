//! `weft bench dg`: the DG halo exchange of seed 000 on the 2×2×2 torus, in Verilator on the
//! generated RTL ([`weft_sim::network::halo`]): each stage the halo goes over the fabric (one
//! model per node, cables as channel models with bit errors), the flux and the update run on the
//! generated kernels, and after every time step each node's state is checked bit for bit against
//! the software model of the whole mesh ([`GlobalModel`], no partition, no fabric).
//!
//! - **Halo bytes**: the payload of the halo packets (six binary32 values per entry; headers not
//!   counted), per node and in total, per stage; a time step is five stages.
//! - **Exchange time**: from the first halo header offered to the last halo beat taken, every
//!   host sending from the same cycle at full rate; summed over the five stages of a step.
//! - **Halo bandwidth**: total halo bytes over exchange time at the fabric clock.
//! - **Kernel time**: the busiest node's cycles in its flux kernel then its update kernel (one
//!   beat a cycle, first beat in to last result out), summed over the five stages, in µs at the
//!   system's kernel clock. Exchange and kernels do not overlap here.
//! - **Thesis figures** (seed 000, MIDG2 on Stratix 10): Table 6.1's peak bandwidths and
//!   Table 6.2's measured peaks, for megabyte transfers; the halo here is kilobytes.

use crate::Error;
use std::path::Path;

use serde::Serialize;
use weft_ip::dg::model::{canonical, GlobalModel, Nodes, STAGES};
use weft_ip::dg::{Mesh, PARTS};
use weft_sim::link::VerilatorDevice;
use weft_sim::network::halo::{DgKernels, Distributed};
use weft_sim::network::Torus;

use crate::system::SystemConfig;

/// The meshes of the benchmark (squares per side).
pub const CELLS: [usize; 4] = [8, 16, 32, 64];

/// Seeds each node's element order.
pub const NUMBERING_SEED: u64 = 0xD6;

/// A figure from the thesis, with where it is.
#[derive(Clone, Debug, Serialize)]
pub struct Thesis {
    /// What was measured or computed, and on what.
    pub what: &'static str,
    /// The bandwidth, GB/s.
    pub gb_per_s: f64,
    /// Where in the thesis: table (and equation).
    pub source: &'static str,
}

/// Seed 000's bandwidths (GB/s) this benchmark is set beside.
pub fn thesis() -> Vec<Thesis> {
    vec![
        Thesis { what: "MPI+PCIe peak (store and forward: PCIe 7.88, Omni-Path 12.5, PCIe 7.88)", gb_per_s: 2.995, source: "Table 6.1, eq. 6.1" },
        Thesis { what: "IO channels, within node, 1 channel (40 Gbit/s), peak", gb_per_s: 5.0, source: "Table 6.1" },
        Thesis { what: "IO channels, within node, 4 channels, peak", gb_per_s: 20.0, source: "Table 6.1" },
        Thesis { what: "IO channels, fully connected (3 channels), peak", gb_per_s: 15.0, source: "Table 6.1" },
        Thesis { what: "IO channels, within node, 1 channel, measured", gb_per_s: 4.96, source: "Table 6.2" },
        Thesis { what: "IO channels, within node, 4 channels, interleaved, measured", gb_per_s: 19.84, source: "Table 6.2" },
        Thesis { what: "IO channels, fully connected, measured", gb_per_s: 14.88, source: "Table 6.2" },
        Thesis { what: "MPI+PCIe, 2 nodes, measured (irregular sizes 1.94)", gb_per_s: 1.95, source: "Table 6.2" },
        Thesis { what: "MPI+PCIe, 4 nodes, measured (irregular sizes 1.76)", gb_per_s: 1.78, source: "Table 6.2" },
    ]
}

/// One time step (a row of `steps` in `bench/dg.json`).
#[derive(Clone, Debug, Serialize)]
pub struct Step {
    /// The step's index, from 0.
    pub step: usize,
    /// Halo exchange cycles of the step's five stages, at the fabric clock.
    pub exchange_cycles: u64,
    /// The same in µs at the fabric clock.
    pub exchange_us: f64,
    /// Halo payload bytes of the step (all nodes, five stages).
    pub halo_bytes: usize,
    /// `halo_bytes / exchange time`, all nodes together, GB/s.
    pub halo_gb_per_s: f64,
    /// Kernel cycles of the step on the busiest node (flux, then update; five stages).
    pub kernel_cycles: u64,
    /// The same in µs at the kernel clock.
    pub kernel_us: f64,
    /// Node values (q and res, all fields) that differ from the software model.
    pub mismatches: usize,
    /// One halo value was perturbed on purpose in this step (the negative check).
    pub perturbed: bool,
}

/// One mesh's run (an element of the array in `bench/dg.json`).
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    /// The system's name.
    pub system: String,
    /// Fabric clock, MHz (exchange times).
    pub fabric_mhz: f64,
    /// Kernel clock, MHz (kernel times): `clocks.kernel_mhz`, else the fabric clock.
    pub kernel_mhz: f64,
    /// Squares per side of the mesh.
    pub cells: usize,
    /// Triangles of the mesh, `2·cells²`.
    pub elements: usize,
    /// Bit error rate on every cable.
    pub bit_error_rate: f64,
    /// Bits the cables flipped over the whole run.
    pub flipped_bits: u64,
    /// Halo payload bytes each node sends per stage.
    pub halo_bytes_per_node: Vec<usize>,
    /// Halo packets per stage (all nodes).
    pub packets_per_stage: usize,
    /// One cable's raw rate (`lanes · 8` bytes a cycle at the fabric clock), GB/s.
    pub link_raw_gb_per_s: f64,
    /// A host port's rate (`width / 8` bytes a cycle at the fabric clock), GB/s.
    pub port_gb_per_s: f64,
    /// One row per time step run.
    pub steps: Vec<Step>,
    /// [`thesis()`]: the figures the table sets this beside.
    pub thesis: Vec<Thesis>,
}

/// How to run.
#[derive(Clone, Debug)]
pub struct Options {
    /// Squares per side of the mesh (a multiple of 4 in 4..=64).
    pub cells: usize,
    /// Time steps (1..=100).
    pub steps: usize,
    /// Bit error rate on every cable (0 ..= 1e-3).
    pub bit_error_rate: f64,
    /// A step (index) in which one halo value is perturbed after the fabric: that step must
    /// then differ from the model; the run stops after it.
    pub perturb: Option<usize>,
}

fn verilate(system: &SystemConfig, work: &Path, progress: &mut dyn FnMut(&str)) -> Result<(Torus<VerilatorDevice>, DgKernels), Error> {
    let generated = work.join("generated");
    crate::system::generate(system, &generated, &work.join("constraints"))?;
    let name = format!("{}_node", system.name);
    progress(&format!("building {name}, dg_surface_flux and dg_rk_update in Verilator"));
    let mut torus = Torus::verilated_nodes(&system.node, &generated.join("system").join(format!("{name}.v")), &name, system.channel_latency)?;
    let kernels = DgKernels::build(&generated.join("kernels"))?;
    torus.reset();
    let up = torus.bring_up(100_000)?;
    progress(&format!("{} nodes, links up after {up} cycles", system.node.router.nodes()));
    Ok((torus, kernels))
}

/// Values of `got` (per node) that differ from the model's, bit for bit (NaN canonical).
fn mismatches(got: &(Vec<Nodes>, Vec<Nodes>), model: &GlobalModel) -> usize {
    let count = |a: &[Nodes], b: &[Nodes]| a.iter().flatten().flatten().zip(b.iter().flatten().flatten()).filter(|(x, y)| canonical(**x) != canonical(**y)).count();
    count(&got.0, &model.q) + count(&got.1, &model.res)
}

/// Runs the distributed step `options.steps` times on `system` (a 2×2×2 torus), building it in
/// `work`. Options out of range and other tori are refused; a step whose state differs from the
/// software model is an [`Error::Check`] (unless it is the perturbed one, which ends the run).
pub fn run(system: &SystemConfig, options: &Options, work: &Path, progress: &mut dyn FnMut(&str)) -> Result<Report, Error> {
    let mesh = Mesh::new(options.cells)?;
    if !(1..=100).contains(&options.steps) {
        return Err(Error::Check(format!("`steps` = {} is out of range: allowed 1..=100", options.steps)));
    }
    if !(0.0..=1e-3).contains(&options.bit_error_rate) {
        return Err(Error::Check(format!("`ber` = {} is out of range: allowed 0 ..= 1e-3", options.bit_error_rate)));
    }
    if let Some(p) = options.perturb.filter(|&p| p >= options.steps) {
        return Err(Error::Check(format!("`perturb` = {p} is out of range: allowed a step in 0..{}", options.steps)));
    }
    if system.node.router.dims != [2, 2, 2] {
        return Err(Error::Check(format!("{}: the DG partition is for the 2×2×2 torus, this system is {:?}", system.name, system.node.router.dims)));
    }
    let kernel_mhz = system.kernel_mhz.unwrap_or(system.fabric_mhz);
    let (mut torus, mut kernels) = verilate(system, work, progress)?;
    torus.set_bit_error_rate(options.bit_error_rate);
    let mut dg = Distributed::new(&mesh, NUMBERING_SEED);
    let mut model = GlobalModel::new(&mesh);
    let halo_bytes_per_node: Vec<usize> = (0..PARTS).map(|m| dg.partition.halo_bytes(m)).collect();
    let per_stage: usize = halo_bytes_per_node.iter().sum();
    let mut steps = vec![];
    let mut packets_per_stage = 0;
    for step in 0..options.steps {
        let perturbed = options.perturb == Some(step);
        let (mut cycles, mut kernel_cycles) = (0, 0);
        for stage in 0..STAGES {
            let r = torus.dg_stage(&mut dg, &mut kernels, stage, perturbed && stage == 0, 200_000)?;
            cycles += r.exchange_cycles;
            kernel_cycles += r.kernel_cycles;
            packets_per_stage = r.packets;
        }
        model.step();
        let wrong = mismatches(&dg.global(), &model);
        let us = cycles as f64 / system.fabric_mhz;
        let bytes = STAGES * per_stage;
        progress(&format!(
            "step {step}: halo {bytes} B exchanged in {cycles} cycles ({us:.2} µs), kernels {kernel_cycles} cycles, {wrong} values differ from the model{}",
            if perturbed { " (one halo value perturbed)" } else { "" }
        ));
        let kernel_us = kernel_cycles as f64 / kernel_mhz;
        steps.push(Step { step, exchange_cycles: cycles, exchange_us: us, halo_bytes: bytes, halo_gb_per_s: bytes as f64 / (us * 1e3), kernel_cycles, kernel_us, mismatches: wrong, perturbed });
        if perturbed {
            break;
        }
        if wrong > 0 {
            return Err(Error::Check(format!("step {step}: {wrong} node values differ from the software model")));
        }
    }
    let lanes = system.node.link.lanes;
    Ok(Report {
        system: system.name.clone(),
        fabric_mhz: system.fabric_mhz,
        kernel_mhz,
        cells: options.cells,
        elements: mesh.elements(),
        bit_error_rate: options.bit_error_rate,
        flipped_bits: torus.flipped_bits(),
        halo_bytes_per_node,
        packets_per_stage,
        link_raw_gb_per_s: (8 * lanes) as f64 * system.fabric_mhz / 1e3,
        port_gb_per_s: (system.node.router.width / 8) as f64 * system.fabric_mhz / 1e3,
        steps,
        thesis: thesis(),
    })
}

/// One row per mesh (its last step, the links long trained), then the thesis's figures.
pub fn table(reports: &[Report]) -> String {
    let Some(first) = reports.first() else { return String::new() };
    let mut t = format!(
        "DG halo exchange on {} (fabric {} MHz, kernels {} MHz, bit error rate {:e}): 8 parts, halo payload per stage and per time step (5 stages), every step bit-exact to the software model\n",
        first.system, first.fabric_mhz, first.kernel_mhz, first.bit_error_rate
    );
    t.push_str("| squares | elements | halo B per node per stage | packets per stage | halo B per step | exchange cycles per step | µs | halo GB/s (8 nodes) | per node GB/s | kernel cycles per step | kernel µs | bits flipped |\n| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
    for r in reports {
        let Some(s) = r.steps.last() else { continue };
        t.push_str(&format!(
            "| {}×{} | {} | {} | {} | {} | {} | {:.2} | {:.2} | {:.3} | {} | {:.2} | {} |\n",
            r.cells,
            r.cells,
            r.elements,
            r.halo_bytes_per_node[0],
            r.packets_per_stage,
            s.halo_bytes,
            s.exchange_cycles,
            s.exchange_us,
            s.halo_gb_per_s,
            s.halo_gb_per_s / PARTS as f64,
            s.kernel_cycles,
            s.kernel_us,
            r.flipped_bits
        ));
    }
    t.push_str(&format!(
        "\na node's host port: {:.2} GB/s (128 bits a cycle); one cable's raw rate: {:.2} GB/s. Seed 000 (megabyte transfers, per link or per pair of nodes):\n| figure | GB/s | where |\n| --- | ---: | --- |\n",
        first.port_gb_per_s, first.link_raw_gb_per_s
    ));
    for f in &first.thesis {
        t.push_str(&format!("| {} | {} | {} |\n", f.what, f.gb_per_s, f.source));
    }
    t
}
