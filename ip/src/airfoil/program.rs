//! Airfoil written as a mesh application ([`crate::app`]): the sets, maps and data OP2's
//! `airfoil.cpp` declares and its five parallel loops with their access descriptors, the
//! kernels being those of [`super::solver`].

use super::mesh::Mesh;
use super::solver::{adt_calc, flux, pressure_and_volume, Constants};
use crate::app::{Access, App, Arg, DatId, GlobalId, MapId, SetId};
use crate::Error;

/// Airfoil's declarations.
pub struct Airfoil {
    /// The application holding the sets, maps, data and global.
    pub app: App,
    /// Set `cells`.
    pub cells: SetId,
    /// Set `edges` (interior edges).
    pub edges: SetId,
    /// Set `bedges` (boundary edges).
    pub bedges: SetId,
    /// Map `pcell`: cells → nodes, dimension 4.
    pub pcell: MapId,
    /// Map `pedge`: edges → nodes, dimension 2.
    pub pedge: MapId,
    /// Map `pecell`: edges → cells, dimension 2.
    pub pecell: MapId,
    /// Map `pbedge`: boundary edges → nodes, dimension 2.
    pub pbedge: MapId,
    /// Map `pbecell`: boundary edges → cells, dimension 1.
    pub pbecell: MapId,
    /// Dat `p_x` on nodes: coordinates, 2 values.
    pub x: DatId,
    /// Dat `p_q` on cells: the flow state, 4 values.
    pub q: DatId,
    /// Dat `p_qold` on cells: the state saved by `save_soln`, 4 values.
    pub qold: DatId,
    /// Dat `p_adt` on cells: the time-step factor from `adt_calc`, 1 value.
    pub adt: DatId,
    /// Dat `p_res` on cells: the residual `res_calc` and `bres_calc` increment, 4 values.
    pub res: DatId,
    /// Dat `p_bound` on boundary edges: the boundary code (1 wall, 2 far field).
    pub bound: DatId,
    /// Global `rms`: the sum of squared updates that `update` reduces.
    pub rms: GlobalId,
    /// The flow constants the kernels use.
    pub constants: Constants,
}

impl Airfoil {
    /// The application on `mesh`, every cell at the free stream.
    pub fn new(mesh: &Mesh, constants: Constants) -> Result<Airfoil, Error> {
        let mut app = App::new();
        let nodes = app.set("nodes", mesh.x.len());
        let edges = app.set("edges", mesh.edges.len());
        let bedges = app.set("bedges", mesh.bedges.len());
        let cells = app.set("cells", mesh.cells.len());
        let pedge = app.map("pedge", edges, nodes, 2, mesh.edges.iter().flat_map(|e| e.nodes).collect())?;
        let pecell = app.map("pecell", edges, cells, 2, mesh.edges.iter().flat_map(|e| e.cells).collect())?;
        let pbedge = app.map("pbedge", bedges, nodes, 2, mesh.bedges.iter().flat_map(|b| b.nodes).collect())?;
        let pbecell = app.map("pbecell", bedges, cells, 1, mesh.bedges.iter().map(|b| b.cell).collect())?;
        let pcell = app.map("pcell", cells, nodes, 4, mesh.cells.iter().flatten().copied().collect())?;
        let n = mesh.cells.len();
        let bound = app.dat("p_bound", bedges, 1, mesh.bedges.iter().map(|b| b.bound as f64).collect())?;
        let x = app.dat("p_x", nodes, 2, mesh.x.iter().flatten().copied().collect())?;
        let q = app.dat("p_q", cells, 4, constants.qinf.repeat(n))?;
        let qold = app.dat("p_qold", cells, 4, vec![0.0; 4 * n])?;
        let adt = app.dat("p_adt", cells, 1, vec![0.0; n])?;
        let res = app.dat("p_res", cells, 4, vec![0.0; 4 * n])?;
        let rms = app.global("rms", vec![0.0]);
        Ok(Airfoil { app, cells, edges, bedges, pcell, pedge, pecell, pbedge, pbecell, x, q, qold, adt, res, bound, rms, constants })
    }

