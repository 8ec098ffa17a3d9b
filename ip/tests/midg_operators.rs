//! MIDG2's reference element against its defining properties, each checked with an independent
//! reference: the Gauss–Lobatto points' closed forms, monomials differentiated by hand, and
//! integrals by a collapsed Gauss–Legendre rule that knows nothing of the nodes or the basis.

use weft_ip::midg::jacobi::{gauss_lobatto, jacobi, jacobi_grad};
use weft_ip::midg::nodes::{count, face_count, warp_blend};
use weft_ip::midg::Operators;

/// Gauss–Legendre points and weights on [−1, 1], `m` of them (exact to degree 2m − 1).
fn gauss_legendre(m: usize) -> Vec<(f64, f64)> {
    let norm = ((2 * m + 1) as f64 / 2.0).sqrt();
    (0..m)
        .map(|i| {
            let mut x = -(std::f64::consts::PI * (i as f64 + 0.75) / (m as f64 + 0.5)).cos();
            for _ in 0..100 {
                x -= jacobi(x, 0.0, 0.0, m) / jacobi_grad(x, 0.0, 0.0, m);
            }
            let dp = jacobi_grad(x, 0.0, 0.0, m) / norm;
            (x, 2.0 / ((1.0 - x * x) * dp * dp))
        })
        .collect()
}

/// ∫ f over the reference tetrahedron, collapsed coordinates, 10 points a direction.
fn over_tet(f: &dyn Fn(f64, f64, f64) -> f64) -> f64 {
    let g = gauss_legendre(10);
    let mut sum = 0.0;
    for &(a, wa) in &g {
        for &(b, wb) in &g {
            for &(c, wc) in &g {
                let t = c;
                let s = (1.0 + b) * (1.0 - c) / 2.0 - 1.0;
                let r = (1.0 + a) * (-s - t) / 2.0 - 1.0;
                // dr ds dt = (−s−t)/2 · (1−c)/2 da db dc, with −s−t = (1−b)(1−c)/2.
                let jac = (1.0 - b) * (1.0 - c) / 4.0 * (1.0 - c) / 2.0;
                sum += wa * wb * wc * jac * f(r, s, t);
            }
        }
    }
    sum
}

/// ∫ f over the reference triangle (−1,−1), (1,−1), (−1,1).
fn over_triangle(f: &dyn Fn(f64, f64) -> f64) -> f64 {
    let g = gauss_legendre(10);
    let mut sum = 0.0;
    for &(a, wa) in &g {
        for &(b, wb) in &g {
            let r = (1.0 + a) * (1.0 - b) / 2.0 - 1.0;
            sum += wa * wb * (1.0 - b) / 2.0 * f(r, b);
        }
    }
    sum
}

/// Every monomial r^a s^b t^c of degree ≤ n.
fn monomials(n: usize) -> Vec<[i32; 3]> {
    let mut out = vec![];
    for a in 0..=n as i32 {
        for b in 0..=n as i32 - a {
            for c in 0..=n as i32 - a - b {
                out.push([a, b, c]);
            }
        }
    }
    out
}

fn mono(e: [i32; 3], p: [f64; 3]) -> f64 {
    p[0].powi(e[0]) * p[1].powi(e[1]) * p[2].powi(e[2])
}

#[test]
fn gauss_lobatto_points_are_the_closed_forms() {
    let want: [&[f64]; 4] = [&[-1.0, 1.0], &[-1.0, 0.0, 1.0], &[-1.0, -(0.2f64.sqrt()), 0.2f64.sqrt(), 1.0], &[-1.0, -(3.0f64 / 7.0).sqrt(), 0.0, (3.0f64 / 7.0).sqrt(), 1.0]];
    for (n, w) in want.iter().enumerate() {
        let got = gauss_lobatto(n + 1);
        assert!(got.iter().zip(w.iter()).all(|(a, b)| (a - b).abs() < 1e-14), "order {}: {got:?}", n + 1);
    }
}

#[test]
fn warp_blend_nodes_lie_where_the_construction_puts_them() {
    for n in 1..=4 {
        let nodes = warp_blend(n);
        assert_eq!(nodes.len(), count(n));
        // Inside the tetrahedron.
        assert!(nodes.iter().all(|p| p.iter().all(|x| *x >= -1.0 - 1e-12) && p[0] + p[1] + p[2] <= -1.0 + 1e-12), "order {n}: a node outside");
        // The four vertices.
        for v in [[-1.0, -1.0, -1.0], [1.0, -1.0, -1.0], [-1.0, 1.0, -1.0], [-1.0, -1.0, 1.0]] {
            assert!(nodes.iter().any(|p| (0..3).all(|d| (p[d] - v[d]).abs() < 1e-12)), "order {n}: vertex {v:?} missing");
        }
        // Along every edge, the Gauss–Lobatto points.
        let gll = gauss_lobatto(n);
        let mut edge: Vec<f64> = nodes.iter().filter(|p| (p[1] + 1.0).abs() < 1e-10 && (p[2] + 1.0).abs() < 1e-10).map(|p| p[0]).collect();
        edge.sort_by(f64::total_cmp);
        assert_eq!(edge.len(), n + 1);
        assert!(edge.iter().zip(&gll).all(|(a, b)| (a - b).abs() < 1e-12), "order {n}: edge r = {edge:?}, Gauss–Lobatto {gll:?}");
    }
}

