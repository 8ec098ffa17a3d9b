//! Word-level synchronous netlists: the intermediate form of every generated block (floating-point
//! operators, pipelines, the link, the router, the node).
//!
//! A [`Netlist`] is a graph of bit-vector operations of explicit width (any width; constants
//! hold up to 128 significant bits and are zero-extended),
//! registers and memories, plus child netlists kept as instances ([`hierarchy`]). One description
//! gives the cycle-exact evaluation the built-in simulator runs ([`eval`], which flattens the
//! hierarchy) and readable hierarchical Verilog ([`verilog`]). Blocks are usually written with the
//! typed handle of [`signal`] rather than with the raw methods here.
//!
//! Registers and memories belong to a clock domain ([`domain`]): `clk`/`rst` unless a block
//! declares more. A value may cross domains only through a marked synchroniser.
//!
//! Pipelining is a construction aid: every node carries a *stage*. When a node at stage `s` uses
//! an operand produced at stage `s' < s`, the builder inserts `s - s'` registers (shared by all
//! users), so operands always meet in the same cycle. Operators mark the places where a register
//! may go with [`Cuts`]; the stage count chosen for an operator decides which places get one.
//!
//! A counter with an enable, simulated and written as Verilog:
//!
//! ```
//! use weft_hdl::netlist::{eval::Evaluator, verilog, Design};
//!
//! let d = Design::new();
//! let enable = d.input("enable", 1);
//! let count = d.reg("count", 8, 0);
//! count.next_when(enable, count.q + 1);
//! d.output("count", count.q);
//! let net = d.finish();
//!
//! let mut sim = Evaluator::new(net.clone());
//! sim.reset(1);
//! sim.set_input("enable", 1);
//! for _ in 0..3 {
//!     sim.settle();
//!     sim.clock(false);
//! }
//! sim.settle();
//! assert_eq!(sim.get_output("count"), 3);
//! assert!(verilog::module(&net, "counter").contains("module counter"));
//! ```

pub mod block;
mod branch;
mod buffers;
mod build;
pub mod crossing;
mod cuts;
pub mod domain;
pub mod eval;
mod fold;
pub mod hierarchy;
mod op;
mod parts;
mod ports;
pub mod signal;
mod state;
pub mod stream;
pub mod stream_check;
pub mod units;
pub mod vcd;
pub mod verilog;

use std::collections::HashMap;

pub use cuts::Cuts;
pub use domain::{Domain, Reset};
pub use hierarchy::Instance;
pub use op::Op;
pub use parts::Queue;
pub use signal::{Design, Mem, Operand, Reg, Sig, State, StateEnum};
pub use stream::{Axis, AxisShape, Inst, Sink, Source};
pub use units::Unit;

/// Handle to a node's output: its index in [`Netlist::nodes`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Wire(pub usize);

/// One node of a netlist: an operation and the bit-vector value it drives.
#[derive(Clone, Debug)]
pub struct Node {
    /// What the node computes.
    pub op: Op,
    /// Width of its value in bits, 1 or more.
    pub width: usize,
    /// Pipeline stage: clock cycles after the inputs at which the value is valid.
    pub stage: usize,
    /// Readable name for the generated Verilog.
    pub name: Option<String>,
    /// Clock domain of a register (an index into [`Netlist::domains`]; 0 is `clk`).
    pub domain: usize,
    /// A register that may sample a value of another domain: the first flop of a synchroniser.
    pub crossing: bool,
    /// The unit it was built in (see [`units`]), an index into [`Netlist::units`].
    pub unit: Option<usize>,
}

/// An output of the netlist: a named wire.
#[derive(Clone, Debug)]
pub struct Output {
    /// Port name in the Verilog.
    pub name: String,
    /// The value driven on the port.
    pub wire: Wire,
}

/// A memory of `depth` words of `width` bits with one synchronous write port (in `domain`) and
/// any number of asynchronous read ports ([`Op::MemRead`]); its contents have no reset.
#[derive(Clone, Debug)]
pub struct Memory {
    /// Name of the memory array in the Verilog.
    pub name: String,
    /// Word width in bits.
    pub width: usize,
    /// Number of words, a power of two of 2 or more.
    pub depth: usize,
    /// `(enable, address, data)`, set with [`Netlist::memory_write`].
    pub write: Option<(Wire, Wire, Wire)>,
    /// Clock domain of the write port (an index into [`Netlist::domains`]).
    pub domain: usize,
    /// Read from another domain (the storage of a clock-crossing FIFO): reads are not checked
    /// against the write domain.
    pub crossing: bool,
    /// The unit it was declared in (see [`units`]).
    pub unit: Option<usize>,
}

