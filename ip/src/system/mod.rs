//! Systems: nodes assembled from the router, the link endpoints and the register window.

pub mod allreduce;
pub mod channel;
mod io_links;
pub mod kernel_port;
pub mod node;
pub mod spec;

pub use node::{node, Allreduce, NodeConfig};
