//! weft-ip: the blocks users instantiate, and the catalogue of modules weft ships as Verilog.

#![warn(missing_docs)]

pub use weft_hdl;

mod error;

pub use error::Error;

pub mod airfoil;
pub mod app;
pub mod axil;
pub mod axil_crossing;
pub mod axis;
pub mod catalog;
pub mod fp;
pub mod kernels;
pub mod link;
pub mod midg;
pub mod regmap;
pub mod router;
pub mod selftest;
pub mod shipped;
pub mod system;
