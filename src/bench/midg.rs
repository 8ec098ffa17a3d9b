//! `weft bench midg`: MIDG2's software model (`weft_ip::midg::solver`) on the unit-cube cavity,
//! run to t = 0.75 as MIDG2 runs it, at orders 1–4 on meshes of 2³ to 16³ sub-cubes (six
//! tetrahedra each), in binary64 and binary32: the maximum nodal error of any field against the
//! exact solution, and the observed order between successive meshes.

use serde::Serialize;
use weft_ip::midg::solver::{cavity_mode, flops_per_element_stage, Maxwell};
use weft_ip::midg::{Geometry, Operators, TetMesh};

use crate::Error;

/// The end time of MIDG2's test case.
pub const END: f64 = 0.75;
/// Sub-cubes per side, per order.
pub const MESHES: [(usize, &[usize]); 4] = [(1, &[2, 4, 8, 16]), (2, &[2, 4, 8]), (3, &[2, 4, 8]), (4, &[2, 4, 8])];

/// One order and mesh.
#[derive(Clone, Debug, Serialize)]
pub struct Row {
    /// Polynomial order N.
    pub order: usize,
    /// Sub-cubes per side.
    pub cubes: usize,
    /// Elements, 6·cubes³.
    pub elements: usize,
    /// Time steps to t = 0.75.
    pub steps: usize,
    /// The largest nodal error of any field at t = 0.75, binary64.
    pub error_binary64: f64,
    /// log2 of the previous (coarser) mesh's binary64 error over this one's.
    pub order_binary64: Option<f64>,
    /// The same in binary32.
    pub error_binary32: f64,
    /// log2 of the previous mesh's binary32 error over this one's.
    pub order_binary32: Option<f64>,
    /// The largest difference between the binary32 and the binary64 run at any node: what
    /// rounding to binary32 adds.
    pub rounding: f64,
}

/// Everything the bench measures; written to `bench/midg.json`.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    /// The end time.
    pub end_time: f64,
    /// The rows.
    pub rows: Vec<Row>,
    /// MIDG2's FLOP model per element and stage, per order (N, Np, Nfp, FLOPs).
    pub flops: Vec<(usize, usize, usize, usize)>,
}

/// Order `n` on `cubes`³ sub-cubes in both precisions: elements, steps, the two errors and the
/// largest difference between the two runs.
fn run_one(n: usize, cubes: usize) -> Result<(usize, usize, f64, f64, f64), Error> {
    let mesh = TetMesh::unit_cube(cubes)?;
    let op = Operators::new(n);
    let g = Geometry::new(&mesh, &mesh.connect()?, &op)?;
    let start = |x: f64, y: f64, z: f64| cavity_mode(x, y, z, 0.0);
    let mut double = Maxwell::<f64>::from_parts(&op, &g, mesh.elements.len(), &start);
    let mut single = Maxwell::<f32>::from_parts(&op, &g, mesh.elements.len(), &start);
    let steps = double.run_to(END);
    single.run_to(END);
    let rounding = double.fields.iter().zip(&single.fields).flat_map(|(d, s)| d.iter().zip(s).map(|(a, b)| (a - *b as f64).abs())).fold(0.0, f64::max);
    Ok((mesh.elements.len(), steps, double.max_error(&g, &cavity_mode), single.max_error(&g, &cavity_mode), rounding))
}

/// Runs every order of `orders` (1 ..= 4) on its meshes in both precisions.
pub fn run(orders: &[usize], log: &mut dyn FnMut(String)) -> Result<Report, Error> {
    let mut rows: Vec<Row> = vec![];
    for &(n, meshes) in MESHES.iter().filter(|m| orders.contains(&m.0)) {
        for &cubes in meshes {
            let (elements, steps, e64, e32, rounding) = run_one(n, cubes)?;
            let previous = rows.last().filter(|r| r.order == n);
            let (order_binary64, order_binary32) = (previous.map(|p| (p.error_binary64 / e64).log2()), previous.map(|p| (p.error_binary32 / e32).log2()));
            log(format!("N = {n}, {cubes}³ cubes ({elements} elements, {steps} steps): error {e64:.3e} (order {order_binary64:.2?}), binary32 {e32:.3e}, rounding {rounding:.1e}"));
            rows.push(Row { order: n, cubes, elements, steps, error_binary64: e64, order_binary64, error_binary32: e32, order_binary32, rounding });
        }
    }
    let flops = (1..=4).map(|n| {
        let (np, nfp) = ((n + 1) * (n + 2) * (n + 3) / 6, (n + 1) * (n + 2) / 2);
        (n, np, nfp, flops_per_element_stage(np, nfp))
    });
    Ok(Report { end_time: END, rows, flops: flops.collect() })
}

/// The table.
pub fn table(r: &Report) -> String {
    let order = |o: Option<f64>| o.map_or("–".into(), |o| format!("{o:.2}"));
    let mut t = format!("MIDG2's cavity to t = {}: max nodal error against the exact solution\n  N  cubes  elements  steps   binary64  order   binary32  order  rounding\n", r.end_time);
    for w in &r.rows {
        t += &format!(
            "  {} {:>6} {:>9} {:>6} {:>10.3e} {:>6} {:>10.3e} {:>6} {:>9.1e}\n",
            w.order,
            w.cubes,
            w.elements,
            w.steps,
            w.error_binary64,
            order(w.order_binary64),
            w.error_binary32,
            order(w.order_binary32),
            w.rounding
        );
    }
    t
}
