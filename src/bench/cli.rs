//! The `weft bench` subcommands: what each benchmark takes on the command line, and which
//! function of [`super::commands`] runs it.

// The variants' comments are the command line's help text, where `<name>` is a placeholder.
#![allow(rustdoc::invalid_html_tags)]

use crate::Error;
use clap::Subcommand;
use std::path::{Path, PathBuf};

/// A benchmark of `weft bench` and its options.
#[derive(Subcommand)]
pub enum Bench {
    /// Write every figure table in docs/ from bench/*.json (between `<!-- table: NAME -->` and
    /// `<!-- /table -->`); with --check, only report tables that differ
    Tables {
        /// Only report the tables that differ; write nothing
        #[arg(long)]
        check: bool,
    },
    /// Simulated cycles per second of the built-in simulator and the Verilator harness on the
    /// same FIFO with the same stimulus, and on the whole 4x2x1 torus of nodes
    SimSpeed {
        /// Cycles to simulate in each simulator
        #[arg(long, default_value_t = 200_000, value_parser = clap::value_parser!(u64).range(1000..))]
        cycles: u64,
        /// Cycles of saturated traffic on the whole 4x2x1 torus of nodes (needs `weft generate`)
        #[arg(long, default_value_t = 5_000, value_parser = clap::value_parser!(u64).range(100..))]
        torus_cycles: u64,
    },
    /// Latency and Yosys LUT/FF/DSP/logic depth of every FP operator, compare and conversion at
    /// every stage count, and of every shipped kernel; prints a table, writes JSON
    Numeric {
        /// Only these modules (e.g. fp32_add,dg_rk_update); all when empty
        #[arg(long, value_delimiter = ',')]
        only: Vec<String>,
        /// JSON output file
        #[arg(long, default_value = "bench/numeric.json")]
        json: PathBuf,
        /// Parallel Yosys runs
        #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u64).range(1..=64))]
        jobs: u64,
        /// Instead: FP32 add/mul/div/sqrt at their shipped depths beside FloPoCo's and
        /// HardFloat's operators, with LUT levels and ECP5 post-route Fmax (JSON to
        /// bench/numeric_compare.json unless --json is given)
        #[arg(long)]
        compare: bool,
    },
    /// Timing of the fabric: Yosys per device family (LUTs, LUT levels, deepest path) and
    /// post-route Fmax on an ECP5-85F per placement seed with the median, beside verilog-axis's
    /// axis_switch (5x5, 128-bit) when `--reference` points at a verilog-axis checkout; prints a
    /// table, writes JSON (slow)
    Timing {
        /// Root of a verilog-axis checkout (github.com/alexforencich/verilog-axis)
        #[arg(long)]
        reference: Option<PathBuf>,
        /// Only these modules; the router, link, register window and a node when empty
        #[arg(long, value_delimiter = ',')]
        only: Vec<String>,
        /// Folder holding the generated Verilog
        #[arg(long, default_value = "generated")]
        generated: PathBuf,
        /// Place and route every design with nextpnr seeds 1..=N and report the median (1..=9)
        #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=9))]
        seeds: u32,
        /// Seeds placed and routed at once (one core each)
        #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=9))]
        jobs: u32,
        /// JSON output file
        #[arg(long, default_value = "bench/timing.json")]
        json: PathBuf,
    },
    /// Goodput of the reliable link for packets of 16 B to 4 KB on 1, 2 and 4 lanes, zero-load
    /// latency, and goodput under bit errors; prints a table, writes JSON and an SVG plot
    Link {
        /// Output folder for link.json and link_goodput.svg
        #[arg(long, default_value = "bench")]
        out: PathBuf,
    },
    /// The router on the generated RTL in Verilator: zero-load latency, latency vs offered load
    /// and saturation throughput (uniform, transpose, nearest neighbour on 4x4x4 and 4x2x2),
    /// Yosys figures; prints a table, writes JSON and an SVG plot
    Router {
        /// Output folder for router.json and router_latency.svg
        #[arg(long, default_value = "bench")]
        out: PathBuf,
    },
    /// `weft netsim` on 4×4×4 and 8×8×8 tori of a system's node, in one process and on two MPI
    /// ranks (mpirun): cycles per second, swap cost, and the scaling model built from them;
    /// writes netsim.json
    Netsim {
        /// The system description whose node runs
        #[arg(long, default_value = "examples/torus_2x2x2.toml")]
        config: PathBuf,
        /// Output folder for netsim.json
        #[arg(long, default_value = "bench")]
        out: PathBuf,
    },
    /// Latency and accepted throughput against offered load on 4×4×4 and 8×8×8 tori of a
    /// system's node (`weft netsim` under mpirun): uniform, transpose (4×4×4) and neighbour
    /// traffic of 64-byte packets; saturation and zero-load latency; writes netsim_load.json
    NetsimLoad {
        /// The system description whose node runs
        #[arg(long, default_value = "examples/torus_2x2x2.toml")]
        config: PathBuf,
        /// MPI ranks for every run
        #[arg(long, default_value_t = 2)]
        ranks: usize,
        /// Cycles of traffic a load point (the second half is measured), and as many to drain
        #[arg(long, default_value_t = 3000)]
        cycles: u64,
        /// Output folder for netsim_load.json
        #[arg(long, default_value = "bench")]
        out: PathBuf,
    },
    /// BookSim2 on the tori and traffic of `netsim-load` (uniform, transpose), configured as the
    /// system's node: its VCs and buffers, 5-flit packets, hops as long as the generated links';
    /// writes booksim.json
    Booksim {
        /// The BookSim2 binary (scripts/booksim.sh builds it and prints its path)
        #[arg(long, default_value = "target/booksim2/src/booksim")]
        booksim: PathBuf,
        /// The system description whose node BookSim2 stands for
        #[arg(long, default_value = "examples/torus_2x2x2.toml")]
        config: PathBuf,
        /// Cycles of traffic a load point (the first half warms up, the second is measured)
        #[arg(long, default_value_t = 2000)]
        cycles: u64,
        /// Output folder for booksim.json
        #[arg(long, default_value = "bench")]
        out: PathBuf,
    },
    /// Seed 001's b_eff on a ring of the system's nodes (generated into a temporary folder, in
    /// Verilator): every node's self-test sends to its X+ neighbour and receives from X−, 21
    /// message sizes, beside seed 001's model and measurement; prints a table, writes JSON and SVG
    Beff {
        /// The system description (e.g. examples/ring_520n.toml)
        #[arg(long)]
        config: PathBuf,
        /// Nodes in the ring (the description's X dimension when not given)
        #[arg(long)]
        nodes: Option<usize>,
        /// Each message waits for the neighbour's previous one, as seed 001's kernel
        #[arg(long)]
        lockstep: bool,
        /// Output folder for beff_<name>_<nodes>.json and .svg
        #[arg(long, default_value = "bench")]
        out: PathBuf,
    },
    /// The in-network allreduce in Verilator on the generated nodes (the unit on IntraNode ports
    /// 0 and 1, stripe engines on 2–5): chain, unit by size and striped, every result checked bit
    /// for bit, beside the endpoint ring, gather-then-broadcast on the same fabric and the
    /// torus's lower bound; prints a table per system, writes JSON and SVG
    Allreduce {
        /// System descriptions (both shipped tori and examples/ring_520n.toml when not given)
        #[arg(long)]
        config: Vec<PathBuf>,
        /// Vector lengths in elements (comma-separated; the benchmark's eight when not given)
        #[arg(long, value_delimiter = ',')]
        lengths: Vec<usize>,
        /// Bit error rate on every cable during the in-network runs
        #[arg(long, default_value_t = 0.0)]
        ber: f64,
        /// Output folder for allreduce_<name>.json and .svg
        #[arg(long, default_value = "bench")]
        out: PathBuf,
    },
    /// Every collective (allreduce, reduce, broadcast, allgather, reduce-scatter, barrier) from 1
    /// to 65,536 binary32 elements in Verilator on the generated nodes, every result checked,
    /// beside each collective's lower bound; prints a table per system, writes JSON and SVG
    Collectives {
        /// System descriptions (both shipped tori and examples/ring_520n.toml when not given)
        #[arg(long)]
        config: Vec<PathBuf>,
        /// Vector lengths in elements (comma-separated; 1, 16, 256, 4096, 65536 when not given)
        #[arg(long, value_delimiter = ',')]
        lengths: Vec<usize>,
        /// Torus size X,Y,Z instead of each description's (e.g. 4,4,4); the results are named
        /// torus_XxYxZ
        #[arg(long, value_delimiter = ',')]
        dims: Vec<usize>,
        /// Output folder for collectives_<name>.json and .svg
        #[arg(long, default_value = "bench")]
        out: PathBuf,
    },
    /// Airfoil's application file compiled whole (binary64, 1–8 pipelines) on 960 to 720,000
    /// cells beside OP2's published times; prints tables, writes airfoil.json. With --nodes:
    /// Airfoil split over tori of N nodes instead (simulated on 9,900 cells, the model checked
    /// against it and projected for 720,000 cells over 4–64 nodes); writes airfoil_nodes.json
    Airfoil {
        /// Node counts to simulate (comma-separated: 1, 2, 4, 8)
        #[arg(long, value_delimiter = ',')]
        nodes: Vec<usize>,
        /// Output folder for airfoil.json or airfoil_nodes.json
        #[arg(long, default_value = "bench")]
        out: PathBuf,
    },
    /// MIDG2's software model on the unit-cube cavity to t = 0.75 at orders 1-4 on meshes of 2³ to
    /// 16³ sub-cubes, binary64 and binary32: errors against the exact solution and observed
    /// orders; prints a table, writes midg.json
    Midg {
        /// Orders to run (comma-separated; 1,2,3,4 when not given)
        #[arg(long, value_delimiter = ',')]
        orders: Vec<usize>,
        /// Output folder for midg.json
        #[arg(long, default_value = "bench")]
        out: PathBuf,
    },
    /// MIDG2 (order 3, binary32) over torus_2x2x2 with no host: the generated nodes in Verilator,
    /// each node's program, halo engine and bridge beside it; cycles a stage for volume,
    /// surface, update and exchange, halo bytes, GFLOP/s, beside seed 000's figures, checked bit
    /// for bit against the partitioned model; prints a table, writes dg.json
    Dg {
        /// Sub-cubes per side of each mesh (comma-separated; six tetrahedra each; 2..=4; 2,3 when
        /// not given)
        #[arg(long, value_delimiter = ',')]
        cubes: Vec<usize>,
        /// Time steps (five Runge-Kutta stages, a halo refresh each)
        #[arg(long, default_value_t = 1)]
        steps: usize,
        /// Bit error rate on every cable
        #[arg(long, default_value_t = 0.0)]
        ber: f64,
        /// Output folder for dg.json
        #[arg(long, default_value = "bench")]
        out: PathBuf,
    },
    /// MIDG2's compute modules (Dr, curl, flux, LIFT, update; order 3, binary32) each placed and
    /// routed alone on an ECP5-85F with three nextpnr seeds: Fmax per seed and the median; prints
    /// a table, writes dg_timing.json (slow: about ten minutes a module and seed)
    DgTiming {
        /// Only these modules (comma-separated: midg_derivatives_ur, midg_curl, midg_flux,
        /// midg_lift_lift, midg_update); all when empty
        #[arg(long, value_delimiter = ',')]
        modules: Vec<String>,
        /// Placement seeds (comma-separated)
        #[arg(long, value_delimiter = ',', default_values_t = crate::bench::dg_timing::SEEDS)]
        seeds: Vec<u32>,
        /// Output folder for dg_timing.json
        #[arg(long, default_value = "bench")]
        out: PathBuf,
    },
    /// The shipped systems' generated nodes in Verilator: b_eff against the analytic model,
    /// 16-byte ping-pong, one-way bandwidth against message size (on torus_4x2x1), latency against
    /// load (both tori); prints tables, writes net.json and three SVG plots
    Net {
        /// Output folder for net.json and net_*.svg
        #[arg(long, default_value = "bench")]
        out: PathBuf,
        /// Folder holding the generated Verilog
        #[arg(long, default_value = "generated")]
        generated: PathBuf,
    },
}

