//! Edge schedules for an accumulating pipeline λ cycles deep (seed 002): two edges that update
//! the same cell must issue at least λ slots apart, or the second reads the cell before the
//! first has written it back. A schedule is a cyclic sequence of slots, each an edge or a no-op
//! (which reads and writes nothing). [`valid`] is seed 002's `VALID_SCHEDULE`; [`colouring`] is
//! its schedule (greedy colouring of the edge conflict graph, colour groups back to back with λ
//! no-ops after each); [`list`] is weft's: it issues, slot by slot, the oldest pending edge whose
//! cells are free, and a no-op only when none is.
//!
//! With `P` pipelines a schedule is a sequence of rows of `P` slots issued together (slot `P·r + p`
//! goes to pipeline `p` in row `r`), λ counts rows, and the cells' result memory is split in banks
//! that take one update each per row: [`Rows`] says how many pipelines and which bank each cell is
//! in, and the `*_rows` functions keep every row to distinct cells and distinct banks.

use crate::Error;
use std::collections::VecDeque;

/// One slot: an edge index, or a no-op.
pub type Slot = Option<u32>;

/// The cells each edge updates (one for a boundary edge, two for an interior one).
pub type Cells = Vec<Vec<u32>>;

/// The shape of a multi-pipeline schedule: `pipelines` slots a row, and the bank of each cell
/// (`None`: one memory per update, no bank rule).
#[derive(Clone, Copy, Debug)]
pub struct Rows<'a> {
    /// Slots per row: the number of pipelines P (1 or more).
    pub pipelines: usize,
    /// The bank of each cell, indexed by cell; `None` for no bank rule.
    pub banks: Option<&'a [u32]>,
}

impl Rows<'_> {
    /// One pipeline, no banks: seed 002's setting.
    pub const SINGLE: Rows<'static> = Rows { pipelines: 1, banks: None };
}

/// Seed 002's `VALID_SCHEDULE`: no slot shares a cell with any of the λ−1 slots after it,
/// cyclically (the schedule repeats every iteration).
pub fn valid(schedule: &[Slot], cells: &Cells, lambda: usize) -> bool {
    first_conflict(schedule, cells, lambda).is_none()
}

/// The first pair of slots (i, i + j mod n), j < λ, that share a cell.
pub fn first_conflict(schedule: &[Slot], cells: &Cells, lambda: usize) -> Option<(usize, usize)> {
    first_conflict_rows(schedule, cells, lambda, Rows::SINGLE)
}

