//! The shipped link endpoints (`reliable_link_x1`, `reliable_link_x2`) and their module headers.

use weft_hdl::export::{export_netlist, ExportError, ModuleSpec};

use super::{endpoint, LinkConfig};

/// The link configurations shipped as Verilog: lanes → module name.
pub const LINKS: [(usize, &str); 2] = [(1, "reliable_link_x1"), (2, "reliable_link_x2")];

/// The shipped links (stand-alone and in the nodes) receive on their own clock.
pub fn link_config(lanes: usize) -> LinkConfig {
    LinkConfig { lanes, rx_clock: true, ..Default::default() }
}

/// The public description of the shipped endpoint with `lanes` lanes, as module `name`: its
/// summary and its configuration as header parameters.
pub fn link_spec(lanes: usize, name: &str) -> ModuleSpec {
    let c = link_config(lanes);
    ModuleSpec {
        family: "link",
        name: name.to_string(),
        summary: format!("reliable link endpoint over a {lanes}-lane Aurora 64B/66B channel: CRC-32C, go-back-N, credits for two virtual channels"),
        parameters: vec![
            ("lanes".into(), lanes.to_string()),
            ("word_bits".into(), (64 * lanes).to_string()),
            ("max_frame_words".into(), c.max_frame_words.to_string()),
            ("replay_words".into(), c.replay_words.to_string()),
            ("vc_buffer_words".into(), c.vc_buffer_words.to_string()),
            ("retransmit_timeout".into(), format!("{} cycles", c.retransmit_timeout)),
            ("clock_compensation".into(), format!("{} blocks every {} cycles", c.cc_burst, c.cc_interval)),
            ("buffer_reads".into(), if c.registered_reads { "registered (synchronous read ports)" } else { "asynchronous" }.into()),
            ("receive_clock".into(), if c.rx_clock { "rx_clk (rx_serial, lock, deskew, bonding), elastic buffer into clk" } else { "clk" }.into()),
        ],
        hidden_ports: vec![],
    }
}

/// The Verilog of the shipped endpoint with `lanes` lanes, under `spec`.
pub fn link_verilog(spec: &ModuleSpec, lanes: usize) -> Result<String, ExportError> {
    let net = endpoint(&link_config(lanes))?;
    export_netlist(spec, &net)
}
