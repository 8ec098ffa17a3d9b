//! `weft sim`: a kernel (shipped, or a user's DSL file) run on beats from a file, in the built-in
//! simulator or in Verilator, with optional random back-pressure and a waveform; its outputs
//! are written beside the software model's and compared.
//!
//! Per-beat kernels: output beat i is the kernel on input row i, compared bit for bit (NaN
//! results are the canonical `0x7FC00000`, as the operators produce). Per-vector kernels: a
//! vector ends at a row whose `tlast` column (one column beyond the lanes) is 1, or every
//! `vector_length` rows; each output is compared with the exact sum within the summation bound
//! the kernel's contract gives. A kernel with stream offsets (`x[-1]`) reads the file as one
//! vector (or vectors of `vector_length` rows) and is compared with the software model of the
//! whole stream.

pub mod app;
pub mod data;
pub mod mpi;
pub mod netsim;
pub mod partition;

use crate::Error;
use std::path::{Path, PathBuf};

use num_bigint::BigUint;
use weft_hdl::export::{export_netlist, ModuleSpec};
use weft_hdl::float::{FloatFormat, Multiplier};
use weft_hdl::netlist::eval::Evaluator;
use weft_hdl::netlist::vcd::Vcd;
use weft_hdl::netlist::Netlist;
use weft_hdl::pipeline::{dsl, Kernel, Stages};
use weft_hdl::stream::Beat;
use weft_hdl::testbench::Rng;
use weft_sim::cosim::Model;
use weft_sim::cosim::{AxisPorts, AxisSink, AxisSource};

use data::Table;

/// What `weft sim` was asked.
#[derive(Clone, Debug)]
pub struct Options {
    /// A shipped kernel's name, or a DSL file (`.wk`).
    pub kernel: String,
    /// Input beats, `.npy` or `.csv` (see [`data`]).
    pub input: PathBuf,
    /// Output beats, `.npy` or `.csv`; the model's outputs and the diff are written beside it.
    pub output: PathBuf,
    /// Percent of cycles the sink is ready (100: no back-pressure).
    pub ready_percent: u64,
    /// Percent of cycles the source offers a beat when it has one.
    pub valid_percent: u64,
    /// Rows per vector (1 or more) instead of a `tlast` column, for per-vector kernels and
    /// kernels with stream offsets.
    pub vector_length: Option<usize>,
    /// Write a VCD waveform here (built-in simulator only).
    pub vcd: Option<PathBuf>,
    /// Run the generated Verilog in Verilator instead of the built-in simulator.
    pub verilator: bool,
    /// Seed of the random valid and ready choices.
    pub seed: u64,
    /// How the kernel's float multipliers are built.
    pub multiplier: Multiplier,
}

/// What a run produced.
pub struct Outcome {
    /// Input beats streamed in.
    pub beats_in: usize,
    /// Output beats taken.
    pub beats_out: usize,
    /// Clock cycles the run took.
    pub cycles: u64,
    /// One line per output lane that differs from the model: row, lane, both values.
    pub mismatches: Vec<String>,
    /// The files written: outputs, `<output>.model.*`, `<output>.diff.txt`, then the waveform.
    pub files: Vec<PathBuf>,
}

/// A shipped kernel by name, or a DSL file by path (`.wk`).
pub fn load_kernel(spec: &str) -> Result<Kernel, Error> {
    if spec.ends_with(".wk") || Path::new(spec).is_file() {
        let text = std::fs::read_to_string(spec).map_err(|e| Error::from(e).context(spec))?;
        return dsl::parse(&text).map_err(|e| Error::from(e).context(spec));
    }
    weft_ip::kernels::kernel(spec).map_err(|_| {
        let names: Vec<&str> = weft_ip::kernels::SOURCES.iter().map(|(n, _)| *n).collect();
        Error::Input(format!("`{spec}` is neither a shipped kernel ({}) nor a .wk file", names.join(", ")))
    })
}

