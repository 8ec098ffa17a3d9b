//! The shipped binary32 operators, simulated by Verilator from the generated Verilog: 10⁶
//! random operand sets per operator plus the hand-picked hard cases, with random `tvalid` and
//! `tready`, bit for bit against Rust's native `f32` (canonical quiet NaN). The compare and int32
//! conversions get the same treatment against Rust's `partial_cmp` and `as` casts.

use std::path::Path;

use num_bigint::BigUint;
use weft::hdl::float::reference::native_f32;
use weft::hdl::float::{vectors, FloatFormat, FloatOperator, Multiplier};
use weft::hdl::stream::Beat;
use weft::hdl::testbench::Rng;
use weft::ip::fp::convert::{operands, CONVERSIONS};
use weft::ip::fp::{module_name, operator_verilog};
use weft::sim::cosim::{AxisPorts, AxisSink, AxisSource, Model};
use weft::tools::verilator_lint;

const OPERANDS: usize = 1_000_000;
const CHUNK: usize = 100_000;

fn run(op: FloatOperator) {
    let name = module_name(op);
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("generated/fp/{name}.v"));
    run_file(op, &file);
}

/// `op`'s module in `file` (the module named as the file).
fn run_file(op: FloatOperator, file: &Path) {
    let name = file.file_stem().and_then(|n| n.to_str()).expect("a module file").to_string();
    let operands = op.operands();
    let reference = |a: u32, b: u32| native_f32(op, a, b);
    let mut rng = Rng::new(0x5EED + op as u64);
    let generate = move || {
        // Class-biased operands, uniformly random bit patterns and (for the multiplier) sparse
        // fractions, whose products end in long runs of zeros: rounding ties and exact
        // products, which only a right sticky bit gets right.
        match rng.below(if op == FloatOperator::Mul { 3 } else { 2 }) {
            0 => {
                let (a, b) = vectors::pair(&mut rng, FloatFormat::BINARY32);
                (a as u32, b as u32)
            }
            1 => (rng.next_u64() as u32, rng.next_u64() as u32),
            _ => {
                let mut sparse = || {
                    let bit = |rng: &mut Rng| if rng.chance(30) { 0 } else { 1u32 << rng.below(23) };
                    let exp = 1 + rng.below(254) as u32;
                    (rng.below(2) as u32) << 31 | exp << 23 | bit(&mut rng) | bit(&mut rng)
                };
                (sparse(), sparse())
            }
        }
    };
    simulate(file, &name, operands, vectors::binary32_hard_cases(), generate, reference);
}

/// Streams the hand-picked pairs and then `generate`d ones (10⁶ in all) through module `name`
/// in chunks, comparing every result with `reference`.
fn simulate(file: &Path, name: &str, operands: usize, first: Vec<(u32, u32)>, mut generate: impl FnMut() -> (u32, u32), reference: impl Fn(u32, u32) -> u32) {
    let mut model = Model::build(file, name).unwrap_or_else(|e| panic!("{e}"));
    let mut source = AxisSource::new(AxisPorts::find(&model, "s_axis").unwrap(), 85, 1);
    let mut sink = AxisSink::new(AxisPorts::find(&model, "m_axis").unwrap(), 85, 2);
    let rst = model.port("rst").unwrap();
    model.set(rst, 1);
    model.tick();
    model.tick();
    model.set(rst, 0);
    let mut pairs = first;
    let mut checked = 0;
    while checked < OPERANDS {
        while pairs.len() < CHUNK {
            pairs.push(generate());
        }
        for (a, b) in &pairs {
            let data = if operands == 1 { *a as u64 } else { ((*b as u64) << 32) | *a as u64 };
            source.queue.push_back(Beat::new(BigUint::from(data), 0, false, 0));
        }
        sink.received.clear();
        let start = model.cycle;
        while sink.received.len() < pairs.len() {
            assert!(model.cycle - start < 10 * pairs.len() as u64, "{name}: stuck after {} results", sink.received.len());
            source.drive(&mut model);
            sink.drive(&mut model);
            model.eval();
            source.observe(&mut model);
            sink.observe(&mut model);
            model.tick();
        }
        for ((a, b), beat) in pairs.iter().zip(&sink.received) {
            let want = reference(*a, *b);
            let got = beat.data.to_u64_digits().first().copied().unwrap_or(0) as u32;
            assert_eq!(got, want, "{name}: a={a:#010x} b={b:#010x} got {got:#010x} want {want:#010x}");
        }
        checked += pairs.len();
        pairs.clear();
    }
}

#[test]
fn fp32_add_matches_native_f32() {
    run(FloatOperator::Add);
}

#[test]
fn fp32_mul_matches_native_f32() {
    run(FloatOperator::Mul);
}

/// The multiplier at every stage count, not only the shipped one (`-Wall` clean, then 10⁶
/// operand sets each): each split puts its registers around different parts of the DSP shift
/// and the window logic.
#[test]
fn fp32_mul_matches_native_f32_at_every_stage_count() {
    let dir = std::env::temp_dir().join(format!("weft_fp_cosim_mul_{}", std::process::id()));
    for stages in 0..=FloatOperator::Mul.max_stages(FloatFormat::BINARY32) {
        let file = dir.join(format!("s{stages}/fp32_mul.v"));
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(&file, operator_verilog(FloatOperator::Mul, stages, Multiplier::DspShift).unwrap()).unwrap();
        // (With no stage the module is combinational and its clock and reset unused.)
        if stages > 0 {
            verilator_lint(&file, "fp32_mul").unwrap_or_else(|e| panic!("{stages} stages: {e}"));
        }
        run_file(FloatOperator::Mul, &file);
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// The multiplier with its subnormal shift in LUTs (2 DSP48E1), shipped beside `fp32_mul`: the
/// same 10⁶ operand sets, from its generated file (`-Wall` clean).
#[test]
fn fp32_mul_lut_shift_matches_native_f32() {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("generated/fp/fp32_mul_lut_shift.v");
    verilator_lint(&file, "fp32_mul_lut_shift").unwrap_or_else(|e| panic!("{e}"));
    run_file(FloatOperator::Mul, &file);
}

#[test]
fn fp32_div_matches_native_f32() {
    run(FloatOperator::Div);
}

#[test]
fn fp32_sqrt_matches_native_f32() {
    run(FloatOperator::Sqrt);
}

fn conversion(name: &str) {
    let c = CONVERSIONS.iter().find(|c| c.name == name).unwrap();
    let mut rng = Rng::new(0xC5);
    // Hard cases: zeros, infinities, NaN, the int32 range's ends as floats and as integers.
    let specials = [0u32, 0x8000_0000, 0x7F80_0000, 0xFF80_0000, 0x7FC0_0000, 0x4F00_0000, 0xCF00_0000, 0x4EFF_FFFF, 0xCF00_0001, 0x7FFF_FFFF, 0x8000_0001, 0x3F00_0000, 0xBF00_0000];
    let first: Vec<(u32, u32)> = specials.iter().flat_map(|a| specials.iter().map(move |b| (*a, *b))).collect();
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("generated/fp/{}.v", c.name));
    simulate(&file, c.name, c.operands, first, move || operands(&mut rng), c.model);
}

#[test]
fn fp32_cmp_matches_partial_cmp() {
    conversion("fp32_cmp");
}

#[test]
fn fp32_from_i32_matches_native_casts() {
    conversion("fp32_from_i32");
}

#[test]
fn fp32_to_i32_matches_native_casts() {
    conversion("fp32_to_i32");
}
