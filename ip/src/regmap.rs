//! The node's register map as data: one description that builds the AXI4-Lite window
//! ([`crate::axil::node_window`]) and is written out for software as SystemRDL 2.0 and as a C
//! header, so a driver includes the same addresses the hardware decodes.

/// The identification register's value: ASCII "WEFT".
pub const ID: u32 = 0x5745_4654;
/// Register-map version read at 0x004.
pub const VERSION: u32 = 0x0001_0000;

/// The self-test registers of a node's window: (address, name, width) of the read-write ones,
/// then the read-only status words from [`SELFTEST_STATUS`].
pub const SELFTEST_REGS: [(u32, &str, usize); 8] =
    [(0x020, "control", 3), (0x024, "count", 32), (0x028, "length", 14), (0x02C, "dst", 22), (0x030, "tag", 16), (0x034, "seed", 32), (0x038, "expected", 32), (0x03C, "window", 32)];
/// Byte address of the first self-test status word (RO); the six words of
/// [`SELFTEST_STATUS_NAMES`] follow at `0x040`–`0x054`.
pub const SELFTEST_STATUS: u32 = 0x040;
/// Link status (RO): bit `d` = the channel of the endpoint facing direction `d` (X+, X−, Y+, Y−,
/// Z+, Z− = 0…5) is up; bit 31 = every channel is up.
pub const LINK_STATUS: u32 = 0x018;
/// The self-test status words from [`SELFTEST_STATUS`], 4 bytes apart: packets sent, cycles
/// from the first header sent until the checker is complete, status (`busy | complete<<1`),
/// packets, payload bytes and errors counted by the checker.
pub const SELFTEST_STATUS_NAMES: [&str; 6] = ["sent", "cycles", "status", "packets", "bytes", "errors"];

/// Where a register's value comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Source {
    /// Read-only constant.
    Constant(u32),
    /// Read-only, from 32 bits of the window's input `port`, starting at bit `lo` (a wide input
    /// carries several registers: `counters` holds one counter every 32 bits).
    Input {
        /// The window's input port.
        port: String,
        /// The bit of `port` where the register's 32 bits start.
        lo: usize,
    },
    /// Read-write storage of the register's width, with its value after reset.
    Stored(u32),
}

/// A bit field of a register.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Field {
    /// The field's name, as in the SystemRDL and the C header.
    pub name: String,
    /// Its lowest bit.
    pub lsb: usize,
    /// Its width in bits.
    pub width: usize,
    /// What it means (may be empty).
    pub desc: String,
}

/// A 32-bit register of the window.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Register {
    /// The register's name, as in the SystemRDL and the C header.
    pub name: String,
    /// Its byte address in the window: a multiple of 4 below `0x1000`.
    pub addr: u32,
    /// Bits the register holds (from bit 0); reads return zeros above them.
    pub width: usize,
    /// Where its value comes from; decides RO or RW.
    pub source: Source,
    /// One-line description.
    pub desc: String,
    /// Documented fields; a register without them is one field named `value`.
    pub fields: Vec<Field>,
}

impl Register {
    /// Whether software may write it (read-write storage); other writes answer `SLVERR`.
    pub fn writable(&self) -> bool {
        matches!(self.source, Source::Stored(_))
    }

    /// The value after reset (constants; 0 for storage; inputs have none of their own).
    pub fn reset(&self) -> Option<u32> {
        match &self.source {
            Source::Constant(v) => Some(*v),
            Source::Stored(reset) => Some(*reset),
            Source::Input { .. } => None,
        }
    }

    fn fields_or_value(&self) -> Vec<Field> {
        if self.fields.is_empty() {
            vec![field("value", 0, self.width, "")]
        } else {
            self.fields.clone()
        }
    }
}

fn field(name: &str, lsb: usize, width: usize, desc: &str) -> Field {
    Field { name: name.into(), lsb, width, desc: desc.into() }
}

fn reg(name: &str, addr: u32, width: usize, source: Source, desc: &str, fields: Vec<Field>) -> Register {
    Register { name: name.into(), addr, width, source, desc: desc.into(), fields }
}

/// `x | y<<8 | z<<16` byte fields (coordinates and dimensions; the router reads 6 bits of each
/// coordinate).
fn xyz(what: &str) -> Vec<Field> {
    ["x", "y", "z"].iter().enumerate().map(|(k, a)| field(a, 8 * k, 8, &format!("{what} {}", a.to_uppercase()))).collect()
}

