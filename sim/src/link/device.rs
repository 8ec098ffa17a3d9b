//! The simulated device behind a harness: the [`Device`] trait (whole ports by name) and its two
//! implementations, the built-in netlist evaluator ([`NetlistDevice`]) and a Verilated model
//! ([`VerilatorDevice`]).

use crate::Error;
use std::path::Path;

use weft_ip::link::{endpoint, LinkConfig};
use weft_ip::weft_hdl::netlist::eval::Evaluator;
use weft_ip::weft_hdl::netlist::Wire;

use crate::cosim::{CosimError, Model, PortId};

/// 64-bit words in a [`Value`].
pub const VALUE_WORDS: usize = 9;

/// Port values, little-endian 64-bit words (ports are at most 576 bits wide: the serial lanes of
/// an eight-lane link, 8 × 66 bits, and 512-bit streams).
pub type Value = [u64; VALUE_WORDS];

/// A port value of at most 64 bits.
pub fn scalar(x: u64) -> Value {
    let mut v = Value::default();
    v[0] = x;
    v
}

/// An endpoint being simulated: whole ports by name.
pub trait Device {
    /// The handle of port `name`, an input or an output (looked up once, then cached); panics
    /// when the device has no such port.
    fn port(&mut self, name: &str) -> usize;
    /// Whether the device has a port `name`.
    fn has_port(&mut self, name: &str) -> bool;
    /// Drives input `port` (a handle from [`Device::port`]) with `value`; the logic sees it at
    /// the next [`Device::settle`] or clock edge.
    fn set(&mut self, port: usize, value: &Value);
    /// The value of `port` as of the last [`Device::settle`] or clock edge.
    fn get(&mut self, port: usize) -> Value;
    /// Settle combinational logic after inputs changed.
    fn settle(&mut self);
    /// Rising edges of `clk` and/or `rx_clk` at one instant (inputs as last set). `reset` is the
    /// synchronous reset of the domains that rise: `rst` with `clk`, `rx_rst` with `rx_clk`. A
    /// device without an `rx_clk` domain ignores `rx_clk`: its receive side runs on `clk`.
    fn clock_edges(&mut self, clk: bool, rx_clk: bool, reset: bool);
    /// Whether the receive side runs on its own clock domain, `rx_clk`.
    fn has_rx_clock(&self) -> bool;
    /// Rising edge of every clock at once.
    fn clock(&mut self, reset: bool) {
        self.clock_edges(true, true, reset);
    }
    /// Rising edges of the clock input ports `clocks` (handles from [`Device::port`]) at one
    /// instant, for a device with several independent clocks (a `<cfg>_sim_async` top).
    fn edges(&mut self, clocks: &[usize]) {
        let _ = clocks;
        panic!("this device does not take clocks by port");
    }
    /// Rising edges of the clock domains `domains` (by clock name: `clk`, `xp_rx_clk`, …) at one
    /// instant, out of reset.
    fn clock_named(&mut self, domains: &[String]) {
        let _ = domains;
        panic!("this device does not take clocks by domain");
    }
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
    /// The `rx_clk` domain, if any.
    rx_domain: Option<usize>,
    /// Per port: its name, its wire and whether it is an output.
    ports: Vec<(String, Wire, bool)>,
}

impl NetlistDevice {
    /// The device of a netlist; a clock domain named `rx_clk`, if any, is its receive side.
    pub fn new(eval: Evaluator) -> NetlistDevice {
        let rx_domain = eval.domain("rx_clk");
        NetlistDevice { eval, rx_domain, ports: vec![] }
    }
}

