//! A whole torus of routers joined link to link (no link layer): the top that the router's
//! network tests and benchmark simulate. Its ports are those of every router's IntraNode ports
//! and counters, renamed per node: `s_axis_n<n>_p<p>_*`, `m_axis_n<n>_p<p>_*`,
//! `stat_n<n>_<counter>`, with `n = x + X·(y + Y·z)`.

use std::fmt::Write;

use weft_hdl::netlist::verilog::{module, ports, Port};

use super::config::{Direction, RouterConfig};
use super::router::router;

/// rust-hdl-style raw text (`top` and its submodule `top$router`), for
/// [`weft_hdl::export::export_text`] to name and tidy.
pub fn network_raw(config: &RouterConfig) -> Result<String, String> {
    let net = router(config)?;
    let router_ports = ports(&net);
    let sub = "top$router";
    let dirs = config.directions();
    let range = |w: usize| if w == 1 { String::new() } else { format!("[{}:0] ", w - 1) };
    let mut top_ports: Vec<(String, &Port)> = vec![];
    let mut wires = String::new();
    let mut instances = String::new();
    for n in 0..config.nodes() {
        let c = config.coords(n);
        let mut binds = vec![".clk(clk)".to_string(), ".rst(rst)".to_string()];
        for p in &router_ports {
            let name = &p.name;
            let link = dirs.iter().find(|d| name.starts_with(&format!("s_axis_{}_", d.name())) || name.starts_with(&format!("m_axis_{}_", d.name())));
            let value = if let Some(axis) = name.strip_prefix("local_") {
                let dim = ["x", "y", "z"].iter().position(|a| *a == axis).unwrap();
                format!("6'd{}", c[dim])
            } else if let Some(d) = link {
                let dn = d.name();
                let signal = &name[format!("m_axis_{dn}_").len()..];
                if name.starts_with("m_axis_") && signal == "tready" {
                    "1'b1".to_string()
                } else if name.starts_with("m_axis_") && signal == "credit" {
                    // Credits come back from the router this output feeds.
                    format!("link_n{}_{dn}_credit", config.neighbour(n, *d))
                } else if name.starts_with("m_axis_") {
                    let wire = format!("link_n{n}_{dn}_{signal}");
                    writeln!(wires, "    wire {}{wire};", range(p.width)).unwrap();
                    wire
                } else if signal == "credit" {
                    let wire = format!("link_n{n}_{dn}_credit");
                    writeln!(wires, "    wire {}{wire};", range(p.width)).unwrap();
                    wire
                } else {
                    // Flits travelling in direction d come from the neighbour on the other side.
                    let from = config.neighbour(n, Direction { dim: d.dim, plus: !d.plus });
                    format!("link_n{from}_{dn}_{signal}")
                }
            } else {
                let renamed = if let Some(rest) = name.strip_prefix("stat_") {
                    format!("stat_n{n}_{rest}")
                } else {
                    format!("{}_n{n}_{}", &name[..6], &name[7..])
                };
                top_ports.push((renamed.clone(), p));
                renamed
            };
            binds.push(format!(".{name}({value})"));
        }
        writeln!(instances, "    {sub} r{n} (\n        {}\n    );", binds.join(",\n        ")).unwrap();
    }
    let mut text = format!("module top(clk,rst,{});\n", top_ports.iter().map(|p| p.0.as_str()).collect::<Vec<_>>().join(","));
    text.push_str("    input wire clk;\n    input wire rst;\n");
    for (name, p) in &top_ports {
        writeln!(text, "    {} wire {}{name};", if p.output { "output" } else { "input" }, range(p.width)).unwrap();
    }
    text.push_str(&wires);
    text.push_str(&instances);
    text.push_str("endmodule\n");
    text.push_str(&module(&net, sub));
    Ok(text)
}
