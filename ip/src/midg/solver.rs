//! MIDG2's solver as a software model: Maxwell's equations in a perfectly conducting cavity,
//! nodal DG with upwind fluxes, the 5-stage low-storage Runge–Kutta method of Carpenter and
//! Kennedy — in binary64 or binary32 (`T`), the operators and geometry rounded to `T` once, every
//! operation in `T` in a fixed order. Per stage, as MIDG2 runs it: the **volume** kernel (the
//! curls from Dr, Ds, Dt and the nine geometric factors), the **surface** kernel (per face node,
//! the jump to the neighbour's value through vmapP, the upwind flux with the normal and Fscale,
//! then LIFT), and the **update**.

use num_traits::Float;

use super::geometry::Geometry;
use super::mesh::{Connectivity, TetMesh};
use super::operators::{Operators, FACES};
use crate::Error;

/// Carpenter–Kennedy's 5-stage, 4th-order low-storage Runge–Kutta coefficients.
pub const RK4A: [f64; 5] = [0.0, -567301805773.0 / 1357537059087.0, -2404267990393.0 / 2016746695238.0, -3550918686646.0 / 2091501179385.0, -1275806237668.0 / 842570457699.0];
/// The B coefficients.
pub const RK4B: [f64; 5] =
    [1432997174477.0 / 9575080441755.0, 5161836677717.0 / 13612068292357.0, 1720146321549.0 / 2090206949498.0, 3134564353537.0 / 4481467310338.0, 2277821191437.0 / 14882151754819.0];

/// The six fields, in MIDG2's order.
pub const FIELDS: [&str; 6] = ["Hx", "Hy", "Hz", "Ex", "Ey", "Ez"];

/// The cavity mode MIDG2 starts from: Ey = sin(πx)·sin(πz)·cos(√2·π·t) and the magnetic field
/// it induces; returns (Hx, Hy, Hz, Ex, Ey, Ez) at (x, y, z) and time t.
pub fn cavity_mode(x: f64, _y: f64, z: f64, t: f64) -> [f64; 6] {
    use std::f64::consts::PI;
    let w = 2f64.sqrt() * PI;
    let (sx, cx, sz, cz) = ((PI * x).sin(), (PI * x).cos(), (PI * z).sin(), (PI * z).cos());
    [PI / w * sx * cz * (w * t).sin(), 0.0, -PI / w * cx * sz * (w * t).sin(), 0.0, sx * sz * (w * t).cos(), 0.0]
}

/// MIDG2's FLOP model per element and Runge–Kutta stage at order N (Np nodes, Nfp per face).
pub fn flops_per_element_stage(np: usize, nfp: usize) -> usize {
    36 * np * np + 66 * np + nfp * 4 * 61 + np * (12 * 4 * nfp + 6) + 4 * np * 6
}

/// The solver's state.
pub struct Maxwell<T> {
    /// Nodes per element, Np.
    pub np: usize,
    /// Nodes per face, Nfp.
    pub nfp: usize,
    /// Elements, K.
    pub k: usize,
    /// Dr, Ds, Dt (Np × Np, row-major) and LIFT (Np × 4·Nfp) in `T`.
    pub dr: Vec<T>,
    /// Ds.
    pub ds: Vec<T>,
    /// Dt.
    pub dt_matrix: Vec<T>,
    /// LIFT.
    pub lift: Vec<T>,
    /// Per element the nine geometric factors in `T`.
    pub factors: Vec<[T; 9]>,
    /// Per face the normal and Fscale in `T`.
    pub normal: Vec<[T; 3]>,
    /// Fscale per face.
    pub fscale: Vec<T>,
    /// vmapM, vmapP and whether each face node is on the wall.
    pub vmap_m: Vec<u32>,
    /// vmapP.
    pub vmap_p: Vec<u32>,
    /// Face nodes on the wall.
    pub wall: Vec<bool>,
    /// The fields (Hx, Hy, Hz, Ex, Ey, Ez), each K·Np, element-major.
    pub fields: [Vec<T>; 6],
    /// The Runge–Kutta residuals.
    pub residual: [Vec<T>; 6],
    /// Time step.
    pub dt: f64,
    /// Time reached.
    pub time: f64,
}

