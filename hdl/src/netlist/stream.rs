//! AXI4-Stream in netlist designs: one bundle with a shape, checked when two ends are joined.
//!
//! A [`Source`] is a stream the design reads (a module input stream, or an output stream of a
//! child instance); a [`Sink`] is one it drives (a module output stream, or an input stream of a
//! child). [`Design::connect`] joins a source to a sink: it checks the data width, `tkeep`,
//! `tlast` and `tuser` and names both ends when they differ; a source into a sink that is
//! `always_ready` (credit-driven, no `tready`) sees ready high. `tdata` is one value of any width.
//!
//! Child instances ([`Design::instance`]) give their ports by name: [`Inst::input`] (a value to
//! define), [`Inst::output`], and the streams [`Inst::source`] / [`Inst::sink`]; a port that does
//! not exist is refused with the list of those that do, and an input left undefined is refused
//! when the design is finished.

use crate::Error;
use std::collections::BTreeMap;
use std::rc::Rc;

use super::signal::{Design, Sig};
use super::verilog::ports;
use super::{Netlist, Op};

/// What a stream carries.
///
/// ```
/// use weft_hdl::netlist::{AxisShape, Design};
///
/// let d = Design::new();
/// let shape = AxisShape::data(64).with_keep(); // tdata[63:0], tkeep[7:0], tlast
/// let input = d.axis_in("s_axis", shape);
/// let output = d.axis_out("m_axis", shape);
/// let narrow = d.axis_out("m_axis_narrow", AxisShape::data(32));
/// assert!(d.connect(&input, &narrow).is_err()); // 64-bit data into 32-bit data
/// d.connect(&input, &output).unwrap();
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AxisShape {
    /// `tdata` bits.
    pub data: usize,
    /// `tkeep` present (`data / 8` bits).
    pub keep: bool,
    /// `tlast` present.
    pub last: bool,
    /// `tuser` bits (0: none).
    pub user: usize,
    /// No `tready`: the receiver always accepts (its sender holds credits).
    pub always_ready: bool,
}

impl AxisShape {
    /// `data` bits of `tdata` with `tlast`, `tready`, and no `tkeep` or `tuser`.
    pub fn data(data: usize) -> AxisShape {
        AxisShape { data, keep: false, last: true, user: 0, always_ready: false }
    }
    /// The same shape with `tkeep` (`data` must be a multiple of 8).
    pub fn with_keep(self) -> AxisShape {
        AxisShape { keep: true, ..self }
    }
    /// The same shape with `user` bits of `tuser`.
    pub fn with_user(self, user: usize) -> AxisShape {
        AxisShape { user, ..self }
    }
    /// The same shape without `tready` (credit-driven: the receiver always accepts).
    pub fn always_ready(self) -> AxisShape {
        AxisShape { always_ready: true, ..self }
    }
}

/// The signals of one stream.
#[derive(Clone, Debug)]
pub struct Axis<'d> {
    /// Where the stream is, for messages (`router.m_axis_xp`).
    pub name: String,
    /// What the stream carries.
    pub shape: AxisShape,
    /// `tdata`.
    pub data: Sig<'d>,
    /// `tkeep`, when the shape has it.
    pub keep: Option<Sig<'d>>,
    /// `tlast`, when the shape has it.
    pub last: Option<Sig<'d>>,
    /// `tuser`, when the shape has it.
    pub user: Option<Sig<'d>>,
    /// `tvalid`.
    pub valid: Sig<'d>,
    /// `None` when always ready.
    pub ready: Option<Sig<'d>>,
}

/// A stream this design reads: every signal is a value except `ready`, which it defines.
#[derive(Clone, Debug)]
pub struct Source<'d>(pub Axis<'d>);

/// A stream this design drives: `ready` is a value, every other signal a placeholder it defines.
#[derive(Clone, Debug)]
pub struct Sink<'d>(pub Axis<'d>);

impl<'d> Source<'d> {
    /// `tdata`.
    pub fn data(&self) -> Sig<'d> {
        self.0.data
    }

    /// Defines `tready`.
    pub fn ready(&self, ready: Sig<'d>) {
        self.0.ready.expect("an always-ready stream has no tready").define(ready);
    }

    /// A beat moves this cycle.
    pub fn fire(&self) -> Sig<'d> {
        match self.0.ready {
            Some(r) => self.0.valid & r,
            None => self.0.valid,
        }
    }
}

