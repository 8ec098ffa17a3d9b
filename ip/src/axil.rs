//! The AXI4-Lite register window of a node (32-bit data, 12-bit byte addresses), as netlist
//! logic any generated module can include.
//!
//! AXI4-Lite as specified: the write address and write data channels are independent (either
//! may come first, each is held until the other arrives), the write response waits for
//! `bready` and the read data for `rready`, and a new address is taken only once the previous
//! response has left. Reads of unmapped addresses return 0 with `SLVERR`; writes to read-only
//! or unmapped addresses change nothing and answer `SLVERR`. `wstrb` selects the bytes written.
//! Addresses are byte addresses of 32-bit registers; the two low bits are ignored.

use crate::Error;
use weft_hdl::netlist::{Design, Netlist, Sig, Wire};
use weft_hdl::sig;

use crate::regmap::{node_map, Register, Source};
pub use crate::regmap::{ID, LINK_STATUS, SELFTEST_REGS, SELFTEST_STATUS, SELFTEST_STATUS_NAMES, VERSION};

/// `bresp`/`rresp` value of a completed access: `OKAY` (0b00).
pub const OKAY: u128 = 0;
/// `bresp`/`rresp` value of a refused access (unmapped, or a write to a read-only register):
/// `SLVERR` (0b10).
pub const SLVERR: u128 = 2;
/// Width of `s_axil_awaddr`/`s_axil_araddr`: 12-bit byte addresses, `0x000` to `0xFFF`.
pub const ADDR_BITS: usize = 12;

/// What sits at one address.
#[derive(Clone, Copy, Debug)]
pub enum Entry {
    /// A read-only value from the design (at most 32 bits, zero-extended).
    ReadOnly(Wire),
    /// A read-write register of `width` bits (at most 32) with its reset value.
    ReadWrite {
        /// Bits held, 1 to 32, from bit 0; the bits above read as 0.
        width: usize,
        /// The value after `rst`.
        reset: u32,
    },
}

/// Builds the window into `net` with `s_axil_*` ports; returns the current value of every
/// read-write entry, in the order given.
pub fn register_window(net: &mut Netlist, entries: &[(u32, Entry)]) -> Result<Vec<Wire>, Error> {
    // The netlist moves into a design for the window and back, its wires unchanged.
    let d = Design::new();
    *d.net() = std::mem::replace(net, Netlist::new());
    let rw = window(&d, entries).map(|values| values.iter().map(|v| v.wire).collect());
    *net = d.finish();
    rw
}

/// The bit mask of the bytes a strobe (or `tkeep`) marks: bit `b` set gives byte `b` all ones.
pub(crate) fn byte_mask<'d>(d: &'d Design, strobe: Sig<'d>) -> Sig<'d> {
    let bytes: Vec<Sig> = (0..strobe.width).rev().map(|b| strobe.bit(b).mux(d.lit(0xFF, 8), 0)).collect();
    d.cat(&bytes)
}

/// Refuses a map with a misplaced, doubly mapped or too wide entry.
fn check_map(d: &Design, entries: &[(u32, Entry)]) -> Result<(), Error> {
    for (i, (a, e)) in entries.iter().enumerate() {
        if a % 4 != 0 || *a >= 1 << ADDR_BITS {
            return Err(Error::Config(format!("register address {a:#x}: must be a multiple of 4 below {:#x}", 1 << ADDR_BITS)));
        }
        if entries[..i].iter().any(|(b, _)| b == a) {
            return Err(Error::Config(format!("register address {a:#x} is mapped twice")));
        }
        match e {
            Entry::ReadOnly(w) if d.sig(*w).width > 32 => return Err(Error::Config(format!("register {a:#x}: {} bits, at most 32", d.sig(*w).width))),
            Entry::ReadWrite { width, .. } if !(1..=32).contains(width) => return Err(Error::Config(format!("register {a:#x}: width {width}, allowed 1 ..= 32"))),
            _ => {}
        }
    }
    Ok(())
}

