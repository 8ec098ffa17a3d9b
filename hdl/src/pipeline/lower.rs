//! The DAG onto a netlist: each operation starts when its last operand is ready (the operators
//! place themselves after their operands), with the operator generators of [`crate::float`]
//! and [`crate::fixed`]. Every value also has a *beat lag*: a value of lag `L` carries, in the
//! slot of input beat `j`, its value for beat `j − L`. Offsets raise lags ([`super::offsets`]),
//! and an operation first brings its operands to the largest of their lags through history
//! registers.

use std::collections::{BTreeMap, HashMap};
use std::rc::Rc;

use crate::Error;

use super::beats::Beats;
use super::types::{fixed_operation, Cmp, Type};
use super::{Kernel, Node, Stages, Value};
use crate::fixed::{FixedFormat, FixedOp};
use crate::float::convert::{compare, from_fixed, to_fixed, EQUAL, GREATER, LESS, UNORDERED};
use crate::float::ops::scale::{power_of_two, scale, SCALE_MAX_STAGES};
use crate::float::{FloatFormat, FloatOperator};
use crate::netlist::{Design, Netlist, Sig, Wire};
use crate::sig;

/// Stage counts of the non-float operators when [`Stages`] does not set them.
const COMPARE_STAGES: usize = 1;
const FIXED_STAGES: usize = 1;
const TO_FIXED_STAGES: usize = 1;
const FROM_FIXED_STAGES: usize = 2;

/// Lowers the DAG onto `net` over the input lane wires (a kernel without offsets); returns the
/// output wires, each filling its lane slot. The netlist moves into a design and back.
pub(super) fn datapath(k: &Kernel, net: &mut Netlist, inputs: &[Wire], stages: &Stages, operators: &mut BTreeMap<&'static str, usize>) -> Result<Vec<Wire>, Error> {
    let d = Design::new();
    *d.net() = std::mem::take(net);
    let lanes: Vec<Sig> = inputs.iter().map(|w| d.sig(*w)).collect();
    let outputs = Lowering::new(k, &d, stages, operators, None).run(&lanes).map(|values| values.iter().map(|(v, _)| v.wire).collect());
    *net = d.finish();
    outputs
}

pub(super) struct Lowering<'k, 'd, 'b> {
    pub k: &'k Kernel,
    pub d: &'d Design,
    pub stages: &'k Stages,
    pub operators: &'k mut BTreeMap<&'static str, usize>,
    /// Beat bookkeeping of a kernel with offsets.
    pub beats: Option<&'b mut Beats<'d>>,
    values: Vec<(Sig<'d>, usize)>,
    /// Nodes on a recurrence's loop: built without pipeline registers.
    in_loop: Vec<bool>,
    lags: Vec<usize>,
    /// The node being lowered lies on a loop.
    zero: bool,
    /// Index of the node being lowered.
    index: usize,
    /// Operator modules built so far, by operator, format and stages (one multiplier a kernel).
    modules: HashMap<(FloatOperator, FloatFormat, usize), (String, Rc<Netlist>)>,
}

impl<'k, 'd, 'b> Lowering<'k, 'd, 'b> {
    pub fn new(k: &'k Kernel, d: &'d Design, stages: &'k Stages, operators: &'k mut BTreeMap<&'static str, usize>, beats: Option<&'b mut Beats<'d>>) -> Self {
        Lowering { k, d, stages, operators, beats, values: vec![], in_loop: k.in_loop(), lags: k.lags(), zero: false, index: 0, modules: HashMap::new() }
    }

    /// The stage count of operator `name`: none on a recurrence's loop.
    fn stages_of(&self, name: &str, default: usize) -> usize {
        if self.zero {
            0
        } else {
            self.stages.get(name, default)
        }
    }

