//! Allocation, separable and input-first: each idle input picks one of its VCs whose head has a
//! free output and, for a link, credits for the *whole* packet downstream (round robin between
//! its VCs); then each output grants one of the inputs asking for it (round robin).

use weft_hdl::netlist::{Design, Reg, Sig};

use super::config::RouterConfig;
use super::input::Input;
use super::side::Side;

/// An input's choice this cycle, and its connection state.
pub(super) struct Choice<'d> {
    /// A VC of this input asks for an output.
    pub has: Sig<'d>,
    /// The VC chosen.
    pub vc: Sig<'d>,
    pub side: Side<'d>,
    /// A packet of this input is crossing the switch (granted, tail not yet sent).
    pub busy: Reg<'d>,
    pub cur_vc: Reg<'d>,
    pub cur_out: Reg<'d>,
    pub cur_ovc: Reg<'d>,
    pub cur_drop: Reg<'d>,
    /// The VC arbiter advances when this input's choice is granted (defined by the switch).
    pub granted: Sig<'d>,
}

/// Bit `index` of `vector`.
pub(super) fn pick<'d>(vector: Sig<'d>, index: Sig<'d>) -> Sig<'d> {
    vector.shr(index).bit(0)
}

/// `{bits[n−1], …, bits[0]}`.
pub(super) fn vector<'d>(d: &'d Design, bits: &[Sig<'d>]) -> Sig<'d> {
    let mut v: Vec<Sig> = bits.to_vec();
    v.reverse();
    d.cat(&v)
}

/// Each input's VC choice. `free` and the credits describe the outputs.
pub(super) fn choose<'d>(d: &'d Design, c: &RouterConfig, inputs: &[Input<'d>], free: Sig<'d>, credits: &[[Reg<'d>; 2]], out_bits: usize) -> Vec<Choice<'d>> {
    d.section("allocation: inputs choose a VC");
    let cb = credits.first().map_or(1, |cr| cr[0].q.width);
    inputs
        .iter()
        .map(|inp| {
            let busy = d.reg(&format!("{}_busy", inp.name), 1, 0);
            let reqs: Vec<Sig> = (0..inp.vcs)
                .map(|v| {
                    let h = inp.head[v];
                    // Credits for the whole packet at the chosen output's VC (IntraNode outputs need none).
                    let mut ok = vec![d.lit(1, 1); c.local_ports];
                    // Both VCs compared in parallel, the head's VC picks (the compare starts at registers).
                    ok.extend(credits.iter().map(|cr| h.ovc.mux(cr[1].q.ge(h.flits.resize(cb)), cr[0].q.ge(h.flits.resize(cb)))));
                    let go = pick(free, h.out) & pick(vector(d, &ok), h.out) | h.drop;
                    go & inp.nonempty[v] & !busy.q
                })
                .collect();
            let granted = d.later(1);
            let (has, vc, side) = if inp.vcs == 2 {
                let grant = d.round_robin(&format!("{}_vc_arbiter", inp.name), reqs[1].cat(reqs[0]), granted);
                let take1 = grant.bit(1);
                (reqs[0] | reqs[1], take1, Side::select(take1, inp.head[1], inp.head[0]))
            } else {
                (reqs[0], d.lit(0, 1), inp.head[0])
            };
            Choice {
                has,
                vc,
                side,
                busy,
                cur_vc: d.reg(&format!("{}_cur_vc", inp.name), 1, 0),
                cur_out: d.reg(&format!("{}_cur_out", inp.name), out_bits, 0),
                cur_ovc: d.reg(&format!("{}_cur_ovc", inp.name), 1, 0),
                cur_drop: d.reg(&format!("{}_cur_drop", inp.name), 1, 0),
                granted,
            }
        })
        .collect()
}

/// Each output's one-hot grant over the inputs, and whether any input asks for it.
pub(super) fn grant<'d>(d: &'d Design, choices: &[Choice<'d>], out_names: &[String], out_bits: usize) -> Vec<(Sig<'d>, Sig<'d>)> {
    d.section("allocation: outputs grant an input");
    out_names
        .iter()
        .enumerate()
        .map(|(o, name)| {
            let bits: Vec<Sig> = choices.iter().map(|ch| ch.side.out.eq(d.lit(o as u128, out_bits)) & !ch.side.drop & ch.has).collect();
            let requests = vector(d, &bits);
            let grant = d.round_robin(&format!("{name}_arbiter"), requests, d.lit(1, 1));
            (grant, requests.any())
        })
        .collect()
}
