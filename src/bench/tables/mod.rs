//! `weft bench tables`: every table of figures in `docs/` written from the benchmarks' JSON.
//!
//! A table sits between `<!-- table: NAME -->` and `<!-- /table -->` in a Markdown file; the
//! command rewrites what lies between from `bench/*.json`, so the figures in the docs are the
//! figures the benchmarks measured. Each table names the command that measures it and its
//! reference. With `--check` nothing is written and a table that differs is an error (CI).

use crate::Error;
use serde_json::Value;
use std::path::{Path, PathBuf};

mod airfoil;
mod midg;
mod netsim;

/// The tables by name, each built from the JSON files in the bench folder.
pub const TABLES: [(&str, fn(&Sources) -> Result<String, Error>); 28] = [
    ("resources", resources),
    ("timing", timing),
    ("link-goodput", link_goodput),
    ("link-latency", link_latency),
    ("router-zero-load", router_zero_load),
    ("router-saturation", router_saturation),
    ("net", net),
    ("beff", beff),
    ("netsim", netsim::runs),
    ("netsim-model", netsim::model),
    ("netsim-load", netsim::load_sweeps),
    ("netsim-booksim", netsim::booksim),
    ("allreduce", allreduce),
    ("collectives", collectives),
    ("collectives-4x4x4", collectives_4x4x4),
    ("airfoil", airfoil::meshes),
    ("airfoil-projection", airfoil::projection),
    ("airfoil-programs", airfoil::programs),
    ("airfoil-rms", airfoil::rms),
    ("airfoil-nodes", airfoil::nodes),
    ("airfoil-nodes-projection", airfoil::nodes_projection),
    ("dg", midg::torus),
    ("dg-meshes", midg::meshes),
    ("dg-resources", midg::resources),
    ("dg-timing", midg::timing),
    ("midg-convergence", midg::convergence),
    ("numeric", numeric),
    ("numeric-compare", numeric_compare),
];

/// Where the figures come from: the benchmarks' JSON and the check flow's reports.
pub struct Sources {
    /// `bench/`: one JSON file per benchmark.
    pub bench: PathBuf,
    /// `generated/`: the shipped Verilog, and in `reports/` the Yosys and nextpnr figures per
    /// module as `weft check` records them.
    pub generated: PathBuf,
}

/// The Verilog file of `module` under `dir` (any subfolder).
fn verilog_of(dir: &Path, module: &str) -> Option<PathBuf> {
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for path in std::fs::read_dir(&d).ok()?.filter_map(|e| e.ok().map(|e| e.path())) {
            if path.is_dir() {
                stack.push(path);
            } else if path.file_name().is_some_and(|n| n.to_string_lossy() == format!("{module}.v")) {
                return Some(path);
            }
        }
    }
    None
}

/// A benchmark's JSON file `file` in `dir`; an unreadable or malformed file names its path.
pub(crate) fn load(dir: &Path, file: &str) -> Result<Value, Error> {
    let path = dir.join(file);
    let text = std::fs::read_to_string(&path).map_err(|e| Error::from(e).context(path.display()))?;
    serde_json::from_str(&text).map_err(|e| Error::Input(format!("{}: {e}", path.display())))
}

fn rows(v: &Value) -> &[Value] {
    v.as_array().map_or(&[], |a| a.as_slice())
}

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or(f64::NAN)
}

/// An integer with thousands separators (1,744).
fn int(v: &Value) -> String {
    let Some(n) = v.as_f64().filter(|n| n.is_finite()) else { return "–".into() };
    let digits = format!("{}", n.round() as i64);
    let (sign, digits) = digits.split_at(if n < 0.0 { 1 } else { 0 });
    let grouped: Vec<String> = digits.as_bytes().rchunks(3).rev().map(|c| String::from_utf8_lossy(c).into()).collect();
    format!("{sign}{}", grouped.join(","))
}

fn fixed(v: f64, places: usize) -> String {
    if v.is_finite() {
        format!("{v:.places$}")
    } else {
        "–".into()
    }
}

