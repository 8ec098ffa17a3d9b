//! Post-route timing of MIDG2's compute modules: the program's dense operators (Dr, LIFT), its
//! curl, flux and update pipelines — the modules of `midg.app` compiled at order 3, binary32 —
//! each placed and routed alone on an ECP5-85F in the out-of-context harness of `weft check
//! --timing` (nextpnr-ecp5, seeds 1, 2 and 3 unless told; the median is the figure). The program runs no
//! faster than the slowest of them; its sequencer, the dats' memories and the halo engine are not
//! in these figures. `weft bench dg` adds them to `bench/dg.json` and quotes GFLOP/s at the
//! slowest module's median.

use std::path::Path;

use serde::Serialize;
use weft_ip::app::sequencer::{compile_program, program_verilog};
use weft_ip::app::Application;
use weft_ip::midg::solver::cavity_mode;
use weft_ip::midg::{app, TetMesh};
use weft_ip::weft_hdl::float::FloatFormat;
use weft_ip::weft_hdl::pipeline::Stages;

use crate::Error;

/// The modules measured: module name in the program's Verilog, and what it computes.
/// Smallest first.
pub const MODULES: [(&str, &str); 5] = [
    ("midg_derivatives_ur", "volume: Dr · u, 4 lanes"),
    ("midg_update", "update: low-storage Runge–Kutta"),
    ("midg_curl", "volume: the curl with the geometric factors"),
    ("midg_lift_lift", "surface: LIFT · flux, 4 lanes"),
    ("midg_flux", "surface: the upwind flux at a face node"),
];

/// Placement seeds of nextpnr when none are given.
pub const SEEDS: [u32; 3] = [1, 2, 3];

/// One module's post-route timing (an element of `timing` in `bench/dg.json`).
#[derive(Clone, Debug, Serialize)]
pub struct ModuleTiming {
    /// The module's name in the program's Verilog.
    pub module: String,
    /// What it computes.
    pub what: &'static str,
    /// The placement seeds run.
    pub seeds: Vec<u32>,
    /// Fmax per seed, MHz, in the order of `seeds` (`None` where it did not route).
    pub fmax_mhz: Vec<Option<f64>>,
    /// The median of the seeds that routed, MHz.
    pub median_mhz: Option<f64>,
    /// The critical path of the first seed that routed: from and to.
    pub critical: Option<(String, String)>,
    /// Why place and route failed, for a seed that did.
    pub failure: Option<String>,
}

