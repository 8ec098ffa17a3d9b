//! The router netlist: M IntraNode ports and up to six InterNode ports, virtual cut-through,
//! two virtual channels per InterNode port, dimension-order routing (see [`super::route`]).
//!
//! Ports (`<d>` = `xp`, `xn`, `yp`, `yn`, `zp`, `zn`, only those the torus has):
//! - `local_x`, `local_y`, `local_z`: this node's coordinates (from the register window);
//! - IntraNode port p: `s_axis_p<p>_tdata/tlast/tvalid/tready` in (the router fills `src_*`,
//!   zeroes `hops` and writes `ecc`; `tkeep` is derived from `length`), and
//!   `m_axis_p<p>_tdata/tkeep/tlast/tvalid/tready` out;
//! - InterNode direction d (flits *travelling* in direction d): `s_axis_<d>_tdata/tkeep/tlast/
//!   tuser/tvalid` in, with `tuser` = virtual channel and no `tready` (the sender holds
//!   credits), and `s_axis_<d>_credit[1:0]` out, one pulse per flit freed per VC;
//!   `m_axis_<d>_tdata/tkeep/tlast/tuser/tvalid/tready` out (a link may stall it), with
//!   `m_axis_<d>_credit[1:0]` in from the next router;
//! - 32-bit counters: per output `stat_<port>_packets`, `_flits`, `_stalls` (cycles a packet
//!   waited for the output or the output waited for its flits), per InterNode output
//!   `_vc1_packets` (packets on the dateline VC); per input `stat_<port>_dropped`,
//!   and per InterNode input `_ecc_corrected`, `_ecc_uncorrectable`, per IntraNode input
//!   `_length_errors`.
//!
//! Pipeline, three cycles per router: a flit is written into its input VC buffer in the cycle
//! it arrives (its route, taken from the header as received, stored beside it); in the next
//! cycle the allocator, reading registers only, schedules it; in the third it crosses the
//! switch into its output's buffer (a head flit with its header rewritten: `hops` + 1 when it
//! leaves on a link, fresh check bits). Back-to-back packets keep one flit per port per cycle:
//! the allocator schedules the flit behind the one crossing now.
//!
//! Arrival: a head flit's header is checked (SEC-DED, single errors corrected, double errors
//! counted and the packet dropped) and routed beside the check; a corrected header is routed
//! again when it reaches its VC's head (`fix.rs`).
//!
//! Switch paths: only for the turns dimension-ordered routes take ([`super::route::connects`]);
//! a header on a link asking for another turn is corrupted and dropped and counted.
//!
//! Allocation, separable and input-first (`allocator.rs`): each idle input picks one of
//! its VCs whose next flit starts a packet (round-robin between VCs) and asks for that packet's
//! output when it is free and, for a link, has room downstream for a whole packet (virtual
//! cut-through); each output grants one of the inputs asking for it (round-robin). A granted packet holds its output until its tail passes, so
//! flits of two packets never interleave on one output and one flow stays in order. Credits are
//! taken for the whole packet as its head crosses and come back one per flit as the next
//! router frees them.
//!
//! IntraNode inputs police the packet length: flits beyond `length` are discarded, a packet
//! that ends early is padded with zero flits, both counted as length errors; a packet longer
//! than `max_packet_bytes` or addressed outside the torus is dropped and counted.
//!
//! The router is built from an input unit per port (`input.rs`, with route computation
//! in `arrival.rs` and `fix.rs`), the allocator (`allocator.rs`) and the
//! switch and output units (`output.rs`), composed here.

use crate::Error;
use weft_hdl::netlist::{Design, Netlist};

use super::allocator::allocate;
use super::arrival::Here;
use super::config::RouterConfig;
use super::input::input;
use super::output::{output, output_state, switch};
use super::route::connects;
use super::side::Layout;

/// Bits to hold `0 ..= value`.
fn bits_for(value: usize) -> usize {
    (usize::BITS - value.leading_zeros()) as usize
}

/// Builds the router netlist for `config`.
pub fn router(config: &RouterConfig) -> Result<Netlist, Error> {
    config.validate()?;
    let d = Design::new();
    let c = config;
    let dirs = c.directions();
    let n_out = c.local_ports + dirs.len();
    let layout = Layout { keep: c.flit_bytes(), out: bits_for(n_out - 1).max(1), flits: bits_for(c.max_packet_flits()) };
    let here = Here::new(&d, c, ["local_x", "local_y", "local_z"].map(|p| d.input(p, 6)));
    let ports: Vec<(String, Option<_>)> = (0..c.local_ports).map(|p| (format!("p{p}"), None)).chain(dirs.iter().map(|d| (d.name(), Some(*d)))).collect();
    let inputs: Vec<_> = ports.iter().enumerate().map(|(p, (name, from))| d.unit(&format!("input_{name}"), &format!("input_{name}"), || input(&d, c, &layout, here, name, *from, p))).collect();

    d.section("outputs: state the allocator reads");
    let out_names: Vec<String> = ports.iter().map(|(n, _)| n.clone()).collect();
    let output_unit = |name: &str| (format!("output_{name}"), format!("output_{name}"));
    let (states, bufs): (Vec<_>, Vec<_>) = out_names
        .iter()
        .enumerate()
        .map(|(o, name)| {
            let (instance, module) = output_unit(name);
            let from = (0..inputs.len()).filter(|&i| connects(c, i, o)).collect();
            d.unit(&instance, &module, || output_state(&d, name, from, (o >= c.local_ports).then_some((c.vc_buffer_flits, c.max_packet_flits())), layout.flits))
        })
        .unzip();
    let scheds = d.unit("allocator", "allocator", || allocate(&d, c, &inputs, &states, layout.out));
    let crossings = d.unit("switch", "switch", || switch(&d, &inputs, &scheds));
    for (o, name) in out_names.iter().enumerate() {
        let (instance, module) = output_unit(name);
        d.unit(&instance, &module, || output(&d, name, &crossings, &states[o], &bufs[o]));
    }
    Ok(d.finish())
}
