//! The shipped routers and the module header of a router of any configuration
//! (`router_<cfg>`, its parameters listed in the header).

use weft_hdl::export::{export_netlist, ExportError, ModuleSpec};

use super::{router, RouterConfig};

/// The tori whose routers are shipped as `router_<cfg>`.
pub const TORI: [[usize; 3]; 2] = [[4, 2, 1], [2, 2, 2]];

/// The shipped router configuration of a torus: 2 IntraNode ports, 128-bit flits, 1024-byte
/// packets, 256-flit VC buffers (three maximum packets: enough to cover the credit loop across a
/// link, so 1024-byte packets stream at link rate; 128 flits held one packet per round trip and
/// capped b_eff at 41 % of the link).
pub fn router_config(dims: [usize; 3]) -> RouterConfig {
    RouterConfig { dims, vc_buffer_flits: 256, ..Default::default() }
}

/// The torus as module names spell it: `XxYxZ`, e.g. `4x2x1`.
pub fn torus_name(dims: [usize; 3]) -> String {
    format!("{}x{}x{}", dims[0], dims[1], dims[2])
}

/// The header of the router module of `c` (`router_<dims>`).
pub fn router_spec_for(c: &RouterConfig) -> ModuleSpec {
    let t = torus_name(c.dims);
    ModuleSpec {
        family: "router",
        name: format!("router_{t}"),
        summary: format!("virtual-cut-through router for a {t} torus: dimension-order routing, two virtual channels with dateline switching, SEC-DED headers"),
        parameters: router_parameters(c),
        hidden_ports: vec![],
    }
}

/// The `(name, value)` parameters a router header lists: torus, ports, width, buffers,
/// maximum payload and dateline switching.
pub fn router_parameters(c: &RouterConfig) -> Vec<(String, String)> {
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
    let net = router(config)?;
    Ok((spec.name.clone(), export_netlist(&spec, &net)?))
}

/// The header of the shipped router of a torus.
pub fn router_spec(dims: [usize; 3]) -> ModuleSpec {
    router_spec_for(&router_config(dims))
}

/// The torus dimensions a router or node header names (its first parameter).
pub fn dims_of(spec: &ModuleSpec) -> [usize; 3] {
    let t = &spec.parameters[0].1;
    let v: Vec<usize> = t.split('x').map(|x| x.parse().unwrap()).collect();
    [v[0], v[1], v[2]]
}

/// The Verilog of a shipped router, from its header.
pub fn router_verilog(spec: &ModuleSpec) -> Result<String, ExportError> {
    Ok(router_verilog_for(&router_config(dims_of(spec)))?.1)
}
