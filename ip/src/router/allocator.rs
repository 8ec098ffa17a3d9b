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
//! whose next flit starts a packet with a free output and credits (round robin between VCs);
//! each output grants one of the inputs asking for it (round robin). A granted packet holds its
//! output until its tail is scheduled, so flits of two packets never interleave on one output
//! and one flow stays in order.
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
    /// A slot of the output's buffer is free for a flit crossing next cycle (a register).
    pub slot: Sig<'d>,
    /// A packet of several flits holds the output (its tail not yet scheduled).
    pub owned: Reg<'d>,
    /// A new packet's head crosses into the output now (its credits are taken this cycle).
    pub head: Reg<'d>,
    /// One-hot over the inputs: whose flit crosses into the output now.
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
    /// Per VC: its head flit crosses now.
    pub pop: Vec<Reg<'d>>,
    pub vc: Reg<'d>,
    /// The flit is a packet's head going to an output: `header` replaces its first word.
    pub head: Reg<'d>,
    pub header: Reg<'d>,
    pub ovc: Reg<'d>,
    pub flits: Reg<'d>,
}

/// The flit at a VC's head in the next cycle, as far as registers tell.
struct Next<'d> {
    valid: Sig<'d>,
    side: Side<'d>,
    word: Sig<'d>,
}

/// The allocation stage for every input; writes the schedules and the outputs' registers.
pub(super) fn allocate<'d>(d: &'d Design, c: &RouterConfig, inputs: &[Input<'d>], outs: &[OutputState<'d>], out_bits: usize) -> Vec<Schedule<'d>> {
    d.section("allocation: each input's next flit and VC choice");
    let n_out = outs.len();
    let lit_out = |o: usize| d.lit(o as u128, out_bits);
    let slot = vector(d, &outs.iter().map(|o| o.slot).collect::<Vec<_>>());
    // Per output VC (index `ovc · 2^out_bits + out`): a new packet may have it next cycle.
    let mut free = vec![d.lit(0, 1); 2 << out_bits];
    for (o, st) in outs.iter().enumerate() {
        for v in 0..2 {
            let credit = match &st.room {
                Some(room) => st.head.q.mux(st.room2.as_ref().unwrap()[v].q, room[v].q),
                None => d.lit(1, 1),
            };
            free[(v << out_bits) + o] = st.slot & !st.owned.q & credit;
        }
    }
    let free = vector(d, &free);
    let scheds: Vec<Schedule> = inputs
        .iter()
        .map(|inp| Schedule {
            pop: (0..inp.vcs).map(|v| d.reg(&format!("{}_vc{v}_pop", inp.name), 1, 0)).collect(),
            vc: d.reg(&format!("{}_send_vc", inp.name), 1, 0),
            head: d.reg(&format!("{}_send_head", inp.name), 1, 0),
            header: d.reg(&format!("{}_send_header", inp.name), 128, 0),
            ovc: d.reg(&format!("{}_send_ovc", inp.name), 1, 0),
            flits: d.reg(&format!("{}_send_flits", inp.name), inp.vc[0].head.flits.width, 0),
        })
        .collect();
    // Per input: (asks, chosen VC, chosen side, rewritten headers, next flits, connection regs).
    struct Ask<'d> {
        has: Sig<'d>,
        take1: Sig<'d>,
        side: Side<'d>,
        header: Sig<'d>,
        next: Vec<Next<'d>>,
        busy: Reg<'d>,
        starts: Vec<Reg<'d>>,
        /// One-hot: the VC chosen (none when the input asks for nothing).
        vcg: Vec<Sig<'d>>,
    }
    let asks: Vec<Ask> = inputs
        .iter()
        .zip(&scheds)
        .map(|(inp, s)| {
            let busy = d.reg(&format!("{}_busy", inp.name), 1, 0);
            let next: Vec<Next> = inp
                .vc
                .iter()
                .zip(&s.pop)
                .map(|(b, pop)| {
                    Next {
                        valid: pop.q.mux(b.second_valid, b.nonempty),
                        side: Side::select(pop.q, b.second, b.head),
                        word: pop.q.mux(b.second_word, b.data[0]),
                    }
                })
                .collect();
            let starts: Vec<Reg> = (0..inp.vcs).map(|v| d.reg(&format!("{}_vc{v}_start", inp.name), 1, 1)).collect();
            let reqs: Vec<Sig> = next
                .iter()
                .zip(&starts)
                .map(|(n, start)| {
                    let h = n.side;
                    let go = pick(free, h.ovc.cat(h.out)) | h.drop;
                    go & n.valid & !h.fix & start.q & !busy.q
                })
                .collect();
            // Rewritten headers, per VC in parallel: `hops` + 1 for a link output.
            let on_link = |out: Sig<'d>| if c.local_ports >> out.width > 0 { d.lit(0, 1) } else { out.ge(c.local_ports) };
            let headers: Vec<Sig> = next.iter().map(|n| rewrite(d, n.word, on_link(n.side.out))).collect();
            let (has, take1, side, header, vcg) = if inp.vcs == 2 {
                // The VC choice moves on whenever the input asks (not only when it is granted):
                // the arbiter's state then waits for no output's grant.
                let grant = round_robin(d, &format!("{}_vc_arbiter", inp.name), reqs[1].cat(reqs[0]), reqs[0] | reqs[1]);
                let take1 = grant.bit(1);
                (reqs[0] | reqs[1], take1, Side::select(take1, next[1].side, next[0].side), take1.mux(headers[1], headers[0]), vec![grant.bit(0), grant.bit(1)])
            } else {
                (reqs[0], d.lit(0, 1), next[0].side, headers[0], vec![reqs[0]])
            };
            Ask { has, take1, side, header, next, busy, starts, vcg }
        })
        .collect();

    d.section("allocation: outputs grant an input");
    let grants: Vec<Sig> = outs
        .iter()
        .enumerate()
        .map(|(o, st)| {
            // Input i asks for o: its chosen VC's next packet goes there (each VC's test runs
            // beside the VC choice, not after it).
            let asks_o = |a: &Ask<'d>| a.vcg.iter().zip(&a.next).map(|(g, n)| *g & n.side.out.eq(lit_out(o)) & !n.side.drop).reduce(|x, y| x | y).unwrap();
            let requests = vector(d, &asks.iter().map(asks_o).collect::<Vec<_>>());
            st.asked.next(requests.any());
            round_robin(d, &format!("{}_arbiter", names_of(inputs)[o]), requests, d.lit(1, 1))
        })
        .collect();

    d.section("allocation: the schedule for the next cycle");
    let mut to: Vec<Vec<Sig>> = vec![vec![]; n_out];
    let mut releases: Vec<Vec<Sig>> = vec![vec![]; n_out];
    let mut holds: Vec<Vec<Sig>> = vec![vec![]; n_out];
    for (i, ((inp, s), a)) in inputs.iter().zip(&scheds).zip(&asks).enumerate() {
        let (busy, starts) = (a.busy, &a.starts);
        let cur_vc = d.reg(&format!("{}_cur_vc", inp.name), 1, 0);
        let cur_out = d.reg(&format!("{}_cur_out", inp.name), out_bits, 0);
        let cur_ovc = d.reg(&format!("{}_cur_ovc", inp.name), 1, 0);
        let cur_drop = d.reg(&format!("{}_cur_drop", inp.name), 1, 0);
        let by_vc = |vc: Sig<'d>, f: &dyn Fn(usize) -> Sig<'d>| if inp.vcs == 2 { vc.mux(f(1), f(0)) } else { f(0) };
        let is_vc = |vc: Sig<'d>, v: usize| if inp.vcs == 1 { d.lit(1, 1) } else if v == 1 { vc } else { !vc };
        let new = grants.iter().map(|g| g.bit(i)).reduce(|x, y| x | y).unwrap() | a.has & a.side.drop;
        // A connection's next flit: there, and a slot at its output (a dropped packet needs none).
        let cont = busy.q & by_vc(cur_vc.q, &|v| a.next[v].valid) & (pick(slot, cur_out.q) | cur_drop.q);
        let send = cont | new;
        let vc = busy.q.mux(cur_vc.q, a.take1);
        let last = by_vc(vc, &|v| a.next[v].side.last);
        busy.next(send.mux(!last, busy.q));
        // An idle input's connection registers follow its choice (they matter once it is busy).
        cur_vc.next_when(!busy.q, a.take1);
        cur_out.next_when(!busy.q, a.side.out);
        cur_ovc.next_when(!busy.q, a.side.ovc);
        cur_drop.next_when(!busy.q, a.side.drop);
        for (v, start) in starts.iter().enumerate() {
            start.next_when(send & is_vc(vc, v), last);
            s.pop[v].next(send & is_vc(vc, v));
        }
        s.vc.next(vc);
        s.head.next(new & !a.side.drop);
        s.header.next(a.header);
        s.ovc.next(busy.q.mux(cur_ovc.q, a.side.ovc));
        s.flits.next(a.side.flits);
        for (o, g) in grants.iter().enumerate() {
            let here = cur_out.q.eq(lit_out(o)) & !cur_drop.q;
            to[o].push(busy.q.mux(cont & here, g.bit(i)));
            releases[o].push(cont & here & last);
            holds[o].push(g.bit(i) & !a.side.last);
        }
    }
    for (o, st) in outs.iter().enumerate() {
        st.sel.next(vector(d, &to[o]));
        st.head.next(grants[o].any());
        let any = |v: &[Sig<'d>]| v.iter().copied().reduce(|x, y| x | y).unwrap();
        st.owned.next(st.owned.q & !any(&releases[o]) | any(&holds[o]));
    }
    scheds
}

