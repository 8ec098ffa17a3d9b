//! The typed signal handle: how blocks are written.
//!
//! A [`Design`] owns a [`Netlist`] under construction; a [`Sig`] is a value in it that knows its
//! width. Operators build logic (`& | ^ ! + -`), methods the rest (`eq`, `lt`, `bits`, `cat`,
//! `mux`, …); a width mismatch panics with the caller's file and line. Constants fold as the
//! design is built.
//!
//! Registers read as rules ([`Reg`]): `busy.set_when(start).clear_when(done)`. A register holds
//! its value unless a rule fires; **when several rules fire in one cycle, the one written last
//! wins**. State machines use a [`StateEnum`] (see [`state_enum!`](crate::state_enum)):
//! `state.is(Tx::Idle)`, `state.go_when(start, Tx::Send)`.
//!
//! Names reach the Verilog: `.named("crc_ok")`, or [`sig!`](crate::sig) to take the Rust
//! binding's name: `sig!(crc_ok = crc.eq(expected));`.

use std::cell::{RefCell, RefMut};
use std::ops;
use std::panic::Location;

pub use super::state::{State, StateEnum};
use super::{Netlist, Register, Wire};

/// A netlist under construction, with the register rules not yet applied.
pub struct Design {
    net: RefCell<Netlist>,
    rules: RefCell<Vec<(Register, Vec<(Wire, Wire)>)>>,
    /// Instance inputs to be defined, with what they are (for the message when one is not).
    pub(super) open: RefCell<Vec<(Wire, String)>>,
}

/// A value of `width` bits in a [`Design`].
#[derive(Clone, Copy)]
pub struct Sig<'d> {
    /// The netlist node driving the value.
    pub wire: Wire,
    /// Width in bits.
    pub width: usize,
    design: &'d Design,
}

impl std::fmt::Debug for Sig<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Sig({}, {} bits)", self.wire.0, self.width)
    }
}

/// What may stand where a [`Sig`] is expected: a signal, or an integer constant that takes the
/// width of the signal it meets.
pub trait Operand<'d> {
    /// The value as a signal; an integer becomes a constant of `like`'s width (masked to it).
    fn to_sig(self, like: Sig<'d>) -> Sig<'d>;
    /// The signal itself, when this is one (not an integer).
    fn as_sig(&self) -> Option<Sig<'d>> {
        None
    }
}

impl<'d> Operand<'d> for Sig<'d> {
    fn to_sig(self, _: Sig<'d>) -> Sig<'d> {
        self
    }
    fn as_sig(&self) -> Option<Sig<'d>> {
        Some(*self)
    }
}

