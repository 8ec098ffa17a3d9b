//! Routing a corrected header again. An InterNode input routes a head flit from its header as
//! received, beside the SEC-DED check, so the correction is not on the route's path; when the
//! check corrected a bit, the stored route may be wrong and the packet is marked `fix`. When
//! such a packet reaches its VC's head, the input routes the stored (corrected) header again
//! and writes the route over the head's (clearing `fix`); the allocator takes no packet marked
//! `fix`. The packet waits one cycle more than a clean one; nothing else changes.

use weft_hdl::netlist::{Design, Sig};

use super::arrival::{route, Here};
use super::config::{Direction, RouterConfig};
use super::side::{Layout, Side};

/// The second routing of VC `v` of input `name`: while the head (`head_valid`, side word
/// `head`, first data word `header`) is a corrected packet not yet routed again and not
/// leaving (`pop`), its route is taken from the stored header. Returns the load and the side
/// word the buffer writes over its head's, and whether the packet is found to be dropped now
/// (for the input's drop counter).
#[allow(clippy::too_many_arguments)]
pub(super) fn fix_head<'d>(
    d: &'d Design,
    c: &RouterConfig,
    l: &Layout,
    here: Here<'d>,
    name: &str,
    from: Direction,
    v: usize,
    head_valid: Sig<'d>,
    head: Side<'d>,
    header: Sig<'d>,
    pop: Sig<'d>,
) -> (Sig<'d>, Sig<'d>, Sig<'d>) {
    d.section(&format!("input {name} vc {v}: a corrected header routed again"));
    let r = route(d, c, here, header.bits(0, super::header::ECC_LO), Some(from), d.lit(v as u128, 1), l.out, l.flits);
    let load = (head_valid & head.fix & !pop).named(&format!("{name}_vc{v}_reroute"));
    let fixed = Side { last: head.last, keep: head.keep, out: r.out, ovc: r.ovc, drop: r.drop, flits: r.flits, fix: d.lit(0, 1) };
    (load, fixed.pack(d), load & r.drop)
}
