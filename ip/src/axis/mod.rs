//! Shipped AXI4-Stream primitives: the stream layer's register slice and FIFO at the widths the
//! fabric uses, with the built-in-simulator testbenches `weft check` runs first.

pub mod adapter;
pub mod gearbox;
pub mod packetize;

use crate::Error;
use weft_hdl::export::ModuleSpec;
use weft_hdl::stream::{AxisRegisterSlice, Sideband};
use weft_hdl::testbench::{check_stream_block, StreamPorts, StreamStimulus};

use crate::shipped::Shipped;

pub type RegisterSliceW128 = AxisRegisterSlice<128, 16, 1>;
pub type FifoW128D32 = weft_hdl::axis_fifo!(128, 32);
pub type AsyncFifoW128D64 = weft_hdl::axis_async_fifo!(128, 64);
/// The same FIFO at 256 bits, for the shells of 256-bit nodes.
pub type AsyncFifoW256D64 = weft_hdl::axis_async_fifo!(256, 64);

/// Write clock slower, equal, faster, at awkward ratios, with random handshakes.
fn async_fifo_testbench() -> Result<String, Error> {
    let mut summary = vec![];
    for (s, m) in [(10, 10), (10, 7), (7, 10), (10, 31), (31, 10), (13, 17)] {
        let run = weft_hdl::stream::async_fifo::check_clock_crossing::<128, 16, 6, 7>(s, m, 1000, 70, 70, s * 100 + m)?;
        summary.push(format!("{s}:{m} {} beats", run.beats));
    }
    Ok(format!("clock periods write:read {}", summary.join(", ")))
}

fn packet_ports_hidden() -> Vec<String> {
    let mut hidden = Sideband::PACKET.hidden("s_axis");
    hidden.extend(Sideband::PACKET.hidden("m_axis"));
    hidden
}

/// Random valid/ready patterns on both sides, then both sides always ready.
fn stimuli(seed: u64) -> [StreamStimulus; 4] {
    [
        StreamStimulus { beats: 2000, valid_percent: 50, ready_percent: 50, seed },
        StreamStimulus { beats: 2000, valid_percent: 95, ready_percent: 25, seed: seed + 1 },
        StreamStimulus { beats: 2000, valid_percent: 25, ready_percent: 95, seed: seed + 2 },
        StreamStimulus { beats: 2000, valid_percent: 100, ready_percent: 100, seed: seed + 3 },
    ]
}

macro_rules! stream_testbench {
    ($ty:ty, $w:expr, $k:expr, $seed:expr) => {{
        let ports: StreamPorts<$ty, $w, $k, 1> = StreamPorts { clk: |b| &mut b.clk, rst: |b| &mut b.rst, input: |b| &mut b.s_axis, output: |b| &mut b.m_axis };
        let mut summary = vec![];
        for stimulus in stimuli($seed) {
            let run = check_stream_block(<$ty>::default(), &ports, stimulus, true)?;
            summary.push(format!("{} beats in {} cycles (valid {}%, ready {}%)", run.beats, run.cycles, stimulus.valid_percent, stimulus.ready_percent));
        }
        Ok::<_, Error>(summary.join("; "))
    }};
}

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
                hidden_ports: packet_ports_hidden(),
            },
            |spec| weft_hdl::export::export(spec, &mut AsyncFifoW128D64::default()),
            async_fifo_testbench,
        ),
        Shipped::new(adapter_spec(128, 64), |spec| weft_hdl::export::export_netlist(spec, &adapter_netlist(128, 64)?), || adapter_testbench(128, 64)),
        Shipped::new(adapter_spec(64, 128), |spec| weft_hdl::export::export_netlist(spec, &adapter_netlist(64, 128)?), || adapter_testbench(64, 128)),
        Shipped::new(
            ModuleSpec {
                family: "axis",
                name: "axis_register_slice_w128".into(),
                summary: "AXI4-Stream register slice (skid buffer), 1 beat/cycle, registered tready".into(),
                parameters: vec![("data_width".into(), "128".into()), ("keep_width".into(), "16".into()), ("latency".into(), "1 cycle".into())],
                hidden_ports: packet_ports_hidden(),
            },
            |spec| weft_hdl::export::export(spec, &mut RegisterSliceW128::default()),
            || stream_testbench!(RegisterSliceW128, 128, 16, 100),
        ),
        Shipped::new(
            ModuleSpec {
                family: "axis",
                name: "axis_fifo_w128_d32".into(),
                summary: "synchronous first-word-fall-through AXI4-Stream FIFO".into(),
                parameters: vec![("data_width".into(), "128".into()), ("keep_width".into(), "16".into()), ("depth".into(), "32 beats".into()), ("latency".into(), "2 cycles".into())],
                hidden_ports: packet_ports_hidden(),
            },
            |spec| weft_hdl::export::export(spec, &mut FifoW128D32::default()),
            || stream_testbench!(FifoW128D32, 128, 16, 200),
        ),
    ]
}
