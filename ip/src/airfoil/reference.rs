//! The software reference: OP2's `res_calc` in C semantics (binary32, each operation rounded in
//! the order C evaluates it) applied over a schedule's edges in issue order — row by row, slot by
//! slot — with `res1 += f; res2 -= f` after each edge, as one sequential C loop over the same
//! edge list would.

use weft_hdl::testbench::Rng;

use super::mesh::Mesh;
use crate::app::schedule::Slot;

/// The data sets `res_calc` reads and writes: node coordinates, cell states, time-step factors
/// and the residuals it accumulates.
#[derive(Clone, Debug, PartialEq)]
pub struct Fields {
    /// Node coordinates `[x, y]`, per node.
    pub x: Vec<[f32; 2]>,
    /// Flow state per cell: density, momentum x, momentum y, energy.
    pub q: Vec<[f32; 4]>,
    /// Time-step factor per cell.
    pub adt: Vec<f32>,
    /// Residual per cell, four components like `q`.
    pub res: Vec<[f32; 4]>,
}

impl Fields {
    /// The mesh's coordinates, and seeded cell states near Airfoil's free stream (density about
    /// 1, Mach 0.4, angle of attack 3°), time-step factors and starting residuals.
    pub fn seeded(mesh: &Mesh, seed: u64) -> Fields {
        let mut rng = Rng::new(seed);
        let mut near = |v: f32, spread: f32| v * (1.0 + spread * (rng.below(2001) as f32 / 1000.0 - 1.0));
        let cells = mesh.cells.len();
        let (gam, mach, alpha) = (1.4f32, 0.4f32, 3.0f32.to_radians());
        let (p, r) = (1.0f32, 1.0f32);
        let u = (gam * p / r).sqrt() * mach;
        let e = p / (r * (gam - 1.0)) + 0.5 * u * u;
        let q = (0..cells).map(|_| [near(r, 0.05), near(r * u * alpha.cos(), 0.1), near(r * u * alpha.sin(), 0.5), near(r * e, 0.05)]).collect();
        let adt = (0..cells).map(|_| near(10.0, 0.5)).collect();
        let res = (0..cells).map(|_| [near(0.01, 1.0), near(0.01, 1.0), near(0.01, 1.0), near(0.01, 1.0)]).collect();
        Fields { x: mesh.x.iter().map(|p| [p[0] as f32, p[1] as f32]).collect(), q, adt, res }
    }
}

/// OP2 Airfoil's `res_calc` for one edge: the flux `f` added to `res1` and subtracted from `res2`.
pub fn res_calc(x1: [f32; 2], x2: [f32; 2], q1: [f32; 4], q2: [f32; 4], adt1: f32, adt2: f32) -> [f32; 4] {
    let gm1 = f32::from_bits(0x3ECC_CCCC); // 1.4f - 1.0f
    let eps = f32::from_bits(0x3D4C_CCCD); // 0.05f
    let dx = x1[0] - x2[0];
    let dy = x1[1] - x2[1];
    let mut ri = 1.0f32 / q1[0];
    let p1 = gm1 * (q1[3] - 0.5f32 * ri * (q1[1] * q1[1] + q1[2] * q1[2]));
    let vol1 = ri * (q1[1] * dy - q1[2] * dx);
    ri = 1.0f32 / q2[0];
    let p2 = gm1 * (q2[3] - 0.5f32 * ri * (q2[1] * q2[1] + q2[2] * q2[2]));
    let vol2 = ri * (q2[1] * dy - q2[2] * dx);
    let mu = 0.5f32 * (adt1 + adt2) * eps;
    [
        0.5f32 * (vol1 * q1[0] + vol2 * q2[0]) + mu * (q1[0] - q2[0]),
        0.5f32 * (vol1 * q1[1] + p1 * dy + vol2 * q2[1] + p2 * dy) + mu * (q1[1] - q2[1]),
        0.5f32 * (vol1 * q1[2] - p1 * dx + vol2 * q2[2] - p2 * dx) + mu * (q1[2] - q2[2]),
        0.5f32 * (vol1 * (q1[3] + p1) + vol2 * (q2[3] + p2)) + mu * (q1[3] - q2[3]),
    ]
}

/// `res` after one pass of `res_calc` over the interior edges in `schedule` order (no-ops skipped).
pub fn run(mesh: &Mesh, fields: &Fields, schedule: &[Slot]) -> Vec<[f32; 4]> {
    let mut res = fields.res.clone();
    for e in schedule.iter().flatten() {
        let edge = &mesh.edges[*e as usize];
        let ([n1, n2], [c1, c2]) = (edge.nodes.map(|n| n as usize), edge.cells.map(|c| c as usize));
        let f = res_calc(fields.x[n1], fields.x[n2], fields.q[c1], fields.q[c2], fields.adt[c1], fields.adt[c2]);
        for k in 0..4 {
            res[c1][k] += f[k];
            res[c2][k] -= f[k];
        }
    }
    res
}
