//! Clock edges: each domain's register and memory write lists, the edges of one or more
//! domains at an instant, and the schedule of independent clocks ([`Clocks`]).

use super::{bits_of, mark, Evaluator, NONE};

/// A register of one clock domain, operands resolved.
#[derive(Clone, Debug)]
pub(super) struct RegInstr {
    /// Its value slot.
    pub(super) node: u32,
    pub(super) d: u32,
    /// `u32::MAX`: always enabled.
    pub(super) enable: u32,
    pub(super) reset: Option<u128>,
    /// Wider than 128 bits.
    pub(super) wide: bool,
}

/// A memory write port of one clock domain: memory, enable, address, data.
#[derive(Clone, Debug)]
pub(super) struct WriteInstr {
    pub(super) mem: usize,
    pub(super) enable: u32,
    pub(super) addr: u32,
    pub(super) data: u32,
    /// 128-bit pieces of a word (one for words of at most 128 bits).
    pub(super) chunks: usize,
}

impl Evaluator {
    /// A rising clock edge of every domain at once (settle first). `reset` is the synchronous
    /// reset of every domain.
    pub fn clock(&mut self, reset: bool) {
        for d in 0..self.regs.len() {
            self.collect_edge(d, reset);
        }
        self.apply_edges();
    }

    /// A rising edge of the clocks of `edges` (domain, its reset) at the same instant: every
    /// register and memory of those domains takes its input, all from values settled before.
    pub fn clock_domains(&mut self, edges: &[(usize, bool)]) {
        for (k, &(d, reset)) in edges.iter().enumerate() {
            // A domain listed twice rises once, with its first reset.
            if d < self.regs.len() && !edges[..k].iter().any(|(e, _)| *e == d) {
                self.collect_edge(d, reset);
            }
        }
        self.apply_edges();
    }

    /// Queues the next register values and memory writes of domain `d` (from settled values).
    fn collect_edge(&mut self, d: usize, reset: bool) {
        let values = &self.values;
        // Only registers whose value changes are queued.
        for r in &self.regs[d] {
            if r.wide {
                let v = match (reset, r.reset) {
                    (true, Some(init)) => init.into(),
                    _ if r.enable == NONE || values.get(r.enable as usize) != 0 => values.big(r.d as usize),
                    _ => continue,
                };
                if values.big(r.node as usize) != v {
                    self.next_wide.push((r.node, v));
                }
                continue;
            }
            let v = match (reset, r.reset) {
                (true, Some(init)) => init,
                _ if r.enable == NONE || values.get(r.enable as usize) != 0 => values.get(r.d as usize),
                _ => continue,
            };
            if values.get(r.node as usize) != v {
                self.next.push((r.node, v));
            }
        }
        for w in &self.writes[d] {
            if values.get(w.enable as usize) != 0 {
                let addr = values.get(w.addr as usize) as usize;
                if w.chunks == 1 {
                    self.pending.push((w.mem, addr, values.get(w.data as usize)));
                } else {
                    let data = values.big(w.data as usize);
                    for k in 0..w.chunks {
                        self.pending.push((w.mem, addr * w.chunks + k, bits_of(&data, 128 * k, 128)));
                    }
                }
            }
        }
    }

    /// Applies the queued register values and memory writes, marking what reads them.
    fn apply_edges(&mut self) {
        let mut next = std::mem::take(&mut self.next);
        for &(i, v) in &next {
            let i = i as usize;
            if self.values.get(i) != v {
                self.values.put(i, v);
                self.changed(i);
            }
        }
        next.clear();
        self.next = next;
        for (i, v) in std::mem::take(&mut self.next_wide) {
            if self.values.put_big(i as usize, v) {
                self.changed(i as usize);
            }
        }
        let mut pending = std::mem::take(&mut self.pending);
        for &(m, a, d) in &pending {
            if self.memories[m][a] != d {
                self.memories[m][a] = d;
                for &p in &self.mem_readers[m] {
                    mark(&mut self.dirty, &mut self.dirty_words, p);
                }
            }
        }
        pending.clear();
        self.pending = pending;
    }
}

/// Independent clocks for [`Evaluator::clock_domains`]: each domain has a period (any time
/// unit) and a phase; [`Clocks::advance`] moves to the next instant at which one or more clocks
/// rise and says which.
#[derive(Clone, Debug)]
pub struct Clocks {
    next: Vec<u64>,
    periods: Vec<u64>,
    /// The current instant.
    pub now: u64,
}

impl Clocks {
    /// `periods[d]` and the first rising edge `phases[d]` of domain `d`.
    pub fn new(periods: &[u64], phases: &[u64]) -> Clocks {
        assert!(periods.iter().all(|p| *p > 0) && periods.len() == phases.len(), "clock periods must be positive, one phase each");
        Clocks { next: phases.to_vec(), periods: periods.to_vec(), now: 0 }
    }

    /// The next instant at which a clock rises.
    pub fn peek(&self) -> u64 {
        *self.next.iter().min().unwrap()
    }

    /// The domains whose clocks rise next (several when edges coincide).
    pub fn advance(&mut self) -> Vec<usize> {
        self.now = self.peek();
        let rising: Vec<usize> = (0..self.next.len()).filter(|d| self.next[*d] == self.now).collect();
        for d in &rising {
            self.next[*d] += self.periods[*d];
        }
        rising
    }
}