/// A Markdown table with a caption line naming its command and reference.
fn table(caption: &str, header: &[&str], body: Vec<Vec<String>>) -> String {
    let mut t = format!("{caption}\n\n| {} |\n|", header.join(" | "));
    for (i, _) in header.iter().enumerate() {
        t += if i == 0 { " --- |" } else { " --: |" };
    }
    t += "\n";
    for row in body {
        t += &format!("| {} |\n", row.join(" | "));
    }
    t
}

fn resources(src: &Sources) -> Result<String, Error> {
    let reports = src.generated.join("reports");
    let mut files: Vec<PathBuf> =
        std::fs::read_dir(&reports).map_err(|e| Error::from(e).context(reports.display()))?.filter_map(|e| e.ok().map(|e| e.path())).filter(|p| p.extension().is_some_and(|e| e == "json")).collect();
    files.sort();
    let mut body = vec![];
    for file in files {
        let r = load(&reports, &file.file_name().unwrap_or_default().to_string_lossy())?;
        let module = r["module"].as_str().unwrap_or("");
        // Fmax only where it was measured on the Verilog shipped now.
        let current = verilog_of(&src.generated, module).and_then(|v| std::fs::read(v).ok()).map(|text| crate::cache::verilog_hash(&text));
        let t = &r["timing"];
        let fmax = if !t.is_null() && t["verilog_hash"].as_str() == current.as_deref() { fixed(f(&t["fmax_mhz"]), 1) } else { "–".into() };
        body.push(vec![
            format!("`{module}`"),
            int(&r["luts"]),
            int(&r["flip_flops"]),
            int(&r["lut_rams"]),
            fixed(f(&r["brams"]), 1),
            int(&r["dsps"]),
            int(&r["logic_depth"]),
            int(&r["lut_levels"]),
            fmax,
        ]);
    }
    Ok(table(
        "Every shipped module: Yosys 0.23 `synth_xilinx -flatten -noiopad` (7-series cells; depth counts LUT, carry and mux cells, LUT levels LUT1–6 only) and, where it was run on the Verilog shipped now, post-route Fmax on a Lattice ECP5-85F (Yosys `synth_ecp5` + nextpnr-ecp5, one seed). `weft check <module> [--timing]` (generated/reports/<module>.json).",
        &["module", "LUT", "FF", "LUTRAM", "BRAM", "DSP", "depth", "LUT levels", "ECP5 Fmax (MHz)"],
        body,
    ))
}

fn link_goodput(src: &Sources) -> Result<String, Error> {
    let j = load(&src.bench, "link.json")?;
    // One row per packet size (the JSON lists every size once per lane count).
    let mut sizes: Vec<u64> = rows(&j["goodput"]).iter().filter_map(|r| r["packet_bytes"].as_u64()).collect();
    sizes.sort_unstable();
    sizes.dedup();
    let at = |bytes: u64, lanes: u64| rows(&j["goodput"]).iter().find(|r| r["packet_bytes"] == bytes && r["lanes"] == lanes).map_or(f64::NAN, |r| f(&r["goodput"]));
    let body = sizes.iter().map(|&b| vec![format!("{b} B"), fixed(at(b, 1), 3), fixed(at(b, 2), 3), fixed(at(b, 4), 3)]).collect();
    let mut t = table(
        "Goodput (payload bytes over the raw 8 bytes per lane per cycle), one direction, always ready. `weft bench link` (bench/link.json); reference: the raw line rate, 1.0.",
        &["packet", "1 lane", "2 lanes", "4 lanes"],
        body,
    );
    let errors = rows(&j["bit_errors"]).iter().map(|r| vec![format!("{:e}", f(&r["bit_error_rate"])), fixed(f(&r["goodput"]), 3), int(&r["flipped_bits"]), int(&r["retransmitted_frames"])]).collect();
    t += "\n";
    t += &table("Under bit errors: two lanes, 2,048-byte packets, every packet delivered intact.", &["bit error rate", "goodput", "bits flipped", "frames resent"], errors);
    Ok(t)
}

