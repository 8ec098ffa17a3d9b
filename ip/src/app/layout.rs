//! Where a mesh lives on chip: node `n` at node address `n`; cells spread over the result
//! memory's banks so that the cells one edge updates are never in one bank (an edge updates them
//! in the same row). A cell's address carries its bank in the low bits: address = offset·B + bank,
//! bank `b` holding the cells of addresses ≡ b (mod B) at `offset`.

use crate::app::schedule::Cells;
use crate::Error;

/// The on-chip addresses of a mesh's cells.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Layout {
    /// The number of banks B (a power of two, 2 or more).
    pub banks: usize,
    /// Bank of each cell (mesh numbering).
    pub bank: Vec<u32>,
    /// Address of each cell.
    pub address: Vec<u32>,
}

/// Colours the cells (cells one edge updates get different banks) greedily in
/// breadth-first order from cell 0 (a front sweeping the mesh, so a cell meets few coloured
/// neighbours with different banks), each cell taking the least-filled bank its neighbours leave
/// free, so banks fill evenly; then numbers each bank's cells in cell order. `cells_of_edges` are the cells each
/// edge updates; `capacity` is the number of cell addresses (a multiple of `banks`).
pub fn layout(n_cells: usize, cells_of_edges: &Cells, banks: usize, capacity: usize) -> Result<Layout, Error> {
    if !banks.is_power_of_two() || banks < 2 {
        return Err(Error::Config(format!("layout: banks = {banks} is out of range: allowed a power of two, 2 or more")));
    }
    let mut neighbours = vec![vec![]; n_cells];
    for cs in cells_of_edges {
        for (i, a) in cs.iter().enumerate() {
            for b in &cs[i + 1..] {
                neighbours[*a as usize].push(*b);
                neighbours[*b as usize].push(*a);
            }
        }
    }
    let mut bank = vec![u32::MAX; n_cells];
    let mut fill = vec![0usize; banks];
    let mut order = Vec::with_capacity(n_cells);
    let mut seen = vec![false; n_cells];
    for start in 0..n_cells {
        if seen[start] {
            continue;
        }
        seen[start] = true;
        let mut queue = std::collections::VecDeque::from([start]);
        while let Some(c) = queue.pop_front() {
            order.push(c);
            for n in &neighbours[c] {
                if !std::mem::replace(&mut seen[*n as usize], true) {
                    queue.push_back(*n as usize);
                }
            }
        }
    }
    for c in order {
        let taken: Vec<u32> = neighbours[c].iter().map(|n| bank[*n as usize]).collect();
        let b = (0..banks as u32)
            .filter(|b| !taken.contains(b))
            .min_by_key(|b| fill[*b as usize])
            .ok_or_else(|| Error::Config(format!("layout: cell {c} has neighbours in all {banks} banks; use more banks (at least {})", neighbours[c].len() + 1)))?;
        bank[c] = b;
        fill[b as usize] += 1;
    }
    let per_bank = capacity / banks;
    if let Some(b) = fill.iter().position(|f| *f > per_bank) {
        return Err(Error::Config(format!("layout: bank {b} needs {} cells, each bank holds {per_bank} ({capacity} cell addresses over {banks} banks)", fill[b])));
    }
    let mut next = vec![0u32; banks];
    let address = bank
        .iter()
        .map(|b| {
            let offset = next[*b as usize];
            next[*b as usize] += 1;
            offset * banks as u32 + b
        })
        .collect();
    Ok(Layout { banks, bank, address })
}