fn to<T: Float>(x: f64) -> T {
    T::from(x).expect("a finite binary64 value")
}

impl<T: Float> Maxwell<T> {
    /// The solver on `mesh` at order `n` (1 ..= 4), fields set to `initial` at the nodes, the
    /// time step MIDG2's: 0.5 · min over faces of 1/Fscale / (N+1)².
    pub fn new(mesh: &TetMesh, n: usize, initial: &dyn Fn(f64, f64, f64) -> [f64; 6]) -> Result<Maxwell<T>, Error> {
        if !(1..=4).contains(&n) {
            return Err(Error::Config(format!("MIDG2 order {n}: allowed range is 1 ..= 4")));
        }
        let op = Operators::new(n);
        let conn: Connectivity = mesh.connect()?;
        let g = Geometry::new(mesh, &conn, &op)?;
        Ok(Maxwell::from_parts(&op, &g, mesh.elements.len(), initial))
    }

    /// The solver from operators and geometry already built.
    pub fn from_parts(op: &Operators, g: &Geometry, k: usize, initial: &dyn Fn(f64, f64, f64) -> [f64; 6]) -> Maxwell<T> {
        let (np, nfp) = (op.np(), op.nfp());
        let flat = |m: &nalgebra::DMatrix<f64>| (0..m.nrows()).flat_map(|i| (0..m.ncols()).map(move |j| to::<T>(m[(i, j)]))).collect::<Vec<T>>();
        let mut fields: [Vec<T>; 6] = Default::default();
        for i in 0..k * np {
            let v = initial(g.x[i], g.y[i], g.z[i]);
            for f in 0..6 {
                fields[f].push(to(v[f]));
            }
        }
        let mut wall = vec![false; g.vmap_m.len()];
        g.map_b.iter().for_each(|&i| wall[i as usize] = true);
        let geometric = g.fscale.iter().fold(f64::INFINITY, |m, f| m.min(1.0 / f));
        let dt = 0.5 * geometric / ((op.order + 1) * (op.order + 1)) as f64;
        Maxwell {
            np,
            nfp,
            k,
            dr: flat(&op.dr),
            ds: flat(&op.ds),
            dt_matrix: flat(&op.dt),
            lift: flat(&op.lift),
            factors: g.factors.iter().map(|f| f.map(to)).collect(),
            normal: g.normal.iter().map(|n| n.map(to)).collect(),
            fscale: g.fscale.iter().map(|f| to(*f)).collect(),
            vmap_m: g.vmap_m.clone(),
            vmap_p: g.vmap_p.clone(),
            wall,
            residual: std::array::from_fn(|_| vec![T::zero(); k * np]),
            fields,
            dt,
            time: 0.0,
        }
    }

