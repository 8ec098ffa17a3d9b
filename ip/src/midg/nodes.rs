//! Warp & Blend interpolation nodes on the reference tetrahedron (Hesthaven & Warburton, *Nodal
//! Discontinuous Galerkin Methods*, §10.1): equidistant nodes of the equilateral tetrahedron,
//! each face's edges warped toward the Gauss–Lobatto points and the warp blended into the
//! interior, with the optimised blending parameter α of each order.

use super::jacobi::gauss_lobatto;

/// The reference tetrahedron's coordinates (r, s, t) of one node; its vertices are
/// (−1,−1,−1), (1,−1,−1), (−1,1,−1), (−1,−1,1).
pub type Rst = [f64; 3];

/// Nodes of an order-`n` element: (n+1)(n+2)(n+3)/6.
pub fn count(n: usize) -> usize {
    (n + 1) * (n + 2) * (n + 3) / 6
}

/// Nodes of one face of an order-`n` element: (n+1)(n+2)/2.
pub fn face_count(n: usize) -> usize {
    (n + 1) * (n + 2) / 2
}

/// The optimised blending parameter α for orders 1–15 (Hesthaven & Warburton, Table 10.2).
const ALPHA: [f64; 15] = [0.0, 0.0, 0.0, 0.1002, 1.1332, 1.5608, 1.3413, 1.2577, 1.1603, 1.10153, 0.6080, 0.4523, 0.8856, 0.8717, 0.9655];

/// The equilateral tetrahedron's vertices.
fn vertices() -> [[f64; 3]; 4] {
    let (s3, s6) = (3f64.sqrt(), 6f64.sqrt());
    [[-1.0, -1.0 / s3, -1.0 / s6], [1.0, -1.0 / s3, -1.0 / s6], [0.0, 2.0 / s3, -1.0 / s6], [0.0, 0.0, 3.0 / s6]]
}

/// The 1-D warp: how far the equidistant point `x` of an edge moves to become a Gauss–Lobatto
/// point, interpolated.
fn warp(n: usize, gauss: &[f64], x: f64) -> f64 {
    let eq: Vec<f64> = (0..=n).map(|i| -1.0 + 2.0 * (n - i) as f64 / n as f64).collect();
    let mut w = 0.0;
    for i in 0..=n {
        let mut d = gauss[i] - eq[i];
        for j in 1..n {
            if i != j {
                d *= (x - eq[j]) / (eq[i] - eq[j]);
            }
        }
        if i != 0 {
            d = -d / (eq[i] - eq[0]);
        }
        if i != n {
            d /= eq[i] - eq[n];
        }
        w += d;
    }
    w
}

/// The shift in a face's plane of a node with barycentric coordinates `l` (of the face's three
/// vertices): each edge's warp blended over the face.
fn face_shift(n: usize, alpha: f64, gauss: &[f64], l: [f64; 3]) -> (f64, f64) {
    let [l1, l2, l3] = l;
    let w1 = l2 * l3 * 4.0 * warp(n, gauss, l3 - l2) * (1.0 + (alpha * l1).powi(2));
    let w2 = l1 * l3 * 4.0 * warp(n, gauss, l1 - l3) * (1.0 + (alpha * l2).powi(2));
    let w3 = l1 * l2 * 4.0 * warp(n, gauss, l2 - l1) * (1.0 + (alpha * l3).powi(2));
    let (c2, s2) = ((2.0 * std::f64::consts::PI / 3.0).cos(), (2.0 * std::f64::consts::PI / 3.0).sin());
    let (c4, s4) = ((4.0 * std::f64::consts::PI / 3.0).cos(), (4.0 * std::f64::consts::PI / 3.0).sin());
    (w1 + c2 * w2 + c4 * w3, s2 * w2 + s4 * w3)
}

