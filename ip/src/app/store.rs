//! The on-chip memory of one datum, map or schedule: `B` banks (address = offset·B + bank), every
//! read port registered so each bank maps to block RAM, and writes from several sources (the
//! host, a loop's write-back, a bank's accumulator) merged into each bank's one write port, the
//! first source listed winning.

use std::cell::RefCell;

use weft_hdl::netlist::{Design, Mem, Sig};

/// Bits of an address in `0..n` (at least 1).
pub(super) fn bits_for(n: usize) -> usize {
    (usize::BITS - n.saturating_sub(1).max(1).leading_zeros()) as usize
}

/// `x` delayed by `cycles` registers (none: `x`), the last named `name`.
pub(super) fn delay<'d>(d: &'d Design, x: Sig<'d>, cycles: usize, name: &str) -> Sig<'d> {
    let mut y = x;
    for c in 0..cycles {
        let w = d.net().history(y.wire, None, None);
        y = d.sig(w);
        if c + 1 == cycles {
            y = y.named(name);
        }
    }
    y
}

type Write<'d> = (Sig<'d>, Sig<'d>, Sig<'d>);

pub(super) struct Store<'d> {
    d: &'d Design,
    name: String,
    banks: Vec<Mem<'d>>,
    /// Bank bits (low address bits) and offset bits.
    lb: usize,
    ob: usize,
    pub width: usize,
    writes: RefCell<Vec<Vec<Write<'d>>>>,
}

impl<'d> Store<'d> {
    /// `capacity` words of `width` bits in `banks` banks (powers of two, capacity ≥ 2·banks).
    pub fn new(d: &'d Design, name: &str, width: usize, banks: usize, capacity: usize) -> Store<'d> {
        let depth = capacity / banks;
        let mems = (0..banks).map(|b| d.memory(&if banks == 1 { format!("{name}_mem") } else { format!("{name}_bank{b}") }, width, depth)).collect();
        Store { d, name: name.to_string(), banks: mems, lb: bits_for(banks) * usize::from(banks > 1), ob: bits_for(depth), width, writes: RefCell::new(vec![vec![]; banks]) }
    }

    pub fn banks(&self) -> usize {
        self.banks.len()
    }

    /// Width of an address.
    pub fn address_bits(&self) -> usize {
        self.lb + self.ob
    }

    fn bank_of(&self, addr: Sig<'d>) -> Sig<'d> {
        addr.bits(0, self.lb.max(1))
    }

    pub fn offset_of(&self, addr: Sig<'d>) -> Sig<'d> {
        addr.bits(self.lb, self.ob)
    }

    /// Whether `addr` is in bank `b`.
    pub fn in_bank(&self, addr: Sig<'d>, b: usize) -> Sig<'d> {
        if self.banks.len() == 1 {
            self.d.lit(1, 1)
        } else {
            self.bank_of(addr).eq(b as u32)
        }
    }

    /// The word at `addr` one cycle later.
    pub fn read(&self, addr: Sig<'d>, name: &str) -> Sig<'d> {
        let addr = addr.resize(self.address_bits());
        if self.banks.len() == 1 {
            return self.banks[0].read_registered(self.d.lit(1, 1), addr, name);
        }
        let words: Vec<Sig<'d>> = (0..self.banks.len()).map(|b| self.read_bank(b, self.d.lit(1, 1), self.offset_of(addr), &format!("{name}_bank{b}"))).collect();
        let bank_bits = self.bank_of(addr).wire;
        let w = self.d.net().history(bank_bits, None, None);
        let bank = self.d.sig(w).named(&format!("{name}_bank"));
        (1..words.len()).fold(words[0], |acc, b| bank.eq(b as u32).mux(words[b], acc)).named(name)
    }

    /// The word at `offset` of bank `b` one cycle later (holding while `enable` is low).
    pub fn read_bank(&self, b: usize, enable: Sig<'d>, offset: Sig<'d>, name: &str) -> Sig<'d> {
        self.banks[b].read_registered(enable, offset, name)
    }

    /// Writes `data` at `addr` when `enable`.
    pub fn write(&self, enable: Sig<'d>, addr: Sig<'d>, data: Sig<'d>) {
        let addr = addr.resize(self.address_bits());
        for b in 0..self.banks.len() {
            self.write_bank(b, enable & self.in_bank(addr, b), self.offset_of(addr), data);
        }
    }

    /// Writes `data` at `offset` of bank `b` when `enable`.
    pub fn write_bank(&self, b: usize, enable: Sig<'d>, offset: Sig<'d>, data: Sig<'d>) {
        self.writes.borrow_mut()[b].push((enable, offset, data));
    }

    /// The host's ports: `<name>_wr_en`, `<name>_wr_addr`, `<name>_wr_data` (written only when no
    /// other source writes) and, if `readable`, `<name>_rd_addr` → `<name>_rd_data`.
    pub fn host_ports(&self, readable: bool) {
        let d = self.d;
        if readable {
            let addr = d.input(&format!("{}_rd_addr", self.name), self.address_bits());
            d.output(&format!("{}_rd_data", self.name), self.read(addr, &format!("{}_rd_value", self.name)));
        }
        let en = d.input(&format!("{}_wr_en", self.name), 1);
        let addr = d.input(&format!("{}_wr_addr", self.name), self.address_bits());
        let data = d.input(&format!("{}_wr_data", self.name), self.width);
        self.write(en, addr, data);
    }

    /// Connects each bank's write port: the first source that writes wins.
    pub fn finish(&self) {
        for (b, writes) in self.writes.borrow().iter().enumerate() {
            let Some(&(mut en, mut addr, mut data)) = writes.last() else { continue };
            for &(e, a, w) in writes.iter().rev().skip(1) {
                addr = e.mux(a, addr);
                data = e.mux(w, data);
                en = e | en;
            }
            self.banks[b].write(en, addr, data);
        }
    }
}
