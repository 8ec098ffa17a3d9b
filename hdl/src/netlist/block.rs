//! A netlist with one AXI4-Stream input and one output, as a rust-hdl block: the built-in
//! simulator evaluates the netlist, the Verilog generator gets its text.
//!
//! The netlist names its inputs and outputs after the ports they bind to: `s_axis_tvalid`,
//! `s_axis_tlast`, `m_axis_tready` and `s_axis_tdata` (the low bits of the port's `tdata`, as
//! many as the input is wide); outputs `s_axis_tready`, `m_axis_tvalid`, `m_axis_tlast` and
//! `m_axis_tdata`. `tdata` bits above the output are driven to zero.

use num_bigint::BigUint;
use rust_hdl::prelude::*;

use std::fs::File;
use std::io::{self, BufWriter};
use std::path::Path;

use super::eval::Evaluator;
use super::vcd::Vcd;
use super::{verilog, Netlist, Wire};
use crate::stream::{AxisMaster, AxisSlave, StreamWidths};

/// A [`Netlist`] as a rust-hdl block with input stream `s_axis` (`WI`-bit `tdata`, `KI`-bit
/// `tkeep`) and output stream `m_axis` (`WO`, `KO`); `tkeep` is not read and driven all ones,
/// `tuser` is driven zero.
#[derive(LogicBlock)]
pub struct NetlistStream<const WI: usize, const KI: usize, const WO: usize, const KO: usize> {
    /// Clock; the netlist's registers take their inputs at its rising edge.
    pub clk: Signal<In, Clock>,
    /// Synchronous active-high reset.
    pub rst: Signal<In, Bit>,
    /// Input stream.
    pub s_axis: AxisSlave<WI, KI>,
    /// Output stream.
    pub m_axis: AxisMaster<WO, KO>,
    _core: Box<Core>,
}

struct Core {
    eval: Evaluator,
    data_in: Option<Wire>,
    valid_in: Option<Wire>,
    last_in: Option<Wire>,
    ready_in: Option<Wire>,
    data_out: Option<Wire>,
    valid_out: Wire,
    last_out: Option<Wire>,
    ready_out: Wire,
    last_data: Option<BigUint>,
    trace: Option<Vcd<BufWriter<File>>>,
    trace_error: Option<io::Error>,
}

impl<const WI: usize, const KI: usize, const WO: usize, const KO: usize> NetlistStream<WI, KI, WO, KO> {
    /// Wraps `net`; panics when a name does not bind to a port or `tdata` is wider than the
    /// port's (the generators that build netlists check their parameters before this point).
    pub fn new(net: Netlist) -> Self {
        let () = StreamWidths::<WI, KI, 1>::OK;
        let () = StreamWidths::<WO, KO, 1>::OK;
        let mut data_out = None;
        let (mut valid_out, mut last_out, mut ready_out) = (None, None, None);
        for o in &net.outputs {
            match o.name.as_str() {
                "m_axis_tvalid" => valid_out = Some(o.wire),
                "m_axis_tlast" => last_out = Some(o.wire),
                "s_axis_tready" => ready_out = Some(o.wire),
                "m_axis_tdata" => {
                    assert!(net.width(o.wire) <= WO, "output m_axis_tdata is {} bits, the port {WO}", net.width(o.wire));
                    data_out = Some(o.wire);
                }
                name => panic!("netlist output `{name}` binds to no port"),
            }
        }
        let eval = Evaluator::new(net);
        let mut data_in = None;
        let (mut valid_in, mut last_in, mut ready_in) = (None, None, None);
        for node in &eval.netlist().nodes {
            if let super::Op::Input(name) = &node.op {
                let w = eval.input(name).unwrap();
                match name.as_str() {
                    "s_axis_tvalid" => valid_in = Some(w),
                    "s_axis_tlast" => last_in = Some(w),
                    "m_axis_tready" => ready_in = Some(w),
                    "s_axis_tdata" => {
                        assert!(node.width <= WI, "input s_axis_tdata is {} bits, the port {WI}", node.width);
                        data_in = Some(w);
                    }
                    name => panic!("netlist input `{name}` binds to no port"),
                }
            }
        }
        let core = Core {
            eval,
            data_in,
            valid_in,
            last_in,
            ready_in,
            data_out,
            valid_out: valid_out.expect("netlist has no m_axis_tvalid output"),
            last_out,
            ready_out: ready_out.expect("netlist has no s_axis_tready output"),
            last_data: None,
            trace: None,
            trace_error: None,
        };
        NetlistStream { clk: Default::default(), rst: Default::default(), s_axis: Default::default(), m_axis: Default::default(), _core: Box::new(core) }
    }

