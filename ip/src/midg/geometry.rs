//! What an order-N element of a mesh needs beside the reference operators: its nodes' physical
//! coordinates, the geometric factors of its affine map (∂(r,s,t)/∂(x,y,z) and the Jacobian J),
//! each face's outward unit normal and surface Jacobian sJ with Fscale = sJ / J, and the face-node
//! maps — `vmapM` (a face node's own volume node) and `vmapP` (the same point's node in the
//! neighbour; itself on the boundary) — as MIDG2 builds them (Hesthaven & Warburton, §10.2).

use super::mesh::{Connectivity, TetMesh};
use super::operators::{Operators, FACES};
use crate::Error;

/// The geometry of every element, binary64. Per-node arrays are element-major (`k·Np + i`);
/// per-face arrays `k·4 + f`; face-node arrays `(k·4 + f)·Nfp + i`.
#[derive(Clone, Debug)]
pub struct Geometry {
    /// Physical coordinates of every node.
    pub x: Vec<f64>,
    /// y of every node.
    pub y: Vec<f64>,
    /// z of every node.
    pub z: Vec<f64>,
    /// Per element, the nine factors [rx, ry, rz, sx, sy, sz, tx, ty, tz] (constant: affine).
    pub factors: Vec<[f64; 9]>,
    /// Per element, the volume Jacobian J (the element's volume is 4J/3).
    pub j: Vec<f64>,
    /// Per face, its outward unit normal.
    pub normal: Vec<[f64; 3]>,
    /// Per face, its surface Jacobian (the face's area is 2·sJ).
    pub sj: Vec<f64>,
    /// Per face, sJ / J.
    pub fscale: Vec<f64>,
    /// Per face node, its volume node.
    pub vmap_m: Vec<u32>,
    /// Per face node, the neighbour's volume node at the same point (its own on the boundary).
    pub vmap_p: Vec<u32>,
    /// Face nodes on the boundary (indices into `vmap_m`).
    pub map_b: Vec<u32>,
}

impl Geometry {
    /// The geometry of `mesh` with connectivity `conn` at the order of `op`. A face node without
    /// a matching node across its face (a non-conforming mesh) is an error naming the element
    /// and face.
    pub fn new(mesh: &TetMesh, conn: &Connectivity, op: &Operators) -> Result<Geometry, Error> {
        let (np, nfp, k) = (op.np(), op.nfp(), mesh.elements.len());
        let mut g = Geometry { x: vec![], y: vec![], z: vec![], factors: vec![], j: vec![], normal: vec![], sj: vec![], fscale: vec![], vmap_m: vec![], vmap_p: vec![], map_b: vec![] };
        for e in 0..k {
            let v = mesh.corners(e);
            for p in &op.nodes {
                let w = [-(1.0 + p[0] + p[1] + p[2]) / 2.0, (1.0 + p[0]) / 2.0, (1.0 + p[1]) / 2.0, (1.0 + p[2]) / 2.0];
                let at = |d: usize| (0..4).map(|c| w[c] * v[c][d]).sum::<f64>();
                g.x.push(at(0));
                g.y.push(at(1));
                g.z.push(at(2));
            }
            // ∂(x,y,z)/∂(r,s,t) of the affine map.
            let d = |c: usize, a: usize| (v[c + 1][a] - v[0][a]) / 2.0;
            let (xr, xs, xt, yr, ys, yt, zr, zs, zt) = (d(0, 0), d(1, 0), d(2, 0), d(0, 1), d(1, 1), d(2, 1), d(0, 2), d(1, 2), d(2, 2));
            let j = xr * (ys * zt - zs * yt) - yr * (xs * zt - zs * xt) + zr * (xs * yt - ys * xt);
            let f = [
                (ys * zt - zs * yt) / j,
                -(xs * zt - zs * xt) / j,
                (xs * yt - ys * xt) / j,
                -(yr * zt - zr * yt) / j,
                (xr * zt - zr * xt) / j,
                -(xr * yt - yr * xt) / j,
                (yr * zs - zr * ys) / j,
                -(xr * zs - zr * xs) / j,
                (xr * ys - yr * xs) / j,
            ];
            g.factors.push(f);
            g.j.push(j);
            let (gr, gs, gt) = ([f[0], f[1], f[2]], [f[3], f[4], f[5]], [f[6], f[7], f[8]]);
            for face in 0..FACES {
                let n = match face {
                    0 => gt.map(|x| -x),
                    1 => gs.map(|x| -x),
                    2 => [gr[0] + gs[0] + gt[0], gr[1] + gs[1] + gt[1], gr[2] + gs[2] + gt[2]],
                    _ => gr.map(|x| -x),
                };
                let len = (n[0] * n[0] + n[1] * n[1] + n[2] * n[2]).sqrt();
                g.normal.push(n.map(|x| x / len));
                g.sj.push(len * j);
                g.fscale.push(len);
            }
        }
        // Face nodes: own node, and the node at the same point across the face.
        let scale = mesh.vertices.iter().flat_map(|p| p.iter()).fold(0.0f64, |m, x| m.max(x.abs())).max(1.0);
        let tol = 1e-9 * scale;
        for e in 0..k {
            for f in 0..FACES {
                let (ne, nf) = (conn.etoe[e][f] as usize, conn.etof[e][f] as usize);
                for &i in &op.fmask[f] {
                    let m = e * np + i;
                    let at = g.vmap_m.len() as u32;
                    g.vmap_m.push(m as u32);
                    if conn.boundary(e, f) {
                        g.vmap_p.push(m as u32);
                        g.map_b.push(at);
                        continue;
                    }
                    let p = op.fmask[nf].iter().map(|&q| ne * np + q).find(|&q| (g.x[q] - g.x[m]).abs() < tol && (g.y[q] - g.y[m]).abs() < tol && (g.z[q] - g.z[m]).abs() < tol);
                    let p = p.ok_or_else(|| Error::Config(format!("element {e}, face {}: node {i} has no matching node in element {ne}, face {}", f + 1, nf + 1)))?;
                    g.vmap_p.push(p as u32);
                }
            }
        }
        debug_assert_eq!(g.vmap_m.len(), k * FACES * nfp);
        Ok(g)
    }

    /// ∂u/∂x, ∂u/∂y, ∂u/∂z at every node of element `k` from `u`'s nodal values there.
    pub fn gradient(&self, op: &Operators, k: usize, u: &[f64]) -> [Vec<f64>; 3] {
        let np = op.np();
        let f = &self.factors[k];
        let apply = |d: &nalgebra::DMatrix<f64>| (0..np).map(|i| (0..np).map(|j| d[(i, j)] * u[j]).sum::<f64>()).collect::<Vec<f64>>();
        let (ur, us, ut) = (apply(&op.dr), apply(&op.ds), apply(&op.dt));
        [0, 1, 2].map(|a| (0..np).map(|i| f[a] * ur[i] + f[3 + a] * us[i] + f[6 + a] * ut[i]).collect())
    }
}
