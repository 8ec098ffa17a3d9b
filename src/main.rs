use clap::{Parser, Subcommand, ValueEnum};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use weft::flow::{check_with, generate, parallel, select, Stages};

/// How a user kernel's float products are built (`--multiplier`).
#[derive(Clone, Copy, Debug, Default, ValueEnum)]
enum MultiplierArg {
    /// Subnormal shifts as DSP multiplies: 6 DSP48E1 a binary32 product, the fewest LUTs
    #[default]
    DspShift,
    /// Subnormal shifts in LUTs: 2 DSP48E1 a binary32 product, about 30 LUTs more
    LutShift,
}

impl From<MultiplierArg> for weft_hdl::float::Multiplier {
    fn from(m: MultiplierArg) -> Self {
        match m {
            MultiplierArg::DspShift => weft_hdl::float::Multiplier::DspShift,
            MultiplierArg::LutShift => weft_hdl::float::Multiplier::LutShift,
        }
    }
}

/// weft: describe FPGA hardware for multi-FPGA HPC systems, check it in the built-in simulator,
/// and export Verilog for vendor flows, Verilator and Yosys.
#[derive(Parser)]
#[command(name = "weft", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Write every shipped module as Verilog to <out>/<family>/<module>.v and every shipped
    /// system (examples/*.toml); with --config or --kernel, only the systems and kernels those
    /// files describe
    Generate {
        /// Output folder
        #[arg(long, default_value = "generated")]
        out: PathBuf,
        /// A system description (TOML); may be given several times
        #[arg(long)]
        config: Vec<PathBuf>,
        /// A kernel in the DSL (.wk), written to <out>/kernels/<name>.v; may be given several times
        #[arg(long)]
        kernel: Vec<PathBuf>,
        /// How the --kernel files' float products are built
        #[arg(long, value_enum, default_value_t)]
        multiplier: MultiplierArg,
        /// Folder for the constraint files (<constraints>/<board>/<system>.xdc|sdc); default
        /// `constraints` with the default --out, else <out>/constraints
        #[arg(long)]
        constraints: Option<PathBuf>,
    },
    /// Check shipped modules: built-in testbench, Verilator lint (-Wall), Yosys synth_xilinx
    /// (report in <generated>/reports/<module>.json: resources, logic depth, LUT levels), Icarus
    /// compile; with --timing also place and route for Fmax
    Check {
        /// A module name, a shipped system's name, or `all`; with --config or --kernel, `all` or
        /// the name of one of the systems or kernels those files describe
        #[arg(default_value = "all")]
        module: String,
        /// Folder holding the generated Verilog
        #[arg(long, default_value = "generated")]
        generated: PathBuf,
        /// Check the system this description (TOML) generated instead; may be given several times
        #[arg(long)]
        config: Vec<PathBuf>,
        /// Check the kernel this DSL file (.wk) describes, written by `weft generate --kernel`;
        /// may be given several times
        #[arg(long)]
        kernel: Vec<PathBuf>,
        /// How the --kernel files' float products are built (as given to `weft generate`)
        #[arg(long, value_enum, default_value_t)]
        multiplier: MultiplierArg,
        /// Folder holding the constraint files; default `constraints` with the default
        /// --generated, else <generated>/constraints
        #[arg(long)]
        constraints: Option<PathBuf>,
        /// Also place and route each module on an ECP5-85F (out-of-context harness) and record its
        /// post-route Fmax and critical path (slow)
        #[arg(long)]
        timing: bool,
        /// Modules and systems checked at once, each on its own thread [default: the number of
        /// cores]
        #[arg(long, value_parser = clap::value_parser!(u64).range(1..=256))]
        jobs: Option<u64>,
        /// Run every stage again instead of reusing results recorded for the same Verilog and
        /// tool versions (in <generated>/reports)
        #[arg(long)]
        force: bool,
    },
    /// Run a kernel (shipped name or a .wk DSL file) on beats from a .npy or .csv file, write its
    /// outputs (same kind), the software model's beside them (<output>.model.*) and the diff
    /// (<output>.diff.txt); exits with an error when they differ
    Sim {
        /// A shipped kernel's name or a DSL file (.wk)
        kernel: String,
        /// Input beats: .npy (2-D float32/uint32, one row per beat, one column per lane) or .csv
        #[arg(long)]
        input: PathBuf,
        /// Output beats (.npy or .csv)
        #[arg(long)]
        output: PathBuf,
        /// Percent of cycles the output is ready (random back-pressure below 100)
        #[arg(long, default_value_t = 100)]
        ready_percent: u64,
        /// Percent of cycles the input offers a beat it has
        #[arg(long, default_value_t = 100)]
        valid_percent: u64,
        /// Per-vector kernels: rows per vector, instead of a tlast column after the lanes
        #[arg(long)]
        vector_length: Option<usize>,
        /// Write a waveform (VCD) of the built-in simulator's run
        #[arg(long)]
        vcd: Option<PathBuf>,
        /// Run the generated Verilog in Verilator instead of the built-in simulator
        #[arg(long)]
        verilator: bool,
        /// Seed of the random back-pressure
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// How the kernel's float products are built
        #[arg(long, value_enum, default_value_t)]
        multiplier: MultiplierArg,
    },
    /// Run a mesh application file (examples/apps/*.app) in OP2's sequential order, in the
    /// arithmetic the generated hardware performs, and print what its program prints
    App {
        /// The application file
        file: PathBuf,
        /// The mesh: `naca0012:I,J` (OP2's NACA0012 C-grid, 3·I·J cells), `graph:N,CHORDS,SEED`
        /// (a ring of N nodes with CHORDS random chords), or an OP2 new_grid.dat file
        #[arg(long)]
        mesh: String,
        /// Run in f64 or f32 instead of the file's own type
        #[arg(long)]
        precision: Option<String>,
        /// Compile the program to hardware instead (<out>/<app>.v; with a loop's name, that loop)
        #[arg(long, num_args = 0..=1, default_missing_value = "", value_name = "LOOP")]
        compile: Option<String>,
        /// Output folder for --compile and --partition
        #[arg(long, default_value = "generated/app")]
        out: PathBuf,
        /// Pipelines per loop for --compile (1 ..= 8)
        #[arg(long, default_value_t = 1)]
        pipelines: usize,
        /// Split the application over this many nodes instead, and write the owners and halos
        /// (<out>/<app>_partition_<K>.json)
        #[arg(long, value_name = "K")]
        partition: Option<usize>,
        /// How --partition splits: `metis` (k-way on the dual graph) or `coords:DAT` (recursive
        /// bisection of the positions in dat DAT)
        #[arg(long, default_value = "metis")]
        split: String,
        /// The set --partition splits (the others follow it through their maps); by default the
        /// target of the first map a loop increments through
        #[arg(long)]
        primary: Option<String>,
    },
    /// Simulate a system's generated node (Verilator) on a torus under traffic, every packet
    /// checked; with `mpirun -n R weft netsim …` the torus is split over R processes (METIS),
    /// which swap their cables' blocks once per window; the packet log is the same for any R
    Netsim {
        /// The system description (TOML) whose node is simulated
        #[arg(long)]
        config: PathBuf,
        /// Torus size X,Y,Z instead of the description's (e.g. 4,4,4)
        #[arg(long)]
        dims: Option<String>,
        /// Where packets go: uniform, transpose (4^k nodes) or neighbour
        #[arg(long, default_value = "uniform")]
        pattern: String,
        /// Packets each node creates per cycle
        #[arg(long, default_value_t = 0.01)]
        rate: f64,
        /// Payload bytes, MIN..MAX (uniform)
        #[arg(long, default_value = "16..64")]
        bytes: String,
        /// Cycles during which packets are created
        #[arg(long, default_value_t = 2000)]
        cycles: u64,
        /// Cycles after that for the packets in flight to arrive
        #[arg(long, default_value_t = 3000)]
        drain: u64,
        /// Bit error rate per bit on every cable
        #[arg(long, default_value_t = 0.0)]
        ber: f64,
        /// A cable pulled for a while: NODE,DIR,FROM,CYCLES (DIR xp, xn, yp, yn, zp or zn; FROM
        /// counted from the first cycle of traffic); repeat for more cables
        #[arg(long)]
        cut: Vec<String>,
        /// Seed of the traffic (the bit errors have a generator per cable)
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Each node's clock off the nominal frequency by up to this many parts per million
        /// either way (and at its own phase), drawn from --seed; 0: one clock for all
        #[arg(long, default_value_t = 0)]
        ppm: u64,
        /// Cycles between swaps of the ranks, 1 ..= channel latency − 1 [default: latency − 1]
        #[arg(long)]
        window: Option<usize>,
        /// Idle cycles for the links to come up before traffic
        #[arg(long, default_value_t = 1500)]
        bring_up: u64,
        /// Write the packet log here (rank 0)
        #[arg(long)]
        log: Option<PathBuf>,
        /// Write the run's summary here as JSON (rank 0)
        #[arg(long)]
        json: Option<PathBuf>,
    },
    /// Measure and print performance figures; `--check` runs a fast subset of every benchmark
    /// and compares each figure with the committed JSON under bench/
    Bench {
        /// Fast subset of every benchmark, each figure compared with bench/*.json (±2 % cycles)
        #[arg(long)]
        check: bool,
        #[command(subcommand)]
        what: Option<weft::bench::cli::Bench>,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result: Result<(), String> = match cli.command {
        Command::Generate { out, config, kernel, multiplier, constraints } => user_kernels(&kernel, multiplier).and_then(|user| run_generate(&out, &config, user, &constraints_dir(constraints, &out))),
        Command::Check { module, generated, config, kernel, multiplier, constraints, timing, jobs, force } => {
            let jobs = jobs.map_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()), |j| j as usize);
            let options = CheckOptions { timing, jobs, force };
            user_kernels(&kernel, multiplier).and_then(|user| run_check(&module, &generated, &config, user, &constraints_dir(constraints, &generated), options))
        }
        Command::Sim { kernel, input, output, ready_percent, valid_percent, vector_length, vcd, verilator, seed, multiplier } => {
            let multiplier = multiplier.into();
            weft::run::run_and_report(&weft::run::Options { kernel, input, output, ready_percent, valid_percent, vector_length, vcd, verilator, seed, multiplier }).map_err(String::from)
        }
        Command::App { file, mesh, partition: Some(parts), split, primary, out, .. } => weft::run::app::mesh(&mesh)
            .and_then(|data| weft::run::partition::command(&file, &data, parts, primary.as_deref(), &split, &out))
            .map(|path| println!("wrote {}", path.display()))
            .map_err(String::from),
        Command::App { file, mesh, precision, compile, out, pipelines, .. } => weft::run::app::command(&file, &mesh, precision.as_deref(), compile.as_deref(), pipelines, &out).map_err(String::from),
        Command::Netsim { config, dims, pattern, rate, bytes, cycles, drain, ber, cut, seed, ppm, window, bring_up, log, json } => {
            netsim(config, dims, &pattern, rate, &bytes, cycles, drain, ber, &cut, seed, ppm, window, bring_up, [log, json]).map_err(String::from)
        }
        Command::Bench { what, check } => weft::bench::cli::run(what, check).map_err(String::from),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::FAILURE
        }
    }
}

