//! In-network allreduce: every node contributes a vector of binary32 values and receives the
//! element-wise sum, reduced in the fabric by an engine beside the router ([`engine`]) along a
//! chain of neighbours ([`plan`]).

pub mod engine;
pub mod plan;

pub use engine::{engine, COUNTERS, FLAGS, PARTIAL_TAG, RESULT_TAG};
pub use plan::{chain, packet_sizes, plan, reference, Program};
