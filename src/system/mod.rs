//! The system generator: a TOML description of a multi-FPGA torus in, everything a user takes to
//! the tools out — the node's Verilog, the whole-torus simulation top, the board shell when some
//! IntraNode ports run on a kernel clock, constraints for the board's vendor tool, and a FuseSoC
//! core file — and the check of those outputs.

pub mod app_section;
pub mod application;
pub mod config;
pub mod constraints;
pub mod fusesoc;
pub mod gt_kernel;
pub mod gt_top;
pub mod ipxact;
pub mod platform_designer;
pub use weft_tools::ports;
pub mod tops;
pub mod transceivers;
pub mod vitis;

use crate::Error;
use std::path::{Path, PathBuf};

use weft_hdl::export::export_netlist;
use weft_ip::catalog::Shipped;
use weft_ip::regmap;
use weft_ip::system::node;
use weft_tools::{icarus_compile_files, verilator_lint_files};

pub use config::SystemConfig;

/// The systems weft ships, as the example files that describe them.
pub const SHIPPED: [(&str, &str); 2] = [("examples/torus_4x2x1.toml", include_str!("../../examples/torus_4x2x1.toml")), ("examples/torus_2x2x2.toml", include_str!("../../examples/torus_2x2x2.toml"))];

/// The shipped kernels a port may name.
fn kernels() -> Vec<Shipped> {
    weft_ip::kernels::shipped()
}

fn kernel_names() -> Vec<String> {
    kernels().iter().map(|k| k.spec.name.clone()).collect()
}

/// Parses a system description (TOML text); errors name the key.
pub fn parse(text: &str) -> Result<SystemConfig, Error> {
    SystemConfig::parse(text, &kernel_names())
}

/// Reads and parses a system description file; settings that have no effect are reported on
/// standard error as warnings.
pub fn load(path: &Path) -> Result<SystemConfig, Error> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::from(e).context(path.display()))?;
    let base = path.parent().unwrap_or(Path::new("."));
    let config = SystemConfig::parse_in(&text, &kernel_names(), base).map_err(|e| e.context(path.display()))?;
    for warning in config.warnings() {
        eprintln!("warning: {}: {warning}", path.display());
    }
    Ok(config)
}

/// The shipped systems.
pub fn shipped() -> Vec<SystemConfig> {
    SHIPPED.iter().map(|(file, text)| parse(text).unwrap_or_else(|e| panic!("{file}: {e}"))).collect()
}

/// The shipped system called `name`.
pub fn shipped_named(name: &str) -> Result<SystemConfig, Error> {
    shipped().into_iter().find(|s| s.name == name).ok_or_else(|| Error::Input(format!("no shipped system {name}")))
}

/// Where a system's outputs go, relative to the generated and constraints folders.
pub struct Files {
    /// `<generated>/system/<name>_node.v`: the node.
    pub node: PathBuf,
    /// `<name>_sim.v`: the whole torus for simulation.
    pub sim: PathBuf,
    /// `<name>_shell.v`: the board shell, when a port runs on the kernel clock.
    pub shell: Option<PathBuf>,
    /// `<constraints>/<board>/<name>.xdc` (Xilinx) or `.sdc` (Intel).
    pub constraint: PathBuf,
    /// `<name>.core`: the FuseSoC core file.
    pub core: PathBuf,
    /// `<name>.rdl`: the register window as SystemRDL.
    pub rdl: PathBuf,
    /// `<name>_regs.h`: the register window as a C header.
    pub header: PathBuf,
    /// IP-XACT description of the node for Vivado's IP catalog.
    pub component: PathBuf,
    /// The Vitis RTL kernel (Xilinx boards): wrapper, kernel.xml, package_xo script, v++ config.
    pub vitis: Option<Vitis>,
    /// The Platform Designer component of the node (Intel boards).
    pub platform_designer: Option<PathBuf>,
    /// `<generated>/kernels/<kernel>.v` of each kernel the ports serve, sorted, once each.
    pub kernels: Vec<PathBuf>,
    /// On the U200 and U280: the node on its transceivers.
    pub transceivers: Option<Transceivers>,
    /// On the U280: the node with its transceivers as a Vitis kernel.
    pub gt_kernel: Option<Vitis>,
}

