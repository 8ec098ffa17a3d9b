//! The operations a netlist node performs.

use super::Wire;

/// What a [`Node`](super::Node) computes. Combinational results are taken modulo `2^width` of
/// the node; operands are other nodes' outputs.
#[derive(Clone, Debug, PartialEq)]
pub enum Op {
    /// A value driven from outside (a port slice), set before evaluation.
    Input(String),
    /// A constant, zero-extended to the node's width.
    Const(u128),
    /// `a + b` (wrapping).
    Add(Wire, Wire),
    /// `a − b` (wrapping).
    Sub(Wire, Wire),
    /// Unsigned product; the result is as wide as both operands together.
    Mul(Wire, Wire),
    /// Bitwise AND.
    And(Wire, Wire),
    /// Bitwise OR.
    Or(Wire, Wire),
    /// Bitwise XOR.
    Xor(Wire, Wire),
    /// Bitwise NOT.
    Not(Wire),
    /// Logical left shift by a variable amount; shifting by the width or more gives zero.
    Shl(Wire, Wire),
    /// Logical right shift by a variable amount; shifting by the width or more gives zero.
    Shr(Wire, Wire),
    /// `a == b` (one bit).
    Eq(Wire, Wire),
    /// Unsigned `a < b` (one bit).
    Ult(Wire, Wire),
    /// Two's-complement `a < b` (one bit).
    Slt(Wire, Wire),
    /// `sel ? a : b`.
    Mux(Wire, Wire, Wire),
    /// `{hi, lo}`.
    Concat(Wire, Wire),
    /// `a[lo +: width]`.
    Slice(Wire, usize),
    /// Number of leading zeros (the width when the operand is zero).
    Lzc(Wire),
    /// XOR of all bits (one bit wide).
    Parity(Wire),
    /// Asynchronous read of memory `mem` (an index into [`Netlist::memories`](super::Netlist::memories)) at `addr`.
    MemRead {
        /// Index of the memory.
        mem: usize,
        /// Word address, `log2(depth)` bits.
        addr: Wire,
    },
    /// A register: `d` taken at the rising edge of its node's clock domain when `enable` is high;
    /// `reset` is loaded by the domain's synchronous reset (data registers have none).
    Reg {
        /// Next value.
        d: Wire,
        /// Clock enable (one bit); `None` loads at every edge.
        enable: Option<Wire>,
        /// Value after reset; `None` for a data register without reset.
        reset: Option<u128>,
    },
    /// A value defined later (feedback through registers); resolved with [`Netlist::resolve`](super::Netlist::resolve).
    Forward(Option<Wire>),
    /// Output `port` (a child output name, possibly a `name@lo` slice) of instance `inst`.
    InstanceOutput {
        /// Index into [`Netlist::instances`](super::Netlist::instances).
        inst: usize,
        /// The child's output port.
        port: String,
    },
}
