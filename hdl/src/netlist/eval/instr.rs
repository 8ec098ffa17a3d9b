//! The evaluator's instruction set: what `compile` produces and `semantics` executes.

/// Opcode of a compiled instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Code {
    Add,
    Sub,
    Mul,
    And,
    Or,
    Xor,
    Not,
    Shl,
    Shr,
    Eq,
    Ult,
    Slt,
    Mux,
    Concat,
    Slice,
    Lzc,
    Parity,
    MemRead,
}

/// One combinational node: the value in the slot of its program position is
/// `code(a, b, c)` (operand slots) masked to `width` bits. `aux` is the operand width for
/// `Slt`/`Lzc`, the low operand's width for `Concat`, the offset for `Slice` and the memory for
/// `MemRead`.
#[derive(Clone, Debug)]
pub(super) struct Instr {
    pub(super) a: u32,
    pub(super) b: u32,
    pub(super) c: u32,
    pub(super) aux: u32,
    pub(super) code: Code,
    pub(super) width: u32,
    /// The result and every operand fit in 64 bits: evaluated on the low words only.
    pub(super) narrow: bool,
    /// The result or an operand is wider than 128 bits: evaluated on whole values.
    pub(super) wide: bool,
}
