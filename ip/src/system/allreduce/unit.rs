//! A node's collective unit (`collectives_w<W>`): the chain engine ([`mod@super::engine`]) and, on a
//! torus whose dimensions are powers of two, the butterfly ([`mod@super::butterfly`]), behind the
//! engine's ports.
//!
//! **Selection by size.** A contribution packet that holds a whole vector — its header's `tag`
//! without [`MORE`], and the host's packet before it also without — and whose `length` is at
//! most `small_bytes` (and at most [`BUTTERFLY_BYTES`]) runs on the butterfly, any other on the
//! chain; `small_bytes` = 0 runs everything on the chain. A host that splits a vector into
//! packets marks every packet but the last with [`MORE`]; unmarked short packets are each a
//! butterfly of their own (correct, but one at a time). Every node splits its vectors the same way and holds the same
//! `small_bytes`, so every node picks the same unit for the same packet. A packet for one unit
//! waits until the other has delivered every result it owes, so results reach the host in the
//! order of the contributions.
//!
//! Port `a` carries both units' packets: arriving packets of tag [`EXCHANGE_TAG`] (either
//! parity) go to the butterfly, the others to the engine; leaving packets and the host's result
//! packets are merged whole. Counters: the engine's [`COUNTERS`] as the sum over both units, and
//! `butterflies`, the operations the butterfly completed.

use std::rc::Rc;

use super::butterfly::{self, butterfly, BUTTERFLY_BYTES, EXCHANGE_TAG};
use super::element::ElementType;
use super::engine::{self, engine, COUNTERS};
use crate::router::header::field;
use crate::router::RouterConfig;
use crate::Error;

use super::packets::{merge_packets, packet_route};
use weft_hdl::netlist::{Axis, AxisShape, Design, Netlist, Source};

/// Bit of a contribution header's `tag`: more packets of the same vector follow.
pub const MORE: u16 = 1;

/// The unit's counters: the engine's, summed over both units, then `butterflies`.
pub const UNIT_COUNTERS: [&str; 6] = ["contributions", "results", "mismatches", "timeouts", "id_mismatches", "butterflies"];

/// The unit's module name: `collectives_w<W>` for binary32, else `collectives_<type>_w<W>`.
pub fn module_name(ty: ElementType, width: usize) -> String {
    ty.module_name("collectives", width)
}

/// Builds the unit for the router `rc` (its width, its torus, its longest packet) and elements
/// of `ty`.
pub fn unit(rc: &RouterConfig, ty: ElementType) -> Result<Netlist, Error> {
    let (width, dims) = (rc.width, rc.dims);
    let d = Design::new();
    let (data, keep) = (AxisShape::data(width), AxisShape::data(width).with_keep());
    let host = d.axis_in("s_axis_host", data);
    let from_a = d.axis_in("s_axis_a", keep);
    let from_b = d.axis_in("s_axis_b", keep);
    let small_bytes = d.input("small_bytes", 16);
    let e = d.instance(&Rc::new(engine(width, ty, rc.max_packet_bytes)?), &engine::module_name(ty, width), "chain");
    let shared = [("op", 2), ("host_dst", 22), ("timeout", 32)].map(|(name, w)| (name, d.input(name, w)));
    for (name, w) in [("flags", engine::FLAGS.len()), ("dst_a", 22), ("dst_b", 22)] {
        e.input(name).define(d.input(name, w));
    }
    for (name, sig) in shared {
        e.input(name).define(sig);
    }
    d.connect(&from_b, &e.sink("s_axis_b", keep))?;
    d.connect(&e.source("m_axis_b", data), &d.axis_out("m_axis_b", data))?;
    let Some(_) = butterfly::steps(dims).filter(|s| !s.is_empty()) else {
        d.section("no butterfly on this torus: the engine alone");
        d.connect(&host, &e.sink("s_axis_host", data))?;
        d.connect(&from_a, &e.sink("s_axis_a", keep))?;
        d.connect(&e.source("m_axis_a", data), &d.axis_out("m_axis_a", data))?;
        d.connect(&e.source("m_axis_host", keep), &d.axis_out("m_axis_host", keep))?;
        for c in COUNTERS {
            d.output(c, e.output(c));
        }
        d.output("butterflies", d.lit(0, 32));
        return Ok(d.finish());
    };
    let b = d.instance(&Rc::new(butterfly(width, ty, dims)?), &butterfly::module_name(ty, width), "butterfly");
    for (name, sig) in shared {
        b.input(name).define(sig);
    }

    d.section("contributions: up to small_bytes to the butterfly, the others to the chain, each once the other unit is idle");
    let length = host.0.data.bits(field("length").0, 14).zext(16);
    let more = host.0.data.bit(field("tag").0 + MORE.trailing_zeros() as usize).named("more_follow");
    let after_more = d.reg("after_more", 1, 0);
    let whole = (!more & !after_more.q).named("whole_vector");
    let small = (whole & small_bytes.any() & length.le(small_bytes) & length.le(BUTTERFLY_BYTES as u32)).named("small_packet");
    let (to_butterfly, inside) = packet_route(&d, "host", &host, small);
    after_more.next_when(host.fire() & !inside, more);
    let allowed = (inside | to_butterfly.mux(e.output("idle"), b.output("idle"))).named("contribution_allowed");
    let r = d.later(1);
    host.ready(allowed & r);
    let gated = Source(Axis { valid: host.0.valid & allowed, ready: Some(r), ..host.0.clone() });
    let [small_in, chain_in] = d.steer(&gated, to_butterfly);
    d.connect(&small_in, &b.sink("s_axis_host", data))?;
    d.connect(&chain_in, &e.sink("s_axis_host", data))?;

    d.section("port a in: exchanges to the butterfly, partials and results to the chain");
    let tag = from_a.0.data.bits(field("tag").0, 16);
    let exchange = (tag.bits(1, 15).eq((EXCHANGE_TAG >> 1) as u32)).named("exchange_packet");
    let (to_exchange, _) = packet_route(&d, "a_in", &from_a, exchange);
    let [exchanges, partials] = d.steer(&from_a, to_exchange);
    d.connect(&exchanges, &b.sink("s_axis_net", keep))?;
    d.connect(&partials, &e.sink("s_axis_a", keep))?;

    d.section("port a out and the host's results: whole packets from either unit");
    let a_out = merge_packets(&d, "a_out", &b.source("m_axis_net", data), &e.source("m_axis_a", data));
    d.connect(&a_out, &d.axis_out("m_axis_a", data))?;
    let host_out = merge_packets(&d, "host_out", &b.source("m_axis_host", keep), &e.source("m_axis_host", keep));
    d.connect(&host_out, &d.axis_out("m_axis_host", keep))?;
    for c in COUNTERS {
        d.output(c, e.output(c) + b.output(c));
    }
    d.output("butterflies", b.output("results"));
    Ok(d.finish())
}
