//! The router netlist: M IntraNode ports and up to six InterNode ports, virtual cut-through,
//! two virtual channels per InterNode port, dimension-order routing (see [`super::route`]).
//!
//! Ports (`<d>` = `xp`, `xn`, `yp`, `yn`, `zp`, `zn`, only those the torus has):
//! - `local_x`, `local_y`, `local_z`: this node's coordinates (from the register window);
//! - IntraNode port p: `s_axis_p<p>_tdata/tlast/tvalid/tready` in (the router fills `src_*`,
//!   zeroes `hops` and writes `ecc`; `tkeep` is derived from `length`), and
//!   `m_axis_p<p>_tdata/tkeep/tlast/tvalid/tready` out;
//! - InterNode direction d (flits *travelling* in direction d): `s_axis_<d>_tdata/tkeep/tlast/
//!   tuser/tvalid` in, with `tuser` = virtual channel and no `tready` (the sender holds
//!   credits), and `s_axis_<d>_credit[1:0]` out, one pulse per flit freed per VC;
//!   `m_axis_<d>_tdata/tkeep/tlast/tuser/tvalid/tready` out (a link may stall it), with
//!   `m_axis_<d>_credit[1:0]` in from the next router;
//! - 32-bit counters: per output `stat_<port>_packets`, `_flits`, `_stalls` (cycles a packet
//!   waited for the output or the output waited for its flits), per InterNode output
//!   `_vc1_packets` (packets on the dateline VC); per input `stat_<port>_dropped`,
//!   and per InterNode input `_ecc_corrected`, `_ecc_uncorrectable`, per IntraNode input
//!   `_length_errors`.
//!
//! Pipeline: a flit is written into its input VC buffer in the cycle it arrives; in the next
//! cycle the buffer head (route precomputed on arrival) is allocated and the flit crosses the
//! switch into the output register: two cycles per router, input to output.
//!
//! Arrival: a head flit's header is checked (SEC-DED, single errors corrected, double errors
//! counted and the packet dropped), routed, and rewritten (`hops` + 1 when it leaves on a link,
//! `ecc` recomputed) before it is stored, with the route beside it.
//!
//! Allocation, separable and input-first: each idle input picks one of its VCs whose head has
//! a free output and, for a link, credits for the *whole* packet downstream (virtual
//! cut-through; round-robin between VCs); each output grants one of the inputs asking for it
//! (round-robin). A granted packet holds its output until its tail passes, so flits of two
//! packets never interleave on one output and one flow stays in order. Credits are taken for
//! the whole packet at the grant and come back one per flit as the next router frees them.
//!
//! IntraNode inputs police the packet length: flits beyond `length` are discarded, a packet
//! that ends early is padded with zero flits, both counted as length errors; a packet longer
//! than `max_packet_bytes` or addressed outside the torus is dropped and counted.

use weft_hdl::netlist::{Netlist, Register, Wire};

use super::config::{Direction, RouterConfig};
use super::header::{correct_netlist, ecc_netlist, field, ECC_LO};

/// Bits to hold `0 ..= value`.
fn bits_for(value: usize) -> usize {
    (usize::BITS - value.leading_zeros()) as usize
}

fn log2(value: usize) -> usize {
    value.trailing_zeros() as usize
}

/// What the router stores beside every flit; the route fields are meaningful on head flits.
#[derive(Clone, Copy)]
struct SideLayout {
    keep: usize,
    out: usize,
    flits: usize,
}

impl SideLayout {
    fn width(&self) -> usize {
        1 + self.keep + self.out + 1 + 1 + self.flits
    }
}

/// A side word's fields.
#[derive(Clone, Copy)]
struct Side {
    last: Wire,
    keep: Wire,
    out: Wire,
    ovc: Wire,
    drop: Wire,
    flits: Wire,
}

impl Side {
    fn pack(&self, net: &mut Netlist) -> Wire {
        let w = net.concat(self.flits, self.drop);
        let w = net.concat(w, self.ovc);
        let w = net.concat(w, self.out);
        let w = net.concat(w, self.keep);
        net.concat(w, self.last)
    }

