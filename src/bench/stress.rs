//! The collectives under stress: randomized operations on a system's generated nodes in
//! Verilator, every result checked against [`Collective::reference`].
//!
//! Each batch picks a collective (reduce and broadcast at a random root), an operator and 1–40
//! operations of 1–64 elements (a barrier: one), which every host streams back to back, each
//! operation in its own packets of random size, so several are in flight along the chain. Every
//! cable flips bits at the given rate, every host stream has random gaps and back-pressure, and
//! one cable is pulled for a while in the middle of the run. Each operation carries its own id,
//! which every result packet must bring back. About one batch in four (not the one with the
//! pulled cable) is instead one operation of 3–300 elements striped over the torus's chains
//! ([`Torus::collective_striped`]), checked against
//! [`stripes::collective_reference`].
//! At the end every node's engines (the unit and each stripe engine) must report no mismatched
//! partial, no partial of another operation and no timeout, and their counters must have seen
//! exactly the packets sent and delivered.

use crate::bench::allreduce::{engine_ports, striped_torus, with_engines, PORTS, STRIPE_PORTS};
use crate::system::SystemConfig;
use crate::Error;
use serde::Serialize;
use std::path::Path;

use weft_ip::router::Direction;
use weft_ip::system::allreduce::check::operand;
use weft_ip::system::allreduce::{packet_sizes, stripes, Collective, ElementType, REDUCE_OPS};
use weft_ip::weft_hdl::testbench::Rng;
use weft_sim::link::VerilatorDevice;
use weft_sim::network::Torus;

/// Cycles the pulled cable stays out: several of the link's retransmission timeouts.
pub const CUT_CYCLES: u64 = 3000;

/// What a stress run did.
#[derive(Clone, Debug, Serialize)]
pub struct Stress {
    /// The system's name.
    pub system: String,
    /// The engine's element type.
    pub element: String,
    /// Operations run, every one checked.
    pub operations: usize,
    /// Of those, operations striped over the chains.
    pub striped: usize,
    /// Batches (one collective and operator each).
    pub batches: usize,
    /// Elements the user's vectors held, over all operations and nodes.
    pub elements: usize,
    /// Cycles of all batches.
    pub cycles: u64,
    /// Bits the cables flipped.
    pub flipped_bits: u64,
    /// Frames the links retransmitted (sum of every endpoint's counter).
    pub retransmissions: u64,
    /// Cables pulled for [`CUT_CYCLES`].
    pub cuts: usize,
}

