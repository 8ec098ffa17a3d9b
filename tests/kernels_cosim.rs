//! The shipped kernels, simulated by Verilator from the generated Verilog: 10⁵ random input
//! vectors each, random `tvalid`/`tready`, bit for bit against the C references of DESIGN.md
//! transcribed here by hand (binary32, C precedence, left to right, no fused multiply-add) —
//! independent of the DSL files the hardware was built from.

use std::path::Path;

use weft::hdl::stream::Beat;
use weft::hdl::testbench::Rng;
use weft::ip::kernels::{lanes_to_data, operand};
use weft::sim::cosim::{AxisPorts, AxisSink, AxisSource, Model};

const VECTORS: usize = 100_000;

fn rk(v: &[f32]) -> Vec<f32> {
    let (q, res, rhs, a, b, dt) = (v[0], v[1], v[2], v[3], v[4], v[5]);
    let res_new = a * res + dt * rhs;
    let q_new = q + b * res_new;
    vec![q_new, res_new]
}

#[allow(non_snake_case)]
fn surface_flux(v: &[f32]) -> Vec<f32> {
    let [nx, ny, nz, fscale, HxM, HyM, HzM, ExM, EyM, EzM, HxP, HyP, HzP, ExP, EyP, EzP]: [f32; 16] = v.try_into().unwrap();
    let (dHx, dHy, dHz) = (HxP - HxM, HyP - HyM, HzP - HzM);
    let (dEx, dEy, dEz) = (ExP - ExM, EyP - EyM, EzP - EzM);
    let ndotdH = nx * dHx + ny * dHy + nz * dHz;
    let ndotdE = nx * dEx + ny * dEy + nz * dEz;
    let h = 0.5f32 * fscale;
    vec![
        h * (-ny * dEz + nz * dEy + (dHx - ndotdH * nx)),
        h * (-nz * dEx + nx * dEz + (dHy - ndotdH * ny)),
        h * (-nx * dEy + ny * dEx + (dHz - ndotdH * nz)),
        h * (ny * dHz - nz * dHy + (dEx - ndotdE * nx)),
        h * (nz * dHx - nx * dHz + (dEy - ndotdE * ny)),
        h * (nx * dHy - ny * dHx + (dEz - ndotdE * nz)),
    ]
}

fn res_calc(v: &[f32]) -> Vec<f32> {
    let gm1 = f32::from_bits(0x3ECC_CCCC);
    let eps = f32::from_bits(0x3D4C_CCCD);
    let (x1, x2, q1, q2, adt1, adt2) = (&v[0..2], &v[2..4], &v[4..8], &v[8..12], v[12], v[13]);
    let dx = x1[0] - x2[0];
    let dy = x1[1] - x2[1];
    let mut ri = 1.0f32 / q1[0];
    let p1 = gm1 * (q1[3] - 0.5f32 * ri * (q1[1] * q1[1] + q1[2] * q1[2]));
    let vol1 = ri * (q1[1] * dy - q1[2] * dx);
    ri = 1.0f32 / q2[0];
    let p2 = gm1 * (q2[3] - 0.5f32 * ri * (q2[1] * q2[1] + q2[2] * q2[2]));
    let vol2 = ri * (q2[1] * dy - q2[2] * dx);
    let mu = 0.5f32 * (adt1 + adt2) * eps;
    vec![
        0.5f32 * (vol1 * q1[0] + vol2 * q2[0]) + mu * (q1[0] - q2[0]),
        0.5f32 * (vol1 * q1[1] + p1 * dy + vol2 * q2[1] + p2 * dy) + mu * (q1[1] - q2[1]),
        0.5f32 * (vol1 * q1[2] - p1 * dx + vol2 * q2[2] - p2 * dx) + mu * (q1[2] - q2[2]),
        0.5f32 * (vol1 * (q1[3] + p1) + vol2 * (q2[3] + p2)) + mu * (q1[3] - q2[3]),
    ]
}

fn run(name: &str, lanes: usize, reference: fn(&[f32]) -> Vec<f32>) {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("generated/kernels/{name}.v"));
    let mut model = Model::build(&file, name).unwrap_or_else(|e| panic!("{e}"));
    let mut source = AxisSource::new(AxisPorts::find(&model, "s_axis").unwrap(), 85, 1);
    let mut sink = AxisSink::new(AxisPorts::find(&model, "m_axis").unwrap(), 80, 2);
    let rst = model.port("rst").unwrap();
    model.set(rst, 1);
    model.tick();
    model.tick();
    model.set(rst, 0);
    let mut rng = Rng::new(0xD6);
    let inputs: Vec<Vec<u32>> = (0..VECTORS).map(|_| (0..lanes).map(|_| operand(&mut rng)).collect()).collect();
    for lanes in &inputs {
        source.queue.push_back(Beat::new(lanes_to_data(lanes), 0, false, 0));
    }
    while sink.received.len() < VECTORS {
        assert!(model.cycle < 10 * VECTORS as u64, "{name}: stuck after {} results", sink.received.len());
        source.drive(&mut model);
        sink.drive(&mut model);
        model.eval();
        source.observe(&mut model);
        sink.observe(&mut model);
        model.tick();
    }
    for (i, (lanes, beat)) in inputs.iter().zip(&sink.received).enumerate() {
        let values: Vec<f32> = lanes.iter().map(|b| f32::from_bits(*b)).collect();
        let want: Vec<u32> = reference(&values).iter().map(|x| if x.is_nan() { 0x7FC0_0000 } else { x.to_bits() }).collect();
        let digits = beat.data.to_u32_digits();
        let got: Vec<u32> = (0..want.len()).map(|j| digits.get(j).copied().unwrap_or(0)).collect();
        assert_eq!(got, want, "{name}: vector {i} ({lanes:08x?})");
    }
}

#[test]
fn dg_rk_update_matches_its_c_reference() {
    run("dg_rk_update", 6, rk);
}

#[test]
fn dg_surface_flux_matches_its_c_reference() {
    run("dg_surface_flux", 16, surface_flux);
}

#[test]
fn airfoil_res_calc_matches_its_c_reference() {
    run("airfoil_res_calc", 14, res_calc);
}
