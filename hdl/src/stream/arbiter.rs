//! Round-robin arbiter for rust-hdl designs: the netlist layer's arbiter
//! ([`crate::netlist::Design::round_robin`], the one every netlist block uses) wrapped as a
//! rust-hdl block, so the arbitration rule is written once.

use rust_hdl::prelude::*;

use crate::netlist::eval::Evaluator;
use crate::netlist::verilog::{stream_body, InputRef};
use crate::netlist::{Design, Netlist, Wire};

/// Grants one of `N` (1 ..= 255) requesters per cycle, rotating priority so none starves: the
/// grant goes to the lowest requesting index at or above a pointer (wrapping), and when the
/// granted requester takes it (`advance`) the pointer moves just past it. Every requester is
/// served within `N` grants. The grant is combinational from the requests; only the pointer is
/// registered.
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
    _core: Box<Core>,
}

struct Core {
    eval: Evaluator,
    request: Vec<Wire>,
    advance: Wire,
    grant_valid: Wire,
    grant: Wire,
}

/// The arbiter as a netlist: inputs `request<i>`, `advance`; outputs `grant_valid`, `grant`.
fn arbiter_netlist(n: usize) -> Netlist {
    let d = Design::new();
    let request: Vec<_> = (0..n).map(|i| d.input(&format!("request{i}"), 1)).rev().collect();
    let requests = d.cat(&request);
    let one_hot = d.round_robin("pointer", requests, d.input("advance", 1));
    let index = (0..n).fold(d.lit(0, 8), |acc, i| acc | one_hot.bit(i).mux(d.lit(i as u128, 8), 0u32));
    d.output("grant_valid", requests.any());
    d.output("grant", index);
    d.finish()
}

impl<const N: usize> Default for RoundRobinArbiter<N> {
    fn default() -> Self {
        let () = Self::SIZE_OK;
        let eval = Evaluator::new(arbiter_netlist(N));
        let input = |name: &str| eval.input(name).unwrap();
        let output = |name: &str| eval.netlist().outputs.iter().find(|o| o.name == name).unwrap().wire;
        let core = Core { request: (0..N).map(|i| input(&format!("request{i}"))).collect(), advance: input("advance"), grant_valid: output("grant_valid"), grant: output("grant"), eval };
        Self {
            clk: Default::default(),
            rst: Default::default(),
            request: std::array::from_fn(|_| Default::default()),
            advance: Default::default(),
            grant_valid: Default::default(),
            grant: Default::default(),
            _core: Box::new(core),
        }
    }
}

impl<const N: usize> RoundRobinArbiter<N> {
    const SIZE_OK: () = assert!(N >= 1 && N <= 255, "arbiter requesters must be 1 ..= 255");

    fn load_inputs(&mut self) {
        let core = &mut self._core;
        for (i, w) in core.request.iter().enumerate() {
            core.eval.set(*w, self.request[i].val() as u128);
        }
        core.eval.set(core.advance, self.advance.val() as u128);
        core.eval.settle();
    }
}

impl<const N: usize> Logic for RoundRobinArbiter<N> {
    fn update(&mut self) {
        if self.clk.pos_edge() {
            self.load_inputs();
            let reset = self.rst.val();
            self._core.eval.clock(reset);
        }
        self.load_inputs();
        let core = &self._core;
        self.grant_valid.next = core.eval.get(core.grant_valid) != 0;
        self.grant.next = (core.eval.get(core.grant) as u64).to_bits();
    }

    fn connect(&mut self) {
        self.grant_valid.connect();
        self.grant.connect();
    }

    fn hdl(&self) -> Verilog {
        let core = &self._core;
        let input = |name: &str| {
            let base = name.strip_prefix("request").map_or(name.to_string(), |i| format!("request${i}"));
            InputRef { base, lo: 0, whole: true }
        };
        let (text, out) = stream_body(core.eval.netlist(), &input, &[core.grant_valid, core.grant]);
        Verilog::Custom(format!("{text}\nalways @(*) begin\n    grant_valid = {};\n    grant = {};\nend\n", out[0], out[1]))
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
