//! The system description a user writes in TOML: torus, node, clocks, board and the kernels on
//! the IntraNode ports. Parsing rejects unknown keys and missing fields; [`SystemConfig::parse`]
//! then checks every value and names the key and the allowed range of any it refuses.

use crate::Error;
use std::path::Path;

use serde::Deserialize;

use weft_ip::link::LinkConfig;
use weft_ip::router::RouterConfig;
use weft_ip::system::allreduce::ElementType;
use weft_ip::system::kernel_port::{pack_dst, KernelPort};
use weft_ip::system::{Allreduce, NodeConfig};

use super::app_section::{AppSpec, ApplicationSection};

/// A board weft writes constraints for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Board {
    /// The name `board` takes in the TOML.
    pub name: &'static str,
    /// The vendor, so the tool and constraint format.
    pub vendor: Vendor,
    /// FuseSoC/vendor-tool device name.
    pub part: &'static str,
    /// The device family, as the vendor names it.
    pub family: &'static str,
}

/// A board's vendor: which tool builds the design and which constraint format it reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Vendor {
    /// Vivado, XDC constraints.
    Xilinx,
    /// Quartus, SDC constraints.
    Intel,
}

/// The boards `board` may name: `u200`, `u280`, `s10_520n`.
pub const BOARDS: [Board; 3] = [
    Board { name: "u200", vendor: Vendor::Xilinx, part: "xcu200-fsgd2104-2-e", family: "Virtex UltraScale+" },
    Board { name: "u280", vendor: Vendor::Xilinx, part: "xcu280-fsvh2892-2L-e", family: "Virtex UltraScale+" },
    Board { name: "s10_520n", vendor: Vendor::Intel, part: "1SG280HN2F43E2VG", family: "Stratix 10" },
];

/// The TOML file as written (every key known, the optional ones defaulted later).
#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
struct File {
    name: String,
    board: String,
    torus: TorusSection,
    #[serde(default)]
    node: NodeSection,
    clocks: ClockSection,
    #[serde(default)]
    sim: SimSection,
    #[serde(default)]
    port: Vec<PortSection>,
    #[serde(default)]
    kernel: Vec<KernelSection>,
    allreduce: Option<AllreduceSection>,
    application: Option<ApplicationSection>,
}

/// The in-network allreduce engine (`[allreduce]`).
#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
struct AllreduceSection {
    /// IntraNode ports `[a, b]`: `a` carries the host's contributions and results, `b` is inside
    /// the node.
    ports: Vec<i64>,
    /// The element type: `f32` (default), `f64`, `f16` or `bf16`.
    #[serde(rename = "type")]
    element: Option<String>,
    /// Ports `[a, b]` of further chain engines, one pair per stripe of a long vector.
    #[serde(default)]
    stripes: Vec<Vec<i64>>,
}

