//! The `weft bench` commands: each runs its benchmark, prints its table and writes its JSON
//! (and plots) where the command line says.

use crate::Error;
use std::path::{Path, PathBuf};

/// `weft bench numeric`: synthesizes every configuration (or the modules in `only`) with `jobs`
/// Yosys runs at a time, prints the table and writes the rows to `json`; a configuration whose
/// synthesis failed then makes it an [`Error::Check`] (its row says why).
pub fn numeric(only: &[String], json: &Path, jobs: usize) -> Result<(), Error> {
    let work = std::env::temp_dir().join(format!("weft-bench-numeric-{}", std::process::id()));
    let rows = crate::bench::numeric::run(only, false, &work, jobs)?;
    let _ = std::fs::remove_dir_all(&work);
    print!("{}", crate::bench::numeric::table(&rows));
    write_json(json, &rows)?;
    let failed: Vec<String> = rows.iter().filter(|r| r.failure.is_some()).map(|r| format!("{} at {} stages", r.module, r.stages)).collect();
    if failed.is_empty() {
        Ok(())
    } else {
        Err(Error::Check(format!("synthesis failed for {} (their rows say why)", failed.join(", "))))
    }
}

/// `weft bench numeric --compare`: weft's FP32 operators beside FloPoCo and HardFloat; writes
/// `bench/numeric_compare.json` when `json` is the default `bench/numeric.json`, else `json`.
pub fn numeric_compare(json: &Path) -> Result<(), Error> {
    let work = std::env::temp_dir().join(format!("weft-bench-compare-{}", std::process::id()));
    let rows = crate::bench::numeric_compare::run(&work, &|m| eprintln!("  {m}"))?;
    let _ = std::fs::remove_dir_all(&work);
    print!("{}", crate::bench::numeric_compare::table(&rows));
    let json = if json == Path::new("bench/numeric.json") { Path::new("bench/numeric_compare.json") } else { json };
    write_json(json, &rows)
}

/// `weft bench timing`: the modules in `only` (default
/// [`MODULES`](crate::bench::timing::MODULES)) from `generated`, and the verilog-axis switch when
/// `reference` names a checkout, each placed and routed once per seed in `seeds`; prints the
/// table and writes `json`.
pub fn timing(reference: Option<&Path>, only: &[String], generated: &Path, seeds: &[u32], jobs: usize, json: &Path) -> Result<(), Error> {
    let work = std::env::temp_dir().join(format!("weft-bench-timing-{}", std::process::id()));
    std::fs::create_dir_all(&work).map_err(|e| Error::from(e).context(work.display()))?;
    let modules: Vec<String> = if only.is_empty() { crate::bench::timing::MODULES.map(String::from).to_vec() } else { only.to_vec() };
    let rows = crate::bench::timing::run(&modules, generated, reference, seeds, jobs, &work, &mut |line| eprintln!("{line}"))?;
    let _ = std::fs::remove_dir_all(&work);
    print!("{}", crate::bench::timing::table(&rows));
    write_json(json, &rows)
}

/// `weft bench netsim`: the node of `config` on 4×4×4 and 8×8×8 tori, one and two ranks;
/// writes `netsim.json` into `out`.
pub fn netsim(config: &Path, out: &Path) -> Result<(), Error> {
    let work = std::env::temp_dir().join(format!("weft-bench-netsim-{}", std::process::id()));
    let report = crate::bench::netsim::run(config, &work, &mut |line| eprintln!("{line}"));
    let _ = std::fs::remove_dir_all(&work);
    let report = report?;
    for m in &report.models {
        println!(
            "{:?}: {:.1} µs a node-cycle, swaps {:.1} % of compute, two ranks {:.2}× one; predicted (α = {} µs): {:?}",
            m.dims,
            m.node_cycle * 1e6,
            m.wait * 100.0,
            m.speedup_two,
            crate::bench::netsim::ALPHA * 1e6,
            m.strong
        );
    }
    write_json(&out.join("netsim.json"), &report)
}

