//! The halo engine's tables for one node of a partitioned application: which refresh steps its
//! program reaches, what it sends in each (packets and the local addresses of their elements, in
//! export order) and where what it receives goes.

use std::collections::BTreeMap;

use super::super::hardware::Compiled;
use super::super::run::{Application, Element};
use super::engine::{HaloDat, HaloPacket, HaloStep, HaloTables};
use super::halo::Halo;
use super::local::Local;
use super::run::refreshed;
use super::Partition;
use crate::router::RouterConfig;
use crate::Error;

/// Width of input port `name` of `net`.
fn input_width(net: &weft_hdl::netlist::Netlist, name: &str) -> Option<usize> {
    weft_hdl::netlist::verilog::ports(net).into_iter().find(|p| !p.output && p.name == name).map(|p| p.width)
}

impl HaloTables {
    /// Node `p`'s tables: `share` and `compiled` are that node's ([`super::nodes::compile_node`]),
    /// `config` the torus (its `max_packet_bytes` bounds a packet).
    pub fn build<T: Element>(app: &Application<T>, partition: &Partition, halo: &Halo, p: usize, share: &Local, compiled: &Compiled, config: &RouterConfig) -> Result<HaloTables, Error> {
        let loops = app.loop_args();
        let slot = T::PRECISION.bits();
        // Local address of global element e of `set` on this node.
        let mut local: Vec<BTreeMap<u32, u32>> = vec![BTreeMap::new(); share.globals.len()];
        for (s, globals) in share.globals.iter().enumerate() {
            let address = &compiled.plan.layouts[s].address;
            for (l, &g) in globals.iter().enumerate() {
                local[s].insert(g, address[l]);
            }
        }
        let mut t = HaloTables { node: p, config: config.clone(), dats: vec![], steps: vec![], packets: vec![], sends: vec![], recv_base: BTreeMap::new(), recv: vec![] };
        for (k, (_, _, args)) in loops.iter().enumerate() {
            let dats = refreshed(app, args);
            if dats.is_empty() {
                continue;
            }
            let mut step = HaloStep { sync_id: 2 * k as u32 + 1, sources: vec![], first: t.packets.len(), end: 0, expected: 0 };
            let mut served: Vec<usize> = vec![];
            for name in &dats {
                let id = app.dat_id(name).ok_or_else(|| Error::Config(format!("no dat `{name}`")))?;
                let (_, set, dim) = app.app.dat_info(id);
                let tag = match t.dats.iter().position(|x| x.name == *name) {
                    Some(tag) => tag,
                    None => {
                        let addr_bits = input_width(&compiled.net, &format!("{name}_rd_addr")).ok_or_else(|| Error::Config(format!("node {p}: the program has no `{name}_rd_addr`")))?;
                        t.dats.push(HaloDat { name: name.clone(), bits: dim * slot, addr_bits });
                        t.dats.len() - 1
                    }
                };
                let per_packet = (config.max_packet_bytes / (config.width / 8 * t.dats[tag].beats(config.width))).max(1);
                let at = |e: &u32| local[set.index()].get(e).copied().ok_or_else(|| Error::Config(format!("node {p}: halo element {e} of `{name}` is not held")));
                for to in (0..partition.parts).filter(|&q| q != p) {
                    let exports = halo.exports(partition, p, to, set);
                    for (c, chunk) in exports.chunks(per_packet).enumerate() {
                        let new_dst = !served.contains(&to);
                        served.push(to);
                        t.packets.push(HaloPacket { dst: to, dat: tag, position: c * per_packet, count: chunk.len(), new_dst });
                        for e in chunk {
                            t.sends.push(at(e)?);
                        }
                    }
                }
                for from in (0..partition.parts).filter(|&q| q != p) {
                    let imports = halo.exports(partition, from, p, set);
                    if imports.is_empty() {
                        continue;
                    }
                    if !step.sources.contains(&from) {
                        step.sources.push(from);
                    }
                    step.expected += imports.len();
                    if let std::collections::btree_map::Entry::Vacant(v) = t.recv_base.entry((from, tag)) {
                        v.insert(t.recv.len());
                        for e in &imports {
                            t.recv.push(at(e)?);
                        }
                    }
                }
            }
            step.sources.sort_unstable();
            step.end = t.packets.len();
            t.steps.push(step);
        }
        Ok(t)
    }
}
