//! The shipped kernels, simulated by Verilator from the generated Verilog: 10⁵ random input
//! vectors each, random `tvalid`/`tready`, bit for bit against the C references of docs/contract.md
//! as the applications' software models transcribe them (`midg::kernels::{surface_flux, rk_update}`,
//! `airfoil::reference::res_calc`: binary32, C precedence, left to right, no fused
//! multiply-add) — independent of the DSL files the hardware was built from. `reduce_f32x4` is checked against
//! its contract instead: the exact sum within the bound docs/contract.md gives for any summation order.

use std::path::Path;

use weft::hdl::stream::Beat;
use weft::hdl::testbench::Rng;
use weft::ip::airfoil::reference;
use weft::ip::kernels::{lanes_to_data, operand, random_vectors};
use weft::ip::midg::kernels;
use weft::sim::cosim::{AxisPorts, AxisSink, AxisSource, Model};

const VECTORS: usize = 100_000;

fn rk(v: &[f32]) -> Vec<f32> {
    kernels::rk_update(v.try_into().unwrap()).to_vec()
}

fn surface_flux(v: &[f32]) -> Vec<f32> {
    kernels::surface_flux(v.try_into().unwrap()).to_vec()
}

fn res_calc(v: &[f32]) -> Vec<f32> {
    let four = |i: usize| -> [f32; 4] { v[i..i + 4].try_into().unwrap() };
    reference::res_calc([v[0], v[1]], [v[2], v[3]], four(4), four(8), v[12], v[13]).to_vec()
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

/// The contract (docs/contract.md) for `reduce_f32x4`: any summation order, |sum − exact| ≤ (n−1)·2⁻²⁴·Σ|xᵢ|
/// over the n lanes of a vector (exact = the binary64 sum, exact for these magnitudes and counts).
fn reduce_within_bound(vector: &[Vec<u32>], got: u32) -> Result<(), String> {
    let values: Vec<f64> = vector.iter().flatten().map(|b| f32::from_bits(*b) as f64).collect();
    let exact: f64 = values.iter().sum();
    let bound = (values.len() as f64 - 1.0) * 2f64.powi(-24) * values.iter().map(|x| x.abs()).sum::<f64>();
    let error = (f32::from_bits(got) as f64 - exact).abs();
    if error <= bound {
        Ok(())
    } else {
        Err(format!("sum {} of {} values is {error:e} from exact {exact}, bound {bound:e}", f32::from_bits(got), values.len()))
    }
}

/// Runs `reduce_f32x4` over `vectors`; returns the results and the cycles in which the source
/// offered a beat but `s_axis_tready` was low.
fn reduce_run(vectors: &[Vec<Vec<u32>>], valid: u64, ready: u64) -> (Vec<Beat>, u64) {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("generated/kernels/reduce_f32x4.v");
    let mut model = Model::build(&file, "reduce_f32x4").unwrap_or_else(|e| panic!("{e}"));
    let ports = AxisPorts::find(&model, "s_axis").unwrap();
    let tready = ports.tready;
    let mut source = AxisSource::new(ports, valid, 3);
    let mut sink = AxisSink::new(AxisPorts::find(&model, "m_axis").unwrap(), ready, 4);
    let rst = model.port("rst").unwrap();
    model.set(rst, 1);
    model.tick();
    model.tick();
    model.set(rst, 0);
    for v in vectors {
        for (i, beat) in v.iter().enumerate() {
            source.queue.push_back(Beat::new(lanes_to_data(beat), 0, i + 1 == v.len(), 0));
        }
    }
    let beats = source.queue.len() as u64;
    let mut refused = 0;
    while sink.received.len() < vectors.len() {
        assert!(model.cycle < 10 * beats + 1000, "reduce_f32x4: stuck after {} results", sink.received.len());
        let offered = !source.queue.is_empty();
        source.drive(&mut model);
        sink.drive(&mut model);
        model.eval();
        if offered && model.get(tready) == 0 {
            refused += 1;
        }
        source.observe(&mut model);
        sink.observe(&mut model);
        model.tick();
    }
    (sink.received, refused)
}

#[test]
fn reduce_f32x4_sums_within_the_contract_bound_under_back_pressure() {
    let vectors = random_vectors(&mut Rng::new(0x5E), VECTORS, 4);
    let (results, _) = reduce_run(&vectors, 85, 70);
    for (i, (v, beat)) in vectors.iter().zip(&results).enumerate() {
        let got = beat.data.to_u32_digits().first().copied().unwrap_or(0);
        reduce_within_bound(v, got).unwrap_or_else(|e| panic!("vector {i} ({} beats): {e}", v.len()));
    }
}

/// One beat per cycle for any vector length: with the sink always ready, `s_axis_tready` never
/// refuses an offered beat, even for runs of back-to-back one-beat vectors.
#[test]
fn reduce_f32x4_accepts_a_beat_every_cycle() {
    let mut rng = Rng::new(0x1B);
    let mut vectors = random_vectors(&mut rng, 2000, 4);
    vectors.extend((0..500).map(|_| vec![(0..4).map(|_| operand(&mut rng)).collect()]));
    let (results, refused) = reduce_run(&vectors, 100, 100);
    assert_eq!(results.len(), vectors.len());
    assert_eq!(refused, 0, "s_axis_tready was low in {refused} cycles with a beat offered and the sink ready");
}

/// The kernel-language examples (fixed-point lanes, select/min/max/abs, stream offsets with a
/// flush after `tlast`) in Verilator from their exported Verilog, random `tvalid`/`tready`,
/// bit for bit and `tlast` for `tlast` against the software model, which the built-in simulator
/// tests of weft-hdl hold to hand-written references.
fn language_example(name: &str, lanes: usize, vectors: usize) {
    use weft::hdl::export::{export_netlist, ModuleSpec};
    use weft::hdl::float::FloatFormat;
    use weft::hdl::pipeline::{dsl, Stages};
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("examples/kernels/{name}.wk"));
    let k = dsl::parse(&std::fs::read_to_string(&path).unwrap()).unwrap_or_else(|e| panic!("{e}"));
    let (net, _) = k.netlist(&Stages::balanced(FloatFormat::BINARY32)).unwrap();
    let spec = ModuleSpec { family: "kernels", name: name.into(), summary: format!("{name} for its cosimulation test"), parameters: vec![], hidden_ports: vec![] };
    let dir = std::env::temp_dir().join(format!("weft-lang-cosim-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join(format!("{name}.v"));
    std::fs::write(&file, export_netlist(&spec, &net).unwrap()).unwrap();
    let mut model = Model::build(&file, name).unwrap_or_else(|e| panic!("{e}"));
    let mut source = AxisSource::new(AxisPorts::find(&model, "s_axis").unwrap(), 85, 5);
    let mut sink = AxisSink::new(AxisPorts::find(&model, "m_axis").unwrap(), 75, 6);
    let rst = model.port("rst").unwrap();
    model.set(rst, 1);
    model.tick();
    model.tick();
    model.set(rst, 0);
    let mut rng = Rng::new(0x1A);
    let mut beats = vec![];
    for v in random_vectors(&mut rng, vectors, lanes) {
        let n = v.len();
        for (i, mut lanes) in v.into_iter().enumerate() {
            // Fixed-point lanes take their slot's low bits: give them full-range values too.
            if name == "clip_window" {
                lanes[0] = rng.next_u64() as u32;
                lanes[1] = rng.next_u64() as u32;
            }
            source.queue.push_back(Beat::new(lanes_to_data(&lanes), 0, i + 1 == n, 0));
            beats.push((lanes, i + 1 == n));
        }
    }
    let want = k.evaluate_stream(&beats);
    while sink.received.len() < want.len() {
        assert!(model.cycle < 20 * beats.len() as u64 + 1000, "{name}: stuck after {} results", sink.received.len());
        source.drive(&mut model);
        sink.drive(&mut model);
        model.eval();
        source.observe(&mut model);
        sink.observe(&mut model);
        model.tick();
    }
    for (i, ((lanes, last), beat)) in want.iter().zip(&sink.received).enumerate() {
        let digits = beat.data.to_u32_digits();
        let got: Vec<u32> = (0..lanes.len()).map(|j| digits.get(j).copied().unwrap_or(0)).collect();
        assert_eq!((&got, beat.last), (lanes, *last), "{name}: output beat {i}");
    }
}

#[test]
fn stencil3_example_matches_its_software_model_in_verilator() {
    language_example("stencil3", 1, 1500);
}

#[test]
fn clip_window_example_matches_its_software_model_in_verilator() {
    language_example("clip_window", 3, 1500);
}
