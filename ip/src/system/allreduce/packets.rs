//! Whole packets through the collective blocks' shared ports: a route chosen at a packet's
//! header and held to its last beat, and two packet streams merged a whole packet at a time.

use weft_hdl::netlist::{Axis, Design, Sig, Source};

/// A packet's route, `at_header` as its header beat gave it, held to its last beat; and whether
/// the beat on `packets` is past a header.
pub fn packet_route<'d>(d: &'d Design, name: &str, packets: &Source<'d>, at_header: Sig<'d>) -> (Sig<'d>, Sig<'d>) {
    let inside = d.reg(&format!("{name}_in_packet"), 1, 0);
    let route = d.reg(&format!("{name}_route"), 1, 0);
    let sel = inside.q.mux(route.q, at_header).named(&format!("{name}_to_first"));
    let fire = packets.fire();
    inside.next_when(fire, !packets.0.last.unwrap());
    route.next_when(fire & !inside.q, at_header);
    (sel, inside.q)
}

/// Two packet streams into one, a whole packet at a time; `x` first when both wait.
pub fn merge_packets<'d>(d: &'d Design, name: &str, x: &Source<'d>, y: &Source<'d>) -> Source<'d> {
    let busy = d.reg(&format!("{name}_busy"), 1, 0);
    let cur = d.reg(&format!("{name}_from_first"), 1, 0);
    let sel = busy.q.mux(cur.q, x.0.valid).named(&format!("{name}_sel"));
    let r = d.later(1);
    x.ready(sel & r);
    y.ready(!sel & r);
    let valid = sel.mux(x.0.valid, y.0.valid);
    let last = sel.mux(x.0.last.unwrap(), y.0.last.unwrap());
    busy.next_when(valid & r, !last);
    cur.next(sel);
    Source(Axis { name: name.into(), data: sel.mux(x.0.data, y.0.data), keep: x.0.keep.map(|k| sel.mux(k, y.0.keep.unwrap())), last: Some(last), valid, ready: Some(r), ..x.0.clone() })
}
