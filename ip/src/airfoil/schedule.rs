//! Edge schedules for an accumulating pipeline λ cycles deep (seed 002): two edges that update
//! the same cell must issue at least λ slots apart, or the second reads the cell before the
//! first has written it back. A schedule is a cyclic sequence of slots, each an edge or a no-op
//! (which reads and writes nothing). [`valid`] is seed 002's `VALID_SCHEDULE`; [`colouring`] is
//! its schedule (greedy colouring of the edge conflict graph, colour groups back to back with λ
//! no-ops after each); [`list`] is weft's: it issues, slot by slot, the oldest pending edge whose
//! cells are free, and a no-op only when none is.

use std::collections::VecDeque;

/// One slot: an edge index, or a no-op.
pub type Slot = Option<u32>;

/// The cells each edge updates (one for a boundary edge, two for an interior one).
pub type Cells = Vec<Vec<u32>>;

/// Seed 002's `VALID_SCHEDULE`: no slot shares a cell with any of the λ−1 slots after it,
/// cyclically (the schedule repeats every iteration).
pub fn valid(schedule: &[Slot], cells: &Cells, lambda: usize) -> bool {
    first_conflict(schedule, cells, lambda).is_none()
}

/// The first pair of slots (i, i + j mod n), j < λ, that share a cell.
pub fn first_conflict(schedule: &[Slot], cells: &Cells, lambda: usize) -> Option<(usize, usize)> {
    let n = schedule.len();
    for i in 0..n {
        let Some(a) = schedule[i] else { continue };
        for j in 1..lambda.min(n) {
            let k = (i + j) % n;
            if let Some(b) = schedule[k] {
                if cells[a as usize].iter().any(|c| cells[b as usize].contains(c)) {
                    return Some((i, k));
                }
            }
        }
    }
    None
}

/// Edges of each cell, for conflict lookups.
fn by_cell(cells: &Cells) -> Vec<Vec<u32>> {
    let n = cells.iter().flatten().map(|c| *c as usize + 1).max().unwrap_or(0);
    let mut of = vec![vec![]; n];
    for (e, cs) in cells.iter().enumerate() {
        for c in cs {
            of[*c as usize].push(e as u32);
        }
    }
    of
}

/// Seed 002: colour edges greedily in order (each the lowest colour no edge sharing a cell has),
/// then each colour's edges in order followed by λ no-ops. Returns the schedule and the number
/// of colours.
pub fn colouring(cells: &Cells, lambda: usize) -> (Vec<Slot>, usize) {
    let of = by_cell(cells);
    let mut colour = vec![usize::MAX; cells.len()];
    for e in 0..cells.len() {
        let used: Vec<usize> = cells[e].iter().flat_map(|c| &of[*c as usize]).map(|n| colour[*n as usize]).filter(|k| *k != usize::MAX).collect();
        colour[e] = (0..).find(|k| !used.contains(k)).unwrap();
    }
    let colours = colour.iter().map(|k| k + 1).max().unwrap_or(0);
    let mut schedule = vec![];
    for k in 0..colours {
        schedule.extend((0..cells.len()).filter(|e| colour[*e] == k).map(|e| Some(e as u32)));
        schedule.extend(std::iter::repeat(None).take(lambda));
    }
    (schedule, colours)
}

/// weft's list schedule: slot by slot, issue the oldest pending edge (looking at most `window`
/// edges ahead) none of whose cells was updated in the last λ−1 slots; a no-op when none is.
/// No-ops are appended at the end as far as the wrap-around into the next iteration needs.
pub fn list(cells: &Cells, lambda: usize, window: usize) -> Vec<Slot> {
    let n_cells = cells.iter().flatten().map(|c| *c as usize + 1).max().unwrap_or(0);
    // Slot at which each cell was last updated.
    let mut last = vec![i64::MIN / 2; n_cells];
    let mut pending: VecDeque<u32> = (0..cells.len() as u32).collect();
    let mut schedule: Vec<Slot> = Vec::with_capacity(cells.len() + cells.len() / 8);
    while !pending.is_empty() {
        let t = schedule.len() as i64;
        let free = |e: u32| cells[e as usize].iter().all(|c| t - last[*c as usize] >= lambda as i64);
        match pending.iter().take(window.max(1)).position(|e| free(*e)) {
            Some(k) => {
                let e = pending.remove(k).unwrap();
                for c in &cells[e as usize] {
                    last[*c as usize] = t;
                }
                schedule.push(Some(e));
            }
            None => schedule.push(None),
        }
    }
    while first_conflict(&schedule, cells, lambda).is_some() {
        schedule.push(None);
    }
    schedule
}

/// No-ops in a schedule.
pub fn noops(schedule: &[Slot]) -> usize {
    schedule.iter().filter(|s| s.is_none()).count()
}
