//! AXI4-Stream source and sink for the co-simulation harness, with random back-pressure.

use num_bigint::BigUint;
use std::collections::VecDeque;
use weft_ip::weft_hdl::stream::Beat;
use weft_ip::weft_hdl::testbench::Rng;

use super::{CosimError, Model, PortId};

/// The signals of one AXI4-Stream port; side-band signals the module does not expose are `None`.
#[derive(Clone, Copy, Debug)]
pub struct AxisPorts {
    /// `<prefix>_tdata`.
    pub tdata: PortId,
    /// `<prefix>_tvalid`.
    pub tvalid: PortId,
    /// `<prefix>_tready`.
    pub tready: PortId,
    /// `<prefix>_tlast`, if the module has it.
    pub tlast: Option<PortId>,
    /// `<prefix>_tkeep`, if the module has it.
    pub tkeep: Option<PortId>,
}

impl AxisPorts {
    /// Finds `<prefix>_tdata`, `_tvalid`, `_tready` and, if present, `_tlast`, `_tkeep`; a
    /// missing one of the first three is [`CosimError::NoPort`].
    pub fn find(model: &Model, prefix: &str) -> Result<AxisPorts, CosimError> {
        Ok(AxisPorts {
            tdata: model.port(&format!("{prefix}_tdata"))?,
            tvalid: model.port(&format!("{prefix}_tvalid"))?,
            tready: model.port(&format!("{prefix}_tready"))?,
            tlast: model.port(&format!("{prefix}_tlast")).ok(),
            tkeep: model.port(&format!("{prefix}_tkeep")).ok(),
        })
    }
}

/// Offers queued beats on a slave port, with `tvalid` raised at random (`valid_percent`);
/// a beat once offered stays until it is taken, as AXI4-Stream requires.
///
/// Each cycle: [`AxisSource::drive`], [`Model::eval`], [`AxisSource::observe`], then
/// [`Model::tick`].
pub struct AxisSource {
    /// The port's signals.
    pub ports: AxisPorts,
    /// Beats still to send, the next first; push beats here.
    pub queue: VecDeque<Beat>,
    /// Chance, in percent (0 to 100), that an idle source starts offering the next beat in a
    /// cycle.
    pub valid_percent: u64,
    rng: Rng,
    offering: bool,
    /// Beats accepted by the module so far.
    pub sent: usize,
}

impl AxisSource {
    /// A source with an empty queue; `seed` drives its random `tvalid`.
    pub fn new(ports: AxisPorts, valid_percent: u64, seed: u64) -> AxisSource {
        AxisSource { ports, queue: VecDeque::new(), valid_percent, rng: Rng::new(seed), offering: false, sent: 0 }
    }

    /// Sets the port's inputs for this cycle (call before `eval`).
    pub fn drive(&mut self, model: &mut Model) {
        if !self.offering && !self.queue.is_empty() && self.rng.chance(self.valid_percent) {
            self.offering = true;
        }
        model.set(self.ports.tvalid, self.offering as u64);
        if let Some(beat) = self.queue.front() {
            model.set_words(self.ports.tdata, &beat.data.to_u32_digits());
            if let Some(p) = self.ports.tlast {
                model.set(p, beat.last as u64);
            }
            if let Some(p) = self.ports.tkeep {
                model.set(p, beat.keep);
            }
        }
    }

    /// Records the handshake after `eval` (call before `tick`).
    pub fn observe(&mut self, model: &mut Model) {
        if self.offering && model.get(self.ports.tready) == 1 {
            self.queue.pop_front();
            self.offering = false;
            self.sent += 1;
        }
    }
}

/// Takes beats from a master port, with `tready` raised at random (`ready_percent`).
///
/// Each cycle: [`AxisSink::drive`], [`Model::eval`], [`AxisSink::observe`], then
/// [`Model::tick`].
pub struct AxisSink {
    /// The port's signals.
    pub ports: AxisPorts,
    /// Chance, in percent (0 to 100), that `tready` is high in a cycle.
    pub ready_percent: u64,
    rng: Rng,
    ready: bool,
    /// Every beat taken so far, in order (`keep` 0 and `last` false where the port lacks them).
    pub received: Vec<Beat>,
}

impl AxisSink {
    /// A sink that has received nothing; `seed` drives its random `tready`.
    pub fn new(ports: AxisPorts, ready_percent: u64, seed: u64) -> AxisSink {
        AxisSink { ports, ready_percent, rng: Rng::new(seed), ready: false, received: vec![] }
    }

    /// Sets `tready` for this cycle (call before `eval`).
    pub fn drive(&mut self, model: &mut Model) {
        self.ready = self.rng.chance(self.ready_percent);
        model.set(self.ports.tready, self.ready as u64);
    }

    /// Records a transferred beat, if any, after `eval`.
    pub fn observe(&mut self, model: &mut Model) -> Option<&Beat> {
        if self.ready && model.get(self.ports.tvalid) == 1 {
            let data = BigUint::from_slice(model.get_words(self.ports.tdata));
            let last = self.ports.tlast.is_some_and(|p| model.get(p) == 1);
            let keep = self.ports.tkeep.map_or(0, |p| model.get(p));
            self.received.push(Beat { data, keep, last, user: 0 });
            self.received.last()
        } else {
            None
        }
    }
}