/// Runs `weft bench [--check] [what]`.
pub fn run(what: Option<Bench>, check: bool) -> Result<(), Error> {
    match (what, check) {
        (None, true) => crate::bench::commands::check(Path::new("bench"), Path::new("generated")),
        (Some(Bench::Tables { check }), _) => crate::bench::tables::command(Path::new("docs"), &crate::bench::tables::Sources { bench: "bench".into(), generated: "generated".into() }, check),
        (None, false) => Err(Error::Check("name a benchmark (`weft bench --help`) or give --check".into())),
        (Some(Bench::SimSpeed { cycles, torus_cycles }), _) => crate::sim::speed::report(cycles)
            .and_then(|text| {
                print!("{text}");
                let torus = crate::sim::speed::torus_report(torus_cycles, std::path::Path::new("generated"))?;
                print!("\n{torus}");
                Ok(())
            })
            .map_err(|e| Error::Check(e.to_string())),
        (Some(Bench::Numeric { compare: true, json, .. }), _) => crate::bench::commands::numeric_compare(&json),
        (Some(Bench::Numeric { only, json, jobs, .. }), _) => crate::bench::commands::numeric(&only, &json, jobs as usize),
        (Some(Bench::Link { out }), _) => crate::bench::commands::link(&out),
        (Some(Bench::Timing { reference, only, generated, seeds, jobs, json }), _) => {
            crate::bench::commands::timing(reference.as_deref(), &only, &generated, &(1..=seeds).collect::<Vec<_>>(), jobs as usize, &json)
        }
        (Some(Bench::Router { out }), _) => crate::bench::commands::router(&out),
        (Some(Bench::Net { out, generated }), _) => crate::bench::commands::net(&out, &generated),
        (Some(Bench::Allreduce { config, lengths, ber, out }), _) => crate::bench::commands::allreduce(&config, &lengths, ber, &out),
        (Some(Bench::Collectives { config, lengths, dims, out }), _) => crate::bench::commands::collectives(&config, &lengths, &dims, &out),
        (Some(Bench::Airfoil { nodes, out }), _) if nodes.is_empty() => crate::bench::commands::airfoil(&out),
        (Some(Bench::Airfoil { nodes, out }), _) => crate::bench::commands::airfoil_nodes(&nodes, &out),
        (Some(Bench::Midg { orders, out }), _) => crate::bench::commands::midg(&orders, &out),
        (Some(Bench::Dg { cubes, steps, ber, out }), _) => crate::bench::commands::dg(&cubes, steps, ber, &out),
        (Some(Bench::DgTiming { modules, seeds, out }), _) => crate::bench::commands::dg_timing(&modules, &seeds, &out),
        (Some(Bench::NetsimLoad { config, ranks, cycles, out }), _) => crate::bench::commands::netsim_load(&config, ranks, cycles, &out),
        (Some(Bench::Booksim { booksim, config, cycles, out }), _) => crate::bench::commands::booksim(&booksim, &config, cycles, &out),
        (Some(Bench::Netsim { config, out }), _) => crate::bench::commands::netsim(&config, &out),
        (Some(Bench::Beff { config, nodes, lockstep, out }), _) => crate::bench::commands::beff(&config, nodes, lockstep, &out),
    }
}
