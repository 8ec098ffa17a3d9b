//! The AXI4-Lite register window of a node (32-bit data, 12-bit byte addresses), as netlist
//! logic any generated module can include.
//!
//! AXI4-Lite as specified: the write address and write data channels are independent (either
//! may come first, each is held until the other arrives), the write response waits for
//! `bready` and the read data for `rready`, and a new address is taken only once the previous
//! response has left. Reads of unmapped addresses return 0 with `SLVERR`; writes to read-only
//! or unmapped addresses change nothing and answer `SLVERR`. `wstrb` selects the bytes written.
//! Addresses are byte addresses of 32-bit registers; the two low bits are ignored.

use weft_hdl::netlist::{Netlist, Wire};

pub const OKAY: u128 = 0;
pub const SLVERR: u128 = 2;
pub const ADDR_BITS: usize = 12;

/// What sits at one address.
#[derive(Clone, Copy, Debug)]
pub enum Entry {
    /// A read-only value from the design (at most 32 bits, zero-extended).
    ReadOnly(Wire),
    /// A read-write register of `width` bits (at most 32) with its reset value.
    ReadWrite { width: usize, reset: u32 },
}

/// The identification register's value: ASCII "WEFT".
pub const ID: u32 = 0x5745_4654;
/// Register-map version read at 0x004.
pub const VERSION: u32 = 0x0001_0000;