impl<'d> Sink<'d> {
    /// The receiver's `tready` (high for an always-ready stream).
    pub fn ready(&self) -> Sig<'d> {
        self.0.ready.unwrap_or_else(|| self.0.valid.lit(1, 1))
    }

    /// Drives `tdata`, `tvalid` and `tlast` (when the shape has it).
    pub fn drive(&self, data: Sig<'d>, valid: Sig<'d>, last: Sig<'d>) {
        self.0.data.define(data);
        self.0.valid.define(valid);
        if let Some(l) = self.0.last {
            l.define(last);
        }
    }

    /// Drives a stream that never sends: every signal zero.
    pub fn idle(&self) {
        let a = &self.0;
        a.data.define(0u32);
        for s in [a.keep, a.last, a.user].into_iter().flatten() {
            s.define(0u32);
        }
        a.valid.define(0u32);
    }
}

impl Design {
    fn axis_signals<'d>(&'d self, name: &str, shape: AxisShape, make: &dyn Fn(&str, usize) -> Sig<'d>, ready: Option<Sig<'d>>) -> Axis<'d> {
        Axis {
            name: name.to_string(),
            shape,
            data: make(&format!("{name}_tdata"), shape.data),
            keep: shape.keep.then(|| make(&format!("{name}_tkeep"), shape.data / 8)),
            last: shape.last.then(|| make(&format!("{name}_tlast"), 1)),
            user: (shape.user > 0).then(|| make(&format!("{name}_tuser"), shape.user)),
            valid: make(&format!("{name}_tvalid"), 1),
            ready,
        }
    }

    /// A module input stream `<name>_*`.
    pub fn axis_in(&self, name: &str, shape: AxisShape) -> Source<'_> {
        let ready = (!shape.always_ready).then(|| {
            let r = self.later(1);
            self.output(&format!("{name}_tready"), r);
            r
        });
        Source(self.axis_signals(name, shape, &|n, w| self.input(n, w), ready))
    }

    /// A module output stream `<name>_*`.
    pub fn axis_out(&self, name: &str, shape: AxisShape) -> Sink<'_> {
        let ready = (!shape.always_ready).then(|| self.input(&format!("{name}_tready"), 1));
        Sink(self.axis_signals(
            name,
            shape,
            &|n, w| {
                let s = self.later(w);
                self.output(n, s);
                s
            },
            ready,
        ))
    }

    /// Joins `from` to `to`; a difference of shape is an error naming both ends.
    pub fn connect<'d>(&'d self, from: &Source<'d>, to: &Sink<'d>) -> Result<(), Error> {
        let (a, b) = (&from.0, &to.0);
        let fail = |what: String| Err(Error::Design(format!("connect `{}` → `{}`: {what}", a.name, b.name)));
        if a.shape.data != b.shape.data {
            return fail(format!("{}-bit data into {}-bit data", a.shape.data, b.shape.data));
        }
        if a.shape.user != b.shape.user {
            return fail(format!("{}-bit tuser into {}-bit tuser", a.shape.user, b.shape.user));
        }
        if b.shape.last && !a.shape.last {
            return fail("the sink needs tlast, the source has none".into());
        }
        if b.shape.keep && !a.shape.keep {
            return fail("the sink needs tkeep, the source has none".into());
        }
        if a.shape.always_ready && !b.shape.always_ready {
            return fail("the source cannot be held (always ready), the sink may hold it".into());
        }
        b.data.define(a.data);
        for (x, y) in [(a.keep, b.keep), (a.last, b.last), (a.user, b.user)] {
            if let (Some(x), Some(y)) = (x, y) {
                y.define(x);
            }
        }
        b.valid.define(a.valid);
        if let Some(r) = a.ready {
            r.define(b.ready.unwrap_or_else(|| self.lit(1, 1)));
        }
        Ok(())
    }

    /// A child design kept as an instance called `name` of module `module_name`.
    pub fn instance<'d>(&'d self, child: &Rc<Netlist>, module_name: &str, name: &str) -> Inst<'d> {
        self.instance_clocked(child, module_name, name, &|clock| clock.to_string())
    }

    /// [`Design::instance`] with each child clock domain in the domain `clock` names (see
    /// [`Netlist::instance_clocked`]).
    pub fn instance_clocked<'d>(&'d self, child: &Rc<Netlist>, module_name: &str, name: &str, clock: &dyn Fn(&str) -> String) -> Inst<'d> {
        let mut inputs: BTreeMap<String, Sig<'d>> = BTreeMap::new();
        for node in &child.nodes {
            if let Op::Input(port) = &node.op {
                inputs.insert(port.clone(), self.later(node.width));
            }
        }
        let outputs = self.net().instance_clocked(child, module_name, name, &|port| inputs.get(port).map(|s| s.wire), clock).expect("every input has a placeholder");
        let outputs = outputs.into_iter().map(|(k, w)| (k, self.sig(w))).collect();
        self.open.borrow_mut().extend(inputs.iter().map(|(p, s)| (s.wire, format!("input `{p}` of `{name}` ({module_name})"))));
        Inst { name: name.to_string(), child: child.clone(), inputs, outputs }
    }
}

