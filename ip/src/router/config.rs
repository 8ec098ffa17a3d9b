//! Parameters of a router, checked before any hardware is built.

use super::header;
use crate::Error;

/// Largest torus dimension: a coordinate field of the header is 6 bits.
pub const MAX_DIM: usize = 64;
/// Largest number of IntraNode ports: `dst_port` is 4 bits.
pub const MAX_LOCAL_PORTS: usize = 16;

/// The parameters of a torus router; [`RouterConfig::validate`] checks them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RouterConfig {
    /// IntraNode ports (local kernels), 1..=16.
    pub local_ports: usize,
    /// Torus size in X, Y, Z, each 1..=64. A dimension of size 1 has no ports; a dimension of
    /// size 2 has only the + link (minimal routing never uses the − one there).
    pub dims: [usize; 3],
    /// Datapath width in bits: 128, 256 or 512.
    pub width: usize,
    /// Buffer of each virtual channel of each input port, in flits (a power of two, at least
    /// one maximum-size packet: virtual cut-through).
    pub vc_buffer_flits: usize,
    /// Longest payload a packet may carry, in bytes: 0 ..= 16383 (the header's 14-bit `length`).
    pub max_packet_bytes: usize,
    /// Dateline virtual-channel switching on every ring. Only a test turns it off, to show that
    /// dimension-order routing on a torus deadlocks without it.
    pub dateline: bool,
}

impl Default for RouterConfig {
    fn default() -> Self {
        RouterConfig { local_ports: 2, dims: [4, 2, 1], width: 128, vc_buffer_flits: 128, max_packet_bytes: 1024, dateline: true }
    }
}

fn range(field: &str, value: usize, lo: usize, hi: usize) -> Result<(), Error> {
    if (lo..=hi).contains(&value) {
        Ok(())
    } else {
        Err(Error::Config(format!("router `{field}` = {value}: allowed range is {lo} ..= {hi}")))
    }
}

/// The six InterNode directions, in the order of the simulation top's `inject_err` bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Direction {
    /// 0 = X, 1 = Y, 2 = Z.
    pub dim: usize,
    /// Travel towards higher coordinates.
    pub plus: bool,
}

impl Direction {
    /// X+, X−, Y+, Y−, Z+, Z−: index `d` of `inject_err` bit `6·n + d`.
    pub const ALL: [Direction; 6] = [
        Direction { dim: 0, plus: true },
        Direction { dim: 0, plus: false },
        Direction { dim: 1, plus: true },
        Direction { dim: 1, plus: false },
        Direction { dim: 2, plus: true },
        Direction { dim: 2, plus: false },
    ];

    /// Port name: `xp`, `xn`, `yp`, …
    pub fn name(self) -> String {
        format!("{}{}", ["x", "y", "z"][self.dim], if self.plus { "p" } else { "n" })
    }

    /// The same dimension, the other way.
    pub fn opposite(self) -> Direction {
        Direction { dim: self.dim, plus: !self.plus }
    }

    /// Index in [`Direction::ALL`] (the `d` of `inject_err` bit `6·n + d`).
    pub fn index(self) -> usize {
        2 * self.dim + usize::from(!self.plus)
    }
}

impl RouterConfig {
    /// Checks every field against its allowed range (the buffer must be a power of two from
    /// one maximum-size packet, and at least 2, up to 4096 flits); the error names the field.
    pub fn validate(&self) -> Result<(), Error> {
        range("local_ports", self.local_ports, 1, MAX_LOCAL_PORTS)?;
        for (d, name) in ["dims.x", "dims.y", "dims.z"].iter().enumerate() {
            range(name, self.dims[d], 1, MAX_DIM)?;
        }
        if ![128, 256, 512].contains(&self.width) {
            return Err(Error::Config(format!("router `width` = {}: allowed values are 128, 256 and 512", self.width)));
        }
        range("max_packet_bytes", self.max_packet_bytes, 0, header::MAX_LENGTH)?;
        let need = self.max_packet_flits();
        if !self.vc_buffer_flits.is_power_of_two() || self.vc_buffer_flits < need.max(2) || self.vc_buffer_flits > 4096 {
            return Err(Error::Config(format!(
                "router `vc_buffer_flits` = {}: must be a power of two in {} ..= 4096 (virtual cut-through needs room for a whole packet of `max_packet_bytes` = {}: {need} flits)",
                self.vc_buffer_flits,
                need.max(2).next_power_of_two(),
                self.max_packet_bytes
            )));
        }
        Ok(())
    }