/// Builds the window into `net` with `s_axil_*` ports; returns the current value of every
/// read-write entry, in the order given.
pub fn register_window(net: &mut Netlist, entries: &[(u32, Entry)]) -> Result<Vec<Wire>, String> {
    for (i, (a, e)) in entries.iter().enumerate() {
        if a % 4 != 0 || *a >= 1 << ADDR_BITS {
            return Err(format!("register address {a:#x}: must be a multiple of 4 below {:#x}", 1 << ADDR_BITS));
        }
        if entries[..i].iter().any(|(b, _)| b == a) {
            return Err(format!("register address {a:#x} is mapped twice"));
        }
        match e {
            Entry::ReadOnly(w) if net.width(*w) > 32 => return Err(format!("register {a:#x}: {} bits, at most 32", net.width(*w))),
            Entry::ReadWrite { width, .. } if !(1..=32).contains(width) => return Err(format!("register {a:#x}: width {width}, allowed 1 ..= 32")),
            _ => {}
        }
    }
    let awaddr = net.input("s_axil_awaddr", ADDR_BITS);
    let awvalid = net.input("s_axil_awvalid", 1);
    let wdata = net.input("s_axil_wdata", 32);
    let wstrb = net.input("s_axil_wstrb", 4);
    let wvalid = net.input("s_axil_wvalid", 1);
    let bready = net.input("s_axil_bready", 1);
    let araddr = net.input("s_axil_araddr", ADDR_BITS);
    let arvalid = net.input("s_axil_arvalid", 1);
    let rready = net.input("s_axil_rready", 1);

    let word = |net: &mut Netlist, addr: Wire| net.slice(addr, 2, ADDR_BITS - 2);
    let one = net.constant(1, 1);
    let zero = net.constant(0, 1);

    // Write channels, each held until both are here and the response channel is free.
    let aw_held = net.register("axil_aw_held", 1, 0);
    let aw_addr = net.register("axil_aw_addr", ADDR_BITS - 2, 0);
    let w_held = net.register("axil_w_held", 1, 0);
    let w_data = net.register("axil_w_data", 32, 0);
    let w_strb = net.register("axil_w_strb", 4, 0);
    let bvalid = net.register("axil_bvalid", 1, 0);
    let bresp = net.register("axil_bresp", 2, 0);
    let awready = net.not(aw_held.q);
    let wready = net.not(w_held.q);
    net.output("s_axil_awready", awready);
    net.output("s_axil_wready", wready);
    let aw_take = net.and(awvalid, awready);
    let w_take = net.and(wvalid, wready);
    let aw_word = word(net, awaddr);
    net.hold_unless(aw_addr, aw_take, aw_word);
    net.hold_unless(w_data, w_take, wdata);
    net.hold_unless(w_strb, w_take, wstrb);
    let no_b = net.not(bvalid.q);
    let do_write = net.and(aw_held.q, w_held.q);
    let do_write = net.and(do_write, no_b);
    let ah = net.mux(aw_take, one, aw_held.q);
    let ah = net.mux(do_write, zero, ah);
    net.drive(aw_held, ah);
    let wh = net.mux(w_take, one, w_held.q);
    let wh = net.mux(do_write, zero, wh);
    net.drive(w_held, wh);
    // Byte mask from wstrb.
    let mut mask = None;
    for b in (0..4).rev() {
        let s = net.bit(w_strb.q, b);
        let ones = net.constant(0xFF, 8);
        let zeros = net.constant(0, 8);
        let byte = net.mux(s, ones, zeros);
        mask = Some(match mask {
            None => byte,
            Some(m) => net.concat(m, byte),
        });
    }
    let mask = mask.unwrap();
    let keep_mask = net.not(mask);

    let mut rw_values = vec![];
    let mut writable = vec![];
    let mut read_hits = vec![];
    let ar_word = word(net, araddr);
    for (a, e) in entries {
        let here = net.constant((*a >> 2) as u128, ADDR_BITS - 2);
        let value = match e {
            Entry::ReadOnly(w) => net.zext(*w, 32),
            Entry::ReadWrite { width, reset } => {
                let r = net.register(&format!("axil_reg_{a:03x}"), *width, *reset as u128);
                let old = net.zext(r.q, 32);
                let kept = net.and(old, keep_mask);
                let new = net.and(w_data.q, mask);
                let merged = net.or(kept, new);
                let merged = net.slice(merged, 0, *width);
                let hit = net.eq(aw_addr.q, here);
                writable.push(hit);
                let we = net.and(do_write, hit);
                net.hold_unless(r, we, merged);
                rw_values.push(r.q);
                old
            }
        };
        read_hits.push((here, value));
    }
    let write_ok = if writable.is_empty() { zero } else { net.or_all(&writable) };
    let okay = net.constant(OKAY, 2);
    let slverr = net.constant(SLVERR, 2);
    let resp = net.mux(write_ok, okay, slverr);
    net.hold_unless(bresp, do_write, resp);
    let b_done = net.and(bvalid.q, bready);
    let bv = net.mux(do_write, one, bvalid.q);
    let bv = net.mux(b_done, zero, bv);
    net.drive(bvalid, bv);
    net.output("s_axil_bvalid", bvalid.q);
    net.output("s_axil_bresp", bresp.q);

    // Reads: one outstanding; the data register holds until rready.
    let rvalid = net.register("axil_rvalid", 1, 0);
    let rdata = net.register("axil_rdata", 32, 0);
    let rresp = net.register("axil_rresp", 2, 0);
    let arready = net.not(rvalid.q);
    net.output("s_axil_arready", arready);
    let ar_take = net.and(arvalid, arready);
    let mut data = net.constant(0, 32);
    let mut hit_any = zero;
    for (here, value) in read_hits {
        let hit = net.eq(ar_word, here);
        data = net.mux(hit, value, data);
        hit_any = net.or(hit_any, hit);
    }
    net.hold_unless(rdata, ar_take, data);
    let rr = net.mux(hit_any, okay, slverr);
    net.hold_unless(rresp, ar_take, rr);
    let r_done = net.and(rvalid.q, rready);
    let rv = net.mux(ar_take, one, rvalid.q);
    let rv = net.mux(r_done, zero, rv);
    net.drive(rvalid, rv);
    net.output("s_axil_rvalid", rvalid.q);
    net.output("s_axil_rdata", rdata.q);
    net.output("s_axil_rresp", rresp.q);
    Ok(rw_values)
}

/// The self-test registers of a node's window: (address, name, width) of the read-write ones,
/// then the read-only status words from [`SELFTEST_STATUS`].
pub const SELFTEST_REGS: [(u32, &str, usize); 7] =
    [(0x020, "control", 3), (0x024, "count", 32), (0x028, "length", 14), (0x02C, "dst", 22), (0x030, "tag", 16), (0x034, "seed", 32), (0x038, "expected", 32)];
