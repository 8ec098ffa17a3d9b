//! The transceiver side of a link endpoint: the node's lanes on a transceiver whose 64B/66B
//! gearbox hands the fabric a 2-bit header and 64 data bits per lane per user-clock cycle
//! (UltraScale+ GTY/GTH with the asynchronous gearbox and an 8-byte interface; `RXGEARBOXSLIP`
//! moves the gearbox to the next alignment).
//!
//! Transmit is wiring: a node lane's 66-bit block (header in bits 1:0, payload above) goes out
//! as `gt_txheader<l>` and `gt_txdata<l>`. Receive aligns the transceiver's gearbox rather than
//! the node's lane: per lane a block-lock search (IEEE 802.3 clause 49.2.13.2.2, as the node's
//! lane does it) looks at `gt_rxheader<l>`; a header that is not `01` or `10` before lock pulses
//! `gt_rxgearboxslip<l>` for one cycle and waits [`SLIP_WAIT`] cycles for the gearbox to move;
//! [`super::lane::LOCK_HEADERS`] valid headers in a row lock; [`super::lane::LOSE_LOCK_INVALID`]
//! invalid ones in a window of as many blocks lose it. The node's lane then gets
//! `{gt_rxdata, gt_rxheader}` as its raw word, already aligned (its own bit slip stays at
//! offset 0), whatever order the transceiver shifts bits in.
//!
//! Ports: `rx_clk`/`rx_rst` (the lanes' receive user clock, the node's `<e>_rx_clk`);
//! `tx_serial` (66·L bits, from the node's `<e>_tx_serial`), `gt_txheader<l>`, `gt_txdata<l>`;
//! `gt_rxheader<l>`, `gt_rxdata<l>`, `gt_rxgearboxslip<l>`, `rx_serial` (66·L bits, to the
//! node's `<e>_rx_serial`); `gt_locked` (one bit per lane) and per lane counter `gt_slips<l>`.

use weft_hdl::netlist::{Design, Netlist, Reset};

use super::lane::{BLOCK_BITS, LOCK_HEADERS, LOSE_LOCK_INVALID};
use crate::Error;

/// Cycles the search waits after a slip before it looks at headers again: longer than the
/// gearbox takes to move (UltraScale+ transceivers: a few user-clock cycles).
pub const SLIP_WAIT: u128 = 32;

/// The wrapper for `lanes` lanes (1..=16).
pub fn gt_wrapper(lanes: usize) -> Result<Netlist, Error> {
    if !(1..=16).contains(&lanes) {
        return Err(Error::Config(format!("transceiver wrapper: {lanes} lanes: allowed 1..=16")));
    }
    let d = Design::new();
    d.net().set_domain_ports(0, "rx_clk", Reset::Derived);
    let one = d.lit(1, 1);
    let zero = d.lit(0, 1);

    d.section("transmit: each block's header and payload to the transceiver's gearbox");
    let tx = d.input("tx_serial", BLOCK_BITS * lanes);
    for l in 0..lanes {
        d.output(&format!("gt_txheader{l}"), tx.bits(BLOCK_BITS * l, 2));
        d.output(&format!("gt_txdata{l}"), tx.bits(BLOCK_BITS * l + 2, 64));
    }

    d.section("receive: block lock by slipping the transceiver's gearbox");
    let mut raw = vec![];
    let mut locked_bits = vec![];
    let mut slips = vec![];
    for l in 0..lanes {
        let header = d.input(&format!("gt_rxheader{l}"), 2);
        let data = d.input(&format!("gt_rxdata{l}"), 64);
        raw.push(data.cat(header));
        let valid = (header.eq(0b01) | header.eq(0b10)).named(&format!("header_valid{l}"));
        let locked = d.reg(&format!("locked{l}"), 1, 0);
        let count = d.reg(&format!("headers{l}"), 7, 0);
        let bad = d.reg(&format!("invalid{l}"), 5, 0);
        let wait = d.reg(&format!("slip_wait{l}"), 6, 0);
        let waiting = wait.q.any();
        let searching = !locked.q & !waiting;
        let slip = (searching & !valid).named(&format!("slip{l}"));
        let lock_now = searching & valid & count.q.eq(LOCK_HEADERS - 1);
        let window_end = locked.q & count.q.eq(LOCK_HEADERS - 1);
        let lose = locked.q & !valid & bad.q.eq(LOSE_LOCK_INVALID - 1);
        locked.next_when(lock_now, one).next_when(lose, zero);
        count.next_when(searching & valid, count.q + 1u32).next_when(slip | lock_now | lose, d.lit(0, 7)).next_when(locked.q & !lose, window_end.mux(d.lit(0, 7), count.q + 1u32));
        bad.next_when(locked.q & !valid, bad.q + 1u32).next_when(window_end | lose | lock_now, d.lit(0, 5));
        wait.next_when(waiting, wait.q - 1u32).next_when(slip, d.lit(SLIP_WAIT, 6));
        d.output(&format!("gt_rxgearboxslip{l}"), slip);
        locked_bits.push(locked.q);
        slips.push(slip);
    }
    let rx: Vec<_> = raw.into_iter().rev().collect();
    d.output("rx_serial", d.cat(&rx));
    let lb: Vec<_> = locked_bits.into_iter().rev().collect();
    d.output("gt_locked", d.cat(&lb));
    for (l, slip) in slips.into_iter().enumerate() {
        d.counter(&format!("gt_slips{l}"), slip);
    }
    Ok(d.finish())
}
