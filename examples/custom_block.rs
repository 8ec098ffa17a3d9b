//! Writing your own block: a stream in, a stream out, register rules and a state machine,
//! simulated against a software model in the built-in simulator and in Verilator, and exported.
//!
//! `packet_sum` reads 32-bit words and, at the end of each packet, sends one 64-bit beat:
//! `{word count, sum of the words mod 2^32}`. While the result waits for the receiver, the input
//! is held (back-pressure on both sides).
//!
//! Run it: `cargo run --release --example custom_block` (writes `target/packet_sum.v`);
//! CI runs its test: `cargo test --release --example custom_block`.

use weft::hdl::export::{export_netlist, ModuleSpec};
use weft::hdl::netlist::eval::Evaluator;
use weft::hdl::netlist::{AxisShape, Design, Netlist};
use weft::hdl::{sig, state_enum};

state_enum! {
    /// Summing a packet, or offering its result.
    enum Phase { Sum, Emit }
}

/// The block as a netlist: ports `s_axis_*` (32-bit data, tlast) and `m_axis_*` (64-bit data).
pub fn packet_sum() -> Netlist {
    let d = Design::new();
    let s = d.axis_in("s_axis", AxisShape::data(32));
    let m = d.axis_out("m_axis", AxisShape::data(64));
    let phase = d.state::<Phase>("phase");
    let sum = d.reg("sum", 32, 0);
    let count = d.reg("count", 32, 0);

    d.section("accept words while summing");
    sig!(summing = phase.is(Phase::Sum));
    s.ready(summing);
    sig!(take = s.fire());
    sig!(sent = phase.is(Phase::Emit) & m.ready());

    d.section("register rules (a later rule wins)");
    sum.next_when(take, sum.q + s.data()).clear_when(sent);
    count.next_when(take, count.q + 1u32).clear_when(sent);
    phase.go_when(take & s.0.last.unwrap(), Phase::Emit).go_when(sent, Phase::Sum);

    m.drive(count.q.cat(sum.q), phase.is(Phase::Emit), d.lit(1, 1));
    d.finish()
}

/// The software model: one `(count, sum)` per packet.
pub fn model(packets: &[Vec<u32>]) -> Vec<u64> {
    packets.iter().map(|p| (p.len() as u64) << 32 | p.iter().fold(0u32, |a, w| a.wrapping_add(*w)) as u64).collect()
}

/// A small deterministic generator (no dependency for an example).
struct Lcg(u64);
impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        self.0 >> 33
    }
}

fn packets(seed: u64, n: usize) -> Vec<Vec<u32>> {
    let mut r = Lcg(seed);
    (0..n).map(|_| (0..1 + r.next() % 9).map(|_| r.next() as u32 ^ (r.next() as u32) << 16).collect()).collect()
}

/// One simulator behind the stream ports: set inputs, read outputs, clock.
trait Sim {
    fn set(&mut self, port: &str, value: u64);
    fn get(&mut self, port: &str) -> u64;
    fn tick(&mut self);
    fn reset(&mut self);
}

impl Sim for Evaluator {
    fn set(&mut self, port: &str, value: u64) {
        self.set_input(port, value as u128);
        self.settle();
    }
    fn get(&mut self, port: &str) -> u64 {
        self.settle();
        self.get_output(port) as u64
    }
    fn tick(&mut self) {
        self.settle();
        self.clock(false);
        self.settle();
    }
    fn reset(&mut self) {
        Evaluator::reset(self, 1);
    }
}

impl Sim for weft::sim::cosim::Model {
    fn set(&mut self, port: &str, value: u64) {
        let p = self.port(port).unwrap();
        weft::sim::cosim::Model::set(self, p, value);
        self.eval();
    }
    fn get(&mut self, port: &str) -> u64 {
        let p = self.port(port).unwrap();
        weft::sim::cosim::Model::get(self, p)
    }
    fn tick(&mut self) {
        weft::sim::cosim::Model::tick(self);
    }
    fn reset(&mut self) {
        Sim::set(self, "rst", 1);
        Sim::tick(self);
        Sim::set(self, "rst", 0);
    }
}

/// Streams `packets` through the block with random valid and ready; returns the results.
fn run(sim: &mut dyn Sim, packets: &[Vec<u32>], seed: u64) -> Vec<u64> {
    let mut r = Lcg(seed);
    sim.reset();
    let words: Vec<(u32, bool)> = packets.iter().flat_map(|p| p.iter().enumerate().map(move |(i, w)| (*w, i + 1 == p.len()))).collect();
    let (mut next, mut out) = (0, vec![]);
    for _ in 0..100_000 {
        let offer = next < words.len() && !r.next().is_multiple_of(4);
        let (w, last) = words.get(next).copied().unwrap_or((0, false));
        sim.set("s_axis_tvalid", offer as u64);
        sim.set("s_axis_tdata", w as u64);
        sim.set("s_axis_tlast", last as u64);
        let ready = !r.next().is_multiple_of(3);
        sim.set("m_axis_tready", ready as u64);
        if offer && sim.get("s_axis_tready") == 1 {
            next += 1;
        }
        if ready && sim.get("m_axis_tvalid") == 1 {
            out.push(sim.get("m_axis_tdata"));
        }
        sim.tick();
        if out.len() == packets.len() {
            break;
        }
    }
    out
}

fn spec() -> ModuleSpec {
    ModuleSpec { family: "examples", name: "packet_sum".into(), summary: "sum and count of each packet's words".into(), parameters: vec![], hidden_ports: vec![] }
}

fn main() {
    let net = packet_sum();
    let input = packets(1, 200);
    let built_in = run(&mut Evaluator::new(net.clone()), &input, 7);
    assert_eq!(built_in, model(&input), "built-in simulator differs from the model");
    let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("target/packet_sum.v");
    std::fs::write(&file, export_netlist(&spec(), &net).unwrap()).unwrap();
    println!("{} packets match the model; Verilog in {}", input.len(), file.display());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn built_in_and_verilator_match_the_model_and_verilog_is_lint_clean() {
        let net = packet_sum();
        let input = packets(3, 300);
        let want = model(&input);
        assert_eq!(run(&mut Evaluator::new(net.clone()), &input, 11), want);
        let dir = std::env::temp_dir().join(format!("weft-example-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("packet_sum.v");
        std::fs::write(&file, export_netlist(&spec(), &net).unwrap()).unwrap();
        weft::tools::verilator_lint(&file, "packet_sum").unwrap();
        let mut model_v = weft::sim::cosim::Model::build(&file, "packet_sum").unwrap();
        assert_eq!(run(&mut model_v, &input, 11), want);
    }

    #[test]
    fn the_state_machine_holds_the_input_while_the_result_waits() {
        let mut e = Evaluator::new(packet_sum());
        e.reset(1);
        for (port, v) in [("s_axis_tvalid", 1), ("s_axis_tdata", 5), ("s_axis_tlast", 1), ("m_axis_tready", 0)] {
            e.set_input(port, v);
        }
        e.settle();
        assert_eq!(e.get_output("s_axis_tready"), 1);
        e.clock(false);
        e.settle();
        // The result waits: no word is accepted until it leaves.
        for _ in 0..3 {
            assert_eq!((e.get_output("m_axis_tvalid"), e.get_output("s_axis_tready")), (1, 0));
            e.clock(false);
            e.settle();
        }
        assert_eq!(e.get_output("m_axis_tdata"), 1 << 32 | 5);
    }
}
