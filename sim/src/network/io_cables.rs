//! The board's IO channels between nodes whose links are `io_channels`: one model per
//! direction of each channel, the sender's `m_axis_<e>_ch<k>_*` into the receiver's
//! `s_axis_<facing>_ch<k>_*`.

use weft_ip::router::{Direction, RouterConfig};

use crate::io_channel::{IoChannel, BUFFER_WORDS};
use crate::link::{scalar, Device, Value};

/// One direction of one IO channel between two nodes.
pub(super) struct IoCable {
    pub(super) from: usize,
    pub(super) direction: Direction,
    pub(super) to: usize,
    /// The cable is pulled: the receiver is offered nothing, the words wait.
    pub(super) pulled: bool,
    tx: [usize; 3],
    rx: [usize; 3],
    channel: IoChannel,
}

impl IoCable {
    /// The channels leaving node `n` in direction `e`, when its link there is over IO channels.
    pub(super) fn between<D: Device>(devices: &mut [D], config: &RouterConfig, n: usize, e: Direction, latency: usize) -> Option<Vec<IoCable>> {
        if !devices[n].has_port(&format!("m_axis_{}_ch0_tdata", e.name())) {
            return None;
        }
        let to = config.neighbour(n, e);
        let facing = e.opposite();
        let cables = (0..config.width / 256)
            .map(|k| {
                let [m, s] = [format!("m_axis_{}_ch{k}", e.name()), format!("s_axis_{}_ch{k}", facing.name())];
                let tx = ["tdata", "tvalid", "tready"].map(|p| devices[n].port(&format!("{m}_{p}")));
                let rx = ["tdata", "tvalid", "tready"].map(|p| devices[to].port(&format!("{s}_{p}")));
                IoCable { from: n, direction: e, to, pulled: false, tx, rx, channel: IoChannel::new(latency, BUFFER_WORDS) }
            })
            .collect();
        Some(cables)
    }

    /// Drives the sender's `tready` and the receiver's `tvalid`/`tdata` for the coming edge.
    pub(super) fn drive<D: Device>(&self, devices: &mut [D]) {
        devices[self.from].set(self.tx[2], &scalar(self.channel.ready() as u64));
        let (word, valid) = match self.channel.head() {
            Some(w) if !self.pulled => (*w, 1),
            _ => (Value::default(), 0),
        };
        devices[self.to].set(self.rx[0], &word);
        devices[self.to].set(self.rx[1], &scalar(valid));
    }

    /// The edge, with the devices settled: what the sender handed over and whether the receiver
    /// took the head.
    pub(super) fn step<D: Device>(&mut self, devices: &mut [D]) {
        let from = &mut devices[self.from];
        let sent = if self.channel.ready() && from.get(self.tx[1])[0] & 1 == 1 { Some(from.get(self.tx[0])) } else { None };
        let taken = !self.pulled && self.channel.head().is_some() && devices[self.to].get(self.rx[2])[0] & 1 == 1;
        self.channel.step(sent, taken);
    }
}
