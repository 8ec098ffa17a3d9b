//! Cycle-exact evaluation of a [`Netlist`]: what the built-in simulator runs.
//!
//! The flattened netlist is compiled once into a flat program: the combinational nodes in
//! dependency order as compact instructions (operands resolved to value slots, forwards folded
//! away, values stored in program order for locality, as two 64-bit halves so that narrow
//! instructions touch only the low one; values wider than 128 bits also keep all their words
//! beside), with each value's fan-out. [`Evaluator::settle`] is
//! event-driven: only instructions whose operands changed since the last settle are evaluated (a
//! dirty bit per instruction, scanned in program order, so every instruction runs after its
//! operands), which gives the same values as evaluating every node. Clock edges use per-domain
//! register and memory write lists and mark the fan-out of the registers and memories that
//! changed.
//!
//! This file holds the [`Evaluator`], its state and its settle; `instr` is the instruction
//! set, `compile` builds the program,
//! `clock` applies clock edges (and schedules independent clocks: [`Clocks`]), `semantics`
//! gives each operation's value.

mod clock;
mod compile;
mod instr;
mod semantics;

pub use clock::Clocks;
pub(crate) use compile::comb_order;
pub(crate) use semantics::{comb_operands, compute};

use super::vcd::Vcd;
use super::{mask, Netlist, Wire};
use clock::{RegInstr, WriteInstr};
use instr::Instr;
use num_bigint::BigUint;
use semantics::{exec, exec64, exec_wide};

/// Every slot's value as two 64-bit halves (narrow instructions touch only `lo`); a value wider
/// than 128 bits is held whole in `wide` (its slot's `lo`/`hi` stay zero).
#[derive(Clone, Debug)]
struct Values {
    lo: Vec<u64>,
    hi: Vec<u64>,
    /// Per slot: the value of a slot wider than 128 bits; empty for the others.
    wide: Vec<Option<Box<BigUint>>>,
}

impl Values {
    #[inline(always)]
    fn get(&self, s: usize) -> u128 {
        self.lo[s] as u128 | (self.hi[s] as u128) << 64
    }

    #[inline(always)]
    fn put(&mut self, s: usize, v: u128) {
        self.lo[s] = v as u64;
        self.hi[s] = (v >> 64) as u64;
    }

    fn is_wide(&self, s: usize) -> bool {
        self.wide[s].is_some()
    }

    /// The value of any slot.
    fn big(&self, s: usize) -> BigUint {
        match &self.wide[s] {
            Some(v) => (**v).clone(),
            None => BigUint::from(self.get(s)),
        }
    }

    /// Sets any slot (`v` already masked to its width); says whether it changed.
    fn put_big(&mut self, s: usize, v: BigUint) -> bool {
        match &mut self.wide[s] {
            Some(old) => {
                let changed = **old != v;
                **old = v;
                changed
            }
            None => {
                let v = low128(&v);
                let changed = self.get(s) != v;
                self.put(s, v);
                changed
            }
        }
    }
}

/// The low 128 bits of `v`.
pub fn low128(v: &BigUint) -> u128 {
    let mut digits = v.iter_u64_digits();
    let lo = digits.next().unwrap_or(0) as u128;
    let hi = digits.next().unwrap_or(0) as u128;
    lo | hi << 64
}

/// Bits `lo..lo + width` of `v` (`width` at most 128).
pub(crate) fn bits_of(v: &BigUint, lo: usize, width: usize) -> u128 {
    low128(&(v >> lo)) & mask(width)
}

/// `v` of `width` bits masked to that width.
pub(crate) fn mask_big(v: BigUint, width: usize) -> BigUint {
    if v.bits() as usize <= width {
        v
    } else {
        v & ((BigUint::from(1u8) << width) - 1u8)
    }
}

