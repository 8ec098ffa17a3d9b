//! `weft bench netsim`: how fast `weft netsim` simulates a torus of generated nodes in one
//! process and split over two MPI ranks on this machine, and a model of larger runs built from
//! those two measurements.
//!
//! The model. One process costs `c` seconds per node and cycle (measured with one rank). A rank
//! of `n` nodes then spends `n · c` a cycle, plus, once per window of `W` cycles, its swap: `s`
//! seconds measured here over shared memory (the two-rank run's time beyond `n · c` per cycle, per
//! swap), and on a cluster `s + α` with `α` the network's message latency, which this machine
//! cannot measure: the model assumes [`ALPHA`]. A torus of `N` nodes on `P` ranks:
//! `t(P) = (N / P) · c + (s + α) / W` a cycle; strong scaling is `t(1) / t(P)` with `N` fixed, weak
//! scaling keeps `N / P` fixed (a rank's neighbours, hence its swap, do not grow with `P`).

use crate::Error;
use std::path::Path;
use std::process::Command;

use serde::Serialize;

use crate::run::netsim::Summary;

/// Network latency of one swap on a cluster, seconds: an assumption (a few microseconds is what
/// MPI over a cluster interconnect typically takes for a small message), not a measurement.
pub const ALPHA: f64 = 5e-6;

/// The runs: (torus, packets per node per cycle, traffic cycles, drain cycles).
pub const RUNS: [([usize; 3], f64, u64, u64); 2] = [([4, 4, 4], 0.02, 2000, 1500), ([8, 8, 8], 0.01, 500, 1000)];

/// Everything the benchmark measures and predicts (`bench/netsim.json`).
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    /// Every run, one and two ranks per torus.
    pub runs: Vec<Summary>,
    /// The model of each torus.
    pub models: Vec<Model>,
    /// The first torus of [`RUNS`] again with every node on its own clock ([`PPM`]), one and two
    /// ranks: what clocks of their own cost.
    pub clocks: Vec<Summary>,
}

/// How far each node's clock is off the nominal frequency in the runs of [`Report::clocks`], ppm
/// either way (±100 ppm: the tolerance of common QSFP28 reference oscillators).
pub const PPM: u64 = 100;

/// The model of one torus size, from its one- and two-rank runs.
#[derive(Clone, Debug, Serialize)]
pub struct Model {
    /// The torus.
    pub dims: [usize; 3],
    /// Seconds per node and cycle, `c` (the smallest of the runs).
    pub node_cycle: f64,
    /// Time in swaps as a share of compute, the largest of the two-rank runs (mostly waiting for
    /// the other rank: it grows with a window's work).
    pub wait: f64,
    /// Cycles per window, `W`.
    pub window: usize,
    /// Two ranks against one, measured.
    pub speedup_two: f64,
    /// Predicted cycles per second on `P` ranks with the cluster latency [`ALPHA`]: (P, cycles/s,
    /// speedup over the model's one rank, parallel efficiency), P = 1, 2, 8, 64 and the nodes
    /// (one a rank).
    pub strong: Vec<(usize, f64, f64, f64)>,
    /// Weak scaling at this torus's nodes per rank for 2: efficiency of a rank with
    /// its swap against one without, the same for any number of ranks.
    pub weak_efficiency: f64,
}

/// Command-line options from (flag, value) pairs.
pub fn options<const N: usize>(pairs: [(&str, String); N]) -> Vec<String> {
    pairs.into_iter().flat_map(|(k, v)| [k.to_string(), v]).collect()
}

/// Runs `weft netsim` (this executable) for `dims` on `ranks` (under `mpirun` above one) with the
/// options `args` (rate, cycles, …), and reads its summary.
pub fn netsim(config: &Path, dims: [usize; 3], args: &[String], ranks: usize, work: &Path) -> Result<Summary, Error> {
    let exe = std::env::current_exe()?;
    let json = work.join(format!("netsim-{}x{}x{}-{ranks}.json", dims[0], dims[1], dims[2]));
    let mut cmd = if ranks == 1 {
        Command::new(&exe)
    } else {
        let mut c = Command::new("mpirun");
        c.env("OMPI_ALLOW_RUN_AS_ROOT", "1").env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1").args(["--oversubscribe", "-n", &ranks.to_string()]).arg(&exe);
        c
    };
    let d = format!("{},{},{}", dims[0], dims[1], dims[2]);
    cmd.args(["netsim", "--dims", &d, "--config"]).arg(config).arg("--json").arg(&json).args(args);
    let out = cmd.output().map_err(|e| Error::Input(format!("mpirun: {e} (install Open MPI: scripts/setup.sh)")))?;
    if !out.status.success() {
        return Err(Error::Check(format!("weft netsim {d} {args:?} on {ranks} rank(s) failed:\n{}", String::from_utf8_lossy(&out.stderr))));
    }
    Ok(serde_json::from_str(&std::fs::read_to_string(&json)?)?)
}

