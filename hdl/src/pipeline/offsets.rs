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
//! `j − L` (see [`super::lower`]). `x[+k]` raises the lag by `k` and needs no storage;
//! `x[-k]` keeps the lag and reads `k` history registers that shift once per beat (enable:
//! the pipeline advances and the stage holds a beat). A per-beat position in the vector
//! (saturating) and a flush flag, carried along the pipeline and through the same kind of
//! history, decide whether the beat read is in the vector. The outputs are brought to lag `K`;
//! an output leaves only for slots whose position is at least `K` (the first `K` slots of a
//! vector have no output beat yet). A recurrence ([`super::recurrence`]) is a history read of
//! a value built later, on a wire at the stage that value will have.

use std::collections::{BTreeMap, HashMap};

use super::lower::Lowering;
use super::{Kernel, Node, Stages};
use crate::netlist::{Design, Netlist, Sig, Wire};
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

/// Beat bookkeeping of a kernel with offsets, shared by the lowering of its nodes.
pub(super) struct Beats<'d> {
    d: &'d Design,
    advance: Sig<'d>,
    /// The slot holds a beat (input or flush), per stage.
    valid: Vec<Sig<'d>>,
    enables: HashMap<usize, Sig<'d>>,
    /// The slot's position in its vector (saturating), at stage 0.
    pos: Sig<'d>,
    /// The slot is a flush beat, at stage 0.
    flush: Sig<'d>,
    history: HashMap<(Wire, usize), Sig<'d>>,
    /// Bookkeeping values brought to a stage.
    staged: HashMap<(Wire, usize), Sig<'d>>,
    /// Names for the Verilog: input lanes by their kernel names.
    names: HashMap<Wire, String>,
    /// The stage of each recurrence's target (by placeholder node), from a first build.
    loop_stages: HashMap<usize, usize>,
    /// Open recurrences: placeholder node, its forward wire, its target node.
    pending: Vec<(usize, Sig<'d>, usize)>,
    /// The stages recurrence targets landed at.
    found: HashMap<usize, usize>,
}

