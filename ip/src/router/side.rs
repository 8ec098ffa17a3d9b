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

    /// The fields of `word`, named `<word>_<field>` when the word has a name.
    pub fn unpack(word: Sig<'d>, l: Layout) -> Side<'d> {
        let base = word.name();
        let field = |s: Sig<'d>, f: &str| match &base {
            Some(b) => s.named(&format!("{b}_{f}")),
            None => s,
        };
        Side {
            last: field(word.bit(0), "last"),
            keep: field(word.bits(1, l.keep), "keep"),
            out: field(word.bits(1 + l.keep, l.out), "out"),
            ovc: field(word.bit(1 + l.keep + l.out), "ovc"),
            drop: field(word.bit(2 + l.keep + l.out), "drop"),
            flits: field(word.bits(3 + l.keep + l.out, l.flits), "flits"),
            fix: field(word.bit(3 + l.keep + l.out + l.flits), "fix"),
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
