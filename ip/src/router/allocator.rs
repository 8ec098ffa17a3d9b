//! Allocation, one cycle ahead of the switch: from registers only, each input decides which
//! flit (if any) it sends in the *next* cycle, and each output which input it takes then. The
//! decision is registered, and a scheduled flit always crosses: the output has a slot reserved
//! for it (see [`super::output`]) and, for a new packet on a link, credits for the whole packet
//! downstream (virtual cut-through).
//!
//! The flit an input sends next is the one at its VC's head in the next cycle: the entry behind
//! the head when the head crosses now, else the head (both registers: a word landing from the
//! buffer memory goes into a register first, see [`super::buffer`]; a flit arriving now is
//! scheduled in the next cycle). A connection (a granted packet of several flits) sends its
//! next flit when it is there and its output has a slot. An idle input picks one of its VCs
//! whose next flit starts a packet (round robin between VCs, moving on at every choice) and
//! asks for that packet's output when the output is free and has credits; each output grants
//! one of the inputs asking for it (round robin). A granted packet holds its output until its
//! tail is scheduled, so flits of two packets never interleave on one output and one flow stays
//! in order.
//!
//! Timing: the VC choice reads the input's registers only, so an output's state enters the
//! request one level before it leaves the input. The request is the one allocation signal
//! that crosses the router: each input decides from the requests and the arbiters' pointer
//! registers whether it won (the grant's bit computed beside the input), so no grant crosses
//! back. A VC whose output is busy takes turns with the other VC instead of letting it pass at
//! once (measured with `weft bench router`: saturation throughput unchanged).
//!
//! Credits: a grant's flits are taken from the output's credits when its head crosses (the
//! cycle after the grant). The allocator reads registered flags instead of comparing credits
//! with the packet's length: room downstream for one maximum packet, or for two in the cycle a
//! grant's credits are still being taken. A short packet so waits for the room of a maximum
//! one (the price of a shallow allocator).

use weft_hdl::netlist::{Design, Reg, Sig};

use super::arrival::rewrite;
use super::config::RouterConfig;
use super::input::Input;
use super::side::Side;

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

/// The registered state of an output the allocator reads (the output unit drives it).
pub(super) struct OutputState<'d> {
    /// A slot of the output's buffer is free for a flit crossing next cycle (a register of its
    /// own, beside the buffer's valid bits).
    pub slot: Reg<'d>,
    /// A packet of several flits holds the output (its tail not yet scheduled).
    pub owned: Reg<'d>,
    /// A new packet's head crosses into the output now (its credits are taken this cycle), and
    /// that packet's output VC and length in flits (registered from the grant, so the credit
    /// logic reads no switch).
    pub head: Reg<'d>,
    pub head_vc: Reg<'d>,
    pub head_flits: Reg<'d>,
    /// The inputs the switch connects to the output ([`super::route::connects`]), and one-hot
    /// over them: whose flit crosses into the output now.
    pub from: Vec<usize>,
    pub sel: Reg<'d>,
    /// Some input asked for the output (for the stall counter).
    pub asked: Reg<'d>,
    /// Link outputs, per VC: free flits downstream (credits), and whether they hold one
    /// maximum packet (`room`) or two (`room2`).
    pub credit: Option<[Reg<'d>; 2]>,
    pub room: Option<[Reg<'d>; 2]>,
    pub room2: Option<[Reg<'d>; 2]>,
    pub max_flits: usize,
}

/// What an input sends in a cycle (registers written by the allocator the cycle before).
pub(super) struct Schedule<'d> {
    /// Per VC: its head flit crosses now. The buffer's copy: it drives the buffer's registers,
    /// so the allocator reads its own copy, `stay` (below), whose fan-out stays small.
    pub pop: Vec<Reg<'d>>,
    pub vc: Reg<'d>,
    /// The flit is a packet's head going to an output: the `header` of its VC replaces its
    /// first word (one rewritten header per VC, so the VC choice drives no 128-bit mux).
    pub head: Reg<'d>,
    pub header: Vec<Reg<'d>>,
    pub ovc: Reg<'d>,
}

/// The flit at a VC's head in the next cycle, as far as registers tell.
struct Next<'d> {
    valid: Sig<'d>,
    side: Side<'d>,
    /// Its first word rewritten as it leaves, if it is a packet's head.
    header: Sig<'d>,
}