/// A netlist with its register state.
#[derive(Clone, Debug)]
pub struct Evaluator {
    net: Netlist,
    /// Combinational nodes in dependency order (inputs, registers, constants and forwards
    /// excluded); instruction `p` writes value slot `p`.
    prog: Vec<Instr>,
    /// Per node: the slot of `values` holding its value (a forward shares its target's).
    /// Instructions come first, in program order, then inputs, constants and registers.
    slot: Vec<u32>,
    /// Per slot: the program positions reading it (`fan[fan_start[s]..fan_start[s + 1]]`).
    fan_start: Vec<u32>,
    fan: Vec<u32>,
    /// Per memory: the program positions reading it.
    mem_readers: Vec<Vec<u32>>,
    /// One bit per program position: to be evaluated at the next settle; `dirty_words` has one
    /// bit per word of `dirty` that may be non-zero.
    dirty: Vec<u64>,
    dirty_words: Vec<u64>,
    /// Per clock domain: its registers and memory write ports.
    regs: Vec<Vec<RegInstr>>,
    writes: Vec<Vec<WriteInstr>>,
    /// Scratch for clock edges.
    next: Vec<(u32, u128)>,
    next_wide: Vec<(u32, num_bigint::BigUint)>,
    pending: Vec<(usize, usize, u128)>,
    values: Values,
    inputs: Vec<(String, usize)>,
    /// Per memory: its words, each as `chunks` 128-bit pieces (one for memories of at most 128
    /// bits), least significant first.
    memories: Vec<Vec<u128>>,
}

const NONE: u32 = u32::MAX;

impl Evaluator {
    /// The netlist being evaluated, flattened (child instances inlined).
    pub fn netlist(&self) -> &Netlist {
        &self.net
    }

    /// Index of a named input, for [`Evaluator::set`].
    pub fn input(&self, name: &str) -> Option<Wire> {
        self.inputs.iter().find(|(n, _)| n == name).map(|(_, i)| Wire(*i))
    }

    /// Sets an input of at most 128 bits (wider ones: [`Evaluator::set_big`]).
    pub fn set(&mut self, input: Wire, value: u128) {
        let s = self.slot[input.0] as usize;
        if self.values.is_wide(s) {
            return self.set_big(input, &BigUint::from(value));
        }
        let v = value & mask(self.net.nodes[input.0].width);
        if self.values.get(s) != v {
            self.values.put(s, v);
            self.changed(s);
            // A combinational node set by hand is recomputed at the next settle, as before.
            if s < self.prog.len() {
                mark(&mut self.dirty, &mut self.dirty_words, s as u32);
            }
        }
    }

    /// Marks the readers of slot `s` for the next settle.
    #[inline(always)]
    fn changed(&mut self, s: usize) {
        let (from, to) = (self.fan_start[s] as usize, self.fan_start[s + 1] as usize);
        for &p in &self.fan[from..to] {
            mark(&mut self.dirty, &mut self.dirty_words, p);
        }
    }

    /// Sets an input of any width.
    pub fn set_big(&mut self, input: Wire, value: &BigUint) {
        let s = self.slot[input.0] as usize;
        let v = mask_big(value.clone(), self.net.nodes[input.0].width);
        if self.values.put_big(s, v) {
            self.changed(s);
            if s < self.prog.len() {
                mark(&mut self.dirty, &mut self.dirty_words, s as u32);
            }
        }
    }

    /// The value of `w`, which is at most 128 bits wide (wider ones: [`Evaluator::get_big`]).
    pub fn get(&self, w: Wire) -> u128 {
        let s = self.slot[w.0] as usize;
        assert!(!self.values.is_wide(s), "Evaluator::get on the {}-bit value {:?}: use get_big or get_bits", self.net.nodes[w.0].width, self.net.nodes[w.0].name);
        self.values.get(s)
    }

    /// The value of `w`, of any width.
    pub fn get_big(&self, w: Wire) -> BigUint {
        self.values.big(self.slot[w.0] as usize)
    }

    /// Bits `lo..lo + width` (at most 128) of `w`, of any width: a field of a wide value.
    pub fn get_bits(&self, w: Wire, lo: usize, width: usize) -> u128 {
        bits_of(&self.get_big(w), lo, width)
    }

    /// Sets bits `lo..lo + width` (at most 128) of input `input`, keeping its other bits.
    pub fn set_bits(&mut self, input: Wire, lo: usize, width: usize, value: u128) {
        let old = self.get_big(input);
        let field = BigUint::from(mask(width)) << lo;
        let v = (old.clone() ^ (old & &field)) | (BigUint::from(value & mask(width)) << lo);
        self.set_big(input, &v);
    }

    /// Sets bits `lo..lo + width` of the input called `name` (see [`Evaluator::set_bits`]).
    pub fn set_input_bits(&mut self, name: &str, lo: usize, width: usize, value: u128) {
        let w = self.input(name).unwrap_or_else(|| panic!("netlist has no input `{name}`"));
        self.set_bits(w, lo, width, value);
    }

