//! The distributed DG step of [`weft_ip::dg`] on a torus of generated nodes: each stage, every
//! node's host sends the field values its neighbours need (its halo, [`Partition::halo`]) as
//! packets into its port 0, over the fabric, and takes the values it needs from the packets
//! arriving on its port 0; then each node's face nodes go through its own instance of the
//! generated `dg_surface_flux` RTL and its node values through its own `dg_rk_update` (Verilator
//! models, one of each per node, fed one beat a cycle). The volume term and the lift are host
//! software ([`weft_ip::dg::model::volume`], [`weft_ip::dg::model::lift`]).
//!
//! Halo packets: tag [`HALO_TAG`], `user = stage << 8 | chunk`, payload the six fields of each
//! entry in the halo's order, at most `max_packet_bytes / 24` entries a packet. The receiver
//! places a packet by its header's source coordinates, stage and chunk: nothing but the bits
//! that came through the fabric gives the plus side of a boundary face.

use crate::Error;
use std::path::Path;

use weft_ip::dg::mesh::{Mesh, FACES, FACE_NODES, FIELDS, VERTICES};
use weft_ip::dg::model::{flux_inputs, initial, lift, time_step, volume, Nodes, RK4A, RK4B};
use weft_ip::dg::{Partition, Plus, PARTS};
use weft_ip::kernels::lanes_to_data;
use weft_ip::weft_hdl::stream::Beat;

use super::exchange::Message;
use super::Torus;
use crate::cosim::{AxisPorts, AxisSink, AxisSource, Model};
use crate::link::Device;

/// The tag of halo packets.
pub const HALO_TAG: u16 = 0xD6;
/// The IntraNode port the hosts use.
pub const HALO_PORT: usize = 0;

/// A Verilator model of a generated kernel, fed one beat per input vector.
pub struct KernelModel {
    model: Model,
    lanes_out: usize,
    /// Cycles the model has run.
    pub cycles: u64,
}

impl KernelModel {
    /// Builds `top` from `file` (a generated kernel with `s_axis`/`m_axis`), held in reset 2 cycles.
    pub fn build(file: &Path, top: &str, lanes_out: usize) -> Result<KernelModel, Error> {
        let mut model = Model::build(file, top).map_err(|e| Error::from(e).context(file.display()))?;
        let rst = model.port("rst")?;
        model.set(rst, 1);
        model.tick();
        model.tick();
        model.set(rst, 0);
        Ok(KernelModel { model, lanes_out, cycles: 0 })
    }

    /// Streams `inputs` (binary32 lanes) through at full rate; returns one output per input.
    pub fn run(&mut self, inputs: &[Vec<f32>]) -> Result<Vec<Vec<f32>>, Error> {
        let mut source = AxisSource::new(AxisPorts::find(&self.model, "s_axis")?, 100, 1);
        let mut sink = AxisSink::new(AxisPorts::find(&self.model, "m_axis")?, 100, 2);
        for v in inputs {
            let lanes: Vec<u32> = v.iter().map(|x| x.to_bits()).collect();
            source.queue.push_back(Beat::new(lanes_to_data(&lanes), 0, false, 0));
        }
        let start = self.model.cycle;
        while sink.received.len() < inputs.len() {
            if self.model.cycle - start > 1000 + 4 * inputs.len() as u64 {
                return Err(Error::Stuck(format!("kernel stuck after {} of {} results", sink.received.len(), inputs.len())));
            }
            source.drive(&mut self.model);
            sink.drive(&mut self.model);
            self.model.eval();
            source.observe(&mut self.model);
            sink.observe(&mut self.model);
            self.model.tick();
        }
        self.cycles += self.model.cycle - start;
        Ok(sink
            .received
            .iter()
            .map(|b| {
                let digits = b.data.to_u32_digits();
                (0..self.lanes_out).map(|j| f32::from_bits(digits.get(j).copied().unwrap_or(0))).collect()
            })
            .collect())
    }
}

/// The two kernels of the step, one instance of each per node.
pub struct DgKernels {
    /// `dg_surface_flux`, one model per node.
    pub flux: Vec<KernelModel>,
    /// `dg_rk_update`, one model per node.
    pub rk: Vec<KernelModel>,
}

impl DgKernels {
    /// Builds `dg_surface_flux` and `dg_rk_update` from their generated files in `dir` (verilated
    /// once each, instantiated for every node).
    pub fn build(dir: &Path) -> Result<DgKernels, Error> {
        let flux = (0..PARTS).map(|_| KernelModel::build(&dir.join("dg_surface_flux.v"), "dg_surface_flux", 6)).collect::<Result<_, _>>()?;
        let rk = (0..PARTS).map(|_| KernelModel::build(&dir.join("dg_rk_update.v"), "dg_rk_update", 2)).collect::<Result<_, _>>()?;
        Ok(DgKernels { flux, rk })
    }
}

