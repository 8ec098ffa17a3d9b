//! The input unit: flits arrive into per-VC buffers (two VCs on a link input, one on an
//! IntraNode input), a head flit stored with its rewritten header and its route; IntraNode
//! inputs police the packet length (extra flits discarded, a short packet padded). The unit
//! exposes each VC's head for the allocator.

use weft_hdl::netlist::{Design, Sig};
use weft_hdl::{sig, state_enum};

use super::arrival::{arrive, Here};
use super::buffer::vc_buffer;
use super::config::{Direction, RouterConfig};
use super::fix::fix_head;
use super::side::{Layout, Side};

/// One input port after its write side is built.
pub(super) struct Input<'d> {
    pub name: String,
    pub vcs: usize,
    /// Per VC: its buffer's registers, and the pop the switch defines.
    pub vc: Vec<VcBuffer<'d>>,
    pub pop: Vec<Sig<'d>>,
}

/// What a VC buffer shows the allocator and the switch: its head and the entry behind it (both
/// registers), each with its side word and first data word.
pub(super) struct VcBuffer<'d> {
    pub nonempty: Sig<'d>,
    pub head: Side<'d>,
    /// The head flit (128-bit words).
    pub data: Vec<Sig<'d>>,
    pub second_valid: Sig<'d>,
    pub second: Side<'d>,
    pub second_word: Sig<'d>,
}

state_enum! {
    /// IntraNode length policing: expecting a header, taking the body, padding a short packet,
    /// discarding what a long one sends beyond its length.
    enum Police { Head, Body, Pad, Discard }
}

