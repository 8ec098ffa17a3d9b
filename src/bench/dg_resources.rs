//! The resources of MIDG2's element-local dense operators (`weft_ip::app::dense`), per order and
//! per parallelism: Dr (Np × Np) at 1, 2, 4 and 8 lanes (at most Np) and LIFT (Np × 4·Nfp) at 4 lanes, for
//! N = 1 … 4, binary32, each synthesized by Yosys (`synth_xilinx`), beside the cycles an element
//! takes ([`Dense::interval`]). `weft bench dg` adds them to `bench/dg.json`.

use std::path::Path;

use serde::Serialize;
use weft_ip::app::dense::{dense_netlist, Dense};
use weft_ip::midg::Operators;
use weft_ip::weft_hdl::export::{export_netlist, ModuleSpec};
use weft_ip::weft_hdl::float::{FloatFormat, FloatOperator};
use weft_ip::weft_hdl::pipeline::Stages;

use crate::Error;

/// Lanes of the Dr rows.
pub const LANES: [usize; 4] = [1, 2, 4, 8];
/// Lanes of the LIFT rows.
pub const LIFT_LANES: usize = 4;

/// One operator (a row of `resources` in `bench/dg.json`).
#[derive(Clone, Debug, Serialize)]
pub struct Resource {
    /// Polynomial order N.
    pub order: usize,
    /// `Dr` or `LIFT`.
    pub matrix: &'static str,
    /// Rows R.
    pub rows: usize,
    /// Columns C.
    pub cols: usize,
    /// Lanes P.
    pub lanes: usize,
    /// Cycles an element, nothing waiting: C·max(⌈R/P⌉, L_add) plus the pipeline's fill.
    pub cycles_per_element: usize,
    /// Yosys `synth_xilinx` figures.
    pub luts: u64,
    /// Flip-flops.
    pub flip_flops: u64,
    /// DSP48E1 slices.
    pub dsps: u64,
    /// LUTs used as RAM.
    pub lut_rams: u64,
    /// Block RAMs (36 Kb).
    pub brams: f64,
}

/// Synthesizes every operator in `work`.
pub fn run(work: &Path, progress: &mut dyn FnMut(&str)) -> Result<Vec<Resource>, Error> {
    std::fs::create_dir_all(work).map_err(|e| Error::from(e).context(work.display()))?;
    let stages = Stages::balanced(FloatFormat::BINARY32);
    let mut rows = vec![];
    for order in 1..=4 {
        let op = Operators::new(order);
        let m = op.to_f32();
        let np = op.dr.nrows();
        let cases = LANES.iter().filter(|&&l| l <= np).map(|&l| ("Dr", np, np, l, &m.dr)).chain([("LIFT", np, op.lift.ncols(), LIFT_LANES, &m.lift)]);
        for (matrix, r, c, lanes, values) in cases {
            let shape = Dense { rows: r, cols: c, lanes, mul_stages: stages.of(FloatOperator::Mul), add_stages: stages.of(FloatOperator::Add).max(1) };
            let name = format!("midg_{}_n{order}_p{lanes}", matrix.to_lowercase());
            progress(&format!("{name}: {r} x {c}, {lanes} lanes, Yosys synth_xilinx"));
            let net = dense_netlist(&shape, FloatFormat::BINARY32, &values.iter().map(|v| v.to_bits() as u128).collect::<Vec<_>>())?;
            let spec = ModuleSpec {
                family: "app",
                name: name.clone(),
                summary: format!("MIDG2's {matrix} at order {order} as a dense operator with {lanes} lanes"),
                parameters: vec![],
                hidden_ports: vec![],
            };
            let file = work.join(format!("{name}.v"));
            std::fs::write(&file, export_netlist(&spec, &net)?).map_err(|e| Error::from(e).context(file.display()))?;
            let s = weft_tools::yosys_synth(&file, &name)?;
            rows.push(Resource {
                order,
                matrix,
                rows: r,
                cols: c,
                lanes,
                cycles_per_element: shape.interval(),
                luts: s.luts,
                flip_flops: s.flip_flops,
                dsps: s.dsps,
                lut_rams: s.lut_rams,
                brams: s.brams,
            });
        }
    }
    Ok(rows)
}
