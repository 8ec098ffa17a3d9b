//! The switch and the output units. A scheduled flit crosses the switch in the cycle after the
//! allocator chose it (its VC is popped, returning one credit upstream); a packet's head flit
//! crosses with its rewritten header. Each output has a buffer of three entries (the registered
//! port and two behind it), so a link that stalls never makes a scheduled flit wait: the
//! allocator schedules a flit only while the buffer holds at most one, a registered test. Link
//! outputs take a new packet's credits when its head crosses and get one back per flit the next
//! router frees; every output counts packets, flits, stalls and dateline packets.

use weft_hdl::netlist::{Design, Reg, Sig};

use super::allocator::{OutputState, Schedule};
use super::input::Input;

/// What an input sends through the switch this cycle.
pub(super) struct Crossing<'d> {
    pub last: Sig<'d>,
    pub keep: Sig<'d>,
    pub ovc: Sig<'d>,
    pub data: Vec<Sig<'d>>,
}

/// Input `i`'s flit through the switch as its schedule says; pops its VC.
pub(super) fn switch<'d>(d: &'d Design, inputs: &[Input<'d>], scheds: &[Schedule<'d>]) -> Vec<Crossing<'d>> {
    inputs
        .iter()
        .zip(scheds)
        .map(|(inp, s)| {
            d.section(&format!("switch: input {}", inp.name));
            let by_vc = |f: &dyn Fn(usize) -> Sig<'d>| if inp.vcs == 2 { s.vc.q.mux(f(1), f(0)) } else { f(0) };
            for (pop, taken) in inp.pop.iter().zip(&s.pop) {
                pop.define(taken.q);
            }
            if inp.vcs == 2 {
                let credit = d.reg(&format!("{}_credit_out", inp.name), 2, 0);
                credit.next(s.pop[1].q.cat(s.pop[0].q));
                d.output(&format!("s_axis_{}_credit", inp.name), credit.q);
            }
            // The flit at the scheduled VC's head; a head flit with its rewritten header.
            let mut data: Vec<Sig> = (0..inp.vc[0].data.len()).map(|k| by_vc(&|v| inp.vc[v].data[k])).collect();
            data[0] = s.head.q.mux(by_vc(&|v| s.header[v].q), data[0]);
            Crossing { last: by_vc(&|v| inp.vc[v].head.last), keep: by_vc(&|v| inp.vc[v].head.keep), ovc: s.ovc.q, data }
        })
        .collect()
}

/// The registers of output `name` the allocator reads; `from` the inputs the switch connects to
/// it; `link` for an output with credits (`vc_buffer_flits` each, `max_flits` the largest
/// packet); `flit_bits` holds a packet's flits.
pub(super) fn output_state<'d>(d: &'d Design, name: &str, from: Vec<usize>, link: Option<(usize, usize)>, flit_bits: usize) -> (OutputState<'d>, Buffer<'d>) {
    let valid = |entry: &str| d.reg(&format!("{name}_{entry}_valid"), 1, 0);
    let buf = Buffer { a_valid: valid("out"), b_valid: valid("skid"), c_valid: valid("skid2"), ready: d.input(&format!("m_axis_{name}_tready"), 1) };
    let sel = d.reg(&format!("{name}_sel"), from.len(), 0);
    // The buffer holds at most one flit now (the second entry is empty), so at most two next
    // cycle (one may cross now), and a flit scheduled now finds a slot whatever `tready` does:
    // a register decides, a copy of `!skid_valid` for the allocator alone.
    let slot = d.reg(&format!("{name}_slot"), 1, 1);
    let credits = link.map(|(depth, max_flits)| {
        let cb = (usize::BITS - depth.leading_zeros()) as usize;
        let credit = [0, 1].map(|v| d.reg(&format!("{name}_credit{v}"), cb, depth as u128));
        let room = [0, 1].map(|v| d.reg(&format!("{name}_room{v}"), 1, 1));
        let room2 = [0, 1].map(|v| d.reg(&format!("{name}_room2_{v}"), 1, (depth >= 2 * max_flits) as u128));
        (credit, room, room2, max_flits)
    });
    let state = OutputState {
        slot,
        owned: d.reg(&format!("{name}_owned"), 1, 0),
        head: d.reg(&format!("{name}_head_in"), 1, 0),
        head_vc: d.reg(&format!("{name}_head_vc"), 1, 0),
        head_flits: d.reg(&format!("{name}_head_flits"), flit_bits, 0),
        from,
        sel,
        asked: d.reg(&format!("{name}_asked"), 1, 0),
        credit: credits.map(|c| c.0),
        room: credits.map(|c| c.1),
        room2: credits.map(|c| c.2),
        max_flits: credits.map_or(0, |c| c.3),
    };
    (state, buf)
}

