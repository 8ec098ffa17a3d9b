//! Verilator co-simulation: build a generated module once, then drive and sample its ports
//! cycle by cycle from Rust.
//!
//! The module is verilated into a shared library with a small C ABI (set/get a port by index,
//! evaluate), cached under `target/weft-cosim/<top>-<hash>` and rebuilt only when the Verilog or
//! the harness changes, then loaded with `libloading`. Ports of any width are exchanged as
//! 32-bit words, least significant first (Verilator's own layout for wide signals).
//!
//! Chosen over `marlin` and `verilated`: marlin binds a module's ports at compile time through a
//! proc macro, while weft drives hundreds of generated modules whose ports are only known once
//! they are generated; `verilated` 0.1 wraps Verilator from a build script and is unmaintained.

mod axis;
mod build;
mod loop_ports;

pub use axis::{AxisPorts, AxisSink, AxisSource};
pub use build::CosimError;

use libloading::{Library, Symbol};
use std::collections::BTreeMap;
use std::ffi::c_void;
use std::path::Path;

/// A link's receive clock: `rx_clk` of an endpoint, `<e>_rx_clk` of a node (its reset is the
/// same name with `rst`).
pub fn is_receive_clock(name: &str) -> bool {
    name == "rx_clk" || name.ends_with("_rx_clk")
}

/// Direction of a top-level port.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    /// Driven by the harness ([`Model::set`]).
    Input,
    /// Driven by the module, read with [`Model::get`].
    Output,
}

/// A top-level port of the simulated module.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Port {
    /// The port's name in the Verilog.
    pub name: String,
    /// Width in bits.
    pub width: usize,
    /// Input or output.
    pub direction: Direction,
}

/// Handle to one port, looked up once by name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PortId(usize);

type NewFn = unsafe extern "C" fn() -> *mut c_void;
type FreeFn = unsafe extern "C" fn(*mut c_void);
type EvalFn = unsafe extern "C" fn(*mut c_void);
type SetFn = unsafe extern "C" fn(*mut c_void, i32, *const u32);
type GetFn = unsafe extern "C" fn(*mut c_void, i32, *mut u32);

/// A verilated module, ready to simulate.
pub struct Model {
    ports: Vec<Port>,
    by_name: BTreeMap<String, PortId>,
    handle: *mut c_void,
    free: FreeFn,
    eval: EvalFn,
    set: SetFn,
    get: GetFn,
    clock: Option<PortId>,
    /// Receive clocks (`rx_clk`, `<e>_rx_clk`): [`Model::tick`] raises them with `clk`.
    rx_clocks: Vec<PortId>,
    words: Vec<u32>,
    /// Rising clock edges so far.
    pub cycle: u64,
    _library: Library,
}

impl Model {
    /// Verilates `top` from `file` (or reuses the cached build) and instantiates it. A port
    /// named `clk` becomes the clock [`Model::tick`] drives, with every receive clock.
    pub fn build(file: &Path, top: &str) -> Result<Model, CosimError> {
        let (library_path, ports) = build::build(file, top)?;
        // SAFETY: the library was built by `build` from the wrapper it generated, which exports
        // exactly these C functions with these signatures.
        unsafe {
            let library = Library::new(&library_path).map_err(|e| CosimError::Load(e.to_string()))?;
            let new: Symbol<NewFn> = library.get(b"weft_new").map_err(|e| CosimError::Load(e.to_string()))?;
            let free: FreeFn = *library.get(b"weft_free").map_err(|e| CosimError::Load(e.to_string()))?;
            let eval: EvalFn = *library.get(b"weft_eval").map_err(|e| CosimError::Load(e.to_string()))?;
            let set: SetFn = *library.get(b"weft_set").map_err(|e| CosimError::Load(e.to_string()))?;
            let get: GetFn = *library.get(b"weft_get").map_err(|e| CosimError::Load(e.to_string()))?;
            let handle = new();
            let by_name = ports.iter().enumerate().map(|(i, p)| (p.name.clone(), PortId(i))).collect::<BTreeMap<_, _>>();
            let clock = by_name.get("clk").copied();
            let rx_clocks = ports.iter().enumerate().filter(|(_, p)| p.direction == Direction::Input && is_receive_clock(&p.name)).map(|(i, _)| PortId(i)).collect();
            let widest = ports.iter().map(|p| p.width.div_ceil(32)).max().unwrap_or(1);
            let mut model = Model { ports, by_name, handle, free, eval, set, get, clock, rx_clocks, words: vec![0; widest], cycle: 0, _library: library };
            model.eval();
            Ok(model)
        }
    }

