//! A design's ports adjusted for the public interface it is shipped with.

use super::{Netlist, Op};
use crate::Error;

impl Netlist {
    /// Makes port `name` `width` bits wide, for a public interface wider than the logic: an
    /// input's extra high bits are not read, an output's are zero.
    pub fn widen_port(&mut self, name: &str, width: usize) -> Result<(), Error> {
        let too_narrow = |had: usize| Error::Design(format!("port `{name}` is {had} bits; it cannot be widened to {width}"));
        if let Some(i) = self.nodes.iter().position(|n| matches!(&n.op, Op::Input(p) if p == name)) {
            let (had, stage) = (self.nodes[i].width, self.nodes[i].stage);
            if had > width {
                return Err(too_narrow(had));
            }
            if had == width {
                return Ok(());
            }
            let wide = self.push(Op::Input(name.to_string()), width, stage, Some(name.to_string()));
            self.nodes[i].op = Op::Slice(wide, 0);
            self.nodes[i].name = None;
            return Ok(());
        }
        let k = self.outputs.iter().position(|o| o.name == name).ok_or_else(|| Error::Design(format!("`{name}` is not a port")))?;
        let wire = self.outputs[k].wire;
        let (had, stage) = (self.width(wire), self.stage_of(wire));
        if had < width {
            let zero = self.constant(0, width - had);
            self.outputs[k].wire = self.push(Op::Concat(zero, wire), width, stage, None);
        } else if had > width {
            return Err(too_narrow(had));
        }
        Ok(())
    }
}
