//! The reduction bridge of one node: a compiled program's global reductions through the
//! fabric's collective engine, with no host. It does at a loop's two sync steps what the
//! partitioned reference does ([`super::run`]):
//!
//! - **before the loop** (sync id 2·l): it keeps each reduced global's value and writes the
//!   operator's identity (+0 for a sum, +∞ for min, −∞ for max), so the loop reduces only this
//!   node's elements;
//! - **after it** (sync id 2·l + 1), global by global in the loop's argument order: it sends the
//!   node's partial as one contribution packet to the collective engine (header `length` = the
//!   global's bytes, `user` = the operation's number, counting from 0; payload element 0 in the
//!   low bits), takes the result packet (every node gets the same combination, in the collective
//!   unit's order: the butterfly's for a global of up to 256 bytes where the torus has one, else
//!   the chain's), and writes `kept ∘ result` element by element, through an IEEE adder or
//!   comparator of the application's precision.
//!
//! `reduce_done` is high while `sync` stays high once the step's work is done (at once at a step
//! with no reduction). A header-only packet with the engine's timeout tag is counted in
//! `reduce_timeouts` and the bridge keeps waiting, as the engine does. The engine's operator is
//! a register written at load, so every reduction of an application uses one operator.

use std::rc::Rc;

use weft_hdl::netlist::{Design, Netlist, Sig};
use weft_hdl::pipeline::{dsl, Stages};

use super::super::constants::rom;
use super::super::program::Access;
use super::super::run::{Application, Element};
use super::super::store::bits_for;
use super::run::reductions;
use crate::router::header::field;
use crate::system::allreduce::engine::ERROR_TAG;
use crate::system::allreduce::{ElementType, ReduceOp};
use crate::system::kernel_port::port_width;
use crate::Error;

/// One global some loop reduces.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReducedGlobal {
    /// Its name (the program's ports `<name>_value`, `<name>_wr_en`, `<name>_wr_data`).
    pub name: String,
    /// Its elements.
    pub elements: usize,
}

/// Everything one node's bridge needs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BridgeSpec {
    /// The element type (the application's precision; the engine must be built for it).
    pub ty: ElementType,
    /// The datapath's width in bits (the router's: 128 or 256).
    pub width: usize,
    /// The one operator of every reduction.
    pub op: ReduceOp,
    /// The reduced globals.
    pub globals: Vec<ReducedGlobal>,
    /// Per loop with reductions: the loop's number and the globals it reduces, in argument order.
    pub loops: Vec<(u32, Vec<usize>)>,
}

impl BridgeSpec {
    /// The bridge of `app`'s program on a datapath of `width` bits. Reductions with two
    /// operators or a global longer than one packet of `max_packet_bytes` are errors.
    pub fn build<T: Element>(app: &Application<T>, width: usize, max_packet_bytes: usize) -> Result<BridgeSpec, Error> {
        let ty = if std::mem::size_of::<T>() == 8 { ElementType::F64 } else { ElementType::F32 };
        let mut spec = BridgeSpec { ty, width, op: ReduceOp::Sum, globals: vec![], loops: vec![] };
        let mut first_op: Option<(String, Access)> = None;
        for (l, (name, _, args)) in app.loop_args().iter().enumerate() {
            let reduced = reductions(app, args);
            if reduced.is_empty() {
                continue;
            }
            let mut ids = vec![];
            for (g, acc) in reduced {
                match &first_op {
                    Some((g0, a0)) if *a0 != acc => {
                        return Err(Error::Config(format!(
                            "reduction bridge: loop `{name}` reduces `{g}` with {acc:?} where `{g0}` is reduced with {a0:?}: the collective engine's operator (allreduce_op) is set once at load, so an application reduces with one operator"
                        )))
                    }
                    None => first_op = Some((g.clone(), acc)),
                    _ => {}
                }
                let elements = app.global(&g).map_or(0, <[T]>::len);
                let bytes = elements * ty.bytes();
                if elements == 0 || bytes > max_packet_bytes {
                    return Err(Error::Config(format!("reduction bridge: global `{g}` of {elements} elements ({bytes} bytes): allowed 1 element ..= max_packet_bytes {max_packet_bytes}")));
                }
                let id = match spec.globals.iter().position(|x| x.name == g) {
                    Some(i) => i,
                    None => {
                        spec.globals.push(ReducedGlobal { name: g.clone(), elements });
                        spec.globals.len() - 1
                    }
                };
                ids.push(id);
            }
            spec.loops.push((l as u32, ids));
        }
        spec.op = match first_op.map(|x| x.1) {
            Some(Access::Min) => ReduceOp::Min,
            Some(Access::Max) => ReduceOp::Max,
            _ => ReduceOp::Sum,
        };
        Ok(spec)
    }