    /// Bits `lo..lo + width` of the output called `name`; panics when there is none.
    pub fn get_output_bits(&self, name: &str, lo: usize, width: usize) -> u128 {
        let o = self.net.outputs.iter().find(|o| o.name == name).unwrap_or_else(|| panic!("netlist has no output `{name}`"));
        self.get_bits(o.wire, lo, width)
    }

    /// The output called `name`, of any width; panics when there is none.
    pub fn get_output_big(&self, name: &str) -> BigUint {
        let o = self.net.outputs.iter().find(|o| o.name == name).unwrap_or_else(|| panic!("netlist has no output `{name}`"));
        self.get_big(o.wire)
    }

    /// Sets the input called `name`; panics when there is none (a testbench naming error).
    pub fn set_input(&mut self, name: &str, value: u128) {
        let w = self.input(name).unwrap_or_else(|| panic!("netlist has no input `{name}`"));
        self.set(w, value);
    }

    /// The output called `name`; panics when there is none.
    pub fn get_output(&self, name: &str) -> u128 {
        self.output(name).unwrap_or_else(|| panic!("netlist has no output `{name}`"))
    }

    /// Holds the synchronous reset for `cycles` clock edges.
    pub fn reset(&mut self, cycles: usize) {
        for _ in 0..cycles {
            self.settle();
            self.clock(true);
        }
    }

    /// The output called `name` (at most 128 bits wide), or `None` when there is none.
    pub fn output(&self, name: &str) -> Option<u128> {
        self.net.outputs.iter().find(|o| o.name == name).map(|o| self.get(o.wire))
    }

    /// Propagates inputs and register outputs through the combinational logic: evaluates the
    /// instructions whose operands changed, in program order.
    pub fn settle(&mut self) {
        let Evaluator { prog, fan_start, fan, dirty, dirty_words, values, memories, .. } = self;
        // Readers always come later in the program, so one forward scan reaches every change.
        for t in 0..dirty_words.len() {
            while dirty_words[t] != 0 {
                let k = t * 64 + dirty_words[t].trailing_zeros() as usize;
                while dirty[k] != 0 {
                    let bits = dirty[k];
                    dirty[k] = bits & (bits - 1);
                    let p = k * 64 + bits.trailing_zeros() as usize;
                    let ins = &prog[p];
                    let changed = if ins.narrow {
                        let v = exec64(ins, &values.lo, memories);
                        let changed = values.lo[p] != v;
                        values.lo[p] = v;
                        changed
                    } else if ins.wide {
                        let v = exec_wide(ins, values, memories);
                        values.put_big(p, v)
                    } else {
                        let v = exec(ins, values, memories);
                        let changed = values.get(p) != v;
                        values.put(p, v);
                        changed
                    };
                    if changed {
                        for &q in &fan[fan_start[p] as usize..fan_start[p + 1] as usize] {
                            mark(dirty, dirty_words, q);
                        }
                    }
                }
                dirty_words[t] &= !(1 << (k & 63));
            }
        }
    }

    /// Starts a waveform of this netlist (top scope `top`, one cycle per `period_ns`) on `out`;
    /// call [`Evaluator::sample`] once per cycle after [`Evaluator::settle`].
    pub fn vcd<W: std::io::Write>(&self, out: W, top: &str, period_ns: u64) -> std::io::Result<Vcd<W>> {
        Vcd::new(out, &self.net, top, period_ns)
    }

    /// Writes this cycle's settled values to `vcd`.
    pub fn sample<W: std::io::Write>(&self, vcd: &mut Vcd<W>) -> std::io::Result<()> {
        vcd.sample(&|w| {
            let width = self.net.nodes[w.0].width;
            match self.values.is_wide(self.slot[w.0] as usize) {
                true => format!("{:0width$}", self.get_big(w).to_str_radix(2)),
                false => format!("{:0width$b}", self.get(w)),
            }
        })
    }

    /// Index of the clock domain called `name` (`clk` is 0).
    pub fn domain(&self, name: &str) -> Option<usize> {
        self.net.domains.iter().position(|d| d.name == name)
    }
}

/// Marks program position `p` for the next settle.
#[inline(always)]
fn mark(dirty: &mut [u64], dirty_words: &mut [u64], p: u32) {
    let p = p as usize;
    dirty[p >> 6] |= 1 << (p & 63);
    dirty_words[p >> 12] |= 1 << ((p >> 6) & 63);
}
