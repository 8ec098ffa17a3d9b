//! The host side of the Airfoil accelerator ([`weft_ip::airfoil::accelerator`]) on any device
//! (the built-in simulator or Verilator): load a mesh's data sets through `s_axis_cmd`, stream a
//! schedule's edge rows, wait for the accumulators to drain, read the residuals back.

use crate::Error;
use weft_ip::airfoil::reference::Fields;
use weft_ip::airfoil::{Mesh, Op, Params, Timing};
use weft_ip::app::layout::Layout;
use weft_ip::app::schedule::Slot;

use crate::link::{Device, Value, VALUE_WORDS};

/// What one pass took and gave.
#[derive(Clone, Debug, PartialEq)]
pub struct AirfoilRun {
    /// Residuals read back, per cell (mesh numbering).
    pub res: Vec<[f32; 4]>,
    /// Cycles to load the data sets (one command a cycle when accepted).
    pub load_cycles: u64,
    /// Cycles from the first edge row offered until the accelerator is idle.
    pub edge_cycles: u64,
    /// Cycles to read the residuals back.
    pub unload_cycles: u64,
    /// Edge rows streamed (schedule rows).
    pub rows: u64,
    /// How much the counters `edges`, `hazards`, `bank_conflicts`, `bad_indices` rose in the pass.
    pub counters: [u64; 4],
}

pub const COUNTERS: [&str; 4] = ["edges", "hazards", "bank_conflicts", "bad_indices"];

fn value(v: u128) -> Value {
    let mut out = Value::default();
    out[0] = v as u64;
    out[1] = (v >> 64) as u64;
    out
}

fn wide(words: &[u64]) -> Value {
    let mut out = Value::default();
    out[..words.len()].copy_from_slice(words);
    out
}

fn f32s(word: u128, n: usize) -> Vec<u32> {
    (0..n).map(|k| (word >> (32 * k)) as u32).collect()
}

fn pack(values: &[f32]) -> u128 {
    values.iter().enumerate().fold(0u128, |w, (k, v)| w | (v.to_bits() as u128) << (32 * k))
}

/// One stream into the device: beats of (tdata words, tuser, tlast) accepted one a cycle when
/// ready. Returns the cycles it took.
fn stream<D: Device>(dev: &mut D, prefix: &str, beats: &[(Value, u128, bool)], limit: u64) -> Result<u64, Error> {
    let [data, user, valid, ready] = ["tdata", "tuser", "tvalid", "tready"].map(|s| dev.port(&format!("{prefix}_{s}")));
    let last = dev.has_port(&format!("{prefix}_tlast")).then(|| dev.port(&format!("{prefix}_tlast")));
    let mut cycles = 0;
    let mut next = 0;
    while next < beats.len() {
        let (d, u, l) = &beats[next];
        dev.set(data, d);
        dev.set(user, &value(*u));
        if let Some(p) = last {
            dev.set(p, &value(*l as u128));
        }
        dev.set(valid, &value(1));
        dev.settle();
        if dev.get(ready)[0] & 1 == 1 {
            next += 1;
        }
        dev.clock(false);
        cycles += 1;
        if cycles > limit {
            return Err(Error::Stuck(format!("{prefix}: {next} of {} beats taken after {limit} cycles", beats.len())));
        }
    }
    dev.set(valid, &value(0));
    Ok(cycles)
}

/// The counters now.
fn counters<D: Device>(dev: &mut D) -> [u64; 4] {
    dev.settle();
    COUNTERS.map(|name| {
        let p = dev.port(name);
        dev.get(p)[0]
    })
}

/// The edge rows of `schedule`, `P` slots a beat. A no-op slot carries the indices of a real
/// edge with its `tuser` bit clear, so an accelerator that committed no-ops would corrupt `res`.
pub fn edge_rows(mesh: &Mesh, layout: &Layout, schedule: &[Slot], pipelines: usize) -> Vec<(Value, u128, bool)> {
    let word = |e: usize| {
        let edge = &mesh.edges[e];
        let [a1, a2] = edge.cells.map(|c| layout.address[c as usize] as u64);
        edge.nodes[0] as u64 | (edge.nodes[1] as u64) << 16 | a1 << 32 | a2 << 48
    };
    schedule
        .chunks(pipelines)
        .enumerate()
        .map(|(r, row)| {
            let words: Vec<u64> = row.iter().enumerate().map(|(p, s)| word(s.map_or((r * pipelines + p) % mesh.edges.len(), |e| e as usize))).collect();
            let user = row.iter().enumerate().fold(0u128, |u, (p, s)| u | (s.is_some() as u128) << p);
            (wide(&words), user, false)
        })
        .collect()
}

