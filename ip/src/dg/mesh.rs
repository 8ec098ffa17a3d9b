//! The mesh of the DG halo exchange: the periodic unit square cut into `cells × cells` squares,
//! each split by its rising diagonal into two right triangles, nodal DG of order 1 (the nodes are
//! the three vertices of each triangle, so a face has [`FACE_NODES`] = 2 nodes).
//!
//! Numbering: square `(i, j)` (column `i`, row `j`) holds element `2·(j·cells + i)`, the lower
//! triangle `(i, j), (i+1, j), (i+1, j+1)`, and element `2·(j·cells + i) + 1`, the upper one
//! `(i, j), (i+1, j+1), (i, j+1)` (vertices counter-clockwise, in units of `h = 1/cells`). Face
//! `f` joins vertices `f` and `(f+1) mod 3`; its face node `k` sits on vertex `(f+k) mod 3`. The
//! face across is traversed the other way, so face node `k` meets the neighbour's face node
//! `1 − k`.

use crate::Error;

/// Fields per node: `Hx, Hy, Hz, Ex, Ey, Ez` (the 3-D kernel's, with `nz = 0` on this mesh).
pub const FIELDS: usize = 6;
/// Nodes (vertices) per element.
pub const VERTICES: usize = 3;
/// Faces per element.
pub const FACES: usize = 3;
/// Nodes per face.
pub const FACE_NODES: usize = 2;

/// The periodic triangular mesh.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mesh {
    /// Squares per side: a multiple of 4 in 4 ..= 64.
    pub cells: usize,
}

impl Mesh {
    /// `cells` must be a multiple of 4 in 4 ..= 64 (the partition cuts it into 2 × 4 blocks).
    pub fn new(cells: usize) -> Result<Mesh, Error> {
        if !(4..=64).contains(&cells) || !cells.is_multiple_of(4) {
            return Err(Error::Config(format!("`cells` = {cells} is out of range: allowed a multiple of 4 in 4..=64")));
        }
        Ok(Mesh { cells })
    }

    /// The number of triangles: `2·cells²`.
    pub fn elements(&self) -> usize {
        2 * self.cells * self.cells
    }

    /// Square column, row, and whether the element is the upper triangle.
    pub fn cell(&self, e: usize) -> (usize, usize, bool) {
        let c = e / 2;
        (c % self.cells, c / self.cells, e % 2 == 1)
    }

    fn element(&self, i: usize, j: usize, upper: bool) -> usize {
        let n = self.cells;
        2 * ((j % n) * n + (i % n)) + upper as usize
    }

    /// Vertex `v` of element `e` in units of `h`.
    pub fn vertex(&self, e: usize, v: usize) -> (usize, usize) {
        let (i, j, upper) = self.cell(e);
        let corners = if upper { [(0, 0), (1, 1), (0, 1)] } else { [(0, 0), (1, 0), (1, 1)] };
        (i + corners[v].0, j + corners[v].1)
    }

    /// Outward unit normal `(nx, ny)` of face `f` of element `e` (diagonals ±1/√2 in binary32).
    pub fn normal(&self, e: usize, f: usize) -> (f32, f32) {
        let d = std::f32::consts::FRAC_1_SQRT_2;
        let (_, _, upper) = self.cell(e);
        if upper {
            [(d, -d), (0.0, 1.0), (-1.0, 0.0)][f]
        } else {
            [(0.0, -1.0), (1.0, 0.0), (-d, d)][f]
        }
    }

    /// Face length over element area, `2/h` on the axis faces and `2√2/h` on the diagonal, in
    /// binary32 (rounded once from binary64).
    pub fn fscale(&self, e: usize, f: usize) -> f32 {
        let (_, _, upper) = self.cell(e);
        let diagonal = if upper { f == 0 } else { f == 2 };
        let s = 2.0 * self.cells as f64;
        (if diagonal { s * std::f64::consts::SQRT_2 } else { s }) as f32
    }

    /// The element and face across face `f` of `e` (periodic).
    pub fn neighbour(&self, e: usize, f: usize) -> (usize, usize) {
        let n = self.cells;
        let (i, j, upper) = self.cell(e);
        if upper {
            match f {
                0 => (self.element(i, j, false), 2),
                1 => (self.element(i, j + 1, false), 0),
                _ => (self.element(i + n - 1, j, false), 1),
            }
        } else {
            match f {
                0 => (self.element(i, j + n - 1, true), 1),
                1 => (self.element(i + 1, j, true), 2),
                _ => (self.element(i, j, true), 0),
            }
        }
    }

    /// The vertex of face node `k` of face `f`.
    pub fn face_vertex(f: usize, k: usize) -> usize {
        (f + k) % VERTICES
    }

    /// The element and vertex holding the plus-side values of face node `k` of face `f` of `e`.
    pub fn plus(&self, e: usize, f: usize, k: usize) -> (usize, usize) {
        let (e2, f2) = self.neighbour(e, f);
        (e2, Mesh::face_vertex(f2, 1 - k))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn face_nodes_meet_their_plus_side_at_the_same_point() {
        let m = Mesh::new(8).unwrap();
        let wrap = |p: (usize, usize)| (p.0 % 8, p.1 % 8);
        for e in 0..m.elements() {
            for f in 0..FACES {
                let (e2, f2) = m.neighbour(e, f);
                assert_eq!(m.neighbour(e2, f2), (e, f), "element {e} face {f}");
                let (n, n2) = (m.normal(e, f), m.normal(e2, f2));
                assert_eq!((n.0, n.1), (-n2.0, -n2.1), "element {e} face {f}: normals not opposite");
                for k in 0..FACE_NODES {
                    let (pe, pv) = m.plus(e, f, k);
                    assert_eq!(wrap(m.vertex(e, Mesh::face_vertex(f, k))), wrap(m.vertex(pe, pv)), "element {e} face {f} node {k}");
                }
            }
        }
    }

    #[test]
    fn bad_sizes_are_refused_by_name() {
        for cells in [0, 2, 6, 68] {
            assert!(Mesh::new(cells).unwrap_err().to_string().contains("`cells`"));
        }
    }
}
