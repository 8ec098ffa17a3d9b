//! The software model of the DG step, in binary32 (Rust's `f32`: IEEE-754 round to nearest
//! even, no fused multiply-add, each operation in the written order).
//!
//! One time step is the five stages of the low-storage Runge–Kutta scheme LSERK4 (Carpenter and
//! Kennedy, the coefficients MIDG uses, rounded once to binary32). A stage, for every element:
//!
//! 1. **Surface flux** at each of its 6 face nodes: [`flux`], the contract's (docs/contract.md) `dg_surface_flux`
//!    reference transcribed (upwind Maxwell flux, `h = ½·fscale` included), inputs from
//!    [`flux_inputs`]: the face's normal (`nz = 0`), `fscale`, the minus side (this element's
//!    values at the face node's vertex) and the plus side (the neighbour's at the same point).
//! 2. **Volume term** [`volume`]: `−curl E` and `curl H` of the element's linear fields, in
//!    software (the volume kernel is not built); `∂/∂z = 0`.
//! 3. **Right-hand side** [`lift`]: `rhs = vol + Σ LIFT·flux`, the order-1 nodal lift on the
//!    unit triangle (2.5 at the face node's own vertex, 0.5 at the face's other vertex, −1.5 at
//!    the vertex off the face), summed left to right over faces 0..3 and face nodes 0..2.
//! 4. **Update** [`rk`]: the contract's (docs/contract.md) `dg_rk_update` for every node and field:
//!    `res = a·res + dt·rhs; q = q + b·res`.
//!
//! [`GlobalModel`] runs this on the whole mesh at once, without partition or halo: a distributed
//! step that fetches the right plus-side values gives it bit for bit.

use super::mesh::{Mesh, FACES, FACE_NODES, FIELDS, VERTICES};

/// LSERK4 `a` coefficients (binary32).
pub const RK4A: [f32; 5] =
    [0.0, (-567301805773.0f64 / 1357537059087.0) as f32, (-2404267990393.0f64 / 2016746695238.0) as f32, (-3550918686646.0f64 / 2091501179385.0) as f32, (-1275806237668.0f64 / 842570457699.0) as f32];
/// LSERK4 `b` coefficients (binary32).
pub const RK4B: [f32; 5] = [
    (1432997174477.0f64 / 9575080441755.0) as f32,
    (5161836677717.0f64 / 13612068292357.0) as f32,
    (1720146321549.0f64 / 2090206949498.0) as f32,
    (3134564353537.0f64 / 4481467310338.0) as f32,
    (2277821191437.0f64 / 14882151754819.0) as f32,
];
/// Stages per time step.
pub const STAGES: usize = 5;

/// An element's values: `[vertex][field]`.
pub type Nodes = [[f32; FIELDS]; VERTICES];

/// The canonical quiet NaN the hardware returns for every NaN result.
pub fn canonical(x: f32) -> u32 {
    if x.is_nan() {
        0x7FC0_0000
    } else {
        x.to_bits()
    }
}

/// The contract's (docs/contract.md) `dg_surface_flux` reference: 16 inputs → `fHx, fHy, fHz, fEx, fEy, fEz`.
#[allow(non_snake_case)]
pub fn flux(v: &[f32; 16]) -> [f32; FIELDS] {
    let [nx, ny, nz, fscale, HxM, HyM, HzM, ExM, EyM, EzM, HxP, HyP, HzP, ExP, EyP, EzP] = *v;
    let (dHx, dHy, dHz) = (HxP - HxM, HyP - HyM, HzP - HzM);
    let (dEx, dEy, dEz) = (ExP - ExM, EyP - EyM, EzP - EzM);
    let ndotdH = nx * dHx + ny * dHy + nz * dHz;
    let ndotdE = nx * dEx + ny * dEy + nz * dEz;
    let h = 0.5f32 * fscale;
    [
        h * (-ny * dEz + nz * dEy + (dHx - ndotdH * nx)),
        h * (-nz * dEx + nx * dEz + (dHy - ndotdH * ny)),
        h * (-nx * dEy + ny * dEx + (dHz - ndotdH * nz)),
        h * (ny * dHz - nz * dHy + (dEx - ndotdE * nx)),
        h * (nz * dHx - nx * dHz + (dEy - ndotdE * ny)),
        h * (nx * dHy - ny * dHx + (dEz - ndotdE * nz)),
    ]
}

