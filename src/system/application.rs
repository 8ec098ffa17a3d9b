//! `[application]`: a mesh application the system runs over its nodes with no host after the
//! load. `weft generate` splits it, compiles every node's share and writes, per node `q`, into
//! `<generated>/system/<name>_<app>/`:
//!
//! - `<name>_<app><q>.v`: the node's application module (compiled program, halo engine,
//!   reduction bridge; `weft_ip::app::partition::app_node`);
//! - `<name>_<app><q>_top.v`: `<name>_node` and that module joined — halo packets on IntraNode
//!   port 2, reductions on the collective engine's port `a` —, the application's other ports
//!   under `app_`;
//! - `<name>_<app><q>_load.json`: what the loader writes before `start`: every memory write
//!   (`port` prefix, address, data as hex) and the collective engine's registers.
//!
//! ```toml
//! [application]
//! file = "airfoil.app"      # relative to this file
//! mesh = "naca0012:16,20"   # naca0012:I,J, graph:N,CHORDS,SEED or an OP2 new_grid.dat
//! split = "metis"           # metis (default) or coords:DAT
//! primary = "cells"         # the set split (default: as `weft app --partition`)
//! ```

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use num_bigint::BigUint;
use serde::Serialize;
use weft_hdl::export::{export_netlist, ModuleSpec};
use weft_hdl::float::FloatFormat;
use weft_hdl::netlist::{verilog, Design, Netlist};
use weft_hdl::pipeline::Stages;
use weft_ip::app::host::{Host, LoopPorts};
use weft_ip::app::partition::app_node::app_node;
use weft_ip::app::partition::bridge::BridgeSpec;
use weft_ip::app::partition::engine::{HaloTables, HALO_PORT};
use weft_ip::app::partition::engines::load_tables;
use weft_ip::app::partition::halo::Halo;
use weft_ip::app::partition::nodes::compile_node;
use weft_ip::app::partition::partition;
use weft_ip::app::{Application, Element, MeshData};
use weft_ip::system::allreduce::{Collective, ElementType};

use super::app_section::AppSpec;
use super::config::SystemConfig;
use super::tops::{elsewhere, header};
use crate::Error;

/// What the loader writes into one node before `start`.
#[derive(Serialize, Default)]
struct LoadImage {
    /// The application module.
    module: String,
    /// `(port prefix, address, data)`, in order: the program's memories and globals, then the
    /// halo engine's tables (write `<prefix>_wr_en`, `_wr_addr`, `_wr_data` of the application
    /// module, one per cycle).
    writes: Vec<(String, u64, String)>,
    /// `(register, byte address, value)` of the node's register window: the collective engine's
    /// program and operator.
    registers: Vec<(String, u32, u32)>,
}

/// Records a loader's writes instead of simulating them.
#[derive(Default)]
struct Recorder {
    inputs: BTreeMap<String, BigUint>,
    writes: Vec<(String, u64, String)>,
}

impl LoopPorts for Recorder {
    fn set(&mut self, port: &str, value: &BigUint) {
        self.inputs.insert(port.to_string(), value.clone());
    }
    fn get(&mut self, _: &str) -> BigUint {
        BigUint::default()
    }
    fn edge(&mut self) {
        let one = BigUint::from(1u8);
        for (port, v) in &self.inputs {
            if let (Some(prefix), true) = (port.strip_suffix("_wr_en"), *v == one) {
                let field = |f: &str| self.inputs.get(&format!("{prefix}_wr_{f}")).cloned().unwrap_or_default();
                let addr = field("addr").iter_u64_digits().next().unwrap_or(0);
                self.writes.push((prefix.to_string(), addr, format!("{:x}", field("data"))));
            }
        }
    }
}