/// Loads `fields`, streams `schedule` (rows of `params.pipelines`), drains and reads every
/// cell's residual back. The device must be out of reset.
pub fn run<D: Device>(dev: &mut D, params: &Params, timing: &Timing, mesh: &Mesh, fields: &Fields, layout: &Layout, schedule: &[Slot]) -> Result<AirfoilRun, Error> {
    if params.pipelines > VALUE_WORDS {
        return Err(Error::Config(format!("airfoil driver: pipelines = {} is out of range: allowed 1..={VALUE_WORDS} (one 64-bit word of a device port each)", params.pipelines)));
    }
    if mesh.x.len() > 1 << params.node_bits {
        return Err(Error::Config(format!("airfoil: {} nodes do not fit {} node addresses", mesh.x.len(), 1 << params.node_bits)));
    }
    let before = counters(dev);
    let cmd = |op: Op, addr: u32, data: u128, last: bool| (value(data), (op as u128) << 16 | addr as u128, last);
    let mut load = vec![];
    for (n, x) in fields.x.iter().enumerate() {
        load.push(cmd(Op::WriteX, n as u32, pack(x), false));
    }
    for (c, a) in layout.address.iter().enumerate() {
        load.push(cmd(Op::WriteQ, *a, pack(&fields.q[c]), false));
        load.push(cmd(Op::WriteAdt, *a, pack(&[fields.adt[c]]), false));
        load.push(cmd(Op::WriteRes, *a, pack(&fields.res[c]), false));
    }
    let load_cycles = stream(dev, "s_axis_cmd", &load, 4 * load.len() as u64 + 100)?;

    let rows = edge_rows(mesh, layout, schedule, params.pipelines);
    let busy = dev.port("busy");
    let mut edge_cycles = stream(dev, "s_axis_edges", &rows, 4 * rows.len() as u64 + 100)?;
    loop {
        dev.settle();
        if dev.get(busy)[0] & 1 == 0 {
            break;
        }
        dev.clock(false);
        edge_cycles += 1;
        if edge_cycles > 4 * rows.len() as u64 + 10 * timing.edge_to_res as u64 {
            return Err(Error::Stuck(format!("airfoil: still busy {edge_cycles} cycles after the first of {} rows", rows.len())));
        }
    }

    // Reads, one a cycle, taken as they come out.
    let reads: Vec<_> = layout.address.iter().enumerate().map(|(c, a)| cmd(Op::ReadRes, *a, 0, c + 1 == layout.address.len())).collect();
    let [data, user, valid, ready] = ["tdata", "tuser", "tvalid", "tready"].map(|s| dev.port(&format!("s_axis_cmd_{s}")));
    let last = dev.port("s_axis_cmd_tlast");
    let [o_data, o_user, o_valid, o_ready] = ["tdata", "tuser", "tvalid", "tready"].map(|s| dev.port(&format!("m_axis_res_{s}")));
    dev.set(o_ready, &value(1));
    let mut res = vec![[0f32; 4]; layout.address.len()];
    let (mut next, mut got, mut unload_cycles) = (0, 0, 0u64);
    while got < reads.len() {
        if next < reads.len() {
            let (d, u, l) = &reads[next];
            dev.set(data, d);
            dev.set(user, &value(*u));
            dev.set(last, &value(*l as u128));
        }
        dev.set(valid, &value((next < reads.len()) as u128));
        dev.settle();
        if next < reads.len() && dev.get(ready)[0] & 1 == 1 {
            next += 1;
        }
        if dev.get(o_valid)[0] & 1 == 1 {
            let (w, addr) = (dev.get(o_data), dev.get(o_user)[0] as u32);
            if addr != layout.address[got] {
                return Err(Error::Mismatch(format!("airfoil: read {got} returned address {addr:#x}, want {:#x}", layout.address[got])));
            }
            let word = w[0] as u128 | (w[1] as u128) << 64;
            let lanes = f32s(word, 4);
            res[got] = [0, 1, 2, 3].map(|k| f32::from_bits(lanes[k]));
            got += 1;
        }
        dev.clock(false);
        unload_cycles += 1;
        if unload_cycles > 4 * reads.len() as u64 + 100 {
            return Err(Error::Stuck(format!("airfoil: {got} of {} residuals read after {unload_cycles} cycles", reads.len())));
        }
    }
    dev.set(valid, &value(0));
    let after = counters(dev);
    let counters = [0, 1, 2, 3].map(|k| after[k].wrapping_sub(before[k]) & 0xFFFF_FFFF);
    Ok(AirfoilRun { res, load_cycles, edge_cycles, unload_cycles, rows: rows.len() as u64, counters })
}

