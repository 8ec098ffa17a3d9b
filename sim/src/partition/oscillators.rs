//! Each node's oscillator in a partitioned run: a period and a first edge, in a unit of one
//! millionth of the nominal cycle, so that a node `x` ppm fast has a period of `1,000,000 − x`.

use weft_ip::link::LinkConfig;
use weft_ip::weft_hdl::testbench::Rng;

use crate::Error;

/// The nominal cycle in the oscillators' unit (one unit = 1 ppm of it).
pub const NOMINAL: u64 = 1_000_000;

/// Every node's clock.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Oscillators {
    /// Node n's period, in millionths of the nominal cycle.
    pub periods: Vec<u64>,
    /// Node n's first rising edge, in the same unit.
    pub phases: Vec<u64>,
}

impl Oscillators {
    /// Every node on one clock: the nominal period, all edges together.
    pub fn common(nodes: usize) -> Oscillators {
        Oscillators { periods: vec![NOMINAL; nodes], phases: vec![0; nodes] }
    }

    /// Each node off the nominal frequency by up to `ppm` parts per million either way and
    /// starting at its own phase, both drawn uniformly from `seed`: plesiochronous boards, as
    /// oscillators within their tolerance make them. `ppm` = 0 is [`Oscillators::common`].
    pub fn drift(nodes: usize, ppm: u64, seed: u64) -> Oscillators {
        if ppm == 0 {
            return Oscillators::common(nodes);
        }
        let mut rng = Rng::new(seed ^ 0x0C10_C4ED_5EED);
        let periods: Vec<u64> = (0..nodes).map(|_| NOMINAL - ppm + rng.below(2 * ppm + 1)).collect();
        let phases = periods.iter().map(|&p| rng.below(p)).collect();
        Oscillators { periods, phases }
    }

    /// The most a node may be off: half the difference between two ends that the links' clock
    /// compensation (`cc_burst` blocks every `cc_interval` cycles) absorbs.
    pub fn max_ppm(link: &LinkConfig) -> u64 {
        (NOMINAL * link.cc_burst as u64 / link.cc_interval as u64) / 2
    }

    /// One clock per node, each within [`Oscillators::max_ppm`] of the nominal period, its
    /// first edge within its first period; the error names the node and the allowed range.
    pub fn validate(&self, nodes: usize, link: &LinkConfig) -> Result<(), Error> {
        if self.periods.len() != nodes || self.phases.len() != nodes {
            return Err(Error::Config(format!("clocks: {} periods and {} phases for {nodes} nodes", self.periods.len(), self.phases.len())));
        }
        let max = Oscillators::max_ppm(link);
        for (n, (&p, &f)) in self.periods.iter().zip(&self.phases).enumerate() {
            if p.abs_diff(NOMINAL) > max {
                return Err(Error::Config(format!(
                    "clock of node {n}: {} ppm off the nominal frequency: allowed ±{max} (half of the {} blocks every {} cycles the links' clock compensation removes)",
                    p.abs_diff(NOMINAL),
                    link.cc_burst,
                    link.cc_interval
                )));
            }
            if f >= p {
                return Err(Error::Config(format!("clock of node {n}: first edge at {f}: allowed 0 ..= {} (within its first period)", p - 1)));
            }
        }
        Ok(())
    }

    /// The shortest period.
    pub fn shortest(&self) -> u64 {
        self.periods.iter().copied().min().unwrap_or(NOMINAL)
    }

    /// The instant of node `n`'s edge `k` (from 0).
    pub fn edge(&self, n: usize, k: u64) -> u64 {
        self.phases[n] + k * self.periods[n]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drifting_clocks_stay_within_their_tolerance_and_the_links_bound() {
        let link = LinkConfig::default();
        // 8 blocks every 4,992 cycles: 1,602 ppm between two ends, so ±801 a node.
        assert_eq!(Oscillators::max_ppm(&link), 801);
        let o = Oscillators::drift(64, 300, 7);
        assert!(o.periods.iter().all(|p| (NOMINAL - 300..=NOMINAL + 300).contains(p)));
        assert!(o.periods.iter().any(|&p| p < NOMINAL - 150) && o.periods.iter().any(|&p| p > NOMINAL + 150), "{:?}", o.periods);
        o.validate(64, &link).unwrap();
        assert_eq!(o, Oscillators::drift(64, 300, 7), "the same seed, other clocks");
        assert_eq!(Oscillators::drift(4, 0, 7), Oscillators::common(4));
        let mut fast = Oscillators::common(4);
        fast.periods[2] = NOMINAL - 900;
        let e = fast.validate(4, &link).unwrap_err().to_string();
        assert!(e.contains("clock of node 2: 900 ppm") && e.contains("allowed ±801"), "{e}");
    }
}