/// The input beats: lanes and `tlast` per row.
fn beats(k: &Kernel, table: &Table, file: &Path, vector_length: Option<usize>) -> Result<Vec<(Vec<u32>, bool)>, Error> {
    let lanes = k.inputs.len();
    let with_last = k.per_vector && vector_length.is_none();
    let want = lanes + with_last as usize;
    for (r, row) in table.iter().enumerate() {
        if row.len() != want {
            let what = if with_last { format!("{lanes} lanes ({}) and a tlast column", k.inputs.join(", ")) } else { format!("{lanes} lanes ({})", k.inputs.join(", ")) };
            return Err(Error::Check(format!("{}: row {} has {} columns; kernel `{}` takes {what}", file.display(), r + 1, row.len(), k.name)));
        }
    }
    if table.is_empty() {
        return Err(Error::Check(format!("{}: no beats", file.display())));
    }
    let n = table.len();
    Ok(table
        .iter()
        .enumerate()
        .map(|(r, row)| {
            let last = match (k.per_vector, vector_length) {
                // Offsets see vectors: the whole file, or every `vector_length` rows.
                (false, _) => k.has_offsets() && (vector_length.is_some_and(|len| (r + 1) % len == 0) || r + 1 == n),
                (true, Some(len)) => (r + 1) % len == 0 || r + 1 == n,
                (true, None) => row[lanes] != 0 || r + 1 == n,
            };
            (row[..lanes].to_vec(), last)
        })
        .collect())
}

/// The software model's outputs, and for per-vector kernels each output's error bound.
fn model(k: &Kernel, beats: &[(Vec<u32>, bool)]) -> Vec<(Vec<u32>, Vec<f64>)> {
    let canonical = |v: u32| if f32::from_bits(v).is_nan() { 0x7FC0_0000 } else { v };
    if !k.per_vector {
        // Fixed-point and bool outputs are not floats: only float lanes are made canonical.
        let float: Vec<bool> = k.outputs.iter().map(|(_, v)| matches!(k.ty(*v), weft_hdl::pipeline::Type::Float(_))).collect();
        return k.evaluate_stream(beats).into_iter().map(|(lanes, _)| (lanes.into_iter().zip(&float).map(|(v, f)| if *f { canonical(v) } else { v }).collect(), vec![])).collect();
    }
    let mut out = vec![];
    let mut vector = vec![];
    for (lanes, last) in beats {
        vector.push(lanes.clone());
        if *last {
            let sums = k.evaluate_vector(&vector);
            out.push((sums.iter().map(|(s, _)| canonical((*s as f32).to_bits())).collect(), sums.iter().map(|(_, b)| *b).collect()));
            vector.clear();
        }
    }
    out
}

/// A stream module under simulation: one engine or the other.
trait Dut {
    fn drive(&mut self, beat: Option<&(Vec<u32>, bool)>, valid: bool, ready: bool);
    /// After the inputs settle: (input taken, output beat if one transfers).
    fn observe(&mut self, ready: bool) -> (bool, Option<Vec<u32>>);
    fn tick(&mut self) -> Result<(), Error>;
    /// Closes what the run wrote (the waveform).
    fn finish(&mut self) -> Result<(), Error> {
        Ok(())
    }
}

struct BuiltIn {
    eval: Evaluator,
    lanes_out: usize,
    vcd: Option<Vcd<std::io::BufWriter<std::fs::File>>>,
    valid: bool,
}

impl Dut for BuiltIn {
    fn drive(&mut self, beat: Option<&(Vec<u32>, bool)>, valid: bool, ready: bool) {
        if let Some((lanes, last)) = beat {
            let data = self.eval.input("s_axis_tdata").expect("a kernel reads s_axis_tdata");
            self.eval.set_big(data, &BigUint::from_slice(lanes));
            if self.eval.input("s_axis_tlast").is_some() {
                self.eval.set_input("s_axis_tlast", *last as u128);
            }
        }
        self.valid = valid;
        self.eval.set_input("s_axis_tvalid", valid as u128);
        self.eval.set_input("m_axis_tready", ready as u128);
        self.eval.settle();
    }

    fn observe(&mut self, ready: bool) -> (bool, Option<Vec<u32>>) {
        let taken = self.valid && self.eval.get_output("s_axis_tready") == 1;
        let out = (ready && self.eval.get_output("m_axis_tvalid") == 1).then(|| (0..self.lanes_out).map(|j| self.eval.get_output_bits("m_axis_tdata", 32 * j, 32) as u32).collect());
        (taken, out)
    }