/// The order-`n` Warp & Blend nodes (1 ≤ n ≤ 15) in the reference tetrahedron, ordered as
/// MIDG2 orders them: t slowest, then s, then r.
pub fn warp_blend(n: usize) -> Vec<Rst> {
    assert!((1..=15).contains(&n), "order {n}: Warp & Blend nodes are tabulated for 1 ..= 15");
    let alpha = ALPHA[n - 1];
    // The Gauss–Lobatto points descending, as the equidistant points of `warp` run.
    let gauss: Vec<f64> = gauss_lobatto(n).iter().map(|x| -x).collect();
    let v = vertices();
    let sub = |a: [f64; 3], b: [f64; 3]| [a[0] - b[0], a[1] - b[1], a[2] - b[2]];
    let unit = |a: [f64; 3]| {
        let l = (a[0] * a[0] + a[1] * a[1] + a[2] * a[2]).sqrt();
        [a[0] / l, a[1] / l, a[2] / l]
    };
    let mid = |a: [f64; 3], b: [f64; 3]| [(a[0] + b[0]) / 2.0, (a[1] + b[1]) / 2.0, (a[2] + b[2]) / 2.0];
    let t1 = [sub(v[1], v[0]), sub(v[1], v[0]), sub(v[2], v[1]), sub(v[2], v[0])].map(unit);
    let t2 = [sub(v[2], mid(v[0], v[1])), sub(v[3], mid(v[0], v[1])), sub(v[3], mid(v[1], v[2])), sub(v[3], mid(v[0], v[2]))].map(unit);
    let tol = 1e-10;
    let mut out = vec![];
    for k in 0..=n {
        for j in 0..=n - k {
            for i in 0..=n - k - j {
                let (r, s, t) = (-1.0 + 2.0 * i as f64 / n as f64, -1.0 + 2.0 * j as f64 / n as f64, -1.0 + 2.0 * k as f64 / n as f64);
                let (l1, l2, l3, l4) = ((1.0 + t) / 2.0, (1.0 + s) / 2.0, -(1.0 + r + s + t) / 2.0, (1.0 + r) / 2.0);
                let mut xyz = [0.0; 3];
                for d in 0..3 {
                    xyz[d] = l3 * v[0][d] + l4 * v[1][d] + l2 * v[2][d] + l1 * v[3][d];
                }
                let mut shift = [0.0; 3];
                for face in 0..4 {
                    let (la, lb, lc, ld) = match face {
                        0 => (l1, l2, l3, l4),
                        1 => (l2, l1, l3, l4),
                        2 => (l3, l1, l4, l2),
                        _ => (l4, l1, l3, l2),
                    };
                    let (w1, w2) = face_shift(n, alpha, &gauss, [lb, lc, ld]);
                    let mut blend = lb * lc * ld;
                    let denom = (lb + 0.5 * la) * (lc + 0.5 * la) * (ld + 0.5 * la);
                    if denom > tol {
                        blend *= (1.0 + (alpha * la).powi(2)) / denom;
                    }
                    let on_face = la < tol && ((lb > tol) as u8 + (lc > tol) as u8 + (ld > tol) as u8) < 3;
                    for d in 0..3 {
                        let s = w1 * t1[face][d] + w2 * t2[face][d];
                        if on_face {
                            shift[d] = s;
                        } else {
                            shift[d] += blend * s;
                        }
                    }
                }
                for d in 0..3 {
                    xyz[d] += shift[d];
                }
                out.push(to_rst(xyz));
            }
        }
    }
    out
}

/// A point of the equilateral tetrahedron in the reference coordinates (r, s, t).
fn to_rst(xyz: [f64; 3]) -> Rst {
    let v = vertices();
    let mut rhs = [0.0; 3];
    let mut a = nalgebra::Matrix3::zeros();
    for d in 0..3 {
        rhs[d] = xyz[d] - 0.5 * (v[1][d] + v[2][d] + v[3][d] - v[0][d]);
        for c in 0..3 {
            a[(d, c)] = 0.5 * (v[c + 1][d] - v[0][d]);
        }
    }
    let x = a.lu().solve(&nalgebra::Vector3::from(rhs)).expect("the tetrahedron's edges are independent");
    [x[0], x[1], x[2]]
}