#[test]
fn derivative_matrices_are_exact_on_polynomials_of_degree_n() {
    for n in 1..=4 {
        let op = Operators::new(n);
        for e in monomials(n) {
            let u: Vec<f64> = op.nodes.iter().map(|p| mono(e, *p)).collect();
            for (c, d) in [&op.dr, &op.ds, &op.dt].iter().enumerate() {
                let mut de = e;
                let k = de[c] as f64;
                de[c] -= 1;
                for (i, p) in op.nodes.iter().enumerate() {
                    let want = if k == 0.0 { 0.0 } else { k * mono(de, *p) };
                    let got: f64 = (0..op.np()).map(|j| d[(i, j)] * u[j]).sum();
                    assert!((got - want).abs() < 1e-10, "order {n}: d/d{} of r^{}s^{}t^{} at node {i}: {got} against {want}", ["r", "s", "t"][c], e[0], e[1], e[2]);
                }
            }
        }
    }
}

#[test]
fn the_mass_matrix_integrates_products_exactly() {
    for n in 1..=4 {
        let op = Operators::new(n);
        let m = op.mass();
        let ms = monomials(n);
        for p in &ms {
            for q in &ms {
                let (up, uq): (Vec<f64>, Vec<f64>) = (op.nodes.iter().map(|x| mono(*p, *x)).collect(), op.nodes.iter().map(|x| mono(*q, *x)).collect());
                let got: f64 = (0..op.np()).flat_map(|i| (0..op.np()).map(move |j| (i, j))).map(|(i, j)| up[i] * m[(i, j)] * uq[j]).sum();
                let want = over_tet(&|r, s, t| mono(*p, [r, s, t]) * mono(*q, [r, s, t]));
                assert!((got - want).abs() < 1e-11, "order {n}: ∫ {p:?}·{q:?} = {got}, quadrature {want}");
            }
        }
    }
}

#[test]
fn lift_is_the_inverse_mass_matrix_times_the_face_mass_matrices() {
    for n in 1..=4 {
        let op = Operators::new(n);
        let (np, nfp) = (op.np(), op.nfp());
        assert_eq!(nfp, face_count(n));
        let ml = op.mass() * &op.lift;
        for f in 0..4 {
            // The face as MIDG2 parametrises it, and the element's point at (u, v).
            let point = |u: f64, v: f64| match f {
                0 => [u, v, -1.0],
                1 => [u, -1.0, v],
                2 => [-1.0 - u - v, u, v],
                _ => [-1.0, u, v],
            };
            let param = |p: [f64; 3]| match f {
                0 => (p[0], p[1]),
                1 => (p[0], p[2]),
                _ => (p[1], p[2]),
            };
            for p in monomials(n) {
                for g in monomials(n).into_iter().filter(|g| g[2] == 0) {
                    let up: Vec<f64> = op.nodes.iter().map(|x| mono(p, *x)).collect();
                    let ug: Vec<f64> = op.fmask[f]
                        .iter()
                        .map(|&i| {
                            let (u, v) = param(op.nodes[i]);
                            u.powi(g[0]) * v.powi(g[1])
                        })
                        .collect();
                    let got: f64 = (0..np).map(|i| up[i] * (0..nfp).map(|j| ml[(i, f * nfp + j)] * ug[j]).sum::<f64>()).sum();
                    let want = over_triangle(&|u, v| mono(p, point(u, v)) * u.powi(g[0]) * v.powi(g[1]));
                    assert!((got - want).abs() < 1e-11, "order {n}, face {}: ∫ {p:?}·{g:?} = {got}, quadrature {want}", f + 1);
                }
            }
        }
    }
}

#[test]
fn binary32_operators_differentiate_within_single_precision() {
    let op = Operators::new(3);
    let r = op.to_f32();
    let np = op.np();
    for e in monomials(3) {
        let u: Vec<f32> = op.nodes.iter().map(|p| mono(e, *p) as f32).collect();
        for i in 0..np {
            let got: f32 = (0..np).map(|j| r.dr[i * np + j] * u[j]).sum();
            let want = if e[0] == 0 { 0.0 } else { e[0] as f64 * mono([e[0] - 1, e[1], e[2]], op.nodes[i]) };
            assert!((got as f64 - want).abs() < 1e-4, "d/dr of {e:?} at node {i}: {got} against {want}");
        }
    }
}