fn link_latency(src: &Sources) -> Result<String, Error> {
    let j = load(&src.bench, "link.json")?;
    let body = rows(&j["latency"]).iter().map(|r| vec![int(&r["lanes"]), int(&r["cycles"]), int(&r["channel_cycles"])]).collect();
    Ok(table("One 16-byte packet through an idle link, first beat in to first beat out. `weft bench link` (bench/link.json).", &["lanes", "cycles", "of them the channel"], body))
}

fn router_zero_load(src: &Sources) -> Result<String, Error> {
    let j = load(&src.bench, "router.json")?;
    let body = rows(&j["zero_load"])
        .iter()
        .map(|r| vec![r["config"].as_str().unwrap_or("").into(), int(&r["local_cycles"]), int(&r["hops"]), int(&r["far_cycles"]), fixed(f(&r["per_hop_cycles"]), 2)])
        .collect();
    let mut t = table("Header in to header out at zero load, in Verilator. `weft bench router` (bench/router.json).", &["router", "local", "hops", "far", "per hop"], body);
    let area =
        rows(&j["area"]).iter().map(|r| vec![format!("`{}`", r["module"].as_str().unwrap_or("")), int(&r["luts"]), int(&r["flip_flops"]), fixed(f(&r["brams"]), 1), int(&r["logic_depth"])]).collect();
    t += "\n";
    t += &table("Yosys `synth_xilinx` of the routers the benchmark generates.", &["module", "LUT", "FF", "BRAM", "depth"], area);
    Ok(t)
}

fn router_saturation(src: &Sources) -> Result<String, Error> {
    let j = load(&src.bench, "router.json")?;
    let body = rows(&j["saturation"])
        .iter()
        .map(|r| vec![r["torus"].as_str().unwrap_or("").into(), r["pattern"].as_str().unwrap_or("").into(), fixed(f(&r["throughput"]), 3), fixed(f(&r["zero_load_latency"]), 1)])
        .collect();
    Ok(table(
        "Saturation throughput (flits per node per cycle) and zero-load latency (cycles), BookSim-like configuration in Verilator. `weft bench router` (bench/router.json); reference: BookSim2 with the configuration in the router chapter.",
        &["torus", "pattern", "saturation", "zero-load latency"],
        body,
    ))
}

fn net(src: &Sources) -> Result<String, Error> {
    let j = load(&src.bench, "net.json")?;
    let mhz = f(&j["fabric_mhz"]);
    let mut body: Vec<Vec<String>> = rows(&j["ping_pong"])
        .iter()
        .map(|r| vec![format!("round trip, {}", r["path"].as_str().unwrap_or("")), format!("{} cycles", int(&r["round_trip_cycles"])), format!("{} ns", fixed(f(&r["round_trip_ns"]), 1))])
        .collect();
    body.push(vec!["b_eff (21 message sizes, node 0 → node 1)".into(), format!("{} B/cycle", fixed(f(&j["beff_measured"]), 2)), format!("{} GB/s", fixed(f(&j["beff_gbytes_per_s"]), 2))]);
    body.push(vec!["b_eff, LogP-style model from the measured α".into(), format!("{} B/cycle", fixed(f(&j["beff_model"]), 2)), format!("measured / model {}", fixed(f(&j["beff_ratio"]), 3))]);
    for r in rows(&j["bandwidth"]).iter().filter(|r| [256, 4096].contains(&r["bytes"].as_u64().unwrap_or(0))) {
        body.push(vec![format!("streamed, {} B packets", int(&r["bytes"])), format!("{} B/cycle", fixed(f(&r["bytes_per_cycle"]), 2)), format!("{} GB/s", fixed(f(&r["gbytes_per_s"]), 2))]);
    }
    Ok(table(
        &format!("The generated nodes of `{}` in Verilator at {mhz} MHz. `weft bench net` (bench/net.json).", j["system"].as_str().unwrap_or("")),
        &["figure", "cycles / rate", "at the fabric clock"],
        body,
    ))
}

