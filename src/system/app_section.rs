//! `[application]` in a system description, as written and as checked against the node (the
//! files it makes are [`super::application`]'s).

use std::path::{Path, PathBuf};

use serde::Deserialize;
use weft_ip::app::partition::engine::HALO_PORT;
use weft_ip::system::NodeConfig;

use crate::Error;

/// `[application]` as written.
#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub(super) struct ApplicationSection {
    file: String,
    mesh: String,
    split: Option<String>,
    primary: Option<String>,
}

/// A checked `[application]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AppSpec {
    /// The application file (resolved against the system file's folder).
    pub file: PathBuf,
    /// The mesh: `naca0012:I,J`, `graph:N,CHORDS,SEED`, or a file (resolved likewise).
    pub mesh: String,
    /// `metis` or `coords:DAT`.
    pub split: String,
    /// The set split, when named.
    pub primary: Option<String>,
}

impl ApplicationSection {
    /// Checks the section against the node: the collective engine must be there, IntraNode
    /// port 2 must exist for the halo packets and be neither the engine's nor described.
    pub(super) fn check(self, base: &Path, node: &NodeConfig, described: &[usize]) -> Result<AppSpec, Error> {
        let Some(allreduce) = &node.allreduce else {
            return Err(Error::Input("`[application]` needs `[allreduce]`: its global reductions run in the collective engine".into()));
        };
        if node.router.local_ports <= HALO_PORT {
            return Err(Error::Input(format!("`[application]` sends halo packets on IntraNode port {HALO_PORT}: `node.local_ports` = {} must be at least {}", node.router.local_ports, HALO_PORT + 1)));
        }
        if allreduce.ports.contains(&HALO_PORT) || described.contains(&HALO_PORT) {
            return Err(Error::Input(format!("`[application]` sends halo packets on IntraNode port {HALO_PORT}: leave it out of `allreduce.ports` and `[[port]]`")));
        }
        let split = self.split.unwrap_or_else(|| "metis".into());
        if split != "metis" && !split.starts_with("coords:") {
            return Err(Error::Input(format!("`application.split` = {split:?}: allowed \"metis\" or \"coords:DAT\"")));
        }
        let builtin = self.mesh.starts_with("naca0012:") || self.mesh.starts_with("graph:");
        let mesh = if builtin { self.mesh } else { base.join(&self.mesh).display().to_string() };
        Ok(AppSpec { file: base.join(&self.file), mesh, split, primary: self.primary })
    }
}