/// The named values of a state register (its `q` wire): value `k` is `names[k]`. The Verilog
/// declares them as `localparam`s and compares and assigns the register through them.
#[derive(Clone, Debug)]
pub struct StateEncoding {
    /// The state register's output.
    pub reg: Wire,
    /// Name of each value, in value order.
    pub names: Vec<&'static str>,
}

/// A state register made with [`Netlist::register`]: read `q` anywhere, give its next value once
/// with [`Netlist::drive`].
#[derive(Clone, Copy, Debug)]
pub struct Register {
    /// The register's output.
    pub q: Wire,
    d: Wire,
}

/// A word-level synchronous netlist: nodes, output ports, memories, child instances and clock
/// domains, built with the raw methods here or through a [`Design`].
#[derive(Clone, Debug)]
pub struct Netlist {
    /// Every node; a [`Wire`] indexes it.
    pub nodes: Vec<Node>,
    /// Output ports, in declaration order.
    pub outputs: Vec<Output>,
    /// Memories; [`Op::MemRead`] and the write ports index them.
    pub memories: Vec<Memory>,
    /// Child netlists kept as instances (see [`hierarchy`]).
    pub instances: Vec<Instance>,
    /// Clock domains; index 0 is `clk`/`rst`.
    pub domains: Vec<Domain>,
    /// Comment lines placed above the node created next (see [`Netlist::section`]).
    pub sections: Vec<(usize, String)>,
    /// State registers and the names of their values (see [`StateEncoding`]).
    pub states: Vec<StateEncoding>,
    /// Parts that become child modules when the design is finished (see [`units`]).
    pub units: Vec<Unit>,
    /// Kept as a model of its own by Verilator when instantiated (`/*verilator
    /// no_inline_module*/`): a large child used several times builds once instead of once per
    /// copy. Other tools read it as a comment.
    pub no_inline: bool,
    /// Every child module of this design is kept a model of its own by Verilator (a
    /// `verilator_config` block above the module): for a top with several copies of a large child
    /// defined in another file, which cannot carry [`Netlist::no_inline`] itself.
    pub no_inline_children: bool,
    /// Instantiated by its module name, which is defined in another file: a parent writes no
    /// module text for it (the simulation tops and wrappers around a node written on its own).
    pub defined_elsewhere: bool,
    /// Inputs declared `tri0` (outside Verilator): read as zero when an event-driven simulator's
    /// test bench leaves them undriven.
    pub pulled_down: Vec<String>,
    /// The unit nodes built now belong to.
    unit: Option<usize>,
    /// Enable of the registers the stage mechanism inserts (the pipeline's clock enable).
    pub enable: Option<Wire>,
    stage: usize,
    domain: usize,
    delays: HashMap<(Wire, usize), Wire>,
    consts: HashMap<(u128, usize), Wire>,
}

impl Default for Netlist {
    fn default() -> Netlist {
        Netlist {
            nodes: vec![],
            outputs: vec![],
            memories: vec![],
            instances: vec![],
            domains: vec![Domain::default()],
            sections: vec![],
            states: vec![],
            units: vec![],
            no_inline: false,
            no_inline_children: false,
            defined_elsewhere: false,
            pulled_down: vec![],
            unit: None,
            enable: None,
            stage: 0,
            domain: 0,
            delays: HashMap::new(),
            consts: HashMap::new(),
        }
    }
}

pub(crate) fn mask(width: usize) -> u128 {
    if width >= 128 {
        u128::MAX
    } else {
        (1u128 << width) - 1
    }
}

/// A port name the Verilog can use as it is: an identifier that is not a keyword.
fn is_port_name(name: &str) -> bool {
    name.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_') && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') && !verilog::KEYWORDS.contains(&name)
}

impl Netlist {
    /// An empty netlist with the one clock domain `clk`/`rst`.
    pub fn new() -> Netlist {
        Netlist::default()
    }

    /// Width of `w` in bits.
    pub fn width(&self, w: Wire) -> usize {
        self.nodes[w.0].width
    }

    /// Pipeline stage at which `w` is valid.
    pub fn stage_of(&self, w: Wire) -> usize {
        self.nodes[w.0].stage
    }

