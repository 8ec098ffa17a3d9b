//! Mesh applications as OP2 writes them: **sets** (nodes, edges, cells, …), **maps** between sets
//! (edge → 2 nodes), **data** on sets with a dimension, **globals**, and **parallel loops** over a
//! set whose arguments say how each datum is reached (directly, or through index `i` of a map) and
//! accessed (`Read`, `Write`, `Rw`, `Inc`; globals `Inc`, `Min`, `Max`, `Read`).
//!
//! [`App`] holds the declarations and runs loops in OP2's plain sequential order: elements in
//! index order; per element every argument is gathered into a buffer (`Inc` buffers and
//! reduced globals start at zero, `Write` buffers hold the old value), the kernel runs, then
//! `Write`/`Rw` buffers are written back and `Inc` buffers added, argument by argument. Values
//! are binary64 or binary32 (`App<f32>`), and every increment and reduction is done in that type.

//!
//! The same application can be written as a text file ([`text`]: declarations, loops whose
//! kernels are in the kernel language, a program) and run with [`Application`].

mod accumulate;
mod constants;
mod datapath;
pub mod dense;
mod dense_loop;
mod element;
pub mod graph;
pub mod hardware;
pub mod host;
mod kernel;
pub mod layout;
mod memories;
pub mod partition;
pub mod plan;
mod products;
mod program;
mod reduction;
mod run;
pub mod schedule;
pub mod sequencer;
mod store;
pub mod text;

pub use program::{Access, App, Arg, DatId, GlobalId, MapId, SetId};
pub use run::{Application, Element, MeshData};