    /// The wrapped netlist (flattened: instances inlined).
    pub fn netlist(&self) -> &Netlist {
        self._core.eval.netlist()
    }

    /// Writes a waveform of every cycle from now on to the VCD file `path` (top scope `top`);
    /// [`NetlistStream::finish_trace`] closes it.
    pub fn trace(&mut self, path: &Path, top: &str) -> io::Result<()> {
        let file = BufWriter::new(File::create(path)?);
        self._core.trace = Some(self._core.eval.vcd(file, top, 10)?);
        Ok(())
    }

    /// Ends the waveform started by [`NetlistStream::trace`] and flushes the file; reports a
    /// write that failed during the run.
    pub fn finish_trace(&mut self) -> io::Result<()> {
        if let Some(e) = self._core.trace_error.take() {
            return Err(e);
        }
        match self._core.trace.take() {
            Some(vcd) => vcd.finish().map(|_| ()),
            None => Ok(()),
        }
    }

    fn load_inputs(&mut self) {
        let core = &mut self._core;
        let data: BigUint = self.s_axis.tdata.val().into();
        if core.last_data.as_ref() != Some(&data) {
            if let Some(w) = core.data_in {
                core.eval.set_big(w, &data);
            }
            core.last_data = Some(data);
        }
        let bits = [(core.valid_in, self.s_axis.tvalid.val()), (core.last_in, self.s_axis.tlast.val()), (core.ready_in, self.m_axis.tready.val())];
        for (w, v) in bits {
            if let Some(w) = w {
                core.eval.set(w, v as u128);
            }
        }
    }
}

impl<const WI: usize, const KI: usize, const WO: usize, const KO: usize> Logic for NetlistStream<WI, KI, WO, KO> {
    fn update(&mut self) {
        if self.clk.pos_edge() {
            self.load_inputs();
            self._core.eval.settle();
            if let Some(vcd) = &mut self._core.trace {
                // A failed write ends the trace, not the simulation; finish_trace reports it.
                if let Err(e) = self._core.eval.sample(vcd) {
                    self._core.trace = None;
                    self._core.trace_error = Some(e);
                }
            }
            let reset = self.rst.val();
            self._core.eval.clock(reset);
        }
        self.load_inputs();
        let core = &mut self._core;
        core.eval.settle();
        let out = core.data_out.map_or_else(BigUint::default, |w| core.eval.get_big(w));
        self.m_axis.tdata.next = Bits::<WO>::from(out);
        self.m_axis.tkeep.next = Bits::<KO>::from(BigUint::from(u128::MAX) & ((BigUint::from(1u8) << KO) - 1u8));
        self.m_axis.tvalid.next = core.eval.get(core.valid_out) != 0;
        self.m_axis.tlast.next = core.last_out.is_some_and(|w| core.eval.get(w) != 0);
        self.m_axis.tuser.next = Bits::<1>::from(false);
        self.s_axis.tready.next = core.eval.get(core.ready_out) != 0;
    }

    fn connect(&mut self) {
        self.m_axis.tdata.connect();
        self.m_axis.tkeep.connect();
        self.m_axis.tvalid.connect();
        self.m_axis.tlast.connect();
        self.m_axis.tuser.connect();
        self.s_axis.tready.connect();
    }

