//! `weft netsim`: a system's generated node, verilated, on a torus of any size under traffic,
//! partitioned over MPI ranks when started with `mpirun -n R weft netsim …` (one process holds
//! every node otherwise). METIS splits the torus so that neighbours share a rank; ranks swap
//! their cables' blocks once per window ([`weft_sim::partition`]). Rank 0 gathers every packet,
//! checks each against its source (exactly once, intact, at its destination, minimal hops) and
//! writes the packet log, which is the same for any number of ranks.

use crate::Error;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

use serde::{Deserialize, Serialize};

use weft_hdl::export::export_netlist;
use weft_ip::router::route::distance;
use weft_ip::router::RouterConfig;
use weft_sim::link::VerilatorDevice;
use weft_sim::network::Pattern;
use weft_sim::partition::traffic::{DELIVERED_WORDS, SENT_WORDS};
use weft_sim::partition::{Cut, Delivered, Exchange, Load, Oscillators, Partitioned, Sent, Setup};

use super::mpi::Mpi;

/// What `weft netsim` was asked.
#[derive(Clone, Debug)]
pub struct Options {
    /// The system description whose node is simulated.
    pub config: PathBuf,
    /// Torus size instead of the description's.
    pub dims: Option<[usize; 3]>,
    /// The traffic.
    pub load: Load,
    /// Bit error rate on every cable.
    pub bit_error_rate: f64,
    /// Cables pulled for a while during the traffic.
    pub cuts: Vec<Cut>,
    /// Each node's clock off the nominal frequency by up to this many ppm (0: one clock).
    pub ppm: u64,
    /// Cycles between swaps (default: the channel latency − 1).
    pub window: Option<usize>,
    /// Idle cycles for the links to come up.
    pub bring_up: u64,
    /// Where rank 0 writes the packet log.
    pub log: Option<PathBuf>,
    /// Where rank 0 writes the [`Summary`] as JSON.
    pub json: Option<PathBuf>,
}

/// `--pattern`: `uniform`, `transpose` or `neighbour`.
pub fn pattern(name: &str) -> Result<Pattern, Error> {
    match name {
        "uniform" => Ok(Pattern::UniformRandom),
        "transpose" => Ok(Pattern::Transpose),
        "neighbour" => Ok(Pattern::NearestNeighbour),
        _ => Err(Error::Input(format!("`--pattern` = {name}: allowed uniform, transpose, neighbour"))),
    }
}

/// `--cut NODE,DIR,FROM,CYCLES`: the cable leaving NODE toward DIR (xp, xn, yp, yn, zp, zn)
/// pulled from cycle FROM of the traffic for CYCLES cycles.
pub fn cut(text: &str) -> Result<Cut, Error> {
    let bad = || Error::Input(format!("`--cut` = {text}: NODE,DIR,FROM,CYCLES with DIR one of xp, xn, yp, yn, zp, zn (e.g. 0,xp,200,400)"));
    let parts: Vec<&str> = text.split(',').map(str::trim).collect();
    let [node, dir, from, cycles] = parts[..] else { return Err(bad()) };
    let direction = weft_ip::router::Direction::ALL.into_iter().find(|d| d.name() == dir).ok_or_else(bad)?;
    Ok(Cut { node: node.parse().map_err(|_| bad())?, direction, from: from.parse().map_err(|_| bad())?, cycles: cycles.parse().map_err(|_| bad())? })
}

/// The torus split into `parts` by METIS k-way on its neighbour graph (each node once per
/// neighbour); one part holds everything.
pub fn split(config: &RouterConfig, parts: usize) -> Result<Vec<usize>, Error> {
    let (mut xadj, mut adjncy) = (vec![0i32], vec![]);
    for n in 0..config.nodes() {
        let mut next: Vec<i32> = config.directions().iter().map(|d| config.neighbour(n, *d) as i32).collect();
        next.sort_unstable();
        next.dedup();
        adjncy.extend(next);
        xadj.push(adjncy.len() as i32);
    }
    let (part, _) = weft_ip::app::partition::split::metis(&xadj, &adjncy, &vec![1; config.nodes()], parts)?;
    Ok(part.into_iter().map(|p| p as usize).collect())
}

