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
/// `config` behind the transceiver wrapper (`weft_ip::link::gt`), with a hardware model of the
/// receive gearbox between the line and the wrapper — each lane's 66-bit words cut at an
/// alignment that moves one bit later `slip_latency` cycles after each `RXGEARBOXSLIP` pulse.
/// Ports as the endpoint's (`rx_serial` is the line as the channel model delivers it), plus
/// `gt_locked` and `gt_slips<l>`.
pub fn endpoint_on_gearbox(config: &weft_ip::link::LinkConfig, slip_latency: usize) -> Result<Netlist, weft_ip::Error> {
    let lanes = config.lanes;
    let endpoint = Rc::new(weft_ip::link::endpoint(config)?);
    let wrapper = Rc::new(weft_ip::link::gt::gt_wrapper(lanes)?);
    let rx_clock = if config.rx_clock { "rx_clk" } else { "clk" };
    let d = Design::new();
    let e = d.instance(&endpoint, "endpoint", "endpoint");
    let g = d.instance_clocked(&wrapper, "gt_lanes", "gt", &|_| rx_clock.to_string());
    let mut line = vec![];
    for l in 0..lanes {
        let h = g.output(&format!("gt_txheader{l}"));
        line.push(g.output(&format!("gt_txdata{l}")).cat(h));
    }
    g.input("tx_serial").define(e.output("tx_serial"));
    let line: Vec<_> = line.into_iter().rev().collect();
    d.output("tx_serial", d.cat(&line));

    d.section("the receive gearbox model: each lane's words at its alignment, moved by slips");
    let rx_domain = d.net().domain_named(rx_clock);
    let previous = d.net().set_domain(rx_domain);
    let raw = d.input("rx_serial", BLOCK_BITS * lanes);
    for l in 0..lanes {
        let word = raw.bits(BLOCK_BITS * l, BLOCK_BITS);
        let prev = d.reg(&format!("gearbox_prev{l}"), BLOCK_BITS, 0);
        prev.next_when(d.lit(1, 1), word);
        let align = d.reg(&format!("gearbox_align{l}"), 7, 0);
        let slip = g.output(&format!("gt_rxgearboxslip{l}"));
        let mut delayed = slip;
        for k in 0..slip_latency.max(1) {
            let r = d.reg(&format!("gearbox_slip{l}_{k}"), 1, 0);
            r.next_when(d.lit(1, 1), delayed);
            delayed = r.q;
        }
        align.next_when(delayed, align.q.eq(BLOCK_BITS as u128 - 1).mux(d.lit(0, 7), align.q + 1u32));
        let out = word.cat(prev.q).shr(align.q).bits(0, BLOCK_BITS);
        g.input(&format!("gt_rxheader{l}")).define(out.bits(0, 2));
        g.input(&format!("gt_rxdata{l}")).define(out.bits(2, 64));
    }
    d.net().set_domain(previous);
    e.input("rx_serial").define(g.output("rx_serial"));
    d.output("gt_locked", g.output("gt_locked"));
    for l in 0..lanes {
        d.output(&format!("gt_slips{l}"), g.output(&format!("gt_slips{l}")));
    }
    for port in weft_ip::weft_hdl::netlist::verilog::ports(&endpoint) {
        if port.name == "rx_serial" || port.name == "tx_serial" {
            continue;
        }
        if port.output {
            d.output(&port.name, e.output(&port.name));
        } else {
            e.input(&port.name).define(d.input(&port.name, port.width));
        }
    }
    Ok(d.finish())
}
