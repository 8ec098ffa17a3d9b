//! The collectives one engine runs along the chain ([`mod@super::plan`]), each as a program for every
//! node's register window, what every host sends, and what every host gets back.
//!
//! | collective | root | operator | each host sends | each host gets |
//! | --- | --- | --- | --- | --- |
//! | allreduce | middle of the chain | the operation's | its vector | the reduction |
//! | reduce | the given node | the operation's | its vector | the root: the reduction; others nothing (`no_result`) |
//! | broadcast | the given node | `or` | the root: its vector; others nothing | the root's vector, bit for bit |
//! | allgather | middle | `or` | its vector at its node's slot of P slots, zeros elsewhere | every vector, in node order |
//! | reduce-scatter | middle | the operation's | its vector | its node's slice of the reduction |
//! | barrier | middle | `or` | one zero element | one zero element, once every host has sent |
//!
//! **Short vectors.** On a torus whose dimensions are powers of two, every collective but reduce
//! and broadcast (where only some nodes send or receive) sends a vector of at most
//! [`SMALL_BYTES`] as one packet, which the unit runs on the butterfly ([`mod@super::butterfly`];
//! register `allreduce_small_bytes`), and its reductions follow the butterfly's order; longer
//! vectors run on the chain.
//!
//! `or` with zeros beside one node's bits moves those bits unchanged, NaN payloads and signed
//! zeros included, so broadcast and allgather are exact copies on every element type.
//! Reduce-scatter runs as an allreduce whose hosts keep their slice (slice `i` of a vector of `n`
//! elements is `[i·n/P, (i+1)·n/P)`): it costs an allreduce. Allgather carries `P·n` elements
//! through every link.

use super::butterfly::{self, BUTTERFLY_BYTES};
use super::element::{ElementType, ReduceOp};
use super::engine::FLAGS;
use super::plan::{chain, chain_around, packet_sizes, plan_on, reference_on, Program};
use crate::router::RouterConfig;

/// The butterfly's size limit the collectives program (register `allreduce_small_bytes`): the
/// butterfly's whole buffer. `weft bench collectives` measures both units at every size; the
/// butterfly is the faster up to this size on the shipped tori (the crossover table in the
/// collectives guide).
pub const SMALL_BYTES: u32 = BUTTERFLY_BYTES as u32;

/// One collective operation of the engine.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Collective {
    /// Every node gets the reduction of every node's vector.
    Allreduce,
    /// Node `root` gets the reduction.
    Reduce {
        /// The node (number) that gets the result.
        root: usize,
    },
    /// Every node gets node `root`'s vector.
    Broadcast {
        /// The node (number) whose vector every node gets.
        root: usize,
    },
    /// Every node gets every node's vector, concatenated in node order.
    Allgather,
    /// Node `i` gets slice `i` of the reduction.
    ReduceScatter,
    /// Every node's host learns that every host has entered.
    Barrier,
}

fn flag(name: &str) -> u32 {
    1 << FLAGS.iter().position(|f| *f == name).expect("allreduce flag")
}

