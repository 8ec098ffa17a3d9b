//! Applications written as files: Airfoil (`examples/apps/airfoil.app`, all five loops, in
//! binary64) holds q, res, adt and rms bit for bit to Airfoil written with the Rust API, every
//! iteration, on OP2's NACA0012 C-grid; errors in a file name its line and column.

use weft_ip::airfoil::naca0012::naca0012;
use weft_ip::airfoil::program::Airfoil;
use weft_ip::airfoil::solver::Constants;
use weft_ip::app::{Application, Element, MeshData};

const AIRFOIL: &str = include_str!("../../examples/apps/airfoil.app");

/// One Airfoil iteration of the file's loops, as its program runs them.
fn one_iteration<T: Element>(file: &mut Application<T>) {
    file.run_loop("save_soln").unwrap();
    for _ in 0..2 {
        for l in ["adt_calc", "res_calc", "bres_calc"] {
            file.run_loop(l).unwrap();
        }
        file.set_global("rms", &[T::zero()]).unwrap();
        file.run_loop("update").unwrap();
    }
}

fn bits(v: &[f64]) -> Vec<u64> {
    v.iter().map(|x| x.to_bits()).collect()
}

#[test]
fn airfoil_file_matches_the_rust_api_bit_for_bit() {
    let mesh = naca0012(20, 30).unwrap();
    let mut file = Application::<f64>::load("examples/apps/airfoil.app", AIRFOIL, &mesh.data()).unwrap();
    let mut api = Airfoil::new(&mesh, Constants::default()).unwrap();
    let cells = mesh.cells.len();
    for iteration in 1..=10 {
        let rms = api.iteration().unwrap();
        one_iteration(&mut file);
        for (name, dat) in [("p_q", api.q), ("p_res", api.res), ("p_adt", api.adt), ("p_qold", api.qold)] {
            assert_eq!(bits(file.dat(name).unwrap()), bits(api.app.values(dat)), "iteration {iteration}: {name} differs");
        }
        let file_rms = (file.global("rms").unwrap()[0] / cells as f64).sqrt();
        assert_eq!(file_rms.to_bits(), rms.to_bits(), "iteration {iteration}: rms {file_rms:e} against {rms:e}");
    }
}

#[test]
fn airfoil_program_prints_what_the_rust_api_computes() {
    let mesh = naca0012(10, 12).unwrap();
    // The program of the file, shortened to 200 iterations.
    let source = AIRFOIL.replace("repeat 1000", "repeat 200");
    let mut file = Application::<f64>::load("airfoil.app", &source, &mesh.data()).unwrap();
    let mut printed = vec![];
    file.run(&mut |i, v| printed.push((i, v))).unwrap();
    let mut api = Airfoil::new(&mesh, Constants::default()).unwrap();
    let mut want = vec![];
    for i in 1..=200 {
        let rms = api.iteration().unwrap();
        if i % 100 == 0 {
            want.push((i, rms));
        }
    }
    assert_eq!(printed.iter().map(|(i, v)| (*i, v.to_bits())).collect::<Vec<_>>(), want.iter().map(|(i, v)| (*i, v.to_bits())).collect::<Vec<_>>());
}

#[test]
fn file_errors_name_line_and_column() {
    let mesh = naca0012(4, 6).unwrap();
    let cases = [
        ("dat p_adt: cells, 1", "dat p_adt: cels, 1", "line 31, column 12", "`cels` is not a declared set"),
        ("  adt = p_adt write", "  adt = p_adt wrote", "line 53, column 15", "unknown access `wrote`"),
        ("  let mu = adt1*eps", "  let mu = adt1*epss", "line 125, column 17", "epss"),
        ("  q[3] = qold[3] - del3", "  q[4] = qold[3] - del3", "line 153, column 3", "index 4 is outside 0..4"),
        ("  qold = p_qold write", "  qold = p_qold read", "line 40, column 3", "read-only"),
    ];
    for (from, to, at, says) in cases {
        assert!(AIRFOIL.contains(from), "the example no longer has `{from}`");
        let err = Application::<f64>::load("airfoil.app", &AIRFOIL.replacen(from, to, 1), &mesh.data()).err().unwrap_or_else(|| panic!("`{to}` was accepted")).to_string();
        assert!(err.starts_with(&format!("airfoil.app: {at}:")) && err.contains(says), "`{to}`: {err}");
    }
    let err = Application::<f32>::load("airfoil.app", AIRFOIL, &mesh.data()).err().unwrap().to_string();
    assert!(err.contains("the application is f64, run as f32"), "{err}");
    let err = Application::<f64>::load("airfoil.app", AIRFOIL, &MeshData::default()).err().unwrap().to_string();
    assert!(err.contains("line 7, column 5") && err.contains("the mesh has no set `nodes`"), "{err}");
}

