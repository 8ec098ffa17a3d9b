//! Shipped application kernels (`generated/kernels/`), each built from its DSL file in
//! `examples/kernels/` by the pipeline builder, with every operator at its balanced depth.

use crate::Error;
use num_bigint::BigUint;
use weft_hdl::export::{ExportError, ModuleSpec};
use weft_hdl::float::{FloatFormat, Multiplier};
use weft_hdl::netlist::block::NetlistStream;
use weft_hdl::netlist::Netlist;
use weft_hdl::pipeline::{dsl, Kernel, Schedule, Stages};
use weft_hdl::stream::Beat;
use weft_hdl::testbench::{check_stream_outputs, check_stream_transform, Rng, TransformPorts};

use crate::shipped::Shipped;

/// The DSL source of each shipped kernel.
pub const SOURCES: [(&str, &str); 4] = [
    ("airfoil_res_calc", include_str!("../../../examples/kernels/airfoil_res_calc.wk")),
    ("dg_rk_update", include_str!("../../../examples/kernels/dg_rk_update.wk")),
    ("dg_surface_flux", include_str!("../../../examples/kernels/dg_surface_flux.wk")),
    ("reduce_f32x4", include_str!("../../../examples/kernels/reduce_f32x4.wk")),
];

/// Shipped kernel `name` parsed from its DSL source; an unknown name is a [`Error::Config`].
pub fn kernel(name: &str) -> Result<Kernel, Error> {
    let (_, source) = SOURCES.iter().find(|(n, _)| *n == name).ok_or_else(|| Error::Config(format!("no shipped kernel `{name}`")))?;
    dsl::parse(source).map_err(Error::kernel(format!("examples/kernels/{name}.wk")))
}

/// Shipped kernel `name` built in binary32 with every operator at its balanced depth: the
/// kernel, its stream netlist and its schedule (latency, operators, register bits).
pub fn build(name: &str) -> Result<(Kernel, Netlist, Schedule), Error> {
    let k = kernel(name)?;
    let (net, schedule) = k.netlist(&Stages::balanced(FloatFormat::BINARY32))?;
    Ok((k, net, schedule))
}

/// Shipped kernel `name`'s Verilog with every float multiplier built as `multiplier` (what
/// `weft bench numeric` synthesizes with each multiplier); `tdata` ports of 32 bits a lane.
pub fn verilog_with(name: &str, multiplier: Multiplier) -> Result<String, ExportError> {
    let k = kernel(name)?;
    let (net, _) = k.netlist(&Stages::balanced(FloatFormat::BINARY32).with_multiplier(multiplier)).map_err(Error::from)?;
    crate::fp::export_stream(&spec(name), net, 32 * k.inputs.len(), 32 * k.outputs.len())
}

/// `airfoil_res_calc` as a simulation block: 448-bit input (14 lanes), 128-bit output (4 lanes).
pub type AirfoilResCalc = NetlistStream<448, 56, 128, 16>;
/// `dg_rk_update` as a simulation block: 192-bit input (6 lanes), 64-bit output (2 lanes).
pub type DgRkUpdate = NetlistStream<192, 24, 64, 8>;
/// `dg_surface_flux` as a simulation block: 512-bit input (16 lanes), 192-bit output (6 lanes).
pub type DgSurfaceFlux = NetlistStream<512, 64, 192, 24>;
/// `reduce_f32x4` as a simulation block: 128-bit input (4 lanes), 32-bit output (the sum).
pub type ReduceF32x4 = NetlistStream<128, 16, 32, 4>;

/// Random operands in a range where the kernels' arithmetic stays finite: magnitudes in
/// [2^-4, 2^4) with random signs and full random fractions.
pub fn operand(rng: &mut Rng) -> u32 {
    let sign = (rng.below(2) as u32) << 31;
    let exp = 127 - 4 + rng.below(8) as u32;
    sign | (exp << 23) | (rng.next_u64() as u32 & 0x7F_FFFF)
}

/// 32-bit lanes packed little-endian into one `tdata` value (lane 0 at bits 31:0).
pub fn lanes_to_data(lanes: &[u32]) -> BigUint {
    let mut data = BigUint::default();
    for (i, lane) in lanes.iter().enumerate() {
        data |= BigUint::from(*lane) << (32 * i);
    }
    data
}

fn spec(name: &str) -> ModuleSpec {
    let (k, _, schedule) = build(name).expect("shipped kernel builds");
    // tlast ends a vector of a per-vector kernel; otherwise no port carries it.
    let hidden = if k.per_vector { vec!["m_axis_tlast".into()] } else { crate::fp::unframed_ports() };
    ModuleSpec { hidden_ports: hidden, ..kernel_spec(&k, &schedule, &format!("examples/kernels/{name}.wk")) }
}

