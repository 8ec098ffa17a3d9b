//! Pipeline register places of an operator and the chosen subset of them.

use super::Netlist;

/// The places an operator may take a pipeline register, and which of them the chosen stage
/// count uses. `priority` lists the places from most to least useful (the longest logic first);
/// a depth of `d` takes the first `d`.
pub struct Cuts {
    active: Vec<bool>,
    next: usize,
}

impl Cuts {
    /// Register places for `depth` stages out of `priority.len()` places (each place index
    /// `0..priority.len()` listed once); panics when `depth` exceeds the number of places.
    pub fn new(depth: usize, priority: &[usize]) -> Cuts {
        assert!(depth <= priority.len(), "stage count {depth} above the deepest split {}", priority.len());
        let mut active = vec![false; priority.len()];
        for p in &priority[..depth] {
            active[*p] = true;
        }
        Cuts { active, next: 0 }
    }

    /// Passes one place: the following nodes land one stage later when the place is active.
    pub fn cut(&mut self, net: &mut Netlist) {
        if self.active[self.next] {
            net.stage += 1;
        }
        self.next += 1;
    }

    /// Checks the operator passed every place it declared.
    pub fn finish(self) {
        assert_eq!(self.next, self.active.len(), "operator passed {} of {} cut places", self.next, self.active.len());
    }
}