/// How far ahead the list schedule looks for an edge that fits a row. On the 10⁴-cell O-grid
/// (λ = 6), no-op slots for 1 / 2 / 4 pipelines: window 64: 0 / 570 / 2044; 256: 0 / 70 / 636;
/// 1024: 0 / 12 / 168 (seed 002's colouring: 42 / 374 / 548). Rows of several pipelines must
/// also find edges of distinct banks, which a short window often cannot.
pub const LIST_WINDOW: usize = 1024;

/// The two schedules of the interior edges for this accelerator: seed 002's colouring and
/// weft's list schedule, each with its name. The list schedule looks [`LIST_WINDOW`] edges ahead.
pub fn schedules(mesh: &Mesh, layout: &Layout, params: &Params, timing: &Timing) -> Result<Vec<(&'static str, Vec<Slot>)>, Error> {
    use weft_ip::app::schedule::{colouring_rows, list_rows, Rows};
    let cells = mesh.interior_cells();
    let rows = Rows { pipelines: params.pipelines, banks: Some(&layout.bank) };
    Ok(vec![("colouring", colouring_rows(&cells, timing.lambda, rows)?.0), ("list", list_rows(&cells, timing.lambda, LIST_WINDOW, rows)?)])
}

/// A pass checked against the C-semantics reference bit for bit, and its counters against the
/// schedule (every edge processed, no hazard, no bank conflict, no bad index).
pub fn verify(run: &AirfoilRun, mesh: &Mesh, fields: &Fields, schedule: &[Slot]) -> Result<(), Error> {
    let want = weft_ip::airfoil::reference::run(mesh, fields, schedule);
    for (c, (got, want)) in run.res.iter().zip(&want).enumerate() {
        for k in 0..4 {
            if got[k].to_bits() != want[k].to_bits() {
                return Err(Error::Mismatch(format!("cell {c} res[{k}] = {:#010x} ({}), the reference {:#010x} ({})", got[k].to_bits(), got[k], want[k].to_bits(), want[k])));
            }
        }
    }
    let edges = schedule.iter().flatten().count() as u64;
    if run.counters != [edges, 0, 0, 0] {
        return Err(Error::Mismatch(format!("counters {:?} = {:?}, want [{edges}, 0, 0, 0]", COUNTERS, run.counters)));
    }
    Ok(())
}

/// One pass checked against the reference: its schedule's name, slots and no-op slots, what
/// the device did.
#[derive(Clone, Debug, PartialEq)]
pub struct Pass {
    pub schedule: &'static str,
    pub slots: usize,
    pub noop_slots: usize,
    pub run: AirfoilRun,
}

/// Both schedules of `mesh` (fields seeded with `fields_seed`) through `dev`, each pass checked
/// by [`verify`]; an error names the schedule and the mesh's size.
pub fn check_mesh<D: Device>(dev: &mut D, params: &Params, timing: &Timing, mesh: &Mesh, fields_seed: u64) -> Result<Vec<Pass>, Error> {
    let fields = Fields::seeded(mesh, fields_seed);
    let layout = weft_ip::app::layout::layout(mesh.cells.len(), &mesh.interior_cells(), params.banks, 1 << params.cell_bits)?;
    let mut passes = vec![];
    for (name, schedule) in schedules(mesh, &layout, params, timing)? {
        let context = |e: Error| e.context(format!("{}, {} cells, {name} schedule", params.name(), mesh.cells.len()));
        let r = run(dev, params, timing, mesh, &fields, &layout, &schedule).map_err(context)?;
        verify(&r, mesh, &fields, &schedule).map_err(context)?;
        passes.push(Pass { schedule: name, slots: schedule.len(), noop_slots: weft_ip::app::schedule::noops(&schedule), run: r });
    }
    Ok(passes)
}

/// The accelerator in the built-in simulator, out of reset.
pub fn netlist_device(params: &Params) -> Result<(crate::link::NetlistDevice, Timing), Error> {
    let (net, timing) = weft_ip::airfoil::accelerator(params)?;
    let mut dev = crate::link::NetlistDevice::new(weft_ip::weft_hdl::netlist::eval::Evaluator::new(net));
    dev.clock(true);
    dev.clock(true);
    Ok((dev, timing))
}

/// The built-in-simulator testbench of `params`: an O-grid of `around × out` cells, both
/// schedules, each pass bit-exact to the reference.
pub fn testbench(params: &Params, around: usize, out: usize) -> Result<String, Error> {
    let (mut dev, timing) = netlist_device(params)?;
    let mesh = weft_ip::airfoil::generate(around, out, 7)?;
    let said: Vec<String> = check_mesh(&mut dev, params, &timing, &mesh, 9)?.iter().map(|p| format!("{} {} rows in {} cycles", p.schedule, p.run.rows, p.run.edge_cycles)).collect();
    Ok(format!("{} cells, {} edges, λ = {}: {}; every residual bit-exact to the C reference", mesh.cells.len(), mesh.edges.len(), timing.lambda, said.join(", ")))
}
