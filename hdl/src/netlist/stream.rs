//! AXI4-Stream in netlist designs: one bundle with a shape, checked when two ends are joined.
//!
//! A [`Source`] is a stream the design reads (a module input stream, or an output stream of a
//! child instance); a [`Sink`] is one it drives (a module output stream, or an input stream of a
//! child). [`Design::connect`] joins a source to a sink: it checks the data width, `tkeep`,
//! `tlast` and `tuser` and names both ends when they differ; a source into a sink that is
//! `always_ready` (credit-driven, no `tready`) sees ready high. Data wider than a netlist value
//! (128 bits) travels as chunks, re-cut as the far end needs.
//!
//! Child instances ([`Design::instance`]) give their ports by name: [`Inst::input`] (a value to
//! define), [`Inst::output`], and the streams [`Inst::source`] / [`Inst::sink`]; a port that does
//! not exist is refused with the list of those that do, and an input left undefined is refused
//! when the design is finished.

use std::collections::BTreeMap;
use std::rc::Rc;

use super::signal::{Design, Sig};
use super::verilog::{ports, split_port};
use super::{Netlist, Op, MAX_WIDTH};

/// What a stream carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AxisShape {
    /// `tdata` bits.
    pub data: usize,
    /// `tkeep` present (`data / 8` bits).
    pub keep: bool,
    pub last: bool,
    /// `tuser` bits (0: none).
    pub user: usize,
    /// No `tready`: the receiver always accepts (its sender holds credits).
    pub always_ready: bool,
}

impl AxisShape {
    pub fn data(data: usize) -> AxisShape {
        AxisShape { data, keep: false, last: true, user: 0, always_ready: false }
    }
    pub fn with_keep(self) -> AxisShape {
        AxisShape { keep: true, ..self }
    }
    pub fn with_user(self, user: usize) -> AxisShape {
        AxisShape { user, ..self }
    }
    pub fn always_ready(self) -> AxisShape {
        AxisShape { always_ready: true, ..self }
    }
    fn chunks(self) -> Vec<usize> {
        (0..self.data).step_by(MAX_WIDTH).map(|lo| (self.data - lo).min(MAX_WIDTH)).collect()
    }
}

/// The signals of one stream; `data` in chunks, least significant first.
#[derive(Clone, Debug)]
pub struct Axis<'d> {
    /// Where the stream is, for messages (`router.m_axis_xp`).
    pub name: String,
    pub shape: AxisShape,
    pub data: Vec<Sig<'d>>,
    pub keep: Option<Sig<'d>>,
    pub last: Option<Sig<'d>>,
    pub user: Option<Sig<'d>>,
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
    /// `tdata` of a stream of at most 128 bits.
    pub fn data(&self) -> Sig<'d> {
        assert_eq!(self.0.data.len(), 1, "`{}`: data in {} chunks", self.0.name, self.0.data.len());
        self.0.data[0]
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

    /// Drives a stream of at most 128 bits: `tdata`, `tvalid` and `tlast` (when the shape has it).
    pub fn drive(&self, data: Sig<'d>, valid: Sig<'d>, last: Sig<'d>) {
        assert_eq!(self.0.data.len(), 1, "`{}`: data in {} chunks", self.0.name, self.0.data.len());
        self.0.data[0].define(data);
        self.0.valid.define(valid);
        if let Some(l) = self.0.last {
            l.define(last);
        }
    }
}