    /// The output values with their lags, named after their lanes (`<name>_term` for the
    /// per-beat terms of a vector sum) and extended to the lane slot.
    pub fn run(mut self, lanes: &[Sig<'d>]) -> Result<Vec<(Sig<'d>, usize)>, Error> {
        for (i, node) in self.k.nodes.iter().enumerate() {
            self.zero = self.in_loop[i];
            self.index = i;
            let v = match node {
                Node::Prev(Some(target), k) => {
                    let name = self.k.names.get(target).cloned().unwrap_or_else(|| format!("v{}", target.0));
                    let beats = self.beats.as_mut().ok_or_else(|| Error::Design("recurrences need the offsets wrapper".into()))?;
                    beats.recurrence(i, target.0, self.k.types[i].width(), self.lags[target.0], *k, &name)?
                }
                Node::Prev(None, _) => return Err(Error::Operand("a recurrence was never closed".into())),
                _ => self.node(node, self.k.types[i], lanes)?,
            };
            if let Some(beats) = &mut self.beats {
                beats.close(i, v.0)?;
            }
            if let (Some(beats), Some(name)) = (&mut self.beats, self.k.names.get(&Value(i))) {
                beats.name(v.0, name);
            }
            self.values.push(v);
        }
        let suffix = if self.k.per_vector { "_term" } else { "" };
        let slot = self.k.format.width();
        Ok(self
            .k
            .outputs
            .iter()
            .map(|(name, v)| {
                let (x, lag) = self.values[v.0];
                let x = match self.k.ty(*v) {
                    Type::Fixed(f) if f.signed && f.width < slot => self.at(&[x]).sext(slot),
                    _ if x.width < slot => self.at(&[x]).zext(slot),
                    _ => x,
                };
                (x.named(&format!("{name}{suffix}")), lag)
            })
            .collect())
    }

    /// A floating-point operator on `operands`: an instance of its module, named after the
    /// value it computes (`<value>_<operator>`), so that a pipeline's Verilog lists its
    /// operators and Verilator builds each kind once. Operators on a recurrence's loop (no
    /// stages) and inside a unit are built in place.
    fn operator(&mut self, op: FloatOperator, format: FloatFormat, stages: usize, operands: &[Wire]) -> Result<Wire, Error> {
        if stages == 0 || self.d.net().in_unit() {
            return op.build_with(&mut self.d.net(), format, stages, operands, self.stages.multiplier);
        }
        let (module, child) = match self.modules.get(&(op, format, stages)) {
            Some(m) => m.clone(),
            None => {
                let (module, net) = op.module_with(format, stages, self.stages.multiplier)?;
                let m = (module, Rc::new(net));
                self.modules.insert((op, format, stages), m.clone());
                m
            }
        };
        let value = self.k.names.get(&Value(self.index)).cloned().unwrap_or_else(|| format!("v{}", self.index));
        let inputs: Vec<(&str, Wire)> = ["a", "b"].into_iter().zip(operands.iter().copied()).collect();
        let outputs = self.d.net().stage_instance(&child, &module, &format!("{value}_{}", op.name()), &inputs, stages)?;
        Ok(outputs["y"])
    }

    fn count(&mut self, name: &'static str) {
        *self.operators.entry(name).or_default() += 1;
    }

    /// Places new logic after `xs`; returns the first.
    fn at(&self, xs: &[Sig<'d>]) -> Sig<'d> {
        self.d.net().start_after(&xs.iter().map(|x| x.wire).collect::<Vec<_>>());
        xs[0]
    }

    /// The operands' signals at one beat lag (the largest of theirs), and that lag.
    fn operands(&mut self, args: &[Value]) -> (Vec<Sig<'d>>, usize) {
        let lag = args.iter().map(|a| self.values[a.0].1).max().unwrap_or(0);
        let sigs = args
            .iter()
            .map(|a| {
                let (x, l) = self.values[a.0];
                match &mut self.beats {
                    Some(b) if l < lag => b.delay(x, lag - l, None),
                    _ => x,
                }
            })
            .collect();
        (sigs, lag)
    }

    fn node(&mut self, node: &Node, ty: Type, lanes: &[Sig<'d>]) -> Result<(Sig<'d>, usize), Error> {
        let d = self.d;
        let w = ty.width();
        let fixed_stages = self.stages_of("fixed", FIXED_STAGES);
        Ok(match node {
            Node::Input(lane) => (lanes[*lane], 0),
            Node::Const(bits) => (d.lit(*bits as u128, w), 0),
            Node::Neg(a) => {
                let (x, lag) = self.operands(&[*a]);
                match ty {
                    Type::Fixed(f) => (self.fixed(FixedOp::Sub, f, d.lit(0, w), x[0], fixed_stages)?, lag),
                    // Flips the sign bit.
                    _ => (self.at(&x) ^ (1u128 << (w - 1)), lag),
                }
            }
            Node::Op(op, args) => match self.power_of_two(*op, ty, args) {
                Some((i, k, negative)) => {
                    let (x, lag) = self.operands(&[args[i]]);
                    self.count("scale");
                    let stages = if self.zero { 0 } else { self.stages.of(FloatOperator::Mul).min(SCALE_MAX_STAGES) };
                    let result = scale(&mut d.net(), float(ty), stages, x[0].wire, k, negative)?;
                    (d.sig(result), lag)
                }
                None => {
                    let (x, lag) = self.operands(args);
                    self.count(op.name());
                    let operands: Vec<Wire> = x.iter().map(|s| s.wire).collect();
                    let stages = if self.zero { 0 } else { self.stages.of(*op) };
                    (d.sig(self.operator(*op, float(ty), stages, &operands)?), lag)
                }
            },
            Node::Fixed(op, a, b) => {
                let (x, lag) = self.operands(&[*a, *b]);
                let Type::Fixed(f) = ty else { unreachable!("fixed operation on {ty}") };
                (self.fixed(*op, f, x[0], x[1], fixed_stages)?, lag)
            }
            Node::Compare(cmp, a, b) => {
                let (x, lag) = self.operands(&[*a, *b]);
                (self.compare(*cmp, self.k.ty(*a), x[0], x[1])?, lag)
            }
            Node::Select(c, a, b) => {
                let (x, lag) = self.operands(&[*c, *a, *b]);
                (self.at(&x).mux(x[1], x[2]), lag)
            }
            Node::Min(a, b) | Node::Max(a, b) => {
                let (x, lag) = self.operands(&[*a, *b]);
                (self.min_max(matches!(node, Node::Min(..)), ty, x[0], x[1])?, lag)
            }
            Node::Abs(a) => {
                let (x, lag) = self.operands(&[*a]);
                let v = match ty {
                    Type::Fixed(f) if f.signed => {
                        let negated = self.fixed(FixedOp::Sub, f, d.lit(0, w), x[0], fixed_stages)?;
                        self.at(&[negated, x[0]]);
                        x[0].bit(w - 1).mux(negated, x[0])
                    }
                    Type::Fixed(_) => x[0],
                    _ => self.at(&x) & !(1u128 << (w - 1)) & ((1u128 << w) - 1),
                };
                (v, lag)
            }
            Node::Convert(a) => {
                let (x, lag) = self.operands(&[*a]);
                (self.convert(self.k.ty(*a), ty, x[0])?, lag)
            }
            Node::Offset(a, k) => {
                let (x, lag) = self.values[a.0];
                let beats = self.beats.as_mut().ok_or_else(|| Error::Design("stream offsets need the offsets wrapper".into()))?;
                beats.offset(x, lag, *k)?
            }
            Node::Prev(..) => unreachable!("recurrences are lowered in run"),
        })
    }

    /// For a float product with a constant `±2^k` operand: the other operand's index, k and
    /// the constant's sign (the scale operator replaces the multiplier).
    fn power_of_two(&self, op: FloatOperator, ty: Type, args: &[Value]) -> Option<(usize, i64, bool)> {
        let Type::Float(f) = ty else { return None };
        if op != FloatOperator::Mul {
            return None;
        }
        (0..2).rev().find_map(|c| match self.k.nodes[args[c].0] {
            Node::Const(bits) => power_of_two(f, bits as u128).map(|(k, negative)| (1 - c, k, negative)),
            _ => None,
        })
    }

    fn fixed(&mut self, op: FixedOp, f: FixedFormat, a: Sig<'d>, b: Sig<'d>, stages: usize) -> Result<Sig<'d>, Error> {
        self.count(match op {
            FixedOp::Add => "fixed add",
            FixedOp::Sub => "fixed sub",
            FixedOp::Mul => "fixed mul",
        });
        fixed_operation(op, f, f, f).build_sig(self.d, stages, a, b)
    }

    /// The comparison as a bool.
    fn compare(&mut self, cmp: Cmp, ty: Type, a: Sig<'d>, b: Sig<'d>) -> Result<Sig<'d>, Error> {
        let (lt, eq, gt) = match ty {
            Type::Float(f) => {
                let r = self.float_compare(f, a, b)?;
                let has = |bits: u128| (r & bits).any();
                return Ok(match cmp {
                    Cmp::Lt => has(LESS),
                    Cmp::Le => has(LESS | EQUAL),
                    Cmp::Gt => has(GREATER),
                    Cmp::Ge => has(GREATER | EQUAL),
                    Cmp::Eq => has(EQUAL),
                    Cmp::Ne => has(LESS | GREATER | UNORDERED),
                });
            }
            Type::Fixed(f) => {
                self.at(&[a, b]);
                if f.signed {
                    (a.slt(b), a.eq(b), b.slt(a))
                } else {
                    (a.lt(b), a.eq(b), b.lt(a))
                }
            }
            Type::Bool => return Err(Error::Operand("comparison of bools".into())),
        };
        Ok(match cmp {
            Cmp::Lt => lt,
            Cmp::Le => !gt,
            Cmp::Gt => gt,
            Cmp::Ge => !lt,
            Cmp::Eq => eq,
            Cmp::Ne => !eq,
        })
    }

    /// The 4-bit one-hot IEEE comparison, with the logic after it placed after it.
    fn float_compare(&mut self, f: FloatFormat, a: Sig<'d>, b: Sig<'d>) -> Result<Sig<'d>, Error> {
        self.count("compare");
        let r = compare(&mut self.d.net(), f, self.stages_of("compare", COMPARE_STAGES), a.wire, b.wire)?;
        let r = self.d.sig(r);
        self.at(&[r]);
        Ok(r)
    }

    /// Floats: NaN if either is NaN; of equal operands (±0) the one with the sign set for min,
    /// clear for max. Fixed point: by value.
    fn min_max(&mut self, min: bool, ty: Type, a: Sig<'d>, b: Sig<'d>) -> Result<Sig<'d>, Error> {
        match ty {
            Type::Float(f) => {
                let r = self.float_compare(f, a, b)?;
                let w = f.width();
                let sign = 1u128 << (w - 1);
                sig!(less = r.bit(0), equal = r.bit(1), unordered = r.bit(3));
                // Equal operands differ at most in the sign bit (±0).
                let tie = if min { a | (b & sign) } else { a & (b | !sign & ((1u128 << w) - 1)) };
                let (first, second) = if min { (a, b) } else { (b, a) };
                Ok(unordered.mux(f.quiet_nan(), less.mux(first, equal.mux(tie, second))))
            }
            Type::Fixed(f) => {
                self.at(&[a, b]);
                let lt = if f.signed { a.slt(b) } else { a.lt(b) };
                Ok(if min { lt.mux(a, b) } else { lt.mux(b, a) })
            }
            Type::Bool => Err(Error::Operand("min/max of bools".into())),
        }
    }

