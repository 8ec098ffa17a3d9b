//! The model of an iteration over the nodes: compute from the compiled schedules, exchange and
//! reduction from the fabric's measured figures.

use weft_ip::app::hardware::Compiled;
use weft_ip::app::partition::halo::Halo;
use weft_ip::app::partition::run::{reductions, refreshed};
use weft_ip::app::partition::Partition;
use weft_ip::app::Application;
use weft_ip::router::RouterConfig;

use super::{Calibration, VALUE_BYTES};

/// Hops between nodes `a` and `b` of `rc`'s torus (minimal, dimension by dimension).
fn hops(rc: &RouterConfig, a: usize, b: usize) -> usize {
    let (x, y) = (rc.coords(a), rc.coords(b));
    (0..3).map(|d| x[d].abs_diff(y[d]).min(rc.dims[d] - x[d].abs_diff(y[d]))).sum()
}

/// What the shared steps of one iteration move: per refresh of a dat, each node's bytes sent
/// and received and the most hops a packet travels; and the reductions. From the sync steps of
/// node 0's program (every node's program has the same steps).
pub(super) struct Steps {
    /// Per refresh: (bytes out per node, bytes in per node, most hops).
    pub refreshes: Vec<(Vec<usize>, Vec<usize>, usize)>,
    pub reductions: usize,
}

pub(super) fn steps(app: &Application<f64>, sync_ids: &[u32], p: &Partition, h: &Halo, rc: &RouterConfig) -> Steps {
    let loops = app.loop_args();
    let mut out = Steps { refreshes: vec![], reductions: 0 };
    for id in sync_ids.iter().filter(|i| *i % 2 == 1) {
        let args = loops[*id as usize / 2].2;
        out.reductions += reductions(app, args).len();
        for dat in refreshed(app, args) {
            let (_, set, dim) = app.app.dat_info(app.dat_id(&dat).expect("a dat"));
            let (mut sent, mut received, mut far) = (vec![0; p.parts], vec![0; p.parts], 0);
            for from in 0..p.parts {
                for to in (0..p.parts).filter(|&t| t != from) {
                    let bytes = h.exports(p, from, to, set).len() * dim * VALUE_BYTES;
                    sent[from] += bytes;
                    received[to] += bytes;
                    if bytes > 0 {
                        far = far.max(hops(rc, from, to));
                    }
                }
            }
            out.refreshes.push((sent, received, far));
        }
    }
    out
}

impl Steps {
    pub fn halo_bytes(&self) -> usize {
        self.refreshes.iter().map(|r| r.0.iter().sum::<usize>()).sum()
    }

    pub fn exchange_model(&self, c: &Calibration) -> f64 {
        self.refreshes
            .iter()
            .map(|(sent, received, far)| {
                let busiest = sent.iter().chain(received).max().copied().unwrap_or(0) as f64;
                (far.saturating_sub(1) as u64 * c.hop_cycles + c.packet_cycles) as f64 + (busiest - c.packet_bytes as f64) / c.link_bytes_per_cycle
            })
            .sum()
    }
}

/// Per stretch between sync steps, the slowest node's cycles by the compiler's model, for
/// `iterations`; and the sync ids in order.
pub(super) fn compute_model(compiled: &[&Compiled], iterations: usize) -> (f64, Vec<u32>) {
    let phases: Vec<_> = compiled.iter().map(|c| c.phases(Some(iterations))).collect();
    let ids = phases[0].iter().filter_map(|s| s.1).collect();
    let total = (0..phases[0].len()).map(|k| phases.iter().map(|p| p[k].0).max().unwrap_or(0)).sum::<usize>();
    (total as f64, ids)
}

/// Least squares `y = a + b·x` (one point: b = 0).
pub(super) fn fit(points: &[(f64, f64)]) -> (f64, f64) {
    let n = points.len() as f64;
    let (sx, sy) = points.iter().fold((0.0, 0.0), |(a, b), p| (a + p.0, b + p.1));
    let sxx: f64 = points.iter().map(|p| (p.0 - sx / n).powi(2)).sum();
    if sxx == 0.0 {
        return (sy / n, 0.0);
    }
    let b = points.iter().map(|p| (p.0 - sx / n) * (p.1 - sy / n)).sum::<f64>() / sxx;
    (sy / n - b * sx / n, b)
}