    /// One iteration: `save_soln`, then twice `adt_calc`, `res_calc`, `bres_calc` and `update`;
    /// returns `sqrt(rms / cells)` of the second `update`.
    pub fn iteration(&mut self) -> Result<f64, Error> {
        use Access::*;
        let c = self.constants;
        let a = &mut self.app;
        a.par_loop("save_soln", self.cells, &[Arg::Direct(self.q, Read), Arg::Direct(self.qold, Write)], &|b| {
            let q = b[0].clone();
            b[1].copy_from_slice(&q);
        })?;
        for _ in 0..2 {
            let corners: Vec<Arg> = (0..4).map(|i| Arg::Indirect(self.x, self.pcell, i, Read)).collect();
            let args = [corners[0], corners[1], corners[2], corners[3], Arg::Direct(self.q, Read), Arg::Direct(self.adt, Write)];
            a.par_loop("adt_calc", self.cells, &args, &|b| {
                let x = [0, 1, 2, 3].map(|i| [b[i][0], b[i][1]]);
                let q = [b[4][0], b[4][1], b[4][2], b[4][3]];
                b[5][0] = adt_calc(x, &q, &c);
            })?;
            let args = [
                Arg::Indirect(self.x, self.pedge, 0, Read),
                Arg::Indirect(self.x, self.pedge, 1, Read),
                Arg::Indirect(self.q, self.pecell, 0, Read),
                Arg::Indirect(self.q, self.pecell, 1, Read),
                Arg::Indirect(self.adt, self.pecell, 0, Read),
                Arg::Indirect(self.adt, self.pecell, 1, Read),
                Arg::Indirect(self.res, self.pecell, 0, Inc),
                Arg::Indirect(self.res, self.pecell, 1, Inc),
            ];
            a.par_loop("res_calc", self.edges, &args, &|b| {
                let (dx, dy) = (b[0][0] - b[1][0], b[0][1] - b[1][1]);
                let (q1, q2) = ([b[2][0], b[2][1], b[2][2], b[2][3]], [b[3][0], b[3][1], b[3][2], b[3][3]]);
                let mu = 0.5 * (b[4][0] + b[5][0]) * c.eps;
                let f = flux(&q1, &q2, dx, dy, mu, &c);
                for n in 0..4 {
                    b[6][n] += f[n];
                    b[7][n] -= f[n];
                }
            })?;
            let args = [
                Arg::Indirect(self.x, self.pbedge, 0, Read),
                Arg::Indirect(self.x, self.pbedge, 1, Read),
                Arg::Indirect(self.q, self.pbecell, 0, Read),
                Arg::Indirect(self.adt, self.pbecell, 0, Read),
                Arg::Indirect(self.res, self.pbecell, 0, Inc),
                Arg::Direct(self.bound, Read),
            ];
            a.par_loop("bres_calc", self.bedges, &args, &|b| {
                let (dx, dy) = (b[0][0] - b[1][0], b[0][1] - b[1][1]);
                let q1 = [b[2][0], b[2][1], b[2][2], b[2][3]];
                if b[5][0] == 1.0 {
                    let (p1, _) = pressure_and_volume(&q1, dx, dy, &c);
                    b[4][1] += p1 * dy;
                    b[4][2] += -p1 * dx;
                } else {
                    let f = flux(&q1, &c.qinf, dx, dy, b[3][0] * c.eps, &c);
                    for n in 0..4 {
                        b[4][n] += f[n];
                    }
                }
            })?;
            a.set_global(self.rms, &[0.0]);
            let args = [Arg::Direct(self.qold, Read), Arg::Direct(self.q, Write), Arg::Direct(self.res, Rw), Arg::Direct(self.adt, Read), Arg::Global(self.rms, Inc)];
            a.par_loop("update", self.cells, &args, &|b| {
                let adti = 1.0 / b[3][0];
                let mut local = 0.0;
                for n in 0..4 {
                    let del = adti * b[2][n];
                    b[1][n] = b[0][n] - del;
                    b[2][n] = 0.0;
                    local += del * del;
                }
                b[4][0] += local;
            })?;
        }
        let cells = self.app.values(self.adt).len();
        Ok((self.app.global_values(self.rms)[0] / cells as f64).sqrt())
    }
}