/// [`register_window`] in a [`Design`]: the window with `s_axil_*` ports; returns the current
/// value of every read-write entry, in the order given.
pub fn window<'d>(d: &'d Design, entries: &[(u32, Entry)]) -> Result<Vec<Sig<'d>>, Error> {
    check_map(d, entries)?;
    let awaddr = d.input("s_axil_awaddr", ADDR_BITS);
    let awvalid = d.input("s_axil_awvalid", 1);
    let wdata = d.input("s_axil_wdata", 32);
    let wstrb = d.input("s_axil_wstrb", 4);
    let wvalid = d.input("s_axil_wvalid", 1);
    let bready = d.input("s_axil_bready", 1);
    let araddr = d.input("s_axil_araddr", ADDR_BITS);
    let arvalid = d.input("s_axil_arvalid", 1);
    let rready = d.input("s_axil_rready", 1);
    // Register index of a byte address.
    let word = |addr: Sig<'d>| addr.bits(2, ADDR_BITS - 2);
    let resp = |ok: Sig<'d>| ok.mux(d.lit(OKAY, 2), SLVERR);

    d.section("AXI4-Lite write channels, each held until both are here and the response channel is free");
    let aw_held = d.reg("axil_aw_held", 1, 0);
    let aw_addr = d.reg("axil_aw_addr", ADDR_BITS - 2, 0);
    let w_held = d.reg("axil_w_held", 1, 0);
    let w_data = d.reg("axil_w_data", 32, 0);
    let w_strb = d.reg("axil_w_strb", 4, 0);
    let bvalid = d.reg("axil_bvalid", 1, 0);
    let bresp = d.reg("axil_bresp", 2, 0);
    sig!(awready = !aw_held.q, wready = !w_held.q);
    d.output("s_axil_awready", awready);
    d.output("s_axil_wready", wready);
    sig!(aw_take = awvalid & awready, w_take = wvalid & wready);
    sig!(do_write = aw_held.q & w_held.q & !bvalid.q);
    aw_addr.next_when(aw_take, word(awaddr));
    w_data.next_when(w_take, wdata);
    w_strb.next_when(w_take, wstrb);
    aw_held.set_when(aw_take).clear_when(do_write);
    w_held.set_when(w_take).clear_when(do_write);
    sig!(write_mask = byte_mask(d, w_strb.q));
    let keep_mask = !write_mask;

    d.section("registers: read-write entries take the strobed bytes of a write to their address");
    let mut rw_values = vec![];
    let mut writable = vec![];
    let mut read_hits = vec![];
    for (a, e) in entries {
        let here = d.lit((*a >> 2) as u128, ADDR_BITS - 2);
        let value = match e {
            Entry::ReadOnly(w) => d.sig(*w).zext(32),
            Entry::ReadWrite { width, reset } => {
                let r = d.reg(&format!("axil_reg_{a:03x}"), *width, *reset as u128);
                let old = r.q.zext(32);
                let merged = (old & keep_mask) | (w_data.q & write_mask);
                let hit = aw_addr.q.eq(here);
                r.next_when(do_write & hit, merged.bits(0, *width));
                writable.push(hit);
                rw_values.push(r.q);
                old
            }
        };
        read_hits.push((here, value));
    }

    d.section("write response: OKAY to a read-write address, else SLVERR");
    sig!(write_ok = writable.into_iter().reduce(|a, b| a | b).unwrap_or_else(|| d.lit(0, 1)));
    bresp.next_when(do_write, resp(write_ok));
    bvalid.set_when(do_write).clear_when(bvalid.q & bready);
    d.output("s_axil_bvalid", bvalid.q);
    d.output("s_axil_bresp", bresp.q);

    d.section("AXI4-Lite reads: one outstanding; the data register holds until rready");
    let rvalid = d.reg("axil_rvalid", 1, 0);
    let rdata = d.reg("axil_rdata", 32, 0);
    let rresp = d.reg("axil_rresp", 2, 0);
    sig!(arready = !rvalid.q);
    d.output("s_axil_arready", arready);
    sig!(ar_take = arvalid & arready);
    sig!(read_word = word(araddr));
    let (mut data, mut mapped) = (d.lit(0, 32), d.lit(0, 1));
    for (here, value) in read_hits {
        let hit = read_word.eq(here);
        data = hit.mux(value, data);
        mapped = mapped | hit;
    }
    sig!(read_data = data, read_ok = mapped);
    rdata.next_when(ar_take, read_data);
    rresp.next_when(ar_take, resp(read_ok));
    rvalid.set_when(ar_take).clear_when(rvalid.q & rready);
    d.output("s_axil_rvalid", rvalid.q);
    d.output("s_axil_rdata", rdata.q);
    d.output("s_axil_rresp", rresp.q);
    Ok(rw_values)
}

