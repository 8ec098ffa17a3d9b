//! An AXI4-Lite interface carried between two clock domains: each of the five channels (write
//! address, write data, write response, read address, read data) through its own asynchronous
//! FIFO of four entries (Gray-coded pointers, two-flop synchronisers), so every handshake keeps
//! AXI4-Lite's rules on both sides and any clock ratio works. A Vitis kernel whose logic runs on
//! a transceiver's clock reaches its register window from `ap_clk` this way.
//!
//! Latency: a write takes about three cycles of each clock per channel crossed (address and
//! data in, response out). Both sides must be reset together (see [`crossing`]).

use weft_hdl::netlist::stream::{Axis, AxisShape, Source};
use weft_hdl::netlist::{Design, Netlist, Reset, Sig};
use weft_hdl::testbench::Rng;

use crate::Error;

/// Entries of each channel's FIFO.
const DEPTH: usize = 4;

/// The channels: `(name, fields with their widths (0: the address's), toward the master
/// side)`; the requests go from the slave side to the master side, the responses back.
fn channels() -> [(&'static str, &'static [(&'static str, usize)], bool); 5] {
    [("aw", &[("addr", 0)], true), ("w", &[("data", 32), ("strb", 4)], true), ("b", &[("resp", 2)], false), ("ar", &[("addr", 0)], true), ("r", &[("data", 32), ("resp", 2)], false)]
}

/// Builds the crossing in `d`: slave ports `<slave>_*` (driven by the master that issues
/// requests, in domain `from`) and master ports `<master>_*` (toward the register window, in
/// domain `to`), addresses of `addr_bits` bits, 32-bit data.
///
/// Reset: each FIFO's writer and reader reset with their own domain's reset. Hold both resets
/// together (each side's reset asserted while the other's is, through a synchroniser) for
/// longer than three cycles of the slower clock, so no pointer is left from before.
/// `hold` (in domain `from`), when given, keeps the slave side from taking requests: a kernel
/// holds it while the other side is in reset, so no access is taken and lost.
pub fn crossing<'d>(d: &'d Design, slave: &str, master: &str, addr_bits: usize, from: usize, to: usize, hold: Option<Sig<'d>>) {
    for (ch, fields, forward) in channels() {
        let (src_prefix, dst_prefix, src_domain, dst_domain) = if forward { (slave, master, from, to) } else { (master, slave, to, from) };
        let back = d.net().set_domain(src_domain);
        let widths: Vec<(&str, usize)> = fields.iter().map(|(f, w)| (*f, if *w == 0 { addr_bits } else { *w })).collect();
        // The fields in, valid in, ready out, on the side that produces the channel.
        let ins: Vec<Sig> = widths.iter().map(|(f, w)| d.input(&format!("{src_prefix}_{ch}{f}"), *w)).collect();
        let mut valid = d.input(&format!("{src_prefix}_{ch}valid"), 1);
        let ready = d.later(1);
        match hold.filter(|_| forward) {
            Some(h) => {
                d.output(&format!("{src_prefix}_{ch}ready"), ready & !h);
                valid = valid & !h;
            }
            None => d.output(&format!("{src_prefix}_{ch}ready"), ready),
        }
        let data = ins.iter().copied().reduce(|hi, lo| hi.cat(lo)).expect("a field");
        let shape = AxisShape { data: data.width, keep: false, last: false, user: 0, always_ready: false };
        let input = Source(Axis { name: format!("{src_prefix}_{ch}"), shape, data, keep: None, last: None, user: None, valid, ready: Some(ready) });
        let out = d.stream_crossing(&format!("{ch}_cdc"), DEPTH, &input, src_domain, dst_domain);
        // The fields out, valid out, ready in, on the side that consumes it.
        d.net().set_domain(dst_domain);
        let mut lo = data.width;
        for (f, w) in &widths {
            lo -= w;
            d.output(&format!("{dst_prefix}_{ch}{f}"), out.0.data.bits(lo, *w));
        }
        d.output(&format!("{dst_prefix}_{ch}valid"), out.0.valid);
        out.ready(d.input(&format!("{dst_prefix}_{ch}ready"), 1));
        d.net().set_domain(back);
    }
}

/// `axil_cdc_a<addr_bits>`: the crossing alone, `s_axil_*` on `s_clk`, `m_axil_*` on `m_clk`.
pub fn module(addr_bits: usize) -> Netlist {
    let d = Design::new();
    d.net().set_domain_ports(0, "s_clk", Reset::Derived);
    let m = d.net().domain_named("m_clk");
    crossing(&d, "s_axil", "m_axil", addr_bits, 0, m, None);
    d.finish()
}

/// Built-in-simulator check of [`module`] at several clock ratios: a register file of 64 words
/// behind the master side answers every access (OKAY inside, SLVERR past it, byte strobes
/// honoured, a random wait before each response); the slave side issues random writes and
/// reads with the address and data channels in any order and random waits before taking each
/// response, and checks every response and read value against a model of the file. Also checks
/// that no response arrives without a request and that every channel stays held while not
/// taken.
pub fn testbench(addr_bits: usize) -> Result<String, Error> {
    let mut summary = vec![];
    for (ps, pm) in [(10u64, 10u64), (10, 7), (7, 10), (10, 31), (31, 10), (13, 17)] {
        let accesses = run(addr_bits, ps, pm, 400, ps * 1000 + pm)?;
        summary.push(format!("{ps}:{pm} {accesses} accesses"));
    }
    Ok(format!("clock periods slave:master {}; every response and read value as the model's", summary.join(", ")))
}

/// Words of the register file behind the master side.
const WORDS: u32 = 64;

/// The byte mask of a write strobe.
fn mask(strb: u8) -> u32 {
    (0..4).filter(|b| strb >> b & 1 == 1).fold(0, |m, b| m | 0xff << (8 * b))
}

/// One access of the slave side.
#[derive(Clone, Copy, Debug)]
struct Access {
    write: bool,
    addr: u32,
    data: u32,
    strb: u8,
    /// The address (and for a write, data) channel's handshakes done.
    addr_done: bool,
    data_done: bool,
    /// The slave-side edge from which the write data is offered.
    data_at: u64,
}

fn run(addr_bits: usize, ps: u64, pm: u64, accesses: usize, seed: u64) -> Result<usize, Error> {
    use weft_hdl::netlist::eval::{Clocks, Evaluator};
    let mut eval = Evaluator::new(module(addr_bits));
    let mut rng = Rng::new(seed);
    let mut clocks = Clocks::new(&[ps, pm], &[0, pm / 3]);
    let fail = |what: String| Error::Mismatch(format!("axil crossing, periods {ps}:{pm}, seed {seed}: {what}"));
    for name in ["s_axil_awvalid", "s_axil_wvalid", "s_axil_bready", "s_axil_arvalid", "s_axil_rready", "m_axil_awready", "m_axil_wready", "m_axil_bvalid", "m_axil_arready", "m_axil_rvalid"] {
        eval.set_input(name, 0);
    }
    // Both sides in reset together for several cycles of each.
    for _ in 0..16 {
        let edges: Vec<(usize, bool)> = clocks.advance().into_iter().map(|d| (d, true)).collect();
        eval.settle();
        eval.clock_domains(&edges);
    }
    // The register file behind the master side, and the slave side's own model of it (from the
    // writes it issued), which every read is checked against.
    let mut file = vec![0u32; WORDS as usize];
    let mut model = vec![0u32; WORDS as usize];
    let word = |addr: u32| (addr / 4 < WORDS).then_some((addr / 4) as usize);
    // Slave side: the access under way, what its response must be, readies driven, a response
    // seen and not taken (it must stay).
    let mut current: Option<Access> = None;
    let (mut bready, mut rready) = (false, false);
    let mut held: Option<(u128, u128, u128)> = None;
    let (mut done, mut s_edges) = (0, 0u64);
    // Master side: requests taken and not yet served, responses offered (value, first edge).
    let (mut aw, mut w, mut ar): (Option<u32>, Option<(u32, u8)>, Option<u32>) = (None, None, None);
    let (mut b_out, mut r_out): (Option<(u32, u64)>, Option<(u32, u32, u64)>) = (None, None);
    let (mut awready, mut wready, mut arready) = (false, false, false);
    let mut m_edges = 0u64;
    while done < accesses {
        let rising = clocks.advance();
        eval.settle();
        let (at_s, at_m) = (rising.contains(&0), rising.contains(&1));
        // Nothing answers an access that was never made.
        let (bvalid, rvalid) = (eval.get_output("s_axil_bvalid") == 1, eval.get_output("s_axil_rvalid") == 1);
        if bvalid && !current.is_some_and(|a| a.write && a.addr_done && a.data_done) || rvalid && !current.is_some_and(|a| !a.write && a.addr_done) {
            return Err(fail(format!("a response without its request ({current:?})")));
        }
        if at_s {
            s_edges += 1;
            if s_edges > 10_000 * accesses as u64 {
                return Err(fail(format!("{done} of {accesses} accesses; the crossing stopped moving")));
            }
            let response = (u128::from(bvalid), eval.get_output("s_axil_bresp"), eval.get_output("s_axil_rdata") * u128::from(rvalid));
            if let Some(h) = held.take() {
                if h != response {
                    return Err(fail(format!("a response not taken changed: {h:?} then {response:?}")));
                }
            }
            if let Some(a) = current.as_mut() {
                a.addr_done |= if a.write { eval.get_output("s_axil_awready") == 1 } else { eval.get_output("s_axil_arready") == 1 };
                a.data_done |= a.write && s_edges > a.data_at && eval.get_output("s_axil_wready") == 1;
            }
            if let Some(a) = current {
                let expected = word(a.addr).map_or(2, |_| 0);
                if bvalid && bready {
                    let resp = eval.get_output("s_axil_bresp") as u32;
                    if resp != expected {
                        return Err(fail(format!("write of {:#x}: response {resp}, expected {expected}", a.addr)));
                    }
                    if let Some(i) = word(a.addr) {
                        model[i] = model[i] & !mask(a.strb) | a.data & mask(a.strb);
                    }
                    current = None;
                    done += 1;
                } else if rvalid && rready {
                    let (resp, data) = (eval.get_output("s_axil_rresp") as u32, eval.get_output("s_axil_rdata") as u32);
                    let want = word(a.addr).map_or(0, |i| model[i]);
                    if resp != expected || resp == 0 && data != want {
                        return Err(fail(format!("read of {:#x}: response {resp} data {data:#x}, expected {expected} and {want:#x}", a.addr)));
                    }
                    current = None;
                    done += 1;
                } else if bvalid || rvalid {
                    held = Some(response);
                }
            }
        }
        if at_m {
            m_edges += 1;
            if awready && eval.get_output("m_axil_awvalid") == 1 {
                aw = Some(eval.get_output("m_axil_awaddr") as u32);
            }
            if wready && eval.get_output("m_axil_wvalid") == 1 {
                w = Some((eval.get_output("m_axil_wdata") as u32, eval.get_output("m_axil_wstrb") as u8));
            }
            if arready && eval.get_output("m_axil_arvalid") == 1 {
                ar = Some(eval.get_output("m_axil_araddr") as u32);
            }
            if b_out.is_some_and(|(_, at)| at < m_edges) && eval.get_output("m_axil_bready") == 1 {
                b_out = None;
            }
            if r_out.is_some_and(|(_, _, at)| at < m_edges) && eval.get_output("m_axil_rready") == 1 {
                r_out = None;
            }
        }
        let edges: Vec<(usize, bool)> = rising.iter().map(|d| (*d, false)).collect();
        eval.clock_domains(&edges);
        if at_m {
            // The register file serves a write once both halves are in, a read once its address is.
            if let (Some(addr), Some((data, strb)), None) = (aw, w, b_out) {
                let resp = match word(addr) {
                    Some(i) => {
                        file[i] = file[i] & !mask(strb) | data & mask(strb);
                        0
                    }
                    None => 2,
                };
                b_out = Some((resp, m_edges + rng.below(4)));
                (aw, w) = (None, None);
            }
            if let (Some(addr), None) = (ar, r_out) {
                let (resp, data) = word(addr).map_or((2, 0), |i| (0, file[i]));
                r_out = Some((resp, data, m_edges + rng.below(4)));
                ar = None;
            }
            let b_valid = b_out.is_some_and(|(_, at)| at <= m_edges);
            eval.set_input("m_axil_bvalid", u128::from(b_valid));
            eval.set_input("m_axil_bresp", b_out.map_or(0, |b| b.0) as u128);
            let r_valid = r_out.is_some_and(|(_, _, at)| at <= m_edges);
            eval.set_input("m_axil_rvalid", u128::from(r_valid));
            eval.set_input("m_axil_rresp", r_out.map_or(0, |r| r.0) as u128);
            eval.set_input("m_axil_rdata", r_out.map_or(0, |r| r.1) as u128);
            (awready, wready, arready) = (aw.is_none() && rng.chance(60), w.is_none() && rng.chance(60), ar.is_none() && rng.chance(60));
            eval.set_input("m_axil_awready", u128::from(awready));
            eval.set_input("m_axil_wready", u128::from(wready));
            eval.set_input("m_axil_arready", u128::from(arready));
        }
        if at_s {
            if current.is_none() && rng.chance(50) {
                // Addresses past the file answer SLVERR.
                let addr = rng.below(WORDS as u64 + 8) as u32 * 4;
                let write = rng.chance(50);
                // The data channel from 0..3 edges after the address, or before it: the address
                // then waits.
                let early = rng.chance(30);
                let data_at = if early { s_edges } else { s_edges + rng.below(3) };
                current = Some(Access { write, addr, data: rng.next_u64() as u32, strb: rng.below(16) as u8, addr_done: false, data_done: false, data_at });
            }
            let a = current;
            let addr_on = a.is_some_and(|a| !a.addr_done);
            eval.set_input("s_axil_awvalid", u128::from(addr_on && a.is_some_and(|a| a.write)));
            eval.set_input("s_axil_arvalid", u128::from(addr_on && a.is_some_and(|a| !a.write)));
            eval.set_input("s_axil_awaddr", a.map_or(0, |a| a.addr) as u128);
            eval.set_input("s_axil_araddr", a.map_or(0, |a| a.addr) as u128);
            eval.set_input("s_axil_wvalid", u128::from(a.is_some_and(|a| a.write && !a.data_done && s_edges >= a.data_at)));
            eval.set_input("s_axil_wdata", a.map_or(0, |a| a.data) as u128);
            eval.set_input("s_axil_wstrb", a.map_or(0, |a| a.strb) as u128);
            (bready, rready) = (rng.chance(50), rng.chance(50));
            eval.set_input("s_axil_bready", u128::from(bready));
            eval.set_input("s_axil_rready", u128::from(rready));
        }
        eval.settle();
    }
    Ok(done)
}

/// The shipped crossing: 12-bit addresses, as a node's register window.
pub fn shipped() -> Vec<crate::shipped::Shipped> {
    use weft_hdl::export::{export_netlist, ModuleSpec};
    vec![crate::shipped::Shipped::new(
        ModuleSpec {
            family: "axil",
            name: "axil_cdc_a12".into(),
            summary: "AXI4-Lite between two clock domains: each channel through an asynchronous FIFO of 4 entries, any clock ratio".into(),
            parameters: vec![("address_width".into(), "12".into()), ("data_width".into(), "32".into()), ("depth".into(), format!("{DEPTH} per channel")), ("synchronizer_stages".into(), "2".into())],
            hidden_ports: vec![],
        },
        |spec| export_netlist(spec, &module(12)),
        || testbench(12),
    )]
}

#[cfg(test)]
mod tests {
    #[test]
    fn accesses_cross_at_any_clock_ratio() {
        super::testbench(12).unwrap();
    }
}