/// The mesh's state spread over the nodes: per node, per local element, its values.
#[derive(Clone, Debug)]
pub struct Distributed {
    /// Which node owns which elements, and the halo each node sends each other node.
    pub partition: Partition,
    /// The time step (binary32).
    pub dt: f32,
    /// Per node, per local element: the field values at its vertices.
    pub q: Vec<Vec<Nodes>>,
    /// Per node, per local element: the low-storage Runge-Kutta residual, updated each stage.
    pub res: Vec<Vec<Nodes>>,
    /// Stages run so far (numbers the halo packets).
    pub stages: u32,
}

/// What one stage took.
#[derive(Clone, Debug)]
pub struct StageRun {
    /// Cycles of the halo exchange on the fabric.
    pub exchange_cycles: u64,
    /// Halo packets sent (all nodes).
    pub packets: usize,
    /// Kernel cycles of the busiest node: its face nodes through the flux kernel, then its node
    /// values through the update (each from its first beat in to its last result out).
    pub kernel_cycles: u64,
}

impl Distributed {
    /// The starting state of `mesh`, each node's elements in an order shuffled by `seed`.
    pub fn new(mesh: &Mesh, seed: u64) -> Distributed {
        let partition = Partition::new(mesh, seed);
        let q: Vec<Vec<Nodes>> = partition.elements.iter().map(|els| els.iter().map(|&e| initial(mesh, e)).collect()).collect();
        let res = q.iter().map(|els| vec![[[0.0; FIELDS]; VERTICES]; els.len()]).collect();
        Distributed { partition, dt: time_step(mesh), q, res, stages: 0 }
    }

    /// Entries a halo packet holds.
    fn per_packet(max_packet_bytes: usize) -> usize {
        max_packet_bytes / (4 * FIELDS)
    }

    /// The halo packets node `m` sends this stage.
    fn messages(&self, m: usize, max_packet_bytes: usize) -> Vec<Message> {
        let mut out = vec![];
        for n in 0..PARTS {
            for (chunk, entries) in self.partition.halo[m][n].chunks(Distributed::per_packet(max_packet_bytes)).enumerate() {
                let words = entries.iter().flat_map(|&(el, v)| self.q[m][el][v].map(f32::to_bits)).collect();
                out.push(Message { dst: (n, HALO_PORT), tag: HALO_TAG, user: self.stages << 8 | chunk as u32, words });
            }
        }
        out
    }

    /// Gathers every node's state into global element order: `(q, res)`.
    pub fn global(&self) -> (Vec<Nodes>, Vec<Nodes>) {
        let elements = self.partition.mesh.elements();
        let (mut q, mut res) = (vec![[[0.0; FIELDS]; VERTICES]; elements], vec![[[0.0; FIELDS]; VERTICES]; elements]);
        for (n, els) in self.partition.elements.iter().enumerate() {
            for (i, &e) in els.iter().enumerate() {
                q[e] = self.q[n][i];
                res[e] = self.res[n][i];
            }
        }
        (q, res)
    }
}