macro_rules! int_operand {
    ($($t:ty),*) => {$(
        impl<'d> Operand<'d> for $t {
            fn to_sig(self, like: Sig<'d>) -> Sig<'d> {
                like.design.lit(self as u128, like.width)
            }
        }
    )*};
}
int_operand!(u128, u64, u32, u16, u8, usize, i64, i32, bool);

#[track_caller]
fn same_width(what: &str, a: Sig, b: Sig) {
    if a.width != b.width {
        let at = Location::caller();
        panic!("{what}: operands of {} and {} bits, at {}:{}", a.width, b.width, at.file(), at.line());
    }
}

impl Default for Design {
    fn default() -> Design {
        Design::new()
    }
}

impl Design {
    /// An empty design (one clock domain, `clk`/`rst`).
    pub fn new() -> Design {
        Design { net: RefCell::new(Netlist::new()), rules: RefCell::new(vec![]), open: RefCell::new(vec![]) }
    }

    /// The netlist, for the raw builder methods.
    pub fn net(&self) -> RefMut<'_, Netlist> {
        self.net.borrow_mut()
    }

    /// Wraps a wire of the netlist.
    pub fn sig(&self, wire: Wire) -> Sig<'_> {
        let width = self.net.borrow().width(wire);
        Sig { wire, width, design: self }
    }

    fn make(&self, f: impl FnOnce(&mut Netlist) -> Wire) -> Sig<'_> {
        let w = f(&mut self.net.borrow_mut());
        self.sig(w)
    }

    /// An input port of `width` bits; see [`Netlist::input`].
    pub fn input(&self, name: &str, width: usize) -> Sig<'_> {
        self.make(|n| n.input(name, width))
    }

    /// An output port driven by `value`; see [`Netlist::output`].
    pub fn output(&self, name: &str, value: Sig) {
        self.net.borrow_mut().output(name, value.wire);
    }

    /// A constant.
    pub fn lit(&self, value: u128, width: usize) -> Sig<'_> {
        self.make(|n| n.constant(value, width))
    }

    /// Starts a section: a comment above the Verilog of what is built next.
    pub fn section(&self, title: &str) {
        self.net.borrow_mut().section(title);
    }

    /// A placeholder for a value defined later with [`Sig::define`] (a loop through registers).
    pub fn later(&self, width: usize) -> Sig<'_> {
        self.make(|n| n.forward(width))
    }

    /// `{parts[0], parts[1], …}`: the first part is the most significant.
    #[track_caller]
    pub fn cat<'d>(&'d self, parts: &[Sig<'d>]) -> Sig<'d> {
        let mut acc = self.sig(parts[0].wire);
        for p in &parts[1..] {
            acc = acc.cat(*p);
        }
        acc
    }

    /// A state register of `width` bits, `reset` after the synchronous reset; it holds its value
    /// unless one of its rules fires.
    pub fn reg(&self, name: &str, width: usize, reset: u128) -> Reg<'_> {
        let r = self.net.borrow_mut().register(name, width, reset);
        let mut rules = self.rules.borrow_mut();
        rules.push((r, vec![]));
        Reg { q: self.sig(r.q), index: rules.len() - 1 }
    }

    /// A memory of `depth` words of `width` bits (one synchronous write port, asynchronous reads).
    pub fn memory(&self, name: &str, width: usize, depth: usize) -> Mem<'_> {
        let index = self.net.borrow_mut().memory(name, width, depth);
        Mem { index, design: self }
    }

    /// The netlist, with every register's rules applied. Panics on an instance input left
    /// undefined, naming it.
    pub fn finish(self) -> Netlist {
        let rules = self.rules.take();
        let mut net = self.net.into_inner();
        for (w, what) in self.open.take() {
            if matches!(net.nodes[w.0].op, super::Op::Forward(None)) {
                panic!("{what} is not connected");
            }
        }
        for (r, rules) in rules {
            // A register's next-value logic belongs with it, in its unit.
            let outer = net.set_unit(net.nodes[r.q.0].unit);
            let mut next = r.q;
            for (cond, value) in rules {
                next = net.mux(cond, value, next);
            }
            net.drive(r, next);
            net.set_unit(outer);
        }
        net.extract_units()
    }

    /// Builds `body` as a unit: what it builds becomes the child module `module`, instantiated
    /// as `instance`, in the Verilog (see [`super::units`]); the built-in simulator sees the
    /// same logic.
    pub fn unit<T>(&self, instance: &str, module: &str, body: impl FnOnce() -> T) -> T {
        let previous = self.net().enter_unit(instance, module);
        let value = body();
        self.net().leave_unit(previous);
        value
    }
}