/// `weft bench timing`: each design's Fmax per placement seed and the median, beside the
/// reference switch's median (same tools and seeds).
fn timing(src: &Sources) -> Result<String, Error> {
    let j = load(&src.bench, "timing.json")?;
    let designs = rows(&j);
    let fmax = |s: &Value| if s["timing"].is_null() { "no route".to_string() } else { fixed(f(&s["timing"]["fmax_mhz"]), 1) };
    let reference = designs.iter().find(|r| r["module"].as_str().is_some_and(|m| m.starts_with("axis_switch"))).map(|r| f(&r["median_fmax_mhz"]));
    let body = designs
        .iter()
        .map(|r| {
            let median = f(&r["median_fmax_mhz"]);
            let ratio = reference.map_or("–".to_string(), |m| fixed(median / m, 2));
            vec![format!("`{}`", r["module"].as_str().unwrap_or("")), rows(&r["seeds"]).iter().map(fmax).collect::<Vec<_>>().join(" / "), fixed(median, 1), ratio]
        })
        .collect();
    let seeds: Vec<String> = designs.first().map(|r| rows(&r["seeds"]).iter().map(|s| int(&s["seed"])).collect()).unwrap_or_default();
    Ok(table(
        &format!(
            "Post-route Fmax on a Lattice ECP5-85F (Yosys `synth_ecp5` + nextpnr-ecp5, out-of-context harness) per placement seed ({}) and the median, beside verilog-axis's `axis_switch` (5×5, 128-bit) placed and routed with the same tools and seeds. `weft bench timing --reference <verilog-axis checkout> --only <modules> --seeds 3` (bench/timing.json).",
            seeds.join(", ")
        ),
        &["module", "Fmax per seed, MHz", "median, MHz", "median / axis_switch median"],
        body,
    ))
}

