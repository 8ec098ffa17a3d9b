//! The Airfoil application of seed 002 (OP2's `res_calc` over an unstructured quadrilateral
//! mesh): meshes and the edge schedules an accumulating pipeline needs. The accelerator block
//! itself is not built yet.

pub mod mesh;
pub mod schedule;

pub use mesh::{generate, Mesh};

impl Mesh {
    /// The cells each edge updates: interior edges first (two cells), then boundary edges
    /// (one), in the numbering a schedule refers to.
    pub fn edge_cells(&self) -> schedule::Cells {
        self.edges.iter().map(|e| e.cells.to_vec()).chain(self.bedges.iter().map(|b| vec![b.cell])).collect()
    }
}