/// The files of the node on the board's transceivers.
pub struct Transceivers {
    /// `<name>_node_gt.v`: the node with its transceiver wrappers.
    pub node_gt: PathBuf,
    /// `<name>_gt.tcl`: the GT wizard IPs.
    pub tcl: PathBuf,
    /// `<name>_gt_top.v`: the node with the IPs, reference clocks and user clocks inside.
    pub top: PathBuf,
    /// `<name>_gt_top.xdc`: the board's pins and reference clocks for it.
    pub xdc: PathBuf,
}

impl Transceivers {
    /// The four files.
    pub fn files(&self) -> [&PathBuf; 4] {
        [&self.node_gt, &self.tcl, &self.top, &self.xdc]
    }
}

/// The files of the node as a Vitis RTL kernel (`<name>_*`), or of the node with its
/// transceivers as one (`<name>_gt_*`).
pub struct Vitis {
    /// `<name>_krnl.v`: the wrapper with Vitis's clock, reset and control interface.
    pub top: PathBuf,
    /// `<name>_kernel.xml`: the kernel description `package_xo` reads.
    pub kernel_xml: PathBuf,
    /// `<name>_package_xo.tcl`: the Tcl that packages the `.xo`.
    pub package: PathBuf,
    /// `<name>_vpp.cfg`: the `v++` linker configuration.
    pub linker: PathBuf,
}

impl Files {
    /// The paths of `config`'s outputs under the `generated` and `constraints` folders.
    pub fn of(config: &SystemConfig, generated: &Path, constraints: &Path) -> Files {
        let dir = generated.join("system");
        let name = &config.name;
        let ext = if config.board.vendor == config::Vendor::Xilinx { "xdc" } else { "sdc" };
        let mut kernels: Vec<PathBuf> = config.ports.iter().filter_map(|p| p.kernel.as_ref()).map(|k| generated.join("kernels").join(format!("{k}.v"))).collect();
        kernels.sort();
        kernels.dedup();
        Files {
            node: dir.join(format!("{name}_node.v")),
            sim: dir.join(format!("{name}_sim.v")),
            shell: config.has_kernel_ports().then(|| dir.join(format!("{name}_shell.v"))),
            constraint: constraints.join(config.board.name).join(format!("{name}.{ext}")),
            core: dir.join(format!("{name}.core")),
            rdl: dir.join(format!("{name}.rdl")),
            header: dir.join(format!("{name}_regs.h")),
            component: dir.join(format!("{name}_ip")).join("component.xml"),
            vitis: (config.board.vendor == config::Vendor::Xilinx).then(|| Vitis {
                top: dir.join(format!("{name}_krnl.v")),
                kernel_xml: dir.join(format!("{name}_kernel.xml")),
                package: dir.join(format!("{name}_package_xo.tcl")),
                linker: dir.join(format!("{name}_vpp.cfg")),
            }),
            platform_designer: (config.board.vendor == config::Vendor::Intel).then(|| dir.join(format!("{name}_node_hw.tcl"))),
            kernels,
            transceivers: transceivers::applies(config).then(|| Transceivers {
                node_gt: dir.join(format!("{name}_node_gt.v")),
                tcl: dir.join(format!("{name}_gt.tcl")),
                top: dir.join(format!("{name}_gt_top.v")),
                xdc: dir.join(format!("{name}_gt_top.xdc")),
            }),
            gt_kernel: (transceivers::applies(config) && config.board.name == "u280").then(|| Vitis {
                top: dir.join(format!("{name}_gt_krnl.v")),
                kernel_xml: dir.join(format!("{name}_gt_kernel.xml")),
                package: dir.join(format!("{name}_gt_package_xo.tcl")),
                linker: dir.join(format!("{name}_gt_vpp.cfg")),
            }),
        }
    }

