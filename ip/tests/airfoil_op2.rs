//! OP2's Airfoil on OP2's own mesh: the NACA0012 C-grid as OP2-Common's generator builds it, and
//! the five-loop program in binary64, held to the figures OP2 publishes.

use weft_hdl::float::{FloatFormat, FloatOperator};
use weft_hdl::pipeline::Stages;
use weft_ip::airfoil::naca0012::naca0012;
use weft_ip::airfoil::solver::{iteration, iteration_in, Constants, Order, State};
use weft_ip::app::plan::Plan;
use weft_ip::app::Application;

const AIRFOIL: &str = include_str!("../../examples/apps/airfoil.app");

/// The generator's counts (its own formulas), and every cell bounded by exactly four edges:
/// each side of a cell is one interior edge (between two different cells) or one boundary edge.
#[test]
fn the_c_grid_has_the_generators_counts_and_closed_cells() {
    for (i, j) in [(4, 6), (10, 7)] {
        let m = naca0012(i, j).unwrap();
        assert_eq!(m.x.len(), (3 * i + 1) * (j + 1));
        assert_eq!(m.cells.len(), 3 * i * j);
        assert_eq!(m.edges.len(), (3 * i - 1) * j + 3 * i * (j - 1) + i);
        assert_eq!(m.bedges.len(), i + 3 * i + 2 * j);
        assert_eq!(m.bedges.iter().filter(|b| b.bound == 1).count(), i, "the airfoil has I wall edges");
        let mut sides = vec![0; m.cells.len()];
        for e in &m.edges {
            assert_ne!(e.cells[0], e.cells[1]);
            sides[e.cells[0] as usize] += 1;
            sides[e.cells[1] as usize] += 1;
        }
        for b in &m.bedges {
            sides[b.cell as usize] += 1;
        }
        assert!(sides.iter().all(|&s| s == 4), "{i}x{j}: a cell without four sides");
    }
}

/// The wall nodes lie on the NACA0012 section: the generator's thickness formula at chord
/// position x + 0.0077 (the mapping moves the nose to −0.0077), up to the spline through 199
/// surface points and six decimals; the two trailing-edge nodes sit on the axis at x = 1.
#[test]
fn the_wall_follows_the_naca0012_section() {
    let m = naca0012(40, 10).unwrap();
    let thickness = |x: f64| 0.594689181 * (0.298222773 * x.sqrt() - 0.127125232 * x - 0.357907906 * x * x + 0.291984971 * x.powi(3) - 0.105174696 * x.powi(4));
    let mut on_section = 0;
    for b in m.bedges.iter().filter(|b| b.bound == 1) {
        for [x, y] in b.nodes.map(|n| m.x[n as usize]) {
            let chord = x + 0.0077;
            if chord > 1.0 {
                assert_eq!([x, y], [1.0, 0.0], "a trailing-edge node off the axis");
                continue;
            }
            assert!(chord >= 0.0, "wall node at x = {x}");
            assert!((y.abs() - thickness(chord)).abs() < 2e-4, "wall node ({x}, {y}): thickness {}", thickness(chord));
            on_section += 1;
        }
    }
    assert_eq!(on_section, 2 * 40 - 2, "every wall node but the trailing edge's, from both of its edges");
}

/// Airfoil written as a mesh application (sets, maps, data, five parallel loops with access
/// descriptors, run in OP2's sequential order) computes bit for bit what the hand-written
/// program computes: q, adt, res and rms after every iteration.
#[test]
fn the_mesh_application_matches_the_direct_program_bit_for_bit() {
    use weft_ip::airfoil::program::Airfoil;
    let m = naca0012(20, 12).unwrap();
    let c = Constants::<f64>::default();
    let mut direct = State::free_stream(&m, &c);
    let mut app = Airfoil::new(&m, c).unwrap();
    for it in 1..=20 {
        let want = iteration(&m, &mut direct, &c);
        let got = app.iteration().unwrap();
        assert_eq!(got.to_bits(), want.to_bits(), "iteration {it}: rms {got:e} against {want:e}");
        let q: Vec<f64> = direct.q.iter().flatten().copied().collect();
        assert!(app.app.values(app.q).iter().zip(&q).all(|(a, b)| a.to_bits() == b.to_bits()), "iteration {it}: q differs");
        assert!(app.app.values(app.adt).iter().zip(&direct.adt).all(|(a, b)| a.to_bits() == b.to_bits()), "iteration {it}: adt differs");
    }
}