/// `weft bench netsim-load`: the load sweeps of [`crate::bench::netsim_load`] on `ranks` ranks;
/// writes `netsim_load.json` into `out`.
pub fn netsim_load(config: &Path, ranks: usize, cycles: u64, out: &Path) -> Result<(), Error> {
    if ranks == 0 || cycles < 200 {
        return Err(Error::Input(format!("`--ranks` = {ranks}, `--cycles` = {cycles}: allowed at least 1 rank and 200 cycles")));
    }
    let work = std::env::temp_dir().join(format!("weft-bench-netsim-load-{}", std::process::id()));
    let sweeps = crate::bench::netsim_load::run(config, ranks, cycles, &work, &mut |line| eprintln!("{line}"));
    let _ = std::fs::remove_dir_all(&work);
    let sweeps = sweeps?;
    for s in &sweeps {
        println!("{:?} {}: saturation {:.3} flits/node/cycle, zero-load latency {:.1} cycles", s.dims, s.pattern, s.saturation, s.zero_load_latency);
    }
    write_json(&out.join("netsim_load.json"), &sweeps)
}

/// `weft bench booksim`: BookSim2 at `booksim` on the sweeps of [`crate::bench::booksim`] for the
/// node of `config`; writes `booksim.json` into `out`.
pub fn booksim(booksim: &Path, config: &Path, cycles: u64, out: &Path) -> Result<(), Error> {
    if cycles < 200 {
        return Err(Error::Input(format!("`--cycles` = {cycles}: allowed at least 200")));
    }
    let work = std::env::temp_dir().join(format!("weft-bench-booksim-{}", std::process::id()));
    let sweeps = crate::bench::booksim::run(booksim, config, cycles, &work, &mut |line| eprintln!("{line}"));
    let _ = std::fs::remove_dir_all(&work);
    let sweeps = sweeps?;
    for s in &sweeps {
        println!("{:?} {}: saturation {:.3} flits/node/cycle, zero-load latency {:.1} cycles", s.dims, s.pattern, s.saturation, s.zero_load_latency);
    }
    write_json(&out.join("booksim.json"), &sweeps)
}

/// `weft bench beff`: b_eff on a ring of `nodes` (default: the description's X dimension;
/// allowed 2..=64) of the system in `config`, streamed or `lockstep`; writes
/// `beff_<system>_<nodes>[_lockstep].json` and `.svg` into `out`.
pub fn beff(config: &Path, nodes: Option<usize>, lockstep: bool, out: &Path) -> Result<(), Error> {
    let system = crate::system::load(config)?;
    let nodes = nodes.unwrap_or(system.node.router.dims[0]);
    if !(2..=64).contains(&nodes) {
        return Err(Error::Check(format!("`--nodes` = {nodes} is out of range: allowed 2..=64 (a ring)")));
    }
    let work = std::env::temp_dir().join(format!("weft-bench-beff-{}", std::process::id()));
    let report = crate::bench::beff::run(&system, nodes, lockstep, &crate::bench::beff::sizes(), &work, &mut |line| eprintln!("{line}"));
    let _ = std::fs::remove_dir_all(&work);
    let report = report?;
    print!("{}", crate::bench::beff::table(&report));
    let stem = format!("beff_{}_{nodes}{}", report.system, if lockstep { "_lockstep" } else { "" });
    write_report(&out.to_path_buf(), &stem, &report, &stem, &crate::bench::beff::plot(&report))
}