/// The allocation stage for every input; writes the schedules and the outputs' registers.
pub(super) fn allocate<'d>(d: &'d Design, c: &RouterConfig, inputs: &[Input<'d>], outs: &[OutputState<'d>], out_bits: usize) -> Vec<Schedule<'d>> {
    d.section("allocation: each input's next flit and VC choice");
    let n_out = outs.len();
    let lit_out = |o: usize| d.lit(o as u128, out_bits);
    let slot = vector(d, &outs.iter().map(|o| o.slot.q).collect::<Vec<_>>());
    // Per output VC (index `ovc · 2^out_bits + out`): a new packet may have it next cycle.
    let mut free = vec![d.lit(0, 1); 2 << out_bits];
    for (o, st) in outs.iter().enumerate() {
        for v in 0..2 {
            let credit = match &st.room {
                Some(room) => st.head.q.mux(st.room2.as_ref().unwrap()[v].q, room[v].q),
                None => d.lit(1, 1),
            };
            free[(v << out_bits) + o] = st.slot.q & !st.owned.q & credit;
        }
    }
    let free = vector(d, &free);
    let scheds: Vec<Schedule> = inputs
        .iter()
        .map(|inp| Schedule {
            pop: (0..inp.vcs).map(|v| d.reg(&format!("{}_vc{v}_pop", inp.name), 1, 0)).collect(),
            vc: d.reg(&format!("{}_send_vc", inp.name), 1, 0),
            head: d.reg(&format!("{}_send_head", inp.name), 1, 0),
            header: (0..inp.vcs).map(|v| d.reg(&format!("{}_vc{v}_send_header", inp.name), 128, 0)).collect(),
            ovc: d.reg(&format!("{}_send_ovc", inp.name), 1, 0),
        })
        .collect();
    // Per input: what it asks for, its connection's registers and what the outputs need of it.
    struct Ask<'d> {
        /// Some VC's next flit starts a packet (an idle input), and whether VC 1 was chosen.
        has: Sig<'d>,
        take1: Sig<'d>,
        side: Side<'d>,
        next: Vec<Next<'d>>,
        stay: Vec<Reg<'d>>,
        busy: Reg<'d>,
        starts: Vec<Reg<'d>>,
        /// One-hot: the VC chosen (none when no VC's next flit starts a packet).
        vcg: Vec<Sig<'d>>,
        cur_vc: Reg<'d>,
        cur_out: Reg<'d>,
        cur_ovc: Reg<'d>,
        cur_drop: Reg<'d>,
        /// The connection sends its next flit; per output, it goes there; and it is the tail.
        cont: Sig<'d>,
        here: Vec<Sig<'d>>,
        cont_last: Sig<'d>,
    }
    let asks: Vec<Ask> = inputs
        .iter()
        .zip(&scheds)
        .enumerate()
        .map(|(i, (inp, s))| {
            let busy = d.reg(&format!("{}_busy", inp.name), 1, 0);
            // The allocator's copy of the pops (a pop drives hundreds of buffer bits, which
            // would pull these paths across the chip), inverted so that synthesis does not
            // merge it back into the pop.
            let stay: Vec<Reg> = (0..inp.vcs).map(|v| d.reg(&format!("{}_vc{v}_stay", inp.name), 1, 1)).collect();
            // Rewritten headers (`hops` + 1 for a link output), per VC.
            let on_link = |out: Sig<'d>| if c.local_ports >> out.width > 0 { d.lit(0, 1) } else { out.ge(c.local_ports) };
            let next: Vec<Next> = inp
                .vc
                .iter()
                .zip(s.pop.iter().zip(&stay))
                .map(|(b, (pop, stay))| {
                    Next {
                        valid: stay.q.mux(b.nonempty, b.second_valid),
                        side: Side::select(stay.q, b.head, b.second),
                        // Both candidates rewritten from registers, the buffer's pop choosing
                        // last: it drives hundreds of loads, so its long wire ends at this mux.
                        header: pop.q.mux(rewrite(d, b.second_word, on_link(b.second.out)), rewrite(d, b.data[0], on_link(b.head.out))),
                    }
                })
                .collect();
            let starts: Vec<Reg> = (0..inp.vcs).map(|v| d.reg(&format!("{}_vc{v}_start", inp.name), 1, 1)).collect();
            // Per VC: its next flit starts a packet (whether the packet's output is free is
            // asked after the VC choice, so the choice reads the input's registers only).
            let cands: Vec<Sig> = next.iter().zip(&starts).map(|(n, start)| n.valid & !n.side.fix & start.q & !busy.q).collect();
            for (n, h) in next.iter().zip(&s.header) {
                h.next(n.header);
            }
            let (has, take1, side, vcg) = if inp.vcs == 2 {
                // The VC choice moves on whenever the input has a packet to start (not only when
                // it is granted): a VC whose output is busy so takes turns with the other.
                let (grant, _) = round_robin(d, &format!("{}_vc_arbiter", inp.name), &["vc0", "vc1"], cands[1].cat(cands[0]), cands[0] | cands[1]);
                let take1 = grant.bit(1);
                (cands[0] | cands[1], take1, Side::select(take1, next[1].side, next[0].side), vec![grant.bit(0), grant.bit(1)])
            } else {
                (cands[0], d.lit(0, 1), next[0].side, vec![cands[0]])
            };
            // The connection: its registers follow an idle input's choice (they matter once it
            // is busy); it sends its next flit when that is there and its output has a slot (a
            // dropped packet needs none).
            let cur_vc = d.reg(&format!("{}_cur_vc", inp.name), 1, 0);
            let cur_out = d.reg(&format!("{}_cur_out", inp.name), out_bits, 0);
            let cur_ovc = d.reg(&format!("{}_cur_ovc", inp.name), 1, 0);
            let cur_drop = d.reg(&format!("{}_cur_drop", inp.name), 1, 0);
            let by_cur = |f: &dyn Fn(usize) -> Sig<'d>| if inp.vcs == 2 { cur_vc.q.mux(f(1), f(0)) } else { f(0) };
            let cont = busy.q & by_cur(&|v| next[v].valid) & (pick(slot, cur_out.q) | cur_drop.q);
            let here = outs
                .iter()
                .enumerate()
                .map(|(o, st)| if st.from.contains(&i) { (cur_out.q.eq(lit_out(o)) & !cur_drop.q).named(&format!("{}_holds_{}", inp.name, inputs[o].name)) } else { d.lit(0, 1) })
                .collect();
            let cont_last = cont & by_cur(&|v| next[v].side.last);
            Ask { has, take1, side, next, stay, busy, starts, vcg, cur_vc, cur_out, cur_ovc, cur_drop, cont, here, cont_last }
        })
        .collect();

    d.section("allocation: outputs grant an input (each output's arbiter, and whether each input won)");
    // Input i asks for o: its chosen VC's next packet goes there and o is free for it (each
    // VC's test runs beside the VC choice, not after it). An output's requests, grants and
    // arbiter span the inputs the switch connects to it (bit j = input `from[j]`).
    let requests: Vec<Sig> = (0..n_out)
        .map(|o| {
            let free_o = |ovc: Sig<'d>| ovc.mux(free.bit((1 << out_bits) + o), free.bit(o));
            let asks_o = |(a, inp): (&Ask<'d>, &Input)| {
                let by_vc = a
                    .vcg
                    .iter()
                    .zip(&a.next)
                    .enumerate()
                    .map(|(v, (g, n))| (*g & n.side.out.eq(lit_out(o)) & !n.side.drop & free_o(n.side.ovc)).named(&format!("{}_vc{v}_asks_{}", inp.name, inputs[o].name)));
                by_vc.reduce(|x, y| x | y).unwrap()
            };
            vector(d, &outs[o].from.iter().map(|&i| asks_o((&asks[i], &inputs[i]))).collect::<Vec<_>>())
        })
        .collect();
    let out_names = names_of(inputs);
    let (grants, pointers): (Vec<Sig>, Vec<Sig>) = outs
        .iter()
        .enumerate()
        .map(|(o, st)| {
            let who: Vec<&str> = st.from.iter().map(|&i| out_names[i].as_str()).collect();
            round_robin(d, &format!("{}_arbiter", out_names[o]), &who, requests[o], d.lit(1, 1))
        })
        .unzip();
    // Per input, per output: the input wins there (the grant's bit computed beside the input,
    // from the arbiter's pointer register and the requests).
    let wins_at: Vec<Vec<Sig>> = inputs
        .iter()
        .enumerate()
        .map(|(i, inp)| {
            let at = |(o, st): (usize, &OutputState<'d>)| {
                st.from
                    .iter()
                    .position(|&f| f == i)
                    .map(|j| wins(d, &format!("{}_turn_at_{}", inp.name, out_names[o]), requests[o], pointers[o], j).named(&format!("{}_won_at_{}", out_names[o], inp.name)))
            };
            outs.iter().enumerate().filter_map(at).collect()
        })
        .collect();
    // Per output: a connection's tail is scheduled now (the output is released).
    let released: Vec<Sig> = outs.iter().enumerate().map(|(o, st)| st.from.iter().map(|&i| asks[i].cont_last & asks[i].here[o]).reduce(|x, y| x | y).unwrap()).collect();
    // A grant to a packet of several flits holds the output.
    let held = |st: &OutputState<'d>, grant: Sig<'d>| st.from.iter().enumerate().map(|(j, &i)| grant.bit(j) & !asks[i].side.last).reduce(|x, y| x | y).unwrap();

    d.section("allocation: the schedule for the next cycle");
    for (i, ((inp, s), a)) in inputs.iter().zip(&scheds).zip(&asks).enumerate() {
        let (busy, starts) = (a.busy, &a.starts);
        let by_vc = |vc: Sig<'d>, f: &dyn Fn(usize) -> Sig<'d>| if inp.vcs == 2 { vc.mux(f(1), f(0)) } else { f(0) };
        let is_vc = |vc: Sig<'d>, v: usize| {
            if inp.vcs == 1 {
                d.lit(1, 1)
            } else if v == 1 {
                vc
            } else {
                !vc
            }
        };
        let new = wins_at[i].iter().copied().reduce(|x, y| x | y).unwrap() | a.has & a.side.drop;
        let send = a.cont | new;
        let vc = busy.q.mux(a.cur_vc.q, a.take1);
        let last = by_vc(vc, &|v| a.next[v].side.last);
        busy.next(send.mux(!last, busy.q));
        a.cur_vc.next_when(!busy.q, a.take1);
        a.cur_out.next_when(!busy.q, a.side.out);
        a.cur_ovc.next_when(!busy.q, a.side.ovc);
        a.cur_drop.next_when(!busy.q, a.side.drop);
        for (v, start) in starts.iter().enumerate() {
            start.next_when(send & is_vc(vc, v), last);
            s.pop[v].next(send & is_vc(vc, v));
            a.stay[v].next(!(send & is_vc(vc, v)));
        }
        s.vc.next(vc);
        s.head.next(new & !a.side.drop);
        s.ovc.next(busy.q.mux(a.cur_ovc.q, a.side.ovc));
    }
    for (o, st) in outs.iter().enumerate() {
        // A busy input asks for nothing, so no grant goes to it (and a connection's flit
        // needs no look at `busy` here, which stays beside its input).
        let to: Vec<Sig> = st.from.iter().enumerate().map(|(j, &i)| asks[i].cont & asks[i].here[o] | grants[o].bit(j)).collect();
        st.sel.next(vector(d, &to));
        st.head.next(grants[o].any());
        let granted = |f: &dyn Fn(&Ask<'d>) -> Sig<'d>| st.from.iter().enumerate().fold(d.lit(0, f(&asks[0]).width), |acc, (j, &i)| acc | grants[o].bit(j).mux(f(&asks[i]), 0));
        st.head_vc.next(granted(&|a| a.side.ovc));
        st.head_flits.next(granted(&|a| a.side.flits));
        st.asked.next(requests[o].any());
        st.owned.next(st.owned.q & !released[o] | held(st, grants[o]));
    }
    scheds
}