impl Collective {
    /// `allreduce`, `reduce`, `broadcast`, `allgather`, `reduce-scatter` or `barrier`.
    pub fn name(self) -> &'static str {
        match self {
            Collective::Allreduce => "allreduce",
            Collective::Reduce { .. } => "reduce",
            Collective::Broadcast { .. } => "broadcast",
            Collective::Allgather => "allgather",
            Collective::ReduceScatter => "reduce-scatter",
            Collective::Barrier => "barrier",
        }
    }

    /// The collective unit's chain for this collective: reduce and broadcast along the snake
    /// turned so that their root sits in its middle ([`chain_around`]), the others along the
    /// snake.
    pub fn unit_chain(self, config: &RouterConfig) -> Vec<[usize; 3]> {
        match self {
            Collective::Reduce { root } | Collective::Broadcast { root } => chain_around(config, root),
            _ => chain(config.dims),
        }
    }

    /// The root's position on the chain `order`: the given node for reduce and broadcast, else
    /// the middle.
    pub(super) fn root_position(self, config: &RouterConfig, order: &[[usize; 3]]) -> usize {
        match self {
            Collective::Reduce { root } | Collective::Broadcast { root } => order.iter().position(|c| config.node(*c) == root).expect("root is a node"),
            _ => order.len() / 2,
        }
    }

    /// The operator the engine runs: `op` for the reductions, `or` for the copies.
    pub fn operator(self, op: ReduceOp) -> ReduceOp {
        match self {
            Collective::Broadcast { .. } | Collective::Allgather | Collective::Barrier => ReduceOp::Or,
            _ => op,
        }
    }

    /// Every node's program (indexed by node number) for the engine on ports `[a, b]`: along
    /// [`Collective::unit_chain`], and the butterfly for short vectors where it applies; a root that is not a node is
    /// an error naming the range.
    pub fn programs(self, config: &RouterConfig, ports: [usize; 2]) -> Result<Vec<Program>, crate::Error> {
        let mut programs = self.programs_on(config, &self.unit_chain(config), ports)?;
        let small = self.small_bytes(config);
        for p in programs.iter_mut() {
            p.small_bytes = small;
        }
        Ok(programs)
    }

    /// Every node's program along the chain `order` (node coordinates, consecutive ones
    /// neighbours) for a chain engine on ports `[a, b]`, everything on the chain (`small_bytes`
    /// 0): the root at the given node for reduce and broadcast, else in the middle.
    pub fn programs_on(self, config: &RouterConfig, order: &[[usize; 3]], ports: [usize; 2]) -> Result<Vec<Program>, crate::Error> {
        if let Collective::Reduce { root } | Collective::Broadcast { root } = self {
            if root >= config.nodes() {
                return Err(crate::Error::Config(format!("{} root {root}: allowed nodes 0..={}", self.name(), config.nodes() - 1)));
            }
        }
        let mut programs = plan_on(config, order, ports, self.root_position(config, order));
        for p in programs.iter_mut() {
            let root = p.flags & flag("root") != 0;
            match self {
                Collective::Reduce { .. } if root => p.flags &= !(flag("fwd_a") | flag("fwd_b")),
                Collective::Reduce { .. } => p.flags = (p.flags & !flag("fwd_b")) | flag("no_result"),
                // Only the root contributes; the others pass its vector on.
                Collective::Broadcast { .. } => p.flags &= !(flag("use_a") | flag("use_b")),
                _ => {}
            }
        }
        Ok(programs)
    }

    /// The size limit of the butterfly's packets for this collective on `config`'s torus: 0 (all on
    /// the chain) for reduce, whose other nodes get no result, for broadcast, whose other nodes
    /// send nothing, and where a dimension is not a power of two; else [`SMALL_BYTES`] (at most
    /// the router's longest packet).
    pub fn small_bytes(self, config: &RouterConfig) -> u32 {
        let butterfly = butterfly::steps(config.dims).is_some_and(|s| !s.is_empty());
        if butterfly && !matches!(self, Collective::Reduce { .. } | Collective::Broadcast { .. }) {
            SMALL_BYTES.min(config.max_packet_bytes as u32 / 8 * 8)
        } else {
            0
        }
    }

    /// How every host splits a contribution of `bytes` into packets for this collective: one
    /// packet when the butterfly takes it (at most [`Collective::small_bytes`]), else packets of
    /// `packet_bytes` ([`packet_sizes`]), all but the last marked [`MORE`](super::unit::MORE) so they run on the
    /// chain.
    pub fn packets(self, config: &RouterConfig, bytes: usize, packet_bytes: usize) -> Vec<usize> {
        if bytes <= self.small_bytes(config) as usize {
            vec![bytes]
        } else {
            packet_sizes(bytes, packet_bytes)
        }
    }

    /// What each node's host sends (indexed by node number; empty: nothing), from the user's
    /// vectors (`inputs`, one per node, equal lengths).
    pub fn contributions(self, config: &RouterConfig, inputs: &[Vec<u128>]) -> Vec<Vec<u128>> {
        let p = config.nodes();
        match self {
            Collective::Broadcast { root } => (0..p).map(|n| if n == root { inputs[n].clone() } else { vec![] }).collect(),
            Collective::Allgather => {
                let n = inputs[0].len();
                (0..p)
                    .map(|i| {
                        let mut v = vec![0; n * p];
                        v[i * n..(i + 1) * n].copy_from_slice(&inputs[i]);
                        v
                    })
                    .collect()
            }
            Collective::Barrier => vec![vec![0]; p],
            _ => inputs.to_vec(),
        }
    }

    /// What each node's host gets (indexed by node number; empty: nothing) when the hosts send
    /// packets as [`Collective::packets`] splits them, in software: for the reductions the
    /// butterfly's order ([`super::butterfly::reference()`]) for a vector sent whole in one
    /// packet of at most [`Collective::small_bytes`], else the chain's
    /// ([`super::plan::reference()`]); copies for the others.
    pub fn reference(self, config: &RouterConfig, inputs: &[Vec<u128>], ty: ElementType, op: ReduceOp, packet_bytes: usize) -> Vec<Vec<u128>> {
        let small = self.small_bytes(config) as usize;
        self.outcome(config, inputs, || {
            let bytes = inputs.first().map_or(0, |v| v.len()) * ty.bytes();
            if bytes <= small && self.packets(config, bytes, packet_bytes).len() == 1 {
                butterfly::reference(config, inputs, ty, op).swap_remove(0)
            } else {
                let order = self.unit_chain(config);
                reference_on(config, &order, inputs, ty, op, self.root_position(config, &order))
            }
        })
    }

    /// What each node's host gets (indexed by node number; empty: nothing) from the user's
    /// vectors `inputs`, given the engines' `reduced` vector (called only by the reductions).
    pub(super) fn outcome(self, config: &RouterConfig, inputs: &[Vec<u128>], reduced: impl Fn() -> Vec<u128>) -> Vec<Vec<u128>> {
        let p = config.nodes();
        match self {
            Collective::Allreduce => vec![reduced(); p],
            Collective::Reduce { root } => (0..p).map(|n| if n == root { reduced() } else { vec![] }).collect(),
            Collective::Broadcast { root } => vec![inputs[root].clone(); p],
            Collective::Allgather => vec![inputs.concat(); p],
            Collective::ReduceScatter => {
                let all = reduced();
                (0..p).map(|i| all[slice(i, all.len(), p)].to_vec()).collect()
            }
            Collective::Barrier => vec![vec![0]; p],
        }
    }

    /// The user's result at `node` from what the engine delivered to its host.
    pub fn result(self, config: &RouterConfig, node: usize, delivered: Vec<u128>) -> Vec<u128> {
        match self {
            Collective::ReduceScatter => delivered[slice(node, delivered.len(), config.nodes())].to_vec(),
            _ => delivered,
        }
    }

    /// Elements the engine delivers to `node`'s host for user vectors of `n` elements.
    pub fn delivered(self, config: &RouterConfig, node: usize, n: usize) -> usize {
        match self {
            Collective::Reduce { root } if root != node => 0,
            Collective::Allgather => n * config.nodes(),
            Collective::Barrier => 1,
            _ => n,
        }
    }
}

/// Slice `i` of `P` of a vector of `n` elements: `[i·n/P, (i+1)·n/P)`.
fn slice(i: usize, n: usize, p: usize) -> std::ops::Range<usize> {
    i * n / p..(i + 1) * n / p
}
