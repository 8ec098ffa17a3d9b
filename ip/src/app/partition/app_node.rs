//! One node's share of a mesh application as one module, the block that sits beside the
//! generated node: the compiled program, its halo engine ([`super::engine`]) and its reduction
//! bridge ([`super::bridge`]). After the load nothing outside drives it but `start`: at a sync
//! step the bridge does the step's reductions first, then the engine refreshes the step's halos,
//! and the program goes on when both are done.
//!
//! Ports: every port of the program under its own name (the loader writes dats and globals and
//! reads results through them; a dat's or global's write port from outside wins over the
//! engine's and the bridge's, which write only at sync steps, when the loader is idle), the
//! engine's table ports and counters, and two packet streams: `halo_s_axis_*` / `halo_m_axis_*`
//! to the node's IntraNode port [`super::engine::HALO_PORT`], `reduce_s_axis_*` /
//! `reduce_m_axis_*` to the host side of the collective engine's port `a`.

use std::rc::Rc;

use weft_hdl::netlist::verilog::ports;
use weft_hdl::netlist::{Design, Inst, Netlist, Sig};

use super::bridge::{reduction_bridge, BridgeSpec};
use super::engine::{halo_engine, HaloTables};
use crate::Error;

/// One node's application module, to be exported as `module`; its children are
/// `<module>_accelerator` (the compiled program), `<module>_halo` and `<module>_reduce`.
pub fn app_node(module: &str, program: &Netlist, tables: &HaloTables, bridge: &BridgeSpec) -> Result<Netlist, Error> {
    let program = Rc::new(program.clone());
    let engine = Rc::new(halo_engine(tables)?);
    let reducer = Rc::new(reduction_bridge(bridge)?);
    for port in ["sync", "sync_id"] {
        if !ports(&program).iter().any(|p| p.name == port && p.output) {
            return Err(Error::Config(format!("{module}: the program has no output `{port}`: compile it with the node's sync steps")));
        }
    }
    let d = Design::new();
    let p = d.instance(&program, "accelerator", "accelerator");
    let e = d.instance(&engine, "halo", "halo");
    let r = d.instance(&reducer, "reduce", "reduce");

    d.section("sync steps: reductions first, then the halos, then the program goes on");
    let (sync, sync_id) = (p.output("sync"), p.output("sync_id").resize(16));
    r.input("sync").define(sync);
    r.input("sync_id").define(sync_id);
    let reduced = r.output("reduce_done");
    e.input("sync").define(sync & reduced);
    e.input("sync_id").define(sync_id);
    p.input("sync_done").define(e.output("halo_done") & reduced);

    d.section("the dats the engine refreshes and the globals the bridge reduces: loader or engine");
    let mut taken: Vec<String> = vec!["sync_done".into()];
    for dat in &tables.dats {
        let x = &dat.name;
        e.input(&format!("{x}_rd_data")).define(p.output(&format!("{x}_rd_data")));
        let rd = format!("{x}_rd_addr");
        let outside = outside_input(&d, &p, &rd);
        p.input(&rd).define(sync.mux(e.output(&rd).resize(outside.width), outside));
        shared_write(&d, &p, &e, x, true);
        taken.extend([rd, format!("{x}_wr_en"), format!("{x}_wr_addr"), format!("{x}_wr_data")]);
    }
    for g in &bridge.globals {
        r.input(&format!("{}_value", g.name)).define(p.output(&format!("{}_value", g.name)));
        shared_write(&d, &p, &r, &g.name, false);
        taken.extend([format!("{}_wr_en", g.name), format!("{}_wr_data", g.name)]);
    }

    d.section("everything else of the program, the engine's tables, the packet streams, the counters");
    for port in ports(&program) {
        if port.output {
            d.output(&port.name, p.output(&port.name));
        } else if !taken.contains(&port.name) {
            p.input(&port.name).define(d.input(&port.name, port.width));
        }
    }
    let internal = |n: &str| ["sync", "sync_id", "halo_done", "reduce_done"].contains(&n) || n.ends_with("_rd_data") || n.ends_with("_value");
    for (child, net, prefix) in [(&e, &engine, "halo_"), (&r, &reducer, "reduce_")] {
        for port in ports(net) {
            let stream = port.name.starts_with("s_axis_") || port.name.starts_with("m_axis_");
            let outer = if stream { format!("{prefix}{}", port.name) } else { port.name.clone() };
            if port.output {
                let ours = tables.dats.iter().any(|x| port.name.starts_with(&format!("{}_", x.name))) || bridge.globals.iter().any(|g| port.name.starts_with(&format!("{}_wr_", g.name)));
                if !internal(&port.name) && !ours {
                    d.output(&outer, child.output(&port.name));
                }
            } else if stream || port.name.starts_with("halo_") {
                child.input(&port.name).define(d.input(&outer, port.width));
            }
        }
    }
    Ok(d.finish())
}

/// The top's input `name`, as wide as the program's input of that name.
fn outside_input<'d>(d: &'d Design, p: &Inst<'d>, name: &str) -> Sig<'d> {
    d.input(name, p.input(name).width)
}

/// The program's `<x>_wr_*` port, written by the loader from outside or, when the loader does
/// not write, by `child` (the halo engine, or the bridge for a global, which has no address).
fn shared_write<'d>(d: &'d Design, p: &Inst<'d>, child: &Inst<'d>, x: &str, addressed: bool) {
    let en = outside_input(d, p, &format!("{x}_wr_en"));
    let fields: &[&str] = if addressed { &["addr", "data"] } else { &["data"] };
    for f in fields {
        let name = format!("{x}_wr_{f}");
        let outside = outside_input(d, p, &name);
        p.input(&name).define(en.mux(outside, child.output(&name).resize(outside.width)));
    }
    p.input(&format!("{x}_wr_en")).define(en | child.output(&format!("{x}_wr_en")));
}
