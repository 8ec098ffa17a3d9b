//! The reference element's operators of an order-N nodal DG method on tetrahedra, as MIDG2 uses
//! them: the Vandermonde matrix of the orthonormal simplex basis, the derivative matrices Dr, Ds,
//! Dt, the face masks and the LIFT matrix (Hesthaven & Warburton, §10.1–10.2). Computed in
//! binary64; [`Operators::to_f32`] rounds them to MIDG2's binary32.

use nalgebra::DMatrix;

use super::jacobi::{jacobi, jacobi_grad};
use super::nodes::{count, face_count, warp_blend, Rst};

/// Faces of a tetrahedron.
pub const FACES: usize = 4;

/// A node closer than this to a face lies on it.
const NODE_TOL: f64 = 1e-7;

/// The collapsed coordinates (a, b, c) of a reference point.
fn collapse([r, s, t]: Rst) -> [f64; 3] {
    let a = if (s + t).abs() > 1e-14 { 2.0 * (1.0 + r) / (-s - t) - 1.0 } else { -1.0 };
    let b = if (t - 1.0).abs() > 1e-14 { 2.0 * (1.0 + s) / (1.0 - t) - 1.0 } else { -1.0 };
    [a, b, t]
}

/// The (i, j, k) of every basis function, i + j + k ≤ n, in MIDG2's order.
fn degrees(n: usize) -> Vec<(usize, usize, usize)> {
    let mut out = vec![];
    for i in 0..=n {
        for j in 0..=n - i {
            for k in 0..=n - i - j {
                out.push((i, j, k));
            }
        }
    }
    out
}

/// The orthonormal basis function (i, j, k) of the reference tetrahedron at `p`.
pub fn simplex3(p: Rst, (i, j, k): (usize, usize, usize)) -> f64 {
    let [a, b, c] = collapse(p);
    let h1 = jacobi(a, 0.0, 0.0, i);
    let h2 = jacobi(b, (2 * i + 1) as f64, 0.0, j);
    let h3 = jacobi(c, (2 * (i + j) + 2) as f64, 0.0, k);
    2.0 * 2f64.sqrt() * h1 * h2 * (1.0 - b).powi(i as i32) * h3 * (1.0 - c).powi((i + j) as i32)
}

/// The gradient (∂r, ∂s, ∂t) of the basis function (i, j, k) at `p`.
pub fn simplex3_grad(p: Rst, (i, j, k): (usize, usize, usize)) -> [f64; 3] {
    let [a, b, c] = collapse(p);
    let (fa, dfa) = (jacobi(a, 0.0, 0.0, i), jacobi_grad(a, 0.0, 0.0, i));
    let (gb, dgb) = (jacobi(b, (2 * i + 1) as f64, 0.0, j), jacobi_grad(b, (2 * i + 1) as f64, 0.0, j));
    let (hc, dhc) = (jacobi(c, (2 * (i + j) + 2) as f64, 0.0, k), jacobi_grad(c, (2 * (i + j) + 2) as f64, 0.0, k));
    let half = |x: f64, e: usize| (0.5 * x).powi(e as i32);
    let mut dr = dfa * gb * hc;
    if i > 0 {
        dr *= half(1.0 - b, i - 1);
    }
    if i + j > 0 {
        dr *= half(1.0 - c, i + j - 1);
    }
    let mut ds = 0.5 * (1.0 + a) * dr;
    let mut tmp = dgb * half(1.0 - b, i);
    if i > 0 {
        tmp += -0.5 * i as f64 * gb * half(1.0 - b, i - 1);
    }
    if i + j > 0 {
        tmp *= half(1.0 - c, i + j - 1);
    }
    tmp = fa * tmp * hc;
    ds += tmp;
    let mut dt = 0.5 * (1.0 + a) * dr + 0.5 * (1.0 + b) * tmp;
    let mut tmp = dhc * half(1.0 - c, i + j);
    if i + j > 0 {
        tmp -= 0.5 * (i + j) as f64 * hc * half(1.0 - c, i + j - 1);
    }
    dt += fa * gb * tmp * half(1.0 - b, i);
    let scale = 2f64.powf((2 * i + j) as f64 + 1.5);
    [dr * scale, ds * scale, dt * scale]
}

/// The orthonormal basis function (i, j) of the reference triangle (vertices (−1,−1), (1,−1),
/// (−1,1)) at (r, s).
pub fn simplex2(r: f64, s: f64, i: usize, j: usize) -> f64 {
    let a = if (s - 1.0).abs() > 1e-14 { 2.0 * (1.0 + r) / (1.0 - s) - 1.0 } else { -1.0 };
    2f64.sqrt() * jacobi(a, 0.0, 0.0, i) * jacobi(s, (2 * i + 1) as f64, 0.0, j) * (1.0 - s).powi(i as i32)
}

