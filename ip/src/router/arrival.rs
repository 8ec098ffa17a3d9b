//! Route computation for a head flit as it arrives: the header checked (SEC-DED on InterNode
//! inputs; on IntraNode inputs the fabric fills the source fields instead), the destination
//! checked, the output and virtual channel chosen by the rules of [`super::route`] (the
//! software reference; here in an equivalent form that compares the destination with
//! registered values derived from this node's coordinates, [`Here`]). The header is rewritten (`hops` + 1 when it leaves on a link,
//! fresh check bits) by [`rewrite`] when the allocator schedules it, not on arrival.

use weft_hdl::netlist::{Design, Sig};

use super::config::{Direction, RouterConfig};
use super::header::{correct_netlist, ecc_netlist, field, last_keep, ECC_LO};
use super::route::turn_allowed;

/// A head flit as it arrives: its header as stored (corrected, or with the source fields
/// filled; `hops` and the check bits are rewritten when it leaves) and its route.
pub(super) struct Arrived<'d> {
    pub header: Sig<'d>,
    pub route: Routed<'d>,
    /// A single error was corrected: the route, taken from the header as received, may be
    /// wrong, and the input routes the corrected header again before the packet is allocated.
    pub fix: Sig<'d>,
    pub corrected: Sig<'d>,
    pub uncorrectable: Sig<'d>,
}

/// The route of a header.
#[derive(Clone, Copy)]
pub(super) struct Routed<'d> {
    /// Output index (IntraNode outputs first, then the links in [`RouterConfig::directions`]).
    pub out: Sig<'d>,
    pub ovc: Sig<'d>,
    /// Dropped: addressed outside the torus, too long, uncorrectable, or routed where the switch
    /// has no path (a corrupted header).
    pub drop: Sig<'d>,
    pub flits: Sig<'d>,
    /// One flit (`length` = 0), without the adder behind `flits`.
    pub single: Sig<'d>,
    /// Longer than `max_packet_bytes` (one of the reasons for `drop`): `flits` means nothing.
    pub long: Sig<'d>,
    /// Payload bytes in the last flit as a keep mask (all ones for a header-only packet).
    pub last_keep: Sig<'d>,
}

/// This node's coordinates (registered from the inputs `local_x/y/z`) and, per dimension of
/// size k, what the route compares a destination with: the last coordinate a packet going +
/// reaches within k/2 hops (`half`), whether that interval wraps past k − 1 (`wraps`), and
/// whether this node sits just before (`top`) or after (`bottom`) the ring's dateline.
#[derive(Clone, Copy)]
pub(super) struct Here<'d> {
    pub coord: [Sig<'d>; 3],
    half: [Sig<'d>; 3],
    wraps: [Sig<'d>; 3],
    top: [Sig<'d>; 3],
    bottom: [Sig<'d>; 3],
}

impl<'d> Here<'d> {
    pub fn new(d: &'d Design, c: &RouterConfig, ports: [Sig<'d>; 3]) -> Here<'d> {
        d.section("this node's coordinates, and what routes compare with them");
        let names = ["x", "y", "z"];
        // No reset: they follow the inputs during reset too.
        let reg = |name: String, value: Sig<'d>| {
            let q = d.net().reg(value.wire, None, None);
            d.sig(q).named(&name)
        };
        let per_dim = |f: &dyn Fn(usize) -> Sig<'d>| [0, 1, 2].map(f);
        let coord = per_dim(&|k| reg(format!("here_{}", names[k]), ports[k]));
        let half_of = |k: usize| {
            let n = c.dims[k];
            let s = ports[k].zext(7) + (n / 2) as u128;
            s.ge(n).mux(s - n as u128, s).resize(6)
        };
        Here {
            coord,
            half: per_dim(&|k| reg(format!("here_{}_half", names[k]), half_of(k))),
            wraps: per_dim(&|k| reg(format!("here_{}_wraps", names[k]), half_of(k).lt(ports[k]))),
            top: per_dim(&|k| reg(format!("here_{}_top", names[k]), ports[k].eq(c.dims[k] as u128 - 1))),
            bottom: per_dim(&|k| reg(format!("here_{}_bottom", names[k]), ports[k].is_zero())),
        }
    }

    /// Dimension `k` of dimension-order routing for destination coordinate `dst` (below the
    /// ring's size): the packet still moves in it, and goes + (offset 1 ..= k/2), as
    /// [`super::route::ring_dir`] decides.
    fn ring_dir(&self, k: usize, dst: Sig<'d>) -> (Sig<'d>, Sig<'d>) {
        let (after, within) = (dst.gt(self.coord[k]), dst.le(self.half[k]));
        (dst.ne(self.coord[k]), self.wraps[k].mux(after | within, after & within))
    }

    /// The dateline rule of [`super::route::dateline_vc`] in dimension `k`.
    fn dateline_vc(&self, k: usize, plus: Sig<'d>, kept: Option<Sig<'d>>) -> Sig<'d> {
        let crosses = plus.mux(self.top[k], self.bottom[k]);
        kept.map_or(crosses, |vc| crosses | vc)
    }
}