impl<'d> Sig<'d> {
    fn un(self, f: impl FnOnce(&mut Netlist, Wire) -> Wire) -> Sig<'d> {
        self.design.make(|n| f(n, self.wire))
    }

    #[track_caller]
    fn bin(self, what: &str, other: Sig<'d>, f: impl FnOnce(&mut Netlist, Wire, Wire) -> Wire) -> Sig<'d> {
        same_width(what, self, other);
        self.design.make(|n| f(n, self.wire, other.wire))
    }

    /// Names the value in the Verilog (the last name given wins).
    pub fn named(self, name: &str) -> Sig<'d> {
        self.design.net.borrow_mut().name(self.wire, name);
        self
    }

    /// The name given to the value, if any.
    pub fn name(self) -> Option<String> {
        self.design.net.borrow().nodes[self.wire.0].name.clone()
    }

    /// Defines a placeholder made with [`Design::later`].
    #[track_caller]
    pub fn define(self, value: impl Operand<'d>) {
        let value = value.to_sig(self);
        same_width("define", self, value);
        self.design.net.borrow_mut().resolve(self.wire, value.wire);
    }

    /// A constant in this signal's design.
    pub fn lit(self, value: u128, width: usize) -> Sig<'d> {
        self.design.lit(value, width)
    }

    /// The constant value, if this is one.
    pub fn const_value(self) -> Option<u128> {
        self.design.net.borrow().const_value(self.wire)
    }

    /// One bit: `self == other`.
    #[track_caller]
    pub fn eq(self, other: impl Operand<'d>) -> Sig<'d> {
        let o = other.to_sig(self);
        self.bin("eq", o, Netlist::eq)
    }
    /// One bit: `self != other`.
    #[track_caller]
    pub fn ne(self, other: impl Operand<'d>) -> Sig<'d> {
        !self.eq(other)
    }
    /// Unsigned `<`.
    #[track_caller]
    pub fn lt(self, other: impl Operand<'d>) -> Sig<'d> {
        let o = other.to_sig(self);
        self.bin("lt", o, Netlist::ult)
    }
    /// Unsigned `>=`.
    #[track_caller]
    pub fn ge(self, other: impl Operand<'d>) -> Sig<'d> {
        !self.lt(other)
    }
    /// Unsigned `>`.
    #[track_caller]
    pub fn gt(self, other: impl Operand<'d>) -> Sig<'d> {
        let o = other.to_sig(self);
        o.lt(self)
    }
    /// Unsigned `<=`.
    #[track_caller]
    pub fn le(self, other: impl Operand<'d>) -> Sig<'d> {
        !self.gt(other)
    }
    /// Two's-complement `<`.
    #[track_caller]
    pub fn slt(self, other: impl Operand<'d>) -> Sig<'d> {
        let o = other.to_sig(self);
        self.bin("slt", o, Netlist::slt)
    }
    /// Full product (as wide as both operands together).
    pub fn mul(self, other: Sig<'d>) -> Sig<'d> {
        self.design.make(|n| n.mul(self.wire, other.wire))
    }
    /// `self[lo +: width]`.
    #[track_caller]
    pub fn bits(self, lo: usize, width: usize) -> Sig<'d> {
        if lo + width > self.width {
            let at = Location::caller();
            panic!("bits({lo}, {width}) of a {}-bit value, at {}:{}", self.width, at.file(), at.line());
        }
        self.un(|n, a| n.slice(a, lo, width))
    }
    /// Bit `index`, one bit wide.
    #[track_caller]
    pub fn bit(self, index: usize) -> Sig<'d> {
        self.bits(index, 1)
    }
    /// `{self, lo}`.
    pub fn cat(self, lo: Sig<'d>) -> Sig<'d> {
        self.design.make(|n| n.concat(self.wire, lo.wire))
    }
    /// `self ? a : b` for a one-bit `self`; an integer branch takes the other branch's width.
    #[track_caller]
    pub fn mux(self, a: impl Operand<'d>, b: impl Operand<'d>) -> Sig<'d> {
        let at = Location::caller();
        let (a, b) = match (a.as_sig(), b.as_sig()) {
            (Some(x), _) => (x, b.to_sig(x)),
            (None, Some(y)) => (a.to_sig(y), y),
            (None, None) => panic!("mux of two integers has no width, at {}:{}", at.file(), at.line()),
        };
        if self.width != 1 {
            panic!("mux: the select is {} bits, at {}:{}", self.width, at.file(), at.line());
        }
        same_width("mux", a, b);
        self.design.make(|n| n.mux(self.wire, a.wire, b.wire))
    }
    /// Zero-extended to `width` bits (at least its own).
    #[track_caller]
    pub fn zext(self, width: usize) -> Sig<'d> {
        self.un(|n, a| n.zext(a, width))
    }
    /// Sign-extended to `width` bits (at least its own).
    pub fn sext(self, width: usize) -> Sig<'d> {
        self.un(|n, a| n.sext(a, width))
    }
    /// Zero-extends or truncates.
    pub fn resize(self, width: usize) -> Sig<'d> {
        self.un(|n, a| n.resize(a, width))
    }
    /// One bit: every bit clear.
    pub fn is_zero(self) -> Sig<'d> {
        self.un(Netlist::is_zero)
    }
    /// Any bit set.
    pub fn any(self) -> Sig<'d> {
        self.un(Netlist::nonzero)
    }
    /// Every bit set.
    pub fn all(self) -> Sig<'d> {
        self.un(Netlist::all_ones)
    }
    /// One bit: XOR of all bits.
    pub fn parity(self) -> Sig<'d> {
        self.un(Netlist::parity)
    }
    /// Leading zeros.
    pub fn lzc(self) -> Sig<'d> {
        self.un(Netlist::lzc)
    }
    /// Logical `self << amount`, same width; an amount of the width or more gives zero.
    pub fn shl(self, amount: Sig<'d>) -> Sig<'d> {
        self.design.make(|n| n.shl(self.wire, amount.wire))
    }
    /// Logical `self >> amount`, same width; an amount of the width or more gives zero.
    pub fn shr(self, amount: Sig<'d>) -> Sig<'d> {
        self.design.make(|n| n.shr(self.wire, amount.wire))
    }
    /// `self << amount` by a constant, same width (bits shifted out are lost).
    pub fn shl_const(self, amount: usize) -> Sig<'d> {
        self.un(|n, a| n.shl_const(a, amount))
    }
    /// The value one clock later (a data register, no reset).
    pub fn delayed(self) -> Sig<'d> {
        self.un(|n, a| n.history(a, None, None))
    }
}

