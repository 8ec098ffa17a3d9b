#![warn(missing_docs)]

//! weft-sim: harnesses and models for simulating weft designs.
//!
//! - [`cosim`]: the Verilator co-simulation harness (a generated module verilated into a
//!   [`cosim::Model`] and driven cycle by cycle), with AXI4-Stream sources and sinks.
//! - [`channel`]: the serial channel model between two link endpoints: latency in cycles, lane
//!   skew, bit misalignment and bit errors.
//! - [`link`]: two reliable-link endpoints over two channel models, under random traffic, with
//!   the scoreboard that checks every packet.
//! - [`network`]: whole tori of routers or generated nodes, in the built-in simulator or in
//!   Verilator, under traffic patterns, faults and restarts, with allreduce and halo-exchange
//!   runs.
//! - [`catalog`]: every shipped module, with the testbenches that need these models.
//! - [`speed`] and [`plot`]: simulator speed measurement, and SVG plots for benchmark reports.
//!
//! Errors are [`Error`]; the Verilog conventions and the packet format the harnesses check are
//! the public contract in `docs/contract.md`.

/// The IP library whose blocks these harnesses simulate, re-exported so that users of
/// weft-sim build configurations with the same version.
pub use weft_ip;

mod error;

pub use error::Error;

pub mod catalog;
pub mod channel;
pub mod cosim;
pub mod io_channel;
pub mod link;
pub mod network;
pub mod partition;
pub mod plot;
pub mod speed;
pub mod transceiver;