/// `weft bench allreduce`: each system of `configs` (default: the shipped tori and
/// `examples/ring_520n.toml`) at `lengths` (1..=65536 elements; default
/// [`LENGTHS`](crate::bench::allreduce::LENGTHS)), bit error rate `ber` (0 ..= 1e-3) on the
/// engine's runs; writes `allreduce_<system>.json` and `.svg` into `out`.
pub fn allreduce(configs: &[PathBuf], lengths: &[usize], ber: f64, out: &Path) -> Result<(), Error> {
    let systems = systems_or_default(configs)?;
    let lengths = lengths_or(lengths, &crate::bench::allreduce::LENGTHS)?;
    if !(0.0..=1e-3).contains(&ber) {
        return Err(Error::Check(format!("`--ber` = {ber} is out of range: allowed 0 ..= 1e-3")));
    }
    let options = crate::bench::allreduce::Options {
        lengths,
        bit_error_rate: ber,
        pressure: None,
        baseline: true,
        packet_bytes: crate::bench::allreduce::PACKET_BYTES,
        element: weft_ip::system::allreduce::ElementType::F32,
        op: weft_ip::system::allreduce::ReduceOp::Sum,
    };
    for system in &systems {
        let work = std::env::temp_dir().join(format!("weft-bench-allreduce-{}-{}", system.name, std::process::id()));
        let report = crate::bench::allreduce::run(system, &options, &work, &mut |line| eprintln!("{line}"));
        let _ = std::fs::remove_dir_all(&work);
        let report = report?;
        print!("{}", crate::bench::allreduce::table(&report));
        let stem = format!("allreduce_{}", report.system);
        write_report(&out.to_path_buf(), &stem, &report, &stem, &crate::bench::allreduce::plot(&report))?;
    }
    Ok(())
}

/// `weft bench collectives`: each system of `configs` (default as [`allreduce`]) at `lengths`
/// (1..=65536 elements; default [`LENGTHS`](crate::bench::collectives::LENGTHS)); writes
/// `collectives_<system>.json` and `.svg` into `out`. With `dims` (X, Y, Z), the node of each
/// description (default `torus_2x2x2`'s) on a torus of that size, named `torus_XxYxZ`.
pub fn collectives(configs: &[PathBuf], lengths: &[usize], dims: &[usize], out: &Path) -> Result<(), Error> {
    let mut systems = match (configs.is_empty(), dims.is_empty()) {
        (true, false) => vec![crate::system::shipped_named("torus_2x2x2")?],
        _ => systems_or_default(configs)?,
    };
    if !dims.is_empty() {
        let [x, y, z] = <[usize; 3]>::try_from(dims).map_err(|_| Error::Input(format!("`--dims` = {dims:?}: three sizes X,Y,Z, e.g. 4,4,4")))?;
        for s in systems.iter_mut() {
            s.node.router.dims = [x, y, z];
            s.node.validate().map_err(|e| Error::from(e).context(format!("{} on a {x}×{y}×{z} torus", s.name)))?;
            s.name = format!("torus_{x}x{y}x{z}");
        }
    }
    let lengths = lengths_or(lengths, &crate::bench::collectives::LENGTHS)?;
    for system in &systems {
        let work = std::env::temp_dir().join(format!("weft-bench-collectives-{}-{}", system.name, std::process::id()));
        let report = crate::bench::collectives::run(system, &lengths, &work, &mut |line| eprintln!("{line}"));
        let _ = std::fs::remove_dir_all(&work);
        let report = report?;
        print!("{}", crate::bench::collectives::table(&report));
        let stem = format!("collectives_{}", report.system);
        write_report(&out.to_path_buf(), &stem, &report, &stem, &crate::bench::collectives::plot(&report))?;
    }
    Ok(())
}

/// `--lengths` as given (each 1..=65536 elements), or `default` when none is given.
fn lengths_or(lengths: &[usize], default: &[usize]) -> Result<Vec<usize>, Error> {
    if let Some(l) = lengths.iter().find(|l| !(1..=1 << 16).contains(*l)) {
        return Err(Error::Check(format!("`--lengths` has {l}: allowed 1..=65536 elements")));
    }
    Ok(if lengths.is_empty() { default.to_vec() } else { lengths.to_vec() })
}

/// The systems of `configs`, or both shipped tori and `examples/ring_520n.toml`.
fn systems_or_default(configs: &[PathBuf]) -> Result<Vec<crate::system::SystemConfig>, Error> {
    if configs.is_empty() {
        let mut s = crate::system::shipped();
        s.push(crate::system::load(Path::new("examples/ring_520n.toml"))?);
        Ok(s)
    } else {
        configs.iter().map(|c| crate::system::load(c)).collect()
    }
}

