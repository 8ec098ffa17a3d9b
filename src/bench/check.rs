//! `weft bench --check`: a fast subset of every benchmark, at small sizes, each figure compared
//! with the same figure in the committed JSON under `bench/`.
//!
//! The simulations are cycle-exact and seeded, so a figure moves only when the hardware or the
//! benchmark changes; the tolerance ([`TOLERANCE`] for cycles and rates, [`AREA_TOLERANCE`] for
//! Yosys cell counts, which move with the Yosys version) absorbs nothing else. A figure outside it
//! fails in either direction: worse is a regression, better means the committed JSON (and the
//! tables generated from it) no longer describe the hardware — rerun the benchmark and commit.
//!
//! Not run here: `weft bench timing` and the fmax column of `weft bench numeric --compare`
//! (place-and-route takes minutes to hours per module), the router's load sweeps and the larger
//! meshes and vectors (their small points are checked instead).

use super::tables::load;
use crate::Error;
use serde_json::Value;
use std::path::Path;

/// Relative tolerance of a cycle count, rate or ratio.
pub const TOLERANCE: f64 = 0.02;
/// Relative tolerance of a LUT or flip-flop count.
pub const AREA_TOLERANCE: f64 = 0.05;

/// One figure measured now beside its committed value.
#[derive(Clone, Debug)]
pub struct Figure {
    /// The benchmark and the point, e.g. `allreduce torus_4x2x1, 64 elements: cycles`.
    pub what: String,
    /// The value in the committed JSON.
    pub committed: f64,
    /// The value measured by this run.
    pub measured: f64,
    /// Allowed relative difference.
    pub tolerance: f64,
}

impl Figure {
    /// Whether the measured value is within the tolerance of the committed one.
    pub fn holds(&self) -> bool {
        (self.measured - self.committed).abs() <= self.tolerance * self.committed.abs().max(1e-12)
    }
}

/// The first element of the array `list` whose fields equal `key`.
fn find<'v>(list: &'v Value, key: &[(&str, Value)], file: &str) -> Result<&'v Value, Error> {
    list.as_array().and_then(|a| a.iter().find(|row| key.iter().all(|(k, v)| &row[*k] == v))).ok_or_else(|| Error::Input(format!("{file}: no row with {key:?}; rerun its benchmark")))
}

fn number(v: &Value, field: &str, file: &str) -> Result<f64, Error> {
    v[field].as_f64().ok_or_else(|| Error::Input(format!("{file}: `{field}` is missing or not a number")))
}

/// One benchmark's checks: the line announcing it and the function measuring its figures.
type Section = (&'static str, fn(&Context) -> Result<Vec<Figure>, Error>);

/// Where the committed figures, the generated Verilog and the scratch space are.
struct Context<'a> {
    bench: &'a Path,
    generated: &'a Path,
    work: &'a Path,
}

/// Every check, slowest first (the Verilator co-simulations), so that two workers finish together.
const SECTIONS: [Section; 9] = [
    ("beff: a ring of two 520N nodes, messages of 1 B, 1 KiB and 64 KiB: c = 1 streamed and in lockstep, c = 2 in lockstep", beff),
    ("dg: one step of MIDG2 on 48 elements over torus_2x2x2, no host", dg),
    ("allreduce: 1 and 64 elements on torus_4x2x1 in Verilator", allreduce),
    ("collectives: each at 16 and 256 elements on torus_4x2x1 in Verilator, on the unit and striped", collectives),
    ("net: ping between neighbours of torus_4x2x1 in Verilator", net),
    ("router: zero-load latency on a 4x4x4 torus", router),
    ("airfoil: 960 cells, one pipeline, one iteration in the built-in simulator", airfoil),
    ("numeric: the shipped fp32_mul, fp32_mul_lut_shift and fp32_add in Yosys", numeric),
    ("link: goodput of 256-byte packets on two lanes, latency of one packet", link),
];

/// Runs every check on two threads (the CI machines have two cores); `progress` gets a line per
/// benchmark as it starts. The figures come back in the order of the sections above.
pub fn run(bench: &Path, generated: &Path, work: &Path, progress: &(dyn Fn(&str) + Sync)) -> Result<Vec<Figure>, Error> {
    let context = Context { bench, generated, work };
    let next = std::sync::atomic::AtomicUsize::new(0);
    let results: Vec<std::sync::Mutex<Option<Result<Vec<Figure>, Error>>>> = SECTIONS.iter().map(|_| std::sync::Mutex::new(None)).collect();
    std::thread::scope(|scope| {
        for _ in 0..2 {
            scope.spawn(|| {
                while let Some((i, (line, check))) = SECTIONS.iter().enumerate().nth(next.fetch_add(1, std::sync::atomic::Ordering::Relaxed)) {
                    progress(line);
                    *results[i].lock().unwrap_or_else(|e| e.into_inner()) = Some(check(&context));
                }
            });
        }
    });
    let mut out = vec![];
    for r in results {
        out.extend(r.into_inner().unwrap_or_else(|e| e.into_inner()).unwrap_or_else(|| Err(Error::Check("a check did not run".into())))?);
    }
    Ok(out)
}

