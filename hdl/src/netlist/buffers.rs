//! Stream buffers: the register slice (a skid buffer that cuts every combinational path between
//! its two sides) and the first-word-fall-through FIFO. The clock-crossing FIFO is in
//! [`super::crossing`].

use super::signal::{Design, Sig};
use super::stream::{Axis, Source};

/// Every field a stream carries besides `valid` and `ready`, in one order.
fn fields<'d>(a: &Axis<'d>) -> Vec<Sig<'d>> {
    [a.data].into_iter().chain(a.keep).chain(a.last).chain(a.user).collect()
}

/// A stream of `input`'s shape whose fields are `values` (in the order of [`fields`]).
fn with_fields<'d>(input: &Axis<'d>, name: &str, values: &[Sig<'d>], valid: Sig<'d>, ready: Sig<'d>) -> Source<'d> {
    let mut v = values.iter().copied();
    let data = v.next().unwrap();
    let keep = input.keep.map(|_| v.next().unwrap());
    let last = input.last.map(|_| v.next().unwrap());
    let user = input.user.map(|_| v.next().unwrap());
    Source(Axis { name: name.to_string(), shape: input.shape, data, keep, last, user, valid, ready: Some(ready) })
}

impl Design {
    /// `input` through a register slice: one beat per cycle in both directions, the output's
    /// fields and `valid` and the input's `ready` all straight from registers, one cycle of
    /// latency. A beat accepted while the output is held waits in a second (skid) register, so
    /// `ready` can be registered without a bubble. Registers are named `<name>_*`.
    pub fn register_slice<'d>(&'d self, name: &str, input: &Source<'d>) -> Source<'d> {
        let a = &input.0;
        let main_valid = self.reg(&format!("{name}_valid"), 1, 0);
        let skid_valid = self.reg(&format!("{name}_skid_valid"), 1, 0);
        let ready_out = self.later(1);
        let accept = a.valid & !skid_valid.q;
        input.ready(!skid_valid.q);
        // The main register may load this cycle: it is empty or its beat leaves now.
        let drain = !main_valid.q | ready_out;
        let mut main = vec![];
        for (k, f) in fields(a).iter().enumerate() {
            let m = self.reg(&format!("{name}_main{k}"), f.width, 0);
            let s = self.reg(&format!("{name}_skid{k}"), f.width, 0);
            m.next_when(drain & (skid_valid.q | accept), skid_valid.q.mux(s.q, *f));
            s.next_when(accept & !drain, *f);
            main.push(m.q);
        }
        main_valid.next(drain.mux(skid_valid.q | accept, self.lit(1, 1)));
        skid_valid.next(skid_valid.q.mux(!drain, accept & !drain));
        with_fields(a, name, &main, main_valid.q, ready_out)
    }

    /// `input` through a first-word-fall-through FIFO ([`Design::queue`]: a block-RAM mappable
    /// memory of `depth` words and two registers, so it holds `depth + 2` beats; a beat pushed
    /// into an empty FIFO is at the output the next cycle). Returns the output stream and the
    /// number of beats held. Registers are named `<name>_*`.
    pub fn stream_fifo<'d>(&'d self, name: &str, depth: usize, input: &Source<'d>) -> (Source<'d>, Sig<'d>) {
        let a = &input.0;
        let ready_out = self.later(1);
        let pop = self.later(1);
        let space = self.later(1);
        let push = a.valid & space;
        let q = self.queue(name, depth, push, &fields(a), pop);
        space.define(q.space);
        pop.define(q.valid & ready_out);
        input.ready(q.space);
        let bits = (usize::BITS - (depth + 2).leading_zeros()) as usize;
        let fill = self.reg(&format!("{name}_fill"), bits, 0);
        fill.next(fill.q + push.zext(bits) - pop.zext(bits));
        (with_fields(a, name, &q.head, q.valid, ready_out), fill.q)
    }
}
