//! The node as an Intel Platform Designer component (torus_2x2x2, a Stratix 10 520N system):
//! the `_hw.tcl` runs against stub Platform Designer commands that hold every port it adds
//! against the node Verilog's declarations (direction, width, each once) and the interfaces
//! against their use; a copy with one port's width changed is refused.

use weft::system::{generate, platform_designer, shipped};
use weft::tools::ports::ports;

#[test]
fn the_component_matches_the_node_and_a_broken_one_is_refused() {
    let config = shipped().into_iter().find(|c| c.name == "torus_2x2x2").unwrap();
    let dir = std::env::temp_dir().join(format!("weft_hw_tcl_{}", std::process::id()));
    let written = generate(&config, &dir.join("generated"), &dir.join("constraints")).unwrap();
    let system = dir.join("generated/system");
    let (hw, node) = (system.join("torus_2x2x2_node_hw.tcl"), system.join("torus_2x2x2_node.v"));
    assert!(written.contains(&hw));
    let decls = ports(&std::fs::read_to_string(&node).unwrap(), "torus_2x2x2_node").unwrap();
    platform_designer::check_component(&hw, &node, &decls).unwrap();
    let text = std::fs::read_to_string(&hw).unwrap();
    for iface in ["add_interface s_axil axi4lite end", "add_interface s_axis_p0 axi4stream end", "add_interface m_axis_p0 axi4stream start", "add_interface xp_rx_serial conduit end"] {
        assert!(text.contains(iface), "{iface}");
    }
    let broken = system.join("broken_hw.tcl");
    std::fs::write(&broken, text.replace("s_axis_p0_tdata tdata Input 128", "s_axis_p0_tdata tdata Input 64")).unwrap();
    let err = platform_designer::check_component(&broken, &node, &decls).unwrap_err();
    assert!(err.to_string().contains("s_axis_p0_tdata Input 64: not a port of the node"), "{err}");
    std::fs::remove_dir_all(&dir).ok();
}