    fn unpack(net: &mut Netlist, word: Wire, l: SideLayout) -> Side {
        let last = net.bit(word, 0);
        let keep = net.slice(word, 1, l.keep);
        let out = net.slice(word, 1 + l.keep, l.out);
        let ovc = net.bit(word, 1 + l.keep + l.out);
        let drop = net.bit(word, 2 + l.keep + l.out);
        let flits = net.slice(word, 3 + l.keep + l.out, l.flits);
        Side { last, keep, out, ovc, drop, flits }
    }
}

/// The route of a head flit and its rewritten header.
struct Routed {
    header: Wire,
    out: Wire,
    ovc: Wire,
    drop: Wire,
    flits: Wire,
    /// Payload bytes in the last flit as a keep mask (all ones for a header-only packet).
    last_keep: Wire,
    corrected: Wire,
    uncorrectable: Wire,
}

struct Ctx<'a> {
    c: &'a RouterConfig,
    here: [Wire; 3],
    dirs: Vec<Direction>,
    side: SideLayout,
}

impl Ctx<'_> {
    /// Output index of a direction (IntraNode outputs come first).
    fn out_index(&self, d: Direction) -> usize {
        self.c.local_ports + self.dirs.iter().position(|x| *x == d).unwrap()
    }

    /// Checks, routes and rewrites a header arriving on `from` (None: injected at local port
    /// `port`) on virtual channel `in_vc`.
    fn route(&self, net: &mut Netlist, raw: Wire, from: Option<Direction>, port: usize, in_vc: Wire) -> Routed {
        let c = self.c;
        let f = |net: &mut Netlist, h: Wire, name: &str| {
            let (lo, w) = field(name);
            net.slice(h, lo, w)
        };
        let zero1 = net.constant(0, 1);
        let (mut data, corrected, uncorrectable) = match from {
            Some(_) => correct_netlist(net, raw),
            None => {
                // The fabric is the sender: fill the source fields, clear hops.
                let mut h = net.slice(raw, 0, ECC_LO);
                let src = [self.here[0], self.here[1], self.here[2], net.constant(port as u128, 4)];
                for (name, value) in ["src_x", "src_y", "src_z", "src_port"].iter().zip(src) {
                    h = replace(net, h, field(name).0, value);
                }
                let hops0 = net.constant(0, 10);
                h = replace(net, h, field("hops").0, hops0);
                (h, zero1, zero1)
            }
        };
        let dst = [f(net, data, "dst_x"), f(net, data, "dst_y"), f(net, data, "dst_z")];
        let dst_port = f(net, data, "dst_port");
        // Destination checks.
        let mut bad = vec![];
        for (d, dst_d) in dst.iter().enumerate() {
            let k = net.constant(c.dims[d] as u128, 6);
            let inside = net.ult(*dst_d, k);
            bad.push(net.not(inside));
        }
        let m = net.constant(c.local_ports as u128, 4);
        let port_ok = net.ult(dst_port, m);
        bad.push(net.not(port_ok));
        let length = f(net, data, "length");
        let max = net.constant(c.max_packet_bytes as u128, 14);
        let oversize = net.ult(max, length);
        bad.push(oversize);
        bad.push(uncorrectable);
        let drop = net.or_all(&bad);
        // Dimension order: the first dimension not yet at its destination decides.
        let ob = self.side.out;
        let mut out = net.resize(dst_port, ob);
        let mut ovc = zero1;
        let mut on_link = zero1;
        for dim in (0..3).rev() {
            let k = c.dims[dim];
            if k == 1 {
                continue;
            }
            let here = self.here[dim];
            // offset = (dst − here) mod k, in 7 bits.
            let d7 = net.zext(dst[dim], 7);
            let h7 = net.zext(here, 7);
            let diff = net.sub(d7, h7);
            let below = net.ult(d7, h7);
            let kc = net.constant(k as u128, 7);
            let wrapped = net.add(diff, kc);
            let offset = net.mux(below, wrapped, diff);
            let moving = net.nonzero(offset);
            let half = net.constant((k / 2) as u128, 7);
            let beyond = net.ult(half, offset);
            let plus = net.not(beyond);
            let xp = net.constant(self.out_index(Direction { dim, plus: true }) as u128, ob);
            let dir_out = if k == 2 {
                xp
            } else {
                let xn = net.constant(self.out_index(Direction { dim, plus: false }) as u128, ob);
                net.mux(plus, xp, xn)
            };
            // Dateline: crossing the wrap-around link moves the packet to VC 1; a packet that
            // stays in its dimension keeps its VC; entering a dimension starts on VC 0.
            let vc = if c.dateline {
                let last = net.constant((k - 1) as u128, 6);
                let at_last = net.eq(here, last);
                let at_first = net.is_zero(here);
                let crosses = net.mux(plus, at_last, at_first);
                if from.is_some_and(|f| f.dim == dim) {
                    net.or(crosses, in_vc)
                } else {
                    crosses
                }
            } else {
                zero1
            };
            out = net.mux(moving, dir_out, out);
            ovc = net.mux(moving, vc, ovc);
            on_link = net.or(on_link, moving);
        }
        // Rewrite: hops + 1 when leaving on a link, fresh check bits.
        let hops = f(net, data, "hops");
        let hops1 = net.add_const(hops, 1);
        let hops = net.mux(on_link, hops1, hops);
        data = replace(net, data, field("hops").0, hops);
        let ecc = ecc_netlist(net, data);
        let header = net.concat(ecc, data);
        // Flits: 1 + ceil(length / bytes per flit).
        let fb = c.flit_bytes();
        let l15 = net.zext(length, 15);
        let round = net.add_const(l15, fb as i128 - 1);
        let shift = net.constant(log2(fb) as u128, 4);
        let beats = net.shr(round, shift);
        let flits = net.add_const(beats, 1);
        let flits = net.resize(flits, self.side.flits);
        // Keep of the last flit: length mod bytes-per-flit bytes (all when it divides evenly).
        let rem = net.slice(length, 0, log2(fb));
        let ones = net.constant(u128::MAX, fb);
        let shifted = net.shl(ones, rem);
        let partial = net.not(shifted);
        let even = net.is_zero(rem);
        let keep = net.mux(even, ones, partial);
        let header_only = net.is_zero(length);
        let last_keep = net.mux(header_only, ones, keep);
        Routed { header, out, ovc, drop, flits, last_keep, corrected, uncorrectable }
    }
}

