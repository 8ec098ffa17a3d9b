//! The processes of `weft netsim` over MPI (Open MPI through the `mpi` crate): the window swaps
//! are non-blocking sends to the neighbouring ranks and blocking receives from them, the gather
//! is point to point into rank 0.

use mpi::topology::SimpleCommunicator;
use mpi::traits::*;

use weft_sim::partition::Exchange;

/// MPI's world communicator, as the partitioned torus's [`Exchange`].
pub struct Mpi {
    world: SimpleCommunicator,
}

impl Mpi {
    /// The world of an initialised MPI universe.
    pub fn new(world: SimpleCommunicator) -> Mpi {
        Mpi { world }
    }

    /// Ends every rank of the run (after an error on this one), exit status 1.
    pub fn abort(&self) -> ! {
        self.world.abort(1)
    }

    /// Waits until every rank has called it.
    pub fn barrier(&self) {
        self.world.barrier();
    }
}

impl Exchange for Mpi {
    fn rank(&self) -> usize {
        self.world.rank() as usize
    }

    fn ranks(&self) -> usize {
        self.world.size() as usize
    }

    fn swap(&mut self, out: &[(usize, Vec<u64>)]) -> Vec<(usize, Vec<u64>)> {
        let world = &self.world;
        mpi::request::scope(|scope| {
            let sends: Vec<_> = out.iter().map(|(r, words)| world.process_at_rank(*r as i32).immediate_send(scope, &words[..])).collect();
            let got = out.iter().map(|(r, _)| (*r, world.process_at_rank(*r as i32).receive_vec::<u64>().0)).collect();
            for s in sends {
                s.wait();
            }
            got
        })
    }

    fn gather(&mut self, words: &[u64]) -> Vec<Vec<u64>> {
        if self.rank() != 0 {
            self.world.process_at_rank(0).send(words);
            return vec![];
        }
        let mut all = vec![words.to_vec()];
        for r in 1..self.ranks() {
            all.push(self.world.process_at_rank(r as i32).receive_vec::<u64>().0);
        }
        all
    }
}
