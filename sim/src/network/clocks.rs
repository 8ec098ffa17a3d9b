//! Nodes on their own clocks: the edge schedule of every node's oscillator, and how an instant
//! reaches the devices — the clock ports of a `<cfg>_sim_async` top, or the clock domains of
//! each node netlist (its `clk`, and each link's receive domain on the sender's clock).

use crate::Error;
use std::path::Path;

use weft_ip::router::RouterConfig;
use weft_ip::system::NodeConfig;
use weft_ip::weft_hdl::netlist::eval::Clocks;

use super::Torus;
use crate::link::{Device, NetlistDevice, VerilatorDevice};

/// Each node on its own clock: the edge schedule and how the clocks reach the devices.
pub(super) struct NodeClocks {
    pub(super) schedule: Clocks,
    pub(super) drive: ClockDrive,
    /// Edges of each node's clock so far.
    pub(super) edges: Vec<u64>,
}

pub(super) enum ClockDrive {
    /// One device (a `<cfg>_sim_async` top): the clock and reset port handles of every node.
    Ports { clk: Vec<usize>, rst: Vec<usize> },
    /// A device per node: its `clk` domain on its own clock, each receive domain `<e>_rx_clk`
    /// on the clock of the neighbour sending to it.
    Domains,
}

impl Torus<NetlistDevice> {
    /// [`Torus::netlist_nodes`] with node n on its own clock of `periods[n]` (any unit), first
    /// rising at `phases[n]`; each link receives on its sender's clock and its channel model
    /// moves on that clock. The nodes' links need receive clocks (`LinkConfig::rx_clock`).
    pub fn netlist_nodes_async(config: &NodeConfig, latency: usize, periods: &[u64], phases: &[u64]) -> Result<Torus<NetlistDevice>, Error> {
        Torus::netlist_nodes_async_of(config, &weft_ip::system::node(config)?, latency, periods, phases)
    }

    /// [`Torus::netlist_nodes_async`] with every node as `net` (see [`Torus::netlist_nodes_of`]).
    pub fn netlist_nodes_async_of(config: &NodeConfig, net: &weft_ip::weft_hdl::netlist::Netlist, latency: usize, periods: &[u64], phases: &[u64]) -> Result<Torus<NetlistDevice>, Error> {
        let nodes = config.router.nodes();
        if !config.link.rx_clock {
            return Err(Error::Config("nodes on their own clocks need links with receive clocks (LinkConfig::rx_clock)".to_string()));
        }
        if periods.len() != nodes || phases.len() != nodes {
            return Err(Error::Config(format!("{nodes} nodes need {nodes} clock periods and phases")));
        }
        let mut torus = Torus::netlist_nodes_of(config, net, latency);
        torus.node_clocks = Some(NodeClocks { schedule: Clocks::new(periods, phases), drive: ClockDrive::Domains, edges: vec![0; nodes] });
        Ok(torus)
    }
}

impl Torus<VerilatorDevice> {
    /// Verilator on a `<cfg>_sim_async` top: node n runs on its own clock of `periods[n]` (any
    /// unit), first rising at `phases[n]`; the links inside receive on their senders' clocks.
    pub fn verilated_sim_async(config: &RouterConfig, file: &Path, top: &str, periods: &[u64], phases: &[u64]) -> Result<Torus<VerilatorDevice>, Error> {
        let nodes = config.nodes();
        if periods.len() != nodes || phases.len() != nodes {
            return Err(Error::Config(format!("{top}: {nodes} nodes need {nodes} clock periods and phases")));
        }
        let mut torus = Torus::verilated_sim(config, file, top)?;
        let clk = (0..nodes).map(|n| torus.devices[0].port(&format!("clk_n{n}"))).collect();
        let rst = (0..nodes).map(|n| torus.devices[0].port(&format!("rst_n{n}"))).collect();
        torus.node_clocks = Some(NodeClocks { schedule: Clocks::new(periods, phases), drive: ClockDrive::Ports { clk, rst }, edges: vec![0; nodes] });
        Ok(torus)
    }
}

impl<D: Device> Torus<D> {
    /// Edges of each node's clock so far (when each node has its own clock).
    pub fn node_edges(&self) -> Option<Vec<u64>> {
        self.node_clocks.as_ref().map(|c| c.edges.clone())
    }

    /// The nodes whose clock rises at the next instant: all of them, unless each node has its
    /// own clock.
    pub(super) fn next_instant(&mut self) -> Vec<bool> {
        let nodes = self.config.nodes();
        match self.node_clocks.as_mut() {
            None => vec![true; nodes],
            Some(c) => {
                let mut active = vec![false; nodes];
                for n in c.schedule.advance() {
                    active[n] = true;
                }
                active
            }
        }
    }

    /// The clock edge of the `active` nodes (after the serial links moved): every device's
    /// clock, or the active nodes' own clocks; counts a cycle when node 0 is among them.
    pub(super) fn clock_instant(&mut self, active: &[bool]) {
        self.wire_serials(active);
        match self.node_clocks.as_mut() {
            None => {
                for d in self.devices.iter_mut() {
                    d.clock(false);
                }
            }
            Some(c) => {
                for (n, a) in active.iter().enumerate() {
                    c.edges[n] += u64::from(*a);
                }
                match &c.drive {
                    ClockDrive::Ports { clk, .. } => {
                        let clocks: Vec<usize> = (0..active.len()).filter(|&n| active[n]).map(|n| clk[n]).collect();
                        self.devices[0].edges(&clocks);
                    }
                    ClockDrive::Domains => {
                        for (m, d) in self.devices.iter_mut().enumerate() {
                            let mut domains: Vec<String> = if active[m] { vec!["clk".to_string()] } else { vec![] };
                            domains.extend(self.serials.iter().filter(|s| s.to == m && active[s.from]).map(|s| s.rx_domain.clone()));
                            if !domains.is_empty() {
                                d.clock_named(&domains);
                            }
                        }
                    }
                }
            }
        }
        if active[0] {
            self.cycle += 1;
        }
    }
}