    fn tick(&mut self) -> Result<(), Error> {
        if let Some(vcd) = &mut self.vcd {
            self.eval.sample(vcd).map_err(|e| Error::from(e).context("waveform"))?;
        }
        self.eval.clock(false);
        Ok(())
    }

    fn finish(&mut self) -> Result<(), Error> {
        match self.vcd.take() {
            Some(vcd) => vcd.finish().map(|_| ()).map_err(|e| Error::from(e).context("waveform")),
            None => Ok(()),
        }
    }
}

struct Verilated {
    model: Model,
    source: AxisSource,
    sink: AxisSink,
    lanes_out: usize,
}

impl Dut for Verilated {
    fn drive(&mut self, beat: Option<&(Vec<u32>, bool)>, valid: bool, ready: bool) {
        // The cosim source and sink keep their own handshake state; force this cycle's choice.
        self.source.queue.clear();
        if let (Some((lanes, last)), true) = (beat, valid) {
            let mut data = BigUint::default();
            for (i, v) in lanes.iter().enumerate() {
                data |= BigUint::from(*v) << (32 * i);
            }
            self.source.queue.push_back(Beat::new(data, 0, *last, 0));
        }
        self.source.valid_percent = 100;
        self.sink.ready_percent = if ready { 100 } else { 0 };
        self.source.drive(&mut self.model);
        self.sink.drive(&mut self.model);
        self.model.eval();
    }

    fn observe(&mut self, _ready: bool) -> (bool, Option<Vec<u32>>) {
        let before = self.source.sent;
        self.source.observe(&mut self.model);
        let taken = self.source.sent > before;
        let lanes = self.lanes_out;
        let out = self.sink.observe(&mut self.model).map(|b| {
            let digits = b.data.to_u32_digits();
            (0..lanes).map(|j| digits.get(j).copied().unwrap_or(0)).collect()
        });
        (taken, out)
    }

    fn tick(&mut self) -> Result<(), Error> {
        self.model.tick();
        Ok(())
    }
}