    fn convert(&mut self, from: Type, to: Type, x: Sig<'d>) -> Result<Sig<'d>, Error> {
        let d = self.d;
        let wire = match (from, to) {
            (Type::Float(f), Type::Fixed(x_f)) => {
                self.count("to fixed");
                to_fixed(&mut d.net(), f, x_f, super::types::FIXED_ROUNDING, self.stages_of("to_fixed", TO_FIXED_STAGES), x.wire)?
            }
            (Type::Fixed(x_f), Type::Float(f)) => {
                self.count("from fixed");
                from_fixed(&mut d.net(), f, x_f, self.stages_of("from_fixed", FROM_FIXED_STAGES), x.wire)?
            }
            (Type::Fixed(a), Type::Fixed(b)) => {
                self.count("fixed convert");
                let zero = d.lit(0, a.width);
                let stages = self.stages_of("fixed", FIXED_STAGES);
                return fixed_operation(FixedOp::Add, a, a, b).build_sig(d, stages, x, zero);
            }
            _ => return Err(Error::Operand(format!("conversion from {from} to {to} is not supported"))),
        };
        Ok(d.sig(wire))
    }
}

fn float(ty: Type) -> FloatFormat {
    match ty {
        Type::Float(f) => f,
        other => unreachable!("float operation on {other}"),
    }
}
