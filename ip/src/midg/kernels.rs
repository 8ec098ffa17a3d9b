//! The C references (docs/contract.md) of MIDG2's two pointwise steps shipped as stream kernels,
//! `dg_surface_flux` and `dg_rk_update`, in binary32 (Rust's `f32`: IEEE 754 round to nearest
//! even, no fused multiply-add, each operation in the written order).

/// `dg_surface_flux`: the upwind Maxwell flux at one face node, 16 inputs `nx, ny, nz, fscale`,
/// the minus side's `Hx … Ez`, the plus side's `Hx … Ez` → `fHx, fHy, fHz, fEx, fEy, fEz`.
#[allow(non_snake_case)]
pub fn surface_flux(v: &[f32; 16]) -> [f32; 6] {
    let [nx, ny, nz, fscale, HxM, HyM, HzM, ExM, EyM, EzM, HxP, HyP, HzP, ExP, EyP, EzP] = *v;
    let (dHx, dHy, dHz) = (HxP - HxM, HyP - HyM, HzP - HzM);
    let (dEx, dEy, dEz) = (ExP - ExM, EyP - EyM, EzP - EzM);
    let ndotdH = nx * dHx + ny * dHy + nz * dHz;
    let ndotdE = nx * dEx + ny * dEy + nz * dEz;
    let h = 0.5f32 * fscale;
    [
        h * (-ny * dEz + nz * dEy + (dHx - ndotdH * nx)),
        h * (-nz * dEx + nx * dEz + (dHy - ndotdH * ny)),
        h * (-nx * dEy + ny * dEx + (dHz - ndotdH * nz)),
        h * (ny * dHz - nz * dHy + (dEx - ndotdE * nx)),
        h * (nz * dHx - nx * dHz + (dEy - ndotdE * ny)),
        h * (nx * dHy - ny * dHx + (dEz - ndotdE * nz)),
    ]
}

/// `dg_rk_update`: one low-storage Runge–Kutta stage of one value, `(q, res, rhs, a, b, dt)` →
/// `(q_new, res_new)` with `res_new = a·res + dt·rhs`, `q_new = q + b·res_new`.
pub fn rk_update(v: &[f32; 6]) -> [f32; 2] {
    let [q, res, rhs, a, b, dt] = *v;
    let res_new = a * res + dt * rhs;
    [q + b * res_new, res_new]
}
