//! Seed 002's performance model. The mesh is cut into macro-partitions of `size` cells, each
//! processed as two micro-partitions while the next one streams in. Each phase takes
//! `max(t_DRAM, t_PCIe, t_FPGA)`:
//! - t_DRAM: the non-halo node and cell data (and, here, the edge records) over the DRAM
//!   bandwidth;
//! - t_PCIe: the halo node and cell data over PCIe;
//! - t_FPGA: edge slots / (clock × pipelines), plus (weft's addition, [`Machine::fill_cycles`])
//!   the cycles from the last edge row in to its last residual written, once a micro-partition.
//!   Seed 002 leaves the fill out (0 gives its model): on its partitions of 10⁴ edges and more it
//!   is under 1 %, but at 4 pipelines on 10³ cells it is 11 % of the pass.
//!
//! The three phases of a macro-partition (seed 002):
//! 1. read micro-partition A (and write back the previous macro-partition's B);
//! 2. process A while reading B;
//! 3. process B while writing back A.
//!
//! Byte counts follow the accelerator's memories: a node is its two binary32 coordinates (8 B);
//! a cell in is `q`, `adt` and `res` (36 B), a cell out its `res` (16 B); an edge record four
//! 16-bit indices (8 B). [`on_chip`] predicts the cycles the generated block itself spends.

use super::mesh::Mesh;

/// The machine around the accelerator.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Machine {
    pub dram_gbs: f64,
    pub pcie_gbs: f64,
    pub clock_mhz: f64,
    pub pipelines: usize,
    /// Cycles from the last edge row taken to its last residual written (the accelerator's
    /// `Timing::edge_to_res`); 0 is seed 002's model.
    pub fill_cycles: usize,
}

/// One micro-partition's data: cells and nodes it owns, those it needs from elsewhere, its edges.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Part {
    pub cells: usize,
    pub nodes: usize,
    pub halo_cells: usize,
    pub halo_nodes: usize,
    pub edges: usize,
}

/// One phase's three times, in seconds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Phase {
    pub dram: f64,
    pub pcie: f64,
    pub fpga: f64,
}

impl Phase {
    pub fn time(&self) -> f64 {
        self.dram.max(self.pcie).max(self.fpga)
    }
}

const NODE_BYTES: f64 = 8.0;
const CELL_IN_BYTES: f64 = 36.0;
const CELL_OUT_BYTES: f64 = 16.0;
const EDGE_BYTES: f64 = 8.0;

/// Cuts the mesh into parts of about `size` cells: cells in order of the angle of their centre
/// round the body (the O-grid's sectors, which keeps parts compact), then in runs of `size`. An
/// edge belongs to the part of its first cell; a node to the first part that uses it.
pub fn partition(mesh: &Mesh, size: usize) -> Vec<Part> {
    let centre = |c: &[u32; 4]| {
        let (x, y) = c.iter().fold((0.0, 0.0), |(x, y), n| (x + mesh.x[*n as usize][0], y + mesh.x[*n as usize][1]));
        (y / 4.0).atan2(x / 4.0 - 0.5)
    };
    let mut order: Vec<usize> = (0..mesh.cells.len()).collect();
    order.sort_by(|a, b| centre(&mesh.cells[*a]).total_cmp(&centre(&mesh.cells[*b])));
    let size = size.max(1);
    let mut part_of = vec![0usize; mesh.cells.len()];
    for (k, c) in order.iter().enumerate() {
        part_of[*c] = k / size;
    }
    let parts = mesh.cells.len().div_ceil(size);
    let mut node_owner = vec![usize::MAX; mesh.x.len()];
    for c in &order {
        for n in mesh.cells[*c] {
            if node_owner[n as usize] == usize::MAX {
                node_owner[n as usize] = part_of[*c];
            }
        }
    }
    let mut out = vec![Part::default(); parts];
    for p in &part_of {
        out[*p].cells += 1;
    }
    for p in &node_owner {
        if *p != usize::MAX {
            out[*p].nodes += 1;
        }
    }
    let mut halo_cells = vec![std::collections::BTreeSet::new(); parts];
    let mut halo_nodes = vec![std::collections::BTreeSet::new(); parts];
    for e in &mesh.edges {
        let p = part_of[e.cells[0] as usize];
        out[p].edges += 1;
        if part_of[e.cells[1] as usize] != p {
            halo_cells[p].insert(e.cells[1]);
        }
        for n in e.nodes {
            if node_owner[n as usize] != p {
                halo_nodes[p].insert(n);
            }
        }
    }
    for (p, part) in out.iter_mut().enumerate() {
        part.halo_cells = halo_cells[p].len();
        part.halo_nodes = halo_nodes[p].len();
    }
    out
}