/// A kernel wired to an IntraNode port (`[[kernel]]`).
#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
struct KernelSection {
    /// A shipped kernel's name, or a DSL file (`.wk`, relative to the system file).
    kernel: String,
    port: i64,
    input_tag: i64,
    output_tag: i64,
    /// `[x, y, z, port]`: where results go until software writes the destination register.
    dst: Vec<i64>,
    #[serde(default)]
    clock: Option<String>,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
struct TorusSection {
    dims: Vec<i64>,
}

#[derive(Deserialize, Debug, Default)]
#[serde(deny_unknown_fields)]
struct NodeSection {
    local_ports: Option<i64>,
    width: Option<i64>,
    vc_buffer_flits: Option<i64>,
    max_packet_bytes: Option<i64>,
    replay_words: Option<i64>,
    link_vc_buffer_words: Option<i64>,
    retransmit_timeout: Option<i64>,
    /// `serial` (weft's reliable link on transceiver lanes, the default) or `io_channels` (the
    /// board's own channels, `s10_520n` only).
    links: Option<String>,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
struct ClockSection {
    fabric_mhz: f64,
    kernel_mhz: Option<f64>,
}

#[derive(Deserialize, Debug, Default)]
#[serde(deny_unknown_fields)]
struct SimSection {
    channel_latency: Option<i64>,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
struct PortSection {
    index: i64,
    #[serde(default)]
    clock: Option<String>,
    #[serde(default)]
    kernel: Option<String>,
}

/// Which clock an IntraNode port runs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PortClock {
    /// The fabric clock `clk` (router and links): the port is the node's own.
    Fabric,
    /// The kernel clock `kernel_clk`: the shell joins the port to the node through asynchronous
    /// FIFOs, one each way.
    Kernel,
}

/// One IntraNode port of the node (`[[port]]`; a port not described runs on the fabric clock
/// and serves no kernel).
#[derive(Clone, Debug, PartialEq)]
pub struct Port {
    /// The port's index, 0 .. `node.local_ports` − 1.
    pub index: usize,
    /// Its clock: `clock` = `"fabric"` (the default) or `"kernel"`.
    pub clock: PortClock,
    /// A shipped kernel served by this port; its Verilog goes into the design's file set.
    pub kernel: Option<String>,
}

/// A checked system description.
#[derive(Clone, Debug, PartialEq)]
pub struct SystemConfig {
    /// `name`: 1..=64 characters of a-z, 0-9 and _, starting with a letter; it prefixes every
    /// generated module and file.
    pub name: String,
    /// `board`, one of [`BOARDS`].
    pub board: Board,
    /// The node: router (`torus.dims` and `[node]`), link, wired kernels (`[[kernel]]`) and the
    /// allreduce engine (`[allreduce]`).
    pub node: NodeConfig,
    /// `clocks.fabric_mhz`: the router and link clock `clk`, 1.0..=1000.0 MHz.
    pub fabric_mhz: f64,
    /// `clocks.kernel_mhz`: the kernel clock `kernel_clk`, 1.0..=1000.0 MHz, when given.
    pub kernel_mhz: Option<f64>,
    /// Cycles a serial block spends in the simulation top's channel models
    /// (`sim.channel_latency`, 1..=1024, default 16).
    pub channel_latency: usize,
    /// One entry per IntraNode port, in index order.
    pub ports: Vec<Port>,
    /// The mesh application the nodes run (`[application]`), when given.
    pub application: Option<AppSpec>,
}

/// `key` must be an integer in `lo..=hi`.
fn ranged(key: &str, value: i64, lo: i64, hi: i64) -> Result<usize, Error> {
    if value < lo || value > hi {
        Err(Error::Input(format!("`{key}` = {value} is out of range: allowed {lo}..={hi}")))
    } else {
        Ok(value as usize)
    }
}

/// Virtual cut-through: a VC buffer holds a whole packet of `max_packet_bytes` (plus its header
/// flit), and is a power of two of at most 4096 flits. The refusal names both keys, says which
/// one the user left at its default, and what would fix it either way.
fn packet_fits(router: &RouterConfig, buffer_set: bool, bytes_set: bool) -> Result<(), Error> {
    let (flits, bytes, flit_bytes) = (router.vc_buffer_flits, router.max_packet_bytes, router.flit_bytes());
    let need = router.max_packet_flits().max(2);
    if flits.is_power_of_two() && (need..=4096).contains(&flits) {
        return Ok(());
    }
    let default = |set: bool| if set { "" } else { " (the default)" };
    let rule = format!(
        "allowed: `node.vc_buffer_flits` a power of two, at least 1 + ceil(`node.max_packet_bytes` / {flit_bytes}) flits (one header flit and the payload of a maximum packet at {} bits a flit) and at most 4096",
        router.width
    );
    // `max_packet_bytes` <= 16383 keeps `need` <= 1025 flits: a power of two always fits.
    let lower = if flits.is_power_of_two() && (2..=4096).contains(&flits) { format!(" or lower `node.max_packet_bytes` to at most {}", (flits - 1) * flit_bytes) } else { String::new() };
    let fix = format!("; set `node.vc_buffer_flits` = {}{lower}", need.next_power_of_two());
    Err(Error::Input(format!(
        "`node.max_packet_bytes` = {bytes}{} needs {need} flits of buffer, `node.vc_buffer_flits` = {flits}{} does not fit it: {rule}{fix}",
        default(bytes_set),
        default(buffer_set)
    )))
}

/// A `[[kernel]]` entry checked against the router: the kernel's DSL source (shipped or read
/// from its file), its port, tags and destination.
fn wired_kernel(i: usize, k: &KernelSection, router: &RouterConfig, kernel_mhz: Option<f64>, base: &Path) -> Result<KernelPort, Error> {
    let key = |name: &str| format!("kernel[{i}].{name}");
    let (source, origin) = if k.kernel.ends_with(".wk") {
        let path = base.join(&k.kernel);
        (std::fs::read_to_string(&path).map_err(|e| Error::Input(format!("`{}` = {:?}: {}: {e}", key("kernel"), k.kernel, path.display())))?, path.display().to_string())
    } else {
        let (_, text) = weft_ip::kernels::SOURCES.iter().find(|(n, _)| *n == k.kernel).ok_or_else(|| {
            let names: Vec<&str> = weft_ip::kernels::SOURCES.iter().map(|(n, _)| *n).collect();
            Error::Input(format!("`{}` = {:?} is neither a shipped kernel ({}) nor a DSL file ending in .wk", key("kernel"), k.kernel, names.join(", ")))
        })?;
        (text.to_string(), format!("examples/kernels/{}.wk", k.kernel))
    };
    let port = ranged(&key("port"), k.port, 0, router.local_ports as i64 - 1)?;
    let input_tag = ranged(&key("input_tag"), k.input_tag, 0, 65535)? as u16;
    let output_tag = ranged(&key("output_tag"), k.output_tag, 0, 65535)? as u16;
    let kernel_clock = match k.clock.as_deref() {
        None | Some("fabric") => false,
        Some("kernel") if kernel_mhz.is_some() => true,
        Some("kernel") => return Err(Error::Input(format!("`{}` = \"kernel\" needs `clocks.kernel_mhz`", key("clock")))),
        Some(other) => return Err(Error::Input(format!("`{}` = {other:?} is not allowed: \"fabric\" or \"kernel\"", key("clock")))),
    };
    if k.dst.len() != 4 {
        return Err(Error::Input(format!("`{}` has {} entries: give four, [x, y, z, port]", key("dst"), k.dst.len())));
    }
    let mut dst = [0; 4];
    for (j, axis) in ["x", "y", "z"].iter().enumerate() {
        dst[j] = ranged(&format!("{}[{j}] ({axis})", key("dst")), k.dst[j], 0, router.dims[j] as i64 - 1)?;
    }
    dst[3] = ranged(&format!("{}[3] (port)", key("dst")), k.dst[3], 0, router.local_ports as i64 - 1)?;
    let kp = KernelPort { port, source, origin, input_tag, output_tag, dst: pack_dst(dst[0], dst[1], dst[2], dst[3]), kernel_clock };
    kp.kernel().map_err(|e| Error::from(e).context(format!("`{}`", key("kernel"))))?;
    Ok(kp)
}

fn clock(key: &str, mhz: f64) -> Result<f64, Error> {
    if mhz.is_finite() && (1.0..=1000.0).contains(&mhz) {
        Ok(mhz)
    } else {
        Err(Error::Input(format!("`{key}` = {mhz} is out of range: allowed 1.0..=1000.0 (MHz)")))
    }
}

impl SystemConfig {
    /// Settings that are valid but change nothing in what is generated.
    pub fn warnings(&self) -> Vec<String> {
        let mut warnings = vec![];
        if let Some(mhz) = self.kernel_mhz.filter(|_| !self.has_kernel_clock()) {
            warnings.push(format!("`clocks.kernel_mhz` = {mhz} has no effect: no `[[port]]` or `[[kernel]]` has `clock = \"kernel\"`"));
        }
        warnings
    }

