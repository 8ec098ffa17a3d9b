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

/// Whether a load point's (offered, accepted) flits say the network no longer accepts the load
/// in full: below 95 % of it.
pub fn short((offered, accepted): (f64, f64)) -> bool {
    accepted < 0.95 * offered
}

/// The saturation throughput of a sweep's (offered, accepted) flits in rising order: what the
/// network accepts at the first load it does not accept in full, or the most it accepted when it
/// accepted every load.
pub fn saturation(points: impl Iterator<Item = (f64, f64)> + Clone) -> f64 {
    points.clone().find(|p| short(*p)).map_or_else(|| points.map(|(_, a)| a).fold(0.0, f64::max), |(_, a)| a)
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
            let saturated = short((s.offered_flits, s.accepted_flits));
            points.push(s);
            if saturated {
                break;
            }
        }
        let saturation = saturation(points.iter().map(|p| (p.offered_flits, p.accepted_flits)));
        let zero_load_latency = points.first().map_or(f64::NAN, |p| p.measured_latency);
        out.push(Sweep { dims, pattern: pattern.to_string(), points, saturation, zero_load_latency });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn saturation_is_the_first_load_not_accepted_in_full() {
        let sweep = [(0.1, 0.1), (0.5, 0.49), (0.6, 0.5), (0.7, 0.3)];
        assert_eq!(saturation(sweep.iter().copied()), 0.5);
        assert_eq!(saturation([(0.1, 0.1), (0.2, 0.199)].iter().copied()), 0.199);
    }
}