/// Round-robin arbiter over `requests` (bit i = requester i): grants (one-hot) the first request
/// at or after the pointer, wrapping, and when `advance` is high moves the pointer just past the
/// grant (after reset: requester 0 first). The same order as [`Design::round_robin`], from a
/// binary pointer: each grant bit is one function of the requests and the pointer.
fn round_robin<'d>(d: &'d Design, name: &str, requests: Sig<'d>, advance: Sig<'d>) -> Sig<'d> {
    let n = requests.width;
    let pb = (usize::BITS - (n - 1).leading_zeros()).max(1) as usize;
    let pointer = d.reg(name, pb, 0);
    let r = |i: usize| requests.bit(i % n);
    let bits: Vec<Sig> = (0..n)
        .map(|i| {
            // Requester i wins from pointer k when none of k, k+1, …, i−1 (mod n) asks.
            (0..n)
                .map(|k| {
                    let before = (k..k + (i + n - k) % n).map(r).fold(d.lit(0, 1), |acc, x| acc | x);
                    pointer.q.eq(d.lit(k as u128, pb)) & !before
                })
                .fold(d.lit(0, 1), |acc, x| acc | x)
                & r(i)
        })
        .collect();
    let grant = vector(d, &bits).named(&format!("{name}_grant"));
    let next: Sig = (0..n).map(|i| grant.bit(i).mux(d.lit(((i + 1) % n) as u128, pb), d.lit(0, pb))).fold(d.lit(0, pb), |acc, x| acc | x);
    pointer.next_when(advance & grant.any(), next);
    grant
}

fn names_of(inputs: &[Input]) -> Vec<String> {
    inputs.iter().map(|i| i.name.clone()).collect()
}