impl<D: Device> Torus<D> {
    /// One stage (`stage` in 0..5) of the distributed step: the halo over the fabric, then the
    /// kernels. `perturb` flips the top mantissa bit (bit 22) of `Ez` of the first halo entry
    /// node 0 takes (after the fabric), to show a wrong halo value is seen. (A flip of the lowest
    /// bit can vanish in the rounding of the flux and the update.)
    pub fn dg_stage(&mut self, dg: &mut Distributed, kernels: &mut DgKernels, stage: usize, perturb: bool, limit: u64) -> Result<StageRun, Error> {
        if self.config.nodes() != PARTS {
            return Err(Error::Config(format!("the DG partition has {PARTS} parts; the torus {:?} has {} nodes", self.config.dims, self.config.nodes())));
        }
        let max = self.config.max_packet_bytes;
        let messages: Vec<Vec<Message>> = (0..PARTS).map(|m| dg.messages(m, max)).collect();
        let packets = messages.iter().map(Vec::len).sum();
        let ex = self.exchange(HALO_PORT, &messages, limit)?;
        // Per receiving node, per source node: the entries taken.
        let per = Distributed::per_packet(max);
        let mut halo: Vec<Vec<Vec<Option<[f32; FIELDS]>>>> = (0..PARTS).map(|n| (0..PARTS).map(|m| vec![None; dg.partition.halo[m][n].len()]).collect()).collect();
        for (n, packets) in ex.received.iter().enumerate() {
            for p in packets {
                let h = &p.header;
                let m = h.src[0] + self.config.dims[0] * (h.src[1] + self.config.dims[1] * h.src[2]);
                let (at_stage, chunk) = (h.user >> 8, (h.user & 0xFF) as usize);
                if h.tag != HALO_TAG || at_stage != dg.stages || m >= PARTS || h.dst_port != HALO_PORT {
                    return Err(Error::Mismatch(format!("node {n} took a packet with tag {:#x}, user {:#x}, from {:?}: not a halo packet of stage {}", h.tag, h.user, h.src, dg.stages)));
                }
                let slots = &mut halo[n][m];
                if chunk * per + p.words.len() / FIELDS > slots.len() || p.words.len() % FIELDS != 0 {
                    return Err(Error::Mismatch(format!("node {n}: halo chunk {chunk} from node {m} of {} words does not fit its {} entries", p.words.len(), slots.len())));
                }
                for (i, e) in p.words.chunks(FIELDS).enumerate() {
                    let slot = &mut slots[chunk * per + i];
                    if slot.is_some() {
                        return Err(Error::Mismatch(format!("node {n}: halo entry {} from node {m} arrived twice", chunk * per + i)));
                    }
                    *slot = Some(std::array::from_fn(|c| f32::from_bits(e[c])));
                }
            }
        }
        if perturb {
            if let Some(v) = halo[0].iter_mut().flatten().next().and_then(|s| s.as_mut()) {
                v[5] = f32::from_bits(v[5].to_bits() ^ 1 << 22);
            }
        }
        let mesh = dg.partition.mesh.clone();
        // Surface flux: each node's face nodes through its own model.
        let mut fluxes = vec![];
        let mut kernel_cycles = vec![0u64; PARTS];
        for n in 0..PARTS {
            let mut inputs = vec![];
            let mut at = 0;
            for (i, &e) in dg.partition.elements[n].iter().enumerate() {
                for f in 0..FACES {
                    for k in 0..FACE_NODES {
                        let minus = dg.q[n][i][Mesh::face_vertex(f, k)];
                        let plus = match dg.partition.plus[n][at] {
                            Plus::Local { element, vertex } => dg.q[n][element][vertex],
                            Plus::Halo { from, index } => halo[n][from][index].ok_or_else(|| Error::Mismatch(format!("node {n}: halo entry {index} from node {from} never arrived")))?,
                        };
                        inputs.push(flux_inputs(&mesh, e, f, &minus, &plus).to_vec());
                        at += 1;
                    }
                }
            }
            let before = kernels.flux[n].cycles;
            fluxes.push(kernels.flux[n].run(&inputs)?);
            kernel_cycles[n] += kernels.flux[n].cycles - before;
        }
        // Right-hand side (software volume term and lift), then the update through each node's
        // model.
        let mut out = vec![];
        for n in 0..PARTS {
            let mut rk_in = vec![];
            for (i, &e) in dg.partition.elements[n].iter().enumerate() {
                let at = i * FACES * FACE_NODES;
                let f: Vec<[f32; FIELDS]> = fluxes[n][at..at + FACES * FACE_NODES].iter().map(|x| std::array::from_fn(|c| x[c])).collect();
                let rhs = lift(&volume(&mesh, e, &dg.q[n][i]), &f);
                for v in 0..VERTICES {
                    for c in 0..FIELDS {
                        rk_in.push(vec![dg.q[n][i][v][c], dg.res[n][i][v][c], rhs[v][c], RK4A[stage], RK4B[stage], dg.dt]);
                    }
                }
            }
            let before = kernels.rk[n].cycles;
            out.push(kernels.rk[n].run(&rk_in)?);
            kernel_cycles[n] += kernels.rk[n].cycles - before;
        }
        for n in 0..PARTS {
            let mut at = 0;
            for i in 0..dg.partition.elements[n].len() {
                for v in 0..VERTICES {
                    for c in 0..FIELDS {
                        dg.q[n][i][v][c] = out[n][at][0];
                        dg.res[n][i][v][c] = out[n][at][1];
                        at += 1;
                    }
                }
            }
        }
        dg.stages += 1;
        Ok(StageRun { exchange_cycles: ex.cycles, packets, kernel_cycles: kernel_cycles.into_iter().max().unwrap_or(0) })
    }
}
