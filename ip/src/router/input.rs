//! The input unit: flits arrive into per-VC buffers (two VCs on a link input, one on an
//! IntraNode input), a head flit stored with its rewritten header and its route; IntraNode
//! inputs police the packet length (extra flits discarded, a short packet padded). The unit
//! exposes each VC's head for the allocator.

use weft_hdl::netlist::{Design, Mem, Reg, Sig};
use weft_hdl::{sig, state_enum};

use super::arrival::route;
use super::config::{Direction, RouterConfig};
use super::side::{Layout, Side};

/// One input port after its write side is built.
pub(super) struct Input<'d> {
    pub name: String,
    pub vcs: usize,
    /// Per VC: buffer not empty, head side word, read pointer.
    pub nonempty: Vec<Sig<'d>>,
    pub head: Vec<Side<'d>>,
    pub rd: Vec<Reg<'d>>,
    pub data: Vec<Mem<'d>>,
}

state_enum! {
    /// IntraNode length policing: expecting a header, taking the body, padding a short packet,
    /// discarding what a long one sends beyond its length.
    enum Police { Head, Body, Pad, Discard }
}

/// The input unit for port `name` (`from` = the direction its flits travel, None for IntraNode
/// port `port`).
pub(super) fn input<'d>(d: &'d Design, c: &RouterConfig, l: &Layout, here: [Sig<'d>; 3], name: &str, from: Option<Direction>, port: usize) -> Input<'d> {
    d.section(&format!("input {name}: arrival into the VC buffers"));
    let vcs = if from.is_some() { 2 } else { 1 };
    let kb = c.flit_bytes();
    let depth = c.vc_buffer_flits;
    let pb = depth.trailing_zeros() as usize;
    let s = format!("s_axis_{name}");
    let data: Vec<Sig> = (0..c.width / 128).map(|k| d.input(&format!("{s}_tdata@{}", 128 * k), 128)).collect();
    let last_in = d.input(&format!("{s}_tlast"), 1);
    let valid = d.input(&format!("{s}_tvalid"), 1);
    let all_keep = d.lit(u128::MAX, kb);
    let (keep_in, vc_in) = match from {
        Some(_) => (d.input(&format!("{s}_tkeep"), kb), d.input(&format!("{s}_tuser"), 1)),
        None => (all_keep, d.lit(0, 1)),
    };
    let wr: Vec<Reg> = (0..vcs).map(|v| d.reg(&format!("{name}_wr{v}"), pb + 1, 0)).collect();
    let rd: Vec<Reg> = (0..vcs).map(|v| d.reg(&format!("{name}_rd{v}"), pb + 1, 0)).collect();
    let routed = route(d, c, here, data[0], from, port, vc_in, l.out, l.flits);
    let (write, wvc, w_last, w_keep, head, w_data) = match from {
        Some(_) => {
            let expect_head = d.reg(&format!("{name}_expect_head"), 1, 1);
            expect_head.next_when(valid, last_in);
            let head = valid & expect_head.q;
            d.counter(&format!("stat_{name}_ecc_corrected"), head & routed.corrected);
            d.counter(&format!("stat_{name}_ecc_uncorrectable"), head & routed.uncorrectable);
            d.counter(&format!("stat_{name}_dropped"), head & routed.drop);
            (valid, vc_in, last_in, keep_in, expect_head.q, data.clone())
        }
        None => {
            d.section(&format!("input {name}: length policing"));
            let mode = d.state::<Police>(&format!("{name}_mode"));
            let remaining = d.reg(&format!("{name}_remaining"), l.flits, 0);
            let last_keep = d.reg(&format!("{name}_last_keep"), kb, 0);
            let (in_head, in_pad, in_discard) = (mode.is(Police::Head), mode.is(Police::Pad), mode.is(Police::Discard));
            sig!(space = (wr[0].q - rd[0].q).lt(depth));
            let takes = (in_head | mode.is(Police::Body)) & space;
            d.output(&format!("{s}_tready"), takes | in_discard);
            sig!(accept = takes & valid);
            let write = accept | in_pad & space;
            let head = accept & in_head;
            // Last flit written: the length says so (a dropped packet keeps its header only).
            let w_last = in_head.mux(routed.flits.eq(1u32) | routed.drop, remaining.q.eq(1u32));
            remaining.next_when(write, in_head.mux(routed.flits - 1u32, remaining.q - 1u32));
            last_keep.next_when(head, routed.last_keep);
            sig!(ends = write & w_last); // the packet's last flit is written now
            let extra = !last_in & accept & ends; // the source has more: discard it
            let early = !ends & accept & last_in; // the source ended early: pad
            let discard_end = in_discard & valid & last_in;
            mode.go_when(head, Police::Body).go_when(ends, Police::Head).go_when(early, Police::Pad).go_when(extra, Police::Discard).go_when(discard_end, Police::Head);
            let dropped = head & routed.drop;
            d.counter(&format!("stat_{name}_length_errors"), (extra | early) & !dropped);
            d.counter(&format!("stat_{name}_dropped"), dropped);
            let w_data = data.iter().map(|x| in_pad.mux(0, *x)).collect();
            let keep = in_head.mux(all_keep, w_last.mux(last_keep.q, all_keep));
            (write, d.lit(0, 1), w_last, keep, head, w_data)
        }
    };
    // Buffer write: the head flit carries the rewritten header and the route.
    let mut stored: Vec<Sig> = w_data;
    stored[0] = head.mux(routed.header, stored[0]);
    let side_word = Side { last: w_last, keep: w_keep, out: routed.out, ovc: routed.ovc, drop: routed.drop, flits: routed.flits }.pack(d);
    let wr_q = if vcs == 2 { wvc.mux(wr[1].q, wr[0].q) } else { wr[0].q };
    let wr_low = wr_q.bits(0, pb);
    let addr = if vcs == 2 { wvc.cat(wr_low) } else { wr_low };
    let data_mems: Vec<Mem> = stored.iter().enumerate().map(|(k, _)| d.memory(&format!("{name}_data{k}"), 128, vcs * depth)).collect();
    for (mem, word) in data_mems.iter().zip(&stored) {
        mem.write(write, addr, *word);
    }
    let side_mem = d.memory(&format!("{name}_side"), l.width(), vcs * depth);
    side_mem.write(write, addr, side_word);
    for (v, w) in wr.iter().enumerate() {
        let is_v = if vcs == 1 { d.lit(1, 1) } else if v == 1 { wvc } else { !wvc };
        w.next_when(write & is_v, w.q + 1u32);
    }
    // Heads.
    let mut nonempty = vec![];
    let mut heads = vec![];
    for v in 0..vcs {
        nonempty.push(wr[v].q.ne(rd[v].q));
        let rd_low = rd[v].q.bits(0, pb);
        let a = if vcs == 2 { d.lit(v as u128, 1).cat(rd_low) } else { rd_low };
        heads.push(Side::unpack(side_mem.read(a), *l));
    }
    Input { name: name.to_string(), vcs, nonempty, head: heads, rd, data: data_mems }
}