/// The same file in binary32 holds every iteration's rms and state bit for bit to the solver
/// written directly in `f32`.
#[test]
fn airfoil_file_in_binary32_matches_the_f32_solver() {
    use weft_ip::airfoil::solver::{iteration, State};
    let mesh = naca0012(12, 16).unwrap();
    let mut file = Application::<f32>::load_as("airfoil.app", AIRFOIL, &mesh.data()).unwrap();
    let c = Constants::<f32>::default();
    let mut s = State::free_stream(&mesh, &c);
    let cells = mesh.cells.len();
    for i in 1..=10 {
        let rms = iteration(&mesh, &mut s, &c);
        one_iteration(&mut file);
        let q: Vec<u32> = s.q.iter().flatten().map(|x| x.to_bits()).collect();
        assert_eq!(file.dat("p_q").unwrap().iter().map(|x| x.to_bits()).collect::<Vec<_>>(), q, "iteration {i}: q differs");
        let file_rms = (file.global("rms").unwrap()[0] / cells as f32).sqrt();
        assert_eq!(file_rms.to_bits(), rms.to_bits(), "iteration {i}: rms");
    }
}

/// A second application, unlike Airfoil, only as a file: Jacobi sweeps on a random graph, held
/// bit for bit to the same sweeps written directly (the degree, then per sweep the edge sums and
/// the update with the largest change).
#[test]
fn jacobi_file_matches_its_direct_implementation() {
    let source = include_str!("../../examples/apps/jacobi.app");
    let mesh = weft_ip::app::graph::graph(300, 400, 5);
    let mut file = Application::<f64>::load("examples/apps/jacobi.app", source, &mesh).unwrap();
    let mut printed = vec![];
    file.run(&mut |i, v| printed.push((i, v))).unwrap();

    let ends = &mesh.maps["ends"].1;
    let (w, f) = (&mesh.dats["w"].1, &mesh.dats["f"].1);
    let n = f.len();
    let mut diag = vec![1.0f64; n];
    for (e, we) in w.iter().enumerate() {
        diag[ends[2 * e] as usize] += we;
        diag[ends[2 * e + 1] as usize] += we;
    }
    let mut u = vec![0.0f64; n];
    let mut want = vec![];
    for sweep in 1..=40 {
        let mut sum = vec![0.0f64; n];
        for (e, we) in w.iter().enumerate() {
            let (a, b) = (ends[2 * e] as usize, ends[2 * e + 1] as usize);
            sum[a] += we * u[b];
            sum[b] += we * u[a];
        }
        let mut largest = 0.0f64;
        for i in 0..n {
            let next = (f[i] + sum[i]) / diag[i];
            largest = largest.max((next - u[i]).abs());
            u[i] = next;
        }
        if sweep % 10 == 0 {
            want.push((sweep, largest.to_bits()));
        }
    }
    assert_eq!(file.dat("u").unwrap().iter().map(|x| x.to_bits()).collect::<Vec<_>>(), u.iter().map(|x| x.to_bits()).collect::<Vec<_>>());
    assert_eq!(printed.iter().map(|(i, v)| (*i, v.to_bits())).collect::<Vec<_>>(), want);
    assert!(f64::from_bits(want.last().unwrap().1) < 1e-6, "Jacobi converges on this diagonally dominant system");
}

/// The schedule-order reference: `res_calc` of the file, in binary32, issued in weft's list
/// schedule (λ = 6) of the increments the file's access descriptors imply, equals the C-semantics
/// reference the Airfoil accelerator is held to, applied over the same schedule — and differs
/// from the sequential order, so the order is really the schedule's.
#[test]
fn res_calc_in_schedule_order_matches_the_accelerator_reference() {
    use weft_ip::airfoil::reference;
    use weft_ip::app::schedule;
    let mesh = naca0012(12, 16).unwrap();
    let fields = reference::Fields::seeded(&mesh, 9);
    let mut file = Application::<f32>::load_as("airfoil.app", AIRFOIL, &mesh.data()).unwrap();
    let cells = file.increments("res_calc").unwrap();
    // Numbered across the application's data: p_res's cells start at some base.
    let base = cells[0][0] - mesh.edges[0].cells[0];
    assert!(cells.iter().zip(&mesh.edges).all(|(c, e)| *c == e.cells.map(|x| x + base).to_vec()), "res_calc increments the edge's two cells");
    let order = schedule::list(&cells, 6, 64);
    assert!(schedule::valid(&order, &cells, 6) && schedule::noops(&order) > 0);
    let flat = |v: &[[f32; 4]]| v.iter().flatten().copied().collect::<Vec<f32>>();
    file.set_dat("p_q", &flat(&fields.q)).unwrap();
    file.set_dat("p_adt", &fields.adt).unwrap();
    file.set_dat("p_res", &flat(&fields.res)).unwrap();
    let mut sequential = Application::<f32>::load_as("airfoil.app", AIRFOIL, &mesh.data()).unwrap();
    for (name, values) in [("p_q", flat(&fields.q)), ("p_adt", fields.adt.clone()), ("p_res", flat(&fields.res))] {
        sequential.set_dat(name, &values).unwrap();
    }
    file.run_loop_in("res_calc", &order).unwrap();
    sequential.run_loop("res_calc").unwrap();
    let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(file.dat("p_res").unwrap()), bits(&flat(&reference::run(&mesh, &fields, &order))));
    assert_ne!(bits(file.dat("p_res").unwrap()), bits(sequential.dat("p_res").unwrap()), "the schedule's order changes the sums");
    // An order that visits an edge twice is refused.
    let mut twice = order.clone();
    let first = twice.iter().flatten().next().copied();
    twice.push(first);
    let err = file.run_loop_in("res_calc", &twice).unwrap_err().to_string();
    assert!(err.contains("visits element") && err.contains("twice"), "{err}");
}
