//! One instant of the torus with IntraNode ports of every node driven from outside, beat by
//! beat: for a block beside the generated node (a halo engine) simulated elsewhere.

use crate::link::{Device, Value};
use crate::Error;

use super::{bits, scalar, value, Torus};

/// What one instant did at the driven port.
#[derive(Clone, Debug, Default)]
pub struct Stepped {
    /// Per node: its source's beat was taken.
    pub taken: Vec<bool>,
    /// Per node: the beat its sink delivered (the datapath in 128-bit pieces, low first, and
    /// `tlast`), when it was ready.
    pub delivered: Vec<Option<(Vec<u128>, bool)>>,
    /// Per node: its clock rose in this instant (the others took and delivered nothing).
    pub active: Vec<bool>,
}

impl<D: Device> Torus<D> {
    /// One instant: node `n`'s port `port` offers `offer[n]` (a 128-bit beat in the low bits of
    /// the datapath and `tlast`) and takes what arrives when `ready[n]`.
    pub fn step_port(&mut self, port: usize, offer: &[Option<(u128, bool)>], ready: &[bool]) -> Result<Stepped, Error> {
        let offer: Vec<Option<(Vec<u128>, bool)>> = offer.iter().map(|o| o.map(|(d, l)| (vec![d], l))).collect();
        Ok(self.step_ports(&[port], &[offer], &[ready.to_vec()])?.remove(0))
    }

    /// One instant with several ports driven: per port `ports[k]`, node `n` offers
    /// `offer[k][n]` (the beat in 128-bit pieces, low first; missing pieces are zero) and takes
    /// what arrives when `ready[k][n]`. Returns what each port did.
    pub fn step_ports(&mut self, ports: &[usize], offer: &[Vec<Option<(Vec<u128>, bool)>>], ready: &[Vec<bool>]) -> Result<Vec<Stepped>, Error> {
        let nodes = self.config.nodes();
        let chunks = self.config.width / 128;
        let mut handles = vec![];
        for &port in ports {
            let at: Vec<(usize, _)> = (0..nodes)
                .map(|n| self.local[n].iter().find(|l| l.0 == port).map(|l| (l.1, l.2)).ok_or_else(|| Error::Config(format!("node {n} has no stream on port {port}"))))
                .collect::<Result<_, Error>>()?;
            handles.push(at);
        }
        let active = self.next_instant();
        for (k, at) in handles.iter().enumerate() {
            for (n, &(dev, h)) in at.iter().enumerate() {
                let (data, last) = match &offer[k][n] {
                    Some((d, l)) => {
                        let mut c = d.clone();
                        c.resize(chunks, 0);
                        (value(&c), *l)
                    }
                    None => (Value::default(), false),
                };
                let d = &mut self.devices[dev];
                d.set(h.s_tdata, &data);
                d.set(h.s_tlast, &scalar(last as u64));
                d.set(h.s_tvalid, &scalar(offer[k][n].is_some() as u64));
                d.set(h.m_tready, &scalar(ready[k][n] as u64));
            }
        }
        for d in self.devices.iter_mut() {
            d.settle();
        }
        let mut out = vec![];
        for (k, at) in handles.iter().enumerate() {
            let mut s = Stepped { taken: vec![false; nodes], delivered: vec![None; nodes], active: active.clone() };
            for n in (0..nodes).filter(|&n| active[n]) {
                let (dev, h) = at[n];
                let d = &mut self.devices[dev];
                s.taken[n] = offer[k][n].is_some() && d.get(h.s_tready)[0] & 1 == 1;
                if ready[k][n] && d.get(h.m_tvalid)[0] & 1 == 1 {
                    let data = d.get(h.m_tdata);
                    s.delivered[n] = Some(((0..chunks).map(|c| bits(&data, 128 * c, 128)).collect(), d.get(h.m_tlast)[0] & 1 == 1));
                }
            }
            out.push(s);
        }
        self.clock_instant(&active);
        Ok(out)
    }
}
