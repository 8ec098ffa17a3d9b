//! `weft app FILE --mesh M --partition K`: the application split over K nodes
//! ([`weft_ip::app::partition`]), written as JSON for a user to inspect: every element's owner,
//! and per node and set the exec halo, the import halo and what the node sends to each other
//! node when the values change.

use serde::Serialize;
use std::path::{Path, PathBuf};

use weft_ip::app::partition::halo::Halo;
use weft_ip::app::partition::{partition, Method};
use weft_ip::app::{Application, Arg, Element, MeshData, SetId};

use crate::Error;

/// One node's share of one set.
#[derive(Serialize)]
struct Share {
    /// Elements it owns.
    owned: usize,
    /// Elements owned elsewhere that it executes (loops writing through a map).
    exec: Vec<u32>,
    /// Elements owned elsewhere it holds copies of.
    import: Vec<u32>,
    /// `(node, elements)`: what it sends each other node when the values change.
    sends: Vec<(usize, Vec<u32>)>,
}

/// One set of the application.
#[derive(Serialize)]
struct SetSplit {
    name: String,
    size: usize,
    /// The owner of every element.
    owner: Vec<u32>,
    /// Per node.
    nodes: Vec<Share>,
}

/// The file written.
#[derive(Serialize)]
struct Written {
    application: String,
    parts: usize,
    primary: String,
    method: String,
    /// Edges of the primary set's dual graph between different nodes.
    edge_cut: usize,
    sets: Vec<SetSplit>,
}

/// Splits the application in `file` on `mesh` into `parts` nodes through set `primary` (when
/// `None`, the target of the first map of dimension two or more that a loop increments or writes
/// through: Airfoil's cells) by `split` (`metis`, or `coords:DAT` for bisection of the positions in dat `DAT`);
/// writes `<out>/<app>_partition_<parts>.json` and prints a summary.
pub fn command(file: &Path, mesh: &MeshData, parts: usize, primary: Option<&str>, split: &str, out: &Path) -> Result<PathBuf, Error> {
    let source = std::fs::read_to_string(file).map_err(|e| Error::Input(format!("{}: {e}", file.display())))?;
    let app = Application::<f64>::load_as(&file.display().to_string(), &source, mesh)?;
    let loops = app.loop_args();
    let a = &app.app;
    let (primary, method) = split_of(&app, primary, split)?;
    let p = partition(a, &loops, primary, parts, method)?;
    let h = Halo::build(a, &loops, &p);
    let sets = a
        .sets()
        .into_iter()
        .map(|s| SetSplit {
            name: a.set_name(s).to_string(),
            size: a.set_size(s),
            owner: p.owner[s.index()].clone(),
            nodes: (0..parts)
                .map(|n| Share {
                    owned: p.owned(s, n).len(),
                    exec: h.exec[n][s.index()].clone(),
                    import: h.import[n][s.index()].clone(),
                    sends: (0..parts).filter(|&m| m != n).map(|m| (m, h.exports(&p, n, m, s))).filter(|(_, v)| !v.is_empty()).collect(),
                })
                .collect(),
        })
        .collect::<Vec<_>>();
    for s in &sets {
        let owned: Vec<usize> = s.nodes.iter().map(|n| n.owned).collect();
        let imported: Vec<usize> = s.nodes.iter().map(|n| n.import.len()).collect();
        println!("{}: {} elements; owned per node {owned:?}; imported per node {imported:?}", s.name, s.size);
    }
    println!("{} edges of `{}`'s dual graph cross nodes", p.edge_cut, a.set_name(primary));
    let stem = file.file_stem().map_or("app".into(), |s| s.to_string_lossy().to_string());
    let written = Written { application: file.display().to_string(), parts, primary: a.set_name(primary).into(), method: split.into(), edge_cut: p.edge_cut, sets };
    std::fs::create_dir_all(out).map_err(|e| Error::Io(format!("{}: {e}", out.display())))?;
    let path = out.join(format!("{stem}_partition_{parts}.json"));
    let text = serde_json::to_string(&written).map_err(|e| Error::Io(e.to_string()))?;
    std::fs::write(&path, text).map_err(|e| Error::Io(format!("{}: {e}", path.display())))?;
    Ok(path)
}

/// The set `primary` names (by default the target of the first map of dimension two or more
/// that a loop increments or writes through: Airfoil's cells) and the method `split` names
/// (`metis`, or `coords:DAT`).
pub fn split_of<T: Element>(app: &Application<T>, primary: Option<&str>, split: &str) -> Result<(SetId, Method), Error> {
    let loops = app.loop_args();
    let a = &app.app;
    let primary = match primary {
        Some(name) => app.set_id(name).ok_or_else(|| Error::Input(format!("`--primary {name}`: the application has no set `{name}`")))?,
        None => loops
            .iter()
            .flat_map(|l| l.2.iter())
            .find_map(|arg| match *arg {
                Arg::Indirect(_, m, _, acc) if acc.writes() && a.map_info(m).3 >= 2 => Some(a.map_info(m).2),
                _ => None,
            })
            .ok_or_else(|| Error::Input("no loop increments through a map of dimension two or more: name the set to split with `--primary SET`".into()))?,
    };
    let method = match split {
        "metis" => Method::Metis,
        s if s.starts_with("coords:") => {
            let dat = &s["coords:".len()..];
            Method::Geometric { coords: app.dat_id(dat).ok_or_else(|| Error::Input(format!("`--split {s}`: the application has no dat `{dat}`")))? }
        }
        other => return Err(Error::Input(format!("`--split {other}`: allowed `metis` or `coords:DAT`"))),
    };
    Ok((primary, method))
}
