//! The mesh cut into 8 parts for the 2×2×2 torus, and the halo each part needs.
//!
//! The square is cut into 2 columns × 4 rows of blocks (`cells/2 × cells/4` squares each). Block
//! `(bx, by)` goes to the torus node at `(x, y, z) = (bx, by mod 2, by / 2)`, node index
//! `x + 2·(y + 2·z)` (the contract's numbering, docs/contract.md), so a block's row neighbours are one hop away in
//! Y or two hops (Y and Z) and its column neighbour one hop in X.
//!
//! Each node numbers its elements in its own seeded random order (so nothing depends on the
//! global numbering); its *face nodes* are, in this order: its elements in that order, faces
//! 0..3, face nodes 0..2. Where the plus side of a face node belongs to another node, that node sends
//! its six field values each stage: the halo from node `m` to node `n` is the list of
//! `(element, vertex)` of `m` in the order of `n`'s face nodes that need them (a vertex needed
//! twice is sent twice).

use std::collections::HashMap;

use weft_hdl::testbench::Rng;

use super::mesh::{Mesh, FACES, FACE_NODES};

/// Parts (torus nodes).
pub const PARTS: usize = 8;

/// Where a face node's plus-side values come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Plus {
    /// This node's own element (its index in the node's element list) and vertex.
    Local {
        /// Index in the node's element list.
        element: usize,
        /// Vertex of that element, 0 ..= 2.
        vertex: usize,
    },
    /// Entry `index` of the halo from node `from`.
    Halo {
        /// The node that sends it.
        from: usize,
        /// Position in `halo[from][this node]`.
        index: usize,
    },
}

/// The 8 parts and their halos.
#[derive(Clone, Debug)]
pub struct Partition {
    /// The mesh partitioned.
    pub mesh: Mesh,
    /// Per node, its elements (global numbers) in the node's order.
    pub elements: Vec<Vec<usize>>,
    /// `halo[m][n]`: the `(local element index on m, vertex)` node `m` sends to node `n`, in
    /// order (empty when `n` needs nothing from `m`, and for `m = n`).
    pub halo: Vec<Vec<Vec<(usize, usize)>>>,
    /// Per node, the plus side of each of its face nodes, in face-node order.
    pub plus: Vec<Vec<Plus>>,
}

impl Partition {
    /// The node that owns element `e`.
    pub fn owner(mesh: &Mesh, e: usize) -> usize {
        let (i, j, _) = mesh.cell(e);
        let (bx, by) = (i / (mesh.cells / 2), j / (mesh.cells / 4));
        bx + 2 * ((by % 2) + 2 * (by / 2))
    }

    /// The partition of `mesh`, each node's elements shuffled by `seed`.
    pub fn new(mesh: &Mesh, seed: u64) -> Partition {
        let mut elements = vec![vec![]; PARTS];
        for e in 0..mesh.elements() {
            elements[Partition::owner(mesh, e)].push(e);
        }
        let mut rng = Rng::new(seed);
        for els in elements.iter_mut() {
            for i in (1..els.len()).rev() {
                els.swap(i, rng.below(i as u64 + 1) as usize);
            }
        }
        let index: HashMap<usize, usize> = elements.iter().flat_map(|els| els.iter().enumerate().map(|(i, &e)| (e, i))).collect();
        let local = |e: usize| index[&e];
        let mut halo = vec![vec![vec![]; PARTS]; PARTS];
        let mut plus = vec![vec![]; PARTS];
        for n in 0..PARTS {
            for &e in &elements[n] {
                for f in 0..FACES {
                    for k in 0..FACE_NODES {
                        let (pe, vertex) = mesh.plus(e, f, k);
                        let m = Partition::owner(mesh, pe);
                        plus[n].push(if m == n {
                            Plus::Local { element: local(pe), vertex }
                        } else {
                            halo[m][n].push((local(pe), vertex));
                            Plus::Halo { from: m, index: halo[m][n].len() - 1 }
                        });
                    }
                }
            }
        }
        Partition { mesh: mesh.clone(), elements, halo, plus }
    }

    /// Halo bytes node `m` sends each stage (6 binary32 values an entry).
    pub fn halo_bytes(&self, m: usize) -> usize {
        self.halo[m].iter().map(|h| h.len() * 4 * super::mesh::FIELDS).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_element_has_one_owner_and_halos_match_the_boundary() {
        let mesh = Mesh::new(8).unwrap();
        let p = Partition::new(&mesh, 7);
        let mut all: Vec<usize> = p.elements.concat();
        all.sort();
        assert_eq!(all, (0..mesh.elements()).collect::<Vec<_>>());
        assert!(p.elements.iter().any(|els| els.windows(2).any(|w| w[0] > w[1])), "not shuffled");
        assert_eq!(p.elements.iter().map(Vec::len).collect::<Vec<_>>(), vec![16; PARTS]);
        for n in 0..PARTS {
            // A 4 × 2 block: 4 bottom, 4 top, 2 left and 2 right faces cross to another node,
            // each with 2 face nodes; left and right go to the same node (2 columns).
            let halo: usize = (0..PARTS).map(|m| p.halo[m][n].len()).sum();
            assert_eq!(halo, 24, "node {n}");
            assert_eq!(p.halo[n][n].len(), 0);
            assert_eq!((0..PARTS).filter(|&m| !p.halo[m][n].is_empty()).count(), 3, "node {n}: three neighbours");
        }
    }
}