/// The contract's (docs/contract.md) `dg_rk_update` reference: `(q, res, rhs, a, b, dt)` → `(q_new, res_new)`.
pub fn rk(v: &[f32; 6]) -> [f32; 2] {
    let [q, res, rhs, a, b, dt] = *v;
    let res_new = a * res + dt * rhs;
    [q + b * res_new, res_new]
}

/// The flux kernel's input beat for face node `k` of face `f` of element `e`.
pub fn flux_inputs(mesh: &Mesh, e: usize, f: usize, minus: &[f32; FIELDS], plus: &[f32; FIELDS]) -> [f32; 16] {
    let (nx, ny) = mesh.normal(e, f);
    let mut v = [0.0f32; 16];
    v[..4].copy_from_slice(&[nx, ny, 0.0, mesh.fscale(e, f)]);
    v[4..10].copy_from_slice(minus);
    v[10..].copy_from_slice(plus);
    v
}

/// The volume term of element `e` (the same at its three nodes): with `dx(u)`, `dy(u)` the
/// gradient of the linear field `u` (`(u1 − u0)·n`, `(u2 − u1)·n` on a lower triangle,
/// `(u1 − u2)·n`, `(u2 − u0)·n` on an upper one, `n = cells`):
/// `[−dy(Ez), dx(Ez), dy(Ex) − dx(Ey), dy(Hz), −dx(Hz), dx(Hy) − dy(Hx)]`.
pub fn volume(mesh: &Mesh, e: usize, q: &Nodes) -> [f32; FIELDS] {
    let (_, _, upper) = mesh.cell(e);
    let n = mesh.cells as f32;
    let d = |c: usize| -> (f32, f32) {
        let (u0, u1, u2) = (q[0][c], q[1][c], q[2][c]);
        if upper {
            ((u1 - u2) * n, (u2 - u0) * n)
        } else {
            ((u1 - u0) * n, (u2 - u1) * n)
        }
    };
    let [(_, hxy), (hyx, _), (hzx, hzy), (_, exy), (eyx, _), (ezx, ezy)] = [0, 1, 2, 3, 4, 5].map(d);
    [-ezy, ezx, exy - eyx, hzy, -hzx, hyx - hxy]
}

/// The order-1 lift weight of face node `k` of face `f` at vertex `v`.
pub fn lift_weight(f: usize, k: usize, v: usize) -> f32 {
    if v == Mesh::face_vertex(f, k) {
        2.5
    } else if v == Mesh::face_vertex(f, 1 - k) {
        0.5
    } else {
        -1.5
    }
}

/// `rhs[v][c] = vol[c] + w(0,0,v)·flux[0][c] + w(0,1,v)·flux[1][c] + … + w(2,1,v)·flux[5][c]`,
/// left to right; `fluxes` in face-node order (face 0 node 0, face 0 node 1, face 1 node 0, …).
pub fn lift(vol: &[f32; FIELDS], fluxes: &[[f32; FIELDS]]) -> Nodes {
    let mut rhs = [[0.0f32; FIELDS]; VERTICES];
    for (v, r) in rhs.iter_mut().enumerate() {
        for c in 0..FIELDS {
            let mut acc = vol[c];
            for f in 0..FACES {
                for k in 0..FACE_NODES {
                    acc += lift_weight(f, k, v) * fluxes[f * FACE_NODES + k][c];
                }
            }
            r[c] = acc;
        }
    }
    rhs
}

/// The starting fields at element `e`: `Ez = sin 2πx · sin 2πy`, `Hx = 0.5·cos 2πx`,
/// `Hy = 0.25·sin 2πy`, `Hz = 0.1·cos 2π(x+y)`, `Ex = 0.2·sin 2π(x−y)`, `Ey = 0.3·cos 2πy` at
/// each vertex (binary64, rounded once; both sides of a comparison start from these bits).
pub fn initial(mesh: &Mesh, e: usize) -> Nodes {
    let tau = std::f64::consts::TAU;
    let mut q = [[0.0f32; FIELDS]; VERTICES];
    for (v, qv) in q.iter_mut().enumerate() {
        let (i, j) = mesh.vertex(e, v);
        let (x, y) = (i as f64 / mesh.cells as f64, j as f64 / mesh.cells as f64);
        let values = [0.5 * (tau * x).cos(), 0.25 * (tau * y).sin(), 0.1 * (tau * (x + y)).cos(), 0.2 * (tau * (x - y)).sin(), 0.3 * (tau * y).cos(), (tau * x).sin() * (tau * y).sin()];
        *qv = values.map(|x| x as f32);
    }
    q
}

