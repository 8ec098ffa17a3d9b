//! The side word the router stores beside every flit: end of packet, keep, and on a head flit
//! its route (output, output VC, drop), length in flits and whether it must be routed again.

use weft_hdl::netlist::{Design, Sig};

/// What the router stores beside every flit; the route fields are meaningful on head flits.
#[derive(Clone, Copy)]
pub(super) struct Layout {
    pub keep: usize,
    pub out: usize,
    pub flits: usize,
}

/// A side word's fields.
#[derive(Clone, Copy)]
pub(super) struct Side<'d> {
    pub last: Sig<'d>,
    pub keep: Sig<'d>,
    pub out: Sig<'d>,
    pub ovc: Sig<'d>,
    pub drop: Sig<'d>,
    pub flits: Sig<'d>,
    /// A head flit whose header was corrected: its route must be taken again.
    pub fix: Sig<'d>,
}

impl<'d> Side<'d> {
    pub fn pack(&self, d: &'d Design) -> Sig<'d> {
        d.cat(&[self.fix, self.flits, self.drop, self.ovc, self.out, self.keep, self.last])
    }

    pub fn unpack(word: Sig<'d>, l: Layout) -> Side<'d> {
        Side {
            last: word.bit(0),
            keep: word.bits(1, l.keep),
            out: word.bits(1 + l.keep, l.out),
            ovc: word.bit(1 + l.keep + l.out),
            drop: word.bit(2 + l.keep + l.out),
            flits: word.bits(3 + l.keep + l.out, l.flits),
            fix: word.bit(3 + l.keep + l.out + l.flits),
        }
    }

    /// `sel ? a : b`, field by field.
    pub fn select(sel: Sig<'d>, a: Side<'d>, b: Side<'d>) -> Side<'d> {
        Side {
            last: sel.mux(a.last, b.last),
            keep: sel.mux(a.keep, b.keep),
            out: sel.mux(a.out, b.out),
            ovc: sel.mux(a.ovc, b.ovc),
            drop: sel.mux(a.drop, b.drop),
            flits: sel.mux(a.flits, b.flits),
            fix: sel.mux(a.fix, b.fix),
        }
    }
}