    /// Stage new nodes are placed at.
    pub fn stage(&self) -> usize {
        self.stage
    }

    /// Places new nodes at `stage`.
    pub fn set_stage(&mut self, stage: usize) {
        self.stage = stage;
    }

    /// Places new nodes where all of `wires` are available.
    pub fn start_after(&mut self, wires: &[Wire]) {
        self.stage = wires.iter().map(|w| self.stage_of(*w)).max().unwrap_or(0);
    }

    /// Starts a section: `title` becomes a comment above the Verilog of the nodes built next.
    pub fn section(&mut self, title: &str) {
        self.sections.push((self.nodes.len(), title.to_string()));
    }

    /// The constant value of `w`, if it is one.
    pub fn const_value(&self, w: Wire) -> Option<u128> {
        match self.nodes[w.0].op {
            Op::Const(v) => Some(v),
            _ => None,
        }
    }

    /// The value of `w` delayed to the current stage (registers inserted as needed).
    fn at_stage(&mut self, w: Wire) -> Wire {
        let from = self.stage_of(w);
        // Constants and the pipeline's clock enable hold for every stage at once.
        if from >= self.stage || matches!(self.nodes[w.0].op, Op::Const(_)) || self.enable == Some(w) {
            return w;
        }
        let target = self.stage;
        let mut current = w;
        for s in from + 1..=target {
            current = match self.delays.get(&(w, s)) {
                Some(r) => *r,
                None => {
                    let width = self.width(w);
                    let name = self.nodes[w.0].name.as_ref().map(|n| format!("{n}_d{}", s - from));
                    let enable = self.enable;
                    let r = self.push(Op::Reg { d: current, enable, reset: None }, width, s, name);
                    self.delays.insert((w, s), r);
                    r
                }
            };
        }
        self.stage = target;
        current
    }

    fn push(&mut self, op: Op, width: usize, stage: usize, name: Option<String>) -> Wire {
        assert!(width >= 1, "netlist node of width 0");
        let domain = self.domain;
        let unit = self.unit;
        self.nodes.push(Node { op, width, stage, name, domain, crossing: false, unit });
        Wire(self.nodes.len() - 1)
    }

    fn node(&mut self, op: Op, width: usize) -> Wire {
        if let Some(w) = fold::fold(self, &op, width) {
            return w;
        }
        let stage = self.stage;
        self.push(op, width, stage, None)
    }

    /// Gives `w` a readable name in the Verilog (the last name given wins; ports and constants
    /// keep theirs).
    pub fn name(&mut self, w: Wire, name: &str) -> Wire {
        if !matches!(self.nodes[w.0].op, Op::Input(_) | Op::Const(_)) {
            self.nodes[w.0].name = Some(name.to_string());
        }
        w
    }

    /// An input port of `width` bits at the current stage; panics unless `name` is a Verilog
    /// identifier that is not a keyword.
    pub fn input(&mut self, name: &str, width: usize) -> Wire {
        assert!(is_port_name(name), "netlist input `{name}`: a port name is letters, digits and `_`, not a Verilog keyword");
        let w = self.push(Op::Input(name.to_string()), width, self.stage, None);
        self.nodes[w.0].name = Some(name.to_string());
        w
    }

    /// An output port `name` driven by `w`; the name follows the rule of [`Netlist::input`].
    pub fn output(&mut self, name: &str, w: Wire) {
        assert!(is_port_name(name), "netlist output `{name}`: a port name is letters, digits and `_`, not a Verilog keyword");
        self.outputs.push(Output { name: name.to_string(), wire: w });
    }

    /// A constant of `width` bits (`value` masked to it); equal constants share one node.
    pub fn constant(&mut self, value: u128, width: usize) -> Wire {
        let value = value & mask(width);
        if let Some(w) = self.consts.get(&(value, width)) {
            return *w;
        }
        let w = self.push(Op::Const(value), width, 0, None);
        self.consts.insert((value, width), w);
        w
    }

    /// A register of `d` at the current stage (its output belongs to the next stage).
    pub fn reg(&mut self, d: Wire, enable: Option<Wire>, reset: Option<u128>) -> Wire {
        let d = self.at_stage(d);
        let width = self.width(d);
        let stage = self.stage + 1;
        self.push(Op::Reg { d, enable, reset }, width, stage, None)
    }

