//! Striped collectives: a long vector cut into K slices, slice k carried along chain k by the
//! k-th engine of every node, all K at once; every collective of [`Collective`] runs so.
//!
//! One chain carries every element once each way over each of its P − 1 edges, so it uses two
//! of a node's links; on the shipped tori a node routes over three. K chains (Hamiltonian paths
//! of the torus, each with its root in the middle as in [`mod@super::plan`]) spread the vector over
//! more links: with each link shared by at most `u` of them, the busiest link carries `u/K` of
//! the vector each way instead of all of it. [`chains()`] picks K and the paths: the first is the
//! snake (so one stripe is the plain chain), the others are found by a depth-first search that
//! keeps every link's share at most `u`, for the K ≤ [`MAX_STRIPES`] with the smallest `u/K`.
//! On the 4×2×1 and 2×2×2 tori (cubic graphs of 12 links) that is K = 3, u = 2: two thirds of
//! the vector on the busiest link; on a ring no K beats one chain.
//!
//! The links counted are those the router routes on: every ring of three or more nodes has one
//! per neighbour pair, a dimension of two nodes one (its + link each way).
//!
//! **Order.** Slice k (elements `[k·n/K, (k+1)·n/K)` of what each host sends) follows chain k's
//! order ([`super::plan::reference_on`]) with the collective's root on that chain (reduce and
//! broadcast: the given node on every chain; the others: the chain's middle);
//! [`reduction()`] concatenates the K slices, [`collective_reference()`] gives every host's
//! result.

use super::collective::Collective;
use super::element::{ElementType, ReduceOp};
use super::plan::{chain, reference_on, Program};
use crate::router::RouterConfig;
use crate::Error;

/// Most chains (engines a node) a striped allreduce uses.
pub const MAX_STRIPES: usize = 3;

/// Steps the search of [`chains()`] may take before it gives up on a share.
const SEARCH_STEPS: usize = 2_000_000;

/// The routed links of a torus as node pairs (node numbers, lower first): one per + direction
/// the router has at each node, a pair of nodes once.
fn links(config: &RouterConfig) -> Vec<(usize, usize)> {
    let mut out = vec![];
    for n in 0..config.nodes() {
        for d in config.directions().into_iter().filter(|d| d.plus) {
            let m = config.neighbour(n, d);
            if !out.contains(&(n.min(m), n.max(m))) {
                out.push((n.min(m), n.max(m)));
            }
        }
    }
    out
}

/// The striping of a torus: the chains and how many of them share the busiest link.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Striping {
    /// Chain k as node coordinates in order (consecutive ones neighbours); chain 0 the snake.
    pub chains: Vec<Vec<[usize; 3]>>,
    /// The most chains that use one link.
    pub share: usize,
}

impl Striping {
    /// The fraction of the vector the busiest link carries each way: `share / K`.
    pub fn load(&self) -> f64 {
        self.share as f64 / self.chains.len() as f64
    }
}

/// The striping of `config`'s torus with the least load per link, up to `max` chains (1 ..=
/// [`MAX_STRIPES`]); fewer chains when more would not lower the load.
pub fn chains(config: &RouterConfig, max: usize) -> Result<Striping, Error> {
    if !(1..=MAX_STRIPES).contains(&max) {
        return Err(Error::Config(format!("allreduce stripes = {max}: allowed 1..={MAX_STRIPES}")));
    }
    let mut best = Striping { chains: vec![chain(config.dims)], share: 1 };
    let links = links(config);
    let p = config.nodes();
    for k in 2..=max {
        // K chains have K·(P − 1) edges over the links: some link is shared at least this often.
        let least = (k * (p - 1)).div_ceil(links.len().max(1));
        for share in least..k {
            if share * best.chains.len() >= best.share * k {
                break;
            }
            if let Some(found) = search(config, &links, k, share) {
                best = Striping { chains: found, share };
                break;
            }
        }
    }
    Ok(best)
}

/// K Hamiltonian paths, the first the snake, with no link in more than `share` of them.
fn search(config: &RouterConfig, links: &[(usize, usize)], k: usize, share: usize) -> Option<Vec<Vec<[usize; 3]>>> {
    let p = config.nodes();
    let mut adjacent = vec![vec![]; p];
    for (i, &(a, b)) in links.iter().enumerate() {
        adjacent[a].push((b, i));
        adjacent[b].push((a, i));
    }
    let snake: Vec<usize> = chain(config.dims).iter().map(|c| config.node(*c)).collect();
    let mut used = vec![0; links.len()];
    for w in snake.windows(2) {
        used[links.iter().position(|&l| l == (w[0].min(w[1]), w[0].max(w[1])))?] += 1;
    }
    let mut s = Search { adjacent, used, share, steps: 0, p };
    let mut paths = vec![snake];
    s.more(&mut paths, k).then(|| paths.iter().map(|path| path.iter().map(|&n| config.coords(n)).collect()).collect())
}

struct Search {
    adjacent: Vec<Vec<(usize, usize)>>,
    used: Vec<usize>,
    share: usize,
    steps: usize,
    p: usize,
}

