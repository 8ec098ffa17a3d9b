//! The switch and the output units. A granted input holds its connection until its tail has
//! crossed; the active VC's head flit is read and popped when its output can take it (returning
//! one credit per flit upstream). Each output registers the flit it is sent, stays held from the
//! grant until the tail passes, takes credits for the whole packet at the grant and gets one
//! back per flit the next router frees, and counts packets, flits, stalls and dateline packets.

use weft_hdl::netlist::{Design, Reg, Sig};

use super::allocator::{pick, Choice};
use super::input::Input;

/// What an input sends through the switch this cycle.
pub(super) struct Crossing<'d> {
    pub send: Sig<'d>,
    pub active: Sig<'d>,
    pub out: Sig<'d>,
    pub drop: Sig<'d>,
    pub last: Sig<'d>,
    pub keep: Sig<'d>,
    pub ovc: Sig<'d>,
    pub data: Vec<Sig<'d>>,
    /// Per output: this input's flit enters it now.
    pub to: Vec<Sig<'d>>,
}

/// Connections and pops: input `i`'s flit through the switch, given the outputs' grants.
pub(super) fn switch<'d>(d: &'d Design, inputs: &[Input<'d>], choices: &[Choice<'d>], grants: &[(Sig<'d>, Sig<'d>)], accept: Sig<'d>) -> Vec<Crossing<'d>> {
    inputs
        .iter()
        .zip(choices)
        .enumerate()
        .map(|(i, (inp, ch))| {
            d.section(&format!("switch: input {}", inp.name));
            let out_granted = grants.iter().map(|(g, _)| g.bit(i)).reduce(|a, b| a | b).unwrap();
            let granted = out_granted | ch.has & ch.side.drop;
            ch.granted.define(granted);
            let busy = ch.busy.q;
            let active = busy | granted;
            let vc = busy.mux(ch.cur_vc.q, ch.vc);
            let out = busy.mux(ch.cur_out.q, ch.side.out);
            let ovc = busy.mux(ch.cur_ovc.q, ch.side.ovc);
            let drop = busy.mux(ch.cur_drop.q, ch.side.drop);
            let by_vc = |vc: Sig<'d>, f: &dyn Fn(usize) -> Sig<'d>| if inp.vcs == 2 { vc.mux(f(1), f(0)) } else { f(0) };
            // A connection's next flit goes when it is there and its output can take it (all
            // registers); a new grant's head always goes (the allocator checked the output).
            let cont = by_vc(ch.cur_vc.q, &|v| inp.nonempty[v]) & (pick(accept, ch.cur_out.q) | ch.cur_drop.q);
            let send = busy.mux(cont, granted);
            let last = by_vc(vc, &|v| inp.head[v].last);
            let keep = by_vc(vc, &|v| inp.head[v].keep);
            // The flit at the active VC's head.
            let data = (0..inp.data[0].len()).map(|k| by_vc(vc, &|v| inp.data[v][k])).collect();
            let is_vc = |vc: Sig<'d>, v: usize| if inp.vcs == 1 { d.lit(1, 1) } else if v == 1 { vc } else { !vc };
            let pops: Vec<Sig> = (0..inp.vcs).map(|v| busy.mux(cont & is_vc(ch.cur_vc.q, v), granted & is_vc(ch.vc, v))).collect();
            for (pop, taken) in inp.pop.iter().zip(&pops) {
                pop.define(*taken);
            }
            // Per output: this input's flit goes there now.
            let out_bits = ch.cur_out.q.width;
            let to = grants.iter().enumerate().map(|(o, (g, _))| busy.mux(ch.cur_out.q.eq(d.lit(o as u128, out_bits)) & !ch.cur_drop.q & cont, g.bit(i))).collect();
            if inp.vcs == 2 {
                let credit = d.reg(&format!("{}_credit_out", inp.name), 2, 0);
                credit.next(pops[1].cat(pops[0]));
                d.output(&format!("s_axis_{}_credit", inp.name), credit.q);
            }
            // Connection state.
            ch.busy.next(active & !(send & last));
            ch.cur_vc.next(vc);
            ch.cur_out.next(out);
            ch.cur_ovc.next(ovc);
            ch.cur_drop.next(drop);
            Crossing { send, active, out, drop, last, keep, ovc, data, to }
        })
        .collect()
}

