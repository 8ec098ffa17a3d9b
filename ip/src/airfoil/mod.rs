//! The Airfoil application of seed 002 (OP2's five-loop finite-volume solver over an
//! unstructured quadrilateral mesh): meshes (and OP2's own NACA0012 C-grid), the C-semantics
//! reference of `res_calc`, and the whole program in binary64 as OP2 runs it; its loops
//! compiled from `examples/apps/airfoil.app` are shipped from [`compiled`].

pub mod compiled;
pub mod mesh;
pub mod naca0012;
pub mod program;
pub mod reference;
pub mod solver;

pub use mesh::{generate, Mesh};

impl Mesh {
    /// The cells each edge updates: interior edges first (two cells), then boundary edges
    /// (one), in the numbering a schedule refers to.
    pub fn edge_cells(&self) -> crate::app::schedule::Cells {
        self.edges.iter().map(|e| e.cells.to_vec()).chain(self.bedges.iter().map(|b| vec![b.cell])).collect()
    }

    /// The cells of the interior edges only: the edges `res_calc` runs over.
    pub fn interior_cells(&self) -> crate::app::schedule::Cells {
        self.edges.iter().map(|e| e.cells.to_vec()).collect()
    }
}
