//! The NACA0012 C-grid that OP2's Airfoil runs on, built the way OP2-Common's mesh generator
//! (`apps/mesh_generators/naca0012.m`) builds it, so no download is needed: the airfoil's upper
//! surface from the NACA0012 thickness formula at 100 points, mapped through `sqrt(z - 0.0077)`;
//! in that domain a `3I × J` rectangle whose bottom follows the airfoil between `-1` and `1`
//! (a not-a-knot cubic spline through the mapped surface), each column spaced evenly up to 3;
//! squared back to the physical plane. Nodes, cells, interior edges (a cut line behind the
//! trailing edge joins the two sides of the C) and boundary edges (1 on the airfoil, 2 on the
//! far field) are numbered as that generator numbers them, and the coordinates are rounded to
//! six decimals as its `new_grid.dat` holds them. `I = 400, J = 600` is the standard mesh of
//! 720,000 cells.

use super::mesh::{BoundaryEdge, Edge, Mesh};
use crate::Error;

/// `n` evenly spaced values from `a` to `b`, both included.
fn linspace(a: f64, b: f64, n: usize) -> Vec<f64> {
    (0..n).map(|k| if k + 1 == n { b } else { a + k as f64 * (b - a) / (n - 1) as f64 }).collect()
}

/// The principal square root of `re + i·im`.
fn csqrt(re: f64, im: f64) -> (f64, f64) {
    let r = re.hypot(im);
    let a = ((r + re) / 2.0).max(0.0).sqrt();
    let b = ((r - re) / 2.0).max(0.0).sqrt();
    (a, if im < 0.0 { -b } else { b })
}

/// The cubic spline through `(xs, ys)` (increasing `xs`, at least four points) with not-a-knot
/// ends, evaluated at `at`: the second derivatives solve a dense linear system (the curve has
/// 199 points, so elimination costs nothing).
fn spline(xs: &[f64], ys: &[f64], at: &[f64]) -> Vec<f64> {
    let n = xs.len();
    let h: Vec<f64> = (0..n - 1).map(|k| xs[k + 1] - xs[k]).collect();
    let mut a = vec![vec![0.0; n + 1]; n];
    // Not-a-knot: the third derivative is continuous at the second and the second-last point.
    a[0][0] = h[1];
    a[0][1] = -(h[0] + h[1]);
    a[0][2] = h[0];
    for k in 1..n - 1 {
        a[k][k - 1] = h[k - 1];
        a[k][k] = 2.0 * (h[k - 1] + h[k]);
        a[k][k + 1] = h[k];
        a[k][n] = 6.0 * ((ys[k + 1] - ys[k]) / h[k] - (ys[k] - ys[k - 1]) / h[k - 1]);
    }
    a[n - 1][n - 3] = h[n - 2];
    a[n - 1][n - 2] = -(h[n - 3] + h[n - 2]);
    a[n - 1][n - 1] = h[n - 3];
    // Gaussian elimination with partial pivoting.
    for c in 0..n {
        let p = (c..n).max_by(|&i, &j| a[i][c].abs().total_cmp(&a[j][c].abs())).unwrap();
        a.swap(c, p);
        for r in c + 1..n {
            let f = a[r][c] / a[c][c];
            if f != 0.0 {
                for k in c..=n {
                    a[r][k] -= f * a[c][k];
                }
            }
        }
    }
    let mut m = vec![0.0; n];
    for r in (0..n).rev() {
        let s: f64 = (r + 1..n).map(|k| a[r][k] * m[k]).sum();
        m[r] = (a[r][n] - s) / a[r][r];
    }
    at.iter()
        .map(|&t| {
            let k = xs.partition_point(|&x| x <= t).clamp(1, n - 1) - 1;
            let (u, w) = (xs[k + 1] - t, t - xs[k]);
            (m[k] * u.powi(3) + m[k + 1] * w.powi(3)) / (6.0 * h[k]) + (ys[k] / h[k] - m[k] * h[k] / 6.0) * u + (ys[k + 1] / h[k] - m[k + 1] * h[k] / 6.0) * w
        })
        .collect()
}

/// A value as `new_grid.dat` holds it: printed with six decimals and read back.
fn six_decimals(v: f64) -> f64 {
    format!("{v:.6}").parse().unwrap()
}

