//! The Airfoil accelerator of seed 002 (`airfoil_p<P>`): on-chip node and cell memories, an edge
//! stream gathered by index into `P` `res_calc` pipelines, and read-modify-write accumulation of
//! their fluxes into the cells' residuals.
//!
//! - **Memories.** `x` (a node's two coordinates), `q` (a cell's four states) and `adt` are read
//!   by every pipeline through registered ports (synthesis replicates them per port pair, one
//!   block RAM each); `res` is split in `B` banks by the low bits of the cell address
//!   ([`super::layout`]), each bank with its own accumulator.
//! - **Edges.** One beat of `s_axis_edges` is a row of `P` slots, 64 bits each: node addresses
//!   `n1` (bits 15:0) and `n2` (31:16), cell addresses `c1` (47:32) and `c2` (63:48); `tuser` bit
//!   `p` marks slot `p` an edge, clear a no-op. A no-op enters no pipeline and writes nothing.
//!   A slot naming an address beyond the memories is counted in `bad_indices` and dropped.
//! - **Accumulation.** Each pipeline's flux `f` goes to `c1`'s bank as `+f` and to `c2`'s bank as
//!   `−f` (IEEE `r − f` is `r + (−f)` exactly); a bank reads the residual, adds in a binary32
//!   adder and writes the sum back, [`Timing::lambda`] rows later. Two updates of a cell closer
//!   than λ rows would lose one (counted in `hazards`); two updates of one bank in a row likewise
//!   (`bank_conflicts`). A schedule from [`super::schedule`] with this λ and the layout's banks
//!   has neither.
//! - **Commands.** `s_axis_cmd`: `tuser` = `{op[2:0], address[15:0]}`, ops [`Op`]: write a node's
//!   `x` (tdata 63:0), a cell's `q` (127:0), `adt` (31:0) or `res` (127:0), or read a cell's `res`,
//!   returned on `m_axis_res` (tuser = the address, tlast = the command's). Commands wait while
//!   edges are in flight (`busy`), so a read after the last edge sees every update.
//!
//! Ports: `clk`, `rst`, `s_axis_cmd_*`, `s_axis_edges_*`, `m_axis_res_*`, `busy`; counters `edges`
//! (edges processed), `bad_indices`, `hazards`, `bank_conflicts`.

use crate::Error;
use std::rc::Rc;

use weft_hdl::float::FloatFormat;
use weft_hdl::netlist::{AxisShape, Design, Netlist, Sig};
use weft_hdl::pipeline::{dsl, Stages};

use crate::system::kernel_port::port_width;

/// The shape of one accelerator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Params {
    /// `res_calc` pipelines (rows of this many edges).
    pub pipelines: usize,
    /// Banks of the result memory: a power of two, at least 2·pipelines.
    pub banks: usize,
    /// Cell address bits (2^cell_bits cells).
    pub cell_bits: usize,
    /// Node address bits.
    pub node_bits: usize,
}

/// The command opcodes of `s_axis_cmd`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    WriteX = 0,
    WriteQ = 1,
    WriteAdt = 2,
    WriteRes = 3,
    ReadRes = 4,
}

/// The accelerator's timing, for schedules and drivers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Timing {
    /// Rows between two updates of one cell: the bank's read, adder and write.
    pub lambda: usize,
    /// Cycles of one `res_calc` pipeline.
    pub kernel_latency: usize,
    /// Cycles from an edge row taken to its last residual written.
    pub edge_to_res: usize,
}

/// The accumulator of one bank: `s_i = r_i + f_i` over the four residuals.
const ACCUMULATE: &str = "kernel airfoil_accumulate: f32\ninput r0, r1, r2, r3, f0, f1, f2, f3\noutput s0 = r0 + f0, s1 = r1 + f1, s2 = r2 + f2, s3 = r3 + f3\n";

impl Params {
    pub fn name(&self) -> String {
        format!("airfoil_p{}", self.pipelines)
    }

    /// Every field in range, or an error naming it.
    pub fn check(&self) -> Result<(), Error> {
        if !(1..=8).contains(&self.pipelines) {
            return Err(Error::Config(format!("airfoil: pipelines = {} is out of range: allowed 1..=8", self.pipelines)));
        }
        let least = (2 * self.pipelines).next_power_of_two();
        if !self.banks.is_power_of_two() || self.banks < least || self.banks > 16 {
            return Err(Error::Config(format!("airfoil: banks = {} is out of range: allowed a power of two in {least}..=16 (two updates per pipeline a row)", self.banks)));
        }
        let lb = self.banks.trailing_zeros() as usize;
        if !(lb + 1..=16).contains(&self.cell_bits) {
            return Err(Error::Config(format!("airfoil: cell_bits = {} is out of range: allowed {}..=16", self.cell_bits, lb + 1)));
        }
        if !(1..=16).contains(&self.node_bits) {
            return Err(Error::Config(format!("airfoil: node_bits = {} is out of range: allowed 1..=16", self.node_bits)));
        }
        Ok(())
    }
}