/// Output index of a direction.
pub(super) fn out_index(c: &RouterConfig, d: Direction) -> usize {
    c.local_ports + c.directions().iter().position(|x| *x == d).unwrap()
}

/// `h` with `value` written over `h[lo +: width(value)]`.
fn replace<'d>(d: &'d Design, h: Sig<'d>, lo: usize, value: Sig<'d>) -> Sig<'d> {
    let hi = lo + value.width;
    let mut parts = vec![];
    if hi < h.width {
        parts.push(h.bits(hi, h.width - hi));
    }
    parts.push(value);
    if lo > 0 {
        parts.push(h.bits(0, lo));
    }
    d.cat(&parts)
}

/// The header `raw` arriving on `from` (None: injected at IntraNode `port`) on virtual channel
/// `in_vc`, at the node `here`: checked and corrected (InterNode) or completed (IntraNode), and
/// routed from its fields as received, beside the check (so the correction is not on the
/// route's path); `out_bits` and `flit_bits` size the route fields.
#[allow(clippy::too_many_arguments)]
pub(super) fn arrive<'d>(d: &'d Design, c: &RouterConfig, here: Here<'d>, raw: Sig<'d>, from: Option<Direction>, port: usize, in_vc: Sig<'d>, out_bits: usize, flit_bits: usize) -> Arrived<'d> {
    let zero = d.lit(0, 1);
    let (data, corrected, uncorrectable) = match from {
        Some(_) => {
            let (data, corrected, uncorrectable) = correct_netlist(&mut d.net(), raw.wire);
            (d.sig(data), d.sig(corrected), d.sig(uncorrectable))
        }
        None => {
            // The fabric is the sender: fill the source fields, clear hops.
            let mut h = raw.bits(0, ECC_LO);
            let src = [here.coord[0], here.coord[1], here.coord[2], d.lit(port as u128, 4)];
            for (name, value) in ["src_x", "src_y", "src_z", "src_port"].iter().zip(src) {
                h = replace(d, h, field(name).0, value);
            }
            (replace(d, h, field("hops").0, d.lit(0, 10)), zero, zero)
        }
    };
    let mut r = route(d, c, here, raw.bits(0, ECC_LO), from, in_vc, out_bits, flit_bits);
    r.drop = (r.drop | uncorrectable).named("drop");
    Arrived { header: d.lit(0, 128 - ECC_LO).cat(data), route: r, fix: corrected, corrected, uncorrectable }
}