/// The node's map: identification, coordinates, dimensions, scratch, link status, the self-test
/// block when `selftest`, and one read-only counter per name in `counters` from 0x100.
pub fn node_map(dims: [usize; 3], counters: &[String], selftest: bool) -> Vec<Register> {
    node_map_with_kernels(dims, counters, selftest, &[])
}

/// Where the destination register of the kernel on IntraNode port `p` sits.
pub fn kernel_dst_addr(p: usize) -> u32 {
    KERNEL_DST + 4 * p as u32
}
/// The kernel destination registers (RW, one per IntraNode port that has a kernel).
pub const KERNEL_DST: u32 = 0x060;

/// The allreduce engine's registers (`flags`, `dst_a`, `dst_b`, `op`, `type`, `timeout`).
pub const ALLREDUCE: u32 = 0x0A0;

/// The allreduce engine's program: its role flags (name and meaning, lowest bit first), its two
/// destinations ([`crate::system::allreduce::plan()`] computes them), the operator of the next
/// operation, and the element type the engine was generated for (read-only).
pub fn allreduce_registers(flags: &[(&str, &str)], element: crate::system::allreduce::ElementType, stripes: usize) -> Vec<Register> {
    let code = element.code();
    let dst = || vec![field("x", 0, 6, ""), field("y", 6, 6, ""), field("z", 12, 6, ""), field("port", 18, 4, "")];
    let flag_fields = || flags.iter().enumerate().map(|(i, (f, w))| field(f, i, 1, w)).collect::<Vec<_>>();
    let stripe_registers = (1..=stripes).flat_map(|k| {
        let at = allreduce_stripe_addr(k);
        [
            reg(&format!("allreduce_s{k}_flags"), at, flags.len(), Source::Stored(0), &format!("Allreduce stripe {k}: this node's role on chain {k}"), flag_fields()),
            reg(
                &format!("allreduce_s{k}_dst_a"),
                at + 4,
                22,
                Source::Stored(0),
                &format!("Allreduce stripe {k}: destination of partial sums (at the root: of one result copy), header bits 21:0"),
                dst(),
            ),
            reg(&format!("allreduce_s{k}_dst_b"), at + 8, 22, Source::Stored(0), &format!("Allreduce stripe {k}: destination of forwarded results, header bits 21:0"), dst()),
        ]
    });
    let mut map = vec![
        reg("allreduce_flags", ALLREDUCE, flags.len(), Source::Stored(0), "Allreduce: this node's role", flag_fields()),
        reg("allreduce_dst_a", ALLREDUCE + 4, 22, Source::Stored(0), "Allreduce: destination of partial sums (at the root: of one result copy), header bits 21:0", dst()),
        reg("allreduce_dst_b", ALLREDUCE + 8, 22, Source::Stored(0), "Allreduce: destination of forwarded results, header bits 21:0", dst()),
        reg(
            "allreduce_op",
            ALLREDUCE + 12,
            2,
            Source::Stored(0),
            "Allreduce: the operator, the same on every node: 0 sum, 1 minimum, 2 maximum (IEEE 754-2019 on floats, signed on int32), 3 bitwise OR (broadcast, allgather)",
            vec![],
        ),
        reg("allreduce_type", ALLREDUCE + 16, 3, Source::Constant(code), "Allreduce: the element type of the engine: 0 binary32, 1 binary64, 2 binary16, 3 bfloat16, 4 int32", vec![]),
        reg(
            "allreduce_timeout",
            ALLREDUCE + 20,
            32,
            Source::Stored(0),
            "Allreduce: cycles without progress after which an operation in flight is reported (counter allreduce_timeouts, an error packet to the host); 0: never",
            vec![],
        ),
        reg(
            "allreduce_small_bytes",
            ALLREDUCE + 24,
            16,
            Source::Stored(0),
            "Allreduce: contribution packets of at most this many bytes (and at most 256) run on the butterfly, longer ones on the chain; 0: all on the chain; the same on every node",
            vec![],
        ),
        reg(
            "allreduce_issue_control",
            ALLREDUCE + 28,
            1,
            Source::Stored(0),
            "Allreduce from the registers: a rising edge of bit 0 issues one operation of one element",
            vec![field("go", 0, 1, "0 → 1 issues allreduce_issue_value with id allreduce_issue_id")],
        ),
        reg("allreduce_issue_value_lo", ALLREDUCE + 32, 32, Source::Stored(0), "Allreduce from the registers: the element's bits 31:0", vec![]),
        reg("allreduce_issue_value_hi", ALLREDUCE + 36, 32, Source::Stored(0), "Allreduce from the registers: the element's bits 63:32 (binary64)", vec![]),
        reg("allreduce_issue_id", ALLREDUCE + 40, 32, Source::Stored(0), "Allreduce from the registers: the operation id; its result goes to the registers, not the stream", vec![]),
        reg("allreduce_issue_result_lo", ALLREDUCE + 44, 32, Source::Input { port: "allreduce_issue".into(), lo: 0 }, "Allreduce from the registers: the result's bits 31:0", vec![]),
        reg("allreduce_issue_result_hi", ALLREDUCE + 48, 32, Source::Input { port: "allreduce_issue".into(), lo: 32 }, "Allreduce from the registers: the result's bits 63:32", vec![]),
        reg(
            "allreduce_issue_status",
            ALLREDUCE + 52,
            3,
            Source::Input { port: "allreduce_issue".into(), lo: 64 },
            "Allreduce from the registers: its state",
            vec![field("busy", 0, 1, "issued, result not back"), field("done", 1, 1, "the result is in allreduce_issue_result"), field("error", 2, 1, "the watchdog reported the operation")],
        ),
    ];
    map.extend(stripe_registers);
    map
}