/// A loop whose arguments do not fit its set is refused, naming the loop, the argument and the
/// rule.
#[test]
fn loops_that_do_not_fit_their_set_are_refused() {
    use weft_ip::app::{Access, App, Arg};
    let mut a = App::new();
    let nodes = a.set("nodes", 3);
    let edges = a.set("edges", 2);
    let pedge = a.map("pedge", edges, nodes, 2, vec![0, 1, 1, 2]).unwrap();
    let x = a.dat("x", nodes, 1, vec![1.0, 2.0, 4.0]).unwrap();
    let w = a.dat("w", edges, 1, vec![0.0; 2]).unwrap();
    let g = a.global("g", vec![0.0]);
    let nothing = |_: &mut [Vec<f64>]| {};
    let cases: [(Arg, &str); 5] = [
        (Arg::Direct(x, Access::Read), "`x` lives on `nodes`: reach it through a map"),
        (Arg::Indirect(x, pedge, 2, Access::Read), "index 2 of map `pedge`: allowed 0..2"),
        (Arg::Indirect(w, pedge, 0, Access::Read), "map `pedge` reaches `nodes`, `w` lives on `edges`"),
        (Arg::Direct(w, Access::Max), "`w` is a dat: Min and Max reduce globals only"),
        (Arg::Global(g, Access::Write), "global `g`: Write and Rw are not reductions"),
    ];
    for (arg, message) in cases {
        let err = a.par_loop("edge_sum", edges, &[arg], &nothing).unwrap_err().to_string();
        assert!(err.starts_with("loop `edge_sum` over `edges`, argument 0: ") && err.contains(message), "{err}");
    }
    assert!(a.map("bad", edges, nodes, 2, vec![0, 1, 1, 3]).unwrap_err().to_string().contains("entry 3 is 3, `nodes` has 3 elements"));
    // And a loop that fits: each edge sums its nodes; the global keeps the largest sum.
    let args = [Arg::Indirect(x, pedge, 0, Access::Read), Arg::Indirect(x, pedge, 1, Access::Read), Arg::Direct(w, Access::Write), Arg::Global(g, Access::Max)];
    a.par_loop("edge_sum", edges, &args, &|b| {
        b[2][0] = b[0][0] + b[1][0];
        b[3][0] = b[2][0];
    })
    .unwrap();
    assert_eq!(a.values(w), &[3.0, 6.0]);
    assert_eq!(a.global_values(g), &[6.0]);
}

/// The hardware's order for Airfoil on `mesh`: the compiled program's schedules for `res_calc`
/// and `bres_calc`, and its reduction lanes.
fn hardware_order(mesh: &weft_ip::airfoil::Mesh) -> (Vec<Option<u32>>, Vec<Option<u32>>, usize) {
    let app = Application::<f64>::load("airfoil.app", AIRFOIL, &mesh.data()).unwrap();
    let lanes = Stages::balanced(FloatFormat::BINARY64).of(FloatOperator::Add);
    let plan = Plan::new(&app, lanes).unwrap();
    (plan.schedules["res_calc"].clone(), plan.schedules["bres_calc"].clone(), lanes)
}

/// The native reference in the hardware's order is the application file's arithmetic run in
/// that order (the compiled hardware's bit-exact target), bit for bit, over two iterations.
#[test]
fn the_schedule_order_reference_is_the_application_files_arithmetic() {
    let m = naca0012(12, 16).unwrap();
    let (edges, bedges, lanes) = hardware_order(&m);
    let c = Constants::<f64>::default();
    let mut s = State::free_stream(&m, &c);
    let order = Order { edges: &edges, bedges: &bedges, lanes };
    let rms = (0..2).map(|_| iteration_in(&m, &mut s, &c, &order)).last().unwrap();
    let mut app = Application::<f64>::load("airfoil.app", AIRFOIL, &m.data()).unwrap();
    app.app.set_interleave(Some(lanes));
    let plan = Plan::new(&app, lanes).unwrap();
    app.run_as(Some(&plan.schedules), Some(2), &mut |_, _| {}).unwrap();
    let flat = |v: &[[f64; 4]]| v.iter().flatten().map(|x| x.to_bits()).collect::<Vec<_>>();
    let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    assert_eq!(flat(&s.q), bits(app.dat("p_q").unwrap()));
    assert_eq!(flat(&s.res), bits(app.dat("p_res").unwrap()));
    assert_eq!(bits(&s.adt), bits(app.dat("p_adt").unwrap()));
    assert_eq!(rms.to_bits(), (app.global("rms").unwrap()[0] / m.cells.len() as f64).sqrt().to_bits());
}