    /// A register whose output counts as the *current* stage: state carried from earlier beats
    /// (counters, history windows), not a pipeline delay.
    pub fn history(&mut self, d: Wire, enable: Option<Wire>, reset: Option<u128>) -> Wire {
        let width = self.width(d);
        let stage = self.stage;
        self.push(Op::Reg { d, enable, reset }, width, stage, None)
    }

    /// A placeholder for a value defined later; it is available at the current stage.
    pub fn forward(&mut self, width: usize) -> Wire {
        let stage = self.stage;
        self.push(Op::Forward(None), width, stage, None)
    }

    /// Defines a placeholder. No stage balancing happens across a forward edge: the caller
    /// makes sure the loop it closes holds a register.
    pub fn resolve(&mut self, placeholder: Wire, value: Wire) {
        assert_eq!(self.width(placeholder), self.width(value), "forward width differs");
        match &mut self.nodes[placeholder.0].op {
            Op::Forward(slot @ None) => *slot = Some(value),
            other => panic!("resolve on a node that is not an open forward: {other:?}"),
        }
    }

    /// A state register of `width` bits, loaded with `reset` by the synchronous reset; it takes
    /// the value given with [`Netlist::drive`] at every clock edge.
    pub fn register(&mut self, name: &str, width: usize, reset: u128) -> Register {
        let d = self.forward(width);
        let q = self.history(d, None, Some(reset & mask(width)));
        self.name(q, name);
        Register { q, d }
    }

    /// Sets the value a [`Register`] takes at the next clock edge.
    pub fn drive(&mut self, reg: Register, next: Wire) {
        self.resolve(reg.d, next);
    }

    /// `if cond { value } else { keep }` for a register's next value.
    pub fn hold_unless(&mut self, reg: Register, cond: Wire, value: Wire) {
        let next = self.mux(cond, value, reg.q);
        self.drive(reg, next);
    }

    /// Declares a memory in the current domain; returns its index for [`Netlist::memory_read`].
    pub fn memory(&mut self, name: &str, width: usize, depth: usize) -> usize {
        assert!(width >= 1 && depth.is_power_of_two() && depth >= 2, "memory {name}: {width} x {depth}");
        let domain = self.domain;
        let unit = self.unit;
        self.memories.push(Memory { name: name.to_string(), width, depth, write: None, domain, crossing: false, unit });
        self.memories.len() - 1
    }

    /// An asynchronous read port of memory `mem`; `addr` is `log2(depth)` bits (panics otherwise).
    pub fn memory_read(&mut self, mem: usize, addr: Wire) -> Wire {
        assert_eq!(1 << self.width(addr), self.memories[mem].depth, "memory {} address width", self.memories[mem].name);
        let addr = self.at_stage(addr);
        let width = self.memories[mem].width;
        let stage = self.stage;
        self.push(Op::MemRead { mem, addr }, width, stage, None)
    }

    /// The one write port of memory `mem`: `data` written at `addr` at the clock edge when
    /// `enable` is high; panics on a second port or a wrong data or address width.
    pub fn memory_write(&mut self, mem: usize, enable: Wire, addr: Wire, data: Wire) {
        assert!(self.memories[mem].write.is_none(), "memory {} has one write port", self.memories[mem].name);
        assert_eq!(self.width(data), self.memories[mem].width, "memory {} data width", self.memories[mem].name);
        assert_eq!(1 << self.width(addr), self.memories[mem].depth, "memory {} address width", self.memories[mem].name);
        self.memories[mem].write = Some((enable, addr, data));
    }

    /// Highest stage of any output: the pipeline latency in cycles.
    pub fn latency(&self) -> usize {
        self.outputs.iter().map(|o| self.stage_of(o.wire)).max().unwrap_or(0)
    }

    /// Delays every output to the same stage, so all leave in one cycle.
    pub fn balance_outputs(&mut self) {
        let latency = self.latency();
        for i in 0..self.outputs.len() {
            self.stage = latency;
            let w = self.outputs[i].wire;
            self.outputs[i].wire = self.at_stage(w);
        }
    }

    /// Bits held in registers, children included.
    pub fn register_bits(&self) -> usize {
        let own: usize = self.nodes.iter().filter(|n| matches!(n.op, Op::Reg { .. })).map(|n| n.width).sum();
        own + self.instances.iter().map(|i| i.module.register_bits()).sum::<usize>()
    }
}