/// Whether the bits of a 16-bit field above `bits` are clear.
fn fits(v: Sig<'_>, bits: usize) -> Sig<'_> {
    if bits < 16 {
        v.bits(bits, 16 - bits).is_zero()
    } else {
        v.lit(1, 1)
    }
}

/// The four binary32 lanes of a 128-bit word, lowest first.
fn lanes<'d>(word: Sig<'d>) -> Vec<Sig<'d>> {
    (0..4).map(|k| word.bits(32 * k, 32)).collect()
}

/// Defines a child's `s_axis_tdata` chunks from 32-bit lanes, lowest first, and ties its unused
/// side-band inputs.
fn feed<'d>(d: &'d Design, child: &weft_hdl::netlist::Inst<'d>, net: &Netlist, values: &[Sig<'d>], valid: Sig<'d>) {
    let data = child.input("s_axis_tdata");
    data.define(crate::axis::gearbox::from_words(d, values).bits(0, data.width));
    child.input("s_axis_tvalid").define(valid);
    for side in ["s_axis_tkeep", "s_axis_tuser", "s_axis_tlast"] {
        let w = port_width(net, side);
        if w > 0 {
            child.input(side).define(d.lit(0, w));
        }
    }
    child.input("m_axis_tready").define(d.lit(1, 1));
}

