//! The whole Airfoil application as OP2 runs it, in binary64 (OP2's `dp` build) or binary32 (its
//! `sp` build, every constant computed in binary32 too), in OP2's plain sequential order:
//! five parallel loops over cells, edges and boundary edges (`save_soln`; then twice
//! `adt_calc`, `res_calc`, `bres_calc`, `update`), the flow state `q` on cells, the residual
//! `res` incremented through the edge→cell map, and the global `rms` reduced by `update`. Every
//! loop visits its set in index order and every increment lands in that order, which is the
//! order OP2's sequential back end (and this reference) sums in. The kernels are OP2's
//! Airfoil kernels; the constants are its free-stream at Mach 0.4 and 3° incidence.

use num_traits::Float;

use super::mesh::Mesh;

/// OP2 Airfoil's constants: ratio of specific heats, CFL number, dissipation coefficient and
/// the free stream `qinf` (density, momentum x, momentum y, energy).
#[derive(Clone, Copy, Debug)]
pub struct Constants<T = f64> {
    /// Ratio of specific heats γ (1.4).
    pub gam: T,
    /// γ − 1.
    pub gm1: T,
    /// CFL number (0.9).
    pub cfl: T,
    /// Dissipation coefficient (0.05).
    pub eps: T,
    /// Free-stream state: density, momentum x, momentum y, energy.
    pub qinf: [T; 4],
}

/// `v` in the working precision (the literals of OP2's kernels).
fn k<T: Float>(v: f64) -> T {
    T::from(v).unwrap()
}

impl<T: Float> Default for Constants<T> {
    /// Mach 0.4, 3° incidence (OP2's `airfoil.cpp`; its `alpha` is not used by the kernels).
    fn default() -> Constants<T> {
        let (gam, mach, p, r) = (k::<T>(1.4), k::<T>(0.4), T::one(), T::one());
        let gm1 = gam - T::one();
        let u = (gam * p / r).sqrt() * mach;
        let e = p / (r * gm1) + k::<T>(0.5) * u * u;
        Constants { gam, gm1, cfl: k(0.9), eps: k(0.05), qinf: [r, r * u, T::zero(), r * e] }
    }
}

/// The state of a run: per cell `q`, `qold`, `adt` and `res`.
#[derive(Clone, Debug)]
pub struct State<T = f64> {
    /// Flow state per cell: density, momentum x, momentum y, energy.
    pub q: Vec<[T; 4]>,
    /// `q` as saved by `save_soln` at the start of the iteration.
    pub qold: Vec<[T; 4]>,
    /// Time-step factor per cell, from `adt_calc`.
    pub adt: Vec<T>,
    /// Residual per cell, accumulated by `res_calc` and `bres_calc`, cleared by `update`.
    pub res: Vec<[T; 4]>,
}

impl<T: Float> State<T> {
    /// Every cell at the free stream, as OP2's Airfoil starts.
    pub fn free_stream(mesh: &Mesh, c: &Constants<T>) -> State<T> {
        let n = mesh.cells.len();
        State { q: vec![c.qinf; n], qold: vec![[T::zero(); 4]; n], adt: vec![T::zero(); n], res: vec![[T::zero(); 4]; n] }
    }
}

/// `adt_calc`: the cell's time-step factor from its four sides.
pub fn adt_calc<T: Float>(x: [[T; 2]; 4], q: &[T; 4], c: &Constants<T>) -> T {
    let ri = T::one() / q[0];
    let u = ri * q[1];
    let v = ri * q[2];
    let sound = (c.gam * c.gm1 * (ri * q[3] - k::<T>(0.5) * (u * u + v * v))).sqrt();
    let mut adt = T::zero();
    for side in 0..4 {
        let (a, b) = (x[side], x[(side + 1) % 4]);
        let (dx, dy) = (b[0] - a[0], b[1] - a[1]);
        let term = (u * dy - v * dx).abs() + sound * (dx * dx + dy * dy).sqrt();
        adt = if side == 0 { term } else { adt + term };
    }
    adt / c.cfl
}

/// The flux terms shared by `res_calc` and `bres_calc`: pressure and volume flux of a state
/// across the face `(dx, dy)`.
pub(crate) fn pressure_and_volume<T: Float>(q: &[T; 4], dx: T, dy: T, c: &Constants<T>) -> (T, T) {
    let ri = T::one() / q[0];
    let p = c.gm1 * (q[3] - k::<T>(0.5) * ri * (q[1] * q[1] + q[2] * q[2]));
    (p, ri * (q[1] * dy - q[2] * dx))
}

/// The flux between two states across the face `(dx, dy)` with dissipation `mu`.
pub(crate) fn flux<T: Float>(q1: &[T; 4], q2: &[T; 4], dx: T, dy: T, mu: T, c: &Constants<T>) -> [T; 4] {
    let (p1, vol1) = pressure_and_volume(q1, dx, dy, c);
    let (p2, vol2) = pressure_and_volume(q2, dx, dy, c);
    let half = k::<T>(0.5);
    [
        half * (vol1 * q1[0] + vol2 * q2[0]) + mu * (q1[0] - q2[0]),
        half * (vol1 * q1[1] + p1 * dy + vol2 * q2[1] + p2 * dy) + mu * (q1[1] - q2[1]),
        half * (vol1 * q1[2] - p1 * dx + vol2 * q2[2] - p2 * dx) + mu * (q1[2] - q2[2]),
        half * (vol1 * (q1[3] + p1) + vol2 * (q2[3] + p2)) + mu * (q1[3] - q2[3]),
    ]
}

