//! Beat bookkeeping of a kernel with stream offsets (see [`super::offsets`]): per-stage beat
//! valid flags and enables, the position in the vector and the flush flag, history registers,
//! and the recurrences left open while the nodes are lowered.

use crate::Error;
use std::collections::HashMap;

use crate::netlist::{Design, Sig, Wire};

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
    pub names: HashMap<Wire, String>,
    /// The stage of each recurrence's target (by placeholder node), from a first build.
    loop_stages: HashMap<usize, usize>,
    /// Open recurrences: placeholder node, its forward wire, its target node.
    pending: Vec<(usize, Sig<'d>, usize)>,
    /// The stages recurrence targets landed at.
    pub found: HashMap<usize, usize>,
}

impl<'d> Beats<'d> {
    pub fn new(d: &'d Design, advance: Sig<'d>, valid: Sig<'d>, pos: Sig<'d>, flush: Sig<'d>, loop_stages: HashMap<usize, usize>) -> Beats<'d> {
        Beats {
            d,
            advance,
            valid: vec![valid],
            enables: HashMap::new(),
            pos,
            flush,
            history: HashMap::new(),
            staged: HashMap::new(),
            names: HashMap::new(),
            loop_stages,
            pending: vec![],
            found: HashMap::new(),
        }
    }

    pub fn valid_at(&mut self, stage: usize) -> Sig<'d> {
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
    pub fn recurrence(&mut self, node: usize, target: usize, width: usize, lag: usize, k: i64, name: &str) -> Result<(Sig<'d>, usize), Error> {
        let stage = self.loop_stages.get(&node).copied().unwrap_or(0);
        self.d.net().set_stage(stage);
        let value = self.d.later(width);
        self.names.insert(value.wire, name.to_string());
        self.pending.push((node, value, target));
        self.offset(value, lag, -k)
    }

    /// Node `index` is built as `x`: defines the recurrences reading it, which must find it at
    /// the stage they were placed at (the loop has no pipeline registers).
    pub fn close(&mut self, index: usize, x: Sig<'d>) -> Result<(), Error> {
        let stage = self.d.net().stage_of(x.wire);
        for (node, value, target) in std::mem::take(&mut self.pending) {
            if target != index {
                self.pending.push((node, value, target));
                continue;
            }
            self.found.insert(node, stage);
            let placed = self.d.net().stage_of(value.wire);
            if self.loop_stages.contains_key(&node) && placed != stage {
                return Err(Error::Design(format!("the recurrence on `{}` does not close in one cycle (stage {placed} to {stage})", self.base(value))));
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
    pub fn offset(&mut self, x: Sig<'d>, lag: usize, k: i64) -> Result<(Sig<'d>, usize), Error> {
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