/// Runs the command in this process (one of the ranks when started by `mpirun`); returns rank
/// 0's summary (none on the other ranks).
pub fn run(options: &Options) -> Result<Option<Summary>, Error> {
    let universe = mpi::initialize().ok_or_else(|| Error::Input("MPI was initialised twice in this process".into()))?;
    let mut mpi = Mpi::new(universe.world());
    let result = run_rank(options, &mut mpi);
    // A rank that fails ends them all: the others would wait for its next swap for ever.
    if let (Err(e), true) = (&result, mpi.ranks() > 1) {
        eprintln!("error: rank {}: {e}", mpi.rank());
        mpi.abort();
    }
    result
}

fn run_rank(options: &Options, mpi: &mut Mpi) -> Result<Option<Summary>, Error> {
    let (rank, ranks) = (mpi.rank(), mpi.ranks());
    let mut system = crate::system::load(&options.config)?;
    if let Some(dims) = options.dims {
        system.node.router.dims = dims;
    }
    system.node.validate().map_err(|e| Error::from(e).context(format!("{} on a {:?} torus", system.name, system.node.router.dims)))?;
    let config = system.node.router.clone();
    if ranks > config.nodes() {
        return Err(Error::Input(format!("{ranks} ranks for {} nodes: at most one rank a node", config.nodes())));
    }
    let window = options.window.unwrap_or(system.channel_latency.max(2) - 1);
    let setup = Setup {
        node: system.node.clone(),
        latency: system.channel_latency,
        window,
        bit_error_rate: options.bit_error_rate,
        bring_up: options.bring_up,
        load: options.load.clone(),
        owner: split(&config, ranks)?,
        cuts: options.cuts.clone(),
        clocks: Oscillators::drift(config.nodes(), options.ppm, options.load.seed),
    };
    setup.validate().map_err(|e| Error::from(e).context(&system.name))?;
    // Each rank writes its own copy; the model is built once (rank 0 first, the others then
    // find it in the cache).
    let work = std::env::temp_dir().join(format!("weft-netsim-{}-r{rank}", std::process::id()));
    let (file, top) = node_verilog(&system, &work)?;
    if rank == 0 {
        drop(VerilatorDevice::new(&file, &top)?);
    }
    mpi.barrier();
    let owned = setup.owner.iter().filter(|&&r| r == rank).count();
    let start = Instant::now();
    let mut torus = Partitioned::new(setup, rank, || VerilatorDevice::new(&file, &top).map_err(weft_sim::Error::from))?;
    let outcome = torus.run(mpi)?;
    let seconds = start.elapsed().as_secs_f64();
    let _ = std::fs::remove_dir_all(&work);
    let mut words: Vec<u64> = vec![owned as u64, outcome.flipped_bits, outcome.swaps, seconds.to_bits(), outcome.swap_seconds.to_bits(), outcome.sent.len() as u64];
    words.extend(outcome.sent.iter().flat_map(|s| s.words()));
    words.extend(outcome.delivered.iter().flat_map(|d| d.words()));
    let all = mpi.gather(&words);
    if rank != 0 {
        return Ok(None);
    }
    let (mut sent, mut delivered, mut flipped, mut swaps, mut slowest, mut per_rank, mut swap_seconds) = (vec![], vec![], 0, 0, 0f64, vec![], 0f64);
    for w in &all {
        per_rank.push(w[0]);
        flipped += w[1];
        swaps = swaps.max(w[2]);
        slowest = slowest.max(f64::from_bits(w[3]));
        swap_seconds = swap_seconds.max(f64::from_bits(w[4]));
        let count = w[5] as usize;
        let (s, d) = w[6..].split_at(count * SENT_WORDS);
        sent.extend(s.chunks(SENT_WORDS).map(Sent::from_words));
        delivered.extend(d.chunks(DELIVERED_WORDS).map(Delivered::from_words));
    }
    // Each node's packets in the order they arrived there.
    delivered.sort_by_key(|d| (d.node, d.tail, d.head));
    check(&config, &sent, &delivered)?;
    let log = packet_log(&system.name, &config, options, &sent, &delivered, flipped, outcome.cycles);
    if let Some(path) = &options.log {
        std::fs::write(path, &log).map_err(|e| Error::from(e).context(path.display()))?;
    }
    let created: HashMap<(usize, u64), u64> = sent.iter().map(|s| ((s.src, s.k), s.created)).collect();
    let latency = delivered.iter().map(|d| (d.tail - created[&(d.src, d.k)]) as f64).sum::<f64>() / delivered.len().max(1) as f64;
    // The second half of the traffic phase: offered and accepted flits, and the latency of the
    // packets created in it (the first half fills the network).
    let l = &options.load;
    let end = outcome.cycles - l.drain;
    let from = end - l.cycles / 2;
    let per = (config.nodes() as u64 * (end - from).max(1)) as f64;
    let flits = |bytes: usize| config.packet_flits(bytes) as f64;
    let offered_flits = sent.iter().filter(|s| (from..end).contains(&s.created)).map(|s| flits(s.bytes)).sum::<f64>() / per;
    let accepted_flits = delivered.iter().filter(|d| (from..end).contains(&d.tail)).map(|d| flits(d.bytes)).sum::<f64>() / per;
    let late: Vec<f64> = delivered.iter().filter(|d| (from..end).contains(&created[&(d.src, d.k)])).map(|d| (d.tail - created[&(d.src, d.k)]) as f64).collect();
    let measured_latency = late.iter().sum::<f64>() / late.len().max(1) as f64;
    let summary = Summary {
        offered_flits,
        accepted_flits,
        measured_latency,
        system: system.name.clone(),
        dims: config.dims,
        ranks,
        nodes_per_rank: per_rank,
        window,
        ppm: options.ppm,
        cycles: outcome.cycles,
        seconds: slowest,
        cycles_per_second: outcome.cycles as f64 / slowest,
        swaps,
        swap_seconds,
        packets: sent.len(),
        latency,
        flipped_bits: flipped,
    };
    if let Some(path) = &options.json {
        std::fs::write(path, serde_json::to_string_pretty(&summary)? + "\n").map_err(|e| Error::from(e).context(path.display()))?;
    }
    Ok(Some(summary))
}