    fn bits(&self) -> usize {
        self.ty.bits()
    }

    fn beats(&self, g: usize) -> usize {
        (self.globals[g].elements * self.bits()).div_ceil(self.width)
    }
}

/// The combiner: `s = a + b`, `lo = min(a, b)`, `hi = max(a, b)` in the element type.
fn combiner(ty: ElementType) -> Result<Netlist, Error> {
    let text = format!("kernel reduction_bridge_{0}: {0}\ninput a, b\noutput s = a + b, lo = min(a, b), hi = max(a, b)\n", ty.name());
    let kernel = dsl::parse(&text).map_err(Error::kernel("reduction bridge combiner"))?;
    let (net, _) = kernel.netlist(&Stages::balanced(kernel.format))?;
    Ok(net)
}

/// Lane `i` (a signal) of `word`, lanes of `bits` bits, `lanes` of them.
fn lane<'d>(d: &'d Design, word: Sig<'d>, i: Sig<'d>, bits: usize, lanes: usize) -> Sig<'d> {
    (0..lanes).fold(d.lit(0, bits), |acc, k| i.eq(k as u128).mux(word.bits(k * bits, bits), acc))
}

/// Builds the bridge for `s`. An application with no reduction gets a bridge that is always
/// done at once.
pub fn reduction_bridge(s: &BridgeSpec) -> Result<Netlist, Error> {
    if !matches!(s.ty, ElementType::F32 | ElementType::F64) {
        return Err(Error::Config(format!("reduction bridge: element type {}: allowed f32, f64", s.ty.name())));
    }
    if !s.width.is_multiple_of(128) || s.width == 0 {
        return Err(Error::Config(format!("reduction bridge: width {}: allowed a multiple of 128 bits", s.width)));
    }
    let d = Design::new();
    let (w, wb) = (s.width, s.width / 8);
    let bits = s.bits();
    let one = d.lit(1, 1);
    let zero = d.lit(0, 1);
    let globals = s.globals.len().max(1);
    let gb = bits_for(globals);
    let max_elements = s.globals.iter().map(|g| g.elements).max().unwrap_or(1);
    let max_beats = (0..s.globals.len()).map(|g| s.beats(g)).max().unwrap_or(1);
    let identity = d.lit(s.op.identity(s.ty), bits);

    d.section("the program's globals: their values, kept before a loop and written back after it");
    let values: Vec<Sig> = s.globals.iter().map(|g| d.input(&format!("{}_value", g.name), g.elements * bits)).collect();
    let kept: Vec<_> = s.globals.iter().map(|g| d.reg(&format!("{}_kept", g.name), g.elements * bits, 0)).collect();

    d.section("the step: which loop's reductions, before or after it");
    let sync = d.input("sync", 1);
    let sync_id = d.input("sync_id", 16);
    let lb = bits_for(s.loops.len());
    let mut found = zero;
    let mut index = d.lit(0, lb);
    for (k, (l, _)) in s.loops.iter().enumerate() {
        let hit = sync_id.bits(1, 15).eq(*l as u128);
        found = found | hit;
        index = hit.mux(d.lit(k as u128, lb), index);
    }
    let after = sync_id.bit(0);
    // The loops' globals in one list: loop k's are `order[first[k]..first[k + 1]]`.
    let order: Vec<u128> = s.loops.iter().flat_map(|(_, g)| g.iter().map(|&x| x as u128)).collect();
    let mut first = vec![0u128];
    for (_, g) in &s.loops {
        first.push(first.last().unwrap() + g.len() as u128);
    }
    let ob = bits_for(order.len() + 1);
    // States: 0 idle, 1 header, 2 payload, 3 result, 4 feed, 5 wait, 6 write, 7 done.
    let state = d.reg("state", 3, 0);
    let at = |x: u128| state.q.eq(x);
    let served = d.reg("served", 1, 0);
    let begin = (sync & found & !served.q & at(0)).named("step_begins");
    let slot = d.reg("slot", ob, 0);
    let end = d.reg("slot_end", ob, 0);
    let current = rom(&d, &order, gb, slot.q).named("global");
    let is = |g: usize| current.eq(g as u128);

    d.section("before the loop: keep every reduced global, start it from the identity");
    let before = (begin & !after).named("keep_globals");
    let loop_has = |g: usize| {
        let hits: Vec<u128> = s.loops.iter().map(|(_, x)| x.contains(&g) as u128).collect();
        rom(&d, &hits, 1, index)
    };
    for (g, k) in kept.iter().enumerate() {
        k.next_when(before & loop_has(g), values[g]);
    }

    d.section("after it: the partial out as a contribution packet, the result back");
    let operation = d.reg("operation", 32, 0);
    let beat = d.reg("beat", bits_for(max_beats + 1), 0);
    let beats = rom(&d, &(0..s.globals.len()).map(|g| s.beats(g) as u128).collect::<Vec<_>>(), beat.q.width, current);
    let bytes = rom(&d, &s.globals.iter().map(|g| (g.elements * s.ty.bytes()) as u128).collect::<Vec<_>>(), 14, current);
    let elements = rom(&d, &s.globals.iter().map(|g| g.elements as u128).collect::<Vec<_>>(), bits_for(max_elements + 1), current);
    let value = (0..s.globals.len()).fold(d.lit(0, max_beats * w), |acc, g| is(g).mux(values[g].zext(max_beats * w), acc));
    let header = bytes.zext(128).shl_const(field("length").0) | operation.q.zext(128).shl_const(field("user").0);
    let payload = lane(&d, value, beat.q, w, max_beats);
    let last_beat = beat.q.eq(beats - 1u32);
    let tx_valid = at(1) | at(2);
    let tx_ready = d.input("m_axis_tready", 1);
    let tx_fire = tx_valid & tx_ready;
    d.output("m_axis_tdata", at(1).mux(header.zext(w), payload));
    d.output("m_axis_tkeep", d.lit((1u128 << wb) - 1, wb));
    d.output("m_axis_tlast", at(2) & last_beat);
    d.output("m_axis_tvalid", tx_valid);

    let rx_data = d.input("s_axis_tdata", w);
    let rx_valid = d.input("s_axis_tvalid", 1);
    let rx_last = d.input("s_axis_tlast", 1);
    let _ = d.input("s_axis_tkeep", wb);
    d.output("s_axis_tready", one);
    let in_packet = d.reg("rx_in_packet", 1, 0);
    let rx_header = rx_valid & !in_packet.q;
    let timeout = (rx_header & rx_data.bits(field("tag").0, 16).eq(ERROR_TAG as u128)).named("engine_timeout");
    // The result may start while the last contribution beats still leave.
    let rx_payload = rx_valid & in_packet.q & (at(2) | at(3));
    let rx_beat = d.reg("rx_beat", bits_for(max_beats + 1), 0);
    let result = d.reg("result", max_beats * w, 0);
    in_packet.next_when(rx_valid, !rx_last);
    rx_beat.next_when(rx_payload, rx_beat.q + 1u32).next_when(at(1), d.lit(0, rx_beat.q.width));
    let placed: Vec<Sig> = (0..max_beats).map(|b| rx_beat.q.eq(b as u128).mux(rx_data, result.q.bits(b * w, w))).collect();
    result.next_when(rx_payload, d.cat(&placed.into_iter().rev().collect::<Vec<_>>()));
    let got = d.reg("result_in", 1, 0);
    got.next_when(rx_payload & rx_last, one).next_when(at(1), zero);

    d.section(&format!("kept ∘ result, one element at a time ({} of the application's precision)", s.op.name()));
    let unit = Rc::new(combiner(s.ty)?);
    let c = d.instance(&unit, &format!("reduction_bridge_{}", s.ty.name()), "combiner");
    let e = d.reg("element", bits_for(max_elements + 1), 0);
    let kept_now = (0..s.globals.len()).fold(d.lit(0, max_elements * bits), |acc, g| is(g).mux(kept[g].q.zext(max_elements * bits), acc));
    let a = lane(&d, kept_now, e.q, bits, max_elements);
    let b = lane(&d, result.q.bits(0, max_elements * bits), e.q, bits, max_elements);
    c.input("s_axis_tdata").define(b.cat(a));
    c.input("s_axis_tvalid").define(at(4));
    c.input("m_axis_tready").define(one);
    for port in ["s_axis_tlast", "s_axis_tkeep", "s_axis_tuser"] {
        let width = port_width(&unit, port);
        if width > 0 {
            c.input(port).define(d.lit(0, width));
        }
    }
    let out = c.output("m_axis_tdata");
    let combined = match s.op {
        ReduceOp::Min => out.bits(bits, bits),
        ReduceOp::Max => out.bits(2 * bits, bits),
        _ => out.bits(0, bits),
    };
    let done_one = at(5) & c.output("m_axis_tvalid");
    let last_element = e.q.eq(elements - 1u32);
    let fresh = d.reg("fresh", max_elements * bits, 0);
    let fresh_next: Vec<Sig> = (0..max_elements).map(|k| e.q.eq(k as u128).mux(combined, fresh.q.bits(k * bits, bits))).collect();
    fresh.next_when(done_one, d.cat(&fresh_next.into_iter().rev().collect::<Vec<_>>()));
    e.next_when(done_one, e.q + 1u32).next_when(at(2), d.lit(0, e.q.width));

    d.section("the program's write ports: the identity before the loop, kept ∘ result after it");
    for (g, x) in s.globals.iter().enumerate() {
        let identities = d.cat(&vec![identity; x.elements]);
        let write_back = at(6) & is(g);
        d.output(&format!("{}_wr_en", x.name), (before & loop_has(g)) | write_back);
        d.output(&format!("{}_wr_data", x.name), write_back.mux(fresh.q.bits(0, x.elements * bits), identities));
    }

    let more = (slot.q + 1u32).lt(end.q);
    state
        .next_when(begin, (after & rom(&d, &first.windows(2).map(|w| (w[1] > w[0]) as u128).collect::<Vec<_>>(), 1, index)).mux(d.lit(1, 3), d.lit(7, 3)))
        .next_when(at(1) & tx_fire, d.lit(2, 3))
        .next_when(at(2) & tx_fire & last_beat, d.lit(3, 3))
        .next_when(at(3) & got.q, d.lit(4, 3))
        .next_when(at(4), d.lit(5, 3))
        .next_when(done_one, last_element.mux(d.lit(6, 3), d.lit(4, 3)))
        .next_when(at(6), more.mux(d.lit(1, 3), d.lit(7, 3)))
        .next_when(!sync, d.lit(0, 3));
    slot.next_when(begin, rom(&d, &first[..s.loops.len().max(1)], ob, index)).next_when(at(6), slot.q + 1u32);
    end.next_when(begin, rom(&d, &first[1..], ob, index));
    beat.next_when(at(2) & tx_fire, beat.q + 1u32).next_when(at(1), d.lit(0, beat.q.width));
    operation.next_when(at(1) & tx_fire, operation.q + 1u32);
    served.next_when(at(7), one).next_when(!sync, zero);

    d.section("done, and what the bridge saw");
    d.output("reduce_done", sync & (served.q | at(7) | !found));
    d.counter("reduce_operations", at(1) & tx_fire);
    d.counter("reduce_timeouts", timeout);
    Ok(d.finish())
}