/// The node's window built from its register map ([`crate::regmap::node_map`]): constants,
/// read-only inputs (`link_status`; `selftest` and `counters`, one register every 32 bits) and read-write
/// storage, at the map's addresses. Outputs `local_x`, `local_y`, `local_z` (the coordinate
/// register's fields) and `st_<name>` for each `selftest_<name>` read-write register.
pub fn node_window(map: &[Register]) -> Result<Netlist, Error> {
    let d = Design::new();
    // Each input port as wide as its registers reach, declared in map order.
    let mut inputs: Vec<(&str, usize)> = vec![];
    for r in map {
        if let Source::Input { port, lo } = &r.source {
            match inputs.iter_mut().find(|(p, _)| p == port) {
                Some((_, width)) => *width = (*width).max(lo + 32),
                None => inputs.push((port, lo + 32)),
            }
        }
    }
    let ports: Vec<(&str, Sig)> = inputs.iter().map(|(p, w)| (*p, d.input(p, *w))).collect();
    let entries: Vec<(u32, Entry)> = map
        .iter()
        .map(|r| {
            let entry = match &r.source {
                Source::Constant(v) => Entry::ReadOnly(d.lit(*v as u128, 32).wire),
                Source::Input { port, lo } => Entry::ReadOnly(ports.iter().find(|(p, _)| p == port).unwrap().1.bits(*lo, 32).wire),
                Source::Stored(reset) => Entry::ReadWrite { width: r.width, reset: *reset },
            };
            (r.addr, entry)
        })
        .collect();
    let rw = window(&d, &entries)?;
    let stored: Vec<(&Register, Sig)> = map.iter().filter(|r| r.writable()).zip(rw).collect();

    d.section("register fields out: coordinates, self-test configuration");
    for (r, value) in &stored {
        if r.name == "coordinates" {
            for (k, name) in ["local_x", "local_y", "local_z"].iter().enumerate() {
                d.output(name, value.bits(8 * k, 6));
            }
        } else if let Some(name) = r.name.strip_prefix("selftest_") {
            d.output(&format!("st_{name}"), *value);
        } else if r.name.starts_with("kernel_") || r.name.starts_with("allreduce_") {
            d.output(&r.name, *value);
        }
    }
    Ok(d.finish())
}

/// The node map with `counters` counters named `counter<i>` (for the stand-alone window).
fn numbered_map(dims: [usize; 3], counters: usize, selftest: bool) -> Vec<Register> {
    let names: Vec<String> = (0..counters).map(|i| format!("counter{i}")).collect();
    node_map(dims, &names, selftest)
}

/// A small AXI4-Lite master over the built-in simulator, for testbenches: each access drives
/// the channels with the given delays between them and random waits before `bready`/`rready`.
pub struct Master {
    /// The simulator running the design under test.
    pub eval: weft_hdl::netlist::eval::Evaluator,
    rng: weft_hdl::testbench::Rng,
    /// Clock cycles run since reset.
    pub cycles: u64,
}

impl Master {
    /// A master driving `net`'s `s_axil_*` ports, after three cycles of reset; `seed` sets the
    /// random waits before `bready` and `rready`.
    pub fn new(net: Netlist, seed: u64) -> Master {
        let mut eval = weft_hdl::netlist::eval::Evaluator::new(net);
        for _ in 0..3 {
            eval.settle();
            eval.clock(true);
        }
        Master { eval, rng: weft_hdl::testbench::Rng::new(seed), cycles: 0 }
    }

    fn set(&mut self, name: &str, v: u128) {
        let w = self.eval.input(name).unwrap_or_else(|| panic!("no input {name}"));
        self.eval.set(w, v);
    }

    /// The value of output `name` as last settled; panics if there is no such output.
    pub fn get(&self, name: &str) -> u128 {
        self.eval.output(name).unwrap_or_else(|| panic!("no output {name}"))
    }

    fn tick(&mut self) {
        self.eval.settle();
        self.eval.clock(false);
        self.cycles += 1;
        assert!(self.cycles < 1_000_000, "AXI4-Lite access never completed");
    }