impl<'d> Beats<'d> {
    fn valid_at(&mut self, stage: usize) -> Sig<'d> {
        while self.valid.len() <= stage {
            let s = self.valid.len() - 1;
            self.d.net().set_stage(s);
            let q = self.d.net().reg(self.valid[s].wire, Some(self.advance.wire), Some(0));
            self.valid.push(self.d.sig(q).named(&format!("beat_valid_s{}", s + 1)));
        }
        self.valid[stage]
    }

    /// History registers at `stage` shift when the pipeline advances and the stage holds a beat.
    fn enable_at(&mut self, stage: usize) -> Sig<'d> {
        if let Some(e) = self.enables.get(&stage) {
            return *e;
        }
        let valid = self.valid_at(stage);
        self.d.net().set_stage(stage);
        let e = (self.advance & valid).named(&format!("beat_shift_s{stage}"));
        self.enables.insert(stage, e);
        e
    }

    /// `x` `beats` beats earlier, at its own stage (`reset` for bookkeeping bits).
    pub fn delay(&mut self, x: Sig<'d>, beats: usize, reset: Option<u128>) -> Sig<'d> {
        if beats == 0 || x.const_value().is_some() {
            return x;
        }
        if let Some(h) = self.history.get(&(x.wire, beats)) {
            return *h;
        }
        let earlier = self.delay(x, beats - 1, reset);
        let stage = self.d.net().stage_of(x.wire);
        let enable = self.enable_at(stage);
        self.d.net().set_stage(stage);
        let h = self.d.net().history(earlier.wire, Some(enable.wire), reset);
        let h = self.d.sig(h).named(&format!("{}_prev{beats}", self.base(x)));
        self.history.insert((x.wire, beats), h);
        h
    }

    /// Recurrence `node`: `target` (of `width` bits and lag `lag`, lowered later) `k` beats
    /// earlier — history registers on a wire at the target's stage, defined when it is built.
    pub fn recurrence(&mut self, node: usize, target: usize, width: usize, lag: usize, k: i64, name: &str) -> Result<(Sig<'d>, usize), String> {
        let stage = self.loop_stages.get(&node).copied().unwrap_or(0);
        self.d.net().set_stage(stage);
        let value = self.d.later(width);
        self.names.insert(value.wire, name.to_string());
        self.pending.push((node, value, target));
        self.offset(value, lag, -k)
    }

    /// Node `index` is built as `x`: defines the recurrences reading it, which must find it at
    /// the stage they were placed at (the loop has no pipeline registers).
    pub fn close(&mut self, index: usize, x: Sig<'d>) -> Result<(), String> {
        let stage = self.d.net().stage_of(x.wire);
        for (node, value, target) in std::mem::take(&mut self.pending) {
            if target != index {
                self.pending.push((node, value, target));
                continue;
            }
            self.found.insert(node, stage);
            let placed = self.d.net().stage_of(value.wire);
            if self.loop_stages.contains_key(&node) && placed != stage {
                return Err(format!("the recurrence on `{}` does not close in one cycle (stage {placed} to {stage})", self.base(value)));
            }
            value.define(x);
        }
        Ok(())
    }

    /// Names `x` (a binding) for the histories and offsets of it.
    pub fn name(&mut self, x: Sig<'d>, name: &str) {
        self.names.entry(x.wire).or_insert_with(|| name.to_string());
    }

    fn base(&self, x: Sig<'d>) -> String {
        self.names.get(&x.wire).cloned().or_else(|| self.d.net().nodes[x.wire.0].name.clone()).unwrap_or_else(|| format!("v{}", x.wire.0))
    }

    /// A stage-0 bookkeeping value for the beat `lag` beats before the slot at `stage`.
    fn meta(&mut self, x: Sig<'d>, stage: usize, lag: usize) -> Sig<'d> {
        let here = match self.staged.get(&(x.wire, stage)) {
            _ if stage == 0 => x,
            Some(h) => *h,
            None => {
                // A node of its own at `stage`, so its history shifts with that stage's beats.
                self.d.net().set_stage(stage);
                let h = x.zext(x.width + 1);
                self.staged.insert((x.wire, stage), h);
                h
            }
        };
        self.delay(here, lag, Some(0))
    }

    /// `x[k]` for `x` of lag `lag`: its signal and lag.
    pub fn offset(&mut self, x: Sig<'d>, lag: usize, k: i64) -> Result<(Sig<'d>, usize), String> {
        let stage = self.d.net().stage_of(x.wire);
        let pos = self.meta(self.pos, stage, lag);
        let reach = k.unsigned_abs() as u128;
        let (read, inside, lag) = if k > 0 {
            // The beat read is the newer one: in this vector when it is k or more beats in, and
            // an input beat, not a flush beat.
            let flush = self.meta(self.flush, stage, lag);
            self.d.net().set_stage(stage);
            (x, !pos.lt(reach) & !flush, lag + k as usize)
        } else {
            let earlier = self.delay(x, k.unsigned_abs() as usize, None);
            self.d.net().set_stage(stage);
            (earlier, !pos.lt(reach), lag)
        };
        self.d.net().set_stage(stage);
        let name = format!("{}_{}{}", self.base(x), if k > 0 { "p" } else { "m" }, k.unsigned_abs());
        Ok((inside.mux(read, 0).named(&name), lag))
    }
}

/// Bits of the saturating position counter, which must reach `max`.
fn pos_bits(max: usize) -> usize {
    (usize::BITS - max.leading_zeros()).max(1) as usize
}

/// The stream netlist of a kernel with offsets (see the module doc). With recurrences, a first
/// build finds the stage each loop closes at, and the second places the loops there.
pub(super) fn netlist(k: &Kernel, stages: &Stages, operators: &mut BTreeMap<&'static str, usize>) -> Result<Netlist, String> {
    let loops = if k.nodes.iter().any(|n| matches!(n, Node::Prev(..))) {
        build(k, stages, &mut BTreeMap::new(), HashMap::new())?.1
    } else {
        HashMap::new()
    };
    let (net, found) = build(k, stages, operators, loops.clone())?;
    debug_assert_eq!(found, loops);
    Ok(net)
}

fn build(k: &Kernel, stages: &Stages, operators: &mut BTreeMap<&'static str, usize>, loop_stages: HashMap<usize, usize>) -> Result<(Netlist, HashMap<usize, usize>), String> {
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
    let mut beats = Beats { d: &d, advance, valid: vec![slot_valid], enables: HashMap::new(), pos: pos.q, flush, history: HashMap::new(), staged: HashMap::new(), names: HashMap::new(), loop_stages, pending: vec![], found: HashMap::new() };
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