/// Where the registers of allreduce stripe `k` (1 ..) start: `flags`, `dst_a`, `dst_b`, as the
/// unit's; the operator and the watchdog are the unit's.
pub fn allreduce_stripe_addr(k: usize) -> u32 {
    ALLREDUCE_STRIPES + 12 * (k as u32 - 1)
}
/// The first stripe's registers.
pub const ALLREDUCE_STRIPES: u32 = 0x0D8;

/// [`node_map`] with a destination register for each wired kernel: `(port, value after reset)`.
pub fn node_map_with_kernels(dims: [usize; 3], counters: &[String], selftest: bool, kernels: &[(usize, u32)]) -> Vec<Register> {
    let packed = (dims[0] | dims[1] << 8 | dims[2] << 16) as u32;
    let mut map = vec![
        reg("id", 0x000, 32, Source::Constant(ID), "Identification: ASCII \"WEFT\"", vec![]),
        reg("version", 0x004, 32, Source::Constant(VERSION), "Register-map version (major << 16 | minor)", vec![]),
        reg("coordinates", 0x008, 24, Source::Stored(0), "This node's torus coordinates; drive the router", xyz("coordinate")),
        reg("dimensions", 0x00C, 32, Source::Constant(packed), "Torus dimensions", xyz("size in")),
        reg("scratch", 0x010, 32, Source::Stored(0), "Scratch register for software", vec![]),
        reg(
            "link_status",
            LINK_STATUS,
            32,
            Source::Input { port: "link_status".into(), lo: 0 },
            "Channel up per link endpoint",
            ["xp", "xn", "yp", "yn", "zp", "zn"]
                .iter()
                .enumerate()
                .map(|(d, n)| field(&format!("{n}_up"), d, 1, &format!("the endpoint facing {n} is up")))
                .chain([field("all_up", 31, 1, "every channel is up")])
                .collect(),
        ),
    ];
    if selftest {
        for (addr, name, width) in SELFTEST_REGS {
            let (desc, fields) = match name {
                "control" => (
                    "Self-test control",
                    vec![field("enable", 0, 1, "the self-test owns IntraNode port 0"), field("start", 1, 1, "rising edge: start sending"), field("clear", 2, 1, "clear the checker")],
                ),
                "count" => ("Self-test: packets to send", vec![]),
                "length" => ("Self-test: payload bytes per packet", vec![]),
                "dst" => ("Self-test: destination (header bits 21:0)", vec![field("x", 0, 6, ""), field("y", 6, 6, ""), field("z", 12, 6, ""), field("port", 18, 4, "")]),
                "tag" => ("Self-test: packet tag", vec![]),
                "seed" => ("Self-test: pattern seed", vec![]),
                "window" => ("Self-test: packets per message; a message starts once the checker has counted every packet sent before it (0: no limit)", vec![]),
                _ => ("Self-test: packets the checker waits for", vec![]),
            };
            map.push(reg(&format!("selftest_{name}"), addr, width, Source::Stored(0), desc, fields));
        }
        for (i, name) in SELFTEST_STATUS_NAMES.iter().enumerate() {
            let fields = if *name == "status" { vec![field("busy", 0, 1, "the generator is sending"), field("complete", 1, 1, "the checker has its expected packets")] } else { vec![] };
            map.push(reg(&format!("selftest_{name}"), SELFTEST_STATUS + 4 * i as u32, 32, Source::Input { port: "selftest".into(), lo: 32 * i }, &format!("Self-test status: {name}"), fields));
        }
    }
    for &(p, reset) in kernels {
        let fields = vec![field("x", 0, 6, ""), field("y", 6, 6, ""), field("z", 12, 6, ""), field("port", 18, 4, "")];
        map.push(reg(
            &format!("kernel_p{p}_dst"),
            kernel_dst_addr(p),
            22,
            Source::Stored(reset),
            &format!("Destination of the results of the kernel on IntraNode port {p} (header bits 21:0)"),
            fields,
        ));
    }
    for (i, name) in counters.iter().enumerate() {
        map.push(reg(&format!("stat_{name}"), 0x100 + 4 * i as u32, 32, Source::Input { port: "counters".into(), lo: 32 * i }, &format!("Counter: {}", name.replace('_', " ")), vec![]));
    }
    map
}