impl Device for NetlistDevice {
    fn has_port(&mut self, name: &str) -> bool {
        self.eval.input(name).is_some() || self.eval.netlist().outputs.iter().any(|o| o.name == name)
    }
    fn port(&mut self, name: &str) -> usize {
        if let Some(i) = self.ports.iter().position(|p| p.0 == name) {
            return i;
        }
        let output = self.eval.netlist().outputs.iter().find(|o| o.name == name).map(|o| o.wire);
        let wire = output.or_else(|| self.eval.input(name)).unwrap_or_else(|| panic!("endpoint has no port `{name}`"));
        self.ports.push((name.to_string(), wire, output.is_some()));
        self.ports.len() - 1
    }
    fn set(&mut self, port: usize, value: &Value) {
        let w = self.ports[port].1;
        let width = self.eval.netlist().width(w);
        if width <= 128 {
            self.eval.set(w, get_bits(value, 0, width));
        } else {
            let digits: Vec<u32> = value.iter().flat_map(|x| [*x as u32, (*x >> 32) as u32]).collect();
            self.eval.set_big(w, &num_bigint::BigUint::from_slice(&digits));
        }
    }
    fn get(&mut self, port: usize) -> Value {
        let w = self.ports[port].1;
        let mut v = [0; VALUE_WORDS];
        for (k, digit) in self.eval.get_big(w).iter_u64_digits().enumerate() {
            v[k] = digit;
        }
        v
    }
    fn settle(&mut self) {
        self.eval.settle();
    }
    fn clock_edges(&mut self, clk: bool, rx_clk: bool, reset: bool) {
        match (clk, self.rx_domain.filter(|_| rx_clk)) {
            (true, Some(rx)) => self.eval.clock_domains(&[(0, reset), (rx, reset)]),
            (true, None) => self.eval.clock_domains(&[(0, reset)]),
            (false, Some(rx)) => self.eval.clock_domains(&[(rx, reset)]),
            (false, None) => {}
        }
    }
    fn has_rx_clock(&self) -> bool {
        self.rx_domain.is_some()
    }
    /// Every domain of the netlist, whatever their names.
    fn clock(&mut self, reset: bool) {
        self.eval.clock(reset);
    }
    fn clock_named(&mut self, domains: &[String]) {
        let edges: Vec<(usize, bool)> = domains.iter().map(|n| (self.eval.domain(n).unwrap_or_else(|| panic!("no clock domain `{n}`")), false)).collect();
        self.eval.clock_domains(&edges);
    }
}

/// The generated Verilog, verilated.
pub struct VerilatorDevice {
    model: Model,
    ports: Vec<(String, PortId)>,
    /// `clk` and `rst`; none on a top whose parts each have their own (`<cfg>_sim_async`).
    clock: Option<(PortId, PortId)>,
    /// Receive clocks and their resets (`rx_clk`/`rx_rst` of an endpoint, `<e>_rx_clk`/
    /// `<e>_rx_rst` of a node), if the module has them.
    rx: Vec<(PortId, PortId)>,
}

impl VerilatorDevice {
    /// Verilates `top` from `file` (or reuses the cached build) and instantiates it. Its `clk`
    /// and `rst`, if it has `clk`, and every receive clock with its reset are the clocks
    /// [`Device::clock_edges`] drives; a `clk` without `rst`, or a receive clock without its
    /// reset, is [`CosimError::NoPort`].
    pub fn new(file: &Path, top: &str) -> Result<VerilatorDevice, CosimError> {
        let model = Model::build(file, top)?;
        let clock = match model.port("clk") {
            Ok(clk) => Some((clk, model.port("rst")?)),
            Err(_) => None,
        };
        let rx_clocks: Vec<String> = model.ports().iter().map(|p| p.name.clone()).filter(|n| crate::cosim::is_receive_clock(n)).collect();
        let rx = rx_clocks.iter().map(|c| Ok((model.port(c)?, model.port(&c.replace("rx_clk", "rx_rst"))?))).collect::<Result<Vec<_>, CosimError>>()?;
        Ok(VerilatorDevice { model, ports: vec![], clock, rx })
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
        let mut v = [0; VALUE_WORDS];
        for (i, w) in words.iter().enumerate() {
            v[i / 2] |= (*w as u64) << (32 * (i % 2));
        }
        v
    }
    fn settle(&mut self) {
        self.model.eval();
    }
    fn clock_edges(&mut self, clk: bool, rx_clk: bool, reset: bool) {
        let mut clocks = Vec::with_capacity(2);
        if clk {
            let (clk, rst) = self.clock.expect("this module has no `clk`: its clocks are driven by port (`Device::edges`)");
            self.model.set(rst, reset as u64);
            clocks.push(clk);
        }
        if rx_clk {
            for &(rx_clk, rx_rst) in &self.rx {
                self.model.set(rx_rst, reset as u64);
                clocks.push(rx_clk);
            }
        }
        if !clocks.is_empty() {
            self.model.edges(&clocks);
        }
    }
    fn has_rx_clock(&self) -> bool {
        !self.rx.is_empty()
    }
    fn edges(&mut self, clocks: &[usize]) {
        let ids: Vec<PortId> = clocks.iter().map(|&c| self.ports[c].1).collect();
        self.model.edges(&ids);
    }
}

/// A built-in-simulator endpoint for `config`.
pub fn netlist_device(config: &LinkConfig) -> Result<NetlistDevice, Error> {
    Ok(NetlistDevice::new(Evaluator::new(endpoint(config)?)))
}