/// Output `o` (`name`): its register, hold state, link credits `credits` (None for an
/// IntraNode output) and counters.
#[allow(clippy::too_many_arguments)]
pub(super) fn output<'d>(d: &'d Design, o: usize, name: &str, x: &[Crossing<'d>], choices: &[Choice<'d>], grant: (Sig<'d>, Sig<'d>), state: &OutputState<'d>, credits: Option<&[Reg<'d>; 2]>) {
    d.section(&format!("output {name}"));
    let sel: Vec<Sig> = x.iter().map(|xi| xi.to[o]).collect();
    let push = sel.iter().copied().reduce(|a, b| a | b).unwrap().named(&format!("{name}_push"));
    // AND-OR selection of the sending input's value.
    let and_or = |values: &[Sig<'d>]| sel.iter().zip(values).fold(d.lit(0, values[0].width), |acc, (s, v)| acc | s.mux(*v, 0));
    let m = format!("m_axis_{name}");
    let store = |field: &str, port: &str, value: Sig<'d>| {
        let r = d.reg(&format!("{name}_out_{field}"), value.width, 0);
        r.next_when(push, value);
        d.output(&format!("{m}_{port}"), r.q);
    };
    for k in 0..x[0].data.len() {
        let column: Vec<Sig> = x.iter().map(|xi| xi.data[k]).collect();
        store(&format!("data{k}"), &format!("tdata@{}", 128 * k), and_or(&column));
    }
    store("keep", "tkeep", and_or(&x.iter().map(|xi| xi.keep).collect::<Vec<_>>()));
    let last = and_or(&x.iter().map(|xi| xi.last).collect::<Vec<_>>());
    store("last", "tlast", last);
    let tail = push & last;
    if credits.is_some() {
        let ovc = and_or(&x.iter().map(|xi| xi.ovc).collect::<Vec<_>>());
        store("vc", "tuser", ovc);
        // Packets on the dateline VC: shows the deadlock-avoidance mechanism at work.
        d.counter(&format!("stat_{name}_vc1_packets"), tail & ovc);
    }
    let valid = state.valid[o];
    valid.next(push | valid.q & !state.ready[o]);
    d.output(&format!("{m}_tvalid"), valid.q);
    // Held from the grant until the tail passes.
    let (g, requested) = grant;
    let granted = g.any();
    let held = state.held[o];
    held.next((held.q | granted) & !tail);
    if let Some(cr) = credits {
        // Credits: the whole packet at the grant, one back per flit freed downstream.
        let back = d.input(&format!("{m}_credit"), 2);
        let cb = cr[0].q.width;
        let flits = choices.iter().enumerate().fold(d.lit(0, cb), |acc, (i, ch)| acc | g.bit(i).mux(ch.side.flits.resize(cb), 0));
        let ovc = choices.iter().enumerate().fold(d.lit(0, 1), |acc, (i, ch)| acc | g.bit(i) & ch.side.ovc);
        for (v, credit) in cr.iter().enumerate() {
            let take = granted & if v == 1 { ovc } else { !ovc };
            credit.next(credit.q - take.mux(flits, 0) + back.bit(v).zext(cb));
        }
    }
    d.counter(&format!("stat_{name}_packets"), tail);
    d.counter(&format!("stat_{name}_flits"), push);
    d.counter(&format!("stat_{name}_stalls"), (held.q | requested) & !push);
}

/// The registers the allocator reads and the outputs write.
pub(super) struct OutputState<'d> {
    pub valid: Vec<Reg<'d>>,
    pub ready: Vec<Sig<'d>>,
    pub held: Vec<Reg<'d>>,
}