/// The reference element of order N, binary64.
#[derive(Clone, Debug)]
pub struct Operators {
    /// Polynomial order N.
    pub order: usize,
    /// The nodes (r, s, t), Np of them.
    pub nodes: Vec<Rst>,
    /// Vandermonde matrix V (Np × Np): `V[i][j]` = basis function j at node i.
    pub v: DMatrix<f64>,
    /// Derivative matrices (Np × Np): nodal values to nodal values of ∂/∂r, ∂/∂s, ∂/∂t.
    pub dr: DMatrix<f64>,
    /// ∂/∂s.
    pub ds: DMatrix<f64>,
    /// ∂/∂t.
    pub dt: DMatrix<f64>,
    /// Per face, its Nfp nodes (indices into `nodes`): face 1 t = −1, face 2 s = −1, face 3
    /// r + s + t = −1, face 4 r = −1.
    pub fmask: [Vec<usize>; FACES],
    /// LIFT (Np × 4·Nfp): the inverse mass matrix times each face's mass matrix.
    pub lift: DMatrix<f64>,
}

impl Operators {
    /// The operators of order `n` (1 ..= 15; MIDG2 runs 1–4), on the Warp & Blend nodes.
    pub fn new(n: usize) -> Operators {
        let nodes = warp_blend(n);
        let np = count(n);
        let modes = degrees(n);
        let v = DMatrix::from_fn(np, np, |i, j| simplex3(nodes[i], modes[j]));
        let grads: Vec<Vec<[f64; 3]>> = nodes.iter().map(|p| modes.iter().map(|m| simplex3_grad(*p, *m)).collect()).collect();
        let vinv = v.clone().try_inverse().expect("the Warp & Blend nodes are unisolvent");
        let d = |c: usize| DMatrix::from_fn(np, np, |i, j| grads[i][j][c]) * &vinv;
        let on = |f: &dyn Fn(Rst) -> f64| -> Vec<usize> { (0..np).filter(|&i| f(nodes[i]).abs() < NODE_TOL).collect() };
        let fmask = [on(&|p| 1.0 + p[2]), on(&|p| 1.0 + p[1]), on(&|p| 1.0 + p[0] + p[1] + p[2]), on(&|p| 1.0 + p[0])];
        let nfp = face_count(n);
        let mut e = DMatrix::zeros(np, FACES * nfp);
        for (f, mask) in fmask.iter().enumerate() {
            assert_eq!(mask.len(), nfp, "face {f} holds {} nodes, not {nfp}", mask.len());
            // Each face in two of the element's coordinates, as MIDG2 parametrises it.
            let coords = |p: Rst| match f {
                0 => (p[0], p[1]),
                1 => (p[0], p[2]),
                _ => (p[1], p[2]),
            };
            let face_modes: Vec<(usize, usize)> = (0..=n).flat_map(|i| (0..=n - i).map(move |j| (i, j))).collect();
            let vf = DMatrix::from_fn(nfp, nfp, |a, b| {
                let (r, s) = coords(nodes[mask[a]]);
                simplex2(r, s, face_modes[b].0, face_modes[b].1)
            });
            let mass = (&vf * vf.transpose()).try_inverse().expect("the face nodes are unisolvent");
            for (a, &row) in mask.iter().enumerate() {
                for b in 0..nfp {
                    e[(row, f * nfp + b)] += mass[(a, b)];
                }
            }
        }
        let lift = &v * (v.transpose() * e);
        Operators { order: n, nodes, dr: d(0), ds: d(1), dt: d(2), v, fmask, lift }
    }

    /// Nodes of the element, Np.
    pub fn np(&self) -> usize {
        self.nodes.len()
    }

    /// Nodes of a face, Nfp.
    pub fn nfp(&self) -> usize {
        self.fmask[0].len()
    }

    /// The mass matrix M = (V Vᵀ)⁻¹ of the reference element.
    pub fn mass(&self) -> DMatrix<f64> {
        (&self.v * self.v.transpose()).try_inverse().expect("V is invertible")
    }

    /// Dr, Ds, Dt and LIFT rounded to binary32, row-major, as MIDG2 stores them.
    pub fn to_f32(&self) -> Rounded {
        let round = |m: &DMatrix<f64>| (0..m.nrows()).flat_map(|i| (0..m.ncols()).map(move |j| m[(i, j)] as f32)).collect();
        Rounded { dr: round(&self.dr), ds: round(&self.ds), dt: round(&self.dt), lift: round(&self.lift) }
    }
}

/// The operators in binary32, row-major.
#[derive(Clone, Debug)]
pub struct Rounded {
    /// Dr, Np × Np.
    pub dr: Vec<f32>,
    /// Ds.
    pub ds: Vec<f32>,
    /// Dt.
    pub dt: Vec<f32>,
    /// LIFT, Np × 4·Nfp.
    pub lift: Vec<f32>,
}
