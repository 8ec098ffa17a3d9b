//! What a partitioned torus needs from the processes it runs in: its rank, a swap of blocks with
//! the ranks it shares cables with once per window, and a gather of results at rank 0. MPI
//! provides it (the `weft netsim` command); [`Alone`] is the one-process case.

/// The processes of a partitioned run, as the engine sees them.
pub trait Exchange {
    /// This process's rank, 0 ..= ranks − 1.
    fn rank(&self) -> usize;
    /// Processes in the run.
    fn ranks(&self) -> usize;
    /// Sends each `(rank, words)` of `out` to its rank and returns the words each of those
    /// ranks sent here, in the same order (cables come in pairs, so the ranks sent to are the
    /// ranks heard from).
    fn swap(&mut self, out: &[(usize, Vec<u64>)]) -> Vec<(usize, Vec<u64>)>;
    /// Every rank's `words`, in rank order, at rank 0; empty elsewhere.
    fn gather(&mut self, words: &[u64]) -> Vec<Vec<u64>>;
}

/// One process holding every node.
pub struct Alone;

impl Exchange for Alone {
    fn rank(&self) -> usize {
        0
    }

    fn ranks(&self) -> usize {
        1
    }

    fn swap(&mut self, out: &[(usize, Vec<u64>)]) -> Vec<(usize, Vec<u64>)> {
        assert!(out.is_empty(), "one process has no cable to another");
        vec![]
    }

    fn gather(&mut self, words: &[u64]) -> Vec<Vec<u64>> {
        vec![words.to_vec()]
    }
}