fn read(part: &Part, m: &Machine) -> (f64, f64) {
    let dram = (part.nodes as f64 * NODE_BYTES + part.cells as f64 * CELL_IN_BYTES + part.edges as f64 * EDGE_BYTES) / (m.dram_gbs * 1e9);
    let pcie = (part.halo_nodes as f64 * NODE_BYTES + part.halo_cells as f64 * CELL_IN_BYTES) / (m.pcie_gbs * 1e9);
    (dram, pcie)
}

fn write(part: &Part, m: &Machine) -> (f64, f64) {
    (part.cells as f64 * CELL_OUT_BYTES / (m.dram_gbs * 1e9), part.halo_cells as f64 * CELL_OUT_BYTES / (m.pcie_gbs * 1e9))
}

fn process(part: &Part, m: &Machine) -> f64 {
    let fill = if part.edges == 0 { 0 } else { m.fill_cycles };
    (part.edges.div_ceil(m.pipelines) + fill) as f64 / (m.clock_mhz * 1e6)
}

/// The three phases of a macro-partition made of micro-partitions `a` and `b`, after `before`
/// (the previous macro-partition's `b`, written back in phase 1).
pub fn phases(a: &Part, b: &Part, before: Option<&Part>, m: &Machine) -> [Phase; 3] {
    let (ra, rb, wa) = (read(a, m), read(b, m), write(a, m));
    let wprev = before.map_or((0.0, 0.0), |p| write(p, m));
    [Phase { dram: ra.0 + wprev.0, pcie: ra.1 + wprev.1, fpga: 0.0 }, Phase { dram: rb.0, pcie: rb.1, fpga: process(a, m) }, Phase { dram: wa.0, pcie: wa.1, fpga: process(b, m) }]
}

/// Seconds for one pass of `res_calc` over the mesh cut into macro-partitions of `size` cells
/// (micro-partitions of `size / 2`), plus the last write-back.
pub fn predict(mesh: &Mesh, size: usize, m: &Machine) -> f64 {
    let micro = partition(mesh, (size / 2).max(1));
    let mut total = 0.0;
    let mut before: Option<&Part> = None;
    for pair in micro.chunks(2) {
        let (a, b) = (&pair[0], pair.get(1).unwrap_or(&Part { cells: 0, nodes: 0, halo_cells: 0, halo_nodes: 0, edges: 0 }));
        total += phases(a, b, before, m).iter().map(Phase::time).sum::<f64>();
        before = Some(pair.last().unwrap());
    }
    if let Some(p) = before {
        let w = write(p, m);
        total += w.0.max(w.1);
    }
    total
}

/// The cycles the accelerator block itself spends on one partition held on chip, as the model
/// counts them: one command a cycle to load (a node's `x`; a cell's `q`, `adt`, `res`), one edge
/// row a cycle (seed 002's t_FPGA in cycles: `slots / P`, no-ops included) plus `fill` cycles
/// for the last row's results, one read a cycle to unload.
pub fn on_chip(nodes: usize, cells: usize, slots: usize, pipelines: usize, fill: usize) -> [u64; 3] {
    [(nodes + 3 * cells) as u64, (slots.div_ceil(pipelines) + fill) as u64, cells as u64]
}