/// A child instance: its ports by name.
pub struct Inst<'d> {
    /// Instance name in the parent.
    pub name: String,
    child: Rc<Netlist>,
    inputs: BTreeMap<String, Sig<'d>>,
    outputs: BTreeMap<String, Sig<'d>>,
}

impl<'d> Inst<'d> {
    fn names(&self, output: bool) -> String {
        ports(&self.child).iter().filter(|p| p.output == output).map(|p| p.name.as_str()).collect::<Vec<_>>().join(", ")
    }

    /// The placeholder of input `port`: define it with [`Sig::define`].
    pub fn input(&self, port: &str) -> Sig<'d> {
        *self.inputs.get(port).unwrap_or_else(|| panic!("`{}` has no input `{port}`; its inputs: {}", self.name, self.names(false)))
    }

    /// The value of output `port`; panics, listing the outputs, when there is none.
    pub fn output(&self, port: &str) -> Sig<'d> {
        *self.outputs.get(port).unwrap_or_else(|| panic!("`{}` has no output `{port}`; its outputs: {}", self.name, self.names(true)))
    }

    /// Whether the child has an output `port`.
    pub fn has_output(&self, port: &str) -> bool {
        self.outputs.contains_key(port)
    }

    fn stream(&self, prefix: &str, shape: AxisShape, out: bool) -> Axis<'d> {
        let (vals, holes) = if out { (&self.outputs, &self.inputs) } else { (&self.inputs, &self.outputs) };
        let get = |map: &BTreeMap<String, Sig<'d>>, sig: &str, want: bool| -> Option<Sig<'d>> {
            let found = map.get(&format!("{prefix}_{sig}")).copied();
            assert_eq!(
                found.is_some(),
                want,
                "`{}.{prefix}`: {sig} {} in the child, {} in the shape",
                self.name,
                if found.is_some() { "present" } else { "absent" },
                if want { "present" } else { "absent" }
            );
            found
        };
        let data = get(vals, "tdata", true).unwrap();
        let width = data.width;
        assert_eq!(width, shape.data, "`{}.{prefix}`: the child has {width}-bit tdata, the shape {} bits", self.name, shape.data);
        Axis {
            name: format!("{}.{prefix}", self.name),
            shape,
            data,
            keep: get(vals, "tkeep", shape.keep),
            last: get(vals, "tlast", shape.last),
            user: get(vals, "tuser", shape.user > 0),
            valid: get(vals, "tvalid", true).unwrap(),
            ready: get(holes, "tready", !shape.always_ready),
        }
    }

    /// An output stream `<prefix>_*` of the child.
    pub fn source(&self, prefix: &str, shape: AxisShape) -> Source<'d> {
        Source(self.stream(prefix, shape, true))
    }

    /// An input stream `<prefix>_*` of the child.
    pub fn sink(&self, prefix: &str, shape: AxisShape) -> Sink<'d> {
        Sink(self.stream(prefix, shape, false))
    }
}