/// Builds the accelerator and its timing.
pub fn accelerator(p: &Params) -> Result<(Netlist, Timing), Error> {
    p.check()?;
    let (_, flux_net, flux) = crate::kernels::build("airfoil_res_calc")?;
    let accumulate = dsl::parse(ACCUMULATE).map_err(Error::kernel("airfoil accumulator"))?;
    let (acc_net, acc) = accumulate.netlist(&Stages::balanced(FloatFormat::BINARY32))?;
    // Verilator builds the pipeline and the accumulator once each, not once per copy (four
    // inlined `res_calc` copies took it 10 minutes, one shared model 4).
    let (mut flux_net, mut acc_net) = (flux_net, acc_net);
    flux_net.no_inline = true;
    acc_net.no_inline = true;
    let (flux_net, acc_net) = (Rc::new(flux_net), Rc::new(acc_net));
    let timing = Timing { lambda: acc.latency + 2, kernel_latency: flux.latency, edge_to_res: 1 + flux.latency + 1 + 1 + acc.latency };
    let (pn, nb, lb) = (p.pipelines, p.banks, p.banks.trailing_zeros() as usize);
    let (ab, nbits, ob) = (p.cell_bits, p.node_bits, p.cell_bits - lb);

    let d = Design::new();
    let cmd = d.axis_in("s_axis_cmd", AxisShape::data(128).with_user(19));
    let edges = d.axis_in("s_axis_edges", AxisShape { last: false, ..AxisShape::data(64 * pn).with_user(pn) });
    let out = d.axis_out("m_axis_res", AxisShape::data(128).with_user(16));
    let (xm, qm, adtm) = (d.memory("x", 64, 1 << nbits), d.memory("q", 128, 1 << ab), d.memory("adt", 32, 1 << ab));

    d.section("commands: loads, and residual reads once no edge is in flight");
    let drain = d.reg("drain", 8, 0);
    let res_valid = d.reg("res_valid", 1, 0);
    let gathered = d.reg("gather_valid", 1, 0);
    let quiet = (drain.q.eq(0u32) & !gathered.q & !edges.0.valid).named("quiet");
    let (op, addr, word) = (cmd.0.user.unwrap().bits(16, 3).named("cmd_op"), cmd.0.user.unwrap().bits(0, 16).named("cmd_address"), cmd.data());
    let is = |o: Op| op.eq(o as u32);
    let node_ok = if nbits < 16 { addr.bits(nbits, 16 - nbits).is_zero() } else { d.lit(1, 1) };
    let cell_ok = if ab < 16 { addr.bits(ab, 16 - ab).is_zero() } else { d.lit(1, 1) };
    let addr_ok = is(Op::WriteX).mux(node_ok, cell_ok).named("cmd_address_ok");
    let go = (cmd.0.valid & quiet & (!is(Op::ReadRes) | !res_valid.q | out.ready())).named("cmd_go");
    cmd.ready(go);
    let act = (go & addr_ok).named("cmd_act");
    xm.write(act & is(Op::WriteX), addr.bits(0, nbits), word.bits(0, 64));
    qm.write(act & is(Op::WriteQ), addr.bits(0, ab), word);
    adtm.write(act & is(Op::WriteAdt), addr.bits(0, ab), word.bits(0, 32));
    let cmd_bank = addr.bits(0, lb);
    let read_go = (act & is(Op::ReadRes)).named("read_go");
    res_valid.next(read_go | res_valid.q & !out.ready());
    let res_bank = d.reg("res_bank", lb, 0);
    res_bank.next_when(read_go, cmd_bank);
    let res_addr = d.reg("res_address", 16, 0);
    res_addr.next_when(read_go, addr);
    let res_last = d.reg("res_last", 1, 0);
    res_last.next_when(read_go, cmd.0.last.unwrap());

    d.section(&format!("gather: each slot's nodes and cells read by index, then {pn} res_calc pipelines ({} cycles)", flux.latency));
    let kernels_ready = d.later(1);
    let advance = (!gathered.q | kernels_ready).named("gather_advance");
    edges.ready(advance & !res_valid.q);
    let take = edges.fire().named("edges_take");
    gathered.next_when(advance, take);
    let user = edges.0.user.unwrap();
    let mut bad = vec![];
    let mut edge_bits = vec![];
    let mut updates: Vec<(Sig, Sig, Sig)> = vec![]; // (valid, cell address, residual increment)
    let mut ready_all = d.lit(1, 1);
    for s in 0..pn {
        let slot = edges.0.data.bits(64 * s, 64);
        let field = |k: usize| slot.bits(16 * k, 16);
        let in_range = fits(field(0), nbits) & fits(field(1), nbits) & fits(field(2), ab) & fits(field(3), ab);
        let is_edge = user.bit(s);
        bad.push(is_edge & !in_range);
        let ok = (is_edge & in_range).named(&format!("slot{s}_edge"));
        edge_bits.push(ok);
        let mems = [xm, qm, adtm];
        let read = |m: usize, k: usize, bits: usize, name: &str| mems[m].read_registered(take, field(k).bits(0, bits), &format!("{name}_p{s}"));
        let (x1, x2) = (read(0, 0, nbits, "x1"), read(0, 1, nbits, "x2"));
        let (q1, q2) = (read(1, 2, ab, "q1"), read(1, 3, ab, "q2"));
        let (adt1, adt2) = (read(2, 2, ab, "adt1"), read(2, 3, ab, "adt2"));
        let valid = d.reg(&format!("slot{s}_valid"), 1, 0);
        valid.next_when(advance, take & ok);
        let cells = d.reg(&format!("slot{s}_cells"), 2 * ab, 0);
        cells.next_when(take, field(3).bits(0, ab).cat(field(2).bits(0, ab)));

        let k = d.instance(&flux_net, "airfoil_res_calc", &format!("res_calc_p{s}"));
        let mut values = vec![x1.bits(0, 32), x1.bits(32, 32), x2.bits(0, 32), x2.bits(32, 32)];
        values.extend(lanes(q1));
        values.extend(lanes(q2));
        values.extend([adt1, adt2]);
        let fire_in = (gathered.q & valid.q & kernels_ready).named(&format!("flux_in_p{s}"));
        feed(&d, &k, &flux_net, &values, gathered.q & valid.q);
        ready_all = ready_all & k.output("s_axis_tready");
        // Each edge's cells wait beside the pipeline for its flux.
        let out_valid = k.output("m_axis_tvalid");
        let waiting = d.queue(&format!("cells_p{s}"), (flux.latency + 1).next_power_of_two(), fire_in, &[cells.q], out_valid);
        let (c1, c2) = (waiting.head[0].bits(0, ab), waiting.head[0].bits(ab, ab));
        let f = k.output("m_axis_tdata").bits(0, 128).named(&format!("flux_p{s}"));
        let minus_f = f ^ d.lit(0x8000_0000_8000_0000_8000_0000_8000_0000, 128);
        updates.push((out_valid, c1, f));
        updates.push((out_valid, c2, minus_f));
    }
    kernels_ready.define(ready_all);
    let edge_count = d.reg("edges", 32, 0);
    let issued = edge_bits.iter().fold(d.lit(0, 32), |acc, b| acc + b.zext(32));
    edge_count.next_when(take, edge_count.q + issued);
    d.output("edges", edge_count.q);
    d.counter("bad_indices", take & d.cat(&bad).any());
    drain.next(take.mux(d.lit(timing.edge_to_res as u128 + 2, 8), drain.q.eq(0u32).mux(drain.q, drain.q - 1u32)));
    d.output("busy", drain.q.ne(0u32) | gathered.q);

    d.section(&format!("accumulate: {nb} banks of res, each read, add and write back (λ = {} rows)", timing.lambda));
    let mut conflicts = vec![];
    let mut hazards = vec![];
    let mut bank_words = vec![];
    for b in 0..nb {
        let hits: Vec<Sig> = updates.iter().map(|(v, c, _)| *v & c.bits(0, lb).eq(b as u32)).collect();
        for i in 0..hits.len() {
            for j in i + 1..hits.len() {
                conflicts.push(hits[i] & hits[j]);
            }
        }
        // At most one hit in a valid schedule: the OR of the masked updates is the one.
        let mut offset = d.lit(0, ob);
        let mut increment = d.lit(0, 128);
        for ((_, c, f), h) in updates.iter().zip(&hits) {
            offset = offset | h.mux(c.bits(lb, ob), d.lit(0, ob));
            increment = increment | h.mux(*f, d.lit(0, 128));
        }
        let in_valid = d.reg(&format!("bank{b}_valid"), 1, 0);
        in_valid.next(d.cat(&hits).any());
        let in_off = d.reg(&format!("bank{b}_offset"), ob, 0);
        in_off.next(offset);
        let in_f = d.reg(&format!("bank{b}_increment"), 128, 0);
        in_f.next(increment);
        // An update of a cell still in the accumulator (fewer than λ rows ago).
        let mut recent = vec![];
        let mut prev = (in_valid.q, in_off.q);
        for k in 1..timing.lambda {
            let v = d.reg(&format!("bank{b}_recent{k}_valid"), 1, 0);
            v.next(prev.0);
            let o = d.reg(&format!("bank{b}_recent{k}_offset"), ob, 0);
            o.next(prev.1);
            recent.push(v.q & o.q.eq(in_off.q));
            prev = (v.q, o.q);
        }
        hazards.push(in_valid.q & d.cat(&recent).any());

        let mem = d.memory(&format!("res_bank{b}"), 128, 1 << ob);
        let here = cmd_bank.eq(b as u32);
        let read_here = read_go & here;
        let old = mem.read_registered(in_valid.q | read_here, in_valid.q.mux(in_off.q, addr.bits(lb, ob)), &format!("bank{b}_residual"));
        bank_words.push(old);
        let add_valid = d.reg(&format!("bank{b}_add_valid"), 1, 0);
        add_valid.next(in_valid.q);
        let add_off = d.reg(&format!("bank{b}_add_offset"), ob, 0);
        add_off.next(in_off.q);
        let add_f = d.reg(&format!("bank{b}_add_increment"), 128, 0);
        add_f.next(in_f.q);
        let adder = d.instance(&acc_net, "airfoil_accumulate", &format!("accumulate_bank{b}"));
        let mut values = lanes(old);
        values.extend(lanes(add_f.q));
        feed(&d, &adder, &acc_net, &values, add_valid.q);
        let sum_valid = adder.output("m_axis_tvalid");
        let offsets = d.queue(&format!("bank{b}_offsets"), (acc.latency + 1).next_power_of_two(), add_valid.q, &[add_off.q], sum_valid);
        let write_here = act & is(Op::WriteRes) & here;
        mem.write(sum_valid | write_here, sum_valid.mux(offsets.head[0], addr.bits(lb, ob)), sum_valid.mux(adder.output("m_axis_tdata").bits(0, 128), word));
    }
    d.counter("bank_conflicts", conflicts.iter().fold(d.lit(0, 1), |a, c| a | *c));
    d.counter("hazards", hazards.iter().fold(d.lit(0, 1), |a, h| a | *h));

    d.section("residual reads out");
    let picked = (0..nb).fold(d.lit(0, 128), |acc, b| acc | res_bank.q.eq(b as u32).mux(bank_words[b], d.lit(0, 128)));
    out.0.user.unwrap().define(res_addr.q);
    out.drive(picked, res_valid.q, res_last.q);
    let net = d.finish();
    Ok((net, timing))
}
