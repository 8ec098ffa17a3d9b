//! An AXI4-Lite master on a node's register window — a node's own `s_axil_*` ports, or its
//! `axil_*_n<n>` group on a simulation top: single register writes and reads, the other nodes
//! idling meanwhile (each step is one cycle of that node's clock).

use super::{scalar, Torus};
use crate::link::Device;
use crate::Error;

impl<D: Device> Torus<D> {
    /// The device and port of `signal` (`awaddr`, `rdata`, …) of node `node`'s register window:
    /// `axil_<signal>_n<node>` on a simulation top, `s_axil_<signal>` on a node's own model.
    fn window(&mut self, node: usize, signal: &str) -> (usize, usize) {
        let on_top = format!("axil_{signal}_n{node}");
        if self.devices[0].has_port(&on_top) {
            (0, self.devices[0].port(&on_top))
        } else {
            (node, self.devices[node].port(&format!("s_axil_{signal}")))
        }
    }

    /// Writes a node's register through its AXI4-Lite window (every other node idles meanwhile).
    pub fn axil_write(&mut self, node: usize, addr: u32, data: u32) -> Result<(), Error> {
        let names = ["awaddr", "awvalid", "wdata", "wstrb", "wvalid", "bready", "bvalid", "bresp", "awready", "wready"];
        let (dev, _) = self.window(node, names[0]);
        let p: Vec<usize> = names.iter().map(|n| self.window(node, n).1).collect();
        let d = &mut self.devices[dev];
        d.set(p[0], &scalar(addr as u64));
        d.set(p[1], &scalar(1));
        d.set(p[2], &scalar(data as u64));
        d.set(p[3], &scalar(0xF));
        d.set(p[4], &scalar(1));
        d.set(p[5], &scalar(1));
        let (mut aw, mut w) = (false, false);
        for _ in 0..1000 {
            let d = &mut self.devices[dev];
            d.settle();
            aw |= d.get(p[8])[0] & 1 == 1;
            w |= d.get(p[9])[0] & 1 == 1;
            if d.get(p[6])[0] & 1 == 1 {
                let resp = d.get(p[7])[0];
                self.idle_node_cycle(node);
                let d = &mut self.devices[dev];
                d.set(p[5], &scalar(0));
                return if resp == 0 { Ok(()) } else { Err(Error::Mismatch(format!("node {node}: write to {addr:#x} answered {resp}"))) };
            }
            self.idle_node_cycle(node);
            let d = &mut self.devices[dev];
            if aw {
                d.set(p[1], &scalar(0));
            }
            if w {
                d.set(p[4], &scalar(0));
            }
        }
        Err(Error::Stuck(format!("node {node}: AXI4-Lite write to {addr:#x} got no response")))
    }

    /// Reads a node's register through its AXI4-Lite window; returns (data, resp).
    pub fn axil_read(&mut self, node: usize, addr: u32) -> Result<(u32, u32), Error> {
        let names = ["araddr", "arvalid", "rready", "arready", "rvalid", "rdata", "rresp"];
        let (dev, _) = self.window(node, names[0]);
        let p: Vec<usize> = names.iter().map(|n| self.window(node, n).1).collect();
        let d = &mut self.devices[dev];
        d.set(p[0], &scalar(addr as u64));
        d.set(p[1], &scalar(1));
        d.set(p[2], &scalar(1));
        for _ in 0..1000 {
            let d = &mut self.devices[dev];
            d.settle();
            let taken = d.get(p[3])[0] & 1 == 1;
            if d.get(p[4])[0] & 1 == 1 {
                let (data, resp) = (d.get(p[5])[0] as u32, d.get(p[6])[0] as u32);
                self.idle_node_cycle(node);
                let d = &mut self.devices[dev];
                d.set(p[1], &scalar(0));
                d.set(p[2], &scalar(0));
                return Ok((data, resp));
            }
            self.idle_node_cycle(node);
            if taken {
                let d = &mut self.devices[dev];
                d.set(p[1], &scalar(0));
            }
        }
        Err(Error::Stuck(format!("node {node}: AXI4-Lite read of {addr:#x} got no response")))
    }
}
