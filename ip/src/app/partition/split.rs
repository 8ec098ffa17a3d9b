//! Splitting the primary set: its dual graph, work weights, METIS k-way, and recursive
//! coordinate bisection as the geometric fallback.

use super::super::program::{App, Arg, SetId};
use super::LoopArgs;
use crate::Error;

/// The dual graph of `primary` in METIS's compressed form (`xadj`, `adjncy`): two primary
/// elements are neighbours when an element of another set maps to both through one map of
/// dimension two or more (Airfoil: two cells sharing an edge, through edge → cell).
pub fn dual_graph<T: num_traits::Float>(app: &App<T>, primary: SetId) -> (Vec<i32>, Vec<i32>) {
    let n = app.set_size(primary);
    let mut adjacent: Vec<Vec<u32>> = vec![vec![]; n];
    for m in app.maps() {
        let (_, from, to, dim, values) = app.map_info(m);
        if to != primary || from == primary || dim < 2 {
            continue;
        }
        for targets in values.chunks(dim) {
            for (i, &a) in targets.iter().enumerate() {
                for &b in &targets[i + 1..] {
                    if a != b {
                        adjacent[a as usize].push(b);
                        adjacent[b as usize].push(a);
                    }
                }
            }
        }
    }
    let (mut xadj, mut adjncy) = (vec![0i32], vec![]);
    for mut list in adjacent {
        list.sort_unstable();
        list.dedup();
        adjncy.extend(list.iter().map(|&x| x as i32));
        xadj.push(adjncy.len() as i32);
    }
    (xadj, adjncy)
}

/// The work each primary element brings: one per loop over the primary set, and one per loop
/// for every element of another set whose first map into the primary set points at it (the
/// element that will own it).
pub fn work_weights<T: num_traits::Float>(app: &App<T>, loops: &[LoopArgs], primary: SetId) -> Vec<i32> {
    let mut w = vec![0i32; app.set_size(primary)];
    for (_, set, _) in loops {
        if *set == primary {
            w.iter_mut().for_each(|x| *x += 1);
            continue;
        }
        if let Some(m) = app.maps().into_iter().find(|m| app.map_info(*m).1 == *set && app.map_info(*m).2 == primary) {
            let (_, _, _, dim, values) = app.map_info(m);
            for targets in values.chunks(dim) {
                w[targets[0] as usize] += 1;
            }
        }
    }
    w.iter_mut().for_each(|x| *x = (*x).max(1));
    w
}

/// METIS k-way on the graph (`xadj`, `adjncy`) with vertex weights `weights`, seed 1 (the same
/// mesh always gives the same parts). Returns each vertex's part and the edge cut.
pub fn metis(xadj: &[i32], adjncy: &[i32], weights: &[i32], parts: usize) -> Result<(Vec<u32>, usize), Error> {
    // METIS draws from the C library's global random generator: one call at a time, or two
    // threads' calls interleave their draws and the parts depend on timing.
    static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let n = xadj.len() - 1;
    if parts == 1 || n == 0 {
        return Ok((vec![0; n], 0));
    }
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let mut part = vec![0i32; n];
    let cut = metis::Graph::new(1, parts as i32, xadj, adjncy)
        .map_err(|e| Error::Config(format!("METIS: {e}")))?
        .set_vwgt(weights)
        .set_option(metis::option::Seed(1))
        .part_kway(&mut part)
        .map_err(|e| Error::Config(format!("METIS k-way into {parts} parts: {e}")))?;
    Ok((part.into_iter().map(|p| p as u32).collect(), cut as usize))
}

/// Recursive coordinate bisection: the points split across the longest side of their bounding
/// box at the weighted position that gives each half its share of `parts`, recursively. Ties
/// keep index order, so the split is deterministic.
pub fn bisection(points: &[[f64; 3]], weights: &[i32], parts: usize) -> Vec<u32> {
    let mut part = vec![0u32; points.len()];
    let all: Vec<u32> = (0..points.len() as u32).collect();
    bisect(points, weights, all, 0, parts, &mut part);
    part
}

fn bisect(points: &[[f64; 3]], weights: &[i32], mut ids: Vec<u32>, first: u32, parts: usize, part: &mut [u32]) {
    if parts <= 1 || ids.len() <= 1 {
        ids.iter().for_each(|&i| part[i as usize] = first);
        return;
    }
    let extent = |k: usize| {
        let (lo, hi) = ids.iter().fold((f64::MAX, f64::MIN), |(lo, hi), &i| (lo.min(points[i as usize][k]), hi.max(points[i as usize][k])));
        hi - lo
    };
    let axis = (0..3).max_by(|a, b| extent(*a).total_cmp(&extent(*b)).then(b.cmp(a))).unwrap_or(0);
    ids.sort_by(|a, b| points[*a as usize][axis].total_cmp(&points[*b as usize][axis]).then(a.cmp(b)));
    let left_parts = parts / 2;
    let total: i64 = ids.iter().map(|&i| weights[i as usize] as i64).sum();
    let want = total * left_parts as i64 / parts as i64;
    let (mut sum, mut cut) = (0i64, 0);
    while cut < ids.len() - 1 && sum + (weights[ids[cut] as usize] as i64) <= want {
        sum += weights[ids[cut] as usize] as i64;
        cut += 1;
    }
    let right = ids.split_off(cut.max(1));
    bisect(points, weights, ids, first, left_parts, part);
    bisect(points, weights, right, first + left_parts as u32, parts - left_parts, part);
}

/// The position of every primary element from dat `coords` (dimension 2 or 3): on the primary set
/// itself, or on a set the primary set maps to (the mean of the mapped elements' positions, as a
/// cell's centre from its nodes).
pub fn positions<T: num_traits::Float>(app: &App<T>, primary: SetId, coords: super::super::program::DatId) -> Result<Vec<[f64; 3]>, Error> {
    let (name, set, dim) = app.dat_info(coords);
    if !(2..=3).contains(&dim) {
        return Err(Error::Config(format!("partition: coordinates `{name}` have dimension {dim}: allowed 2 or 3")));
    }
    let values = app.values(coords);
    let at = |e: usize| {
        let mut p = [0.0; 3];
        for k in 0..dim {
            p[k] = values[e * dim + k].to_f64().unwrap_or(0.0);
        }
        p
    };
    if set == primary {
        return Ok((0..app.set_size(primary)).map(at).collect());
    }
    let m = app
        .maps()
        .into_iter()
        .find(|m| app.map_info(*m).1 == primary && app.map_info(*m).2 == set)
        .ok_or_else(|| Error::Config(format!("partition: coordinates `{name}` are on set `{}`, which `{}` has no map to", app.set_name(set), app.set_name(primary))))?;
    let (_, _, _, mdim, targets) = app.map_info(m);
    Ok(targets
        .chunks(mdim)
        .map(|t| {
            let mut p = [0.0; 3];
            for &e in t {
                let q = at(e as usize);
                (0..3).for_each(|k| p[k] += q[k] / mdim as f64);
            }
            p
        })
        .collect())
}

/// Whether `arg` writes through a map (so its loop runs an exec halo).
pub fn writes_indirectly(arg: &Arg) -> bool {
    matches!(arg, Arg::Indirect(_, _, _, a) if a.writes())
}