    /// Parses and checks a TOML system description; `kernels` are the kernel names a port may
    /// name. Every refusal names the key.
    pub fn parse(text: &str, kernels: &[String]) -> Result<SystemConfig, Error> {
        Self::parse_in(text, kernels, Path::new("."))
    }

    /// [`SystemConfig::parse`] of a file in folder `base` (a `[[kernel]]` file is relative to it).
    pub fn parse_in(text: &str, kernels: &[String], base: &Path) -> Result<SystemConfig, Error> {
        let file: File = toml::from_str(text).map_err(|e| Error::Input(e.to_string().trim_end().to_string()))?;
        let name_ok = !file.name.is_empty()
            && file.name.len() <= 64
            && file.name.chars().next().is_some_and(|c| c.is_ascii_lowercase())
            && file.name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
        if !name_ok {
            return Err(Error::Input(format!("`name` = {:?} must be 1..=64 characters of a-z, 0-9 and _, starting with a letter (it names Verilog modules and files)", file.name)));
        }
        let board =
            *BOARDS.iter().find(|b| b.name == file.board).ok_or_else(|| Error::Input(format!("`board` = {:?} is not a known board: allowed {}", file.board, BOARDS.map(|b| b.name).join(", "))))?;
        if file.torus.dims.len() != 3 {
            return Err(Error::Input(format!("`torus.dims` has {} entries: give three, [X, Y, Z]", file.torus.dims.len())));
        }
        let mut dims = [0; 3];
        for (i, axis) in ["X", "Y", "Z"].iter().enumerate() {
            dims[i] = ranged(&format!("torus.dims[{i}] ({axis})"), file.torus.dims[i], 1, 64)?;
        }
        let n = &file.node;
        let shipped_router = RouterConfig::default();
        let width = match n.width.unwrap_or(shipped_router.width as i64) {
            w @ (128 | 256 | 512) => w as usize,
            w => return Err(Error::Input(format!("`node.width` = {w} is not allowed: allowed 128, 256 or 512 (bits; the links bond width / 64 lanes)"))),
        };
        let shipped_link = weft_ip::link::spec::link_config(width / 64);
        let router = RouterConfig {
            local_ports: ranged("node.local_ports", n.local_ports.unwrap_or(shipped_router.local_ports as i64), 1, 16)?,
            dims,
            width,
            vc_buffer_flits: ranged("node.vc_buffer_flits", n.vc_buffer_flits.unwrap_or(shipped_router.vc_buffer_flits as i64), 1, 1 << 16)?,
            max_packet_bytes: ranged("node.max_packet_bytes", n.max_packet_bytes.unwrap_or(shipped_router.max_packet_bytes as i64), 1, 16383)?,
            dateline: true,
        };
        packet_fits(&router, n.vc_buffer_flits.is_some(), n.max_packet_bytes.is_some())?;
        // A packet travels in one link frame (a link restart never leaves half a packet).
        let flits = router.max_packet_flits();
        if flits > 256 {
            return Err(Error::Input(format!(
                "`node.max_packet_bytes` = {} is {flits} flits with its header; a packet travels in one link frame of at most 256 flits: allowed at most {} bytes at {} bits a flit",
                router.max_packet_bytes,
                255 * router.flit_bytes(),
                width
            )));
        }
        let io_channels = match n.links.as_deref().unwrap_or("serial") {
            "serial" => false,
            "io_channels" if board.name != "s10_520n" => {
                return Err(Error::Input(format!("`node.links` = \"io_channels\" on board {:?}: only the s10_520n's board support package has IO channels", board.name)))
            }
            "io_channels" if width == 128 => return Err(Error::Input("`node.links` = \"io_channels\" with `node.width` = 128: an IO channel is 256 bits, allowed widths 256 or 512".into())),
            "io_channels" => true,
            other => return Err(Error::Input(format!("`node.links` = {other:?}: allowed \"serial\" or \"io_channels\""))),
        };
        let link = LinkConfig {
            lanes: width / 64,
            max_frame_words: flits.max(shipped_link.max_frame_words),
            replay_words: ranged("node.replay_words", n.replay_words.unwrap_or(shipped_link.replay_words as i64), 1, 1 << 16)?,
            vc_buffer_words: ranged("node.link_vc_buffer_words", n.link_vc_buffer_words.unwrap_or(shipped_link.vc_buffer_words as i64), 1, 1 << 16)?,
            retransmit_timeout: ranged("node.retransmit_timeout", n.retransmit_timeout.unwrap_or(shipped_link.retransmit_timeout as i64), 1, 1 << 20)?,
            io_channels,
            rx_clock: shipped_link.rx_clock && !io_channels,
            ..shipped_link
        };
        let kernel_mhz_given = file.clocks.kernel_mhz;
        let wired = file.kernel.iter().enumerate().map(|(i, k)| wired_kernel(i, k, &router, kernel_mhz_given, base)).collect::<Result<Vec<_>, _>>()?;
        for (i, p) in file.port.iter().enumerate() {
            if let Some(k) = wired.iter().position(|k| k.port as i64 == p.index) {
                return Err(Error::Input(format!("`port[{i}]` describes IntraNode port {}, which `kernel[{k}]` is wired to: a wired kernel's port is inside the node", p.index)));
            }
        }
        let allreduce = match &file.allreduce {
            None => None,
            Some(a) if a.ports.len() != 2 => return Err(Error::Input(format!("`allreduce.ports` has {} entries: give two, [a, b]", a.ports.len()))),
            Some(a) => {
                let last = router.local_ports as i64 - 1;
                let port = |i: usize| ranged(&format!("allreduce.ports[{i}]"), a.ports[i], 0, last);
                let element = a
                    .element
                    .as_deref()
                    .map_or(Ok(ElementType::F32), |t| ElementType::parse(t).map_err(|_| Error::Input(format!("`allreduce.type` = \"{t}\": allowed \"f32\", \"f64\", \"f16\", \"bf16\", \"i32\""))))?;
                let mut stripes = vec![];
                for (k, pair) in a.stripes.iter().enumerate() {
                    if pair.len() != 2 {
                        return Err(Error::Input(format!("`allreduce.stripes[{k}]` has {} entries: give two, [a, b]", pair.len())));
                    }
                    let port = |i: usize| ranged(&format!("allreduce.stripes[{k}][{i}]"), pair[i], 0, last);
                    stripes.push([port(0)?, port(1)?]);
                }
                Some(Allreduce { ports: [port(0)?, port(1)?], element, stripes })
            }
        };
        if let Some(a) = &allreduce {
            for (k, [_, b]) in a.engines().into_iter().enumerate() {
                let field = if k == 0 { "allreduce.ports[1]".to_string() } else { format!("allreduce.stripes[{}][1]", k - 1) };
                if let Some(i) = file.port.iter().position(|p| p.index == b as i64) {
                    return Err(Error::Input(format!("`port[{i}]` describes IntraNode port {b}, which is an allreduce engine's port b (`{field}`): that port is inside the node")));
                }
            }
        }
        let node = NodeConfig { router, link, kernels: wired, allreduce };
        node.validate().map_err(|e| Error::from(e).context("[node]"))?;
        let fabric_mhz = clock("clocks.fabric_mhz", file.clocks.fabric_mhz)?;
        let kernel_mhz = file.clocks.kernel_mhz.map(|f| clock("clocks.kernel_mhz", f)).transpose()?;
        let channel_latency = ranged("sim.channel_latency", file.sim.channel_latency.unwrap_or(16), 1, 1024)?;

        let local_ports = node.router.local_ports;
        let mut ports: Vec<Port> = (0..local_ports).map(|index| Port { index, clock: PortClock::Fabric, kernel: None }).collect();
        let mut seen = vec![false; local_ports];
        for (i, p) in file.port.iter().enumerate() {
            let index = ranged(&format!("port[{i}].index"), p.index, 0, local_ports as i64 - 1)?;
            if std::mem::replace(&mut seen[index], true) {
                return Err(Error::Input(format!("`port[{i}].index` = {index} is described twice")));
            }
            let clock = match p.clock.as_deref() {
                None | Some("fabric") => PortClock::Fabric,
                Some("kernel") if kernel_mhz.is_some() => PortClock::Kernel,
                Some("kernel") => return Err(Error::Input(format!("`port[{i}].clock` = \"kernel\" needs `clocks.kernel_mhz`"))),
                Some(other) => return Err(Error::Input(format!("`port[{i}].clock` = {other:?} is not allowed: \"fabric\" or \"kernel\""))),
            };
            if let Some(k) = &p.kernel {
                if !kernels.contains(k) {
                    return Err(Error::Input(format!("`port[{i}].kernel` = {k:?} is not a shipped kernel: allowed {}", kernels.join(", "))));
                }
            }
            ports[index] = Port { index, clock, kernel: p.kernel.clone() };
        }
        let described: Vec<usize> = file.port.iter().map(|p| p.index as usize).collect();
        let application = file.application.map(|a| a.check(base, &node, &described)).transpose()?;
        Ok(SystemConfig { name: file.name, board, node, fabric_mhz, kernel_mhz, channel_latency, ports, application })
    }

    /// Whether anything runs on the kernel clock: a port (through the shell) or a wired kernel
    /// (inside the node).
    pub fn has_kernel_clock(&self) -> bool {
        self.has_kernel_ports() || self.node.kernels.iter().any(|k| k.kernel_clock)
    }

    /// Whether any IntraNode port runs on the kernel clock (the design then has a shell).
    pub fn has_kernel_ports(&self) -> bool {
        self.ports.iter().any(|p| p.clock == PortClock::Kernel)
    }

    /// The module a board flow builds: the shell when a port runs on the kernel clock, else the
    /// node.
    pub fn top(&self) -> String {
        if self.has_kernel_ports() {
            format!("{}_shell", self.name)
        } else {
            format!("{}_node", self.name)
        }
    }
}
