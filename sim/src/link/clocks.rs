//! The clock schedule of a link pair: each endpoint's `clk` runs at its own period, and each
//! endpoint's `rx_clk` is recovered from its partner's transmitter, so it rises exactly when the
//! partner's `clk` does (same frequency and phase).

use weft_ip::weft_hdl::netlist::eval::Clocks;

/// The clocks that rise at one instant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Edges {
    rising: [bool; 2],
}

impl Edges {
    /// End `i`'s `clk` (and the channel it transmits on, clocked by its sender).
    pub fn clk(&self, i: usize) -> bool {
        self.rising[i]
    }

    /// End `i`'s `rx_clk`: its partner's `clk`.
    pub fn rx_clk(&self, i: usize) -> bool {
        self.rising[1 - i]
    }
}

/// The `clk` of both ends, first rising together at instant 0.
pub(super) struct EndClocks {
    clocks: Clocks,
}

impl EndClocks {
    pub fn new(periods: [u64; 2]) -> EndClocks {
        EndClocks { clocks: Clocks::new(&periods, &[0, 0]) }
    }

    /// The clocks of the next instant at which any rises.
    pub fn next(&mut self) -> Edges {
        let rising = self.clocks.advance();
        Edges { rising: [rising.contains(&0), rising.contains(&1)] }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unequal_periods_drift_and_rx_clk_follows_the_partner() {
        let (pa, pb) = (6400u64, 6402u64);
        let mut clocks = EndClocks::new([pa, pb]);
        let (mut a, mut b, mut together, mut now) = (0u64, 0u64, 0u64, 0u64);
        while a < 1_000_000 {
            let e = clocks.next();
            assert!(e.clk(0) || e.clk(1), "an instant where no clock rises");
            assert_eq!((e.rx_clk(0), e.rx_clk(1)), (e.clk(1), e.clk(0)));
            now = clocks.clocks.now;
            a += e.clk(0) as u64;
            b += e.clk(1) as u64;
            together += (e.clk(0) && e.clk(1)) as u64;
            // Edges coincide exactly at the common multiples of both periods.
            assert_eq!(e.clk(0) && e.clk(1), now % pa == 0 && now % pb == 0, "at {now}");
        }
        // A's last edge is at (10^6 - 1) * pa; B has risen at every multiple of pb up to then.
        assert_eq!(now, (1_000_000 - 1) * pa);
        assert_eq!(b, now / pb + 1);
        let lcm = pa * pb / 2; // their greatest common divisor is 2
        assert_eq!(together, now / lcm + 1);
    }

    #[test]
    fn equal_periods_rise_together_every_instant() {
        let mut clocks = EndClocks::new([10, 10]);
        for _ in 0..100 {
            let e = clocks.next();
            assert!(e.clk(0) && e.clk(1) && e.rx_clk(0) && e.rx_clk(1));
        }
    }
}
