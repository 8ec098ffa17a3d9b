//! A second mesh application, unlike Airfoil: Jacobi iterations for a graph Laplacian on an
//! unstructured graph (an edge loop that increments both end nodes through a map, a node loop
//! that updates and reduces the largest change with a global `Max`), run through the
//! application layer and held bit for bit to a direct implementation of the same arithmetic.

use weft_ip::app::{Access, App, Arg};
use weft_ip::weft_hdl::testbench::Rng;

/// A random connected graph: a ring of `n` nodes plus `extra` random chords, with weights.
fn graph(n: usize, extra: usize, seed: u64) -> (Vec<[u32; 2]>, Vec<f64>) {
    let mut rng = Rng::new(seed);
    let mut edges: Vec<[u32; 2]> = (0..n).map(|i| [i as u32, ((i + 1) % n) as u32]).collect();
    while edges.len() < n + extra {
        let (a, b) = (rng.below(n as u64) as u32, rng.below(n as u64) as u32);
        if a != b {
            edges.push([a, b]);
        }
    }
    let weights = (0..edges.len()).map(|_| 0.5 + rng.below(1000) as f64 / 1000.0).collect();
    (edges, weights)
}

/// Solves (D + L)·u = f by Jacobi: each sweep the edge loop adds w·u_other into both ends, the
/// node loop sets u = (f + Σ) / (1 + Σw) and keeps the largest change.
#[test]
fn jacobi_on_a_graph_matches_its_direct_implementation_bit_for_bit() {
    let (n, extra) = (500, 700);
    let (edges, weights) = graph(n, extra, 7);
    let mut rng = Rng::new(3);
    let f: Vec<f64> = (0..n).map(|_| rng.below(2001) as f64 / 1000.0 - 1.0).collect();
    let mut degree = vec![1.0; n];
    for (e, w) in edges.iter().zip(&weights) {
        degree[e[0] as usize] += w;
        degree[e[1] as usize] += w;
    }

    let mut a = App::new();
    let nodes = a.set("nodes", n);
    let edge_set = a.set("edges", edges.len());
    let ends = a.map("ends", edge_set, nodes, 2, edges.iter().flatten().copied().collect()).unwrap();
    let w = a.dat("w", edge_set, 1, weights.clone()).unwrap();
    let u = a.dat("u", nodes, 1, vec![0.0; n]).unwrap();
    let sum = a.dat("sum", nodes, 1, vec![0.0; n]).unwrap();
    let rhs = a.dat("f", nodes, 1, f.clone()).unwrap();
    let diag = a.dat("diag", nodes, 1, degree.clone()).unwrap();
    let change = a.global("change", vec![0.0]);

    let mut direct_u = vec![0.0f64; n];
    for sweep in 0..40 {
        let args = [
            Arg::Direct(w, Access::Read),
            Arg::Indirect(u, ends, 0, Access::Read),
            Arg::Indirect(u, ends, 1, Access::Read),
            Arg::Indirect(sum, ends, 0, Access::Inc),
            Arg::Indirect(sum, ends, 1, Access::Inc),
        ];
        a.par_loop("gather", edge_set, &args, &|b| {
            b[3][0] += b[0][0] * b[2][0];
            b[4][0] += b[0][0] * b[1][0];
        })
        .unwrap();
        a.set_global(change, &[0.0]);
        let args = [Arg::Direct(rhs, Access::Read), Arg::Direct(diag, Access::Read), Arg::Direct(sum, Access::Rw), Arg::Direct(u, Access::Rw), Arg::Global(change, Access::Max)];
        a.par_loop("update", nodes, &args, &|b| {
            let next = (b[0][0] + b[2][0]) / b[1][0];
            b[4][0] = (next - b[3][0]).abs();
            b[3][0] = next;
            b[2][0] = 0.0;
        })
        .unwrap();

        // The same sweep written directly.
        let mut acc = vec![0.0f64; n];
        for (e, wt) in edges.iter().zip(&weights) {
            let (p, q) = (e[0] as usize, e[1] as usize);
            acc[p] += wt * direct_u[q];
            acc[q] += wt * direct_u[p];
        }
        let mut largest = 0.0f64;
        for i in 0..n {
            let next = (f[i] + acc[i]) / degree[i];
            largest = largest.max((next - direct_u[i]).abs());
            direct_u[i] = next;
        }
        assert!(a.values(u).iter().zip(&direct_u).all(|(x, y)| x.to_bits() == y.to_bits()), "sweep {sweep}: u differs");
        assert_eq!(a.global_values(change)[0].to_bits(), largest.to_bits(), "sweep {sweep}: the largest change differs");
    }
    // Jacobi converges here (the matrix is strictly diagonally dominant): the change shrinks.
    assert!(a.global_values(change)[0] < 1e-3, "largest change after 40 sweeps: {}", a.global_values(change)[0]);
}
