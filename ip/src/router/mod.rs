//! The router of the Communication IP: IntraNode ports to local kernels, InterNode ports to the
//! neighbours on a 3D torus, virtual cut-through with two virtual channels per link and
//! dimension-order routing.

mod allocator;
mod arrival;
mod buffer;
pub mod config;
mod fix;
pub mod header;
mod input;
mod output;
pub mod route;
pub mod router;
mod side;
pub mod spec;

pub use config::{Direction, RouterConfig};
pub use header::Header;
pub use router::router;
