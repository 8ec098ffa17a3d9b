//! Two reliable-link endpoints joined by two channel models, driven with random packets on both
//! virtual channels in both directions, and checked: every packet arrives exactly once, intact,
//! in order per virtual channel. The same harness drives the built-in simulator (the netlist
//! evaluator) and Verilator (the generated Verilog), through [`Device`].
//!
//! `device` holds the [`Device`] trait and its implementations; `pair` the link pair and its run;
//! `clocks` the schedule of both ends' clocks when they run at different periods.

mod clocks;
mod device;
mod pair;

pub use device::{netlist_device, scalar, Device, NetlistDevice, Value, VerilatorDevice, VALUE_WORDS};
pub use pair::{LinkPair, LinkRun, Packet, Traffic};
