//! The simulated device behind a harness: the [`Device`] trait (whole ports by name) and its two
//! implementations, the built-in netlist evaluator ([`NetlistDevice`]) and a Verilated model
//! ([`VerilatorDevice`]).

use std::path::Path;

use weft_ip::link::{endpoint, LinkConfig};
use weft_ip::weft_hdl::netlist::eval::Evaluator;
use weft_ip::weft_hdl::netlist::{Op, Wire};

use crate::cosim::{CosimError, Model, PortId};

/// Port values, little-endian 64-bit words (ports are at most 320 bits wide).
pub type Value = [u64; 5];

/// An endpoint being simulated: whole ports by name.
pub trait Device {
    fn port(&mut self, name: &str) -> usize;
    fn has_port(&mut self, name: &str) -> bool;
    fn set(&mut self, port: usize, value: &Value);
    fn get(&mut self, port: usize) -> Value;
    /// Settle combinational logic after inputs changed.
    fn settle(&mut self);
    /// Rising clock edge (inputs as last set).
    fn clock(&mut self, reset: bool);
}

pub(super) fn get_bits(v: &Value, lo: usize, width: usize) -> u128 {
    let mut out = 0u128;
    for i in 0..width {
        let b = lo + i;
        if (v[b / 64] >> (b % 64)) & 1 == 1 {
            out |= 1 << i;
        }
    }
    out
}

pub(super) fn put_bits(v: &mut Value, lo: usize, width: usize, value: u128) {
    for i in 0..width {
        let b = lo + i;
        let bit = ((value >> i) & 1) as u64;
        v[b / 64] = (v[b / 64] & !(1 << (b % 64))) | bit << (b % 64);
    }
}

/// The built-in simulator: the endpoint's netlist evaluated cycle by cycle.
pub struct NetlistDevice {
    eval: Evaluator,
    /// Per port: the netlist slices `(wire, lo, width)` and whether it is an output.
    ports: Vec<(String, Vec<(Wire, usize, usize)>, bool)>,
}

impl NetlistDevice {
    pub fn new(eval: Evaluator) -> NetlistDevice {
        NetlistDevice { eval, ports: vec![] }
    }
}

fn split(name: &str) -> (&str, usize) {
    match name.split_once('@') {
        Some((p, lo)) => (p, lo.parse().unwrap()),
        None => (name, 0),
    }
}

impl Device for NetlistDevice {
    fn has_port(&mut self, name: &str) -> bool {
        let net = self.eval.netlist();
        net.outputs.iter().any(|o| split(&o.name).0 == name) || net.nodes.iter().any(|n| matches!(&n.op, Op::Input(i) if split(i).0 == name))
    }
    fn port(&mut self, name: &str) -> usize {
        if let Some(i) = self.ports.iter().position(|p| p.0 == name) {
            return i;
        }
        let net = self.eval.netlist();
        let mut slices = vec![];
        let mut output = false;
        for (i, node) in net.nodes.iter().enumerate() {
            if let Op::Input(n) = &node.op {
                let (p, lo) = split(n);
                if p == name {
                    slices.push((Wire(i), lo, node.width));
                }
            }
        }
        for o in &net.outputs {
            let (p, lo) = split(&o.name);
            if p == name {
                slices.push((o.wire, lo, net.width(o.wire)));
                output = true;
            }
        }
        assert!(!slices.is_empty(), "endpoint has no port `{name}`");
        self.ports.push((name.to_string(), slices, output));
        self.ports.len() - 1
    }
    fn set(&mut self, port: usize, value: &Value) {
        for k in 0..self.ports[port].1.len() {
            let (w, lo, width) = self.ports[port].1[k];
            self.eval.set(w, get_bits(value, lo, width));
        }
    }
    fn get(&mut self, port: usize) -> Value {
        let mut v = [0; 5];
        for &(w, lo, width) in &self.ports[port].1 {
            put_bits(&mut v, lo, width, self.eval.get(w));
        }
        v
    }
    fn settle(&mut self) {
        self.eval.settle();
    }
    fn clock(&mut self, reset: bool) {
        self.eval.clock(reset);
    }
}

/// The generated Verilog, verilated.
pub struct VerilatorDevice {
    model: Model,
    ports: Vec<(String, PortId)>,
    rst: PortId,
}

impl VerilatorDevice {
    pub fn new(file: &Path, top: &str) -> Result<VerilatorDevice, CosimError> {
        let model = Model::build(file, top)?;
        let rst = model.port("rst")?;
        Ok(VerilatorDevice { model, ports: vec![], rst })
    }
}

impl Device for VerilatorDevice {
    fn has_port(&mut self, name: &str) -> bool {
        self.model.port(name).is_ok()
    }
    fn port(&mut self, name: &str) -> usize {
        if let Some(i) = self.ports.iter().position(|p| p.0 == name) {
            return i;
        }
        let id = self.model.port(name).unwrap_or_else(|e| panic!("{e}"));
        self.ports.push((name.to_string(), id));
        self.ports.len() - 1
    }
    fn set(&mut self, port: usize, value: &Value) {
        let words: Vec<u32> = value.iter().flat_map(|w| [*w as u32, (*w >> 32) as u32]).collect();
        self.model.set_words(self.ports[port].1, &words);
    }
    fn get(&mut self, port: usize) -> Value {
        let words = self.model.get_words(self.ports[port].1).to_vec();
        let mut v = [0; 5];
        for (i, w) in words.iter().enumerate() {
            v[i / 2] |= (*w as u64) << (32 * (i % 2));
        }
        v
    }
    fn settle(&mut self) {
        self.model.eval();
    }
    fn clock(&mut self, reset: bool) {
        let r = [reset as u64, 0, 0, 0, 0];
        let words: Vec<u32> = r.iter().flat_map(|w| [*w as u32, (*w >> 32) as u32]).collect();
        self.model.set_words(self.rst, &words);
        self.model.tick();
    }
}

/// A built-in-simulator endpoint for `config`.
pub fn netlist_device(config: &LinkConfig) -> Result<NetlistDevice, String> {
    Ok(NetlistDevice::new(Evaluator::new(endpoint(config)?)))
}
