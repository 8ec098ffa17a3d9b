//! An AXI4-Lite master on a node's register window: single register writes and reads, the
//! other nodes idling meanwhile (each step is one cycle of that node's clock).

use super::{scalar, Torus};
use crate::link::Device;
use crate::Error;

impl<D: Device> Torus<D> {
    /// Writes a node's register through its AXI4-Lite port (every other node idles meanwhile).
    pub fn axil_write(&mut self, node: usize, addr: u32, data: u32) -> Result<(), Error> {
        let names = ["s_axil_awaddr", "s_axil_awvalid", "s_axil_wdata", "s_axil_wstrb", "s_axil_wvalid", "s_axil_bready", "s_axil_bvalid", "s_axil_bresp", "s_axil_awready", "s_axil_wready"];
        let p: Vec<usize> = names.iter().map(|n| self.devices[node].port(n)).collect();
        let d = &mut self.devices[node];
        d.set(p[0], &scalar(addr as u64));
        d.set(p[1], &scalar(1));
        d.set(p[2], &scalar(data as u64));
        d.set(p[3], &scalar(0xF));
        d.set(p[4], &scalar(1));
        d.set(p[5], &scalar(1));
        let (mut aw, mut w) = (false, false);
        for _ in 0..100 {
            let d = &mut self.devices[node];
            d.settle();
            aw |= d.get(p[8])[0] & 1 == 1;
            w |= d.get(p[9])[0] & 1 == 1;
            if d.get(p[6])[0] & 1 == 1 {
                let resp = d.get(p[7])[0];
                self.idle_node_cycle(node);
                let d = &mut self.devices[node];
                d.set(p[5], &scalar(0));
                return if resp == 0 { Ok(()) } else { Err(Error::Mismatch(format!("node {node}: write to {addr:#x} answered {resp}"))) };
            }
            self.idle_node_cycle(node);
            let d = &mut self.devices[node];
            if aw {
                d.set(p[1], &scalar(0));
            }
            if w {
                d.set(p[4], &scalar(0));
            }
        }
        Err(Error::Stuck(format!("node {node}: AXI4-Lite write to {addr:#x} got no response")))
    }

    /// Reads a node's register through its AXI4-Lite port; returns (data, resp).
    pub fn axil_read(&mut self, node: usize, addr: u32) -> Result<(u32, u32), Error> {
        let names = ["s_axil_araddr", "s_axil_arvalid", "s_axil_rready", "s_axil_arready", "s_axil_rvalid", "s_axil_rdata", "s_axil_rresp"];
        let p: Vec<usize> = names.iter().map(|n| self.devices[node].port(n)).collect();
        let d = &mut self.devices[node];
        d.set(p[0], &scalar(addr as u64));
        d.set(p[1], &scalar(1));
        d.set(p[2], &scalar(1));
        for _ in 0..100 {
            let d = &mut self.devices[node];
            d.settle();
            let taken = d.get(p[3])[0] & 1 == 1;
            if d.get(p[4])[0] & 1 == 1 {
                let (data, resp) = (d.get(p[5])[0] as u32, d.get(p[6])[0] as u32);
                self.idle_node_cycle(node);
                let d = &mut self.devices[node];
                d.set(p[1], &scalar(0));
                d.set(p[2], &scalar(0));
                return Ok((data, resp));
            }
            self.idle_node_cycle(node);
            if taken {
                let d = &mut self.devices[node];
                d.set(p[1], &scalar(0));
            }
        }
        Err(Error::Stuck(format!("node {node}: AXI4-Lite read of {addr:#x} got no response")))
    }

    /// Reads a node's register through the read channel of a `<cfg>_sim_async` top
    /// (`axil_ar*_n<n>` / `axil_r*_n<n>`, read data always accepted); the sources idle meanwhile.
    pub fn read_sim_register(&mut self, node: usize, addr: u32) -> Result<u32, Error> {
        let p: Vec<usize> = ["araddr", "arvalid", "arready", "rdata", "rvalid"].iter().map(|n| self.devices[0].port(&format!("axil_{n}_n{node}"))).collect();
        self.devices[0].set(p[0], &scalar(addr as u64));
        self.devices[0].set(p[1], &scalar(1));
        let mut asked = false;
        for _ in 0..1000 {
            self.devices[0].settle();
            let taken = self.devices[0].get(p[2])[0] & 1 == 1;
            if !self.idle_cycle()[node] {
                continue;
            }
            if taken && !asked {
                asked = true;
                self.devices[0].set(p[1], &scalar(0));
            }
            self.devices[0].settle();
            if asked && self.devices[0].get(p[4])[0] & 1 == 1 {
                return Ok(self.devices[0].get(p[3])[0] as u32);
            }
        }
        Err(Error::Stuck(format!("node {node}: read of {addr:#x} got no response")))
    }
}