/// The input unit for port `name` (`from` = the direction its flits travel, None for IntraNode
/// port `port`).
pub(super) fn input<'d>(d: &'d Design, c: &RouterConfig, l: &Layout, here: Here<'d>, name: &str, from: Option<Direction>, port: usize) -> Input<'d> {
    d.section(&format!("input {name}: arrival into the VC buffers"));
    let vcs = if from.is_some() { 2 } else { 1 };
    let kb = c.flit_bytes();
    let depth = c.vc_buffer_flits;
    let s = format!("s_axis_{name}");
    let tdata = d.input(&format!("{s}_tdata"), c.width);
    let data: Vec<Sig> = (0..c.width / 128).map(|k| tdata.bits(128 * k, 128)).collect();
    let last_in = d.input(&format!("{s}_tlast"), 1);
    let valid = d.input(&format!("{s}_tvalid"), 1);
    let all_keep = d.lit(u128::MAX, kb);
    let (keep_in, vc_in) = match from {
        Some(_) => (d.input(&format!("{s}_tkeep"), kb), d.input(&format!("{s}_tuser"), 1)),
        None => (all_keep, d.lit(0, 1)),
    };
    let pop: Vec<Sig> = (0..vcs).map(|_| d.later(1)).collect();
    let space = d.later(1);
    let arrived = arrive(d, c, here, data[0], from, port, vc_in, l.out, l.flits);
    let routed = arrived.route;
    let fix_drops: Vec<Sig> = (0..vcs).filter(|_| from.is_some()).map(|_| d.later(1)).collect();
    // The counters count registered events (a count lands a cycle late): the events come from
    // the arrival's header check and route, which leave no time for a 32-bit adder behind them.
    let event = |counter: &str, e: Sig<'d>| {
        let r = d.reg(&format!("{counter}_event"), 1, 0);
        r.next(e);
        r.q
    };
    let count = |counter: String, e: Sig<'d>| d.counter(&counter, event(&counter, e));
    let (write, wvc, w_last, w_keep, head, w_data) = match from {
        Some(_) => {
            let expect_head = d.reg(&format!("{name}_expect_head"), 1, 1);
            expect_head.next_when(valid, last_in);
            let head = valid & expect_head.q;
            count(format!("stat_{name}_ecc_corrected"), head & arrived.corrected);
            count(format!("stat_{name}_ecc_uncorrectable"), head & arrived.uncorrectable);
            // Dropped: on arrival, or (a corrected header) when routed again.
            let dropped = d.reg(&format!("stat_{name}_dropped"), 32, 0);
            let events = [("arrival", head & routed.drop & !arrived.fix), ("vc0", fix_drops[0]), ("vc1", fix_drops[1])].map(|(at, e)| event(&format!("stat_{name}_dropped_{at}"), e));
            dropped.next(events.iter().fold(dropped.q, |acc, e| acc + e.zext(32)));
            d.output(&format!("stat_{name}_dropped"), dropped.q);
            (valid, vc_in, last_in, keep_in, expect_head.q, data.clone())
        }
        None => {
            d.section(&format!("input {name}: length policing"));
            let mode = d.state::<Police>(&format!("{name}_mode"));
            let remaining = d.reg(&format!("{name}_remaining"), l.flits, 0);
            let last_keep = d.reg(&format!("{name}_last_keep"), kb, 0);
            let (in_head, in_pad, in_discard) = (mode.is(Police::Head), mode.is(Police::Pad), mode.is(Police::Discard));
            let takes = (in_head | mode.is(Police::Body)) & space;
            d.output(&format!("{s}_tready"), takes | in_discard);
            sig!(accept = takes & valid);
            let write = accept | in_pad & space;
            let head = accept & in_head;
            // Last flit written: the length says so. A packet too long keeps its header only;
            // another dropped packet (addressed outside the torus) is taken whole and dropped
            // by the allocator, as on a link input, so the address checks stay off this path.
            let w_last = in_head.mux(routed.single | routed.long, remaining.q.eq(1u32));
            remaining.next_when(write, in_head.mux(routed.flits - 1u32, remaining.q - 1u32));
            last_keep.next_when(head, routed.last_keep);
            sig!(ends = write & w_last); // the packet's last flit is written now
            let extra = !last_in & accept & ends; // the source has more: discard it
            let early = !ends & accept & last_in; // the source ended early: pad
            let discard_end = in_discard & valid & last_in;
            mode.go_when(head, Police::Body).go_when(ends, Police::Head).go_when(early, Police::Pad).go_when(extra, Police::Discard).go_when(discard_end, Police::Head);
            let dropped = head & routed.drop;
            // A dropped packet counts no length error (its drop decided at its header).
            let in_dropped = d.reg(&format!("{name}_in_dropped"), 1, 0);
            in_dropped.next_when(head, routed.drop);
            let counted = !in_head.mux(routed.drop, in_dropped.q);
            count(format!("stat_{name}_length_errors"), (extra | early) & counted);
            count(format!("stat_{name}_dropped"), dropped);
            let w_data = data.iter().map(|x| in_pad.mux(0, *x)).collect();
            let keep = in_head.mux(all_keep, w_last.mux(last_keep.q, all_keep));
            (write, d.lit(0, 1), w_last, keep, head, w_data)
        }
    };
    // Buffer write: the head flit carries its checked header and the route. Each VC is a
    // buffer whose head sits in registers (the allocator and the switch read no memory) and
    // whose memory is read through a registered port (block-RAM mappable; [`vc_buffer`]).
    let mut stored: Vec<Sig> = w_data;
    stored[0] = head.mux(arrived.header, stored[0]);
    let side_word = Side { last: w_last, keep: w_keep, out: routed.out, ovc: routed.ovc, drop: routed.drop, flits: routed.flits, fix: head & arrived.fix }.pack(d);
    let mut fields = vec![side_word];
    fields.extend(stored);
    let mut bufs = vec![];
    for (v, pop_v) in pop.iter().enumerate() {
        let is_v = if vcs == 1 {
            d.lit(1, 1)
        } else if v == 1 {
            wvc
        } else {
            !wvc
        };
        // InterNode: a corrected header is routed again at the head ([`fix_head`]).
        let rewrite = from.map(|_| (d.later(1), d.later(fields[0].width)));
        let q = vc_buffer(d, &format!("{name}_vc{v}"), depth, write & is_v, &fields, *pop_v, rewrite);
        if v == 0 && from.is_none() {
            // Read by IntraNode length policing, registered: room for this cycle's flit and,
            // when one is written, for the next.
            let room = d.reg(&format!("{name}_space"), 1, 1);
            room.next((write & is_v).mux(q.space2, q.space));
            space.define(room.q);
        } else if v == 0 {
            space.define(q.space); // unused on InterNode inputs (the sender holds credits)
        }
        let head = Side::unpack(q.head[0], *l);
        if let (Some(from), Some((load, value))) = (from, rewrite) {
            let (fix_load, fix_value, drop) = fix_head(d, c, l, here, name, from, v, q.valid, head, q.head[1], *pop_v);
            load.define(fix_load);
            value.define(fix_value);
            fix_drops[v].define(drop);
        }
        bufs.push(VcBuffer { nonempty: q.valid, head, data: q.head[1..].to_vec(), second_valid: q.second_valid, second: Side::unpack(q.second[0], *l), second_word: q.second[1] });
    }
    Input { name: name.to_string(), vcs, vc: bufs, pop }
}
