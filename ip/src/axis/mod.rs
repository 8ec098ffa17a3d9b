//! Shipped AXI4-Stream primitives: the stream buffers, width adapters and packet framing at the
//! widths the fabric uses, with the built-in-simulator testbenches `weft check` runs first.

pub mod adapter;
pub mod buffers;
pub mod gearbox;
pub mod packetize;

use crate::Error;
use weft_hdl::export::ModuleSpec;

use crate::shipped::Shipped;

fn adapter_spec(w_in: usize, w_out: usize) -> ModuleSpec {
    ModuleSpec {
        family: "axis",
        name: format!("axis_adapter_w{w_in}_to_w{w_out}"),
        summary: format!("AXI4-Stream width converter, {w_in} to {w_out} bits, tkeep/tlast honoured"),
        parameters: vec![("input_width".into(), w_in.to_string()), ("output_width".into(), w_out.to_string())],
        hidden_ports: vec![],
    }
}

fn adapter_netlist(w_in: usize, w_out: usize) -> Result<weft_hdl::netlist::Netlist, crate::Error> {
    if w_in > w_out {
        adapter::downsize(w_in, w_out)
    } else {
        adapter::upsize(w_in, w_out)
    }
}

fn adapter_testbench(w_in: usize, w_out: usize) -> Result<String, Error> {
    let mut summary = vec![];
    for (valid, ready) in [(50, 50), (100, 25), (25, 100), (100, 100)] {
        let cycles = adapter::check_packets(adapter_netlist(w_in, w_out)?, w_in, w_out, 500, 300, valid, ready, 17 + valid)?;
        summary.push(format!("500 packets in {cycles} cycles (valid {valid}%, ready {ready}%)"));
    }
    Ok(summary.join("; "))
}

/// The shipped AXI4-Stream modules, 128-bit data: the aggregator, the 4-channel dispatcher,
/// the asynchronous FIFO (depth 64), the 128 ↔ 64-bit width adapters, the register slice and
/// the synchronous FIFO, each with its testbench.
pub fn shipped() -> Vec<Shipped> {
    vec![
        Shipped::new(
            ModuleSpec {
                family: "axis",
                name: "axis_aggregator_w128".into(),
                summary: "kernel frames to packets: a header forged from the side-band (destination, port, tag, length) in front of each frame".into(),
                parameters: vec![("data_width".into(), "128".into()), ("tuser".into(), packetize::SIDEBAND.iter().map(|(n, lo, w)| format!("{n}[{}:{lo}]", lo + w - 1)).collect::<Vec<_>>().join(" "))],
                hidden_ports: vec![],
            },
            |spec| weft_hdl::export::export_netlist(spec, &packetize::aggregator()),
            || packetize::check_aggregator(1000, 21),
        ),
        Shipped::new(
            ModuleSpec {
                family: "axis",
                name: "axis_dispatcher_w128_c4".into(),
                summary: "packets to kernel channels: header stripped, payload to m_axis_ch<tag>, unknown tags dropped and counted".into(),
                parameters: vec![("data_width".into(), "128".into()), ("channels".into(), "4".into())],
                hidden_ports: vec![],
            },
            |spec| weft_hdl::export::export_netlist(spec, &packetize::dispatcher(4)?),
            || packetize::check_dispatcher(4, 1000, 22),
        ),
        Shipped::new(
            ModuleSpec {
                family: "axis",
                name: "axis_async_fifo_w128_d64".into(),
                summary: "AXI4-Stream FIFO between two clock domains (Gray-coded pointers, two-flop synchronisers), any clock ratio".into(),
                parameters: vec![("data_width".into(), "128".into()), ("keep_width".into(), "16".into()), ("depth".into(), "64 beats".into()), ("synchronizer_stages".into(), "2".into())],
                hidden_ports: vec![],
            },
            |spec| weft_hdl::export::export_netlist(spec, &buffers::async_fifo(128, 64)),
            || buffers::async_fifo_testbench(128, 64),
        ),
        Shipped::new(adapter_spec(128, 64), |spec| weft_hdl::export::export_netlist(spec, &adapter_netlist(128, 64)?), || adapter_testbench(128, 64)),
        Shipped::new(adapter_spec(64, 128), |spec| weft_hdl::export::export_netlist(spec, &adapter_netlist(64, 128)?), || adapter_testbench(64, 128)),
        Shipped::new(
            ModuleSpec {
                family: "axis",
                name: "axis_register_slice_w128".into(),
                summary: "AXI4-Stream register slice (skid buffer), 1 beat/cycle, registered tready".into(),
                parameters: vec![("data_width".into(), "128".into()), ("keep_width".into(), "16".into()), ("latency".into(), "1 cycle".into())],
                hidden_ports: vec![],
            },
            |spec| weft_hdl::export::export_netlist(spec, &buffers::register_slice(128)),
            || buffers::register_slice_testbench(128),
        ),
        Shipped::new(
            ModuleSpec {
                family: "axis",
                name: "axis_fifo_w128_d32".into(),
                summary: "synchronous first-word-fall-through AXI4-Stream FIFO; fill = beats held".into(),
                parameters: vec![
                    ("data_width".into(), "128".into()),
                    ("keep_width".into(), "16".into()),
                    ("depth".into(), "34 beats (a 32-word memory and two registers)".into()),
                    ("latency".into(), "1 cycle".into()),
                ],
                hidden_ports: vec![],
            },
            |spec| weft_hdl::export::export_netlist(spec, &buffers::fifo(128, 32)),
            || buffers::fifo_testbench(128, 32),
        ),
    ]
}