/// Runs `operations` random collective operations on `system` with engines for `ty`, bit errors
/// at `ber` on every cable, building in `work`. A result that differs from the reference, a
/// stuck batch, or counters that disagree with what was sent is an [`Error::Check`].
pub fn stress(system: &SystemConfig, ty: ElementType, operations: usize, ber: f64, seed: u64, work: &Path, progress: &mut dyn FnMut(&str)) -> Result<Stress, Error> {
    let rc = system.node.router.clone();
    let nodes = rc.nodes();
    let mut torus = striped_torus(system, ty, work, progress)?;
    let engines = engine_ports();
    torus.set_bit_error_rate(ber);
    let mut rng = Rng::new(seed);
    let mut report = Stress { system: system.name.clone(), element: ty.name().into(), operations: 0, striped: 0, batches: 0, elements: 0, cycles: 0, flipped_bits: 0, retransmissions: 0, cuts: 0 };
    let links: Vec<Direction> = Direction::ALL.into_iter().filter(|d| rc.dims[d.dim] >= 2).collect();
    // Packets each node's host sent to and took from each engine: `[engine][node]`.
    let (mut contributions, mut deliveries) = (vec![vec![0u64; nodes]; engines.len()], vec![vec![0u64; nodes]; engines.len()]);
    while report.operations < operations {
        let root = rng.below(nodes as u64) as usize;
        let c = [Collective::Allreduce, Collective::Reduce { root }, Collective::Broadcast { root }, Collective::Allgather, Collective::ReduceScatter, Collective::Barrier][rng.below(6) as usize];
        let op = REDUCE_OPS[rng.below(REDUCE_OPS.len() as u64) as usize];
        let count = (1 + rng.below(40) as usize).min(operations - report.operations);
        let ops: Vec<Vec<Vec<u128>>> = (0..count)
            .map(|_| {
                let n = if c == Collective::Barrier { 1 } else { 1 + rng.below(64) as usize };
                (0..nodes).map(|_| (0..n).map(|_| operand(ty, &mut rng)).collect()).collect()
            })
            .collect();
        let packet_bytes = ty.bytes() * (1 + rng.below((rc.max_packet_bytes / ty.bytes()) as u64) as usize);
        // The run's middle batch pulls one cable for CUT_CYCLES, starting a little after it begins.
        let cut = (report.operations < operations / 2 && report.operations + count >= operations / 2)
            .then(|| (rng.below(nodes as u64) as usize, links[rng.below(links.len() as u64) as usize], 50 + rng.below(200)));
        if cut.is_none() && c != Collective::Barrier && rng.below(4) == 0 {
            let n = 3 + rng.below(298) as usize;
            let inputs: Vec<Vec<u128>> = (0..nodes).map(|_| (0..n).map(|_| operand(ty, &mut rng)).collect()).collect();
            let limit = 400_000 + 40 * (nodes * n) as u64;
            let (striping, run) = torus.collective_striped(c, &engines, ty, op, &inputs, packet_bytes, Some(rng.next_u64()), limit)?;
            let want = stripes::collective_reference(&rc, &striping, c, &inputs, ty, op);
            if let Some(node) = (0..nodes).find(|&m| run.results[m] != want[m]) {
                return Err(Error::Check(format!("{}: batch {} ({} {} striped, {n} elements): node {node} differs from the reference", system.name, report.batches, c.name(), c.operator(op).name())));
            }
            if !run.timed_out.is_empty() {
                return Err(Error::Check(format!("{}: batch {}: the watchdog reported nodes {:?}", system.name, report.batches, run.timed_out)));
            }
            let sends = c.contributions(&rc, &inputs);
            let len = sends.iter().map(|v| v.len()).max().unwrap_or(0);
            let k = striping.chains.len();
            for e in 0..k {
                let packets = packet_sizes(ty.bytes() * stripes::slice(len, e, k).len(), packet_bytes).len() as u64;
                for m in 0..nodes {
                    contributions[e][m] += packets * u64::from(!sends[m].is_empty());
                    deliveries[e][m] += packets * u64::from(c.delivered(&rc, m, n) > 0);
                }
            }
            report.elements += nodes * n;
            report.operations += 1;
            report.striped += 1;
            report.batches += 1;
            report.cycles += run.cycles;
            continue;
        }
        let start = torus.cycle;
        let mut at_each = |t: &mut Torus<VerilatorDevice>| {
            if let Some((node, d, after)) = cut {
                let at = t.cycle - start;
                if at == after || at == after + CUT_CYCLES {
                    t.cut(node, d, at == after);
                }
            }
        };
        let limit = 400_000 + 40 * (nodes * ops.iter().map(|o| o[0].len()).sum::<usize>()) as u64;
        let batch = torus.collectives(c, PORTS, ty, op, &ops, packet_bytes, Some(rng.next_u64()), limit, &mut at_each)?;
        if let Some((node, d, _)) = cut {
            torus.cut(node, d, false);
            report.cuts += 1;
            progress(&format!("pulled the cable leaving node {node} toward {} for {CUT_CYCLES} cycles during a batch of {count} {}", d.name(), c.name()));
        }
        for (k, inputs) in ops.iter().enumerate() {
            let want = c.reference(&rc, inputs, ty, op, packet_bytes);
            if let Some(n) = (0..nodes).find(|&n| batch.results[k][n] != want[n]) {
                return Err(Error::Check(format!(
                    "{}: batch {} ({} {}, operation {k} of {count}, {} elements): node {n} differs from the reference",
                    system.name,
                    report.batches,
                    c.name(),
                    c.operator(op).name(),
                    inputs[0].len()
                )));
            }
            let sends = c.contributions(&rc, inputs);
            let packets = c.packets(&rc, sends.iter().map(|v| v.len()).max().unwrap_or(0) * ty.bytes(), packet_bytes).len() as u64;
            for n in 0..nodes {
                contributions[0][n] += packets * u64::from(!sends[n].is_empty());
                deliveries[0][n] += packets * u64::from(c.delivered(&rc, n, inputs[0].len()) > 0);
            }
            report.elements += inputs.iter().map(|v| v.len()).sum::<usize>();
        }
        if !batch.timed_out.is_empty() {
            return Err(Error::Check(format!("{}: batch {}: the watchdog reported nodes {:?}", system.name, report.batches, batch.timed_out)));
        }
        report.operations += count;
        report.batches += 1;
        report.cycles += batch.cycles;
        if report.batches.is_multiple_of(100) {
            progress(&format!("{} operations in {} batches, {} cycles", report.operations, report.batches, report.cycles));
        }
    }
    // Every engine's counters against what the hosts sent to it and took from it.
    let map = weft_ip::system::node::register_map(&with_engines(system, ty, &STRIPE_PORTS).node);
    let addr = |suffix: &str| map.iter().filter(|r| r.name.ends_with(suffix)).map(|r| r.addr).collect::<Vec<u32>>();
    for n in 0..nodes {
        let read = |t: &mut Torus<VerilatorDevice>, a: u32| t.axil_read(n, a).map(|(v, _)| v as u64);
        for e in 0..engines.len() {
            let prefix = if e == 0 { "allreduce".to_string() } else { format!("allreduce_s{e}") };
            let names = ["contributions", "results", "mismatches", "timeouts", "id_mismatches"].map(|c| format!("{prefix}_{c}"));
            let mut got = vec![];
            for name in &names {
                let at = *addr(name).first().ok_or_else(|| Error::Check(format!("no register {name}")))?;
                got.push(read(&mut torus, at)?);
            }
            if got != [contributions[e][n] & 0xFFFF_FFFF, deliveries[e][n] & 0xFFFF_FFFF, 0, 0, 0] {
                return Err(Error::Check(format!("{}: node {n}'s engine {e} counted {got:?} ({names:?}), the hosts sent {} and took {} packets", system.name, contributions[e][n], deliveries[e][n])));
            }
        }
        for a in addr("frames_retransmitted") {
            report.retransmissions += read(&mut torus, a)?;
        }
    }
    report.flipped_bits = torus.flipped_bits();
    Ok(report)
}