fn beff(src: &Sources) -> Result<String, Error> {
    // c = 1: ring_520n, one 256-bit channel a link; c = 2: ring_520n_4qsfp, two bonded; c = 2
    // over the board's IO channels: ring_520n_io.
    let runs = |system: &str| -> Result<[Value; 4], Error> {
        let [a, b, c, d] = ["2", "2_lockstep", "8", "8_lockstep"].map(|s| format!("beff_{system}_{s}.json"));
        Ok([load(&src.bench, &a)?, load(&src.bench, &b)?, load(&src.bench, &c)?, load(&src.bench, &d)?])
    };
    let (one, two, io) = (runs("ring_520n")?, runs("ring_520n_4qsfp")?, runs("ring_520n_io")?);
    let seed = super::beff::SEED_001;
    let at = |j: &Value, bytes: &Value, key: &str| rows(&j["sizes"]).iter().find(|l| &l["bytes"] == bytes).map_or(f64::NAN, |l| f(&l[key]));
    let mut body = vec![];
    for r in rows(&one[0]["sizes"]) {
        let b = &r["bytes"];
        let measured = seed.iter().find(|m| b.as_u64() == Some(m.0 as u64)).map_or(f64::NAN, |m| m.1);
        let mut row = vec![int(b)];
        for j in [&one[0], &one[1], &two[0], &two[1], &io[0], &io[1]] {
            row.push(fixed(at(j, b, "measured") / 2e9, 3));
        }
        row.push(fixed(at(&one[0], b, "model") / 2e9, 3));
        row.push(fixed(at(&two[0], b, "model") / 2e9, 3));
        row.push(fixed(measured / 1e9, 3));
        body.push(row);
    }
    let mut t = table(
        "b(L) per node in GB/s on a ring of two nodes in Verilator: `ring_520n` (one 256-bit channel a link, c = 1), `ring_520n_4qsfp` (all four QSFPs: two channels bonded into each of weft's reliable links, c = 2) and `ring_520n_io` (all four QSFPs as the board's IO channels, two to each neighbour under weft's `io_link`, c = 2). `weft bench beff --config <system> --nodes 2 [--lockstep]` (bench/beff_<system>_2*.json); references: seed 001's model for c = 1 and c = 2 and seed 001's measurement on one 520N, at the message sizes seed 001 measured.",
        &["L (bytes)", "c = 1 streamed", "c = 1 lockstep", "c = 2 streamed", "c = 2 lockstep", "IO c = 2 streamed", "IO c = 2 lockstep", "model c = 1", "model c = 2", "seed 001 measured"],
        body,
    );
    let mut summary = vec![];
    for (system, c, j) in [("ring_520n", 1, &one), ("ring_520n_4qsfp", 2, &two), ("ring_520n_io", 2, &io)] {
        for (k, (n, mode)) in [(2, "streamed"), (2, "lockstep"), (8, "streamed"), (8, "lockstep")].into_iter().enumerate() {
            // Linear scaling: the 8-node ring against four times the 2-node one.
            let linear = if n == 8 { fixed(f(&j[k]["beff"]) / (4.0 * f(&j[k - 2]["beff"])), 3) } else { "".into() };
            summary.push(vec![
                format!("`{system}` (c = {c})"),
                n.to_string(),
                mode.to_string(),
                fixed(f(&j[k]["beff"]) / 1e9, 2),
                fixed(f(&j[k]["beff"]) / n as f64 / 1e9, 2),
                fixed(f(&j[k]["beff_model"]) / 1e9, 2),
                fixed(f(&j[k]["ratio"]), 3),
                linear,
            ]);
        }
    }
    t += "\n";
    t += &table(
        &format!(
            "b_eff of the whole ring (sum over nodes) and per node, GB/s, beside seed 001's model for the same channels and sizes, and the 8-node ring against four times the 2-node one. Seed 001 measured {:.2} GB/s on one 520N and {:.2} GB/s on eight, and quotes its model as 8.17 GB/s a node for c = 2 (its formula gives 8.14 GB/s over these sizes, the ones it measured).",
            super::beff::SEED_001_BEFF / 1e9,
            super::beff::SEED_001_BEFF_8 / 1e9
        ),
        &["system", "nodes", "messages", "weft", "weft a node", "seed 001 model", "weft / model", "8 nodes / 4 × 2 nodes"],
        summary,
    );
    Ok(t)
}

/// The systems the collectives are measured on by default.
const SHIPPED: [&str; 3] = ["torus_4x2x1", "torus_2x2x2", "ring_520n"];

/// One table per system of `systems`, from `bench/<stem>_<system>.json`.
fn per_system(src: &Sources, stem: &str, systems: &[&str], make: impl Fn(&str, &Value) -> String) -> Result<String, Error> {
    let mut tables = vec![];
    for system in systems {
        tables.push(make(system, &load(&src.bench, &format!("{stem}_{system}.json"))?));
    }
    Ok(tables.join("\n"))
}

/// The fabric a collectives benchmark measured: inbound links, B, D and h.
fn fabric(j: &Value) -> String {
    format!("{} inbound links at {} B/cycle each plus {} hops of {} cycles", j["inbound_links"], fixed(f(&j["link_bytes_per_cycle"]), 2), j["diameter"], j["hop_cycles"])
}