/// Compiles the program (on the 6 elements of one sub-cube: the modules do not depend on the
/// mesh's size) into `work` and places and routes each of `modules` (names from [`MODULES`];
/// all when empty) with each of `seeds`. One run of nextpnr takes about ten minutes here.
/// `done` sees the rows measured so far after each module (place and route is slow: a caller
/// keeps what was measured).
pub fn run(modules: &[String], seeds: &[u32], work: &Path, progress: &mut dyn FnMut(&str), done: &mut dyn FnMut(&[ModuleTiming]) -> Result<(), Error>) -> Result<Vec<ModuleTiming>, Error> {
    if let Some(m) = modules.iter().find(|m| !MODULES.iter().any(|(n, _)| n == m)) {
        return Err(Error::Input(format!("`modules`: no module `{m}`; allowed {}", MODULES.iter().map(|(n, _)| *n).collect::<Vec<_>>().join(", "))));
    }
    if seeds.is_empty() || seeds.contains(&0) {
        return Err(Error::Input("`seeds`: one or more placement seeds, each 1 or more".into()));
    }
    std::fs::create_dir_all(work).map_err(|e| Error::from(e).context(work.display()))?;
    let mesh = TetMesh::unit_cube(1)?;
    let (data, _) = app::mesh_data(&mesh, app::ORDER, &|x, y, z| cavity_mode(x, y, z, 0.0))?;
    let a = Application::<f32>::load("examples/apps/midg.app", app::SOURCE, &data)?;
    let compiled = compile_program(&a, &Stages::balanced(FloatFormat::BINARY32))?;
    let file = work.join("midg.v");
    std::fs::write(&file, program_verilog(&a, "midg", &compiled)?).map_err(|e| Error::from(e).context(file.display()))?;
    let mut rows = vec![];
    for (module, what) in MODULES.into_iter().filter(|(m, _)| modules.is_empty() || modules.iter().any(|x| x == m)) {
        let mut row = ModuleTiming { module: module.into(), what, seeds: seeds.to_vec(), fmax_mhz: vec![], median_mhz: None, critical: None, failure: None };
        for &seed in seeds {
            progress(&format!("{module}: place and route on the ECP5-85F, seed {seed}"));
            match weft_tools::place_and_route_seed(&file, module, seed) {
                Ok(t) => {
                    progress(&format!("{module}, seed {seed}: {:.1} MHz, {} -> {}", t.fmax_mhz, t.critical_from, t.critical_to));
                    row.critical.get_or_insert((t.critical_from, t.critical_to));
                    row.fmax_mhz.push(Some(t.fmax_mhz));
                }
                Err(e) => {
                    let e = e.to_string();
                    progress(&format!("{module}, seed {seed}: place and route failed: {e}"));
                    row.fmax_mhz.push(None);
                    // Not fitting the part does not depend on the placement seed.
                    if let Some(over) = over_capacity(&e) {
                        row.failure = Some(format!("does not fit the ECP5-85F: {over}"));
                        break;
                    }
                    row.failure.get_or_insert(e);
                }
            }
        }
        row.median_mhz = super::timing::median(&row.fmax_mhz.iter().flatten().copied().collect::<Vec<_>>());
        rows.push(row);
        done(&rows)?;
    }
    Ok(rows)
}

/// From nextpnr's report of a design that does not fit: the resources used beyond the part's
/// (`MULT18X18D 216/156`).
pub fn over_capacity(message: &str) -> Option<String> {
    if !message.contains("does not fit") {
        return None;
    }
    let over: Vec<String> = message
        .lines()
        .filter_map(|l| {
            let (cell, counts) = l.trim().strip_prefix("Info:")?.trim().split_once(':')?;
            let (used, total) = counts.split_whitespace().next()?.split_once('/').map(|(u, _)| (u, counts.split_whitespace().nth(1)))?;
            let (used, total): (u64, u64) = (used.parse().ok()?, total?.parse().ok()?);
            (used > total).then(|| format!("{} {used}/{total}", cell.trim()))
        })
        .collect();
    Some(if over.is_empty() { "nextpnr could not place every cell".into() } else { over.join(", ") })
}

/// The slowest module's median Fmax and its name: the program's clock can be no higher.
pub fn slowest(rows: &[ModuleTiming]) -> Option<(f64, &str)> {
    rows.iter().filter_map(|r| r.median_mhz.map(|m| (m, r.module.as_str()))).min_by(|a, b| a.0.total_cmp(&b.0))
}

/// The modules as the table `weft bench dg-timing` prints.
pub fn table(rows: &[ModuleTiming]) -> String {
    let mhz = |f: &Option<f64>| f.map_or("did not route".to_string(), |m| format!("{m:.1}"));
    let mut t = String::from("MIDG2 N = 3, binary32: each module placed and routed alone on the ECP5-85F (nextpnr-ecp5)\n| module | computes | seeds | Fmax per seed, MHz | median, MHz | critical path |\n| --- | --- | --- | --- | ---: | --- |\n");
    for r in rows {
        let seeds: Vec<String> = r.fmax_mhz.iter().map(mhz).collect();
        let path = r.critical.as_ref().map_or(String::new(), |(from, to)| format!("{from} → {to}"));
        let numbers: Vec<String> = r.seeds.iter().map(u32::to_string).collect();
        t.push_str(&format!("| {} | {} | {} | {} | {} | {path} |\n", r.module, r.what, numbers.join(", "), seeds.join(" / "), mhz(&r.median_mhz)));
    }
    if let Some((m, module)) = slowest(rows) {
        t.push_str(&format!("\nThe slowest measured, {module}, bounds the program's clock: {m:.1} MHz.\n"));
    }
    t
}
