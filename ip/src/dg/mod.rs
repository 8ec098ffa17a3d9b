//! The DG halo exchange of seed 000 (MIDG2 on Stratix 10 with IO channels), in two dimensions:
//! a nodal order-1 Maxwell step on a periodic triangular mesh ([`mesh`]) cut into the 8 parts of
//! the 2×2×2 torus ([`partition`]), and its software model ([`model`]). The surface flux and the
//! Runge–Kutta update are the shipped kernels `dg_surface_flux` and `dg_rk_update`; the volume
//! term and the lift stay in software. `weft_sim::network::halo` runs the step on the generated
//! RTL with the halo carried by the fabric.

pub mod mesh;
pub mod model;
pub mod partition;

pub use mesh::Mesh;
pub use model::GlobalModel;
pub use partition::{Partition, Plus, PARTS};
