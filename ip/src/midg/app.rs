//! MIDG2 as a weft application (`examples/apps/midg.app`): what its mesh provides, under the
//! names the file uses. Nodes are numbered element-major (`k·Np + i`) and face nodes
//! `(k·4 + f)·Nfp + i`, as MIDG2 numbers them.
//!
//! - Sets `elements` (K), `nodes` (K·Np), `fnodes` (K·4·Nfp), `faces` (the interior faces).
//! - Maps `enodes` (element → its Np nodes), `efnodes` (element → its 4·Nfp face nodes), `nelem`
//!   (node → its element), `vmapM` and `vmapP` (face node → its own node, and the node at the
//!   same point across the face; its own on a wall), `fe` (an interior face → its two elements:
//!   no loop uses it; it gives the partitioner the elements that share a face, METIS's
//!   `ncommon = 3` for tetrahedra).
//! - Data `p_u` (per node Hx, Hy, Hz, Ex, Ey, Ez at t = 0), `p_g` (per element the nine
//!   geometric factors rx, ry, rz, sx, sy, sz, tx, ty, tz), `p_face` (per face node the face's
//!   normal nx, ny, nz, its Fscale, and 1 on a wall, 0 inside).
//! - Matrices `Dr`, `Ds`, `Dt` (Np × Np) and `LIFT` (Np × 4·Nfp).

use super::geometry::Geometry;
use super::mesh::TetMesh;
use super::nodes::{count, face_count};
use super::operators::{Operators, FACES};
use crate::app::MeshData;
use crate::Error;

/// The application's order N: `examples/apps/midg.app` is written for MIDG2's default, N = 3
/// (Np = 20, Nfp = 10).
pub const ORDER: usize = 3;

/// `examples/apps/midg.app` as shipped.
pub const SOURCE: &str = include_str!("../../../examples/apps/midg.app");

/// The application's text at order `n` (1 ..= 4, MIDG2's orders): the shipped file with the
/// sizes that depend on the order — the maps `enodes` (Np entries) and `efnodes` (4·Nfp), the
/// matrices Dr, Ds, Dt (Np × Np) and LIFT (Np × 4·Nfp) and the header's N, Np, Nfp — written
/// for `n`. An order outside 1 ..= 4 is an error naming it.
pub fn source(n: usize) -> Result<String, Error> {
    if !(1..=4).contains(&n) {
        return Err(Error::Config(format!("MIDG2 application: order {n} is out of range: allowed 1 ..= 4")));
    }
    let (np, nfp) = (count(n), face_count(n));
    let (np3, nfp3) = (count(ORDER), face_count(ORDER));
    let f = FACES * nfp;
    let lines = [
        (format!("at order N = {ORDER} (Np = {np3} nodes an element, Nfp = {nfp3} a face)"), format!("at order N = {n} (Np = {np} nodes an element, Nfp = {nfp} a face)")),
        (format!("map enodes: elements -> nodes, {np3} "), format!("map enodes: elements -> nodes, {np} ")),
        (format!("map efnodes: elements -> fnodes, {} ", FACES * nfp3), format!("map efnodes: elements -> fnodes, {f} ")),
        (format!("matrix Dr: {np3} x {np3} "), format!("matrix Dr: {np} x {np} ")),
        (format!("matrix Ds: {np3} x {np3} "), format!("matrix Ds: {np} x {np} ")),
        (format!("matrix Dt: {np3} x {np3} "), format!("matrix Dt: {np} x {np} ")),
        (format!("matrix LIFT: {np3} x {} ", FACES * nfp3), format!("matrix LIFT: {np} x {f} ")),
    ];
    let mut text = SOURCE.to_string();
    for (from, to) in lines {
        if text.matches(&from).count() != 1 {
            return Err(Error::Config(format!("examples/apps/midg.app: expected one `{}`", from.trim())));
        }
        text = text.replacen(&from, &to, 1);
    }
    Ok(text)
}

/// The mesh data of `mesh` at order `n` with the fields set to `initial` at the nodes, and
/// MIDG2's time step for it (0.5 · min over faces of 1/Fscale / (N+1)²).
pub fn mesh_data(mesh: &TetMesh, n: usize, initial: &dyn Fn(f64, f64, f64) -> [f64; 6]) -> Result<(MeshData, f64), Error> {
    let op = Operators::new(n);
    let g = Geometry::new(mesh, &mesh.connect()?, &op)?;
    Ok((from_parts(&op, &g, mesh.elements.len(), initial), 0.5 * g.fscale.iter().fold(f64::INFINITY, |m, f| m.min(1.0 / f)) / ((n + 1) * (n + 1)) as f64))
}

/// The mesh data from operators and geometry already built for `k` elements.
pub fn from_parts(op: &Operators, g: &Geometry, k: usize, initial: &dyn Fn(f64, f64, f64) -> [f64; 6]) -> MeshData {
    let (np, nfp) = (op.np(), op.nfp());
    let mut d = MeshData::default();
    d.sets.insert("elements".into(), k);
    d.sets.insert("nodes".into(), k * np);
    d.sets.insert("fnodes".into(), k * FACES * nfp);
    let count = |n: usize| (0..n as u32).collect::<Vec<u32>>();
    d.maps.insert("enodes".into(), (np, count(k * np)));
    d.maps.insert("efnodes".into(), (FACES * nfp, count(k * FACES * nfp)));
    d.maps.insert("nelem".into(), (1, (0..k * np).map(|i| (i / np) as u32).collect()));
    d.maps.insert("vmapM".into(), (1, g.vmap_m.clone()));
    d.maps.insert("vmapP".into(), (1, g.vmap_p.clone()));
    // An interior face once, from the element with the lower number.
    let pairs: Vec<u32> = (0..k * FACES)
        .filter_map(|f| {
            let (e, across) = (f / FACES, g.vmap_p[f * nfp] as usize / np);
            (e < across).then_some([e as u32, across as u32])
        })
        .flatten()
        .collect();
    d.sets.insert("faces".into(), pairs.len() / 2);
    d.maps.insert("fe".into(), (2, pairs));
    d.dats.insert("p_u".into(), (6, (0..k * np).flat_map(|i| initial(g.x[i], g.y[i], g.z[i])).collect()));
    d.dats.insert("p_g".into(), (9, g.factors.iter().flatten().copied().collect()));
    let mut wall = vec![0.0; k * FACES * nfp];
    g.map_b.iter().for_each(|&i| wall[i as usize] = 1.0);
    let face = (0..k * FACES * nfp).flat_map(|q| {
        let f = q / nfp;
        let n = g.normal[f];
        [n[0], n[1], n[2], g.fscale[f], wall[q]]
    });
    d.dats.insert("p_face".into(), (5, face.collect()));
    let flat = |m: &nalgebra::DMatrix<f64>| (m.nrows(), m.ncols(), (0..m.nrows()).flat_map(|i| (0..m.ncols()).map(move |j| m[(i, j)])).collect::<Vec<f64>>());
    for (name, m) in [("Dr", &op.dr), ("Ds", &op.ds), ("Dt", &op.dt), ("LIFT", &op.lift)] {
        d.matrices.insert(name.into(), flat(m));
    }
    d
}
