//! Recurrences: a value defined from its own earlier beats, `let s: T = s[-1] + x` — a running
//! sum, per vector (`s[-1]` is zero on a vector's first beat).
//!
//! In the DAG a recurrence is a placeholder [`Node::Prev`] made before the value it reads
//! ([`Kernel::recurrence`]) and closed on it afterwards ([`Kernel::close_recurrence`]). The
//! loop — every node between the placeholder and its target that depends on the placeholder —
//! must complete within one cycle to take one beat per cycle, so its operations are built with
//! no pipeline registers (0 stages: a float adder in a loop is one long combinational path;
//! fixed point is short). A loop may not look ahead (a future offset inside it is an error).
//! In hardware the placeholder is history registers on the target at the target's stage
//! ([`super::offsets`]), the loop's non-loop operands arriving there balanced as usual.

use super::{Kernel, Node, Type, Value};
use crate::Error;

impl Kernel {
    /// A placeholder for a value of type `ty` defined later, read `k` beats earlier
    /// (1..=MAX_OFFSET); close it with [`Kernel::close_recurrence`].
    pub fn recurrence(&mut self, ty: Type, k: i64) -> Result<Value, Error> {
        if !(1..=super::types::MAX_OFFSET).contains(&k) {
            return Err(Error::Parameter(format!("recurrence offset -{k}: a recurrence reads earlier beats, allowed -{}..=-1", super::types::MAX_OFFSET)));
        }
        self.nodes.push(Node::Prev(None, k));
        self.types.push(ty);
        Ok(Value(self.nodes.len() - 1))
    }

    /// Closes placeholder `prev` on `target`, the value it reads `k` beats earlier.
    pub fn close_recurrence(&mut self, prev: Value, target: Value) -> Result<(), Error> {
        let Node::Prev(None, _) = self.nodes[prev.0] else { panic!("close_recurrence on a node that is not an open recurrence") };
        if self.ty(prev) != self.ty(target) {
            return Err(Error::Operand(format!("type mismatch: the recurrence is {}, its value {}", self.ty(prev), self.ty(target))));
        }
        if let Node::Prev(slot, _) = &mut self.nodes[prev.0] {
            *slot = Some(target);
        }
        let lags = self.lags_fixpoint();
        if lags.iter().zip(self.lags_once(&lags)).any(|(a, b)| *a != b) {
            return Err(Error::Design("a recurrence cannot look ahead: a future offset (`x[+k]`) lies inside its loop".into()));
        }
        Ok(())
    }

    /// One pass of beat lags, recurrences taking the lags `prev` gives their targets.
    fn lags_once(&self, prev: &[usize]) -> Vec<usize> {
        let mut lags: Vec<usize> = vec![];
        for node in &self.nodes {
            let of = |v: &Value| lags[v.0];
            let lag = match node {
                Node::Input(_) | Node::Const(_) => 0,
                Node::Prev(target, _) => target.map_or(0, |t| prev.get(t.0).copied().unwrap_or(0)),
                Node::Offset(a, k) => of(a) + (*k).max(0) as usize,
                Node::Op(_, args) => args.iter().map(of).max().unwrap_or(0),
                Node::Neg(a) | Node::Abs(a) | Node::Convert(a) => of(a),
                Node::Fixed(_, a, b) | Node::Compare(_, a, b) | Node::Min(a, b) | Node::Max(a, b) => of(a).max(of(b)),
                Node::Select(c, a, b) => of(c).max(of(a)).max(of(b)),
            };
            lags.push(lag);
        }
        lags
    }

    /// Lags with recurrences first at 0, then at their targets' lags (a loop without
    /// look-ahead keeps its target's lag).
    fn lags_fixpoint(&self) -> Vec<usize> {
        let first = self.lags_once(&[]);
        self.lags_once(&first)
    }

    /// The beat lag of every node: how many beats after a beat its value is known.
    pub fn lags(&self) -> Vec<usize> {
        self.lags_fixpoint()
    }

    /// Whether each node lies on a recurrence's loop (built without pipeline registers).
    pub fn in_loop(&self) -> Vec<bool> {
        let n = self.nodes.len();
        let mut on = vec![false; n];
        for (p, node) in self.nodes.iter().enumerate() {
            let Node::Prev(Some(target), _) = node else { continue };
            // Nodes after p depending on p ...
            let mut depends = vec![false; n];
            depends[p] = true;
            for i in p + 1..=target.0 {
                depends[i] = self.operands(i).iter().any(|v| depends[v.0]);
            }
            // ... that the target depends on.
            let mut needed = vec![false; n];
            needed[target.0] = true;
            for i in (p..=target.0).rev() {
                if needed[i] {
                    for v in self.operands(i) {
                        needed[v.0] = true;
                    }
                }
            }
            for i in p + 1..=target.0 {
                on[i] |= depends[i] && needed[i];
            }
        }
        on
    }

    /// The operands of node `i` (a recurrence has none: its target is read beats later).
    pub fn operands(&self, i: usize) -> Vec<Value> {
        match &self.nodes[i] {
            Node::Input(_) | Node::Const(_) | Node::Prev(..) => vec![],
            Node::Op(_, args) => args.clone(),
            Node::Neg(a) | Node::Abs(a) | Node::Convert(a) | Node::Offset(a, _) => vec![*a],
            Node::Fixed(_, a, b) | Node::Compare(_, a, b) | Node::Min(a, b) | Node::Max(a, b) => vec![*a, *b],
            Node::Select(c, a, b) => vec![*c, *a, *b],
        }
    }
}
