//! Clock domains. Every register and memory belongs to one; index 0 is `clk` with reset `rst`.
//! A domain is named after its clock port (`rx_clk`, `s_clk`); its synchronous reset is the same
//! name with `clk` replaced by `rst` (`rx_rst`, `s_rst`).
//!
//! A register may take a value computed from registers or memories of another domain only when it
//! is marked as the first flop of a synchroniser ([`Netlist::synchronize`]); a memory whose reads
//! happen in another domain must be marked as crossing ([`Netlist::crossing_memory`], the storage
//! of a clock-crossing FIFO, whose pointers cross through synchronisers). [`Netlist::check_domains`]
//! refuses any other crossing and names both ends. Module inputs belong to no domain and are not
//! checked: a block documents which clock each port is synchronous to.

use super::{Netlist, Op, Wire};
use crate::Error;

/// A clock domain: its clock port and how its synchronous reset reaches the module.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Domain {
    /// Clock port name.
    pub name: String,
    /// Where the domain's reset comes from.
    pub reset: Reset,
}

/// How a domain's synchronous reset reaches the module.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reset {
    /// An active-high port named after the clock (`rx_clk` → `rx_rst`).
    Derived,
    /// An active-high port of this name (`clk_n3` → `rst_n3`).
    Named(String),
    /// An active-low port (Vitis's `ap_rst_n`) registered (one flop, initialised to reset) into
    /// the active-high reset `reset`.
    Low {
        /// The active-low input port.
        port: String,
        /// The active-high reset registered from it.
        reset: String,
    },
}

impl Default for Domain {
    fn default() -> Domain {
        Domain { name: "clk".into(), reset: Reset::Derived }
    }
}

impl Domain {
    /// The synchronous active-high reset of the domain, as its registers read it.
    pub fn reset(&self) -> String {
        match &self.reset {
            Reset::Named(reset) | Reset::Low { reset, .. } => reset.clone(),
            Reset::Derived => match self.name.strip_suffix("clk") {
                Some(stem) => format!("{stem}rst"),
                None => format!("{}_rst", self.name),
            },
        }
    }

    /// The reset port of the module: the active-high reset, or the active-low port it is
    /// registered from.
    pub fn reset_port(&self) -> String {
        match &self.reset {
            Reset::Low { port, .. } => port.clone(),
            _ => self.reset(),
        }
    }
}

impl Netlist {
    /// The index of the domain clocked by `clock` (added when new).
    pub fn domain_named(&mut self, clock: &str) -> usize {
        if let Some(i) = self.domains.iter().position(|d| d.name == clock) {
            return i;
        }
        assert!(clock.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') && clock.ends_with("clk"), "clock domain `{clock}`: a clock port name ending in `clk`");
        self.domains.push(Domain { name: clock.to_string(), reset: Reset::Derived });
        self.domains.len() - 1
    }

    /// Makes domain `domain` the one clocked by `clock` with reset `reset` (see [`Reset`]):
    /// for tops whose clock names follow another convention (`clk_n3`/`rst_n3`, Vitis's
    /// `ap_clk`/`ap_rst_n`).
    pub fn set_domain_ports(&mut self, domain: usize, clock: &str, reset: Reset) {
        assert!(!self.domains.iter().enumerate().any(|(k, d)| k != domain && d.name == clock), "clock domain `{clock}` exists twice");
        if domain == self.domains.len() {
            self.domains.push(Domain::default());
        }
        self.domains[domain] = Domain { name: clock.to_string(), reset };
    }

    /// Registers and memories made from now on belong to `domain`; returns the previous one.
    pub fn set_domain(&mut self, domain: usize) -> usize {
        std::mem::replace(&mut self.domain, domain)
    }

    /// `value` (from another domain) brought into the current one through `stages` ≥ 2 flops
    /// marked as a synchroniser (`ASYNC_REG` in the Verilog). Only meaningful for a single bit or
    /// a Gray-coded value, which changes one bit at a time.
    pub fn synchronize(&mut self, value: Wire, stages: usize, name: &str) -> Wire {
        assert!(stages >= 2, "synchroniser {name}: at least 2 stages");
        let mut q = value;
        for k in 0..stages {
            q = self.history(q, None, Some(0));
            self.nodes[q.0].crossing = true;
            self.name(q, &format!("{name}_sync{k}"));
        }
        q
    }

    /// Marks memory `mem` as read from another domain than the one that writes it.
    pub fn crossing_memory(&mut self, mem: usize) {
        self.memories[mem].crossing = true;
    }

    /// Refuses a value that crosses domains outside a synchroniser or a crossing memory, naming
    /// the register (or memory) that samples it, the source, and both domains.
    pub fn check_domains(&self) -> Result<(), Error> {
        let flat = self.flatten();
        flat.check_flat_domains()
    }

    pub(crate) fn check_flat_domains(&self) -> Result<(), Error> {
        if self.domains.len() == 1 {
            return Ok(());
        }
        let order = super::eval::comb_order(self);
        // Bit d set: the value depends on a register or memory of domain d this cycle.
        let mut from = vec![0u64; self.nodes.len()];
        for (i, node) in self.nodes.iter().enumerate() {
            if let Op::Reg { .. } = node.op {
                from[i] = 1 << node.domain;
            }
        }
        for &i in &order {
            from[i] = match &self.nodes[i].op {
                Op::MemRead { mem, addr } => {
                    let m = &self.memories[*mem];
                    from[addr.0] | if m.crossing { 0 } else { 1 << m.domain }
                }
                op => super::eval::comb_operands(op).iter().fold(0, |acc, w| acc | from[w.0]),
            };
        }
        let source = |mut w: Wire, domain: usize| -> String {
            // Walk back to a register or memory of the foreign domain, for the message.
            loop {
                let node = &self.nodes[w.0];
                match &node.op {
                    Op::Reg { .. } => return self.describe(w),
                    Op::MemRead { mem, addr } if from[addr.0] & !(1 << domain) == 0 => return format!("memory `{}`", self.memories[*mem].name),
                    op => match super::eval::comb_operands(op).into_iter().find(|x| from[x.0] & !(1 << domain) != 0) {
                        Some(x) => w = x,
                        None => return self.describe(w),
                    },
                }
            }
        };
        let refuse = |sink: String, domain: usize, w: Wire| {
            let other = (0..64).find(|d| *d != domain && from[w.0] >> d & 1 == 1).unwrap();
            Err(Error::Design(format!(
                "clock-domain crossing without a synchroniser: {sink} (domain `{}`) samples {} (domain `{}`)",
                self.domains[domain].name,
                source(w, domain),
                self.domains[other].name
            )))
        };
        for (i, node) in self.nodes.iter().enumerate() {
            if let Op::Reg { d, enable, .. } = &node.op {
                if node.crossing {
                    continue;
                }
                for w in std::iter::once(*d).chain(*enable) {
                    if from[w.0] & !(1u64 << node.domain) != 0 {
                        return refuse(self.describe(Wire(i)), node.domain, w);
                    }
                }
            }
        }
        for m in &self.memories {
            if let Some((e, a, d)) = m.write {
                for w in [e, a, d] {
                    if from[w.0] & !(1u64 << m.domain) != 0 {
                        return refuse(format!("the write port of memory `{}`", m.name), m.domain, w);
                    }
                }
            }
        }
        Ok(())
    }

    fn describe(&self, w: Wire) -> String {
        match &self.nodes[w.0].name {
            Some(n) => format!("register `{n}`"),
            None => format!("an unnamed register (node {})", w.0),
        }
    }
}
