//! The shipped nodes (`torus_<cfg>_node`) and the module header of a node of any configuration.

use weft_hdl::export::{export_netlist, ExportError, ModuleSpec};

use super::node::counter_names;
use super::{node, NodeConfig};
use crate::link::spec::link_config;
use crate::router::spec::{dims_of, router_config, router_parameters, torus_name};

/// The shipped node of a torus: the shipped router, 2-lane reliable links (128-bit words).
pub fn node_config(dims: [usize; 3]) -> NodeConfig {
    NodeConfig { router: router_config(dims), link: link_config(2), kernels: vec![], allreduce: None }
}

/// The header of the shipped node of a torus, `torus_<dims>_node`.
pub fn node_spec(dims: [usize; 3]) -> ModuleSpec {
    node_spec_for(&format!("torus_{}_node", torus_name(dims)), &node_config(dims))
}

/// The header of a node module of any configuration.
pub fn node_spec_for(name: &str, c: &NodeConfig) -> ModuleSpec {
    let t = torus_name(c.router.dims);
    let mut parameters = router_parameters(&c.router);
    parameters.push(("link_endpoints".into(), c.endpoints().iter().map(|d| d.name()).collect::<Vec<_>>().join(" ")));
    parameters.push(("lanes_per_link".into(), c.link.lanes.to_string()));
    parameters.push(("register_counters".into(), format!("from 0x100: {}", counter_names(c).join(", "))));
    ModuleSpec {
        family: "system",
        name: name.to_string(),
        summary: format!("one node of a {t} torus: router, reliable Aurora 64B/66B links carrying its credits, AXI4-Lite register window"),
        parameters,
        hidden_ports: vec![],
    }
}

/// The Verilog of a shipped node, for the torus named by `spec`'s parameters.
pub fn node_verilog(spec: &ModuleSpec) -> Result<String, ExportError> {
    let dims = dims_of(spec);
    export_netlist(spec, &node(&node_config(dims))?)
}