/// Writes every node's application files for `config` (which has `[application]`); `node` is
/// the node's design. Returns the files written.
pub fn generate(config: &SystemConfig, spec: &AppSpec, node: &Netlist, dir: &Path) -> Result<Vec<PathBuf>, Error> {
    let source = std::fs::read_to_string(&spec.file).map_err(|e| Error::from(e).context(spec.file.display()))?;
    let declared = weft_ip::app::text::parse(&source).map_err(|error| weft_ip::Error::Source { origin: spec.file.display().to_string(), error })?.precision;
    let mesh = crate::run::app::mesh(&spec.mesh).map_err(|e| e.context("`application.mesh`"))?;
    match declared.name() {
        "f32" => generate_in::<f32>(config, spec, &source, &mesh, FloatFormat::BINARY32, ElementType::F32, node, dir),
        _ => generate_in::<f64>(config, spec, &source, &mesh, FloatFormat::BINARY64, ElementType::F64, node, dir),
    }
}

#[allow(clippy::too_many_arguments)]
fn generate_in<T: Element>(config: &SystemConfig, spec: &AppSpec, source: &str, mesh: &MeshData, format: FloatFormat, ty: ElementType, node: &Netlist, dir: &Path) -> Result<Vec<PathBuf>, Error> {
    let allreduce = config.node.allreduce.as_ref().expect("checked with the section");
    if allreduce.element != ty {
        return Err(Error::Input(format!("`allreduce.type` = \"{}\": the application computes in {}; give `type = \"{}\"`", allreduce.element.name(), ty.name(), ty.name())));
    }
    let origin = spec.file.display().to_string();
    let load = |m: &MeshData| Application::<T>::load_as(&origin, source, m);
    let app = load(mesh)?;
    let (primary, method) = crate::run::partition::split_of(&app, spec.primary.as_deref(), &spec.split).map_err(|e| e.context("`[application]`"))?;
    let rc = &config.node.router;
    let loops = app.loop_args();
    let p = partition(&app.app, &loops, primary, rc.nodes(), method)?;
    let h = Halo::build(&app.app, &loops, &p);
    drop(loops);
    let stem = spec.file.file_stem().map_or("app".into(), |s| s.to_string_lossy().to_string());
    let base = format!("{}_{stem}", config.name);
    let dir = dir.join(&base);
    let stages = Stages::balanced(format);
    let programs = Collective::Allreduce.programs(rc, allreduce.ports)?;
    let registers = weft_ip::system::node::register_map(&config.node);
    let address = |name: &str| registers.iter().find(|r| r.name == name).map(|r| r.addr).ok_or_else(|| Error::Input(format!("the node has no register `{name}`")));
    let bridge = BridgeSpec::build(&app, rc.width, rc.max_packet_bytes)?;
    let mut written = vec![];
    for q in 0..rc.nodes() {
        let (share, node_app, compiled) = compile_node(&app, mesh, &p, &h, &stages, &load, q)?;
        let tables = HaloTables::build(&app, &p, &h, q, &share, &compiled, rc)?;
        let module = format!("{base}{q}");
        let net = app_node(&module, &compiled.net, &tables, &bridge)?;
        let summary = format!("node {q}'s share of {stem} on {}: compiled program, halo engine, reduction bridge", config.name);
        let module_spec =
            ModuleSpec { family: "system", name: module.clone(), summary, parameters: vec![("mesh".into(), spec.mesh.clone()), ("split".into(), spec.split.clone())], hidden_ports: vec![] };
        let path = dir.join(format!("{module}.v"));
        super::write(&path, &export_netlist(&module_spec, &net)?)?;
        written.push(path);
        let top = format!("{module}_top");
        let mut text = header(&format!("{top} — {}_node with {module} on IntraNode ports {HALO_PORT} (halos) and {} (reductions)", config.name, allreduce.ports[0]));
        text.push_str(&verilog::module(&joined(config, node, &net, &module)?, &top));
        let path = dir.join(format!("{top}.v"));
        super::write(&path, &text)?;
        written.push(path);

        let mut recorder = Recorder::default();
        Host { app: &node_app, plan: &compiled.plan, name: "" }.load_program(&mut recorder, &compiled.loops);
        load_tables(&mut recorder, &tables);
        let program = &programs[q];
        let mut image = LoadImage { module: module.clone(), writes: recorder.writes, registers: vec![] };
        for (name, value) in [
            ("allreduce_flags", program.flags),
            ("allreduce_dst_a", program.dst_a),
            ("allreduce_dst_b", program.dst_b),
            ("allreduce_op", bridge.op.code()),
            ("allreduce_small_bytes", program.small_bytes),
        ] {
            image.registers.push((name.to_string(), address(name)?, value));
        }
        let json = serde_json::to_string_pretty(&image).map_err(|e| Error::Io(e.to_string()))?;
        let path = dir.join(format!("{module}_load.json"));
        super::write(&path, &json)?;
        written.push(path);
    }
    Ok(written)
}