/// The map as SystemRDL 2.0: one `addrmap` named `name` of 32-bit registers, software access as
/// the hardware decodes it (read-only registers are `sw = r`).
pub fn systemrdl(name: &str, desc: &str, map: &[Register]) -> String {
    let mut s = format!("// Generated by weft: the register window of `{name}` (AXI4-Lite, 32-bit data, byte addresses).\n");
    s.push_str(&format!("addrmap {name} {{\n    name = \"{name}\";\n    desc = \"{desc}\";\n    default regwidth = 32;\n    default accesswidth = 32;\n"));
    for r in map {
        let (sw, hw) = match r.source {
            Source::Stored(_) => ("rw", "r"),
            Source::Constant(_) => ("r", "na"),
            Source::Input { .. } => ("r", "w"),
        };
        s.push_str(&format!("\n    reg {{\n        desc = \"{}\";\n", r.desc.replace('"', "\\\"")));
        for f in r.fields_or_value() {
            let reset = r.reset().map(|v| format!(" = 0x{:X}", (v >> f.lsb) as u64 & ((1u64 << f.width) - 1))).unwrap_or_default();
            let fdesc = if f.desc.is_empty() { String::new() } else { format!(" desc = \"{}\";", f.desc) };
            s.push_str(&format!("        field {{ sw = {sw}; hw = {hw};{fdesc} }} {}[{}:{}]{reset};\n", f.name, f.lsb + f.width - 1, f.lsb));
        }
        s.push_str(&format!("    }} {} @ 0x{:03X};\n", r.name, r.addr));
    }
    s.push_str("};\n");
    s
}

/// The map as a C header: `<PREFIX>_<REG>` byte offsets, and `_<FIELD>_SHIFT` / `_MASK` per field.
pub fn c_header(name: &str, map: &[Register]) -> String {
    let prefix = name.to_uppercase();
    let guard = format!("{prefix}_REGS_H");
    let mut s =
        format!("/* Generated by weft: the register window of `{name}` (AXI4-Lite, 32-bit data).\n   Offsets are byte addresses from the window's base. */\n#ifndef {guard}\n#define {guard}\n\n");
    for r in map {
        let reg = format!("{prefix}_{}", r.name.to_uppercase());
        let access = if r.writable() { "RW" } else { "RO" };
        s.push_str(&format!("/* {} ({access}) */\n#define {reg} 0x{:03X}u\n", r.desc, r.addr));
        if let Some(v) = r.reset().filter(|_| !r.writable()) {
            s.push_str(&format!("#define {reg}_VALUE 0x{v:08X}u\n"));
        }
        for f in &r.fields {
            let fname = format!("{reg}_{}", f.name.to_uppercase());
            let mask = (((1u64 << f.width) - 1) << f.lsb) as u32;
            s.push_str(&format!("#define {fname}_SHIFT {}u\n#define {fname}_MASK 0x{mask:08X}u\n", f.lsb));
        }
    }
    s.push_str(&format!("\n#endif /* {guard} */\n"));
    s
}
