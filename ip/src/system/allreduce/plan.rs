//! The reduction's route and summation order, for the register window and for software.
//!
//! **Chain.** The nodes in snake order: X fastest, each row of X in the direction opposite to
//! the row before, each plane's rows likewise, so consecutive nodes are neighbours (one hop).
//! **Root.** Chain position `m = P / 2` of `P` nodes. Positions `0 … m−1` pass partial sums up
//! the chain to the root, positions `P−1 … m+1` down to it; the root adds the two halves and
//! sends the result back along both, each node handing it on and to its host.
//!
//! **Order** (every node's engine computes `(A ∘ H) ∘ B` per element, `∘` the operation's
//! operator in the system's element type, with the operator's identity for an unused operand):
//! with `v_i` the vector of chain position `i`,
//! `L = (…((v_0 ∘ v_1) ∘ v_2) … ) ∘ v_{m−1}`, `R = (…((v_{P−1} ∘ v_{P−2}) ∘ v_{P−3}) … ) ∘ v_{m+1}`,
//! and the result is `(L ∘ v_m) ∘ R` (without `L` or `R` when a half is empty). The identity
//! leaves every operand unchanged; a NaN anywhere gives the canonical NaN everywhere.
//! [`reference()`] computes exactly this.
//!
//! Hops on the critical path: `max(m, P−1−m)` up and as many down, i.e. `P` for even `P`.

use super::element::{ElementType, ReduceOp};
use super::engine::FLAGS;
use crate::router::RouterConfig;
use crate::system::kernel_port::pack_dst;

/// What a node's register window holds for the allreduce.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Program {
    /// The role bits, one per [`FLAGS`] name, lowest first (register `allreduce_flags`).
    pub flags: u32,
    /// Where partial sums go (at the root: one result copy), packed as header bits 21:0
    /// (`dst_x | dst_y<<6 | dst_z<<12 | dst_port<<18`); 0 when unused.
    pub dst_a: u32,
    /// Where forwarded results go, packed the same way; 0 when unused.
    pub dst_b: u32,
    /// Contribution packets of at most this many bytes run on the butterfly (register
    /// `allreduce_small_bytes`; 0: every packet on the chain).
    pub small_bytes: u32,
}

/// The chain: node coordinates in snake order.
pub fn chain(dims: [usize; 3]) -> Vec<[usize; 3]> {
    let mut out = vec![];
    for z in 0..dims[2] {
        for j in 0..dims[1] {
            let y = if z % 2 == 0 { j } else { dims[1] - 1 - j };
            let row = z * dims[1] + j;
            for i in 0..dims[0] {
                let x = if row.is_multiple_of(2) { i } else { dims[0] - 1 - i };
                out.push([x, y, z]);
            }
        }
    }
    out
}

/// The snake turned so that node `root` sits at its middle, position `P / 2`, when the snake
/// closes into a ring (its last node a neighbour of its first, as on every shipped system): a
/// rooted collective then needs `P / 2` steps to or from its root wherever that is, instead of
/// up to `P − 1`. Otherwise the snake itself.
pub fn chain_around(config: &RouterConfig, root: usize) -> Vec<[usize; 3]> {
    let snake = chain(config.dims);
    let (first, last) = (config.node(snake[0]), config.node(snake[snake.len() - 1]));
    let ring = snake.len() > 2 && config.directions().into_iter().any(|d| config.neighbour(last, d) == first);
    let at = snake.iter().position(|c| config.node(*c) == root);
    match at {
        Some(at) if ring => {
            let p = snake.len();
            (0..p).map(|i| snake[(at + p + i - p / 2) % p]).collect()
        }
        _ => snake,
    }
}

fn flag(name: &str) -> u32 {
    1 << FLAGS.iter().position(|f| *f == name).expect("allreduce flag")
}

/// Each node's program (indexed by node number), for the engine on ports `[a, b]`: every
/// packet on the chain.
pub fn plan(config: &RouterConfig, ports: [usize; 2]) -> Vec<Program> {
    plan_rooted(config, ports, config.nodes() / 2)
}

/// [`plan()`] with the root at chain position `m` (`0 ≤ m < P`): positions below `m` pass
/// partials up the chain to it, positions above it down.
pub fn plan_rooted(config: &RouterConfig, ports: [usize; 2], m: usize) -> Vec<Program> {
    plan_on(config, &chain(config.dims), ports, m)
}