    /// The board design's Verilog: node, shell, kernels.
    fn rtl(&self) -> Vec<&Path> {
        let mut v = vec![self.node.as_path()];
        v.extend(self.shell.as_deref());
        v.extend(self.kernels.iter().map(PathBuf::as_path));
        v
    }
}

/// A path from `from` (a folder) to `to`, for the core file (both relative to one root).
fn relative(from: &Path, to: &Path) -> String {
    let from: Vec<_> = from.components().collect();
    let to_parts: Vec<_> = to.components().collect();
    let common = from.iter().zip(&to_parts).take_while(|(a, b)| a == b).count();
    let mut out = PathBuf::new();
    for _ in common..from.len() {
        out.push("..");
    }
    for c in &to_parts[common..] {
        out.push(c);
    }
    out.to_string_lossy().replace('\\', "/")
}

/// Writes `text` to `path`, making its folder.
/// A temporary folder of its own for one check (`<prefix>-<process>-<n>`): checks run in
/// parallel in one process.
pub(super) fn check_dir(prefix: &str) -> PathBuf {
    static CHECKS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = CHECKS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    std::env::temp_dir().join(format!("{prefix}-{}-{n}", std::process::id()))
}

pub(super) fn write(path: &Path, text: &str) -> Result<(), Error> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| Error::from(e).context(dir.display()))?;
    }
    std::fs::write(path, text).map_err(|e| Error::from(e).context(path.display()))
}

/// A node's ports as its design declares them, in the order of its Verilog header: the wrappers,
/// the simulation tops and the vendor descriptions are generated from these, not from the
/// node's Verilog text.
pub fn node_ports(net: &weft_hdl::netlist::Netlist) -> Vec<weft_tools::ports::PortDecl> {
    weft_hdl::netlist::verilog::header_ports(net).into_iter().map(|p| weft_tools::ports::PortDecl { input: !p.output, name: p.name, width: p.width }).collect()
}