/// The time step `0.1·h` (binary32), well inside the order-1 stability limit.
pub fn time_step(mesh: &Mesh) -> f32 {
    (0.1 / mesh.cells as f64) as f32
}

/// The whole mesh stepped at once in software: no partition, no halo.
#[derive(Clone, Debug)]
pub struct GlobalModel {
    /// The mesh stepped.
    pub mesh: Mesh,
    /// The time step, [`time_step`] of the mesh.
    pub dt: f32,
    /// The fields per element and vertex.
    pub q: Vec<Nodes>,
    /// The Runge–Kutta residual per element and vertex, carried between stages.
    pub res: Vec<Nodes>,
}

impl GlobalModel {
    /// The mesh at its initial fields, with zero residuals.
    pub fn new(mesh: &Mesh) -> GlobalModel {
        let q = (0..mesh.elements()).map(|e| initial(mesh, e)).collect();
        GlobalModel { mesh: mesh.clone(), dt: time_step(mesh), q, res: vec![[[0.0; FIELDS]; VERTICES]; mesh.elements()] }
    }

    /// One stage of the step (`stage` in 0..5).
    pub fn stage(&mut self, stage: usize) {
        let m = &self.mesh;
        let rhs: Vec<Nodes> = (0..m.elements())
            .map(|e| {
                let mut fluxes = vec![];
                for f in 0..FACES {
                    for k in 0..FACE_NODES {
                        let (pe, pv) = m.plus(e, f, k);
                        fluxes.push(flux(&flux_inputs(m, e, f, &self.q[e][Mesh::face_vertex(f, k)], &self.q[pe][pv])));
                    }
                }
                lift(&volume(m, e, &self.q[e]), &fluxes)
            })
            .collect();
        for e in 0..m.elements() {
            for v in 0..VERTICES {
                for c in 0..FIELDS {
                    let [q, res] = rk(&[self.q[e][v][c], self.res[e][v][c], rhs[e][v][c], RK4A[stage], RK4B[stage], self.dt]);
                    self.q[e][v][c] = q;
                    self.res[e][v][c] = res;
                }
            }
        }
    }

    /// One time step (five stages).
    pub fn step(&mut self) {
        for s in 0..STAGES {
            self.stage(s);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lift_is_the_inverse_mass_times_the_face_mass() {
        // Unit-area triangle: M = (1/12)[[2,1,1],[1,2,1],[1,1,2]], face mass (1/6)[[2,1],[1,2]];
        // M · LIFT must put the face mass on the face's vertices and nothing off it.
        let mass = |a: usize, b: usize| if a == b { 2.0 / 12.0 } else { 1.0 / 12.0 };
        for f in 0..FACES {
            for k in 0..FACE_NODES {
                for row in 0..VERTICES {
                    let got: f64 = (0..VERTICES).map(|v| mass(row, v) * lift_weight(f, k, v) as f64).sum();
                    let want = if row == Mesh::face_vertex(f, k) {
                        2.0 / 6.0
                    } else if row == Mesh::face_vertex(f, 1 - k) {
                        1.0 / 6.0
                    } else {
                        0.0
                    };
                    assert!((got - want).abs() < 1e-12, "face {f} node {k} row {row}: {got} vs {want}");
                }
            }
        }
    }

    #[test]
    fn a_uniform_field_has_no_volume_term_and_no_flux() {
        let mesh = Mesh::new(4).unwrap();
        let q = [[0.3, -0.2, 0.1, 0.7, 0.5, -0.4]; VERTICES];
        for e in 0..mesh.elements() {
            assert_eq!(volume(&mesh, e, &q), [0.0; FIELDS]);
            for f in 0..FACES {
                assert_eq!(flux(&flux_inputs(&mesh, e, f, &q[0], &q[0])), [0.0; FIELDS]);
            }
        }
    }

    #[test]
    fn the_step_stays_bounded() {
        let mut m = GlobalModel::new(&Mesh::new(8).unwrap());
        for _ in 0..3 {
            m.step();
        }
        assert!(m.q.iter().flatten().flatten().all(|x| x.is_finite() && x.abs() < 2.0));
    }
}
