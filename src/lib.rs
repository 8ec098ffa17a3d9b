//! weft: FPGA streaming kernels and communication IP for multi-FPGA HPC systems.
//!
//! This crate is the command-line tool and a facade over the workspace: [`hdl`] (the language
//! layer), [`ip`] (the blocks), [`sim`] (harnesses and models), [`system`] (the system generator:
//! TOML in; node, simulation top, shell, constraints, core file out), and [`flow`] (generate and
//! check). [`tools`] drives the outside tools (Verilator, Yosys, Icarus, nextpnr), [`run`] runs
//! kernels and mesh applications (`weft sim`, `weft app`), [`bench`](mod@bench) measures the
//! figures in `bench/*.json`, and [`cache`] keeps the check flow's records.

#![warn(missing_docs)]

pub use weft_hdl as hdl;
pub use weft_ip as ip;
pub use weft_sim as sim;
pub use weft_tools as tools;

mod error;

pub use error::Error;

pub mod bench;
pub mod cache;
pub mod flow;
pub mod run;
pub mod system;