impl Search {
    /// Extends `paths` to `k` paths; false when the budget runs out or none exist.
    fn more(&mut self, paths: &mut Vec<Vec<usize>>, k: usize) -> bool {
        if paths.len() == k {
            return true;
        }
        for start in 0..self.p {
            let mut path = vec![start];
            let mut seen = vec![false; self.p];
            seen[start] = true;
            if self.extend(&mut path, &mut seen, paths, k) {
                return true;
            }
            if self.steps > SEARCH_STEPS {
                return false;
            }
        }
        false
    }

    fn extend(&mut self, path: &mut Vec<usize>, seen: &mut [bool], paths: &mut Vec<Vec<usize>>, k: usize) -> bool {
        self.steps += 1;
        if self.steps > SEARCH_STEPS {
            return false;
        }
        if path.len() == self.p {
            paths.push(path.clone());
            if self.more(paths, k) {
                return true;
            }
            paths.pop();
            return false;
        }
        let here = *path.last().unwrap();
        // The least used links first: the search finds balanced paths sooner.
        let mut next = self.adjacent[here].clone();
        next.sort_by_key(|&(n, l)| (self.used[l], n));
        for (n, l) in next {
            if seen[n] || self.used[l] >= self.share {
                continue;
            }
            self.used[l] += 1;
            seen[n] = true;
            path.push(n);
            if self.extend(path, seen, paths, k) {
                return true;
            }
            path.pop();
            seen[n] = false;
            self.used[l] -= 1;
        }
        false
    }
}

/// Slice `k` of `K` of a vector of `n` elements: `[k·n/K, (k+1)·n/K)`.
pub fn slice(n: usize, k: usize, stripes: usize) -> std::ops::Range<usize> {
    k * n / stripes..(k + 1) * n / stripes
}

/// Every node's program of the collective `c` for each chain of `striping`, chain k on engine
/// ports `ports[k]`: `[chain][node]`. Reduce and broadcast keep their root node on every chain;
/// the others have theirs in each chain's middle.
pub fn plans(config: &RouterConfig, striping: &Striping, c: Collective, ports: &[[usize; 2]]) -> Result<Vec<Vec<Program>>, Error> {
    striping.chains.iter().zip(ports).map(|(order, &pair)| c.programs_on(config, order, pair)).collect()
}

/// The reduction a striped collective `c` computes from `vectors` (indexed by node): slice k
/// reduced in chain k's order with `c`'s root on that chain, the slices concatenated.
pub fn reduction(config: &RouterConfig, striping: &Striping, c: Collective, vectors: &[Vec<u128>], ty: ElementType, op: ReduceOp) -> Vec<u128> {
    let (n, k) = (vectors[0].len(), striping.chains.len());
    let mut out = vec![];
    for (i, order) in striping.chains.iter().enumerate() {
        let cut: Vec<Vec<u128>> = vectors.iter().map(|v| v[slice(n, i, k)].to_vec()).collect();
        out.extend(reference_on(config, order, &cut, ty, op, c.root_position(config, order)));
    }
    out
}

/// What each node's host gets (indexed by node number; empty: nothing) from the collective `c`
/// of the user's vectors `inputs` striped over `striping`, the operator `op` where it reduces.
pub fn collective_reference(config: &RouterConfig, striping: &Striping, c: Collective, inputs: &[Vec<u128>], ty: ElementType, op: ReduceOp) -> Vec<Vec<u128>> {
    c.outcome(config, inputs, || reduction(config, striping, c, inputs, ty, op))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(dims: [usize; 3]) -> RouterConfig {
        RouterConfig { dims, ..Default::default() }
    }

    /// Each chain visits every node once, one routed link at a time; no link is in more than
    /// `share` chains; and the share is the least the counting argument allows.
    #[test]
    fn chains_are_hamiltonian_and_share_links_evenly() {
        for (dims, k, share) in [([4, 2, 1], 3, 2), ([2, 2, 2], 3, 2), ([8, 1, 1], 1, 1), ([4, 4, 1], 3, 2)] {
            let c = config(dims);
            let s = chains(&c, MAX_STRIPES).unwrap();
            assert_eq!((s.chains.len(), s.share), (k, share), "{dims:?}");
            assert_eq!(s.chains[0], chain(dims));
            let links = links(&c);
            let mut used = vec![0; links.len()];
            for order in &s.chains {
                let mut nodes: Vec<usize> = order.iter().map(|x| c.node(*x)).collect();
                for w in nodes.windows(2) {
                    let l = (w[0].min(w[1]), w[0].max(w[1]));
                    used[links.iter().position(|x| *x == l).expect("consecutive nodes are neighbours")] += 1;
                }
                nodes.sort();
                assert_eq!(nodes, (0..c.nodes()).collect::<Vec<_>>(), "{dims:?}: not every node once");
            }
            assert!(used.iter().all(|u| *u <= share), "{dims:?}: {used:?}");
        }
    }

    #[test]
    fn slices_cover_the_vector_once() {
        for n in [1, 2, 3, 100, 4096] {
            let cut: Vec<usize> = (0..3).flat_map(|k| slice(n, k, 3)).collect();
            assert_eq!(cut, (0..n).collect::<Vec<_>>());
        }
    }

    #[test]
    fn out_of_range_stripes_are_refused() {
        let e = chains(&config([4, 2, 1]), 4).unwrap_err().to_string();
        assert!(e.contains("allowed 1..=3"), "{e}");
    }
}