    /// Payload bytes per flit.
    pub fn flit_bytes(&self) -> usize {
        self.width / 8
    }

    /// Flits of a packet with `length` payload bytes (the header flit included).
    pub fn packet_flits(&self, length: usize) -> usize {
        1 + length.div_ceil(self.flit_bytes())
    }

    /// Flits of a packet with `max_packet_bytes` of payload, the header flit included.
    pub fn max_packet_flits(&self) -> usize {
        self.packet_flits(self.max_packet_bytes)
    }

    /// The InterNode directions this router has.
    pub fn directions(&self) -> Vec<Direction> {
        Direction::ALL.into_iter().filter(|d| self.dims[d.dim] > 2 || self.dims[d.dim] == 2 && d.plus).collect()
    }

    /// Nodes of the torus.
    pub fn nodes(&self) -> usize {
        self.dims.iter().product()
    }

    /// Coordinates of node `n = x + X·(y + Y·z)`.
    pub fn coords(&self, n: usize) -> [usize; 3] {
        [n % self.dims[0], n / self.dims[0] % self.dims[1], n / (self.dims[0] * self.dims[1])]
    }

    /// The number `n = x + X·(y + Y·z)` of the node at coordinates `c`.
    pub fn node(&self, c: [usize; 3]) -> usize {
        c[0] + self.dims[0] * (c[1] + self.dims[1] * c[2])
    }

    /// The neighbour of node `n` in direction `d`.
    pub fn neighbour(&self, n: usize, d: Direction) -> usize {
        let mut c = self.coords(n);
        let k = self.dims[d.dim];
        c[d.dim] = if d.plus { (c[d.dim] + 1) % k } else { (c[d.dim] + k - 1) % k };
        self.node(c)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn impossible_configurations_name_the_field_and_range() {
        let ok = RouterConfig::default();
        assert!(ok.validate().is_ok());
        let e = RouterConfig { local_ports: 0, ..ok.clone() }.validate().unwrap_err();
        assert_eq!(e, crate::Error::Config("router `local_ports` = 0: allowed range is 1 ..= 16".into()));
        let e = RouterConfig { dims: [4, 0, 1], ..ok.clone() }.validate().unwrap_err();
        assert_eq!(e, crate::Error::Config("router `dims.y` = 0: allowed range is 1 ..= 64".into()));
        let e = RouterConfig { dims: [65, 1, 1], ..ok.clone() }.validate().unwrap_err().to_string();
        assert!(e.contains("dims.x") && e.contains("1 ..= 64"), "{e}");
        let e = RouterConfig { width: 64, ..ok.clone() }.validate().unwrap_err().to_string();
        assert!(e.contains("`width` = 64"), "{e}");
        // 1024 B at 16 B per flit is 65 flits: a 64-flit buffer cannot hold a whole packet.
        let e = RouterConfig { vc_buffer_flits: 64, ..ok.clone() }.validate().unwrap_err().to_string();
        assert!(e.contains("vc_buffer_flits") && e.contains("65 flits") && e.contains("128 ..= 4096"), "{e}");
        let e = RouterConfig { max_packet_bytes: 20000, ..ok.clone() }.validate().unwrap_err().to_string();
        assert!(e.contains("max_packet_bytes") && e.contains("16383"), "{e}");
    }

    #[test]
    fn size_two_dimensions_have_only_the_plus_link() {
        let c = RouterConfig { dims: [4, 2, 1], ..Default::default() };
        let names: Vec<String> = c.directions().into_iter().map(|d| d.name()).collect();
        assert_eq!(names, ["xp", "xn", "yp"]);
        assert_eq!(c.neighbour(3, Direction::ALL[0]), 0);
        assert_eq!(c.neighbour(0, Direction::ALL[1]), 3);
        assert_eq!(c.coords(6), [2, 1, 0]);
    }
}
