//! `weft bench netsim-load`: latency and accepted throughput against offered load on tori of
//! generated nodes (`weft netsim` on two MPI ranks), as BookSim reports them for a router
//! network: per pattern a sweep of injection rates, each measured over the second half of its
//! traffic phase; saturation is what the network accepts at the first load it no longer
//! accepts in full (below 95 % of the offered flits).

use crate::Error;
use std::path::Path;

use serde::Serialize;

use crate::run::netsim::Summary;

/// Payload of every packet, bytes: five 128-bit flits with the header.
pub const BYTES: usize = 64;

/// The sweeps: (torus, pattern, packets per node per cycle).
pub fn sweeps() -> Vec<([usize; 3], &'static str, Vec<f64>)> {
    let rates = |top: f64, steps: usize| (1..=steps).map(|i| top * i as f64 / steps as f64).collect::<Vec<f64>>();
    vec![
        ([4, 4, 4], "uniform", rates(0.24, 8)),
        ([4, 4, 4], "transpose", rates(0.12, 6)),
        ([4, 4, 4], "neighbour", rates(0.24, 8)),
        ([8, 8, 8], "uniform", rates(0.12, 6)),
        ([8, 8, 8], "neighbour", rates(0.24, 6)),
    ]
}

/// One sweep: its points and what it found.
#[derive(Clone, Debug, Serialize)]
pub struct Sweep {
    /// The torus.
    pub dims: [usize; 3],
    /// The traffic pattern.
    pub pattern: String,
    /// Every load point's run, in rising order.
    pub points: Vec<Summary>,
    /// Flits per node per cycle accepted at the first load not accepted in full (the largest
    /// accepted when every load was).
    pub saturation: f64,
    /// Latency at the lowest load, cycles.
    pub zero_load_latency: f64,
}

/// Runs every sweep with the node of `config` on `ranks` ranks, `cycles` of traffic a point.
pub fn run(config: &Path, ranks: usize, cycles: u64, work: &Path, progress: &mut dyn FnMut(&str)) -> Result<Vec<Sweep>, Error> {
    std::fs::create_dir_all(work)?;
    let mut out = vec![];
    for (dims, pattern, rates) in sweeps() {
        let mut points: Vec<Summary> = vec![];
        for rate in rates {
            let args = super::netsim::options([
                ("--pattern", pattern.to_string()),
                ("--rate", rate.to_string()),
                ("--bytes", format!("{BYTES}..{BYTES}")),
                ("--cycles", cycles.to_string()),
                ("--drain", cycles.to_string()),
            ]);
            let s = super::netsim::netsim(config, dims, &args, ranks, work)?;
            progress(&format!("{dims:?} {pattern} {rate:.3}: offered {:.3}, accepted {:.3} flits/node/cycle, latency {:.1}", s.offered_flits, s.accepted_flits, s.measured_latency));
            let saturated = s.accepted_flits < 0.95 * s.offered_flits;
            points.push(s);
            if saturated {
                break;
            }
        }
        let first_short = points.iter().find(|p| p.accepted_flits < 0.95 * p.offered_flits);
        let saturation = first_short.map_or_else(|| points.iter().map(|p| p.accepted_flits).fold(0.0, f64::max), |p| p.accepted_flits);
        let zero_load_latency = points.first().map_or(f64::NAN, |p| p.measured_latency);
        out.push(Sweep { dims, pattern: pattern.to_string(), points, saturation, zero_load_latency });
    }
    Ok(out)
}