/// The constraints folder: as given, else `constraints` beside the default `generated` folder (the
/// repository's layout), else `<generated>/constraints` so that `--out d` writes only under `d`.
fn constraints_dir(given: Option<PathBuf>, generated: &Path) -> PathBuf {
    given.unwrap_or_else(|| if generated == Path::new("generated") { PathBuf::from("constraints") } else { generated.join("constraints") })
}

/// The --kernel files as modules, their float products built as `multiplier`.
fn user_kernels(files: &[PathBuf], multiplier: MultiplierArg) -> Result<Vec<weft::flow::Shipped>, String> {
    Ok(files.iter().map(|k| weft::flow::user_kernel(k, multiplier.into())).collect::<Result<_, _>>()?)
}

fn run_generate(out: &Path, configs: &[PathBuf], user: Vec<weft::flow::Shipped>, constraints: &Path) -> Result<(), String> {
    for file in weft::flow::write_modules(out, &user).map_err(|e| e.to_string())? {
        println!("wrote {}", file.display());
    }
    let systems = if configs.is_empty() && user.is_empty() {
        for file in generate(out).map_err(|e| e.to_string())? {
            println!("wrote {}", file.display());
        }
        weft::system::shipped()
    } else {
        configs.iter().map(|c| weft::system::load(c)).collect::<Result<Vec<_>, _>>()?
    };
    for system in &systems {
        for file in weft::system::generate(system, out, constraints).map_err(|e| format!("{}: {e}", system.name))? {
            println!("wrote {}", file.display());
        }
    }
    Ok(())
}