/// Writes every output of `config`; returns the files written.
pub fn generate(config: &SystemConfig, generated: &Path, constraints_dir: &Path) -> Result<Vec<PathBuf>, Error> {
    let files = Files::of(config, generated, constraints_dir);
    let name = &config.name;
    let spec = weft_ip::system::spec::node_spec_for(&format!("{name}_node"), &config.node);
    let node_net = node(&config.node)?;
    let node_text = export_netlist(&spec, &node_net)?;
    write(&files.node, &node_text)?;
    let node_ports = node_ports(&node_net);

    write(&files.sim, &tops::sim_file(config, &node_net)?)?;
    if let Some(shell_path) = &files.shell {
        write(shell_path, &tops::shell_file(config, &node_net)?)?;
    }
    for path in &files.kernels {
        let stem = path.file_stem().unwrap_or_default().to_string_lossy().to_string();
        let kernel = kernels().into_iter().find(|k| k.spec.name == stem).ok_or_else(|| Error::Input(format!("no shipped kernel {stem}")))?;
        write(path, &(kernel.verilog)(&kernel.spec)?)?;
    }
    let (_, constraint_text) = constraints::constraints(config);
    write(&files.constraint, &constraint_text)?;

    let core_dir = files.core.parent().unwrap_or(Path::new("."));
    let rtl: Vec<String> = files.rtl().iter().map(|f| relative(core_dir, f)).collect();
    let sim = vec![relative(core_dir, &files.sim)];
    let core = fusesoc::core_file(config, &rtl, &sim, &relative(core_dir, &files.constraint));
    write(&files.core, &core)?;

    let map = weft_ip::system::node::register_map(&config.node);
    let summary = format!("Register window of a {} node", config.node.router.dims.map(|d| d.to_string()).join("x"));
    write(&files.rdl, &regmap::systemrdl(name, &summary, &map))?;
    write(&files.header, &regmap::c_header(name, &map))?;
    let xml = ipxact::component(&format!("{name}_node"), &format!("../{name}_node.v"), &format!("weft node of the {} system: router, link endpoints, register window", name), &node_ports, &map);
    write(&files.component, &xml)?;
    if let Some(v) = &files.vitis {
        write(&v.top, &vitis::kernel_top(config, &node_net)?)?;
        write(&v.kernel_xml, &vitis::kernel_xml(config, &node_ports, &map))?;
        write(&v.package, &vitis::package_tcl(config, &node_ports))?;
        write(&v.linker, &vitis::connectivity(config, &node_ports))?;
    }
    if let Some(hw) = &files.platform_designer {
        write(hw, &platform_designer::component(config, &node_ports))?;
    }

    let mut written = vec![files.node.clone(), files.sim.clone()];
    written.extend(files.shell.clone());
    written.extend(files.kernels.clone());
    written.push(files.constraint.clone());
    written.push(files.core.clone());
    written.extend([files.rdl.clone(), files.header.clone(), files.component.clone()]);
    if let Some(v) = &files.vitis {
        written.extend([v.top.clone(), v.kernel_xml.clone(), v.package.clone(), v.linker.clone()]);
    }
    written.extend(files.platform_designer.clone());
    if let Some(gt) = &files.transceivers {
        let summary = format!("{name}_node with every link's lanes on transceiver gearboxes (the GT wizard IPs of {name}_gt.tcl)");
        let spec = weft_hdl::export::ModuleSpec { family: "system", name: format!("{name}_node_gt"), summary, parameters: vec![], hidden_ports: vec![] };
        let node_gt = transceivers::node_gt(config, &node_net)?;
        write(&gt.node_gt, &export_netlist(&spec, &node_gt)?)?;
        write(&gt.tcl, &transceivers::gt_tcl(config, transceivers::RATES[0])?)?;
        let other_clocks: Vec<(String, String)> = node_gt.domains.iter().filter(|d| d.name != "clk" && !d.name.ends_with("_rx_clk")).map(|d| (d.name.clone(), d.reset_port())).collect();
        write(&gt.top, &gt_top::gt_top(config, &weft_hdl::netlist::verilog::ports(&node_gt), &other_clocks, transceivers::RATES[0])?)?;
        write(&gt.xdc, &gt_top::gt_xdc(config, transceivers::RATES[0])?)?;
        written.extend(gt.files().map(PathBuf::clone));
        if let Some(k) = &files.gt_kernel {
            let top_text = std::fs::read_to_string(&gt.top).map_err(|e| Error::from(e).context(gt.top.display()))?;
            let top_ports = ports::ports(&top_text, &format!("{name}_gt_top"))?;
            write(&k.top, &gt_kernel::kernel_file(config, &node_ports, &top_ports)?)?;
            write(&k.kernel_xml, &gt_kernel::kernel_xml(config, &node_ports, &map)?)?;
            write(&k.package, &gt_kernel::package_tcl(config, &node_ports)?)?;
            write(&k.linker, &gt_kernel::connectivity(config, &node_ports)?)?;
            written.extend([k.top.clone(), k.kernel_xml.clone(), k.package.clone(), k.linker.clone()]);
        }
    }
    if let Some(app) = &config.application {
        written.extend(application::generate(config, app, &node_net, &generated.join("system"))?);
    }
    Ok(written)
}