pub const SELFTEST_STATUS: u32 = 0x040;
/// Link status (RO): bit `d` = the channel of the endpoint facing direction `d` (X+, X−, Y+, Y−,
/// Z+, Z− = 0…5) is up; bit 31 = every channel is up.
pub const LINK_STATUS: u32 = 0x018;
pub const SELFTEST_STATUS_NAMES: [&str; 6] = ["sent", "cycles", "status", "packets", "bytes", "errors"];

/// The node's register map (DESIGN.md): ID, version, local coordinates (RW), torus dimensions,
/// scratch, link status at [`LINK_STATUS`] (input `link_status`), the self-test block when `selftest` ([`SELFTEST_REGS`], status words from
/// [`SELFTEST_STATUS`] read from inputs `selftest@<32·i>`), and `counters` read-only words from
/// 0x100. Returns the netlist with outputs `local_x`, `local_y`, `local_z` (the coordinate
/// register's fields) and `st_<name>` for the self-test registers.
pub fn node_window(dims: [usize; 3], counters: usize, selftest: bool) -> Result<Netlist, String> {
    let mut net = Netlist::new();
    let n = &mut net;
    let id = n.constant(ID as u128, 32);
    let version = n.constant(VERSION as u128, 32);
    let packed = (dims[0] | dims[1] << 8 | dims[2] << 16) as u128;
    let dims_w = n.constant(packed, 32);
    let mut entries = vec![
        (0x000, Entry::ReadOnly(id)),
        (0x004, Entry::ReadOnly(version)),
        (0x008, Entry::ReadWrite { width: 24, reset: 0 }),
        (0x00C, Entry::ReadOnly(dims_w)),
        (0x010, Entry::ReadWrite { width: 32, reset: 0 }),
    ];
    let link_status = n.input("link_status", 32);
    entries.push((LINK_STATUS, Entry::ReadOnly(link_status)));
    if selftest {
        for (addr, _, width) in SELFTEST_REGS {
            entries.push((addr, Entry::ReadWrite { width, reset: 0 }));
        }
        for i in 0..SELFTEST_STATUS_NAMES.len() {
            let w = n.input(&format!("selftest@{}", 32 * i), 32);
            entries.push((SELFTEST_STATUS + 4 * i as u32, Entry::ReadOnly(w)));
        }
    }
    for i in 0..counters {
        let c = n.input(&format!("counters@{}", 32 * i), 32);
        entries.push((0x100 + 4 * i as u32, Entry::ReadOnly(c)));
    }
    let rw = register_window(n, &entries)?;
    for (k, name) in ["local_x", "local_y", "local_z"].iter().enumerate() {
        let f = n.slice(rw[0], 8 * k, 6);
        n.output(name, f);
    }
    if selftest {
        for (i, (_, name, _)) in SELFTEST_REGS.iter().enumerate() {
            n.output(&format!("st_{name}"), rw[2 + i]);
        }
    }
    Ok(net)
}

/// A small AXI4-Lite master over the built-in simulator, for testbenches: each access drives
/// the channels with the given delays between them and random waits before `bready`/`rready`.
pub struct Master {
    pub eval: weft_hdl::netlist::eval::Evaluator,
    rng: weft_hdl::testbench::Rng,
    pub cycles: u64,
}

