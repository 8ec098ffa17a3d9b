#![warn(missing_docs)]

//! weft-hdl: the language layer — word-level netlists with the typed handle, the built-in
//! simulator and the Verilog writer; floating- and fixed-point operators; the pipeline builder
//! and kernel language; the rust-hdl stream blocks and bridge; the testbench harness and Verilog
//! export. The outside tools' runners are `weft-tools`.

pub use rust_hdl;

mod error;
pub mod export;
pub mod fixed;
pub mod float;
pub mod netlist;
pub mod pipeline;
pub mod stream;
pub mod testbench;

pub use error::Error;