/// The public description of kernel `k` built from the DSL file `origin` (a user's kernel is
/// exported from its netlist, with exactly the ports the netlist has).
pub fn kernel_spec(k: &Kernel, schedule: &Schedule, origin: &str) -> ModuleSpec {
    let ops: Vec<String> = schedule.operators.iter().map(|(op, n)| format!("{n} {op}")).collect();
    let format = if k.format == FloatFormat::BINARY32 { "binary32".to_string() } else { k.format.to_string() };
    let (outputs, latency) = if k.per_vector { ("per vector (tlast ends it): sums of", "from the last beat of a vector") } else { ("per beat:", "from an input beat") };
    ModuleSpec {
        family: "kernels",
        name: k.name.clone(),
        summary: format!("kernel from {origin}, {format}, II=1"),
        parameters: vec![
            ("inputs".into(), k.inputs.join(", ")),
            ("outputs".into(), format!("{outputs} {}", k.outputs.iter().map(|(n, _)| n.clone()).collect::<Vec<_>>().join(", "))),
            ("latency".into(), format!("{} cycles {latency}", schedule.latency)),
            ("operators".into(), ops.join(", ")),
            ("register bits".into(), schedule.register_bits.to_string()),
        ],
        hidden_ports: vec![],
    }
}

/// The `tdata` widths of a kernel's ports: its stream block's.
fn tdata_widths<const WI: usize, const KI: usize, const WO: usize, const KO: usize>(_: fn(Netlist) -> NetlistStream<WI, KI, WO, KO>) -> (usize, usize) {
    (WI, WO)
}

macro_rules! kernel_entry {
    ($name:literal, $ty:ty) => {
        Shipped::new(
            spec($name),
            |spec| {
                let (_, net, _) = build($name)?;
                let (input, output) = tdata_widths(<$ty>::new);
                crate::fp::export_stream(spec, net, input, output)
            },
            || testbench($name, <$ty>::new),
        )
    };
}

/// The shipped kernels `airfoil_res_calc`, `dg_rk_update`, `dg_surface_flux` and
/// `reduce_f32x4`, each with its testbench against the kernel's software evaluation.
pub fn shipped() -> Vec<Shipped> {
    vec![kernel_entry!("airfoil_res_calc", AirfoilResCalc), kernel_entry!("dg_rk_update", DgRkUpdate), kernel_entry!("dg_surface_flux", DgSurfaceFlux), kernel_entry!("reduce_f32x4", ReduceF32x4)]
}

/// Random vectors for per-vector kernels: lengths 1..=12 beats, 40 % of them one beat long (the
/// hardest case: back-to-back vectors inside the adder's latency).
pub fn random_vectors(rng: &mut Rng, count: usize, lanes: usize) -> Vec<Vec<Vec<u32>>> {
    (0..count)
        .map(|_| {
            let beats = if rng.chance(40) { 1 } else { 1 + rng.below(12) as usize };
            (0..beats).map(|_| (0..lanes).map(|_| operand(rng)).collect()).collect()
        })
        .collect()
}

/// The built-in simulator run of a shipped kernel against the software DAG, with random
/// `tvalid`/`tready`: bit for bit per beat; per vector within the summation bound.
fn testbench<const WI: usize, const KI: usize, const WO: usize, const KO: usize>(name: &str, block: fn(Netlist) -> NetlistStream<WI, KI, WO, KO>) -> Result<String, Error> {
    let (k, net, schedule) = build(name)?;
    let mut rng = Rng::new(0xC0DE);
    let ports = TransformPorts { clk: |b: &mut NetlistStream<WI, KI, WO, KO>| &mut b.clk, rst: |b| &mut b.rst, input: |b| &mut b.s_axis, output: |b| &mut b.m_axis };
    if !k.per_vector {
        let mut inputs = vec![];
        let mut expected = vec![];
        for _ in 0..1000 {
            let lanes: Vec<u32> = (0..k.inputs.len()).map(|_| operand(&mut rng)).collect();
            expected.push((lanes_to_data(&k.evaluate(&lanes)), false));
            inputs.push((lanes_to_data(&lanes), false));
        }
        let run = check_stream_transform(block(net), &ports, &inputs, &expected, 80, 60, 9)?;
        return Ok(format!("{} vectors match the software DAG in {} cycles (latency {})", inputs.len(), run.cycles, schedule.latency));
    }
    let vectors = random_vectors(&mut rng, 600, k.inputs.len());
    let mut inputs = vec![];
    for v in &vectors {
        for (i, beat) in v.iter().enumerate() {
            inputs.push((lanes_to_data(beat), i + 1 == v.len()));
        }
    }
    let judge = |i: usize, beat: &Beat| {
        for (j, (exact, bound)) in k.evaluate_vector(&vectors[i]).into_iter().enumerate() {
            let got = f32::from_bits((&beat.data >> (32 * j)).iter_u32_digits().next().unwrap_or(0));
            if (got as f64 - exact).abs() > bound {
                return Err(format!("output {j} of a {}-beat vector: {got} is more than {bound:e} from {exact}", vectors[i].len()));
            }
        }
        Ok(())
    };
    let mut runs = vec![];
    for (valid, ready, seed) in [(100, 100, 1), (70, 60, 2)] {
        let run = check_stream_outputs(block(net.clone()), &ports, &inputs, vectors.len(), &judge, valid, ready, seed)?;
        runs.push(format!("{} cycles at valid {valid}%/ready {ready}%", run.cycles));
    }
    Ok(format!("{} vectors ({} beats) within the summation bound of the software DAG: {} (latency {})", vectors.len(), inputs.len(), runs.join(", "), schedule.latency))
}
