//! Dimension-order routing and the dateline virtual-channel policy, as software: the reference
//! the router's netlist is tested against, and the source of the expected hop counts. The
//! hardware (`arrival.rs`) computes the same rules in a form that compares destinations
//! with registered values derived from the node's coordinates; its tests hold it to these.
//!
//! Routing is minimal and dimension-ordered: X first, then Y, then Z, then the IntraNode port.
//! On a ring of size k the offset `(dst − here) mod k` decides the direction: 1 ..= k/2 goes +
//! (so ties at k/2 go +), the rest goes −.
//!
//! Deadlock freedom (the argument the hardware relies on). A packet enters each dimension on
//! virtual channel 0 and moves to virtual channel 1 when it crosses that ring's dateline (the
//! wrap-around link: + from coordinate k−1 to 0, − from 0 to k−1); it keeps its VC while it
//! stays in the dimension. A minimal route travels at most k/2 < k links of one ring in one
//! direction, so it crosses the dateline at most once. Number the channels of one ring and
//! direction: VC 0 links by their distance *after* the dateline (0 ..= k−1), then VC 1 links
//! likewise. A packet only ever waits for a channel numbered higher than the one it holds: on
//! VC 0 it moves away from the dateline until it crosses it onto VC 1, where it again moves
//! away from the dateline. Between dimensions the order is X < Y < Z, and the ejection ports
//! come last and always drain. So the channel dependency graph is acyclic and, with virtual
//! cut-through (a packet only advances into a buffer that holds all of it), no cycle of full
//! buffers can form. Without the VC switch the channels of a ring of size ≥ 3 form a cycle,
//! which `dateline: false` exists to demonstrate.

use super::config::{Direction, RouterConfig};

/// One dimension of dimension-order routing on a ring of `k`: whether the packet still moves
/// in it, and whether it goes + (offset 1 ..= k/2; ties at k/2 go +).
pub fn ring_dir(k: usize, here: usize, dst: usize) -> (bool, bool) {
    let offset = (dst + k - here) % k;
    (offset != 0, offset <= k / 2)
}

/// The dateline rule: the virtual channel of a packet leaving `here` in direction `plus` of a
/// ring of `k`. Crossing the wrap-around link moves it to VC 1; a packet that stays in its
/// dimension keeps its VC (`kept`); entering a dimension starts on VC 0.
pub fn dateline_vc(k: usize, here: usize, plus: bool, kept: Option<bool>) -> bool {
    let crosses = if plus { here == k - 1 } else { here == 0 };
    crosses || kept == Some(true)
}

/// Where a router sends a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Hop {
    /// To the neighbour in this direction, on this virtual channel.
    Link(Direction, usize),
    /// Out of this IntraNode port.
    Eject(usize),
}

/// The direction to take in one dimension, if the packet is not yet at `dst` there.
pub fn ring_step(k: usize, here: usize, dst: usize) -> Option<bool> {
    let (moving, plus) = ring_dir(k, here, dst);
    moving.then_some(plus)
}

/// The next hop of a packet at node `here` for destination `dst` / `dst_port`, which arrived on
/// `from` (None for a packet injected here) and virtual channel `vc`.
pub fn next_hop(config: &RouterConfig, here: [usize; 3], dst: [usize; 3], dst_port: usize, from: Option<Direction>, vc: usize) -> Hop {
    for dim in 0..3 {
        if let Some(plus) = ring_step(config.dims[dim], here[dim], dst[dim]) {
            let d = Direction { dim, plus };
            let stay = from.is_some_and(|f| f.dim == dim);
            let vc = config.dateline && dateline_vc(config.dims[dim], here[dim], plus, stay.then_some(vc == 1));
            return Hop::Link(d, vc as usize);
        }
    }
    Hop::Eject(dst_port)
}

/// Whether a packet that arrived on `from` (None: injected here) can leave on link `to`: a
/// dimension-ordered minimal route only continues in its direction (when a ring's minimal
/// routes in that direction take two links or more) or turns into a later dimension, never
/// back, never the other way round its ring. The switch has paths for these turns only.
pub fn turn_allowed(config: &RouterConfig, from: Option<Direction>, to: Direction) -> bool {
    match from {
        None => true,
        Some(f) => to.dim > f.dim || to == f && longest_run(config.dims[f.dim], f.plus) >= 2,
    }
}

/// Links a minimal route takes at most in one direction of a ring of `k` (ties at k/2 go +).
fn longest_run(k: usize, plus: bool) -> usize {
    if plus {
        k / 2
    } else {
        (k - 1) / 2
    }
}