/// `value` written over `h[lo +: width(value)]`.
fn replace(net: &mut Netlist, h: Wire, lo: usize, value: Wire) -> Wire {
    let width = net.width(h);
    let hi = lo + net.width(value);
    let mut w = value;
    if lo > 0 {
        let low = net.slice(h, 0, lo);
        w = net.concat(w, low);
    }
    if hi < width {
        let top = net.slice(h, hi, width - hi);
        w = net.concat(top, w);
    }
    w
}

/// Round-robin arbiter: grants (one-hot) the first request at or above the pointer, wrapping;
/// the pointer moves just past each grant.
fn round_robin(net: &mut Netlist, name: &str, requests: Wire) -> Wire {
    let n = net.width(requests);
    let mask = net.register(name, n, u128::MAX);
    let masked = net.and(requests, mask.q);
    let any_masked = net.nonzero(masked);
    let pool = net.mux(any_masked, masked, requests);
    let neg = net.constant(0, n);
    let neg = net.sub(neg, pool);
    let grant = net.and(pool, neg); // lowest set bit
    let granted = net.nonzero(grant);
    let below = net.add_const(grant, -1);
    let upto = net.or(grant, below);
    let above = net.not(upto);
    net.hold_unless(mask, granted, above);
    grant
}

fn counter(net: &mut Netlist, name: &str, event: Wire) {
    let r = net.register(name, 32, 0);
    let r1 = net.add_const(r.q, 1);
    net.hold_unless(r, event, r1);
    net.output(name, r.q);
}

/// Bit `index` of `vector` (a mux over its bits).
fn pick(net: &mut Netlist, vector: Wire, index: Wire) -> Wire {
    let shifted = net.shr(vector, index);
    net.bit(shifted, 0)
}

/// One input port after its write side is built.
struct Input {
    name: String,
    vcs: usize,
    /// Per VC: buffer not empty, head side word, read pointer register.
    nonempty: Vec<Wire>,
    head: Vec<Side>,
    rd: Vec<Register>,
    data_mems: Vec<usize>,
    ptr_bits: usize,
}