    fn hdl(&self) -> Verilog {
        let core = &self._core;
        let net = core.eval.netlist();
        let input = |name: &str| match name {
            "s_axis_tvalid" | "s_axis_tlast" | "m_axis_tready" => verilog::InputRef { base: name.replacen("_t", "$t", 1), lo: 0, whole: true },
            _ => verilog::InputRef { base: "s_axis$tdata".into(), lo: 0, whole: false },
        };
        let mut wanted: Vec<Wire> = core.data_out.into_iter().collect();
        wanted.extend([core.valid_out, core.ready_out]);
        wanted.extend(core.last_out);
        let (mut text, exprs) = verilog::stream_body(net, &input, &wanted);
        let id = |w: Wire| exprs[wanted.iter().position(|x| *x == w).unwrap()].clone();
        // Output bits above the netlist's output are driven to zero.
        let mut pieces = vec![];
        let width = core.data_out.map_or(0, |w| net.width(w));
        if width < WO {
            pieces.push(format!("{}'h0", WO - width));
        }
        pieces.extend(core.data_out.map(id));
        text.push_str(&format!(
            "\nalways @(*) begin\n    m_axis$tdata = {{{}}};\n    m_axis$tkeep = {{{KO}{{1'b1}}}};\n    m_axis$tvalid = {};\n    m_axis$tlast = {};\n    m_axis$tuser = 1'b0;\n    s_axis$tready = {};\nend\n",
            pieces.join(", "),
            id(core.valid_out),
            core.last_out.map_or("1'b0".to_string(), id),
            id(core.ready_out),
        ));
        Verilog::Custom(text)
    }
}

/// Builds a feed-forward stream pipeline around a datapath: `lanes` are the `(lo, width)` slices
/// of `s_axis_tdata` the datapath reads; `build` returns the `(wire, lo)` slices of
/// `m_axis_tdata` it produces (bits between them are zero). Every register moves under one clock enable,
/// `!m_axis_tvalid || m_axis_tready`, which is also `s_axis_tready`: one beat per cycle when the
/// output is ready, and a stalled output freezes the whole pipeline, so no beat is lost or
/// duplicated under any `tready` pattern. `tlast` travels with its beat.
pub fn feed_forward(lanes: &[(usize, usize)], build: impl FnOnce(&mut Netlist, &[Wire]) -> Vec<(Wire, usize)>) -> Netlist {
    let mut net = Netlist::new();
    let enable = net.forward(1);
    net.name(enable, "advance");
    net.enable = Some(enable);
    let valid_in = net.input("s_axis_tvalid", 1);
    let last_in = net.input("s_axis_tlast", 1);
    let data_in = net.input("s_axis_tdata", lanes.iter().map(|(lo, w)| lo + w).max().unwrap_or(1));
    let inputs: Vec<Wire> = lanes.iter().map(|(lo, width)| net.slice(data_in, *lo, *width)).collect();
    let outputs = build(&mut net, &inputs);
    let latency = outputs.iter().map(|(w, _)| net.stage_of(*w)).max().unwrap_or(0);
    if !outputs.is_empty() {
        net.set_stage(latency);
        let data_out = net.join(&outputs);
        net.output("m_axis_tdata", data_out);
    }
    net.balance_outputs();
    // Valid (reset) and last (data) registers alongside the datapath.
    let (mut valid, mut last) = (valid_in, last_in);
    for stage in 0..latency {
        net.set_stage(stage);
        valid = net.reg(valid, Some(enable), Some(0));
        last = net.reg(last, Some(enable), None);
    }
    net.name(valid, "out_valid");
    net.set_stage(latency);
    // Created at the output stage: the sink's ready is never delayed.
    let ready = net.input("m_axis_tready", 1);
    let free = net.not(valid);
    let advance = net.or(free, ready);
    net.resolve(enable, advance);
    net.output("m_axis_tvalid", valid);
    net.output("m_axis_tlast", last);
    net.output("s_axis_tready", enable);
    net
}
