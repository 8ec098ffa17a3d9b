//! The accumulators of a datum a loop increments: per bank of its memory, the increment whose
//! address names the bank is read (registered), added in an adder of A stages and written back,
//! λ = A + 2 cycles after it arrived. Counters see a schedule that breaks the rule: `hazards`
//! (an increment of an element fewer than λ cycles after the last one) and `bank_conflicts`
//! (two increments of one bank in a cycle: only one is kept).

use std::rc::Rc;

use weft_hdl::netlist::{Design, Netlist, Sig};

use super::store::{bits_for, delay, Store};

/// One increment: valid, the element's address, the value (every component).
pub(super) type Update<'d> = (Sig<'d>, Sig<'d>, Sig<'d>);

/// What the accumulators of one store report to the loop.
pub(super) struct Accumulators<'d> {
    /// High while an increment is on its way to memory.
    pub busy: Sig<'d>,
    pub conflicts: Vec<Sig<'d>>,
    pub hazards: Vec<Sig<'d>>,
}

/// Accumulators for `updates` into `store` (components of `slot` bits), named from `prefix`;
/// `add` is the adder (A = `adder` stages) instantiated per component as module `module`.
#[allow(clippy::too_many_arguments)]
pub(super) fn accumulate<'d>(d: &'d Design, store: &Store<'d>, updates: &[Update<'d>], slot: usize, lambda: usize, adder: usize, add: &Rc<Netlist>, module: &str, prefix: &str) -> Accumulators<'d> {
    let dim = store.width / slot;
    let mut busy = d.lit(0, 1);
    let (mut conflicts, mut hazards) = (vec![], vec![]);
    for b in 0..store.banks() {
        let p = format!("{prefix}_bank{b}");
        let hits: Vec<Sig> = updates.iter().map(|(valid, addr, _)| *valid & store.in_bank(*addr, b)).collect();
        for i in 0..hits.len() {
            for j in i + 1..hits.len() {
                conflicts.push(hits[i] & hits[j]);
            }
        }
        let ob = store.address_bits() - bits_for(store.banks()) * usize::from(store.banks() > 1);
        let mut offset = d.lit(0, ob);
        let mut increment = d.lit(0, store.width);
        for ((_, addr, inc), h) in updates.iter().zip(&hits) {
            offset = offset | h.mux(store.offset_of(addr.resize(store.address_bits())), d.lit(0, ob));
            increment = increment | h.mux(*inc, d.lit(0, store.width));
        }
        let in_valid = d.reg(&format!("{p}_valid"), 1, 0);
        in_valid.next(d.cat(&hits).any());
        let in_off = d.reg(&format!("{p}_offset"), ob, 0);
        in_off.next(offset);
        let in_inc = d.reg(&format!("{p}_increment"), store.width, 0);
        in_inc.next(increment);
        // An increment of an element still in the accumulator (fewer than λ cycles ago).
        let mut recent = vec![];
        let (mut v, mut o) = (in_valid.q, in_off.q);
        for c in 1..lambda {
            v = delay(d, v, 1, &format!("{p}_recent{c}_valid"));
            o = delay(d, o, 1, &format!("{p}_recent{c}_offset"));
            recent.push(v & o.eq(in_off.q));
        }
        hazards.push(in_valid.q & d.cat(&recent).any());
        let old = store.read_bank(b, in_valid.q, in_off.q, &format!("{p}_old"));
        let add_valid = delay(d, in_valid.q, 1, &format!("{p}_add_valid"));
        let add_off = delay(d, in_off.q, 1, &format!("{p}_add_offset"));
        let add_inc = delay(d, in_inc.q, 1, &format!("{p}_add_increment"));
        let mut sums = vec![];
        let mut sum_valid = d.lit(0, 1);
        for i in 0..dim {
            let unit = d.instance(add, module, &format!("{p}_add{i}"));
            unit.input("s_axis_tdata").define(add_inc.bits(i * slot, slot).cat(old.bits(i * slot, slot)));
            unit.input("s_axis_tvalid").define(add_valid);
            unit.input("s_axis_tlast").define(d.lit(0, 1));
            unit.input("m_axis_tready").define(d.lit(1, 1));
            sums.push(unit.output("m_axis_tdata"));
            sum_valid = unit.output("m_axis_tvalid");
        }
        let sum = sums.into_iter().rev().reduce(|hi, lo| hi.cat(lo)).expect("a datum has a component");
        store.write_bank(b, sum_valid, delay(d, add_off, adder, &format!("{p}_sum_offset")), sum);
        // Busy until the last sum is written.
        let tail = d.reg(&format!("{p}_tail"), bits_for(lambda + 2), 0);
        tail.next(in_valid.q.mux(tail.q.lit(lambda as u128 - 1, tail.q.width), tail.q.any().mux(tail.q - 1u32, tail.q)));
        busy = busy | in_valid.q | tail.q.any();
    }
    Accumulators { busy, conflicts, hazards }
}