/// Builds the router netlist for `config`.
pub fn router(config: &RouterConfig) -> Result<Netlist, String> {
    config.validate()?;
    let mut n = Netlist::new();
    let net = &mut n;
    let c = config;
    let chunks = c.width / 128;
    let kb = c.flit_bytes();
    let dirs = c.directions();
    let n_out = c.local_ports + dirs.len();
    let side = SideLayout { keep: kb, out: bits_for(n_out - 1).max(1), flits: bits_for(c.max_packet_flits()) };
    let pb = log2(c.vc_buffer_flits);
    let depth = c.vc_buffer_flits;
    let here = ["local_x", "local_y", "local_z"].map(|p| net.input(p, 6));
    let ctx = Ctx { c, here, dirs: dirs.clone(), side };
    let one = net.constant(1, 1);
    let zero = net.constant(0, 1);

    // ---------------- input ports: arrival into the VC buffers ----------------
    let mut inputs: Vec<Input> = vec![];
    let port_names: Vec<(String, Option<Direction>)> =
        (0..c.local_ports).map(|p| (format!("p{p}"), None)).chain(dirs.iter().map(|d| (d.name(), Some(*d)))).collect();
    for (pi, (name, from)) in port_names.iter().enumerate() {
        let vcs = if from.is_some() { 2 } else { 1 };
        let s = format!("s_axis_{name}");
        let data: Vec<Wire> = (0..chunks).map(|k| net.input(&format!("{s}_tdata@{}", 128 * k), 128)).collect();
        let last_in = net.input(&format!("{s}_tlast"), 1);
        let valid = net.input(&format!("{s}_tvalid"), 1);
        let (keep_in, vc_in) = match from {
            Some(_) => (net.input(&format!("{s}_tkeep"), kb), net.input(&format!("{s}_tuser"), 1)),
            None => (net.constant(u128::MAX, kb), zero),
        };
        let wr: Vec<Register> = (0..vcs).map(|v| net.register(&format!("{name}_wr{v}"), pb + 1, 0)).collect();
        let rd: Vec<Register> = (0..vcs).map(|v| net.register(&format!("{name}_rd{v}"), pb + 1, 0)).collect();
        let routed = ctx.route(net, data[0], *from, pi, vc_in);
        let all_keep = net.constant(u128::MAX, kb);
        let (write, wvc, w_last, w_keep, head, w_data) = match from {
            Some(_) => {
                let expect_head = net.register(&format!("{name}_expect_head"), 1, 1);
                net.hold_unless(expect_head, valid, last_in);
                let head = net.and(valid, expect_head.q);
                let e = net.and(head, routed.corrected);
                counter(net, &format!("stat_{name}_ecc_corrected"), e);
                let e = net.and(head, routed.uncorrectable);
                counter(net, &format!("stat_{name}_ecc_uncorrectable"), e);
                let e = net.and(head, routed.drop);
                counter(net, &format!("stat_{name}_dropped"), e);
                (valid, vc_in, last_in, keep_in, expect_head.q, data.clone())
            }
            None => {
                // Length policing (see the module docs).
                const HEAD: u128 = 0;
                const BODY: u128 = 1;
                const PAD: u128 = 2;
                const DISCARD: u128 = 3;
                let mode = net.register(&format!("{name}_mode"), 2, HEAD);
                let remaining = net.register(&format!("{name}_remaining"), side.flits, 0);
                let last_keep = net.register(&format!("{name}_last_keep"), kb, 0);
                let is = |net: &mut Netlist, m: u128| {
                    let k = net.constant(m, 2);
                    net.eq(mode.q, k)
                };
                let (in_head, in_body, in_pad, in_discard) = (is(net, HEAD), is(net, BODY), is(net, PAD), is(net, DISCARD));
                let fill = net.sub(wr[0].q, rd[0].q);
                let dc = net.constant(depth as u128, pb + 1);
                let space = net.ult(fill, dc);
                let takes = net.or(in_head, in_body);
                let takes = net.and(takes, space);
                let ready = net.or(takes, in_discard);
                net.output(&format!("{s}_tready"), ready);
                let accept = net.and(takes, valid);
                let pad_write = net.and(in_pad, space);
                let write = net.or(accept, pad_write);
                let head = net.and(accept, in_head);
                let single = net.constant(1, side.flits);
                let rem_is_one = net.eq(remaining.q, single);
                let routed_one = net.eq(routed.flits, single);
                let routed_one = net.or(routed_one, routed.drop);
                // Last flit written: the length says so (a dropped packet keeps its header only).
                let w_last = net.mux(in_head, routed_one, rem_is_one);
                let rem_next = net.add_const(remaining.q, -1);
                let rem_head = net.add_const(routed.flits, -1);
                let rem = net.mux(in_head, rem_head, rem_next);
                net.hold_unless(remaining, write, rem);
                net.hold_unless(last_keep, head, routed.last_keep);
                // Next mode.
                let ends = net.and(write, w_last); // the packet's last flit is written now
                let extra = net.not(last_in);
                let extra = net.and(extra, accept);
                let extra = net.and(extra, ends); // the source has more: discard it
                let early = net.not(ends);
                let early = net.and(early, accept);
                let early = net.and(early, last_in); // the source ended early: pad
                let m_head = net.constant(HEAD, 2);
                let m_body = net.constant(BODY, 2);
                let m_pad = net.constant(PAD, 2);
                let m_discard = net.constant(DISCARD, 2);
                let next = net.mux(head, m_body, mode.q);
                let next = net.mux(ends, m_head, next);
                let next = net.mux(early, m_pad, next);
                let next = net.mux(extra, m_discard, next);
                let discard_end = net.and(in_discard, valid);
                let discard_end = net.and(discard_end, last_in);
                let next = net.mux(discard_end, m_head, next);
                net.drive(mode, next);
                let misfit = net.or(extra, early);
                let dropped_extra = net.and(head, routed.drop);
                let not_dropped = net.not(dropped_extra);
                let misfit = net.and(misfit, not_dropped);
                counter(net, &format!("stat_{name}_length_errors"), misfit);
                counter(net, &format!("stat_{name}_dropped"), dropped_extra);
                let zero_chunk = net.constant(0, 128);
                let w_data: Vec<Wire> = data.iter().map(|d| net.mux(in_pad, zero_chunk, *d)).collect();
                let keep = net.mux(w_last, last_keep.q, all_keep);
                let keep = net.mux(in_head, all_keep, keep);
                (write, zero, w_last, keep, head, w_data)
            }
        };
        // Buffer write: the head flit carries the rewritten header and the route.
        let chunk0 = net.mux(head, routed.header, w_data[0]);
        let mut stored = w_data.clone();
        stored[0] = chunk0;
        let side_word = Side { last: w_last, keep: w_keep, out: routed.out, ovc: routed.ovc, drop: routed.drop, flits: routed.flits }.pack(net);
        let wr_q = if vcs == 2 { net.mux(wvc, wr[1].q, wr[0].q) } else { wr[0].q };
        let wr_low = net.slice(wr_q, 0, pb);
        let addr = if vcs == 2 { net.concat(wvc, wr_low) } else { wr_low };
        let data_mems: Vec<usize> = (0..chunks).map(|k| net.memory(&format!("{name}_data{k}"), 128, vcs * depth)).collect();
        for k in 0..chunks {
            net.memory_write(data_mems[k], write, addr, stored[k]);
        }
        let side_mem = net.memory(&format!("{name}_side"), side.width(), vcs * depth);
        net.memory_write(side_mem, write, addr, side_word);
        for v in 0..vcs {
            let is_v = if vcs == 1 { one } else if v == 1 { wvc } else { net.not(wvc) };
            let we = net.and(write, is_v);
            let w1 = net.add_const(wr[v].q, 1);
            net.hold_unless(wr[v], we, w1);
        }
        // Heads.
        let mut nonempty = vec![];
        let mut heads = vec![];
        for v in 0..vcs {
            let same = net.eq(wr[v].q, rd[v].q);
            nonempty.push(net.not(same));
            let rd_low = net.slice(rd[v].q, 0, pb);
            let a = if vcs == 2 {
                let vbit = net.constant(v as u128, 1);
                net.concat(vbit, rd_low)
            } else {
                rd_low
            };
            let word = net.memory_read(side_mem, a);
            heads.push(Side::unpack(net, word, side));
        }
        inputs.push(Input { name: name.clone(), vcs, nonempty, head: heads, rd, data_mems, ptr_bits: pb });
    }
    let n_in = inputs.len();

    // ---------------- outputs: state read by the allocator ----------------
    let out_names: Vec<String> = (0..c.local_ports).map(|p| format!("p{p}")).chain(dirs.iter().map(|d| d.name())).collect();
    let out_valid: Vec<Register> = out_names.iter().map(|o| net.register(&format!("{o}_out_valid"), 1, 0)).collect();
    let out_ready: Vec<Wire> = out_names.iter().map(|o| net.input(&format!("m_axis_{o}_tready"), 1)).collect();
    let held: Vec<Register> = out_names.iter().map(|o| net.register(&format!("{o}_held"), 1, 0)).collect();
    let cb = bits_for(depth);
    // Credits of each virtual channel of each link output: free flits in the next router.
    let credits: Vec<[Register; 2]> =
        dirs.iter().map(|d| [0, 1].map(|v| net.register(&format!("{}_credit{v}", d.name()), cb, depth as u128))).collect();
    let mut free_bits = vec![];
    let mut accept_bits = vec![];
    for o in 0..n_out {
        free_bits.push(net.not(held[o].q));
        let stalled = net.not(out_ready[o]);
        let stalled = net.and(out_valid[o].q, stalled);
        accept_bits.push(net.not(stalled));
    }
    let concat_all = |net: &mut Netlist, bits: &[Wire]| {
        let mut acc = bits[0];
        for b in &bits[1..] {
            acc = net.concat(*b, acc);
        }
        acc
    };
    let free_vec = concat_all(net, &free_bits);
    let accept_vec = concat_all(net, &accept_bits);

    // ---------------- allocation: inputs choose a VC ----------------
    struct Choice {
        has: Wire,
        vc: Wire,
        side: Side,
        busy: Register,
        cur_vc: Register,
        cur_out: Register,
        cur_ovc: Register,
        cur_drop: Register,
        prefer: Register,
    }
    let mut choices = vec![];
    for inp in &inputs {
        let busy = net.register(&format!("{}_busy", inp.name), 1, 0);
        let idle = net.not(busy.q);
        let mut reqs = vec![];
        for v in 0..inp.vcs {
            let h = inp.head[v];
            let free = pick(net, free_vec, h.out);
            // Credits for the whole packet at the chosen output's VC (IntraNode outputs need none).
            let mut ok_bits = vec![one; c.local_ports];
            for cr in &credits {
                let have = net.mux(h.ovc, cr[1].q, cr[0].q);
                let flits = net.resize(h.flits, cb);
                let short = net.ult(have, flits);
                ok_bits.push(net.not(short));
            }
            let ok_vec = concat_all(net, &ok_bits);
            let ok = pick(net, ok_vec, h.out);
            let go = net.and(free, ok);
            let go = net.or(go, h.drop);
            let r = net.and(go, inp.nonempty[v]);
            reqs.push(net.and(r, idle));
        }
        let prefer = net.register(&format!("{}_prefer_vc", inp.name), 1, 0);
        let (has, vc, side_sel) = if inp.vcs == 2 {
            // Round robin between the two VCs: the preferred one if it asks, else the other.
            let no0 = net.not(reqs[0]);
            let may1 = net.or(prefer.q, no0);
            let take1 = net.and(reqs[1], may1);
            let has = net.or(reqs[0], reqs[1]);
            let (a, b) = (inp.head[1], inp.head[0]);
            let s = Side {
                last: net.mux(take1, a.last, b.last),
                keep: net.mux(take1, a.keep, b.keep),
                out: net.mux(take1, a.out, b.out),
                ovc: net.mux(take1, a.ovc, b.ovc),
                drop: net.mux(take1, a.drop, b.drop),
                flits: net.mux(take1, a.flits, b.flits),
            };
            (has, take1, s)
        } else {
            (reqs[0], zero, inp.head[0])
        };
        let cur_vc = net.register(&format!("{}_cur_vc", inp.name), 1, 0);
        let cur_out = net.register(&format!("{}_cur_out", inp.name), side.out, 0);
        let cur_ovc = net.register(&format!("{}_cur_ovc", inp.name), 1, 0);
        let cur_drop = net.register(&format!("{}_cur_drop", inp.name), 1, 0);
        choices.push(Choice { has, vc, side: side_sel, busy, cur_vc, cur_out, cur_ovc, cur_drop, prefer });
    }

    // ---------------- allocation: outputs grant an input ----------------
    let mut grants = vec![];
    let mut request_any = vec![];
    for o in 0..n_out {
        let oc = net.constant(o as u128, side.out);
        let bits: Vec<Wire> = choices
            .iter()
            .map(|ch| {
                let to_o = net.eq(ch.side.out, oc);
                let keep = net.not(ch.side.drop);
                let r = net.and(to_o, keep);
                net.and(r, ch.has)
            })
            .collect();
        let reqv = concat_all(net, &bits);
        request_any.push(net.nonzero(reqv));
        grants.push(round_robin(net, &format!("{}_arbiter", out_names[o]), reqv));
    }

    // ---------------- connections, pops and the switch ----------------
    let mut sends = vec![];
    let mut act_outs = vec![];
    let mut act_drops = vec![];
    let mut act_lasts = vec![];
    let mut act_datas = vec![];
    let mut act_keeps = vec![];
    let mut act_ovcs = vec![];
    let mut actives = vec![];
    let mut granted_flits = vec![];
    for (i, ch) in choices.iter().enumerate() {
        let inp = &inputs[i];
        let g: Vec<Wire> = grants.iter().map(|g| net.bit(*g, i)).collect();
        let out_granted = net.or_all(&g);
        let drop_start = net.and(ch.has, ch.side.drop);
        let granted = net.or(out_granted, drop_start);
        let busy = ch.busy.q;
        let act = net.or(busy, granted);
        let act_vc = net.mux(busy, ch.cur_vc.q, ch.vc);
        let act_out = net.mux(busy, ch.cur_out.q, ch.side.out);
        let act_ovc = net.mux(busy, ch.cur_ovc.q, ch.side.ovc);
        let act_drop = net.mux(busy, ch.cur_drop.q, ch.side.drop);
        let (nonempty, last, keep) = if inp.vcs == 2 {
            (
                net.mux(act_vc, inp.nonempty[1], inp.nonempty[0]),
                net.mux(act_vc, inp.head[1].last, inp.head[0].last),
                net.mux(act_vc, inp.head[1].keep, inp.head[0].keep),
            )
        } else {
            (inp.nonempty[0], inp.head[0].last, inp.head[0].keep)
        };
        let out_ok = pick(net, accept_vec, act_out);
        let out_ok = net.or(out_ok, act_drop);
        let send = net.and(act, nonempty);
        let send = net.and(send, out_ok);
        // Read the flit at the active VC's head.
        let rd_q = if inp.vcs == 2 { net.mux(act_vc, inp.rd[1].q, inp.rd[0].q) } else { inp.rd[0].q };
        let rd_low = net.slice(rd_q, 0, inp.ptr_bits);
        let addr = if inp.vcs == 2 { net.concat(act_vc, rd_low) } else { rd_low };
        let data: Vec<Wire> = inp.data_mems.iter().map(|m| net.memory_read(*m, addr)).collect();
        for v in 0..inp.vcs {
            let is_v = if inp.vcs == 1 { one } else if v == 1 { act_vc } else { net.not(act_vc) };
            let pop = net.and(send, is_v);
            let r1 = net.add_const(inp.rd[v].q, 1);
            net.hold_unless(inp.rd[v], pop, r1);
        }
        if inp.vcs == 2 {
            let pops: Vec<Wire> = (0..2)
                .map(|v| {
                    let is_v = if v == 1 { act_vc } else { net.not(act_vc) };
                    net.and(send, is_v)
                })
                .collect();
            let both = net.concat(pops[1], pops[0]);
            let credit = net.register(&format!("{}_credit_out", inp.name), 2, 0);
            net.drive(credit, both);
            net.output(&format!("s_axis_{}_credit", inp.name), credit.q);
        }
        // Connection state.
        let ends = net.and(send, last);
        let not_end = net.not(ends);
        let b = net.and(act, not_end);
        net.drive(ch.busy, b);
        net.drive(ch.cur_vc, act_vc);
        net.drive(ch.cur_out, act_out);
        net.drive(ch.cur_ovc, act_ovc);
        net.drive(ch.cur_drop, act_drop);
        // VC round robin: after a grant an input prefers its other VC.
        let other = net.not(ch.vc);
        net.hold_unless(ch.prefer, granted, other);
        sends.push(send);
        act_outs.push(act_out);
        act_drops.push(act_drop);
        act_lasts.push(last);
        act_datas.push(data);
        act_keeps.push(keep);
        act_ovcs.push(act_ovc);
        actives.push(act);
        granted_flits.push((ch.side.flits, ch.side.ovc));
    }
    // ---------------- output registers, hold state, credits, counters ----------------
    let mut dir_k = 0;
    for o in 0..n_out {
        let oc = net.constant(o as u128, side.out);
        let mut sel = vec![];
        for i in 0..n_in {
            let to_o = net.eq(act_outs[i], oc);
            let keep = net.not(act_drops[i]);
            let s = net.and(to_o, keep);
            let s = net.and(s, actives[i]);
            sel.push(net.and(s, sends[i]));
        }
        let push = net.or_all(&sel);
        let and_or = |net: &mut Netlist, values: &[Wire]| {
            let width = net.width(values[0]);
            let z = net.constant(0, width);
            let mut acc = z;
            for (s, v) in sel.iter().zip(values) {
                let term = net.mux(*s, *v, z);
                acc = net.or(acc, term);
            }
            acc
        };
        let name = &out_names[o];
        let m = format!("m_axis_{name}");
        for k in 0..chunks {
            let col: Vec<Wire> = act_datas.iter().map(|d| d[k]).collect();
            let d = and_or(net, &col);
            let r = net.register(&format!("{name}_out_data{k}"), 128, 0);
            net.hold_unless(r, push, d);
            net.output(&format!("{m}_tdata@{}", 128 * k), r.q);
        }
        let keep = and_or(net, &act_keeps);
        let kr = net.register(&format!("{name}_out_keep"), kb, 0);
        net.hold_unless(kr, push, keep);
        net.output(&format!("{m}_tkeep"), kr.q);
        let last = and_or(net, &act_lasts);
        let lr = net.register(&format!("{name}_out_last"), 1, 0);
        net.hold_unless(lr, push, last);
        net.output(&format!("{m}_tlast"), lr.q);
        let is_link = o >= c.local_ports;
        if is_link {
            let ovc = and_or(net, &act_ovcs);
            let ur = net.register(&format!("{name}_out_vc"), 1, 0);
            net.hold_unless(ur, push, ovc);
            net.output(&format!("{m}_tuser"), ur.q);
            // Packets on the dateline VC: shows the deadlock-avoidance mechanism at work.
            let tail_vc1 = net.and(push, last);
            let tail_vc1 = net.and(tail_vc1, ovc);
            counter(net, &format!("stat_{name}_vc1_packets"), tail_vc1);
        }
        let stay = net.not(out_ready[o]);
        let stay = net.and(out_valid[o].q, stay);
        let v = net.or(push, stay);
        net.drive(out_valid[o], v);
        net.output(&format!("{m}_tvalid"), out_valid[o].q);
        // Held from the grant until the tail passes.
        let granted_o = net.nonzero(grants[o]);
        let tail = net.and(push, last);
        let not_tail = net.not(tail);
        let h = net.or(held[o].q, granted_o);
        let h = net.and(h, not_tail);
        net.drive(held[o], h);
        if is_link {
            // Credits: the whole packet at the grant, one back per flit freed downstream.
            let back = net.input(&format!("{m}_credit"), 2);
            let cr = &credits[dir_k];
            let g = grants[o];
            let mut flits = net.constant(0, cb);
            let mut ovc = zero;
            for i in 0..n_in {
                let gi = net.bit(g, i);
                let f = net.resize(granted_flits[i].0, cb);
                let zf = net.constant(0, cb);
                let f = net.mux(gi, f, zf);
                flits = net.or(flits, f);
                let vi = net.and(gi, granted_flits[i].1);
                ovc = net.or(ovc, vi);
            }
            for v in 0..2 {
                let on_v = if v == 1 { ovc } else { net.not(ovc) };
                let take = net.and(granted_o, on_v);
                let zf = net.constant(0, cb);
                let taken = net.mux(take, flits, zf);
                let after = net.sub(cr[v].q, taken);
                let ret = net.bit(back, v);
                let ret = net.zext(ret, cb);
                let next = net.add(after, ret);
                net.drive(cr[v], next);
            }
            dir_k += 1;
        }
        counter(net, &format!("stat_{name}_packets"), tail);
        counter(net, &format!("stat_{name}_flits"), push);
        let wants = net.or(held[o].q, request_any[o]);
        let no_push = net.not(push);
        let stall = net.and(wants, no_push);
        counter(net, &format!("stat_{name}_stalls"), stall);
    }
    Ok(n)
}