/// The model of one torus from its one-rank and two-rank runs, with `c` the smallest cost a
/// node-cycle measured (the run with the fewest nodes a rank: fewer models stay in the caches)
/// and `wait` the largest share of a two-rank run's compute it spent in swaps.
pub fn model(one: &Summary, two: &Summary, c: f64, wait: f64) -> Model {
    let nodes = one.nodes_per_rank.iter().sum::<u64>() as f64;
    let w = one.window as f64;
    let cycle = |p: f64| if p > 1.0 { (nodes / p) * c * (1.0 + wait) + ALPHA / w } else { nodes * c };
    let mut ranks: Vec<f64> = [1.0, 2.0, 8.0, 64.0, nodes].into_iter().filter(|&p| p <= nodes).collect();
    ranks.dedup();
    let strong = ranks.iter().map(|&p| (p as usize, 1.0 / cycle(p), cycle(1.0) / cycle(p), cycle(1.0) / cycle(p) / p)).collect();
    let share = nodes / 2.0 * c;
    Model { dims: one.dims, node_cycle: c, wait, window: one.window, speedup_two: two.cycles_per_second / one.cycles_per_second, strong, weak_efficiency: share / (share * (1.0 + wait) + ALPHA / w) }
}

/// The share of its compute a two-rank run spent in swaps.
pub fn waiting(s: &Summary) -> f64 {
    s.swap_seconds / (s.seconds - s.swap_seconds)
}

/// Seconds a node-cycle of a run, its swaps left out.
pub fn node_cycle(s: &Summary) -> f64 {
    let busiest = *s.nodes_per_rank.iter().max().unwrap_or(&1) as f64;
    (s.seconds - s.swap_seconds) / (busiest * s.cycles as f64)
}

/// Runs every torus of [`RUNS`] on one and two ranks with the node of `config`.
pub fn run(config: &Path, work: &Path, progress: &mut dyn FnMut(&str)) -> Result<Report, Error> {
    std::fs::create_dir_all(work)?;
    let mut runs = vec![];
    for (dims, rate, cycles, drain) in RUNS {
        let mut pair = vec![];
        for ranks in [1, 2] {
            progress(&format!("{}×{}×{} on {ranks} rank(s)", dims[0], dims[1], dims[2]));
            let args = options([("--rate", rate.to_string()), ("--cycles", cycles.to_string()), ("--drain", drain.to_string()), ("--ber", "1e-6".to_string())]);
            let s = netsim(config, dims, &args, ranks, work)?;
            progress(s.text().lines().next().unwrap_or(""));
            pair.push(s);
        }
        runs.extend(pair);
    }
    let (dims, rate, cycles, drain) = RUNS[0];
    let mut clocks = vec![];
    for ranks in [1, 2] {
        progress(&format!("{}×{}×{} on {ranks} rank(s), each node's clock within ±{PPM} ppm", dims[0], dims[1], dims[2]));
        let args = options([("--rate", rate.to_string()), ("--cycles", cycles.to_string()), ("--drain", drain.to_string()), ("--ber", "1e-6".to_string()), ("--ppm", PPM.to_string())]);
        let s = netsim(config, dims, &args, ranks, work)?;
        progress(s.text().lines().next().unwrap_or(""));
        clocks.push(s);
    }
    let c = runs.iter().map(node_cycle).fold(f64::MAX, f64::min);
    let wait = runs.iter().filter(|r| r.ranks > 1).map(waiting).fold(0.0, f64::max);
    let models = runs.chunks(2).map(|p| model(&p[0], &p[1], c, wait)).collect();
    Ok(Report { runs, models, clocks })
}
