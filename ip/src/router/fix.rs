//! Routing a corrected header again. An InterNode input routes a head flit from its header as
//! received, beside the SEC-DED check, so the correction is not on the route's path; when the
//! check corrected a bit, the stored route may be wrong and the packet is marked `fix`. When
//! such a packet reaches its VC's head, the input routes the stored (corrected) header again
//! into registers that stand in for the head's route until the packet is allocated. The packet
//! waits one cycle more than a clean one; nothing else changes.

use weft_hdl::netlist::{Design, Sig};

use super::arrival::route;
use super::config::{Direction, RouterConfig};
use super::side::{Layout, Side};

/// The head of VC `v` of input `name` as the allocator sees it: its route taken from the
/// registers of a second routing while the head is a corrected packet. Returns that side word,
/// the signal the allocator defines when it takes the packet, and a fixed packet found to be
/// dropped now (for the input's drop counter).
#[allow(clippy::too_many_arguments)]
pub(super) fn fix_head<'d>(d: &'d Design, c: &RouterConfig, l: &Layout, here: [Sig<'d>; 3], name: &str, from: Direction, v: usize, head_valid: Sig<'d>, head: Side<'d>, header: Sig<'d>, pop: Sig<'d>) -> (Side<'d>, Sig<'d>, Sig<'d>) {
    d.section(&format!("input {name} vc {v}: a corrected header routed again"));
    let taken = d.later(1);
    let valid = d.reg(&format!("{name}_vc{v}_fixed"), 1, 0);
    let r = route(d, c, here, header.bits(0, super::header::ECC_LO), Some(from), d.lit(v as u128, 1), l.out, l.flits);
    let start = head_valid & head.fix & !valid.q & !pop;
    valid.next(start | valid.q & !taken);
    let keep = |field: &str, value: Sig<'d>| {
        let reg = d.reg(&format!("{name}_vc{v}_fixed_{field}"), value.width, 0);
        reg.next_when(start, value);
        reg.q
    };
    let fixed = Side { last: head.last, keep: head.keep, out: keep("out", r.out), ovc: keep("ovc", r.ovc), drop: keep("drop", r.drop), flits: keep("flits", r.flits), fix: d.lit(0, 1) };
    let mut side = Side::select(valid.q, fixed, head);
    side.fix = head.fix & !valid.q;
    (side, taken, start & r.drop)
}
