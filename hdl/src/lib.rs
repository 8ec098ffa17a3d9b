//! weft-hdl: the language layer on rust-hdl — AXI4-Stream interfaces and primitives, memories,
//! the cycle-stepping testbench harness, Verilog export and the runners for Verilator, Yosys
//! and Icarus.

pub use rust_hdl;

pub mod export;
pub mod fixed;
pub mod float;
pub mod memory;
pub mod netlist;
pub mod pipeline;
pub mod stream;
pub mod testbench;
pub mod tools;