/// `VALID_SCHEDULE` over rows: no row shares a cell with any of the λ−1 rows after it
/// (cyclically), and inside a row no two updates share a cell or a bank. Returns the first
/// offending pair of slots.
pub fn first_conflict_rows(schedule: &[Slot], cells: &Cells, lambda: usize, rows: Rows) -> Option<(usize, usize)> {
    let p = rows.pipelines;
    assert!(p > 0 && schedule.len().is_multiple_of(p), "a schedule of {} slots in rows of {p}", schedule.len());
    let n = schedule.len() / p;
    let shares = |a: u32, b: u32, bank: bool| {
        let (ca, cb) = (&cells[a as usize], &cells[b as usize]);
        ca.iter().any(|c| cb.contains(c)) || bank && rows.banks.is_some_and(|k| ca.iter().any(|c| cb.iter().any(|d| k[*c as usize] == k[*d as usize])))
    };
    for r in 0..n {
        for i in r * p..r * p + p {
            let Some(a) = schedule[i] else { continue };
            // One edge's own updates go to two banks.
            if let (Some(k), [c, d]) = (rows.banks, cells[a as usize].as_slice()) {
                if k[*c as usize] == k[*d as usize] {
                    return Some((i, i));
                }
            }
            for j in i + 1..r * p + p {
                if schedule[j].is_some_and(|b| shares(a, b, true)) {
                    return Some((i, j));
                }
            }
            for step in 1..lambda.min(n) {
                let row = (r + step) % n;
                for j in row * p..row * p + p {
                    if schedule[j].is_some_and(|b| shares(a, b, false)) {
                        return Some((i, j));
                    }
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
    colouring_rows(cells, lambda, Rows::SINGLE).expect("one pipeline without banks always fits")
}

/// [`colouring`] over rows: each colour group's edges fill rows in order, an edge joining the
/// first row whose banks it does not collide with, then λ rows of no-ops. Fails when an edge's two
/// cells are in one bank.
pub fn colouring_rows(cells: &Cells, lambda: usize, rows: Rows) -> Result<(Vec<Slot>, usize), Error> {
    let of = by_cell(cells);
    let mut colour = vec![usize::MAX; cells.len()];
    for e in 0..cells.len() {
        let used: Vec<usize> = cells[e].iter().flat_map(|c| &of[*c as usize]).map(|n| colour[*n as usize]).filter(|k| *k != usize::MAX).collect();
        colour[e] = (0..).find(|k| !used.contains(k)).unwrap();
    }
    let colours = colour.iter().map(|k| k + 1).max().unwrap_or(0);
    let p = rows.pipelines;
    let bank_of = |e: usize| -> Vec<u32> { cells[e].iter().map(|c| rows.banks.map_or(*c, |k| k[*c as usize])).collect() };
    let mut schedule = vec![];
    for k in 0..colours {
        // Rows being filled: their edges and the banks they use.
        let mut open: Vec<(Vec<u32>, Vec<u32>)> = vec![];
        for e in (0..cells.len()).filter(|e| colour[*e] == k) {
            let banks = bank_of(e);
            if banks.len() == 2 && banks[0] == banks[1] && rows.banks.is_some() {
                return Err(Error::Config(format!("edge {e}: both its cells are in bank {}", banks[0])));
            }
            match open.iter_mut().find(|(es, used)| es.len() < p && !banks.iter().any(|b| used.contains(b))) {
                Some((es, used)) => {
                    es.push(e as u32);
                    used.extend(banks);
                }
                None => open.push((vec![e as u32], banks)),
            }
        }
        for (es, _) in open {
            schedule.extend(es.iter().map(|e| Some(*e)));
            schedule.extend(std::iter::repeat_n(None, p - es.len()));
        }
        schedule.extend(std::iter::repeat_n(None, lambda * p));
    }
    Ok((schedule, colours))
}

/// weft's list schedule: slot by slot, issue the oldest pending edge (looking at most `window`
/// edges ahead) none of whose cells was updated in the last λ−1 slots; a no-op when none is.
/// No-ops are appended at the end as far as the wrap-around into the next iteration needs.
pub fn list(cells: &Cells, lambda: usize, window: usize) -> Vec<Slot> {
    list_rows(cells, lambda, window, Rows::SINGLE).expect("one pipeline without banks always fits")
}

/// [`list`] over rows: each row takes, oldest first among the next `window` pending edges, up
/// to P edges whose cells were not updated in the last λ−1 rows and whose banks are free in the
/// row. Fails when an edge's two cells are in one bank.
pub fn list_rows(cells: &Cells, lambda: usize, window: usize, rows: Rows) -> Result<Vec<Slot>, Error> {
    let p = rows.pipelines;
    let n_cells = cells.iter().flatten().map(|c| *c as usize + 1).max().unwrap_or(0);
    let bank = |c: u32| rows.banks.map_or(c, |k| k[c as usize]);
    if let Some(e) = cells.iter().position(|cs| rows.banks.is_some() && cs.len() == 2 && bank(cs[0]) == bank(cs[1])) {
        return Err(Error::Config(format!("edge {e}: both its cells are in bank {}", bank(cells[e][0]))));
    }
    // Row at which each cell was last updated.
    let mut last = vec![i64::MIN / 2; n_cells];
    let mut pending: VecDeque<u32> = (0..cells.len() as u32).collect();
    let mut schedule: Vec<Slot> = Vec::with_capacity(cells.len() + cells.len() / 8);
    while !pending.is_empty() {
        let t = (schedule.len() / p) as i64;
        let mut used: Vec<u32> = vec![];
        let mut taken: Vec<usize> = vec![];
        for (k, e) in pending.iter().take(window.max(1)).enumerate() {
            let cs = &cells[*e as usize];
            if cs.iter().all(|c| t - last[*c as usize] >= lambda as i64 && !used.contains(&bank(*c))) {
                used.extend(cs.iter().map(|c| bank(*c)));
                taken.push(k);
                if taken.len() == p {
                    break;
                }
            }
        }
        let edges: Vec<u32> = taken.iter().map(|k| pending[*k]).collect();
        for k in taken.iter().rev() {
            pending.remove(*k);
        }
        for e in &edges {
            for c in &cells[*e as usize] {
                last[*c as usize] = t;
            }
        }
        schedule.extend(edges.iter().map(|e| Some(*e)));
        schedule.extend(std::iter::repeat_n(None, p - edges.len()));
    }
    // The wrap-around into the next iteration.
    while first_conflict_rows(&schedule, cells, lambda, rows).is_some() {
        schedule.extend(std::iter::repeat_n(None, p));
    }
    Ok(schedule)
}

/// No-ops in a schedule.
pub fn noops(schedule: &[Slot]) -> usize {
    schedule.iter().filter(|s| s.is_none()).count()
}