/// What rank 0 reports of a run (`--json`).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Summary {
    /// The system whose node ran.
    pub system: String,
    /// The torus.
    pub dims: [usize; 3],
    /// MPI ranks.
    pub ranks: usize,
    /// Nodes each rank simulated.
    pub nodes_per_rank: Vec<u64>,
    /// Cycles between swaps.
    pub window: usize,
    /// Each node's clock within ± this many ppm of the nominal frequency (0: one clock).
    #[serde(default)]
    pub ppm: u64,
    /// Cycles simulated (reset not counted).
    pub cycles: u64,
    /// Wall-clock seconds of the slowest rank, from its first cycle to its last.
    pub seconds: f64,
    /// `cycles / seconds`.
    pub cycles_per_second: f64,
    /// Swaps of the busiest rank.
    pub swaps: u64,
    /// Seconds the rank with the most spent in its swaps (waiting for the others included).
    pub swap_seconds: f64,
    /// Packets sent, each delivered once and intact.
    pub packets: usize,
    /// Mean cycles from a packet's creation to its last beat's arrival.
    pub latency: f64,
    /// Bits flipped on the cables.
    pub flipped_bits: u64,
    /// Flits a node created per cycle in the second half of the traffic phase (the offered load).
    pub offered_flits: f64,
    /// Flits a node received per cycle in that half (the accepted throughput).
    pub accepted_flits: f64,
    /// Mean cycles from creation to the last beat of the packets created in that half.
    pub measured_latency: f64,
}