impl Design {
    fn axis_signals<'d>(&'d self, name: &str, shape: AxisShape, make: &dyn Fn(&str, usize) -> Sig<'d>, ready: Option<Sig<'d>>) -> Axis<'d> {
        let mut lo = 0;
        let chunks = shape.chunks();
        let one = chunks.len() == 1;
        let data = chunks
            .into_iter()
            .map(|w| {
                let s = make(&if one { format!("{name}_tdata") } else { format!("{name}_tdata@{lo}") }, w);
                lo += w;
                s
            })
            .collect();
        Axis {
            name: name.to_string(),
            shape,
            data,
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
        Sink(self.axis_signals(name, shape, &|n, w| {
            let s = self.later(w);
            self.output(n, s);
            s
        }, ready))
    }

    /// Joins `from` to `to`; a difference of shape is an error naming both ends.
    pub fn connect<'d>(&'d self, from: &Source<'d>, to: &Sink<'d>) -> Result<(), String> {
        let (a, b) = (&from.0, &to.0);
        let fail = |what: String| Err(format!("connect `{}` → `{}`: {what}", a.name, b.name));
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
        for (k, chunk) in b.data.iter().enumerate() {
            let lo: usize = b.data[..k].iter().map(|c| c.width).sum();
            chunk.define(self.bits_of(&a.data, lo, chunk.width));
        }
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

    /// Bits `lo..lo+width` of a value given in chunks (least significant first).
    pub fn bits_of<'d>(&'d self, chunks: &[Sig<'d>], lo: usize, width: usize) -> Sig<'d> {
        let mut parts = vec![];
        let mut base = 0;
        for c in chunks {
            let (from, to) = (lo.max(base), (lo + width).min(base + c.width));
            if from < to {
                parts.push(c.bits(from - base, to - from));
            }
            base += c.width;
        }
        parts.reverse();
        self.cat(&parts)
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
        let outputs = self
            .net()
            .instance_clocked(child, module_name, name, &|port| inputs.get(port).map(|s| s.wire), clock)
            .expect("every input has a placeholder");
        let outputs = outputs.into_iter().map(|(k, w)| (k, self.sig(w))).collect();
        self.open.borrow_mut().extend(inputs.iter().map(|(p, s)| (s.wire, format!("input `{p}` of `{name}` ({module_name})"))));
        Inst { name: name.to_string(), child: child.clone(), inputs, outputs }
    }
}

/// A child instance: its ports by name.
pub struct Inst<'d> {
    pub name: String,
    child: Rc<Netlist>,
    inputs: BTreeMap<String, Sig<'d>>,
    outputs: BTreeMap<String, Sig<'d>>,
}

impl<'d> Inst<'d> {
    fn names(&self, output: bool) -> String {
        ports(&self.child).iter().filter(|p| p.output == output).map(|p| p.name.as_str()).collect::<Vec<_>>().join(", ")
    }

    fn pieces(map: &BTreeMap<String, Sig<'d>>, port: &str) -> Vec<(usize, Sig<'d>)> {
        let mut v: Vec<(usize, Sig<'d>)> = map.iter().filter(|(k, _)| split_port(k).0 == port).map(|(k, s)| (split_port(k).1, *s)).collect();
        v.sort_by_key(|(lo, _)| *lo);
        v
    }

    /// The placeholder of input `port` (one netlist value): define it with [`Sig::define`].
    pub fn input(&self, port: &str) -> Sig<'d> {
        match Self::pieces(&self.inputs, port).as_slice() {
            [(0, s)] => *s,
            [] => panic!("`{}` has no input `{port}`; its inputs: {}", self.name, self.names(false)),
            _ => panic!("input `{port}` of `{}` is wider than one value: use input_chunks", self.name),
        }
    }

    /// The placeholders of a wide input, least significant first.
    pub fn input_chunks(&self, port: &str) -> Vec<Sig<'d>> {
        let v: Vec<Sig<'d>> = Self::pieces(&self.inputs, port).into_iter().map(|(_, s)| s).collect();
        assert!(!v.is_empty(), "`{}` has no input `{port}`; its inputs: {}", self.name, self.names(false));
        v
    }

    pub fn output(&self, port: &str) -> Sig<'d> {
        match Self::pieces(&self.outputs, port).as_slice() {
            [(0, s)] => *s,
            [] => panic!("`{}` has no output `{port}`; its outputs: {}", self.name, self.names(true)),
            _ => panic!("output `{port}` of `{}` is wider than one value: use output_chunks", self.name),
        }
    }

    /// Whether the child has an output `port`.
    pub fn has_output(&self, port: &str) -> bool {
        !Self::pieces(&self.outputs, port).is_empty()
    }

    pub fn output_chunks(&self, port: &str) -> Vec<Sig<'d>> {
        let v: Vec<Sig<'d>> = Self::pieces(&self.outputs, port).into_iter().map(|(_, s)| s).collect();
        assert!(!v.is_empty(), "`{}` has no output `{port}`; its outputs: {}", self.name, self.names(true));
        v
    }

    fn stream(&self, prefix: &str, shape: AxisShape, out: bool) -> Axis<'d> {
        let (vals, holes) = if out { (&self.outputs, &self.inputs) } else { (&self.inputs, &self.outputs) };
        let get = |map: &BTreeMap<String, Sig<'d>>, sig: &str, want: bool| -> Option<Sig<'d>> {
            let found = map.get(&format!("{prefix}_{sig}")).copied();
            assert_eq!(found.is_some(), want, "`{}.{prefix}`: {sig} {} in the child, {} in the shape", self.name, if found.is_some() { "present" } else { "absent" }, if want { "present" } else { "absent" });
            found
        };
        let data = Self::pieces(vals, &format!("{prefix}_tdata")).into_iter().map(|(_, s)| s).collect::<Vec<_>>();
        let width: usize = data.iter().map(|s| s.width).sum();
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