/// Round-robin arbiter over `requests` (bit i = requester i): grants (one-hot) the first request
/// at or after the pointer, wrapping, and when `advance` is high moves the pointer just past the
/// grant (after reset: requester 0 first). The same order as [`Design::round_robin`], from a
/// binary pointer: each grant bit is one function of the requests and the pointer ([`wins`]).
/// `who` names the requesters. Returns the grant and the pointer.
fn round_robin<'d>(d: &'d Design, name: &str, who: &[&str], requests: Sig<'d>, advance: Sig<'d>) -> (Sig<'d>, Sig<'d>) {
    let n = requests.width;
    let pb = (usize::BITS - (n - 1).leading_zeros()).max(1) as usize;
    let pointer = d.reg(name, pb, 0);
    let bits: Vec<Sig> = (0..n).map(|i| wins(d, &format!("{name}_turn_{}", who[i]), requests, pointer.q, i)).collect();
    let grant = vector(d, &bits).named(&format!("{name}_grant"));
    let next: Sig = (0..n).map(|i| grant.bit(i).mux(d.lit(((i + 1) % n) as u128, pb), d.lit(0, pb))).fold(d.lit(0, pb), |acc, x| acc | x);
    pointer.next_when(advance & grant.any(), next);
    (grant, pointer.q)
}

/// Bit `i` of a round-robin arbiter's grant ([`round_robin`]) with `pointer`; `turn` names
/// whether it is requester `i`'s turn (no requester ahead of it asks).
fn wins<'d>(d: &'d Design, turn: &str, requests: Sig<'d>, pointer: Sig<'d>, i: usize) -> Sig<'d> {
    let n = requests.width;
    let r = |j: usize| requests.bit(j % n);
    // Requester i wins from pointer k when none of k, k+1, …, i−1 (mod n) asks.
    (0..n)
        .map(|k| {
            let before = (k..k + (i + n - k) % n).map(r).fold(d.lit(0, 1), |acc, x| acc | x);
            pointer.eq(d.lit(k as u128, pointer.width)) & !before
        })
        .fold(d.lit(0, 1), |acc, x| acc | x)
        .named(turn)
        & r(i)
}

fn names_of(inputs: &[Input]) -> Vec<String> {
    inputs.iter().map(|i| i.name.clone()).collect()
}
