//! State machines: a register whose values are the variants of a fieldless enum
//! ([`StateEnum`], declared with [`state_enum!`](crate::state_enum)), changed by rules like any
//! [`Reg`].

use std::marker::PhantomData;

use super::signal::{Design, Reg, Sig};

/// The states of a state machine: a fieldless enum, first variant after reset. Implement it with
/// [`state_enum!`](crate::state_enum).
pub trait StateEnum: Copy {
    /// Number of states (variants).
    const COUNT: usize;
    /// The variants' names, in order (the Verilog's `localparam` names).
    const NAMES: &'static [&'static str];
    /// The state's value in the register: its variant's position, from 0.
    fn index(self) -> usize;
}

/// A state register over a [`StateEnum`].
#[derive(Clone, Copy)]
pub struct State<'d, E: StateEnum> {
    /// The underlying register (`reg.q` is the state's value, [`StateEnum::index`]).
    pub reg: Reg<'d>,
    _enum: PhantomData<E>,
}

impl<'d, E: StateEnum> State<'d, E> {
    /// High while in `state`.
    pub fn is(self, state: E) -> Sig<'d> {
        self.reg.q.eq(state.index() as u128)
    }
    /// Moves to `state` at the next edge when `cond` is high (later rules win).
    pub fn go_when(self, cond: Sig<'d>, state: E) -> State<'d, E> {
        self.reg.next_when(cond, state.index() as u128);
        self
    }
}

impl Design {
    /// A state register of a [`StateEnum`], in its first state after reset.
    pub fn state<E: StateEnum>(&self, name: &str) -> State<'_, E> {
        let width = (usize::BITS - (E::COUNT - 1).max(1).leading_zeros()) as usize;
        let reg = self.reg(name, width, 0);
        self.net().states.push(super::StateEncoding { reg: reg.q.wire, names: E::NAMES.to_vec() });
        State { reg, _enum: PhantomData }
    }
}

/// Declares a fieldless enum usable as the states of a [`State`] register: derives `Clone`,
/// `Copy`, `Debug`, `PartialEq`, `Eq` and implements [`StateEnum`].
///
/// ```
/// use weft_hdl::netlist::Design;
/// use weft_hdl::state_enum;
///
/// state_enum! {
///     enum Light { Red, Green }
/// }
///
/// let d = Design::new();
/// let go = d.input("go", 1);
/// let light = d.state::<Light>("light");
/// light.go_when(light.is(Light::Red) & go, Light::Green).go_when(light.is(Light::Green), Light::Red);
/// d.output("green", light.is(Light::Green));
/// let net = d.finish();
/// assert_eq!(net.register_bits(), 1);
/// ```
#[macro_export]
macro_rules! state_enum {
    ($(#[$meta:meta])* $vis:vis enum $name:ident { $($variant:ident),+ $(,)? }) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        $vis enum $name { $($variant),+ }
        impl $crate::netlist::StateEnum for $name {
            const COUNT: usize = [$(stringify!($variant)),+].len();
            const NAMES: &'static [&'static str] = &[$(stringify!($variant)),+];
            fn index(self) -> usize {
                self as usize
            }
        }
    };
}
