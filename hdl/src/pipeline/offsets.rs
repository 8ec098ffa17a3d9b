//! Stream offsets: `x[k]` is the value of `x` `k` beats later (`k > 0`) or earlier (`k < 0`).
//!
//! **Edge behaviour.** `tlast` cuts the stream into vectors (a stream without `tlast` is one
//! long vector). On beat `i` of a vector, `x[k]` reads beat `i + k` *of the same vector*; a
//! beat before the vector's first or after its last reads as zero (all bits clear: `+0.0`,
//! fixed-point 0, false) — the zero padding a stencil programmer expects at a boundary. Offsets
//! compose through bindings (`let t = x[-1]` then `t[+2]` reads `x` at `+1`, and the boundary
//! test is made at each offset: `t[+2]` is zero past the end even if `x[+1]` is not).
//!
//! **Timing.** Let `K` be the kernel's look-ahead: the largest sum of future offsets on any
//! path to an output. Output beat `i` leaves when input beat `i + K` has arrived; after the
//! `tlast` beat the kernel *flushes*: for `K` cycles it takes no input (`s_axis_tready` low)
//! and runs zero beats through, which emit the vector's last `K` output beats, the last with
//! `tlast`. One beat per cycle otherwise (II=1), under back-pressure as
//! [`crate::netlist::block::feed_forward`]: one clock enable freezes the whole circuit. A
//! vector of `n` beats takes `n + K` cycles. A stream that never sends `tlast` keeps its last
//! `K` outputs until more input arrives. Kernels without future offsets (`K = 0`) never flush.
//!
//! **How.** A value of *lag* `L` carries, in the slot of input beat `j`, its value for beat
//! `j − L`. `x[+k]` raises the lag by `k` and needs no storage;
//! `x[-k]` keeps the lag and reads `k` history registers that shift once per beat (enable:
//! the pipeline advances and the stage holds a beat). A per-beat position in the vector
//! (saturating) and a flush flag, carried along the pipeline and through the same kind of
//! history, decide whether the beat read is in the vector. The outputs are brought to lag `K`;
//! an output leaves only for slots whose position is at least `K` (the first `K` slots of a
//! vector have no output beat yet). A recurrence ([`super::recurrence`]) is a history read of
//! a value built later, on a wire at the stage that value will have.

use crate::Error;
use std::collections::{BTreeMap, HashMap};

use super::beats::Beats;
use super::lower::Lowering;
use super::{Kernel, Node, Stages};
use crate::netlist::{Design, Netlist, Sig};
use crate::sig;

impl Kernel {
    /// Whether any value is read at a stream offset.
    pub fn has_offsets(&self) -> bool {
        self.nodes.iter().any(|n| matches!(n, Node::Offset(..) | Node::Prev(..)))
    }

    /// The look-ahead `K`: output beat `i` needs input beat `i + K`.
    pub fn lookahead(&self) -> usize {
        let lags = self.lags();
        self.outputs.iter().map(|(_, v)| lags[v.0]).max().unwrap_or(0)
    }
}

/// Bits of the saturating position counter, which must reach `max`.
fn pos_bits(max: usize) -> usize {
    (usize::BITS - max.leading_zeros()).max(1) as usize
}

/// The stream netlist of a kernel with offsets (see the module doc). With recurrences, a first
/// build finds the stage each loop closes at, and the second places the loops there.
pub(super) fn netlist(k: &Kernel, stages: &Stages, operators: &mut BTreeMap<&'static str, usize>) -> Result<Netlist, Error> {
    let loops = if k.nodes.iter().any(|n| matches!(n, Node::Prev(..))) { build(k, stages, &mut BTreeMap::new(), HashMap::new())?.1 } else { HashMap::new() };
    let (net, found) = build(k, stages, operators, loops.clone())?;
    debug_assert_eq!(found, loops);
    Ok(net)
}