/// `weft bench airfoil --nodes`: Airfoil over tori of `nodes` nodes, the model and its
/// projection; writes `airfoil_nodes.json` into `out`.
pub fn airfoil_nodes(nodes: &[usize], out: &Path) -> Result<(), Error> {
    let work = std::env::temp_dir().join(format!("weft-bench-airfoil-nodes-{}", std::process::id()));
    let report = crate::bench::airfoil_nodes::run(nodes, &work, &mut |line| eprintln!("{line}"));
    let _ = std::fs::remove_dir_all(&work);
    let report = report?;
    print!("{}", crate::bench::airfoil_nodes::table(&report));
    write_json(&out.join("airfoil_nodes.json"), &report)
}

/// `weft bench airfoil`: every mesh and pipeline count, the Verilator programs' model and the
/// rms history against OP2; writes `airfoil.json` into `out`.
pub fn airfoil(out: &Path) -> Result<(), Error> {
    let mut report = crate::bench::airfoil::run(&crate::bench::airfoil::MESHES, &crate::bench::airfoil::PIPELINES, &mut |line| eprintln!("{line}"))?;
    report.programs = crate::bench::airfoil::programs()?;
    report.rms = crate::bench::airfoil::rms_history(&mut |line| eprintln!("{line}"))?;
    print!("{}", crate::bench::airfoil::table(&report));
    write_json(&out.join("airfoil.json"), &report)
}

/// `weft bench midg`: MIDG2's cavity at each of `orders` (all when empty) on its meshes in both
/// precisions; writes `midg.json` into `out`.
pub fn midg(orders: &[usize], out: &Path) -> Result<(), Error> {
    if let Some(bad) = orders.iter().find(|n| !(1..=4).contains(*n)) {
        return Err(Error::Input(format!("--orders {bad}: allowed range is 1 ..= 4")));
    }
    let orders = if orders.is_empty() { vec![1, 2, 3, 4] } else { orders.to_vec() };
    let report = crate::bench::midg::run(&orders, &mut |line| eprintln!("{line}"))?;
    print!("{}", crate::bench::midg::table(&report));
    write_json(&out.join("midg.json"), &report)
}

/// `weft bench dg`: MIDG2 on the shipped `torus_2x2x2`, one run per mesh of `cubes`³ sub-cubes
/// (2 and 3 when empty) for `steps` time steps at bit error rate `ber`, then the dense
/// operators' resources; writes `dg.json` into `out`.
pub fn dg(cubes: &[usize], steps: usize, ber: f64, out: &Path) -> Result<(), Error> {
    let system = crate::system::shipped_named("torus_2x2x2")?;
    let work = std::env::temp_dir().join(format!("weft-bench-dg-{}", std::process::id()));
    let bench = (|| {
        let mut runs = vec![];
        for &c in if cubes.is_empty() { &crate::bench::dg::CUBES[..] } else { cubes } {
            let options = crate::bench::dg::Options { cubes: c, steps, bit_error_rate: ber };
            runs.push(crate::bench::dg::run(&system, &options, &work.join(format!("torus{c}")), &mut |line| eprintln!("{line}"))?);
        }
        let resources = crate::bench::dg_resources::run(&work.join("dense"), &mut |line| eprintln!("{line}"))?;
        Ok::<_, Error>(crate::bench::dg::Bench { runs, resources, thesis: crate::bench::dg::thesis() })
    })();
    let _ = std::fs::remove_dir_all(&work);
    let bench = bench?;
    print!("{}", crate::bench::dg::table(&bench));
    write_json(&out.join("dg.json"), &bench)
}

/// `weft bench dg-timing`: MIDG2's compute `modules` (all when empty) placed and routed with
/// each of `seeds`; writes `dg_timing.json` into `out`.
pub fn dg_timing(modules: &[String], seeds: &[u32], out: &Path) -> Result<(), Error> {
    let work = std::env::temp_dir().join(format!("weft-bench-dg-timing-{}", std::process::id()));
    let file = out.join("dg_timing.json");
    let rows = crate::bench::dg_timing::run(modules, seeds, &work, &mut |line| eprintln!("{line}"), &mut |rows| write_json(&file, &rows));
    let _ = std::fs::remove_dir_all(&work);
    print!("{}", crate::bench::dg_timing::table(&rows?));
    Ok(())
}