fn allreduce(src: &Sources) -> Result<String, Error> {
    per_system(src, "allreduce", &SHIPPED, |system, j| {
        let body = rows(&j["points"])
            .iter()
            .map(|p| {
                vec![
                    int(&p["elements"]),
                    int(&p["cycles"]),
                    if p["butterfly"].as_bool() == Some(true) { "butterfly" } else { "chain" }.to_string(),
                    int(&p["selected_cycles"]),
                    format!("{} ({})", int(&p["striped_cycles"]), int(&p["stripes"])),
                    int(&p["best_cycles"]),
                    int(&p["lower_bound_cycles"]),
                    fixed(f(&p["to_bound"]), 2),
                    int(&p["arrival_bound_cycles"]),
                    int(&p["ring_cycles"]),
                    int(&p["baseline_cycles"]),
                ]
            })
            .collect();
        let caption = format!(
            "`{system}`: binary32 sum, cycles from the first element in to the last result out: on the chain alone; with the unit selected by size (the butterfly up to the collectives' `small_bytes`); striped over the torus's chains (in brackets how many), one engine each; best: the butterfly up to `small_bytes`, else striped. Lower bound: 2(P−1)/P of the vector over all {}; the arrival bound (the vector once) is weaker. `weft bench allreduce` (bench/allreduce_{system}.json); references: an endpoint ring and gather-then-broadcast on the same fabric.",
            fabric(j)
        );
        table(&caption, &["elements", "chain", "unit by size", "cycles", "striped (chains)", "best", "lower bound", "best / bound", "arrival bound", "endpoint ring", "gather + broadcast"], body)
    })
}

fn collectives(src: &Sources) -> Result<String, Error> {
    collectives_on(src, &SHIPPED, "weft bench collectives")
}

/// The collectives on the 4×4×4 torus of `torus_2x2x2`'s node (`weft bench collectives --dims 4,4,4`).
fn collectives_4x4x4(src: &Sources) -> Result<String, Error> {
    collectives_on(src, &["torus_4x4x4"], "weft bench collectives --dims 4,4,4 --lengths 1,256,4096")
}

/// The collectives' table of each of `systems`, measured by `command`.
fn collectives_on(src: &Sources, systems: &[&str], command: &str) -> Result<String, Error> {
    per_system(src, "collectives", systems, |system, j| {
        let body = rows(&j["points"])
            .iter()
            .map(|p| {
                let striped = if p["striped_cycles"].is_u64() { format!("{} ({})", int(&p["striped_cycles"]), int(&p["stripes"])) } else { "–".into() };
                vec![
                    p["collective"].as_str().unwrap_or("?").to_string(),
                    int(&p["elements"]),
                    int(&p["cycles"]),
                    striped,
                    int(if p["best_cycles"].is_u64() { &p["best_cycles"] } else { &p["cycles"] }),
                    fixed(f(&p["microseconds"]), 2),
                    fixed(f(&p["bytes_per_second"]) / 1e6, 0),
                    int(&p["bound_cycles"]),
                    fixed(f(&p["to_bound"]), 2),
                ]
            })
            .collect();
        let caption = format!(
            "`{system}` ({} MHz): binary32, sums where a collective reduces, reduce and broadcast rooted at node 0; cycles on the collective unit alone (the butterfly where it takes the vector, else the chain) and striped over the torus's chains (in brackets how many; – not run); µs, MB/s (one node's vector over the time) and the ratio to the bound for the faster. Bound: the bytes the busiest node must receive over {}. `{command}` (bench/collectives_{system}.json).",
            j["fabric_mhz"],
            fabric(j)
        );
        table(&caption, &["collective", "elements per node", "unit", "striped (chains)", "best", "µs", "MB/s", "bound", "best / bound"], body)
    })
}

fn numeric(src: &Sources) -> Result<String, Error> {
    let j = load(&src.bench, "numeric.json")?;
    let body = rows(&j)
        .iter()
        .filter(|r| r["shipped"] == true)
        .map(|r| {
            let multiplier = match r["multiplier"].as_str() {
                Some("dsp_shift") => "DSP shift",
                Some("lut_shift") => "LUT shift",
                _ => "–",
            };
            vec![format!("`{}`", r["module"].as_str().unwrap_or("")), multiplier.into(), int(&r["latency"]), int(&r["luts"]), int(&r["flip_flops"]), int(&r["dsps"]), int(&r["logic_depth"])]
        })
        .collect();
    Ok(table(
        "The shipped operators and kernels, Yosys `synth_xilinx`; a kernel with float products once with each multiplier (DSP shift: `fp32_mul`, 6 DSP48E1; LUT shift: `fp32_mul_lut_shift`, 2 DSP48E1). `weft bench numeric` (bench/numeric.json; every stage count is in the JSON).",
        &["module", "multiplier", "latency", "LUT", "FF", "DSP", "depth"],
        body,
    ))
}