macro_rules! binary_op {
    ($trait:ident, $method:ident, $sym:literal, $build:path) => {
        impl<'d, T: Operand<'d>> ops::$trait<T> for Sig<'d> {
            type Output = Sig<'d>;
            #[track_caller]
            fn $method(self, other: T) -> Sig<'d> {
                let o = other.to_sig(self);
                self.bin($sym, o, $build)
            }
        }
    };
}
binary_op!(BitAnd, bitand, "&", Netlist::and);
binary_op!(BitOr, bitor, "|", Netlist::or);
binary_op!(BitXor, bitxor, "^", Netlist::xor);
binary_op!(Add, add, "+", Netlist::add);
binary_op!(Sub, sub, "-", Netlist::sub);

impl<'d> ops::Not for Sig<'d> {
    type Output = Sig<'d>;
    fn not(self) -> Sig<'d> {
        self.un(Netlist::not)
    }
}

/// A memory made with [`Design::memory`].
#[derive(Clone, Copy)]
pub struct Mem<'d> {
    /// Index into [`Netlist::memories`].
    pub index: usize,
    design: &'d Design,
}

impl<'d> Mem<'d> {
    /// The write port: `data` at `addr` at the next edge when `enable` is high.
    pub fn write(self, enable: Sig<'d>, addr: Sig<'d>, data: Sig<'d>) {
        self.design.net.borrow_mut().memory_write(self.index, enable.wire, addr.wire, data.wire);
    }
    /// An asynchronous read port.
    pub fn read(self, addr: Sig<'d>) -> Sig<'d> {
        self.design.make(|n| n.memory_read(self.index, addr.wire))
    }
    /// A registered read port: the word at `addr` appears at the next edge when `enable` is
    /// high (and holds otherwise). A data register without reset right at the read, which
    /// synthesis folds into a block RAM's output.
    pub fn read_registered(self, enable: Sig<'d>, addr: Sig<'d>, name: &str) -> Sig<'d> {
        let word = self.read(addr);
        let q = self.design.net.borrow_mut().reg(word.wire, Some(enable.wire), None);

        self.design.sig(q).named(name)
    }
}

/// A state register with rules; read it through `q`.
#[derive(Clone, Copy)]
pub struct Reg<'d> {
    /// The register's output.
    pub q: Sig<'d>,
    index: usize,
}

impl<'d> Reg<'d> {
    /// Takes `value` at the next edge when `cond` is high (later rules win).
    #[track_caller]
    pub fn next_when(self, cond: Sig<'d>, value: impl Operand<'d>) -> Reg<'d> {
        let value = value.to_sig(self.q);
        same_width("next_when", self.q, value);
        if cond.width != 1 {
            let at = Location::caller();
            panic!("register rule: the condition is {} bits, at {}:{}", cond.width, at.file(), at.line());
        }
        self.q.design.rules.borrow_mut()[self.index].1.push((cond.wire, value.wire));
        self
    }
    /// Takes `value` at every edge (write it first: later rules override it).
    #[track_caller]
    pub fn next(self, value: impl Operand<'d>) -> Reg<'d> {
        let one = self.q.design.lit(1, 1);
        self.next_when(one, value)
    }
    /// Becomes all ones when `cond` is high.
    #[track_caller]
    pub fn set_when(self, cond: Sig<'d>) -> Reg<'d> {
        self.next_when(cond, u128::MAX)
    }
    /// Becomes zero when `cond` is high.
    #[track_caller]
    pub fn clear_when(self, cond: Sig<'d>) -> Reg<'d> {
        self.next_when(cond, 0)
    }
}

/// `sig!(name = expr);` binds `name` to the value of `expr` and gives it that name in the
/// Verilog.
#[macro_export]
macro_rules! sig {
    ($($name:ident = $value:expr),+ $(,)?) => {
        $(let $name = ($value).named(stringify!($name));)+
    };
}
