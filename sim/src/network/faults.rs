//! Node restarts: a node held in reset while its neighbours keep sending, and which packets the
//! scoreboard then lets go. A restarted node loses what it held, and its neighbours drop the
//! frames of the old link session (`link::endpoint::session`), so a packet may be lost when its
//! route (source and destination included) passes a restarted node and its head entered the
//! network before every link was up again after the release. Every other packet must arrive.

use weft_ip::router::route::path;
use weft_ip::router::RouterConfig;

use super::clocks::NodeClocks;
use super::{scalar, ClockDrive, Torus};
use crate::link::{Device, VerilatorDevice};

/// One restart of a node: when it was held in reset, released, and every link up again
/// (cycles of node 0).
#[derive(Clone, Debug)]
pub struct Restart {
    /// The node restarted.
    pub node: usize,
    /// Cycle it was put in reset.
    pub held_at: u64,
    /// Cycle it was released, if it has been.
    pub released: Option<u64>,
    /// Cycle every link was up again after the release, once that has happened.
    pub up_again: Option<u64>,
}

/// The nodes a packet passes from `src` to `dst`, both included.
pub fn route_nodes(config: &RouterConfig, src: usize, dst: usize) -> Vec<usize> {
    let mut here = src;
    let mut nodes = vec![src];
    for (d, _) in path(config, config.coords(src), config.coords(dst)) {
        here = config.neighbour(here, d);
        nodes.push(here);
    }
    nodes
}

impl Torus<VerilatorDevice> {
    /// Holds node `node` of a `<cfg>_sim_async` top in reset (`true`) or releases it; the run's
    /// scoreboard then allows the losses the restart may cause (see the module).
    pub fn hold_in_reset(&mut self, node: usize, held: bool) {
        let Some(NodeClocks { drive: ClockDrive::Ports { rst, .. }, .. }) = self.node_clocks.as_ref() else { panic!("per-node resets need a <cfg>_sim_async top") };
        let port = rst[node];
        self.devices[0].set(port, &scalar(held as u64));
        let cycle = self.cycle;
        match self.restarts.iter_mut().find(|r| r.node == node && r.released.is_none()) {
            Some(r) if !held => r.released = Some(cycle),
            None if held => self.restarts.push(Restart { node, held_at: cycle, released: None, up_again: None }),
            _ => {}
        }
    }
}

impl<D: Device> Torus<D> {
    /// Nodes held in reset now, or released and not yet back: a node takes packets from its
    /// users only once its links are up and it knows its coordinates again (the simulation
    /// top's boot write), as software on a restarted node would wait.
    pub(super) fn held_nodes(&self) -> Vec<usize> {
        self.restarts.iter().filter(|r| r.up_again.is_none()).map(|r| r.node).collect()
    }

    /// Notes when the links are all up again after each release.
    pub(super) fn follow_restarts(&mut self) {
        if self.restarts.iter().any(|r| r.released.is_some() && r.up_again.is_none()) && self.link_up() {
            let cycle = self.cycle;
            for r in self.restarts.iter_mut().filter(|r| r.released.is_some() && r.up_again.is_none()) {
                r.up_again = Some(cycle);
            }
        }
    }

    /// Whether a packet from node `src` to node `dst` whose head entered at `head_in` (if it
    /// did) may be lost to a restart.
    pub(super) fn may_lose(&self, src: usize, dst: usize, head_in: Option<u64>) -> bool {
        self.restarts.iter().any(|r| {
            // A packet that never entered is not lost: it waits for its source.
            let before = match (head_in, r.up_again) {
                (None, _) => false,
                (Some(t), Some(up)) => t < up,
                (Some(_), None) => true,
            };
            before && route_nodes(&self.config, src, dst).contains(&r.node)
        })
    }
}