    /// Every top-level port, in declaration order.
    pub fn ports(&self) -> &[Port] {
        &self.ports
    }

    /// Looks a port up by name; a name the module does not have is [`CosimError::NoPort`].
    pub fn port(&self, name: &str) -> Result<PortId, CosimError> {
        self.by_name.get(name).copied().ok_or_else(|| CosimError::NoPort(name.to_string()))
    }

    /// Sets an input port of up to 64 bits (wider ports: the low 64 bits, the rest zero). Takes
    /// effect at the next [`Model::eval`]; panics on an output.
    pub fn set(&mut self, port: PortId, value: u64) {
        self.words.fill(0);
        self.words[0] = value as u32;
        if self.words.len() > 1 {
            self.words[1] = (value >> 32) as u32;
        }
        self.set_words_internal(port);
    }

    /// Sets an input port from 32-bit words, least significant first.
    pub fn set_words(&mut self, port: PortId, words: &[u32]) {
        self.words.fill(0);
        let n = words.len().min(self.words.len());
        self.words[..n].copy_from_slice(&words[..n]);
        self.set_words_internal(port);
    }

    fn set_words_internal(&mut self, port: PortId) {
        assert_eq!(self.ports[port.0].direction, Direction::Input, "{} is not an input", self.ports[port.0].name);
        // SAFETY: `words` holds at least as many words as the widest port.
        unsafe { (self.set)(self.handle, port.0 as i32, self.words.as_ptr()) }
    }

    /// Reads a port of up to 64 bits (wider ports: the low 64 bits).
    pub fn get(&mut self, port: PortId) -> u64 {
        let words = self.get_words(port);
        words[0] as u64 | (words.get(1).copied().unwrap_or(0) as u64) << 32
    }

    /// Reads a port as 32-bit words, least significant first.
    pub fn get_words(&mut self, port: PortId) -> &[u32] {
        let n = self.ports[port.0].width.div_ceil(32);
        self.words.fill(0);
        // SAFETY: as in `set_words_internal`.
        unsafe { (self.get)(self.handle, port.0 as i32, self.words.as_mut_ptr()) }
        &self.words[..n]
    }

    /// Settles combinational logic after inputs changed.
    pub fn eval(&mut self) {
        // SAFETY: `handle` is the live model created in `build`.
        unsafe { (self.eval)(self.handle) }
    }

    /// One rising and one falling edge of `clk` and of every receive clock (`rx_clk`,
    /// `<e>_rx_clk`) with it: the link partners share one oscillator. Their resets
    /// (`rx_rst`, `<e>_rx_rst`) are the caller's, like `rst`.
    pub fn tick(&mut self) {
        let clk = self.clock.expect("the module has no `clk` port");
        let mut clocks = self.rx_clocks.clone();
        clocks.push(clk);
        self.edges(&clocks);
    }

    /// One rising and one falling edge of each of `clocks`, all rising at the same instant (so
    /// every flop they drive samples values from before the edge); counts a cycle when `clk` is
    /// among them.
    pub fn edges(&mut self, clocks: &[PortId]) {
        self.eval();
        for &c in clocks {
            self.set(c, 1);
        }
        self.eval();
        for &c in clocks {
            self.set(c, 0);
        }
        self.eval();
        if self.clock.is_some_and(|clk| clocks.contains(&clk)) {
            self.cycle += 1;
        }
    }
}

impl Drop for Model {
    fn drop(&mut self) {
        // SAFETY: `handle` came from `weft_new` and is freed once.
        unsafe { (self.free)(self.handle) }
    }
}