fn figure(what: String, committed: f64, measured: f64, tolerance: f64) -> Figure {
    Figure { what, committed, measured, tolerance }
}

fn link(cx: &Context) -> Result<Vec<Figure>, Error> {
    let json = load(cx.bench, "link.json")?;
    let g = super::link::goodput(2, 256, super::link::packets(256), 0.0)?;
    let row = find(&json["goodput"], &[("lanes", 2.into()), ("packet_bytes", 256.into())], "link.json")?;
    let mut out = vec![figure("link, 2 lanes, 256 B: goodput".into(), number(row, "goodput", "link.json")?, g.goodput, TOLERANCE)];
    let l = super::link::latency(2)?;
    let row = find(&json["latency"], &[("lanes", 2.into())], "link.json")?;
    out.push(figure("link, 2 lanes: latency cycles".into(), number(row, "cycles", "link.json")?, l.cycles as f64, TOLERANCE));
    Ok(out)
}

fn router(cx: &Context) -> Result<Vec<Figure>, Error> {
    let json = load(cx.bench, "router.json")?;
    let z = super::router::zero_load(&cx.work.join("router"))?;
    let row = &json["zero_load"][0];
    Ok(vec![
        figure("router 4x4x4: local cycles".into(), number(row, "local_cycles", "router.json")?, z.local_cycles as f64, TOLERANCE),
        figure("router 4x4x4: 6-hop cycles".into(), number(row, "far_cycles", "router.json")?, z.far_cycles as f64, TOLERANCE),
    ])
}

fn numeric(cx: &Context) -> Result<Vec<Figure>, Error> {
    let json = load(cx.bench, "numeric.json")?;
    let rows = super::numeric::run(&["fp32_mul".into(), "fp32_mul_lut_shift".into(), "fp32_add".into()], true, &cx.work.join("numeric"), 1)?;
    let mut out = vec![];
    for r in rows {
        if let Some(f) = &r.failure {
            return Err(Error::Check(format!("numeric: {} failed: {f}", r.module)));
        }
        let c = find(&json, &[("module", r.module.clone().into()), ("stages", r.stages.into())], "numeric.json")?;
        out.push(figure(format!("numeric {} ({} stages): LUTs", r.module, r.stages), number(c, "luts", "numeric.json")?, r.luts as f64, AREA_TOLERANCE));
        out.push(figure(format!("numeric {} ({} stages): flip-flops", r.module, r.stages), number(c, "flip_flops", "numeric.json")?, r.flip_flops as f64, AREA_TOLERANCE));
    }
    Ok(out)
}

fn airfoil(cx: &Context) -> Result<Vec<Figure>, Error> {
    let json = load(cx.bench, "airfoil.json")?;
    let grid = super::airfoil::MESHES[0];
    let report = super::airfoil::run(&[grid], &[1], &mut |_| {})?;
    let m = &report.meshes[0];
    let c = find(&json["meshes"], &[("cells", m.cells.into()), ("pipelines", 1.into())], "airfoil.json")?;
    let simulated = m.iteration_simulated.ok_or_else(|| Error::Check("airfoil: the smallest mesh was not simulated".into()))?;
    Ok(vec![
        figure(format!("airfoil {} cells, P = 1: model cycles", m.cells), number(c, "iteration_cycles", "airfoil.json")?, m.iteration_cycles as f64, TOLERANCE),
        figure(format!("airfoil {} cells, P = 1: simulated cycles", m.cells), number(c, "iteration_simulated", "airfoil.json")?, simulated as f64, TOLERANCE),
    ])
}

fn net(cx: &Context) -> Result<Vec<Figure>, Error> {
    let json = load(cx.bench, "net.json")?;
    let system = crate::system::shipped_named("torus_4x2x1")?;
    let mut t = super::net::node_torus(&system, cx.generated)?;
    let neighbour = system.node.router.neighbour(0, weft_ip::router::Direction { dim: 0, plus: true });
    let mut out = vec![];
    // The benchmark's order: the local ping, then the neighbour's (a link's latency depends on
    // where its clock compensation and acknowledgements fall, so on what ran before).
    for (path, a, b) in [("local (node 0, port 0 ↔ port 1)", (0, 0), (0, 1)), ("neighbour (node 0 ↔ node 1, port 0)", (0, 0), (neighbour, 0))] {
        let one_way = super::net::ping(&mut t, a, b)?;
        let c = find(&json["ping_pong"], &[("path", path.into())], "net.json")?;
        out.push(figure(
            format!("net torus_4x2x1: {} round trip cycles", path.split(' ').next().unwrap_or(path)),
            number(c, "round_trip_cycles", "net.json")?,
            (one_way[0] + one_way[1]) as f64,
            TOLERANCE,
        ));
    }
    Ok(out)
}