    /// Writes `data` with `strb` at `addr`; the data channel starts `w_delay` cycles after the
    /// address channel (negative: before it). Returns `bresp`.
    pub fn write(&mut self, addr: u32, data: u32, strb: u8, w_delay: i32) -> u128 {
        let (mut aw_done, mut w_done) = (false, false);
        let mut t = 0i32;
        let (aw_at, w_at) = if w_delay >= 0 { (0, w_delay) } else { (-w_delay, 0) };
        while !(aw_done && w_done) {
            let aw_on = !aw_done && t >= aw_at;
            let w_on = !w_done && t >= w_at;
            self.set("s_axil_awvalid", aw_on as u128);
            self.set("s_axil_awaddr", addr as u128);
            self.set("s_axil_wvalid", w_on as u128);
            self.set("s_axil_wdata", data as u128);
            self.set("s_axil_wstrb", strb as u128);
            self.set("s_axil_bready", 0);
            self.eval.settle();
            aw_done |= aw_on && self.get("s_axil_awready") == 1;
            w_done |= w_on && self.get("s_axil_wready") == 1;
            self.tick();
            t += 1;
        }
        self.set("s_axil_awvalid", 0);
        self.set("s_axil_wvalid", 0);
        loop {
            let ready = self.rng.chance(40);
            self.set("s_axil_bready", ready as u128);
            self.eval.settle();
            if self.get("s_axil_bvalid") == 1 && ready {
                let resp = self.get("s_axil_bresp");
                self.tick();
                self.set("s_axil_bready", 0);
                return resp;
            }
            self.tick();
        }
    }

    /// Reads `addr`: `(rdata, rresp)`.
    pub fn read(&mut self, addr: u32) -> (u128, u128) {
        loop {
            self.set("s_axil_arvalid", 1);
            self.set("s_axil_araddr", addr as u128);
            self.set("s_axil_rready", 0);
            self.eval.settle();
            let taken = self.get("s_axil_arready") == 1;
            self.tick();
            if taken {
                break;
            }
        }
        self.set("s_axil_arvalid", 0);
        loop {
            let ready = self.rng.chance(40);
            self.set("s_axil_rready", ready as u128);
            self.eval.settle();
            if self.get("s_axil_rvalid") == 1 && ready {
                let got = (self.get("s_axil_rdata"), self.get("s_axil_rresp"));
                self.tick();
                self.set("s_axil_rready", 0);
                return got;
            }
            self.tick();
        }
    }
}

