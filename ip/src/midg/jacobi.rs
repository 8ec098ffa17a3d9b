//! Orthonormal Jacobi polynomials on [−1, 1] and the Gauss–Lobatto–Legendre points: the 1-D
//! building blocks of the simplex bases and of the Warp & Blend nodes.

/// `P_n^{(α,β)}(x)`, normalised so that `∫ P_n² (1−x)^α (1+x)^β dx = 1` over [−1, 1], by the
/// three-term recurrence.
pub fn jacobi(x: f64, alpha: f64, beta: f64, n: usize) -> f64 {
    let ab = alpha + beta;
    let gamma0 = 2f64.powf(ab + 1.0) / (ab + 1.0) * gamma(alpha + 1.0) * gamma(beta + 1.0) / gamma(ab + 1.0);
    let p0 = 1.0 / gamma0.sqrt();
    if n == 0 {
        return p0;
    }
    let gamma1 = (alpha + 1.0) * (beta + 1.0) / (ab + 3.0) * gamma0;
    let p1 = ((ab + 2.0) * x / 2.0 + (alpha - beta) / 2.0) / gamma1.sqrt();
    if n == 1 {
        return p1;
    }
    let (mut prev, mut cur) = (p0, p1);
    let mut aold = 2.0 / (2.0 + ab) * ((alpha + 1.0) * (beta + 1.0) / (ab + 3.0)).sqrt();
    for i in 1..n {
        let i = i as f64;
        let h1 = 2.0 * i + ab;
        let anew = 2.0 / (h1 + 2.0) * ((i + 1.0) * (i + 1.0 + ab) * (i + 1.0 + alpha) * (i + 1.0 + beta) / (h1 + 1.0) / (h1 + 3.0)).sqrt();
        let bnew = -(alpha * alpha - beta * beta) / h1 / (h1 + 2.0);
        let next = (-aold * prev + (x - bnew) * cur) / anew;
        aold = anew;
        prev = cur;
        cur = next;
    }
    cur
}

/// `d/dx P_n^{(α,β)}(x)` of the normalised polynomial.
pub fn jacobi_grad(x: f64, alpha: f64, beta: f64, n: usize) -> f64 {
    if n == 0 {
        0.0
    } else {
        let n = n as f64;
        (n * (n + alpha + beta + 1.0)).sqrt() * jacobi(x, alpha + 1.0, beta + 1.0, n as usize - 1)
    }
}

/// Γ(x) for the arguments the bases use: positive integers and half-integers.
fn gamma(x: f64) -> f64 {
    if x == 0.5 {
        return std::f64::consts::PI.sqrt();
    }
    if x == 1.0 {
        return 1.0;
    }
    assert!(x > 0.0 && (2.0 * x).fract() == 0.0, "Γ({x}): only positive integers and half-integers");
    (x - 1.0) * gamma(x - 1.0)
}

/// The `n + 1` Gauss–Lobatto–Legendre points, ascending: ±1 and the roots of `P_n'` (Newton's
/// method from the Chebyshev–Gauss–Lobatto points).
pub fn gauss_lobatto(n: usize) -> Vec<f64> {
    assert!(n >= 1, "Gauss–Lobatto points need n ≥ 1");
    (0..=n)
        .map(|i| {
            if i == 0 {
                return -1.0;
            }
            if i == n {
                return 1.0;
            }
            let mut x = -(std::f64::consts::PI * i as f64 / n as f64).cos();
            for _ in 0..100 {
                // Roots of P_n' are the roots of P_{n−1}^{(1,1)}.
                let (f, df) = (jacobi(x, 1.0, 1.0, n - 1), jacobi_grad(x, 1.0, 1.0, n - 1));
                let step = f / df;
                x -= step;
                if step.abs() < 1e-16 {
                    break;
                }
            }
            x
        })
        .collect()
}