/// `weft bench link`: writes `link.json` and `link_goodput.svg` into `out`.
pub fn link(out: &PathBuf) -> Result<(), Error> {
    let report = crate::bench::link::run(&mut |line| eprintln!("{line}"))?;
    print!("{}", crate::bench::link::table(&report));
    write_report(out, "link", &report, "link_goodput", &crate::bench::link::plot(&report))
}

/// `weft bench router`: writes `router.json` and `router_latency.svg` into `out`.
pub fn router(out: &PathBuf) -> Result<(), Error> {
    let work = std::env::temp_dir().join(format!("weft-bench-router-{}", std::process::id()));
    std::fs::create_dir_all(&work).map_err(|e| Error::from(e).context(work.display()))?;
    let report = crate::bench::router::run(&work, &mut |line| eprintln!("{line}"))?;
    print!("{}", crate::bench::router::table(&report));
    write_report(out, "router", &report, "router_latency", &crate::bench::router::plot(&report))
}

/// `weft bench net`: the first shipped system, and both for the load sweep, from the node
/// Verilog in `generated`; writes `net.json`, `net_beff.svg`, `net_bandwidth.svg` and
/// `net_latency.svg` into `out`.
pub fn net(out: &PathBuf, generated: &Path) -> Result<(), Error> {
    let systems = crate::system::shipped();
    let report = crate::bench::net::run(&systems[0], &systems[1], generated, &mut |line| eprintln!("{line}"))?;
    print!("{}", crate::bench::net::table(&report));
    let [beff, bandwidth, latency] = crate::bench::net::plots(&report);
    write_report(out, "net", &report, &beff.0, &beff.1)?;
    for (name, svg) in [bandwidth, latency] {
        let path = out.join(format!("{name}.svg"));
        std::fs::write(&path, svg).map_err(|e| Error::from(e).context(path.display()))?;
        println!("wrote {}", path.display());
    }
    Ok(())
}

/// `weft bench --check`: runs the fast subset, prints every figure beside its committed value, and
/// fails when one is outside its tolerance.
pub fn check(bench: &Path, generated: &Path) -> Result<(), Error> {
    let work = std::env::temp_dir().join(format!("weft-bench-check-{}", std::process::id()));
    let figures = crate::bench::check::run(bench, generated, &work, &|line| eprintln!("{line}"));
    let _ = std::fs::remove_dir_all(&work);
    let figures = figures?;
    print!("{}", crate::bench::check::table(&figures));
    let off: Vec<&str> = figures.iter().filter(|f| !f.holds()).map(|f| f.what.as_str()).collect();
    if off.is_empty() {
        println!("{} figures within tolerance of bench/*.json", figures.len());
        Ok(())
    } else {
        Err(Error::Check(format!("{} figure(s) moved beyond tolerance: {}; if the change is intended, rerun the benchmark and commit its JSON", off.len(), off.join("; "))))
    }
}

/// Writes a benchmark's rows as pretty JSON to `path`, creating its folder.
pub fn write_json(path: &Path, rows: &impl serde::Serialize) -> Result<(), Error> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| Error::from(e).context(dir.display()))?;
    }
    let text = serde_json::to_string_pretty(rows)?;
    std::fs::write(path, text + "\n").map_err(|e| Error::from(e).context(path.display()))?;
    println!("wrote {}", path.display());
    Ok(())
}

/// Writes a benchmark's `<json>.json` and `<svg>.svg` into `out`.
pub fn write_report(out: &PathBuf, json: &str, report: &impl serde::Serialize, svg: &str, plot: &str) -> Result<(), Error> {
    std::fs::create_dir_all(out).map_err(|e| Error::from(e).context(out.display()))?;
    let json = out.join(format!("{json}.json"));
    let text = serde_json::to_string_pretty(report)?;
    std::fs::write(&json, text + "\n").map_err(|e| Error::from(e).context(json.display()))?;
    let svg = out.join(format!("{svg}.svg"));
    std::fs::write(&svg, plot).map_err(|e| Error::from(e).context(svg.display()))?;
    println!("wrote {} and {}", json.display(), svg.display());
    Ok(())
}