impl Master {
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

/// Built-in-simulator check of the node window against its map (DESIGN.md): identification,
/// read-write registers with byte strobes in any channel order, counters, SLVERR on read-only
/// and unmapped addresses, responses held under back-pressure.
pub fn check_node_window(dims: [usize; 3], counters: usize, selftest: bool, seed: u64) -> Result<String, String> {
    let mut m = Master::new(node_window(dims, counters, selftest)?, seed);
    let counter_values: Vec<u32> = (0..counters as u32).map(|i| 0x1000_0001u32.wrapping_mul(i + 3)).collect();
    for (i, v) in counter_values.iter().enumerate() {
        let w = m.eval.input(&format!("counters@{}", 32 * i)).unwrap();
        m.eval.set(w, *v as u128);
    }
    let expect = |what: &str, got: (u128, u128), want: (u128, u128)| if got == want { Ok(()) } else { Err(format!("{what}: got {got:x?}, want {want:x?}")) };
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
            return Err("write to scratch answered SLVERR".into());
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
        return Err("write to coordinates answered SLVERR".into());
    }
    expect("coordinates", m.read(0x008), (coords as u128, OKAY))?;
    m.eval.settle();
    if (m.get("local_x"), m.get("local_y"), m.get("local_z")) != (3, 2, 1) {
        return Err("coordinate outputs do not follow the register".into());
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
                return Err(format!("write to self-test {name} answered SLVERR"));
            }
            expect(name, m.read(addr), ((v & mask) as u128, OKAY))?;
            m.eval.settle();
            if m.get(&format!("st_{name}")) != (v & mask) as u128 {
                return Err(format!("output st_{name} does not follow its register"));
            }
        }
        for i in 0..SELFTEST_STATUS_NAMES.len() {
            let v = 0x0BAD_0000u32 + i as u32;
            let w = m.eval.input(&format!("selftest@{}", 32 * i)).unwrap();
            m.eval.set(w, v as u128);
            let addr = SELFTEST_STATUS + 4 * i as u32;
            expect(SELFTEST_STATUS_NAMES[i], m.read(addr), (v as u128, OKAY))?;
            if m.write(addr, 0, 0xF, 0) != SLVERR {
                return Err(format!("write to self-test status {addr:#x} did not answer SLVERR"));
            }
        }
    }
    // Read-only and unmapped: SLVERR, nothing changes.
    for addr in [0x000, 0x00C, 0x100, 0x014, 0x0FC, 0xFFC] {
        if m.write(addr, 0xDEAD_BEEF, 0xF, 1) != SLVERR {
            return Err(format!("write to {addr:#x} did not answer SLVERR"));
        }
    }
    expect("ID after a write", m.read(0x000), (ID as u128, OKAY))?;
    expect("unmapped read", m.read(0x014), (0, SLVERR))?;
    expect("unmapped read", m.read(0xFFC), (0, SLVERR))?;
    expect("scratch untouched", m.read(0x010), (scratch as u128, OKAY))?;
    Ok(format!("ID, version, dimensions, 200 strobed scratch writes in random channel order, coordinates, {counters} counters, SLVERR on 6 bad writes and 2 unmapped reads ({} cycles)", m.cycles))
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
        assert!(register_window(&mut net, &[(0x3, Entry::ReadWrite { width: 8, reset: 0 })]).unwrap_err().contains("multiple of 4"));
        assert!(register_window(&mut net, &[(0x4, Entry::ReadOnly(w))]).unwrap_err().contains("at most 32"));
        let twice = [(0x4, Entry::ReadWrite { width: 8, reset: 0 }), (0x4, Entry::ReadWrite { width: 8, reset: 0 })];
        assert!(register_window(&mut net, &twice).unwrap_err().contains("twice"));
    }
}

/// The shipped stand-alone window: the node map of a 4x2x1 torus with 8 counters (the node
/// tops embed the same logic).
pub fn shipped() -> Vec<crate::catalog::Shipped> {
    use weft_hdl::export::{export_netlist, ExportError, ModuleSpec};
    vec![crate::catalog::Shipped {
        spec: ModuleSpec {
            family: "axil",
            name: "axil_node_regs".into(),
            summary: "AXI4-Lite register window of a node: ID, version, coordinates, torus dimensions, scratch, counters; SLVERR on read-only and unmapped addresses".into(),
            parameters: vec![("torus".into(), "4x2x1".into()), ("counters".into(), "8 at 0x100..0x11C".into()), ("data_width".into(), "32".into()), ("address_width".into(), "12".into())],
            hidden_ports: vec![],
        },
        verilog: |spec| export_netlist(spec, &node_window([4, 2, 1], 8, false).map_err(ExportError)?),
        testbench: || check_node_window([4, 2, 1], 8, false, 7),
    }]
}