/// Built-in-simulator check of the node window against its map (docs/contract.md): identification,
/// read-write registers with byte strobes in any channel order, counters, SLVERR on read-only
/// and unmapped addresses, responses held under back-pressure.
pub fn check_node_window(dims: [usize; 3], counters: usize, selftest: bool, seed: u64) -> Result<String, Error> {
    let mut m = Master::new(node_window(&numbered_map(dims, counters, selftest))?, seed);
    let counter_values: Vec<u32> = (0..counters as u32).map(|i| 0x1000_0001u32.wrapping_mul(i + 3)).collect();
    for (i, v) in counter_values.iter().enumerate() {
        m.eval.set_input_bits("counters", 32 * i, 32, *v as u128);
    }
    let expect = |what: &str, got: (u128, u128), want: (u128, u128)| if got == want { Ok(()) } else { Err(Error::Mismatch(format!("{what}: got {got:x?}, want {want:x?}"))) };
    expect("ID", m.read(0x000), (ID as u128, OKAY))?;
    expect("version", m.read(0x004), (VERSION as u128, OKAY))?;
    let packed = (dims[0] | dims[1] << 8 | dims[2] << 16) as u128;
    expect("dimensions", m.read(0x00C), (packed, OKAY))?;
    expect("scratch after reset", m.read(0x010), (0, OKAY))?;
    let mut rng = weft_hdl::testbench::Rng::new(seed);
    let mut scratch = 0u32;
    for _ in 0..200 {
        let v = rng.next_u64() as u32;
        let strb = rng.below(16) as u8;
        let delay = rng.below(7) as i32 - 3;
        if m.write(0x010, v, strb, delay) != OKAY {
            return Err(Error::Mismatch("write to scratch answered SLVERR".to_string()));
        }
        for b in 0..4 {
            if strb >> b & 1 == 1 {
                scratch = scratch & !(0xFF << (8 * b)) | v & (0xFF << (8 * b));
            }
        }
        expect("scratch read back", m.read(0x010), (scratch as u128, OKAY))?;
    }
    let coords = 0x0001_0203u32;
    if m.write(0x008, coords, 0xF, 0) != OKAY {
        return Err(Error::Mismatch("write to coordinates answered SLVERR".to_string()));
    }
    expect("coordinates", m.read(0x008), (coords as u128, OKAY))?;
    m.eval.settle();
    if (m.get("local_x"), m.get("local_y"), m.get("local_z")) != (3, 2, 1) {
        return Err(Error::Mismatch("coordinate outputs do not follow the register".to_string()));
    }
    for (i, v) in counter_values.iter().enumerate() {
        expect("counter", m.read(0x100 + 4 * i as u32), (*v as u128, OKAY))?;
    }
    let status = m.eval.input("link_status").unwrap();
    m.eval.set(status, 0x8000_0015);
    expect("link status", m.read(LINK_STATUS), (0x8000_0015, OKAY))?;
    if selftest {
        // Each self-test register keeps exactly its width and drives its output; status words
        // read their inputs and refuse writes.
        for (addr, name, width) in SELFTEST_REGS {
            let mask = if width == 32 { u32::MAX } else { (1u32 << width) - 1 };
            let v = rng.next_u64() as u32;
            if m.write(addr, v, 0xF, 0) != OKAY {
                return Err(Error::Mismatch(format!("write to self-test {name} answered SLVERR")));
            }
            expect(name, m.read(addr), ((v & mask) as u128, OKAY))?;
            m.eval.settle();
            if m.get(&format!("st_{name}")) != (v & mask) as u128 {
                return Err(Error::Mismatch(format!("output st_{name} does not follow its register")));
            }
        }
        for i in 0..SELFTEST_STATUS_NAMES.len() {
            let v = 0x0BAD_0000u32 + i as u32;
            m.eval.set_input_bits("selftest", 32 * i, 32, v as u128);
            let addr = SELFTEST_STATUS + 4 * i as u32;
            expect(SELFTEST_STATUS_NAMES[i], m.read(addr), (v as u128, OKAY))?;
            if m.write(addr, 0, 0xF, 0) != SLVERR {
                return Err(Error::Mismatch(format!("write to self-test status {addr:#x} did not answer SLVERR")));
            }
        }
    }
    // Read-only and unmapped: SLVERR, nothing changes.
    for addr in [0x000, 0x00C, 0x100, 0x014, 0x0FC, 0xFFC] {
        if m.write(addr, 0xDEAD_BEEF, 0xF, 1) != SLVERR {
            return Err(Error::Mismatch(format!("write to {addr:#x} did not answer SLVERR")));
        }
    }
    expect("ID after a write", m.read(0x000), (ID as u128, OKAY))?;
    expect("unmapped read", m.read(0x014), (0, SLVERR))?;
    expect("unmapped read", m.read(0xFFC), (0, SLVERR))?;
    expect("scratch untouched", m.read(0x010), (scratch as u128, OKAY))?;
    Ok(format!("ID, version, dimensions, 200 strobed scratch writes in random channel order, coordinates, {counters} counters, SLVERR on 6 bad writes and 2 unmapped reads ({} cycles)", m.cycles))
}

/// The shipped stand-alone window: the node map of a 4x2x1 torus with 8 counters (the node
/// tops embed the same logic).
pub fn shipped() -> Vec<crate::shipped::Shipped> {
    use weft_hdl::export::{export_netlist, ModuleSpec};
    vec![crate::shipped::Shipped::new(
        ModuleSpec {
            family: "axil",
            name: "axil_node_regs".into(),
            summary: "AXI4-Lite register window of a node: ID, version, coordinates, torus dimensions, scratch, counters; SLVERR on read-only and unmapped addresses".into(),
            parameters: vec![("torus".into(), "4x2x1".into()), ("counters".into(), "8 at 0x100..0x11C".into()), ("data_width".into(), "32".into()), ("address_width".into(), "12".into())],
            hidden_ports: vec![],
        },
        |spec| export_netlist(spec, &node_window(&numbered_map([4, 2, 1], 8, false))?),
        || check_node_window([4, 2, 1], 8, false, 7),
    )]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn node_window_follows_the_map() {
        check_node_window([4, 2, 1], 4, true, 1).unwrap();
        check_node_window([2, 2, 2], 0, false, 2).unwrap();
    }

    #[test]
    fn bad_maps_are_rejected() {
        let mut net = Netlist::new();
        let w = net.constant(0, 40);
        assert!(register_window(&mut net, &[(0x3, Entry::ReadWrite { width: 8, reset: 0 })]).unwrap_err().to_string().contains("multiple of 4"));
        assert!(register_window(&mut net, &[(0x4, Entry::ReadOnly(w))]).unwrap_err().to_string().contains("at most 32"));
        let twice = [(0x4, Entry::ReadWrite { width: 8, reset: 0 }), (0x4, Entry::ReadWrite { width: 8, reset: 0 })];
        assert!(register_window(&mut net, &twice).unwrap_err().to_string().contains("twice"));
    }
}
