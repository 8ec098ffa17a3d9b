//! Handles of the streams the harness drives and reads on each simulated device, by signal
//! name: a node's local (IntraNode) ports and the link streams between routers.

use crate::link::Device;

/// A local (IntraNode) port's handles: the stream into the node (`s_axis_p<p>_*`) and the one out
/// of it (`m_axis_p<p>_*`), by signal.
#[derive(Clone, Copy, Debug)]
pub(super) struct LocalPorts {
    pub(super) s_tdata: usize,
    pub(super) s_tlast: usize,
    pub(super) s_tvalid: usize,
    pub(super) s_tready: usize,
    pub(super) m_tdata: usize,
    pub(super) m_tkeep: usize,
    pub(super) m_tlast: usize,
    pub(super) m_tvalid: usize,
    pub(super) m_tready: usize,
}

impl LocalPorts {
    /// The handles of the streams `s` (into the device) and `m` (out of it) of `device`.
    pub(super) fn find(device: &mut dyn Device, s: &str, m: &str) -> LocalPorts {
        let mut port = |stream: &str, signal: &str| device.port(&format!("{stream}_{signal}"));
        LocalPorts {
            s_tdata: port(s, "tdata"),
            s_tlast: port(s, "tlast"),
            s_tvalid: port(s, "tvalid"),
            s_tready: port(s, "tready"),
            m_tdata: port(m, "tdata"),
            m_tkeep: port(m, "tkeep"),
            m_tlast: port(m, "tlast"),
            m_tvalid: port(m, "tvalid"),
            m_tready: port(m, "tready"),
        }
    }
}
/// A link stream's handles at one router: the flit signals, in the order `FLIT` names them, and
/// the credit signal (in at the sender, out at the receiver).
pub(super) struct LinkPorts {
    pub(super) flit: [usize; 5],
    pub(super) credit: usize,
}

/// The signals of a flit on a link stream.
pub(super) const FLIT: [&str; 5] = ["tdata", "tkeep", "tlast", "tuser", "tvalid"];

impl LinkPorts {
    pub(super) fn find(device: &mut dyn Device, stream: &str) -> LinkPorts {
        LinkPorts { flit: FLIT.map(|x| device.port(&format!("{stream}_{x}"))), credit: device.port(&format!("{stream}_credit")) }
    }
}
