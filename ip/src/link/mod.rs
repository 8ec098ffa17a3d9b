//! The link layer: Aurora 64B/66B-compatible lanes and channel, and the reliable link above them
//! (sequence numbers, CRC-32C, go-back-N retransmission, credits for two virtual channels); and
//! the thinner link over a board's own flow-controlled IO channels ([`io_link`]).

pub mod config;
pub mod crc;
pub mod endpoint;
pub mod format;
pub mod gt;
pub mod io_link;
pub mod lane;
pub mod spec;

pub use config::LinkConfig;
pub use endpoint::endpoint;