fn verilated(k: &Kernel, net: &Netlist) -> Result<Verilated, Error> {
    let spec = ModuleSpec { family: "kernels", name: k.name.clone(), summary: format!("kernel `{}` for weft sim", k.name), parameters: vec![], hidden_ports: vec![] };
    let text = export_netlist(&spec, net)?;
    let dir = std::env::temp_dir().join(format!("weft-sim-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| Error::from(e).context(dir.display()))?;
    let file = dir.join(format!("{}.v", k.name));
    std::fs::write(&file, text).map_err(|e| Error::from(e).context(file.display()))?;
    let mut model = Model::build(&file, &k.name)?;
    let source = AxisSource::new(AxisPorts::find(&model, "s_axis")?, 100, 1);
    let sink = AxisSink::new(AxisPorts::find(&model, "m_axis")?, 100, 2);
    let rst = model.port("rst")?;
    model.set(rst, 1);
    model.tick();
    model.tick();
    model.set(rst, 0);
    Ok(Verilated { model, source, sink, lanes_out: k.outputs.len() })
}

/// `name.ext` → `name.<tag>.ext`.
fn beside(path: &Path, tag: &str) -> PathBuf {
    let stem = path.file_stem().unwrap_or_default().to_string_lossy();
    let ext = path.extension().map(|e| format!(".{}", e.to_string_lossy())).unwrap_or_default();
    path.with_file_name(format!("{stem}.{tag}{ext}"))
}

/// Runs `o`; `progress` is called now and then with (beats out, beats expected).
pub fn run(o: &Options, progress: &mut dyn FnMut(usize, usize)) -> Result<Outcome, Error> {
    let k = load_kernel(&o.kernel)?;
    if k.format != FloatFormat::BINARY32 {
        return Err(Error::Check(format!("kernel `{}`: weft sim runs binary32 kernels", k.name)));
    }
    for (what, p) in [("--ready-percent", o.ready_percent), ("--valid-percent", o.valid_percent)] {
        if !(1..=100).contains(&p) {
            return Err(Error::Check(format!("{what} = {p} is out of range: allowed 1..=100")));
        }
    }
    if o.vector_length == Some(0) {
        return Err(Error::Check("--vector-length = 0 is out of range: allowed 1 or more".to_string()));
    }
    let table = data::read(&o.input)?;
    let input = beats(&k, &table, &o.input, o.vector_length)?;
    let want = model(&k, &input);
    let (net, _) = k.netlist(&Stages::balanced(FloatFormat::BINARY32).with_multiplier(o.multiplier))?;
    let mut dut: Box<dyn Dut> = if o.verilator {
        if o.vcd.is_some() {
            return Err(Error::Check("--vcd is written by the built-in simulator; drop --verilator for a waveform".to_string()));
        }
        Box::new(verilated(&k, &net)?)
    } else {
        let mut eval = Evaluator::new(net);
        eval.reset(2);
        let vcd = match &o.vcd {
            Some(p) => {
                Some(eval.vcd(std::io::BufWriter::new(std::fs::File::create(p).map_err(|e| Error::from(e).context(p.display()))?), &k.name, 10).map_err(|e| Error::from(e).context(p.display()))?)
            }
            None => None,
        };
        Box::new(BuiltIn { lanes_out: k.outputs.len(), eval, vcd, valid: false })
    };

    let (got, cycles) = simulate(&k, dut.as_mut(), &input, want.len(), o, progress)?;
    let mismatches = compare(&k, &got, &want);
    let lanes = k.outputs.len();
    let model_path = beside(&o.output, "model");
    data::write(&o.output, &got, lanes, true)?;
    data::write(&model_path, &want.iter().map(|(v, _)| v.clone()).collect(), lanes, true)?;
    let diff_path = beside(&o.output, "diff").with_extension("txt");
    let report = if mismatches.is_empty() { "0 mismatches\n".to_string() } else { format!("{} mismatches\n{}\n", mismatches.len(), mismatches.join("\n")) };
    std::fs::write(&diff_path, report).map_err(|e| Error::from(e).context(diff_path.display()))?;
    let mut files = vec![o.output.clone(), model_path, diff_path];
    files.extend(o.vcd.clone());
    Ok(Outcome { beats_in: input.len(), beats_out: got.len(), cycles, mismatches, files })
}

/// Streams `input` through `dut` with random valid/ready (AXI4-Stream's rule: an offered beat
/// stays until taken) until `expected` output beats are out; returns them and the cycle count.
fn simulate(k: &Kernel, dut: &mut dyn Dut, input: &[(Vec<u32>, bool)], expected: usize, o: &Options, progress: &mut dyn FnMut(usize, usize)) -> Result<(Vec<Vec<u32>>, u64), Error> {
    let mut rng = Rng::new(o.seed);
    let (mut next, mut offering, mut cycles) = (0usize, false, 0u64);
    let mut got: Vec<Vec<u32>> = vec![];
    let limit = 1000 + 100 * input.len() as u64 * 100 / o.ready_percent.min(o.valid_percent);
    while got.len() < expected {
        if cycles > limit {
            return Err(Error::Check(format!("kernel `{}` stopped: {} of {expected} output beats after {cycles} cycles", k.name, got.len())));
        }
        if !offering && next < input.len() && rng.chance(o.valid_percent) {
            offering = true;
        }
        let ready = rng.chance(o.ready_percent);
        dut.drive(input.get(next), offering, ready);
        let (taken, out) = dut.observe(ready);
        if taken {
            next += 1;
            offering = false;
        }
        if let Some(beat) = out {
            got.push(beat);
            if got.len().is_multiple_of(100_000) {
                progress(got.len(), expected);
            }
        }
        dut.tick()?;
        cycles += 1;
    }
    dut.finish()?;
    Ok((got, cycles))
}

/// [`run`] with progress on standard error and the outcome on standard output (`weft sim`); an
/// output that differs from the software model is an error naming the file of mismatches.
pub fn run_and_report(options: &Options) -> Result<(), Error> {
    let engine = if options.verilator { "Verilator" } else { "built-in simulator" };
    let outcome = run(options, &mut |done, all| eprintln!("{done} of {all} output beats"))?;
    println!("{}: {} beats in, {} out, {} cycles ({engine})", options.kernel, outcome.beats_in, outcome.beats_out, outcome.cycles);
    for f in &outcome.files {
        println!("wrote {}", f.display());
    }
    if outcome.mismatches.is_empty() {
        println!("0 mismatches against the software model");
        return Ok(());
    }
    for m in outcome.mismatches.iter().take(10) {
        println!("{m}");
    }
    Err(Error::Check(format!("{} mismatches against the software model (all in {})", outcome.mismatches.len(), outcome.files[2].display())))
}

/// The built-in testbench of a user's kernel (what `weft check --kernel` runs): random operands
/// (1000 beats, or 600 vectors of 1 to 12 beats for per-vector kernels and kernels with stream
/// offsets) through the kernel's netlist in the built-in simulator at valid 80 % / ready 60 %,
/// against the software model: bit for bit per beat, per vector within the summation bound; the
/// kernel built with `stages`.
pub fn testbench(k: &Kernel, stages: &Stages) -> Result<String, Error> {
    if k.format != FloatFormat::BINARY32 {
        return Err(Error::Check(format!("kernel `{}`: the built-in testbench runs binary32 kernels (this one is {})", k.name, k.format)));
    }
    let mut rng = Rng::new(0xC0DE);
    // Kernels with stream offsets get vectors too, each ending with tlast (a flush).
    let input: Vec<(Vec<u32>, bool)> = if k.per_vector || k.has_offsets() {
        weft_ip::kernels::random_vectors(&mut rng, 600, k.inputs.len())
            .into_iter()
            .flat_map(|v| {
                let n = v.len();
                v.into_iter().enumerate().map(move |(i, beat)| (beat, i + 1 == n))
            })
            .collect()
    } else {
        (0..1000).map(|_| ((0..k.inputs.len()).map(|_| weft_ip::kernels::operand(&mut rng)).collect(), false)).collect()
    };
    let want = model(k, &input);
    let (net, schedule) = k.netlist(stages)?;
    let mut eval = Evaluator::new(net);
    eval.reset(2);
    let mut dut = BuiltIn { lanes_out: k.outputs.len(), eval, vcd: None, valid: false };
    let o = Options {
        kernel: k.name.clone(),
        input: PathBuf::new(),
        output: PathBuf::new(),
        ready_percent: 60,
        valid_percent: 80,
        vector_length: None,
        vcd: None,
        verilator: false,
        seed: 9,
        multiplier: stages.multiplier,
    };
    let (got, cycles) = simulate(k, &mut dut, &input, want.len(), &o, &mut |_, _| {})?;
    let mismatches = compare(k, &got, &want);
    if let Some(first) = mismatches.first() {
        return Err(Error::Check(format!("{} of {} output beats differ from the software model; first: {first}", mismatches.len(), want.len())));
    }
    let what = if k.per_vector { format!("{} vectors ({} beats) within the summation bound of", want.len(), input.len()) } else { format!("{} beats match", input.len()) };
    Ok(format!("{what} the software model in {cycles} cycles at valid 80%/ready 60% (latency {})", schedule.latency))
}

/// Mismatches, one line each: row, lane name, simulated and model values.
fn compare(k: &Kernel, got: &[Vec<u32>], want: &[(Vec<u32>, Vec<f64>)]) -> Vec<String> {
    let mut lines = vec![];
    for (r, (g, (w, bounds))) in got.iter().zip(want).enumerate() {
        for (j, (gv, wv)) in g.iter().zip(w).enumerate() {
            let ok = match bounds.get(j) {
                // Per-vector: within the summation bound of the exact sum.
                Some(bound) => {
                    let (x, exact) = (f32::from_bits(*gv) as f64, f32::from_bits(*wv) as f64);
                    (x - exact).abs() <= bound + (exact.abs() * 2f64.powi(-24))
                }
                None => gv == wv,
            };
            if !ok {
                lines.push(format!("row {} lane {} ({}): simulated 0x{gv:08x} ({:e}), model 0x{wv:08x} ({:e})", r + 1, j, k.outputs[j].0, f32::from_bits(*gv), f32::from_bits(*wv)));
            }
        }
    }
    lines
}
