//! The router of any configuration as Verilog (`router_<cfg>`, its parameters in the module
//! header): what the Verilated torus builds, and what the catalogue ships for its tori.

use weft_ip::router::{router, RouterConfig};
use weft_ip::weft_hdl::export::{export_netlist, ExportError, ModuleSpec};

pub fn torus_name(dims: [usize; 3]) -> String {
    format!("{}x{}x{}", dims[0], dims[1], dims[2])
}

/// The header of the router module of `c` (`router_<dims>`).
pub(crate) fn router_spec_for(c: &RouterConfig) -> ModuleSpec {
    let t = torus_name(c.dims);
    ModuleSpec {
        family: "router",
        name: format!("router_{t}"),
        summary: format!("virtual-cut-through router for a {t} torus: dimension-order routing, two virtual channels with dateline switching, SEC-DED headers"),
        parameters: router_parameters(c),
        hidden_ports: vec![],
    }
}

pub(crate) fn router_parameters(c: &RouterConfig) -> Vec<(String, String)> {
    vec![
        ("torus".into(), torus_name(c.dims)),
        ("local_ports".into(), c.local_ports.to_string()),
        ("inter_node_ports".into(), c.directions().iter().map(|d| d.name()).collect::<Vec<_>>().join(" ")),
        ("width".into(), c.width.to_string()),
        ("vc_buffer_flits".into(), c.vc_buffer_flits.to_string()),
        ("max_packet_bytes".into(), c.max_packet_bytes.to_string()),
        ("dateline".into(), c.dateline.to_string()),
    ]
}

/// The router of any configuration (`router_<cfg>`, its parameters in the header), for the
/// Verilator tests and benchmarks.
pub fn router_verilog_for(config: &RouterConfig) -> Result<(String, String), ExportError> {
    let spec = router_spec_for(config);
    let net = router(config).map_err(ExportError)?;
    Ok((spec.name.clone(), export_netlist(&spec, &net)?))
}
