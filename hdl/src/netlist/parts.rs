//! Small parts every block uses, written once: the round-robin arbiter and event counters.

use super::signal::{Design, Sig};

impl Design {
    /// Round-robin arbiter over `requests` (bit i = requester i): grants (one-hot) the first
    /// request at or above the pointer, wrapping, and when `advance` is high moves the pointer
    /// just past the grant. A requester is served within `n` advances. After reset the pointer
    /// is at requester 0. Two requesters give the "prefer the other after a grant" rule.
    pub fn round_robin<'d>(&'d self, name: &str, requests: Sig<'d>, advance: Sig<'d>) -> Sig<'d> {
        let n = requests.width;
        let mask = self.reg(name, n, u128::MAX);
        let masked = requests & mask.q;
        let pool = masked.any().mux(masked, requests);
        // The lowest set bit of the pool.
        let grant = (pool & (self.lit(0, n) - pool)).named(&format!("{name}_grant"));
        let upto = grant | (grant - 1u32);
        mask.next_when(advance & grant.any(), !upto);
        grant
    }

    /// A 32-bit counter of the cycles `event` is high, as output `name`.
    pub fn counter<'d>(&'d self, name: &str, event: Sig<'d>) -> Sig<'d> {
        let r = self.reg(name, 32, 0);
        r.next_when(event, r.q + 1u32);
        self.output(name, r.q);
        r.q
    }
}
