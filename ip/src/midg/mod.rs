//! MIDG2 — Warburton's nodal discontinuous Galerkin solver for Maxwell's equations on
//! tetrahedra (seed 000) — in weft: the reference element's nodes and operators
//! ([`nodes`], [`operators`]) built from first principles in binary64, tetrahedral meshes and
//! their connectivity ([`mesh`], [`readers`]), each element's geometry and face maps
//! ([`geometry`]), the solver's software model ([`solver`]), the solver as a weft application
//! ([`app`]) and the references of its shipped stream kernels ([`kernels`]).

pub mod app;
pub mod geometry;
pub mod jacobi;
pub mod kernels;
pub mod mesh;
pub mod nodes;
pub mod operators;
pub mod readers;
pub mod shipped;
pub mod solver;

pub use geometry::Geometry;
pub use mesh::{Connectivity, TetMesh};
pub use operators::Operators;
