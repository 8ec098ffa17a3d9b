//! Branching streams in netlist designs: one stream to one of two by a select ([`Design::steer`]),
//! two exclusive streams into one ([`Design::choose`]), and one stream to several at once
//! ([`Design::fork`]).

use super::signal::{Design, Sig};
use super::stream::{Axis, Source};

impl Design {
    /// Two streams from one: every beat to the first while `sel` is high, else to the second.
    pub fn steer<'d>(&'d self, src: &Source<'d>, sel: Sig<'d>) -> [Source<'d>; 2] {
        let (r1, r0) = (self.later(1), self.later(1));
        src.ready(sel.mux(r1, r0));
        [Source(Axis { valid: src.0.valid & sel, ready: Some(r1), ..src.0.clone() }), Source(Axis { valid: src.0.valid & !sel, ready: Some(r0), ..src.0.clone() })]
    }

    /// One stream from two of which at most one is ever valid: `x` while `sel` is high, else `y`.
    pub fn choose<'d>(&'d self, sel: Sig<'d>, x: &Source<'d>, y: &Source<'d>) -> Source<'d> {
        let r = self.later(1);
        x.ready(r);
        y.ready(r);
        let pick = |a: Option<Sig<'d>>, b: Option<Sig<'d>>| Some(sel.mux(a.unwrap(), b.unwrap()));
        Source(Axis {
            name: format!("{}_or_{}", x.0.name, y.0.name),
            data: sel.mux(x.0.data, y.0.data),
            keep: pick(x.0.keep, y.0.keep),
            last: pick(x.0.last, y.0.last),
            user: pick(x.0.user, y.0.user),
            valid: sel.mux(x.0.valid, y.0.valid),
            ready: Some(r),
            ..x.0.clone()
        })
    }

    /// Every beat of `src` to each target whose enable is high; a target that took the beat waits
    /// (its `tvalid` low) until the others have, so no `tvalid` depends on another's `tready`.
    pub fn fork<'d>(&'d self, name: &str, src: &Source<'d>, enables: &[Sig<'d>]) -> Vec<Source<'d>> {
        let readies: Vec<Sig> = enables.iter().map(|_| self.later(1)).collect();
        let done: Vec<_> = (0..enables.len()).map(|i| self.reg(&format!("{name}_took{i}"), 1, 0)).collect();
        let pending: Vec<Sig> = enables.iter().zip(&done).map(|(e, t)| *e & !t.q).collect();
        let all = pending.iter().zip(&readies).fold(self.lit(1, 1), |acc, (p, r)| acc & (!*p | *r)).named(&format!("{name}_all_took"));
        src.ready(all);
        let complete = src.0.valid & all;
        for ((t, p), r) in done.iter().zip(&pending).zip(&readies) {
            t.next(!complete & (t.q | src.0.valid & *p & *r));
        }
        pending.iter().zip(readies).enumerate().map(|(i, (p, r))| Source(Axis { name: format!("{name}{i}"), valid: src.0.valid & *p, ready: Some(r), ..src.0.clone() })).collect()
    }
}
