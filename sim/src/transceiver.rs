//! A behavioural model of a transceiver's 64B/66B gearbox interface (UltraScale+ GTY/GTH with the
//! asynchronous gearbox and an 8-byte interface): per lane and user-clock cycle the fabric hands
//! the transmitter a 2-bit header and 64 data bits and takes the same from the receiver. On the
//! line the blocks travel through the [`Channel`] model (latency, the receiver's random initial
//! alignment, bit errors); a one-cycle pulse on a lane's `RXGEARBOXSLIP` moves its receive
//! gearbox to the next alignment (one bit later) [`GtModel::slip_latency`] cycles on.

use std::collections::VecDeque;
use std::rc::Rc;

use weft_ip::weft_hdl::netlist::{Design, Netlist};

use crate::channel::{Channel, ChannelConfig, BLOCK_BITS};

/// One direction of a link through two transceivers.
pub struct GtModel {
    /// The line between them.
    pub channel: Channel,
    /// Cycles from a slip pulse to the gearbox's new alignment.
    pub slip_latency: u64,
    /// Per lane: the cycles at which slips take effect.
    pending: Vec<VecDeque<u64>>,
    /// Per lane: the slip input in the previous cycle (a slip is a rising edge).
    last_slip: Vec<bool>,
    /// Slips taken so far, all lanes.
    pub slips: u64,
}

impl GtModel {
    /// A model over a channel of `config`; slips take effect `slip_latency` cycles after the
    /// pulse.
    pub fn new(config: ChannelConfig, slip_latency: u64) -> GtModel {
        let lanes = config.lanes;
        GtModel { channel: Channel::new(config), slip_latency, pending: vec![VecDeque::new(); lanes], last_slip: vec![false; lanes], slips: 0 }
    }

    /// One cycle: `tx[l]` = (`TXHEADER`, `TXDATA`) of lane `l`, `slip[l]` its receiver's
    /// `RXGEARBOXSLIP`; returns each lane's (`RXHEADER`, `RXDATA`).
    pub fn step(&mut self, tx: &[(u8, u64)], slip: &[bool]) -> Vec<(u8, u64)> {
        let now = self.channel.cycle;
        for (l, &s) in slip.iter().enumerate() {
            if s && !self.last_slip[l] {
                self.pending[l].push_back(now + self.slip_latency);
            }
            self.last_slip[l] = s;
            while self.pending[l].front().is_some_and(|&at| at <= now) {
                self.pending[l].pop_front();
                let offset = &mut self.channel.config_mut().bit_offset[l];
                *offset = (*offset + 1) % BLOCK_BITS;
                self.slips += 1;
            }
        }
        let blocks: Vec<u128> = tx.iter().map(|&(h, d)| (d as u128) << 2 | (h & 0b11) as u128).collect();
        self.channel.step(&blocks).into_iter().map(|w| ((w & 0b11) as u8, (w >> 2) as u64)).collect()
    }
}

/// A link endpoint as it sits on a transceiver, for the link co-simulations: the endpoint of
/// `config` behind the transceiver wrapper with a hardware model of the receive gearbox
/// ([`on_gearboxes`]). Ports as the endpoint's, plus `gt_locked` and `gt_slips<l>`.
pub fn endpoint_on_gearbox(config: &weft_ip::link::LinkConfig, slip_latency: usize) -> Result<Netlist, weft_ip::Error> {
    let rx_clock = if config.rx_clock { "rx_clk" } else { "clk" };
    on_gearboxes(&weft_ip::link::endpoint(config)?, "endpoint", &[(String::new(), rx_clock.to_string())], config.lanes, slip_latency)
}

/// A generated node as it sits on its transceivers, for the node co-simulations: every link
/// behind a wrapper and a gearbox model ([`on_gearboxes`]). Ports as the node's, plus per link
/// `<e>_gt_locked` and `<e>_gt_slips<l>`.
pub fn node_on_gearboxes(config: &weft_ip::system::NodeConfig, slip_latency: usize) -> Result<Netlist, weft_ip::Error> {
    let links: Vec<(String, String)> = config.endpoints().iter().map(|e| (format!("{}_", e.name()), format!("{}_rx_clk", e.name()))).collect();
    on_gearboxes(&weft_ip::system::node(config)?, "node", &links, config.link.lanes, slip_latency)
}