fn allreduce(cx: &Context) -> Result<Vec<Figure>, Error> {
    let json = load(cx.bench, "allreduce_torus_4x2x1.json")?;
    let options = super::allreduce::Options {
        lengths: vec![1, 64],
        bit_error_rate: 0.0,
        pressure: None,
        baseline: false,
        packet_bytes: super::allreduce::PACKET_BYTES,
        element: weft_ip::system::allreduce::ElementType::F32,
        op: weft_ip::system::allreduce::ReduceOp::Sum,
    };
    let report = super::allreduce::run(&crate::system::shipped_named("torus_4x2x1")?, &options, &cx.work.join("allreduce"), &mut |_| {})?;
    let mut out = vec![];
    for p in &report.points {
        let c = find(&json["points"], &[("elements", p.elements.into())], "allreduce_torus_4x2x1.json")?;
        out.push(figure(format!("allreduce torus_4x2x1, {} elements: cycles", p.elements), number(c, "cycles", "allreduce_torus_4x2x1.json")?, p.cycles as f64, TOLERANCE));
        out.push(figure(
            format!("allreduce torus_4x2x1, {} elements: selected by size, cycles", p.elements),
            number(c, "selected_cycles", "allreduce_torus_4x2x1.json")?,
            p.selected_cycles as f64,
            TOLERANCE,
        ));
    }
    Ok(out)
}

fn collectives(cx: &Context) -> Result<Vec<Figure>, Error> {
    let file = "collectives_torus_4x2x1.json";
    let json = load(cx.bench, file)?;
    let report = super::collectives::run(&crate::system::shipped_named("torus_4x2x1")?, &[16, 256], &cx.work.join("collectives"), &mut |_| {})?;
    let mut out = vec![];
    for p in &report.points {
        let c = find(&json["points"], &[("collective", p.collective.as_str().into()), ("elements", p.elements.into())], file)?;
        let what = |how: &str| format!("{} torus_4x2x1, {} elements: {how}", p.collective, p.elements);
        out.push(figure(what("cycles on the unit"), number(c, "cycles", file)?, p.cycles as f64, TOLERANCE));
        if let Some(striped) = p.striped_cycles {
            out.push(figure(what("cycles striped"), number(c, "striped_cycles", file)?, striped as f64, TOLERANCE));
        }
    }
    Ok(out)
}

fn dg(cx: &Context) -> Result<Vec<Figure>, Error> {
    let json = load(cx.bench, "dg.json")?;
    let options = super::dg::Options { cubes: 2, steps: 1, bit_error_rate: 0.0 };
    let report = super::dg::run(&crate::system::shipped_named("torus_2x2x2")?, &options, &cx.work.join("dg"), &mut |_| {})?;
    let then = find(&json["runs"], &[("cubes", 2.into()), ("steps", 1.into())], "dg.json")?;
    Ok(vec![
        figure("dg MIDG2 48 elements: cycles of a step".into(), number(then, "cycles", "dg.json")?, report.cycles as f64, TOLERANCE),
        figure("dg MIDG2 48 elements: exchange cycles a stage".into(), number(then, "exchange_cycles", "dg.json")?, report.exchange_cycles, TOLERANCE),
    ])
}

fn beff(cx: &Context) -> Result<Vec<Figure>, Error> {
    let mut out = vec![];
    for (system, lockstep) in [("ring_520n", false), ("ring_520n", true), ("ring_520n_4qsfp", true), ("ring_520n_io", true)] {
        let ring = crate::system::load(&Path::new("examples").join(format!("{system}.toml")))?;
        let file = format!("beff_{system}_2{}.json", if lockstep { "_lockstep" } else { "" });
        let json = load(cx.bench, &file)?;
        let report = super::beff::run(&ring, 2, lockstep, &[1, 1024, 65536], &cx.work.join(format!("beff-{system}-{lockstep}")), &mut |_| {})?;
        for s in &report.sizes {
            let c = find(&json["sizes"], &[("bytes", s.bytes.into())], &file)?;
            let what = format!("beff {system} ring of 2{}, {} B: b(L)", if lockstep { ", lockstep" } else { "" }, s.bytes);
            out.push(figure(what, number(c, "measured", &file)?, s.measured, TOLERANCE));
        }
    }
    Ok(out)
}

/// The figures as a table, with a verdict per row.
pub fn table(figures: &[Figure]) -> String {
    let mut t = format!("{:<58} {:>14} {:>14} {:>8}  verdict\n", "figure", "committed", "measured", "change");
    for f in figures {
        let change = 100.0 * (f.measured / f.committed - 1.0);
        let verdict = if f.holds() { "ok".to_string() } else { format!("outside ±{:.0} %", 100.0 * f.tolerance) };
        t += &format!("{:<58} {:>14.4} {:>14.4} {:>+7.2}%  {verdict}\n", f.what, f.committed, f.measured, change);
    }
    t
}
