//! weft-sim: harnesses and models for simulating weft designs — the Verilator co-simulation
//! harness with AXI4-Stream source/sink helpers, and simulator speed measurement.

pub use weft_ip;

mod error;

pub use error::Error;

pub mod catalog;
pub mod channel;
pub mod cosim;
pub mod link;
pub mod network;
pub mod plot;
pub mod speed;