/// An unknown name may be a system the user described: say how to check one.
fn with_system_hint(selection: &str, error: String) -> String {
    let shipped: Vec<String> = weft::system::shipped().iter().map(|s| s.name.clone()).collect();
    let file = if selection.ends_with(".toml") { selection.to_string() } else { "<file.toml>".to_string() };
    format!("{error}\nhint: the shipped systems are {}; to check a system you described, pass its file: `weft check --config {file}` (`weft check --help` lists the options)", shipped.join(", "))
}

fn run_check(selection: &str, generated: &Path, configs: &[PathBuf], user: Vec<weft::flow::Shipped>, constraints: &Path, options: CheckOptions) -> Result<(), String> {
    let CheckOptions { timing, jobs, force } = options;
    let from_files = !configs.is_empty() || !user.is_empty();
    let systems: Vec<weft::system::SystemConfig> = if from_files {
        let described: Vec<_> = configs.iter().map(|c| weft::system::load(c)).collect::<Result<_, _>>()?;
        let names: Vec<String> = described.iter().map(|s| format!("`{}`", s.name)).collect();
        let names: Vec<String> = names.into_iter().chain(user.iter().map(|m| format!("`{}`", m.spec.name))).collect();
        let chosen: Vec<_> = described.into_iter().filter(|s| selection == "all" || s.name == selection).collect();
        if chosen.is_empty() && !user.iter().any(|m| selection == "all" || m.spec.name == selection) {
            let what = match (configs.is_empty(), user.is_empty()) {
                (false, true) => "system the --config files",
                (true, false) => "kernel the --kernel files",
                _ => "system or kernel the --config and --kernel files",
            };
            return Err(format!(
                "`{selection}` is not a {what} describe ({}); with those give `all` (the default) or one of those names, and check a shipped module without them: `weft check {selection}`",
                names.join(", ")
            ));
        }
        chosen
    } else {
        weft::system::shipped().into_iter().filter(|s| selection == "all" || s.name == selection).collect()
    };
    let modules = if from_files {
        user.into_iter().filter(|m| selection == "all" || m.spec.name == selection).collect()
    } else if selection != "all" && !systems.is_empty() {
        vec![]
    } else {
        select(selection).map_err(|e| with_system_hint(selection, e.to_string()))?
    };
    let reports = generated.join("reports");
    // One pool for everything: systems first (their whole-torus lint is the longest job).
    enum Job<'a> {
        System(&'a weft::system::SystemConfig),
        Module(&'a weft::flow::Shipped),
    }
    enum Done {
        System(Result<(String, bool), String>),
        Module(Result<Box<weft::flow::Checked>, weft::flow::FlowError>),
    }
    // Longest first, so that no long synthesis starts last: the systems, then the modules by the
    // size of their Verilog (a fair proxy for Yosys time). Rows are printed in catalogue order.
    let size = |m: &weft::flow::Shipped| std::fs::metadata(generated.join(m.relative_path())).map_or(0, |f| f.len());
    let mut by_size: Vec<&weft::flow::Shipped> = modules.iter().collect();
    by_size.sort_by_key(|m| std::cmp::Reverse(size(m)));
    let job_list: Vec<Job> = systems.iter().map(Job::System).chain(by_size.into_iter().map(Job::Module)).collect();
    let name = |job: &Job| match job {
        Job::System(s) => format!("system {}", s.name),
        Job::Module(m) => m.spec.name.clone(),
    };
    let started = std::time::Instant::now();
    let total = job_list.len();
    eprintln!("checking {} module(s) and {} system(s), {jobs} at a time{}", modules.len(), systems.len(), if force { ", re-running every stage (--force)" } else { "" });
    let mut finished = 0;
    let results = parallel(
        &job_list,
        jobs,
        |job| match job {
            Job::System(s) => Done::System(weft::system::check_cached(s, generated, constraints, Some(&reports), force).map_err(String::from)),
            Job::Module(m) => Done::Module(check_with(m, generated, Some(&reports), Stages { timing, ..Stages::ALL }, force).map(Box::new)),
        },
        |i, done| {
            finished += 1;
            let what = match done {
                Done::System(Ok((_, true))) => "passed (reused the recorded check)".to_string(),
                Done::System(Ok((_, false))) => "passed".to_string(),
                Done::Module(Ok(c)) if c.ran.is_empty() => "passed (reused every stage)".to_string(),
                Done::Module(Ok(c)) if c.reused.is_empty() => format!("passed (ran {})", c.ran.join(", ")),
                Done::Module(Ok(c)) => format!("passed (ran {}; reused {})", c.ran.join(", "), c.reused.join(", ")),
                Done::System(Err(_)) | Done::Module(Err(_)) => "FAILED".to_string(),
            };
            eprintln!("[{finished}/{total} {:>6.1} s] {}: {what}", started.elapsed().as_secs_f64(), name(&job_list[i]));
        },
    );
    let mut failures = vec![];
    let (mut reused, mut stages) = (0, 0);
    let mut rows = vec![];
    let mut system_lines = vec![];
    for (job, done) in job_list.iter().zip(results) {
        match done {
            Done::Module(Ok(done)) => {
                reused += done.reused.len();
                stages += done.reused.len() + done.ran.len();
                rows.push(done);
            }
            Done::System(Ok((summary, was_reused))) => {
                reused += usize::from(was_reused);
                stages += 1;
                if let Job::System(s) = job {
                    system_lines.push(format!("system {}: {summary}", s.name));
                }
            }
            Done::Module(Err(e)) => failures.push(e.to_string()),
            Done::System(Err(e)) => failures.push(format!("{}: {e}", name(job))),
        }
    }
    if !modules.is_empty() {
        let fmax = if timing { format!(" {:>9}", "Fmax MHz") } else { String::new() };
        println!("{:<28} {:>6} {:>6} {:>7} {:>6} {:>5} {:>6}{fmax}  testbench", "module", "LUT", "FF", "LUTRAM", "BRAM", "depth", "levels");
    }
    let order = |name: &str| modules.iter().position(|m| m.spec.name == name);
    rows.sort_by_key(|done| order(&done.module));
    for done in &rows {
        let s = &done.synth;
        let fmax = done.timing.as_ref().map_or(String::new(), |t| format!(" {:>9.1}", t.fmax_mhz));
        println!("{:<28} {:>6} {:>6} {:>7} {:>6} {:>5} {:>6}{fmax}  {}", done.module, s.luts, s.flip_flops, s.lut_rams, s.brams, s.logic_depth, s.lut_levels, done.testbench);
        if let Some(t) = &done.timing {
            println!("{:<28} critical path {} -> {} ({} ns, {} ns routing) on {}", "", t.critical_from, t.critical_to, t.critical_ns, t.routing_ns, t.device);
            if !t.path.is_empty() {
                println!("{:<28} routed through (net ns): {}", "", t.path.join(", "));
            }
        }
    }
    for line in &system_lines {
        println!("{line}");
    }
    let elapsed = started.elapsed().as_secs_f64();
    if !failures.is_empty() {
        return Err(format!("{} of {total} check(s) failed after {elapsed:.1} s:\n{}", failures.len(), failures.join("\n")));
    }
    if !modules.is_empty() {
        let pnr = if timing { ", place and route" } else { "" };
        println!("checked {} module(s): built-in testbench, verilator lint, yosys synthesis, icarus compile{pnr} all passed", modules.len());
    }
    println!(
        "{total} check(s) passed in {elapsed:.1} s with {jobs} job(s); reused {reused} of {stages} stage results recorded for the same Verilog and tools{}",
        if reused > 0 { " (`--force` runs them again)" } else { "" }
    );
    Ok(())
}

/// How `weft check` runs: place and route too, how many checks at once, reuse or not.
#[derive(Clone, Copy)]
struct CheckOptions {
    timing: bool,
    jobs: usize,
    force: bool,
}

/// `weft netsim`: parses the options, runs this rank, prints rank 0's summary.
#[allow(clippy::too_many_arguments)]
fn netsim(
    config: PathBuf,
    dims: Option<String>,
    pattern: &str,
    rate: f64,
    bytes: &str,
    cycles: u64,
    drain: u64,
    ber: f64,
    cuts: &[String],
    seed: u64,
    ppm: u64,
    window: Option<usize>,
    bring_up: u64,
    [log, json]: [Option<PathBuf>; 2],
) -> Result<(), weft::Error> {
    use weft::run::netsim;
    let bad = |what: &str, v: &str, allowed: &str| weft::Error::Input(format!("`--{what}` = {v}: {allowed}"));
    let dims = match dims {
        None => None,
        Some(d) => {
            let v: Vec<usize> = d.split(',').map(|x| x.trim().parse()).collect::<Result<_, _>>().map_err(|_| bad("dims", &d, "three sizes X,Y,Z, e.g. 4,4,4"))?;
            Some(<[usize; 3]>::try_from(v).map_err(|_| bad("dims", &d, "three sizes X,Y,Z, e.g. 4,4,4"))?)
        }
    };
    let (lo, hi) = bytes.split_once("..").and_then(|(a, b)| Some((a.parse().ok()?, b.trim_start_matches('=').parse().ok()?))).ok_or_else(|| bad("bytes", bytes, "MIN..MAX, e.g. 16..64"))?;
    if !(0.0..=4.0).contains(&rate) {
        return Err(bad("rate", &rate.to_string(), "allowed 0 ..= 4 packets a node a cycle"));
    }
    if !(0.0..=1.0 / 66.0).contains(&ber) {
        return Err(bad("ber", &ber.to_string(), "allowed 0 ..= 1/66 per bit"));
    }
    let load = weft::sim::partition::Load { pattern: netsim::pattern(pattern)?, rate, bytes: (lo, hi), cycles, drain, seed };
    let cuts = cuts.iter().map(|c| netsim::cut(c)).collect::<Result<_, _>>()?;
    if let Some(summary) = netsim::run(&netsim::Options { config, dims, load, bit_error_rate: ber, cuts, ppm, window, bring_up, log, json })? {
        print!("{}", summary.text());
    }
    Ok(())
}