fn numeric_compare(src: &Sources) -> Result<String, Error> {
    let j = load(&src.bench, "numeric_compare.json")?;
    let body = rows(&j)
        .iter()
        .map(|r| {
            let fmax = r["fmax_mhz"].as_f64().map_or("–".into(), |m| fixed(m, 1));
            vec![
                r["op"].as_str().unwrap_or("").into(),
                r["implementation"].as_str().unwrap_or("").into(),
                int(&r["latency"]),
                int(&r["luts"]),
                int(&r["flip_flops"]),
                int(&r["dsps"]),
                int(&r["lut_levels"]),
                (if r["subnormals"] == true { "yes" } else { "no" }).into(),
                fmax,
                r["source"].as_str().unwrap_or("").into(),
            ]
        })
        .collect();
    Ok(table(
        "binary32 operators beside FloPoCo and Berkeley HardFloat. `weft bench numeric --compare` (bench/numeric_compare.json).",
        &["op", "implementation", "latency", "LUT", "FF", "DSP", "LUT levels", "subnormals", "Fmax (MHz)", "source"],
        body,
    ))
}

/// Rewrites every table in `text`; returns the new text and the names of the tables it holds.
pub fn fill(text: &str, sources: &Sources) -> Result<(String, Vec<String>), Error> {
    let mut out = String::new();
    let mut names = vec![];
    let mut rest = text;
    while let Some(start) = rest.find("<!-- table: ") {
        let open_end = rest[start..].find("-->").map(|e| start + e + 3).ok_or_else(|| Error::Input("an unclosed `<!-- table:` marker".into()))?;
        let name = rest[start + 12..open_end - 3].trim().to_string();
        let close = rest[open_end..].find("<!-- /table -->").map(|c| open_end + c).ok_or_else(|| Error::Input(format!("table `{name}` has no `<!-- /table -->`")))?;
        let make = TABLES.iter().find(|(n, _)| *n == name).map(|t| t.1).ok_or_else(|| Error::Input(format!("no table named `{name}`; known: {}", TABLES.map(|t| t.0).join(", "))))?;
        out += &rest[..open_end];
        out += "\n";
        out += &make(sources)?;
        rest = &rest[close..];
        names.push(name);
    }
    out += rest;
    Ok((out, names))
}

/// Fills the tables of every Markdown file under `docs` (recursively); with `check`, writes
/// nothing and fails when a file's tables differ from what the JSON gives.
pub fn command(docs: &Path, sources: &Sources, check: bool) -> Result<(), Error> {
    let bench = &sources.bench;
    let mut files = vec![];
    let mut stack = vec![docs.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).map_err(|e| Error::from(e).context(dir.display()))? {
            let path = entry?.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "md") {
                files.push(path);
            }
        }
    }
    files.sort();
    let mut stale = vec![];
    for file in files {
        let text = std::fs::read_to_string(&file).map_err(|e| Error::from(e).context(file.display()))?;
        let (new, names) = fill(&text, sources).map_err(|e| e.context(file.display()))?;
        if new != text {
            stale.push(format!("{} ({})", file.display(), names.join(", ")));
            if !check {
                std::fs::write(&file, new).map_err(|e| Error::from(e).context(file.display()))?;
            }
        }
    }
    match (check, stale.is_empty()) {
        (_, true) => println!("every table in {} matches {}", docs.display(), bench.display()),
        (false, false) => println!("rewrote {}", stale.join(", ")),
        (true, false) => return Err(Error::Check(format!("tables differ from {}: {}; run `weft bench tables`", bench.display(), stale.join(", ")))),
    }
    Ok(())
}