/// [`check`], reusing the summary of an earlier pass when nothing it depends on changed: the
/// contents of every file it reads, the versions of Verilator, Icarus, FuseSoC and tclsh, and this
/// executable (the constraint check's stubs are weft's own code). Recorded in
/// `<reports>/.cache/system_<name>.json` (not committed); `force` checks again. Says whether the
/// summary was reused.
pub fn check_cached(config: &SystemConfig, generated: &Path, constraints_dir: &Path, reports: Option<&Path>, force: bool) -> Result<(String, bool), Error> {
    let files = Files::of(config, generated, constraints_dir);
    let mut parts: Vec<String> = vec!["system".into(), config.name.clone()];
    let tools = crate::cache::fingerprints();
    parts.extend([&tools.verilator, &tools.iverilog, &tools.fusesoc, &tools.tclsh, &tools.executable].map(String::clone));
    let vitis: Vec<&PathBuf> = files.vitis.iter().chain(files.gt_kernel.iter()).flat_map(|v| [&v.top, &v.package, &v.linker]).chain(files.transceivers.iter().flat_map(Transceivers::files)).collect();
    for f in [&files.node, &files.sim, &files.constraint, &files.core].into_iter().chain(files.shell.iter()).chain(files.kernels.iter()).chain(vitis).chain(files.platform_designer.iter()) {
        // A missing file gives no key: `check` says what is missing.
        let Ok(bytes) = std::fs::read(f) else { return check(config, generated, constraints_dir).map(|s| (s, false)) };
        parts.push(format!("{} {}", f.display(), crate::cache::stage_key(&[&String::from_utf8_lossy(&bytes)])));
    }
    let key = crate::cache::stage_key(&parts.iter().map(String::as_str).collect::<Vec<_>>());
    let record = reports.map(|r| r.join(".cache").join(format!("system_{}.json", config.name)));
    let recorded = record
        .as_ref()
        .filter(|_| !force)
        .and_then(|p| std::fs::read_to_string(p).ok())
        .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
        .filter(|v| v["key"].as_str() == Some(key.as_str()))
        .and_then(|v| v["summary"].as_str().map(String::from));
    if let Some(summary) = recorded {
        return Ok((summary, true));
    }
    let summary = check(config, generated, constraints_dir)?;
    if let Some(reports) = reports {
        let dir = crate::cache::cache_dir(reports).map_err(|e| Error::from(e).context(reports.display()))?;
        let path = dir.join(format!("system_{}.json", config.name));
        std::fs::write(&path, serde_json::json!({ "key": key, "summary": summary }).to_string() + "\n").map_err(|e| Error::from(e).context(path.display()))?;
    }
    Ok((summary, false))
}

