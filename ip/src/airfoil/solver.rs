//! The whole Airfoil application as OP2 runs it, in binary64 and OP2's plain sequential order:
//! five parallel loops over cells, edges and boundary edges (`save_soln`; then twice
//! `adt_calc`, `res_calc`, `bres_calc`, `update`), the flow state `q` on cells, the residual
//! `res` incremented through the edge→cell map, and the global `rms` reduced by `update`. Every
//! loop visits its set in index order and every increment lands in that order, which is the
//! order OP2's sequential back end (and this reference) sums in. The kernels are OP2's
//! Airfoil kernels; the constants are its free-stream at Mach 0.4 and 3° incidence.

use super::mesh::Mesh;

/// OP2 Airfoil's constants: ratio of specific heats, CFL number, dissipation coefficient and
/// the free stream `qinf` (density, momentum x, momentum y, energy).
#[derive(Clone, Copy, Debug)]
pub struct Constants {
    pub gam: f64,
    pub gm1: f64,
    pub cfl: f64,
    pub eps: f64,
    pub qinf: [f64; 4],
}

impl Default for Constants {
    /// Mach 0.4, 3° incidence (OP2's `airfoil.cpp`; its `alpha` is not used by the kernels).
    fn default() -> Constants {
        let (gam, mach, p, r) = (1.4f64, 0.4f64, 1.0f64, 1.0f64);
        let gm1 = gam - 1.0;
        let u = (gam * p / r).sqrt() * mach;
        let e = p / (r * gm1) + 0.5 * u * u;
        Constants { gam, gm1, cfl: 0.9, eps: 0.05, qinf: [r, r * u, 0.0, r * e] }
    }
}

/// The state of a run: per cell `q`, `qold`, `adt` and `res`.
#[derive(Clone, Debug)]
pub struct State {
    pub q: Vec<[f64; 4]>,
    pub qold: Vec<[f64; 4]>,
    pub adt: Vec<f64>,
    pub res: Vec<[f64; 4]>,
}

impl State {
    /// Every cell at the free stream, as OP2's Airfoil starts.
    pub fn free_stream(mesh: &Mesh, c: &Constants) -> State {
        let n = mesh.cells.len();
        State { q: vec![c.qinf; n], qold: vec![[0.0; 4]; n], adt: vec![0.0; n], res: vec![[0.0; 4]; n] }
    }
}

/// `adt_calc`: the cell's time-step factor from its four sides.
pub(crate) fn adt_calc(x: [[f64; 2]; 4], q: &[f64; 4], c: &Constants) -> f64 {
    let ri = 1.0 / q[0];
    let u = ri * q[1];
    let v = ri * q[2];
    let sound = (c.gam * c.gm1 * (ri * q[3] - 0.5 * (u * u + v * v))).sqrt();
    let mut adt = 0.0;
    for k in 0..4 {
        let (a, b) = (x[k], x[(k + 1) % 4]);
        let (dx, dy) = (b[0] - a[0], b[1] - a[1]);
        let side = (u * dy - v * dx).abs() + sound * (dx * dx + dy * dy).sqrt();
        adt = if k == 0 { side } else { adt + side };
    }
    adt / c.cfl
}

/// The flux terms shared by `res_calc` and `bres_calc`: pressure and volume flux of a state
/// across the face `(dx, dy)`.
pub(crate) fn pressure_and_volume(q: &[f64; 4], dx: f64, dy: f64, c: &Constants) -> (f64, f64) {
    let ri = 1.0 / q[0];
    let p = c.gm1 * (q[3] - 0.5 * ri * (q[1] * q[1] + q[2] * q[2]));
    (p, ri * (q[1] * dy - q[2] * dx))
}

/// The flux between two states across the face `(dx, dy)` with dissipation `mu`.
pub(crate) fn flux(q1: &[f64; 4], q2: &[f64; 4], dx: f64, dy: f64, mu: f64, c: &Constants) -> [f64; 4] {
    let (p1, vol1) = pressure_and_volume(q1, dx, dy, c);
    let (p2, vol2) = pressure_and_volume(q2, dx, dy, c);
    [
        0.5 * (vol1 * q1[0] + vol2 * q2[0]) + mu * (q1[0] - q2[0]),
        0.5 * (vol1 * q1[1] + p1 * dy + vol2 * q2[1] + p2 * dy) + mu * (q1[1] - q2[1]),
        0.5 * (vol1 * q1[2] - p1 * dx + vol2 * q2[2] - p2 * dx) + mu * (q1[2] - q2[2]),
        0.5 * (vol1 * (q1[3] + p1) + vol2 * (q2[3] + p2)) + mu * (q1[3] - q2[3]),
    ]
}

/// One iteration of OP2's Airfoil (`save_soln`, then the predictor and the corrector); returns
/// `rms` as the program prints it: `sqrt(Σ del² / cells)` of the corrector's `update`.
pub fn iteration(mesh: &Mesh, s: &mut State, c: &Constants) -> f64 {
    s.qold.copy_from_slice(&s.q);
    let mut rms = 0.0;
    for _ in 0..2 {
        for (k, cell) in mesh.cells.iter().enumerate() {
            s.adt[k] = adt_calc(cell.map(|n| mesh.x[n as usize]), &s.q[k], c);
        }
        for e in &mesh.edges {
            let (x1, x2) = (mesh.x[e.nodes[0] as usize], mesh.x[e.nodes[1] as usize]);
            let [c1, c2] = e.cells.map(|k| k as usize);
            let mu = 0.5 * (s.adt[c1] + s.adt[c2]) * c.eps;
            let f = flux(&s.q[c1], &s.q[c2], x1[0] - x2[0], x1[1] - x2[1], mu, c);
            for n in 0..4 {
                s.res[c1][n] += f[n];
                s.res[c2][n] -= f[n];
            }
        }
        for b in &mesh.bedges {
            let (x1, x2) = (mesh.x[b.nodes[0] as usize], mesh.x[b.nodes[1] as usize]);
            let (dx, dy) = (x1[0] - x2[0], x1[1] - x2[1]);
            let k = b.cell as usize;
            if b.bound == 1 {
                // A wall: only the pressure acts.
                let (p1, _) = pressure_and_volume(&s.q[k], dx, dy, c);
                s.res[k][1] += p1 * dy;
                s.res[k][2] += -p1 * dx;
            } else {
                let f = flux(&s.q[k], &c.qinf, dx, dy, s.adt[k] * c.eps, c);
                for n in 0..4 {
                    s.res[k][n] += f[n];
                }
            }
        }
        rms = 0.0;
        for k in 0..mesh.cells.len() {
            let adti = 1.0 / s.adt[k];
            let mut local = 0.0;
            for n in 0..4 {
                let del = adti * s.res[k][n];
                s.q[k][n] = s.qold[k][n] - del;
                s.res[k][n] = 0.0;
                local += del * del;
            }
            rms += local;
        }
    }
    (rms / mesh.cells.len() as f64).sqrt()
}