/// `<name>_node` and the application module `app` (both defined in their own files) joined: the
/// module's halo streams on IntraNode port [`HALO_PORT`], its reduction streams on the
/// collective engine's port `a`; every other node port as the node names it, every other
/// application port under `app_`.
fn joined(config: &SystemConfig, node: &Netlist, app: &Netlist, module: &str) -> Result<Netlist, Error> {
    let a = config.node.allreduce.as_ref().map_or(0, |x| x.ports[0]);
    let wired = [(HALO_PORT, "halo"), (a, "reduce")];
    let node_ports = verilog::ports(node);
    let app_ports = verilog::ports(app);
    let d = Design::new();
    d.section(&format!("{}_node: router, links, register window, collective engine", config.name));
    let n = d.instance(&elsewhere(node), &format!("{}_node", config.name), "node");
    d.section(&format!("{module}: the application"));
    let m = d.instance(&elsewhere(app), module, "app");
    let stream_of = |name: &str| {
        wired.iter().find_map(|(p, s)| [format!("s_axis_p{p}_"), format!("m_axis_p{p}_")].iter().find_map(|pre| name.strip_prefix(pre.as_str()).map(|sig| (*s, pre.starts_with('s'), sig.to_string()))))
    };
    for port in &node_ports {
        match stream_of(&port.name) {
            // Into the node: the module's output stream (its ready goes back to the module).
            Some((s, true, sig)) if sig == "tready" => m.input(&format!("{s}_m_axis_tready")).define(n.output(&port.name)),
            Some((s, true, sig)) => {
                let from = format!("{s}_m_axis_{sig}");
                // A side-band signal the module does not drive: all ones for `tkeep`, else zero.
                let value = if m.has_output(&from) { m.output(&from).resize(port.width) } else { d.lit(if sig == "tkeep" { (1u128 << port.width) - 1 } else { 0 }, port.width) };
                n.input(&port.name).define(value);
            }
            // Out of the node: into the module's input stream.
            Some((s, false, sig)) if sig == "tready" => n.input(&port.name).define(m.output(&format!("{s}_s_axis_tready"))),
            Some((s, false, sig)) => {
                let to = format!("{s}_s_axis_{sig}");
                if let Some(p) = app_ports.iter().find(|p| p.name == to && !p.output) {
                    m.input(&to).define(n.output(&port.name).resize(p.width));
                }
            }
            None if port.output => d.output(&port.name, n.output(&port.name)),
            None => n.input(&port.name).define(d.input(&port.name, port.width)),
        }
    }
    for port in app_ports.iter().filter(|p| !p.name.starts_with("halo_s_axis") && !p.name.starts_with("halo_m_axis") && !p.name.starts_with("reduce_s_axis") && !p.name.starts_with("reduce_m_axis")) {
        if port.output {
            d.output(&format!("app_{}", port.name), m.output(&port.name));
        } else {
            m.input(&port.name).define(d.input(&format!("app_{}", port.name), port.width));
        }
    }
    Ok(d.finish())
}