impl Summary {
    /// The two lines `weft netsim` prints.
    pub fn text(&self) -> String {
        let [x, y, z] = self.dims;
        format!(
            "{} on a {x}×{y}×{z} torus, {} rank(s) ({:?} nodes each), window {} cycles: {} cycles in {:.1} s ({:.0} cycles/s), {} swaps\n{} packets sent and delivered, each once, intact, at its destination over a minimal path; mean latency {:.1} cycles from creation to the last beat; {} bits flipped on the cables\n",
            self.system, self.ranks, self.nodes_per_rank, self.window, self.cycles, self.seconds, self.cycles_per_second, self.swaps, self.packets, self.latency, self.flipped_bits
        )
    }
}

/// The node of `system` as Verilog in `work`: (file, top module).
fn node_verilog(system: &crate::system::SystemConfig, work: &Path) -> Result<(PathBuf, String), Error> {
    let top = format!("{}_node", system.name);
    let spec = weft_ip::system::spec::node_spec_for(&top, &system.node);
    let text = export_netlist(&spec, &weft_ip::system::node(&system.node)?)?;
    std::fs::create_dir_all(work)?;
    let file = work.join(format!("{top}.v"));
    std::fs::write(&file, text)?;
    Ok((file, top))
}

/// Every packet sent arrived exactly once, intact, at its destination, over a minimal path (the
/// routing model's distance).
fn check(config: &RouterConfig, sent: &[Sent], delivered: &[Delivered]) -> Result<(), Error> {
    let mut seen: HashMap<(usize, u64), usize> = HashMap::new();
    for d in delivered {
        let want = distance(config, config.coords(d.src), config.coords(d.node));
        if !d.intact || d.dst != d.node || d.hops != want {
            return Err(Error::Check(format!("packet {} of node {} at node {}: intact {}, header destination {}, {} hops (minimal {want})", d.k, d.src, d.node, d.intact, d.dst, d.hops)));
        }
        *seen.entry((d.src, d.k)).or_default() += 1;
    }
    for s in sent {
        match seen.get(&(s.src, s.k)) {
            Some(1) => {}
            Some(n) => return Err(Error::Check(format!("packet {} of node {} arrived {n} times", s.k, s.src))),
            None => return Err(Error::Check(format!("packet {} of node {} (to node {}, created at cycle {}) did not arrive: a longer --drain, or a fault", s.k, s.src, s.dst, s.created))),
        }
    }
    if seen.len() != sent.len() {
        return Err(Error::Check(format!("{} packets arrived that no node sent", seen.len() - sent.len())));
    }
    Ok(())
}

/// The log: the run's parameters, then per node the packets in the order they arrived (source,
/// number, bytes, hops, cycles of head and tail), then the totals. Nothing in it depends on the
/// number of ranks or on the window.
fn packet_log(name: &str, config: &RouterConfig, o: &Options, sent: &[Sent], delivered: &[Delivered], flipped: u64, cycles: u64) -> String {
    let l = &o.load;
    let mut t = format!(
        "# weft netsim: {name} on {:?}, {} traffic, rate {}, {}..={} bytes, {} + {} cycles, seed {}, bit error rate {:e}\n# node src k bytes hops head tail\n",
        config.dims,
        l.pattern.name(),
        l.rate,
        l.bytes.0,
        l.bytes.1,
        l.cycles,
        l.drain,
        l.seed,
        o.bit_error_rate
    );
    if o.ppm > 0 {
        t += &format!("# each node on its own clock, within ±{} ppm of the nominal frequency; cycles are the receiving node's\n", o.ppm);
    }
    for c in &o.cuts {
        t += &format!("# cable {} of node {} pulled from traffic cycle {} for {} cycles\n", c.direction.name(), c.node, c.from, c.cycles);
    }
    for d in delivered {
        t += &format!("{} {} {} {} {} {} {}\n", d.node, d.src, d.k, d.bytes, d.hops, d.head, d.tail);
    }
    t += &format!("# {} packets, {} bits flipped, {cycles} cycles\n", sent.len(), flipped);
    t
}