/// OP2's published result: on the 720,000-cell mesh, 1000 iterations in double precision end
/// with rms = 1.060114637578e-4, and OP2's own check passes when
/// |100·rms/1.060114637578e-4 − 100| < 1e-5. Both OP2's sequential order and the compiled
/// hardware's order (its schedules and reduction lanes) pass it; binary32 in the hardware's
/// order is printed against binary64 every 100 iterations and must end within 0.1 % of it (a
/// guard against divergence). About three minutes of one core, the three runs side by side.
#[test]
fn binary64_airfoil_reproduces_op2s_published_rms() {
    let m = naca0012(400, 600).unwrap();
    let (edges, bedges, lanes) = hardware_order(&m);
    let order = Order { edges: &edges, bedges: &bedges, lanes };
    let (c64, c32) = (Constants::<f64>::default(), Constants::<f32>::default());
    let op2 = 1.060114637578e-4;
    // The three runs are independent: side by side, each keeping its rms every 100 iterations.
    fn every_100(mut step: impl FnMut() -> f64) -> Vec<f64> {
        (1..=1000).filter_map(|it| Some(step()).filter(|_| it % 100 == 0)).collect()
    }
    let (seq, h64, h32) = std::thread::scope(|scope| {
        let seq = scope.spawn(|| {
            let mut s = State::free_stream(&m, &c64);
            every_100(|| iteration(&m, &mut s, &c64))
        });
        let h32 = scope.spawn(|| {
            let mut s = State::free_stream(&m, &c32);
            every_100(|| iteration_in(&m, &mut s, &c32, &order) as f64)
        });
        let mut s = State::free_stream(&m, &c64);
        let h64 = every_100(|| iteration_in(&m, &mut s, &c64, &order));
        (seq.join().unwrap(), h64, h32.join().unwrap())
    });
    for (k, ((r64, rh64), rh32)) in seq.iter().zip(&h64).zip(&h32).enumerate() {
        println!(" {}  sequential binary64 {r64:.12e}  hardware order binary64 {rh64:.12e}  binary32 {rh32:10.5e}  ({:+.3e} %)", 100 * (k + 1), 100.0 * (rh32 / rh64 - 1.0));
    }
    let (r64, rh64, rh32) = (seq[9], h64[9], h32[9]);
    for (what, r) in [("sequential", r64), ("hardware order", rh64)] {
        let diff = (100.0 * (r / op2) - 100.0).abs();
        println!("{what} binary64 rms {r:.12e}: {diff:.3e} percent from OP2's {op2:e}");
        assert!(diff < 1e-5, "{what}: rms {r:e}: {diff:e} percent from OP2's");
    }
    println!("binary32 in the hardware order: {rh32:.6e}, {:+.3e} percent from OP2's", 100.0 * (rh32 / op2 - 1.0));
    assert!((rh32 / rh64 - 1.0).abs() < 1e-3, "binary32 rms {rh32:e}, binary64 {rh64:e}");
}

/// The conflict relation of a loop that increments through a map, derived from its access
/// descriptors alone: for `res_calc` it is the edge → cell map (two cells an edge), for
/// `bres_calc` one cell a boundary edge, and both list schedules built from it pass
/// `VALID_SCHEDULE`.
#[test]
fn increments_through_maps_give_the_schedules_conflicts() {
    use weft_ip::airfoil::program::Airfoil;
    use weft_ip::app::schedule;
    use weft_ip::app::{Access, Arg};
    let m = naca0012(12, 8).unwrap();
    let a = Airfoil::new(&m, Constants::<f64>::default()).unwrap();
    let res_args =
        [Arg::Indirect(a.x, a.pedge, 0, Access::Read), Arg::Indirect(a.q, a.pecell, 0, Access::Read), Arg::Indirect(a.res, a.pecell, 0, Access::Inc), Arg::Indirect(a.res, a.pecell, 1, Access::Inc)];
    let edges = a.app.increments("res_calc", a.edges, &res_args).unwrap();
    let res_base = edges[0][0] - m.edges[0].cells[0];
    let cells: Vec<Vec<u32>> = edges.iter().map(|t| t.iter().map(|c| c - res_base).collect()).collect();
    assert_eq!(cells, m.interior_cells());
    let bres = a.app.increments("bres_calc", a.bedges, &[Arg::Indirect(a.res, a.pbecell, 0, Access::Inc), Arg::Direct(a.bound, Access::Read)]).unwrap();
    assert!(bres.iter().zip(&m.bedges).all(|(t, b)| *t == vec![b.cell + res_base]));
    for (name, conflicts) in [("res_calc", &edges), ("bres_calc", &bres)] {
        let lambda = 9;
        let s = schedule::list(conflicts, lambda, 64);
        assert!(schedule::valid(&s, conflicts, lambda), "{name}: the list schedule breaks the hazard rule");
        assert_eq!(s.iter().flatten().count(), conflicts.len(), "{name}: every element scheduled once");
    }
    // A loop that increments nothing through a map has no conflicts.
    let update = a.app.increments("update", a.cells, &[Arg::Direct(a.res, Access::Rw)]).unwrap();
    assert!(update.iter().all(Vec::is_empty));
}
