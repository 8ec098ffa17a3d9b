//! Benchmarks that print figures and save them as JSON.

pub mod airfoil;
pub mod airfoil_nodes;
pub mod allreduce;
pub mod beff;
pub mod booksim;
pub mod check;
pub mod cli;
pub mod collectives;
pub mod commands;
pub mod dg;
pub mod dg_resources;
pub mod dg_timing;
pub mod link;
pub mod midg;
pub mod net;
pub mod netsim;
pub mod netsim_load;
pub mod numeric;
pub mod numeric_compare;
pub mod router;
pub mod stress;
pub mod tables;
pub mod timing;