/// Routes the header fields `data` (bits 119:0) of a packet that arrived on `from` on virtual
/// channel `in_vc`.
#[allow(clippy::too_many_arguments)]
pub(super) fn route<'d>(d: &'d Design, c: &RouterConfig, here: Here<'d>, data: Sig<'d>, from: Option<Direction>, in_vc: Sig<'d>, out_bits: usize, flit_bits: usize) -> Routed<'d> {
    let f = |h: Sig<'d>, name: &str| {
        let (lo, w) = field(name);
        h.bits(lo, w)
    };
    let zero = d.lit(0, 1);
    let dst = [f(data, "dst_x"), f(data, "dst_y"), f(data, "dst_z")];
    let dst_port = f(data, "dst_port");
    let length = f(data, "length");
    let outside = (0..3).map(|k| !below(d, dst[k], c.dims[k])).reduce(|a, b| a | b).unwrap();
    let long = !below(d, length, c.max_packet_bytes + 1);

    // Per dimension: the packet still moves in it, and goes +.
    let dirs = [0, 1, 2].map(|dim| if c.dims[dim] == 1 { (zero, zero) } else { here.ring_dir(dim, dst[dim]) });
    // A route the switch has no path for (back in a dimension already done, the other way round
    // the ring it arrived on): only a corrupted header asks for one, and it is dropped.
    let goes = |to: Direction| {
        let earlier = (0..to.dim).fold(zero, |acc, dim| acc | dirs[dim].0);
        let way = if c.dims[to.dim] == 2 {
            d.lit(1, 1)
        } else if to.plus {
            dirs[to.dim].1
        } else {
            !dirs[to.dim].1
        };
        dirs[to.dim].0 & !earlier & way
    };
    let stray = c.directions().into_iter().filter(|to| !turn_allowed(c, from, *to)).fold(zero, |acc, to| acc | goes(to));
    let drop = outside | !below(d, dst_port, c.local_ports) | long | stray;

    // Dimension order: the first dimension not yet at its destination decides.
    let mut out = dst_port.resize(out_bits);
    let mut ovc = zero;
    for dim in (0..3).rev() {
        let k = c.dims[dim];
        if k == 1 {
            continue;
        }
        let (moving, plus) = dirs[dim];
        let xp = d.lit(out_index(c, Direction { dim, plus: true }) as u128, out_bits);
        let dir_out = if k == 2 { xp } else { plus.mux(xp, d.lit(out_index(c, Direction { dim, plus: false }) as u128, out_bits)) };
        let stay = from.is_some_and(|f| f.dim == dim);
        let vc = if c.dateline { here.dateline_vc(dim, plus, stay.then_some(in_vc)) } else { zero };
        out = moving.mux(dir_out, out);
        ovc = moving.mux(vc, ovc);
    }
    // Flits: 1 + ceil(length / bytes per flit).
    let fb = c.flit_bytes();
    let lb = fb.trailing_zeros() as usize;
    let beats = (length.zext(15) + (fb - 1)).shr(d.lit(lb as u128, 4));
    let flits = (beats + 1u32).resize(flit_bits);
    let last_keep = last_keep(d, length, fb);
    Routed { out: out.named("route_out"), ovc: ovc.named("route_vc"), drop, flits, single: length.is_zero(), long, last_keep }
}

/// `x < value` for a constant, as AND/OR logic (no carry chain, which logic synthesis does not
/// merge with the LUTs around it): from the top bit down, x is below when, at the first bit
/// where they differ, `value` has the one.
fn below<'d>(d: &'d Design, x: Sig<'d>, value: usize) -> Sig<'d> {
    if value >> x.width > 0 {
        return d.lit(1, 1);
    }
    (0..x.width).fold(d.lit(0, 1), |lower, i| if value >> i & 1 == 1 { !x.bit(i) | lower } else { !x.bit(i) & lower })
}

/// The header `h` as it leaves: `hops` + 1 when `on_link`, fresh check bits.
///
/// The check bits are linear in the data, so they are computed in two parts: those of every
/// field but `hops` (a wide XOR tree straight from the registers) and those of the new `hops`
/// alone (a few bits behind its incrementer), XORed last. The incrementer's carry so meets one
/// narrow tree rather than all 120 bits.
pub(super) fn rewrite<'d>(d: &'d Design, h: Sig<'d>, on_link: Sig<'d>) -> Sig<'d> {
    let (lo, w) = field("hops");
    let hops = h.bits(lo, w);
    let new_hops = on_link.mux(hops + 1u32, hops);
    let others = replace(d, h.bits(0, ECC_LO), lo, d.lit(0, w));
    let hops_only = replace(d, d.lit(0, ECC_LO), lo, new_hops);
    let ecc_others = ecc_netlist(&mut d.net(), others.wire);
    let ecc_hops = ecc_netlist(&mut d.net(), hops_only.wire);
    let ecc = d.sig(ecc_others) ^ d.sig(ecc_hops);
    ecc.cat(replace(d, h.bits(0, ECC_LO), lo, new_hops))
}