/// The order a compiled Airfoil program works in (see [`crate::app::plan`]): `res_calc` over
/// the interior edges and `bres_calc` over the boundary edges in their schedules' slots (no-ops
/// skipped), and `update`'s sum of `rms` in `lanes` interleaved partials (cell k into partial
/// k mod `lanes`, folded in order; [`crate::app::App::set_interleave`]).
#[derive(Clone, Copy, Debug)]
pub struct Order<'a> {
    /// `res_calc`'s slots in schedule order: an interior edge number, or `None` for a no-op.
    pub edges: &'a [Option<u32>],
    /// `bres_calc`'s slots in schedule order: a boundary edge number, or `None` for a no-op.
    pub bedges: &'a [Option<u32>],
    /// The number of interleaved partial sums of `rms` (1 = one sequential sum).
    pub lanes: usize,
}

/// One iteration of OP2's Airfoil (`save_soln`, then the predictor and the corrector); returns
/// `rms` as the program prints it: `sqrt(Σ del² / cells)` of the corrector's `update`. The
/// node coordinates are read in the working precision, as OP2 reads `new_grid.dat`.
pub fn iteration<T: Float>(mesh: &Mesh, s: &mut State<T>, c: &Constants<T>) -> T {
    let edges: Vec<Option<u32>> = (0..mesh.edges.len() as u32).map(Some).collect();
    let bedges: Vec<Option<u32>> = (0..mesh.bedges.len() as u32).map(Some).collect();
    run(mesh, s, c, &Order { edges: &edges, bedges: &bedges, lanes: 1 }, false)
}

/// [`iteration`] in a compiled program's order: the arithmetic of `examples/apps/airfoil.app`
/// on the compiled hardware (a wall edge adds +0 to the residual's density and energy, as the
/// file's `select` does).
pub fn iteration_in<T: Float>(mesh: &Mesh, s: &mut State<T>, c: &Constants<T>, order: &Order) -> T {
    run(mesh, s, c, order, true)
}

fn run<T: Float>(mesh: &Mesh, s: &mut State<T>, c: &Constants<T>, order: &Order, as_file: bool) -> T {
    let at = |n: u32| mesh.x[n as usize].map(|v| T::from(v).unwrap());
    s.qold.copy_from_slice(&s.q);
    let mut rms = T::zero();
    let lanes = order.lanes.max(1);
    for _ in 0..2 {
        for (i, cell) in mesh.cells.iter().enumerate() {
            s.adt[i] = adt_calc(cell.map(at), &s.q[i], c);
        }
        for e in order.edges.iter().flatten().map(|e| &mesh.edges[*e as usize]) {
            let (x1, x2) = (at(e.nodes[0]), at(e.nodes[1]));
            let [c1, c2] = e.cells.map(|i| i as usize);
            let mu = k::<T>(0.5) * (s.adt[c1] + s.adt[c2]) * c.eps;
            let f = flux(&s.q[c1], &s.q[c2], x1[0] - x2[0], x1[1] - x2[1], mu, c);
            for n in 0..4 {
                s.res[c1][n] = s.res[c1][n] + f[n];
                s.res[c2][n] = s.res[c2][n] - f[n];
            }
        }
        for b in order.bedges.iter().flatten().map(|b| &mesh.bedges[*b as usize]) {
            let (x1, x2) = (at(b.nodes[0]), at(b.nodes[1]));
            let (dx, dy) = (x1[0] - x2[0], x1[1] - x2[1]);
            let i = b.cell as usize;
            if b.bound == 1 {
                // A wall: only the pressure acts.
                let (p1, _) = pressure_and_volume(&s.q[i], dx, dy, c);
                s.res[i][1] = s.res[i][1] + p1 * dy;
                s.res[i][2] = s.res[i][2] + -p1 * dx;
                if as_file {
                    s.res[i][0] = s.res[i][0] + T::zero();
                    s.res[i][3] = s.res[i][3] + T::zero();
                }
            } else {
                let f = flux(&s.q[i], &c.qinf, dx, dy, s.adt[i] * c.eps, c);
                for n in 0..4 {
                    s.res[i][n] = s.res[i][n] + f[n];
                }
            }
        }
        let mut partials = vec![T::zero(); lanes];
        for i in 0..mesh.cells.len() {
            let adti = T::one() / s.adt[i];
            let mut local = T::zero();
            for n in 0..4 {
                let del = adti * s.res[i][n];
                s.q[i][n] = s.qold[i][n] - del;
                s.res[i][n] = T::zero();
                local = local + del * del;
            }
            partials[i % lanes] = partials[i % lanes] + local;
        }
        rms = partials.into_iter().fold(T::zero(), |acc, p| acc + p);
    }
    (rms / T::from(mesh.cells.len()).unwrap()).sqrt()
}
