//! The router of the Communication IP: IntraNode ports to local kernels, InterNode ports to the
//! neighbours on a 3D torus, virtual cut-through with two virtual channels per link and
//! dimension-order routing.

pub mod config;
pub mod header;
pub mod route;
pub mod router;

pub use config::{Direction, RouterConfig};
pub use header::Header;
pub use router::router;
