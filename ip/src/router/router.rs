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
//! Pipeline: a flit is written into its input VC buffer in the cycle it arrives; in the next
//! cycle the buffer head (route precomputed on arrival) is allocated and the flit crosses the
//! switch into the output register: two cycles per router, input to output.
//!
//! Arrival: a head flit's header is checked (SEC-DED, single errors corrected, double errors
//! counted and the packet dropped), routed, and rewritten (`hops` + 1 when it leaves on a link,
//! `ecc` recomputed) before it is stored, with the route beside it.
//!
//! Allocation, separable and input-first: each idle input picks one of its VCs whose head has
//! a free output and, for a link, credits for the *whole* packet downstream (virtual
//! cut-through; round-robin between VCs); each output grants one of the inputs asking for it
//! (round-robin). A granted packet holds its output until its tail passes, so flits of two
//! packets never interleave on one output and one flow stays in order. Credits are taken for
//! the whole packet at the grant and come back one per flit as the next router frees them.
//!
//! IntraNode inputs police the packet length: flits beyond `length` are discarded, a packet
//! that ends early is padded with zero flits, both counted as length errors; a packet longer
//! than `max_packet_bytes` or addressed outside the torus is dropped and counted.
//!
//! The router is built from an input unit per port ([`super::input`], with route computation
//! in [`super::arrival`]), the allocator ([`super::allocator`]) and the switch and output units
//! ([`super::output`]), composed here.


use weft_hdl::netlist::{Design, Netlist};

use super::allocator::{choose, grant, vector};
use super::config::RouterConfig;
use super::input::input;
use super::output::{output, switch, OutputState};
use super::side::Layout;

/// Bits to hold `0 ..= value`.
fn bits_for(value: usize) -> usize {
    (usize::BITS - value.leading_zeros()) as usize
}

/// Builds the router netlist for `config`.
pub fn router(config: &RouterConfig) -> Result<Netlist, String> {
    config.validate()?;
    let d = Design::new();
    let c = config;
    let dirs = c.directions();
    let n_out = c.local_ports + dirs.len();
    let layout = Layout { keep: c.flit_bytes(), out: bits_for(n_out - 1).max(1), flits: bits_for(c.max_packet_flits()) };
    let here = ["local_x", "local_y", "local_z"].map(|p| d.input(p, 6));
    let ports: Vec<(String, Option<_>)> = (0..c.local_ports).map(|p| (format!("p{p}"), None)).chain(dirs.iter().map(|d| (d.name(), Some(*d)))).collect();
    let inputs: Vec<_> = ports.iter().enumerate().map(|(p, (name, from))| input(&d, c, &layout, here, name, *from, p)).collect();

    d.section("outputs: state the allocator reads");
    let out_names: Vec<String> = ports.iter().map(|(n, _)| n.clone()).collect();
    let state = OutputState {
        valid: out_names.iter().map(|o| d.reg(&format!("{o}_out_valid"), 1, 0)).collect(),
        ready: out_names.iter().map(|o| d.input(&format!("m_axis_{o}_tready"), 1)).collect(),
        held: out_names.iter().map(|o| d.reg(&format!("{o}_held"), 1, 0)).collect(),
    };
    // Credits of each virtual channel of each link output: free flits in the next router.
    let cb = bits_for(c.vc_buffer_flits);
    let credits: Vec<_> = dirs.iter().map(|dir| [0, 1].map(|v| d.reg(&format!("{}_credit{v}", dir.name()), cb, c.vc_buffer_flits as u128))).collect();
    let accept = vector(&d, &(0..n_out).map(|o| !(state.valid[o].q & !state.ready[o])).collect::<Vec<_>>());
    // An output takes a new packet when no packet holds it and its register can take the head
    // flit now: a granted packet's head always crosses in the cycle of its grant.
    let free = vector(&d, &(0..n_out).map(|o| !state.held[o].q & !(state.valid[o].q & !state.ready[o])).collect::<Vec<_>>());

    let choices = choose(&d, c, &inputs, free, &credits, layout.out);
    let grants = grant(&d, &choices, &out_names, layout.out);
    let crossings = switch(&d, &inputs, &choices, &grants, accept);
    for (o, name) in out_names.iter().enumerate() {
        let link = o.checked_sub(c.local_ports).map(|k| &credits[k]);
        output(&d, o, name, &crossings, &choices, grants[o], &state, link);
    }
    Ok(d.finish())
}