/// The valid bits of an output's three entries (a is the port, b and c behind it) and its
/// `tready`.
pub(super) struct Buffer<'d> {
    pub a_valid: Reg<'d>,
    pub b_valid: Reg<'d>,
    pub c_valid: Reg<'d>,
    pub ready: Sig<'d>,
}

/// Output `name`: the flit its schedule selects enters its three-entry buffer; credits and
/// counters.
pub(super) fn output<'d>(d: &'d Design, name: &str, x: &[Crossing<'d>], st: &OutputState<'d>, buf: &Buffer<'d>) {
    d.section(&format!("output {name}"));
    let x: Vec<&Crossing<'d>> = st.from.iter().map(|&i| &x[i]).collect();
    let sel: Vec<Sig> = (0..x.len()).map(|j| st.sel.q.bit(j)).collect();
    let push = st.sel.q.any().named(&format!("{name}_push"));
    // AND-OR selection of the sending input's value.
    let and_or = |values: &[Sig<'d>]| sel.iter().zip(values).fold(d.lit(0, values[0].width), |acc, (s, v)| acc | s.mux(*v, 0));
    let (a_valid, b_valid, c_valid) = (buf.a_valid, buf.b_valid, buf.c_valid);
    let (a, b, c) = (a_valid.q, b_valid.q, c_valid.q);
    // A first-in first-out of three entries: the port's register (a) moves on when it is empty
    // or taken, the others move up behind it, and the crossing flit joins at the end.
    let a_free = !a | buf.ready;
    let taken = a & buf.ready;
    // Entries after this cycle's take, as a thermometer, then the push behind them (a flit
    // is scheduled only into a buffer holding at most one, so c is empty when one crosses).
    let kept = [taken.mux(b, a), taken.mux(c, b), !taken & c];
    let b_next = kept[1] | kept[0] & push;
    a_valid.next(kept[0] | push);
    b_valid.next(b_next);
    c_valid.next(kept[2] | kept[1] & push);
    st.slot.next(!b_next);
    let m = format!("m_axis_{name}");
    let store = |field: &str, value: Sig<'d>| -> Sig<'d> {
        let rc = d.reg(&format!("{name}_skid2_{field}"), value.width, 0);
        rc.next_when(push, value);
        let rb = d.reg(&format!("{name}_skid_{field}"), value.width, 0);
        rb.next_when(a_free | !b, (a_free & c).mux(rc.q, value));
        let ra = d.reg(&format!("{name}_out_{field}"), value.width, 0);
        ra.next_when(a_free, b.mux(rb.q, value));
        ra.q
    };
    let mut data: Vec<Sig> = (0..x[0].data.len()).map(|k| store(&format!("data{k}"), and_or(&x.iter().map(|xi| xi.data[k]).collect::<Vec<_>>()))).collect();
    data.reverse();
    d.output(&format!("{m}_tdata"), d.cat(&data));
    d.output(&format!("{m}_tkeep"), store("keep", and_or(&x.iter().map(|xi| xi.keep).collect::<Vec<_>>())));
    let last = and_or(&x.iter().map(|xi| xi.last).collect::<Vec<_>>());
    d.output(&format!("{m}_tlast"), store("last", last));
    let tail = push & last;
    d.output(&format!("{m}_tvalid"), a_valid.q);
    if let (Some(cr), Some(room), Some(room2)) = (&st.credit, &st.room, &st.room2) {
        let ovc = and_or(&x.iter().map(|xi| xi.ovc).collect::<Vec<_>>());
        d.output(&format!("{m}_tuser"), store("vc", ovc));
        // Packets on the dateline VC: shows the deadlock-avoidance mechanism at work.
        d.counter(&format!("stat_{name}_vc1_packets"), tail & ovc);
        // Credits: the whole packet as its head crosses, one back per flit freed downstream.
        let back = d.input(&format!("{m}_credit"), 2);
        for v in 0..2 {
            let take = st.head.q & if v == 1 { st.head_vc.q } else { !st.head_vc.q };
            // The room flags compare the credits before the take with the take, against
            // thresholds moved to the other side (no compare waits for the subtraction).
            let cb = cr[v].q.width;
            let base = cr[v].q.zext(cb + 1) + back.bit(v).zext(cb + 1);
            let taken = take.mux(st.head_flits.q.resize(cb + 1), 0);
            cr[v].next((base - taken).resize(cb));
            let short = |m: usize| if m < 1 << cb { (base.zext(cb + 2) - m as u128).slt(taken.zext(cb + 2)) } else { d.lit(1, 1) };
            room[v].next(!short(st.max_flits));
            room2[v].next(!short(2 * st.max_flits));
        }
    }
    d.counter(&format!("stat_{name}_packets"), tail);
    d.counter(&format!("stat_{name}_flits"), push);
    d.counter(&format!("stat_{name}_stalls"), (st.owned.q | st.asked.q) & !push);
}