/// `inner` (a design with per-link ports `<prefix>tx_serial` and `<prefix>rx_serial` of
/// `lanes` 66-bit words, the latter on clock `rx_clock`) with every link on a transceiver: the
/// wrapper (`weft_ip::link::gt`) between the design and the transceiver's header/data ports,
/// and a hardware model of the receive gearbox between the line and the wrapper — each lane's
/// words cut at an alignment that moves one bit later `slip_latency` cycles after each
/// `RXGEARBOXSLIP` pulse. Ports as `inner`'s (`<prefix>rx_serial` is the line as the channel
/// model delivers it), plus `<prefix>gt_locked` and `<prefix>gt_slips<l>`.
pub fn on_gearboxes(inner: &Netlist, name: &str, links: &[(String, String)], lanes: usize, slip_latency: usize) -> Result<Netlist, weft_ip::Error> {
    let inner = Rc::new(inner.clone());
    let wrapper = Rc::new(weft_ip::link::gt::gt_wrapper(lanes)?);
    let d = Design::new();
    let n = d.instance(&inner, name, name);
    let mut wired = vec![];
    for (prefix, rx_clock) in links {
        let tag = prefix.trim_end_matches('_');
        let g = d.instance_clocked(&wrapper, "gt_lanes", &format!("gt{}{tag}", if tag.is_empty() { "" } else { "_" }), &|_| rx_clock.clone());
        g.input("tx_serial").define(n.output(&format!("{prefix}tx_serial")));
        let line: Vec<_> = (0..lanes).rev().map(|l| g.output(&format!("gt_txdata{l}")).cat(g.output(&format!("gt_txheader{l}")))).collect();
        d.output(&format!("{prefix}tx_serial"), d.cat(&line));
        d.section(&format!("{name} {tag}: the receive gearbox model, each lane's words at its alignment, moved by slips"));
        let rx_domain = d.net().domain_named(rx_clock);
        let previous = d.net().set_domain(rx_domain);
        let raw = d.input(&format!("{prefix}rx_serial"), BLOCK_BITS * lanes);
        for l in 0..lanes {
            let word = raw.bits(BLOCK_BITS * l, BLOCK_BITS);
            let prev = d.reg(&format!("{prefix}gearbox_prev{l}"), BLOCK_BITS, 0);
            prev.next_when(d.lit(1, 1), word);
            let align = d.reg(&format!("{prefix}gearbox_align{l}"), 7, 0);
            let mut delayed = g.output(&format!("gt_rxgearboxslip{l}"));
            for k in 0..slip_latency.max(1) {
                let r = d.reg(&format!("{prefix}gearbox_slip{l}_{k}"), 1, 0);
                r.next_when(d.lit(1, 1), delayed);
                delayed = r.q;
            }
            align.next_when(delayed, align.q.eq(BLOCK_BITS as u128 - 1).mux(d.lit(0, 7), align.q + 1u32));
            let out = word.cat(prev.q).shr(align.q).bits(0, BLOCK_BITS);
            g.input(&format!("gt_rxheader{l}")).define(out.bits(0, 2));
            g.input(&format!("gt_rxdata{l}")).define(out.bits(2, 64));
        }
        d.net().set_domain(previous);
        n.input(&format!("{prefix}rx_serial")).define(g.output("rx_serial"));
        d.output(&format!("{prefix}gt_locked"), g.output("gt_locked"));
        for l in 0..lanes {
            d.output(&format!("{prefix}gt_slips{l}"), g.output(&format!("gt_slips{l}")));
        }
        wired.extend([format!("{prefix}rx_serial"), format!("{prefix}tx_serial")]);
    }
    for port in weft_ip::weft_hdl::netlist::verilog::ports(&inner) {
        if wired.contains(&port.name) {
            continue;
        }
        if port.output {
            d.output(&port.name, n.output(&port.name));
        } else {
            n.input(&port.name).define(d.input(&port.name, port.width));
        }
    }
    Ok(d.finish())
}
