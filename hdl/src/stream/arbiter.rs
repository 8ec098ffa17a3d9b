//! Round-robin arbiter.

use rust_hdl::prelude::*;

/// Grants one of `N` (1 ..= 255) requesters per cycle, rotating priority so none starves: after
/// requester `g` is served (`advance`), the next grant goes to the highest requesting index
/// below `g`, wrapping to the highest index overall. The grant is combinational from the
/// requests; only the rotation is registered.
#[derive(LogicBlock)]
pub struct RoundRobinArbiter<const N: usize> {
    pub clk: Signal<In, Clock>,
    pub rst: Signal<In, Bit>,
    pub request: [Signal<In, Bit>; N],
    /// The granted requester took its grant: rotate priority past it.
    pub advance: Signal<In, Bit>,
    pub grant_valid: Signal<Out, Bit>,
    /// Index of the granted requester (valid with `grant_valid`).
    pub grant: Signal<Out, Bits<8>>,
    last: DFF<Bits<8>>,
}

impl<const N: usize> Default for RoundRobinArbiter<N> {
    fn default() -> Self {
        let () = Self::SIZE_OK;
        Self {
            clk: Default::default(),
            rst: Default::default(),
            request: std::array::from_fn(|_| Default::default()),
            advance: Default::default(),
            grant_valid: Default::default(),
            grant: Default::default(),
            last: Default::default(),
        }
    }
}

impl<const N: usize> RoundRobinArbiter<N> {
    const SIZE_OK: () = assert!(N >= 1 && N <= 255, "arbiter requesters must be 1 ..= 255");
}

impl<const N: usize> Logic for RoundRobinArbiter<N> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clk, last);
        // Later assignments win: the first loop picks the highest requester, the second
        // overrides it with the highest requester below the last one served.
        self.grant_valid.next = false;
        self.grant.next = 0.into();
        for i in 0..N {
            if self.request[i].val() {
                self.grant_valid.next = true;
                self.grant.next = i.to_bits();
            }
        }
        for i in 0..N {
            if self.request[i].val() & (self.last.q.val() > i.to_bits()) {
                self.grant.next = i.to_bits();
            }
        }
        if self.advance.val() & self.grant_valid.val() {
            self.last.d.next = self.grant.val();
        }
        if self.rst.val() {
            self.last.d.next = 0.into();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testbench::{Bench, Rng};

    #[test]
    fn grants_only_requesters_and_serves_everyone_within_n_grants() {
        const N: usize = 5;
        let mut bench = Bench::new(RoundRobinArbiter::<N>::default(), |b| &mut b.clk).unwrap();
        bench.uut.rst.next = true;
        bench.tick();
        bench.uut.rst.next = false;
        let mut rng = Rng::new(21);
        // waiting[i]: grants given to others since requester i started waiting.
        let mut waiting = [0usize; N];
        let mut requesting = [false; N];
        for cycle in 0..3000 {
            for i in 0..N {
                if !requesting[i] && rng.chance(40) {
                    requesting[i] = true;
                    waiting[i] = 0;
                }
                bench.uut.request[i].next = requesting[i];
            }
            let advance = rng.chance(70);
            bench.uut.advance.next = advance;
            bench.settle();
            let any = requesting.iter().any(|r| *r);
            assert_eq!(bench.uut.grant_valid.val(), any, "cycle {cycle}");
            if any && advance {
                let g = bench.uut.grant.val().index();
                assert!(requesting[g], "cycle {cycle}: granted idle requester {g}");
                requesting[g] = false;
                for i in 0..N {
                    if requesting[i] {
                        waiting[i] += 1;
                        assert!(waiting[i] < N, "cycle {cycle}: requester {i} starved");
                    }
                }
            }
            bench.tick();
        }
    }
}
