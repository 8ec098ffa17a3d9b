//! Operations issued from the register window (`issue_w<W>`): a host with only AXI4-Lite (a CPU
//! behind a PCIe BAR, a soft core) runs a one-element collective — a barrier, a scalar
//! allreduce — without driving the node's stream ports.
//!
//! A rising edge of `go` sends one contribution packet of one element (`value`, the element's
//! bits) with operation id `op_id` into the collective unit, between the stream's packets. The
//! result packet whose id is `op_id` while that operation is outstanding does not reach the
//! stream: its first element is kept in `result` and `status` says `done`; a timeout report with
//! that id sets `error` (the operation stays outstanding, as in the unit). Every other result goes
//! to the stream. Software gives register operations ids its stream operations do not use, and
//! issues the same operations in the same order on every node.
//!
//! Ports: `s_axis_stream_*` / `m_axis_stream_*` (the node's stream ports of port `a`),
//! `m_axis_unit_*` / `s_axis_unit_*` (the unit's host side), `go`, `value` (64 bits), `op_id`
//! (32 bits); outputs `result` (64 bits) and `status` (bit 0 busy, 1 done, 2 error).

use super::element::ElementType;
use super::engine::ERROR_TAG;
use super::packets::{merge_packets, packet_route};
use crate::axis::packetize::{sideband, sideband_header};
use crate::router::header::field;
use crate::Error;

use weft_hdl::netlist::{Axis, AxisShape, Design, Netlist, Source};

/// The block's module name: `issue_w<W>` for binary32, else `issue_<type>_w<W>`.
pub fn module_name(ty: ElementType, width: usize) -> String {
    ty.module_name("issue", width)
}

/// Builds the block for `width`-bit streams and elements of `ty`.
pub fn register_issue(width: usize, ty: ElementType) -> Result<Netlist, Error> {
    let d = Design::new();
    let (data, keep) = (AxisShape::data(width), AxisShape::data(width).with_keep());
    let stream = d.axis_in("s_axis_stream", data);
    let results = d.axis_in("s_axis_unit", keep);
    let go = d.input("go", 1);
    let value = d.input("value", 64);
    let op_id = d.input("op_id", 32);

    d.section("the register operation: one header and one element on a rising edge of go");
    let go_seen = d.reg("go_seen", 1, 0);
    go_seen.next(go);
    let busy = d.reg("busy", 1, 0);
    let done = d.reg("done", 1, 0);
    let error = d.reg("error", 1, 0);
    let sending = d.reg("sending", 1, 0);
    let at_payload = d.reg("at_payload", 1, 0);
    let start = (go & !go_seen.q & !busy.q).named("issue");
    let header = sideband_header(&d, sideband(d.lit(0, 22), d.lit(0, 16), d.lit(ty.bytes() as u128, 14)), width) | op_id.zext(width).shl_const(field("user").0);
    let r = d.later(1);
    let own = Source(Axis {
        name: "register_contribution".into(),
        shape: data,
        data: at_payload.q.mux(value.bits(0, ty.bits()).zext(width), header),
        keep: None,
        last: Some(at_payload.q),
        user: None,
        valid: sending.q,
        ready: Some(r),
    });
    let sent = (sending.q & r & at_payload.q).named("register_contribution_sent");
    at_payload.next_when(sending.q & r, !at_payload.q);
    sending.set_when(start).clear_when(sent);
    let to_unit = merge_packets(&d, "contributions", &own, &stream);
    d.connect(&to_unit, &d.axis_out("m_axis_unit", data))?;

    d.section("results: the register operation's into result and status, every other to the stream");
    let is_ours = (busy.q & results.0.data.bits(field("user").0, 32).eq(op_id)).named("result_is_ours");
    let (ours, inside) = packet_route(&d, "result", &results, is_ours);
    let [to_regs, to_stream] = d.steer(&results, ours);
    to_regs.ready(d.lit(1, 1));
    d.connect(&to_stream, &d.axis_out("m_axis_stream", keep))?;
    let result = d.reg("result", 64, 0);
    let is_error = results.0.data.bits(field("tag").0, 16).eq(ERROR_TAG as u32);
    let first_payload = d.reg("result_first_payload", 1, 0);
    first_payload.next_when(to_regs.fire(), !inside).clear_when(to_regs.fire() & results.0.last.unwrap());
    result.next_when(to_regs.fire() & first_payload.q, results.0.data.bits(0, 64));
    let header_only = to_regs.fire() & !inside & results.0.last.unwrap();
    error.set_when(header_only & is_error).clear_when(start);
    let finished = (to_regs.fire() & inside & results.0.last.unwrap()) | (header_only & !is_error);
    done.set_when(finished).clear_when(start);
    busy.set_when(start).clear_when(finished);
    d.output("result", result.q);
    d.output("status", error.q.cat(done.q).cat(busy.q));
    Ok(d.finish())
}