/// The C-grid of `3i × j` cells (`i` ≥ 2 cells along each half of the airfoil's chord, `j` ≥ 2
/// cells from the airfoil to the far field).
pub fn naca0012(i: usize, j: usize) -> Result<Mesh, Error> {
    if i < 2 || j < 2 {
        return Err(Error::Config(format!("naca0012: I = {i}, J = {j}: allowed I ≥ 2, J ≥ 2")));
    }
    // The upper surface, through the complex square root, mirrored into a curve from the lower
    // trailing edge round the nose to the upper one.
    let xs: Vec<f64> = linspace(0.0, std::f64::consts::FRAC_PI_2, 100).iter().map(|t| t.sin().powi(2)).collect();
    let mut ys: Vec<f64> = xs.iter().map(|&x| 0.594689181 * (0.298222773 * x.sqrt() - 0.127125232 * x - 0.357907906 * x.powi(2) + 0.291984971 * x.powi(3) - 0.105174696 * x.powi(4))).collect();
    *ys.last_mut().unwrap() = 0.0;
    let z: Vec<(f64, f64)> = xs.iter().zip(&ys).map(|(&x, &y)| csqrt(x - 0.0077, y)).collect();
    let curve: Vec<(f64, f64)> = z.iter().rev().map(|&(re, im)| (-re, im)).chain(z[1..].iter().copied()).collect();
    let (cx, cy): (Vec<f64>, Vec<f64>) = curve.into_iter().unzip();

    let (ni, nj) = (3 * i + 1, j + 1);
    let xb = linspace(-3.0, 3.0, ni);
    let mut yb = vec![0.0; ni];
    // MATLAB's yb(I+2:2*I): the points strictly inside the airfoil's span.
    let inside = spline(&cx, &cy, &xb[i + 1..2 * i]);
    yb[i + 1..2 * i].copy_from_slice(&inside);
    let node = |a: usize, b: usize| (a + b * ni) as u32;
    let mut x = vec![[0.0; 2]; ni * nj];
    for (a, (&xa, &ya)) in xb.iter().zip(&yb).enumerate() {
        for (b, yg) in linspace(ya, 3.0, nj).into_iter().enumerate() {
            // Squared back to the physical plane.
            x[node(a, b) as usize] = [six_decimals(xa * xa - yg * yg), six_decimals(2.0 * xa * yg)];
        }
    }
    let cell = |a: usize, b: usize| (a + b * 3 * i) as u32;
    let mut cells = Vec::with_capacity(3 * i * j);
    for b in 0..j {
        for a in 0..3 * i {
            cells.push([node(a, b), node(a + 1, b), node(a + 1, b + 1), node(a, b + 1)]);
        }
    }
    let mut edges = Vec::with_capacity((3 * i - 1) * j + 3 * i * (j - 1) + i);
    for b in 0..j {
        for a in 0..3 * i {
            if b == 0 && a < i {
                // The cut line behind the trailing edge: the two sides of the C meet here.
                edges.push(Edge { nodes: [node(a, b), node(a + 1, b)], cells: [cell(3 * i - 1 - a, b), cell(a, b)] });
            }
            if b + 1 < j {
                edges.push(Edge { nodes: [node(a, b + 1), node(a + 1, b + 1)], cells: [cell(a, b), cell(a, b + 1)] });
            }
            if a + 1 < 3 * i {
                edges.push(Edge { nodes: [node(a + 1, b), node(a + 1, b + 1)], cells: [cell(a + 1, b), cell(a, b)] });
            }
        }
    }
    let mut bedges = Vec::with_capacity(4 * i + 2 * j);
    for a in i..2 * i {
        bedges.push(BoundaryEdge { nodes: [node(a + 1, 0), node(a, 0)], cell: cell(a, 0), bound: 1 });
    }
    for b in 0..j {
        bedges.push(BoundaryEdge { nodes: [node(3 * i, b + 1), node(3 * i, b)], cell: cell(3 * i - 1, b), bound: 2 });
    }
    for a in (0..3 * i).rev() {
        bedges.push(BoundaryEdge { nodes: [node(a, j), node(a + 1, j)], cell: cell(a, j - 1), bound: 2 });
    }
    for b in (0..j).rev() {
        bedges.push(BoundaryEdge { nodes: [node(0, b), node(0, b + 1)], cell: cell(0, b), bound: 2 });
    }
    Ok(Mesh { x, cells, edges, bedges })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A natural test of the spline: a cubic is reproduced exactly by a not-a-knot spline.
    #[test]
    fn the_spline_reproduces_a_cubic() {
        let xs: Vec<f64> = (0..12).map(|k| (k as f64 * 0.37).powf(1.3)).collect();
        let f = |x: f64| 0.5 - 1.25 * x + 0.75 * x * x - 0.125 * x.powi(3);
        let ys: Vec<f64> = xs.iter().map(|&x| f(x)).collect();
        let at = [0.05, 0.9, 2.2, 3.3];
        for (t, v) in at.iter().zip(spline(&xs, &ys, &at)) {
            assert!((v - f(*t)).abs() < 1e-9, "{t}: {v} against {}", f(*t));
        }
    }
}