/// Whether the switch connects input port `i` to output port `o` (ports numbered as the router
/// numbers them: IntraNode ports first, then [`RouterConfig::directions`]): every input reaches
/// every IntraNode output, a link output only from the inputs [`turn_allowed`] lets turn into it.
pub fn connects(config: &RouterConfig, i: usize, o: usize) -> bool {
    let dirs = config.directions();
    let link = |p: usize| p.checked_sub(config.local_ports).map(|k| dirs[k]);
    link(o).is_none_or(|to| turn_allowed(config, link(i), to))
}

/// Router-to-router hops from `src` to `dst` (what the header's `hops` must read on arrival).
pub fn distance(config: &RouterConfig, src: [usize; 3], dst: [usize; 3]) -> usize {
    (0..3)
        .map(|d| {
            let k = config.dims[d];
            let offset = (dst[d] + k - src[d]) % k;
            if offset <= k / 2 {
                offset
            } else {
                k - offset
            }
        })
        .sum()
}

/// The nodes and virtual channels a packet passes, following [`next_hop`] from `src`.
pub fn path(config: &RouterConfig, src: [usize; 3], dst: [usize; 3]) -> Vec<(Direction, usize)> {
    let mut here = src;
    let mut from = None;
    let mut vc = 0;
    let mut hops = vec![];
    while let Hop::Link(d, v) = next_hop(config, here, dst, 0, from, vc) {
        hops.push((d, v));
        let k = config.dims[d.dim];
        here[d.dim] = if d.plus { (here[d.dim] + 1) % k } else { (here[d.dim] + k - 1) % k };
        from = Some(d);
        vc = v;
        assert!(hops.len() <= 3 * 64, "routing loop");
    }
    hops
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ties_go_plus_and_the_shorter_way_is_taken() {
        assert_eq!(ring_step(4, 0, 2), Some(true));
        assert_eq!(ring_step(4, 0, 3), Some(false));
        assert_eq!(ring_step(4, 3, 0), Some(true));
        assert_eq!(ring_step(2, 1, 0), Some(true));
        assert_eq!(ring_step(5, 0, 3), Some(false));
        assert_eq!(ring_step(5, 0, 2), Some(true));
        assert_eq!(ring_step(4, 2, 2), None);
    }

    /// The turns the switch connects are exactly those the routes take: every hop of every
    /// path (and every first hop from an IntraNode port) is allowed, and every allowed turn
    /// between links is taken by some path.
    #[test]
    fn the_allowed_turns_are_the_turns_routes_take() {
        for dims in [[4, 2, 1], [2, 2, 2], [4, 4, 4], [5, 3, 1], [8, 1, 6], [3, 3, 3]] {
            let config = RouterConfig { dims, ..Default::default() };
            let mut taken = std::collections::HashSet::new();
            for s in 0..config.nodes() {
                for t in 0..config.nodes() {
                    let mut from = None;
                    for (d, _) in path(&config, config.coords(s), config.coords(t)) {
                        assert!(turn_allowed(&config, from, d), "{dims:?}: {from:?} -> {d:?}");
                        taken.insert((from, d));
                        from = Some(d);
                    }
                }
            }
            let dirs = config.directions();
            for from in dirs.iter().map(|d| Some(*d)).chain([None]) {
                for to in &dirs {
                    assert_eq!(turn_allowed(&config, from, *to), taken.contains(&(from, *to)), "{dims:?}: {from:?} -> {to:?}");
                }
            }
        }
    }

    /// On every pair of nodes of several tori: the path is minimal, X then Y then Z, it crosses
    /// each ring's dateline at most once, and the VC is 1 exactly after a crossing within a
    /// dimension.
    #[test]
    fn paths_are_minimal_dimension_ordered_and_switch_vc_only_at_the_dateline() {
        for dims in [[4, 2, 1], [2, 2, 2], [4, 4, 4], [5, 3, 1], [8, 1, 6]] {
            let config = RouterConfig { dims, ..Default::default() };
            for s in 0..config.nodes() {
                for t in 0..config.nodes() {
                    let (src, dst) = (config.coords(s), config.coords(t));
                    let p = path(&config, src, dst);
                    assert_eq!(p.len(), distance(&config, src, dst));
                    let dims_seen: Vec<usize> = p.iter().map(|(d, _)| d.dim).collect();
                    assert!(dims_seen.windows(2).all(|w| w[0] <= w[1]), "{dims:?} {src:?}->{dst:?}: {p:?}");
                    let mut here = src;
                    let mut crossed = [false; 3];
                    for (d, vc) in &p {
                        let k = dims[d.dim];
                        let wrap = if d.plus { here[d.dim] == k - 1 } else { here[d.dim] == 0 };
                        assert!(!(wrap && crossed[d.dim]), "crossed the dateline twice");
                        crossed[d.dim] |= wrap;
                        assert_eq!(*vc, crossed[d.dim] as usize);
                        here[d.dim] = if d.plus { (here[d.dim] + 1) % k } else { (here[d.dim] + k - 1) % k };
                    }
                    assert_eq!(here, dst);
                }
            }
        }
    }
}
