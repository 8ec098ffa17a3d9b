//! Constant tables in hardware: `entries[i]` at `index = i`, as a tree of multiplexers over
//! literals (synthesis maps it to LUT ROM).

use weft_hdl::netlist::{Design, Sig};

/// `entries[i]` at `index = i`, `width` bits each; indices past the end give 0 (the index must
/// have enough bits for the table).
pub(crate) fn rom<'d>(d: &'d Design, entries: &[u128], width: usize, index: Sig<'d>) -> Sig<'d> {
    let mut level: Vec<Sig<'d>> = entries.iter().map(|&v| d.lit(v, width)).collect();
    let mut bit = 0;
    while level.len() > 1 {
        level = level.chunks(2).map(|p| if p.len() == 2 { index.bit(bit).mux(p[1], p[0]) } else { index.bit(bit).mux(d.lit(0, width), p[0]) }).collect();
        bit += 1;
    }
    level.pop().unwrap_or_else(|| d.lit(0, width))
}