/// [`plan_rooted()`] along the chain `order` (node coordinates, consecutive ones neighbours)
/// instead of the snake.
pub fn plan_on(config: &RouterConfig, order: &[[usize; 3]], ports: [usize; 2], m: usize) -> Vec<Program> {
    let p = order.len();
    let to = |i: usize, port: usize| {
        let c = order[i];
        pack_dst(c[0], c[1], c[2], port)
    };
    let mut out = vec![Program { flags: 0, dst_a: 0, dst_b: 0, small_bytes: 0 }; p];
    for (i, c) in order.iter().enumerate() {
        let n = config.node(*c);
        out[n] = if i < m {
            let flags = if i > 0 { flag("use_a") | flag("fwd_b") } else { 0 };
            Program { flags, dst_a: to(i + 1, ports[0]), dst_b: if i > 0 { to(i - 1, ports[1]) } else { 0 }, small_bytes: 0 }
        } else if i > m {
            let flags = if i < p - 1 { flag("use_a") | flag("fwd_b") } else { 0 };
            let up = if i - 1 == m { ports[1] } else { ports[0] };
            Program { flags, dst_a: to(i - 1, up), dst_b: if i < p - 1 { to(i + 1, ports[1]) } else { 0 }, small_bytes: 0 }
        } else {
            let mut flags = flag("root");
            if m > 0 {
                flags |= flag("use_a") | flag("fwd_a");
            }
            if m < p - 1 {
                flags |= flag("use_b") | flag("fwd_b");
            }
            Program { flags, dst_a: if m > 0 { to(m - 1, ports[1]) } else { 0 }, dst_b: if m < p - 1 { to(m + 1, ports[1]) } else { 0 }, small_bytes: 0 }
        };
    }
    out
}

/// Packet lengths in bytes for a vector of `bytes` (a multiple of 4): packets of `max` bytes (a
/// multiple of 4), the last one shorter. Every node's host must split its vector the same way.
pub fn packet_sizes(bytes: usize, max: usize) -> Vec<usize> {
    (0..bytes.div_ceil(max)).map(|k| max.min(bytes - k * max)).collect()
}

/// The result every node receives, from each node's vector (indexed by node number; elements
/// of `ty` as bits), in the engine's order, for the operator `op`.
pub fn reference(config: &RouterConfig, vectors: &[Vec<u128>], ty: ElementType, op: ReduceOp) -> Vec<u128> {
    reference_rooted(config, vectors, ty, op, config.nodes() / 2)
}

/// [`reference()`] with the root at chain position `m`: `L` folds positions `0 … m−1`, `R`
/// positions `P−1 … m+1`, the result is `(L ∘ v_m) ∘ R`.
pub fn reference_rooted(config: &RouterConfig, vectors: &[Vec<u128>], ty: ElementType, op: ReduceOp, m: usize) -> Vec<u128> {
    reference_on(config, &chain(config.dims), vectors, ty, op, m)
}

/// [`reference_rooted()`] along the chain `order` instead of the snake.
pub fn reference_on(config: &RouterConfig, order: &[[usize; 3]], vectors: &[Vec<u128>], ty: ElementType, op: ReduceOp, m: usize) -> Vec<u128> {
    let order: Vec<usize> = order.iter().map(|c| config.node(*c)).collect();
    let p = order.len();
    let len = vectors[0].len();
    let id = op.identity(ty);
    let step =
        |a: Option<&Vec<u128>>, h: &Vec<u128>, b: Option<&Vec<u128>>| -> Vec<u128> { (0..len).map(|k| op.apply(ty, op.apply(ty, a.map_or(id, |a| a[k]), h[k]), b.map_or(id, |b| b[k]))).collect() };
    let mut left: Option<Vec<u128>> = None;
    for &n in &order[..m] {
        left = Some(step(left.as_ref(), &vectors[n], None));
    }
    let mut right: Option<Vec<u128>> = None;
    for &n in order[m + 1..p].iter().rev() {
        right = Some(step(right.as_ref(), &vectors[n], None));
    }
    step(left.as_ref(), &vectors[order[m]], right.as_ref())
}

/// [`reference()`] for binary32 sums of `f32` vectors.
pub fn reference_f32(config: &RouterConfig, vectors: &[Vec<f32>]) -> Vec<f32> {
    let bits: Vec<Vec<u128>> = vectors.iter().map(|v| v.iter().map(|x| x.to_bits() as u128).collect()).collect();
    reference(config, &bits, ElementType::F32, ReduceOp::Sum).into_iter().map(|x| f32::from_bits(x as u32)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Turned around any root, the chain still visits every node once with neighbours side by
    /// side (the snake's closing link included) and has the root in its middle; a snake that is
    /// no ring stays as it is.
    #[test]
    fn a_chain_turned_around_its_root_keeps_neighbours_side_by_side() {
        for dims in [[4, 2, 1], [2, 2, 2], [8, 1, 1], [4, 4, 4]] {
            let config = RouterConfig { dims, ..Default::default() };
            let p = config.nodes();
            for root in 0..p {
                let order: Vec<usize> = chain_around(&config, root).iter().map(|c| config.node(*c)).collect();
                assert_eq!(order[p / 2], root, "{dims:?}");
                let mut seen = order.clone();
                seen.sort();
                assert_eq!(seen, (0..p).collect::<Vec<_>>(), "{dims:?}");
                for w in order.windows(2) {
                    assert!(config.directions().into_iter().any(|d| config.neighbour(w[0], d) == w[1]), "{dims:?} root {root}: {} and {} are not neighbours", w[0], w[1]);
                }
            }
        }
        let open = RouterConfig { dims: [3, 3, 1], ..Default::default() };
        assert_eq!(chain_around(&open, 4), chain([3, 3, 1]));
    }
}