fn build(k: &Kernel, stages: &Stages, operators: &mut BTreeMap<&'static str, usize>, loop_stages: HashMap<usize, usize>) -> Result<(Netlist, HashMap<usize, usize>), Error> {
    let lookahead = k.lookahead();
    let reach = k.nodes.iter().filter_map(|n| if let Node::Offset(_, o) | Node::Prev(_, o) = n { Some(o.unsigned_abs() as usize) } else { None }).max().unwrap_or(0);
    let max_pos = lookahead.max(reach).max(1);
    let w = k.format.width();
    let d = Design::new();
    sig!(advance = d.later(1));
    d.net().enable = Some(advance.wire);
    let valid_in = d.input("s_axis_tvalid", 1);
    let last_in = d.input("s_axis_tlast", 1);
    let in_width = (0..k.inputs.len()).map(|i| i * w + k.input_type(i).width()).max().unwrap_or(1);
    let data_in = d.input("s_axis_tdata", in_width);
    let lanes: Vec<Sig> = (0..k.inputs.len()).map(|i| data_in.bits(i * w, k.input_type(i).width())).collect();

    d.section("beats: flush after tlast, position in the vector");
    let (slot_valid, flush, vector_end, taking) = if lookahead > 0 {
        let left = d.reg("flush_left", pos_bits(lookahead), 0);
        sig!(flushing = left.q.ne(0));
        sig!(slot_valid = valid_in | flushing);
        let end = if lookahead == 1 { flushing } else { flushing & left.q.eq(1) };
        sig!(vector_end = end);
        left.next_when(advance & flushing, left.q - 1u32);
        left.next_when(advance & valid_in & last_in & !flushing, lookahead as u128);
        (slot_valid, flushing, vector_end, !flushing)
    } else {
        (valid_in, d.lit(0, 1), last_in, d.lit(1, 1))
    };
    let pos = d.reg("vector_pos", pos_bits(max_pos), 0);
    let step = pos.q.eq(max_pos as u128).mux(pos.q, pos.q + 1u32);
    pos.next_when(advance & slot_valid, vector_end.mux(0, step));
    let mut beats = Beats::new(&d, advance, slot_valid, pos.q, flush, loop_stages);
    for (lane, name) in lanes.iter().zip(&k.inputs) {
        beats.names.insert(lane.wire, name.clone());
    }

    let outputs = Lowering::new(k, &d, stages, operators, Some(&mut beats)).run(&lanes)?;
    let mut aligned = vec![];
    for (x, lag) in outputs {
        let name = d.net().nodes[x.wire.0].name.clone().unwrap_or_default();
        aligned.push((beats.delay(x, lookahead - lag, None), name));
    }
    d.section("output stream");
    let out_stage = aligned.iter().map(|(x, _)| d.net().stage_of(x.wire)).max().unwrap_or(0);
    d.net().set_stage(out_stage);
    let data_out = d.net().join(&aligned.iter().enumerate().map(|(j, (x, _))| (x.wire, j * w)).collect::<Vec<_>>());
    d.output("m_axis_tdata", d.sig(data_out));
    d.net().balance_outputs();
    let out_stage = d.net().latency();
    let valid = beats.valid_at(out_stage);
    d.net().set_stage(out_stage);
    let has_output = if lookahead > 0 { valid & !pos.q.lt(lookahead as u128) } else { valid };
    sig!(out_valid = has_output);
    sig!(out_last = out_valid & vector_end);
    let ready = d.input("m_axis_tready", 1);
    advance.define(!out_valid | ready);
    d.output("m_axis_tvalid", out_valid);
    d.output("m_axis_tlast", out_last);
    // At stage 0, as are the register rules (applied when the design finishes, at the current
    // stage): the flush and position counters belong to stage 0.
    d.net().set_stage(0);
    d.output("s_axis_tready", (advance & taking).named("s_ready"));
    let found = std::mem::take(&mut beats.found);
    Ok((d.finish(), found))
}