    /// The right-hand side of every field at every node: volume, then surface.
    pub fn rhs(&self) -> [Vec<T>; 6] {
        let (np, nfp) = (self.np, self.nfp);
        let mut rhs: [Vec<T>; 6] = std::array::from_fn(|_| vec![T::zero(); self.k * np]);
        let half = to::<T>(0.5);
        for e in 0..self.k {
            let base = e * np;
            // Volume: ∂/∂r, ∂/∂s, ∂/∂t of every field, then the curls.
            let mut d = vec![[[T::zero(); 3]; 6]; np];
            for i in 0..np {
                for f in 0..6 {
                    let u = &self.fields[f][base..base + np];
                    let mut acc = [T::zero(); 3];
                    for j in 0..np {
                        acc[0] = acc[0] + self.dr[i * np + j] * u[j];
                        acc[1] = acc[1] + self.ds[i * np + j] * u[j];
                        acc[2] = acc[2] + self.dt_matrix[i * np + j] * u[j];
                    }
                    d[i][f] = acc;
                }
            }
            let g = &self.factors[e];
            // ∂u/∂x_a = r_a·u_r + s_a·u_s + t_a·u_t.
            let grad = |dd: &[T; 3], a: usize| g[a] * dd[0] + g[3 + a] * dd[1] + g[6 + a] * dd[2];
            for i in 0..np {
                let dx = |f: usize, a: usize| grad(&d[i][f], a);
                // curl H and curl E.
                let curl = |o: usize| [dx(o + 2, 1) - dx(o + 1, 2), dx(o, 2) - dx(o + 2, 0), dx(o + 1, 0) - dx(o, 1)];
                let (ch, ce) = (curl(0), curl(3));
                for c in 0..3 {
                    rhs[c][base + i] = -ce[c];
                    rhs[3 + c][base + i] = ch[c];
                }
            }
            // Surface: the upwind flux at every face node, then LIFT.
            let mut flux = vec![[T::zero(); 6]; FACES * nfp];
            for f in 0..FACES {
                let n = self.normal[e * FACES + f];
                let fs = self.fscale[e * FACES + f];
                for i in 0..nfp {
                    let at = (e * FACES + f) * nfp + i;
                    let (m, p) = (self.vmap_m[at] as usize, self.vmap_p[at] as usize);
                    let mut j = [T::zero(); 6];
                    for c in 0..6 {
                        j[c] = self.fields[c][p] - self.fields[c][m];
                    }
                    if self.wall[at] {
                        // A perfect conductor: H mirrored, E reversed.
                        for c in 0..3 {
                            j[c] = T::zero();
                            j[3 + c] = to::<T>(-2.0) * self.fields[3 + c][m];
                        }
                    }
                    let ndh = n[0] * j[0] + n[1] * j[1] + n[2] * j[2];
                    let nde = n[0] * j[3] + n[1] * j[4] + n[2] * j[5];
                    let fl = [
                        -n[1] * j[5] + n[2] * j[4] + (j[0] - ndh * n[0]),
                        -n[2] * j[3] + n[0] * j[5] + (j[1] - ndh * n[1]),
                        -n[0] * j[4] + n[1] * j[3] + (j[2] - ndh * n[2]),
                        n[1] * j[2] - n[2] * j[1] + (j[3] - nde * n[0]),
                        n[2] * j[0] - n[0] * j[2] + (j[4] - nde * n[1]),
                        n[0] * j[1] - n[1] * j[0] + (j[5] - nde * n[2]),
                    ];
                    for c in 0..6 {
                        flux[f * nfp + i][c] = fs * fl[c] * half;
                    }
                }
            }
            for i in 0..np {
                for c in 0..6 {
                    let mut acc = T::zero();
                    for q in 0..FACES * nfp {
                        acc = acc + self.lift[i * FACES * nfp + q] * flux[q][c];
                    }
                    rhs[c][base + i] = rhs[c][base + i] + acc;
                }
            }
        }
        rhs
    }

    /// One time step: five stages of right-hand side and update.
    pub fn step(&mut self) {
        let dt = to::<T>(self.dt);
        for s in 0..5 {
            let rhs = self.rhs();
            let (a, b) = (to::<T>(RK4A[s]), to::<T>(RK4B[s]));
            for c in 0..6 {
                for i in 0..self.k * self.np {
                    self.residual[c][i] = a * self.residual[c][i] + dt * rhs[c][i];
                    self.fields[c][i] = self.fields[c][i] + b * self.residual[c][i];
                }
            }
        }
        self.time += self.dt;
    }

    /// Runs to `end` with the step shrunk so that a whole number of steps reaches it exactly;
    /// returns the steps taken.
    pub fn run_to(&mut self, end: f64) -> usize {
        let steps = ((end - self.time) / self.dt).ceil().max(1.0) as usize;
        self.dt = (end - self.time) / steps as f64;
        for _ in 0..steps {
            self.step();
        }
        self.time = end;
        steps
    }

    /// The largest difference between any field at any node and `exact` (at the nodes'
    /// coordinates `x`, `y`, `z`, time [`Maxwell::time`]).
    pub fn max_error(&self, g: &Geometry, exact: &dyn Fn(f64, f64, f64, f64) -> [f64; 6]) -> f64 {
        let mut worst = 0.0f64;
        for i in 0..self.k * self.np {
            let want = exact(g.x[i], g.y[i], g.z[i], self.time);
            for c in 0..6 {
                worst = worst.max((self.fields[c][i].to_f64().unwrap_or(f64::NAN) - want[c]).abs());
            }
        }
        worst
    }
}
