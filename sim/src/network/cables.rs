//! Cable faults: a pulled cable (on a simulation top through its `cut` input, between per-node
//! models by silencing the channel model), bit-error pulses on a simulation top's links, and the
//! receivers' bit alignment on the lines between per-node models.

use weft_ip::router::Direction;
use weft_ip::weft_hdl::testbench::Rng;

use super::{Injector, Torus};
use crate::link::Device;

impl<D: Device> Torus<D> {
    /// Pulls (`true`) or restores the cable leaving `node` in direction `d`: on a simulation top
    /// its `cut` input; between per-node models the receiver sees no blocks while it is pulled.
    pub fn cut(&mut self, node: usize, d: Direction, pulled: bool) {
        if let Some(s) = self.serials.iter_mut().find(|s| s.from == node && s.direction == d) {
            s.pulled = pulled;
            return;
        }
        // An IO channel pulled offers the receiver nothing (its words wait in the model).
        let mut io = false;
        for c in self.ios.iter_mut().filter(|c| c.from == node && c.direction == d) {
            c.pulled = pulled;
            io = true;
        }
        if io {
            return;
        }
        let port = self.devices[0].port("cut");
        let mut v = self.devices[0].get(port);
        let bit = 6 * node + 2 * d.dim + usize::from(!d.plus);
        v[bit / 64] = (v[bit / 64] & !(1 << (bit % 64))) | (pulled as u64) << (bit % 64);
        self.devices[0].set(port, &v);
    }

    /// Between per-node models: the bit alignment at which each lane's receiver sees the line
    /// (0..66), as `offset(node, direction, lane)` of the cable leaving `node` that way.
    pub fn misalign(&mut self, offset: &dyn Fn(usize, Direction, usize) -> usize) {
        for s in self.serials.iter_mut() {
            let offsets = (0..s.lanes).map(|l| offset(s.from, s.direction, l) % 66).collect();
            s.channel.config_mut().bit_offset = offsets;
        }
    }

    /// Pulses `inject_err` of the simulation top on random existing links, each with
    /// probability `per_million` / 10^6 per cycle.
    pub fn inject_errors(&mut self, per_million: u64, seed: u64) {
        let port = self.devices[0].port("inject_err");
        let links = (0..self.config.nodes()).flat_map(|n| Direction::ALL.into_iter().filter(|d| self.config.dims[d.dim] >= 2).map(move |d| 6 * n + 2 * d.dim + usize::from(!d.plus))).collect();
        self.injector = Some(Injector { port, links, per_million, rng: Rng::new(seed), pulses: 0 });
    }
}
