//! Shipped application kernels (`generated/kernels/`), each built from its DSL file in
//! `examples/kernels/` by the pipeline builder, with every operator at its balanced depth.

use num_bigint::BigUint;
use weft_hdl::export::{export, ExportError, ModuleSpec};
use weft_hdl::float::FloatFormat;
use weft_hdl::netlist::block::NetlistStream;
use weft_hdl::netlist::Netlist;
use weft_hdl::pipeline::{dsl, Kernel, Schedule, Stages};
use weft_hdl::stream::Sideband;
use weft_hdl::testbench::{check_stream_transform, Rng, TransformPorts};

use crate::catalog::Shipped;

/// The DSL source of each shipped kernel.
pub const SOURCES: [(&str, &str); 3] = [
    ("airfoil_res_calc", include_str!("../../../examples/kernels/airfoil_res_calc.wk")),
    ("dg_rk_update", include_str!("../../../examples/kernels/dg_rk_update.wk")),
    ("dg_surface_flux", include_str!("../../../examples/kernels/dg_surface_flux.wk")),
];

pub fn kernel(name: &str) -> Result<Kernel, String> {
    let (_, source) = SOURCES.iter().find(|(n, _)| *n == name).ok_or(format!("no shipped kernel `{name}`"))?;
    dsl::parse(source).map_err(|e| format!("examples/kernels/{name}.wk: {e}"))
}

pub fn build(name: &str) -> Result<(Kernel, Netlist, Schedule), String> {
    let k = kernel(name)?;
    let (net, schedule) = k.netlist(&Stages::balanced(FloatFormat::BINARY32))?;
    Ok((k, net, schedule))
}

pub type AirfoilResCalc = NetlistStream<448, 56, 128, 16>;
pub type DgRkUpdate = NetlistStream<192, 24, 64, 8>;
pub type DgSurfaceFlux = NetlistStream<512, 64, 192, 24>;

/// Random operands in a range where the kernels' arithmetic stays finite: magnitudes in
/// [2^-4, 2^4) with random signs and full random fractions.
pub fn operand(rng: &mut Rng) -> u32 {
    let sign = (rng.below(2) as u32) << 31;
    let exp = 127 - 4 + rng.below(8) as u32;
    sign | (exp << 23) | (rng.next_u64() as u32 & 0x7F_FFFF)
}

fn lanes_to_data(lanes: &[u32]) -> BigUint {
    let mut data = BigUint::default();
    for (i, lane) in lanes.iter().enumerate() {
        data |= BigUint::from(*lane) << (32 * i);
    }
    data
}

fn spec(name: &str) -> ModuleSpec {
    let (k, _, schedule) = build(name).expect("shipped kernel builds");
    let mut hidden = Sideband::DATA.hidden("s_axis");
    hidden.extend(Sideband::DATA.hidden("m_axis"));
    let ops: Vec<String> = schedule.operators.iter().map(|(op, n)| format!("{n} {op}")).collect();
    ModuleSpec {
        family: "kernels",
        name: name.into(),
        summary: format!("kernel from examples/kernels/{name}.wk, binary32, II=1"),
        parameters: vec![
            ("inputs".into(), k.inputs.join(", ")),
            ("outputs".into(), k.outputs.iter().map(|(n, _)| n.clone()).collect::<Vec<_>>().join(", ")),
            ("latency".into(), format!("{} cycles", schedule.latency)),
            ("operators".into(), ops.join(", ")),
            ("register bits".into(), schedule.register_bits.to_string()),
        ],
        hidden_ports: hidden,
    }
}

macro_rules! kernel_entry {
    ($name:literal, $ty:ty) => {
        Shipped {
            spec: spec($name),
            verilog: |spec| {
                let (_, net, _) = build($name).map_err(ExportError)?;
                export(spec, &mut <$ty>::new(net))
            },
            testbench: || {
                let (k, net, schedule) = build($name)?;
                let mut rng = Rng::new(0xC0DE);
                let mut inputs = vec![];
                let mut expected = vec![];
                for _ in 0..1000 {
                    let lanes: Vec<u32> = (0..k.inputs.len()).map(|_| operand(&mut rng)).collect();
                    expected.push((lanes_to_data(&k.evaluate(&lanes)), false));
                    inputs.push((lanes_to_data(&lanes), false));
                }
                let ports = TransformPorts { clk: |b: &mut $ty| &mut b.clk, rst: |b| &mut b.rst, input: |b| &mut b.s_axis, output: |b| &mut b.m_axis };
                let run = check_stream_transform(<$ty>::new(net), &ports, &inputs, &expected, 80, 60, 9)?;
                Ok(format!(
                    "{} vectors match the software DAG in {} cycles (latency {})",
                    inputs.len(),
                    run.cycles,
                    schedule.latency
                ))
            },
        }
    };
}

pub fn shipped() -> Vec<Shipped> {
    vec![
        kernel_entry!("airfoil_res_calc", AirfoilResCalc),
        kernel_entry!("dg_rk_update", DgRkUpdate),
        kernel_entry!("dg_surface_flux", DgSurfaceFlux),
    ]
}