/// Checks a generated system: the simulation top and the board top (shell or node) pass
/// Verilator lint (-Wall) and compile in Icarus, and every port and cell the constraint file
/// names exists in the board top. Returns a one-line summary.
pub fn check(config: &SystemConfig, generated: &Path, constraints_dir: &Path) -> Result<String, Error> {
    let files = Files::of(config, generated, constraints_dir);
    for f in [&files.node, &files.sim, &files.constraint, &files.core].into_iter().chain(files.shell.iter()) {
        if !f.exists() {
            return Err(Error::Check(format!("{} does not exist; run `weft generate` (or `weft generate --config`) first", f.display())));
        }
    }
    let sim_top = format!("{}_sim", config.name);
    let sim_files = [files.node.as_path(), files.sim.as_path()];
    // Over IO channels there is no asynchronous top (see `tops::sim_file`).
    let sims = if config.node.link.io_channels { vec![sim_top.clone()] } else { vec![sim_top.clone(), format!("{sim_top}_async")] };
    for sim in &sims {
        verilator_lint_files(&sim_files, sim).map_err(|e| Error::from(e).context(format!("{sim}: verilator lint failed")))?;
        icarus_compile_files(&sim_files, sim).map_err(|e| Error::from(e).context(format!("{sim}: icarus compile failed")))?;
    }
    let top = config.top();
    let mut texts = vec![];
    if let Some(shell) = &files.shell {
        let rtl = [files.node.as_path(), shell.as_path()];
        verilator_lint_files(&rtl, &top).map_err(|e| Error::from(e).context(format!("{top}: verilator lint failed")))?;
        icarus_compile_files(&rtl, &top).map_err(|e| Error::from(e).context(format!("{top}: icarus compile failed")))?;
        texts.push(std::fs::read_to_string(shell)?);
    }
    texts.push(std::fs::read_to_string(&files.node)?);
    let top_file = &texts[0];
    let port_names: Vec<String> = ports::ports(top_file, &top)?.into_iter().map(|p| p.name).collect();
    let text_refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let paths = ports::instance_paths(&text_refs, &top);
    constraints::check_constraints(&files.constraint, &port_names, &paths)?;
    fusesoc_lint(config, &files)?;
    let mut vitis_note = String::new();
    if let Some(v) = &files.vitis {
        let krnl = format!("{}_krnl", config.name);
        verilator_lint_files(&[files.node.as_path(), v.top.as_path()], &krnl).map_err(|e| Error::from(e).context(format!("{krnl}: verilator lint failed")))?;
        let text = std::fs::read_to_string(&v.top).map_err(|e| Error::from(e).context(v.top.display()))?;
        let buses: Vec<String> = ports::ports(&text, &krnl)?.into_iter().filter_map(|p| p.name.strip_suffix("_tdata").map(String::from)).chain(["s_axi_control".to_string()]).collect();
        vitis::check_package(&v.package, &krnl, &buses)?;
        vitis_note = format!("; {krnl}: verilator lint, {} runs against stub Vivado commands", v.package.display());
    }
    if let Some(gt) = &files.transceivers {
        let name = format!("{}_node_gt", config.name);
        verilator_lint_files(&[files.node.as_path(), gt.node_gt.as_path()], &name).map_err(|e| Error::from(e).context(format!("{name}: verilator lint failed")))?;
        transceivers::check_gt_tcl(&gt.tcl, config, transceivers::RATES[0])?;
        let top = format!("{}_gt_top", config.name);
        gt_top::check(config, &files.node, gt)?;
        vitis_note.push_str(&format!(
            "; {name}, {top}: verilator lint (the IPs and primitives as stubs), {} runs against stub Vivado commands, {} names the top's ports",
            gt.tcl.display(),
            gt.xdc.display()
        ));
        if let Some(k) = &files.gt_kernel {
            let krnl = format!("{}_gt_krnl", config.name);
            gt_top::lint_with_stubs(config, &[files.node.as_path(), gt.node_gt.as_path(), gt.top.as_path(), k.top.as_path()], &krnl)?;
            let text = std::fs::read_to_string(&k.top).map_err(|e| Error::from(e).context(k.top.display()))?;
            let kernel_ports: Vec<String> = ports::ports(&text, &krnl)?.into_iter().map(|p| p.name).collect();
            let buses: Vec<String> = kernel_ports.iter().filter_map(|p| p.strip_suffix("_tdata").map(String::from)).chain(["s_axi_control".to_string()]).collect();
            gt_kernel::check(config, &k.package, &k.linker, &kernel_ports, &buses)?;
            vitis_note.push_str(&format!("; {krnl}: verilator lint, {} runs against stub Vivado commands, {} connects declared interfaces", k.package.display(), k.linker.display()));
        }
    }
    if let Some(hw) = &files.platform_designer {
        let text = std::fs::read_to_string(&files.node).map_err(|e| Error::from(e).context(files.node.display()))?;
        let node_ports = ports::ports(&text, &format!("{}_node", config.name))?;
        platform_designer::check_component(hw, &files.node, &node_ports)?;
        vitis_note = format!("; {}: runs against stub Platform Designer commands", hw.display());
    }
    Ok(format!(
        "{} and {top}: verilator lint, icarus compile; {}: every port and cell exists; {}: FuseSoC lint target passes{vitis_note}",
        sims.join(", "),
        files.constraint.display(),
        files.core.display()
    ))
}

/// Runs the core file's `lint` target through FuseSoC (which checks the file and its file sets,
/// then runs Verilator through edalize).
fn fusesoc_lint(config: &SystemConfig, files: &Files) -> Result<(), Error> {
    let cores = std::fs::canonicalize(files.core.parent().unwrap_or(Path::new(".")))?;
    let work = std::env::temp_dir().join(format!("weft-fusesoc-{}-{}", std::process::id(), config.name));
    std::fs::create_dir_all(&work)?;
    let name = format!("weft:system:{}", config.name);
    let cores = cores.to_string_lossy();
    let out = weft_tools::run("fusesoc", "python3 -m pip install fusesoc (scripts/setup.sh does)", "fusesoc", &["--cores-root", &cores, "run", "--target", "lint", &name], &work);
    let _ = std::fs::remove_dir_all(&work);
    out.map(|_| ()).map_err(|e| Error::from(e).context(format!("{}: FuseSoC lint target failed", files.core.display())))
}
