//! The halo engine of one node: at a sync step after a loop that wrote a dat some other node
//! reads, it sends exactly the halo values it owns to the nodes that import them and places
//! what the owners send it by the packets' headers — with no host.
//!
//! Protocol, per refresh step. On reaching the step a node sends a header-only *token* (tag
//! [`TOKEN_TAG`]) to every node it imports from in this step; an owner sends a destination its
//! values only after that destination's token has come (a credit), so values arrive only while
//! their reader waits at the same step — never during a loop that still reads the old ones, and
//! never for a later step. A data packet: header `dst` = the reader's node and [`HALO_PORT`],
//! `tag` = the dat's number in [`HaloTables::dats`], `user` = the position of its first element in
//! the owner's export list to that reader ([`super::halo::Halo::exports`], ascending), `length`
//! = elements × beats per element × W/8 bytes (W the router's datapath width, 128 or 256 bits);
//! then per element ⌈bits / W⌉ beats, the element's components from bit 0, zero-padded. The reader writes element k of a packet from node s to
//! the address `recv[base(s, dat) + user + k]`. The step is done (`halo_done` high while `sync`
//! stays high) once every packet is sent and every expected element written.
//!
//! Throughput: one element every ⌈bits / W⌉ + 2 cycles on the sending side (a table read and
//! a memory read before its beats); the receiver takes a beat every cycle.

use std::collections::BTreeMap;

use weft_hdl::netlist::{Design, Netlist, Sig};

use super::super::constants::rom;
use super::super::store::bits_for;
use crate::router::header::field;
use crate::router::RouterConfig;
use crate::Error;

/// Tag of a token: "I am at this step; send me what I import".
pub const TOKEN_TAG: u16 = 0xFFF0;
/// The IntraNode port the engine's packets use at every node.
pub const HALO_PORT: usize = 2;

/// One dat the engine refreshes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HaloDat {
    /// The dat's name (its memory ports are `<name>_rd_*`, `<name>_wr_*`).
    pub name: String,
    /// Bits of one element (all components).
    pub bits: usize,
    /// Address bits of its memory.
    pub addr_bits: usize,
}

impl HaloDat {
    /// Beats of a `width`-bit datapath an element takes.
    pub fn beats(&self, width: usize) -> usize {
        self.bits.div_ceil(width)
    }
}

/// One refresh step.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HaloStep {
    /// The program's sync id it runs at.
    pub sync_id: u32,
    /// Nodes this node imports from in this step (each gets a token).
    pub sources: Vec<usize>,
    /// Its packets: `packets[first..end]`.
    pub first: usize,
    /// One past its last packet.
    pub end: usize,
    /// Elements this node receives in this step.
    pub expected: usize,
}

/// One data packet to send.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HaloPacket {
    /// Destination node.
    pub dst: usize,
    /// The dat's number.
    pub dat: usize,
    /// Position of its first element in the export list to `dst`.
    pub position: usize,
    /// Elements, each an entry of [`HaloTables::sends`] in order.
    pub count: usize,
    /// Whether it is the step's first packet to `dst` (it waits for `dst`'s token).
    pub new_dst: bool,
}

/// Everything one node's engine needs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HaloTables {
    /// This node.
    pub node: usize,
    /// The torus.
    pub config: RouterConfig,
    /// The dats, by tag.
    pub dats: Vec<HaloDat>,
    /// The refresh steps, in the order the program reaches them.
    pub steps: Vec<HaloStep>,
    /// The packets of every step, in sending order.
    pub packets: Vec<HaloPacket>,
    /// The local address of every element sent, in sending order.
    pub sends: Vec<u32>,
    /// Per (source node, dat): where its elements start in `recv`.
    pub recv_base: BTreeMap<(usize, usize), usize>,
    /// Local addresses of received elements, per (source, dat) block in export order.
    pub recv: Vec<u32>,
}

/// Fields of a packet-table word: dst node, dat, position, count, new_dst.
fn packet_fields(t: &HaloTables) -> [usize; 5] {
    let count = t.packets.iter().map(|p| p.count).max().unwrap_or(1);
    let position = t.packets.iter().map(|p| p.position + 1).max().unwrap_or(1);
    [bits_for(t.config.nodes()), bits_for(t.dats.len()), bits_for(position).max(1), bits_for(count + 1), 1]
}

impl HaloTables {
    /// The packet table's words, for `halo_packets_wr_data`.
    pub fn packet_words(&self) -> Vec<u128> {
        let f = packet_fields(self);
        self.packets
            .iter()
            .map(|p| {
                let values = [p.dst, p.dat, p.position, p.count, p.new_dst as usize];
                let mut word = 0u128;
                let mut lo = 0;
                for (v, w) in values.iter().zip(f) {
                    word |= (*v as u128) << lo;
                    lo += w;
                }
                word
            })
            .collect()
    }

    fn send_bits(&self) -> usize {
        self.dats.iter().map(|d| d.addr_bits).max().unwrap_or(1)
    }
}

/// `v` at header field `name`'s place in a 128-bit beat.
fn h<'d>(name: &str, v: Sig<'d>) -> Sig<'d> {
    v.zext(128).shl_const(field(name).0)
}

/// The router's 22-bit destination of node `n`'s port `port`.
fn destination(config: &RouterConfig, n: usize, port: usize) -> u128 {
    let c = config.coords(n);
    (c[0] | c[1] << 6 | c[2] << 12 | port << 18) as u128
}

/// Builds the engine for `t`. A router width not a multiple of 128 bits, tables of more than 2^16
/// entries, a packet longer than the router's largest or more than 16 dats are errors naming
/// the field.
pub fn halo_engine(t: &HaloTables) -> Result<Netlist, Error> {
    let nodes = t.config.nodes();
    let w = t.config.width;
    let wb = w / 8;
    let bpe_max = t.dats.iter().map(|x| x.beats(w)).max().unwrap_or(1);
    if !w.is_multiple_of(128) || w == 0 {
        return Err(Error::Config(format!("halo engine: router width {w}: allowed a multiple of 128 bits")));
    }
    if t.dats.is_empty() || t.dats.len() > 16 {
        return Err(Error::Config(format!("halo engine: {} dats: allowed range is 1 ..= 16", t.dats.len())));
    }
    for p in &t.packets {
        let bytes = p.count * t.dats[p.dat].beats(w) * wb;
        if bytes > t.config.max_packet_bytes || p.count == 0 {
            return Err(Error::Config(format!("halo engine: a packet of {} elements ({bytes} bytes): allowed 1 element ..= max_packet_bytes {}", p.count, t.config.max_packet_bytes)));
        }
    }
    for (name, n) in [("sends", t.sends.len()), ("recv", t.recv.len()), ("packets", t.packets.len())] {
        if n > 1 << 16 {
            return Err(Error::Config(format!("halo engine: table `{name}` of {n} entries: allowed at most 65,536")));
        }
    }
    let d = Design::new();
    let one = d.lit(1, 1);
    let zero = d.lit(0, 1);

    d.section("tables, loaded with the program: packets, addresses to send, addresses to receive into");
    let pf = packet_fields(t);
    let pw: usize = pf.iter().sum();
    let table = |name: &str, width: usize, depth: usize| {
        let depth = depth.max(2).next_power_of_two();
        let mem = d.memory(name, width, depth);
        let ab = bits_for(depth);
        mem.write(d.input(&format!("{name}_wr_en"), 1), d.input(&format!("{name}_wr_addr"), ab), d.input(&format!("{name}_wr_data"), width));
        (mem, ab)
    };
    let (packets, pab) = table("halo_packets", pw, t.packets.len());
    let (sends, sab) = table("halo_sends", t.send_bits(), t.sends.len());
    let (recv, rab) = table("halo_recv", t.send_bits(), t.recv.len());

    d.section("the step: which refresh the program waits at");
    let sync = d.input("sync", 1);
    let sync_id = d.input("sync_id", 16);
    let sb = bits_for(t.steps.len());
    let mut found = zero;
    let mut index = d.lit(0, sb);
    for (k, s) in t.steps.iter().enumerate() {
        let hit = sync_id.eq(s.sync_id as u128);
        found = found | hit;
        index = hit.mux(d.lit(k as u128, sb), index);
    }
    let step = d.reg("step", sb, 0);

    d.section("sending: tokens, then each packet once its reader's token has come");
    // States: 0 idle, 1 tokens, 2 next packet, 3 credit, 4 header, 5 read, 6 latch, 7 beats, 8 sent.
    let state = d.reg("tx_state", 4, 0);
    let at = |s: u128| state.q.eq(s);
    let served = d.reg("served", 1, 0);
    let begin = (sync & found & !served.q & at(0)).named("step_begins");
    let tokens: Vec<Vec<u128>> = t.steps.iter().map(|s| s.sources.iter().map(|&n| destination(&t.config, n, HALO_PORT)).collect()).collect();
    let tok_max = tokens.iter().map(Vec::len).max().unwrap_or(0);
    let tb = bits_for(tok_max + 1);
    let tok = d.reg("token", tb, 0);
    let cur_step = begin.mux(index, step.q);
    let token_count = rom(&d, &tokens.iter().map(|v| v.len() as u128).collect::<Vec<_>>(), tb, cur_step);
    let token_dst = (0..t.steps.len()).fold(d.lit(0, 22), |acc, k| {
        let list: Vec<u128> = tokens[k].clone();
        step.q.eq(k as u128).mux(rom(&d, &list, 22, tok.q), acc)
    });
    // The packet counter reaches one past the last packet, so it may need a bit more than the
    // table's address.
    let pcb = bits_for(t.packets.len() + 1).max(pab);
    let first_packet = rom(&d, &t.steps.iter().map(|s| s.first as u128).collect::<Vec<_>>(), pcb, cur_step);
    // Where a step's addresses start in the send table: the elements of the packets before it.
    let send_first: Vec<u128> = t.steps.iter().map(|s| t.packets[..s.first].iter().map(|p| p.count).sum::<usize>() as u128).collect();
    let end_packet = rom(&d, &t.steps.iter().map(|s| s.end as u128).collect::<Vec<_>>(), pcb, step.q);
    let expected = rom(&d, &t.steps.iter().map(|s| s.expected as u128).collect::<Vec<_>>(), 17, step.q);
    let pkt = d.reg("packet", pcb, 0);
    let word = packets.read(pkt.q.bits(0, pab)).named("packet_word");
    let field_at = |k: usize| {
        let lo: usize = pf[..k].iter().sum();
        word.bits(lo, pf[k])
    };
    let (p_dst, p_dat, p_pos, p_count, p_new) = (field_at(0), field_at(1), field_at(2), field_at(3), field_at(4));
    let cur_dst = d.reg("packet_dst", pf[0], 0);
    let cur_dat = d.reg("packet_dat", pf[1], 0);
    let left = d.reg("elements_left", pf[3], 0);
    let send_ptr = d.reg("send_pointer", sab, 0);
    let beat = d.reg("beat", bits_for(bpe_max + 1), 0);
    let element = d.reg("element", bpe_max * w, 0);
    let credits: Vec<_> = (0..nodes).map(|n| d.reg(&format!("credit_node{n}"), 4, 0)).collect();
    let credit_here = (0..nodes).fold(zero, |acc, n| cur_dst.q.eq(n as u128).mux(credits[n].q.any(), acc));
    let beat_counts: Vec<u128> = t.dats.iter().map(|x| x.beats(w) as u128).collect();
    let bw = bits_for(bpe_max + 1);
    let node_dst = (0..nodes).fold(d.lit(0, 22), |acc, n| cur_dst.q.eq(n as u128).mux(d.lit(destination(&t.config, n, HALO_PORT), 22), acc));
    let bpe = rom(&d, &beat_counts, bw, cur_dat.q);
    let tx_ready = d.input("m_axis_tready", 1);

    // The header of the current beat: a token or a packet.
    let length = (left.q.zext(14).mul(bpe.zext(14)).bits(0, 14)).shl_const(wb.trailing_zeros() as usize).bits(0, 14);
    let token_header = token_dst.zext(128) | h("tag", d.lit(TOKEN_TAG as u128, 16));
    let position = d.reg("packet_position", pf[2], 0);
    let packet_header = node_dst.zext(128) | h("tag", cur_dat.q.zext(16)) | h("length", length) | h("user", position.q.zext(32));
    let payload = (0..bpe_max).fold(d.lit(0, w), |acc, b| beat.q.eq(b as u128).mux(element.q.bits(b * w, w), acc));
    let tx_valid = at(1) | at(4) | at(7);
    let tx_data = at(1).mux(token_header.zext(w), at(4).mux(packet_header.zext(w), payload));
    let last_beat = beat.q.eq(bpe - 1u32);
    let tx_last = at(1) | at(7) & last_beat & left.q.eq(1u32);
    let fire = tx_valid & tx_ready;
    d.output("m_axis_tdata", tx_data);
    d.output("m_axis_tkeep", d.lit((1u128 << wb) - 1, wb));
    d.output("m_axis_tlast", tx_last);
    d.output("m_axis_tvalid", tx_valid);

    // Reads of the dats: every dat's read address is the send table's entry.
    let send_addr = sends.read(send_ptr.q).named("send_address");
    let mut read_data = d.lit(0, bpe_max * w);
    for (k, x) in t.dats.iter().enumerate() {
        d.output(&format!("{}_rd_addr", x.name), send_addr.resize(x.addr_bits));
        let data = d.input(&format!("{}_rd_data", x.name), x.bits);
        read_data = cur_dat.q.eq(k as u128).mux(data.zext(bpe_max * w), read_data);
    }

    let no_tokens = token_count.eq(0u32);
    let last_token = tok.q.eq(token_count - 1u32);
    let pkt_done = pkt.q.eq(end_packet);
    state
        .next_when(begin, no_tokens.mux(d.lit(2, 4), d.lit(1, 4)))
        .next_when(at(1) & fire & last_token, d.lit(2, 4))
        .next_when(at(2), pkt_done.mux(d.lit(8, 4), p_new.mux(d.lit(3, 4), d.lit(4, 4))))
        .next_when(at(3) & credit_here, d.lit(4, 4))
        .next_when(at(4) & fire, d.lit(5, 4))
        .next_when(at(5), d.lit(6, 4))
        .next_when(at(6), d.lit(7, 4))
        .next_when(at(7) & fire & last_beat, left.q.eq(1u32).mux(d.lit(2, 4), d.lit(5, 4)))
        .next_when(!sync, d.lit(0, 4));
    step.next_when(begin, index);
    tok.next_when(at(1) & fire, tok.q + 1u32).next_when(begin, d.lit(0, tb));
    pkt.next_when(at(7) & fire & last_beat & left.q.eq(1u32), pkt.q + 1u32).next_when(begin, first_packet);
    cur_dst.next_when(at(2), p_dst);
    cur_dat.next_when(at(2), p_dat);
    position.next_when(at(2), p_pos);
    left.next_when(at(2), p_count).next_when(at(7) & fire & last_beat, left.q - 1u32);
    send_ptr.next_when(at(6), send_ptr.q + 1u32).next_when(begin, rom(&d, &send_first, sab, index));
    element.next_when(at(6), read_data);
    beat.next_when(at(7) & fire, beat.q + 1u32).next_when(at(6), d.lit(0, beat.q.width));

    d.section("receiving: tokens become credits, values go to the addresses their header names");
    let rx_data = d.input("s_axis_tdata", w);
    let rx_valid = d.input("s_axis_tvalid", 1);
    let rx_last = d.input("s_axis_tlast", 1);
    let _ = d.input("s_axis_tkeep", wb);
    d.output("s_axis_tready", one);
    let in_packet = d.reg("rx_in_packet", 1, 0);
    let header_now = rx_valid & !in_packet.q;
    let hf = |name: &str| {
        let (lo, w) = field(name);
        rx_data.bits(lo, w)
    };
    let src = (0..nodes).fold(d.lit(0, bits_for(nodes)), |acc, n| {
        let c = t.config.coords(n);
        (hf("src_x").eq(c[0] as u128) & hf("src_y").eq(c[1] as u128) & hf("src_z").eq(c[2] as u128)).mux(d.lit(n as u128, bits_for(nodes)), acc)
    });
    let token = header_now & hf("tag").eq(TOKEN_TAG as u128);
    for (n, c) in credits.iter().enumerate() {
        let got = token & src.eq(n as u128);
        let used = at(3) & credit_here & cur_dst.q.eq(n as u128);
        c.next_when(got & !used, c.q + 1u32).next_when(used & !got, c.q - 1u32);
    }
    let rx_dat = d.reg("rx_dat", pf[1], 0);
    let rx_index = d.reg("rx_index", rab, 0);
    let rx_beat = d.reg("rx_beat", bits_for(bpe_max + 1), 0);
    let assembly = d.reg("rx_assembly", bpe_max * w, 0);
    let mut base = d.lit(0, rab);
    for (&(s, k), &b) in &t.recv_base {
        base = (src.eq(s as u128) & hf("tag").eq(k as u128)).mux(d.lit(b as u128, rab), base);
    }
    let payload_now = rx_valid & in_packet.q;
    let rx_bpe = rom(&d, &beat_counts, bw, rx_dat.q);
    let element_ends = payload_now & rx_beat.q.eq(rx_bpe - 1u32);
    in_packet.next_when(rx_valid, !rx_last);
    rx_dat.next_when(header_now, hf("tag").bits(0, pf[1]));
    rx_index.next_when(header_now, base + hf("user").resize(rab)).next_when(element_ends, rx_index.q + 1u32);
    rx_beat.next_when(payload_now, element_ends.mux(d.lit(0, rx_beat.q.width), rx_beat.q + 1u32)).next_when(header_now, d.lit(0, rx_beat.q.width));
    let placed: Vec<Sig> = (0..bpe_max).map(|b| rx_beat.q.eq(b as u128).mux(rx_data, assembly.q.bits(b * w, w))).collect();
    let whole = d.cat(&placed.into_iter().rev().collect::<Vec<_>>());
    assembly.next_when(payload_now, whole);
    let target = recv.read(rx_index.q).named("receive_address");
    for (k, x) in t.dats.iter().enumerate() {
        d.output(&format!("{}_wr_en", x.name), element_ends & rx_dat.q.eq(k as u128));
        d.output(&format!("{}_wr_addr", x.name), target.resize(x.addr_bits));
        d.output(&format!("{}_wr_data", x.name), whole.bits(0, x.bits));
    }
    let received = d.reg("received", 17, 0);
    received.next_when(element_ends, received.q + 1u32).next_when(begin, d.lit(0, 17));

    d.section("done: every packet sent and every expected element placed");
    let complete = at(8) & received.q.eq(expected);
    served.next_when(complete, one).next_when(!sync, zero);
    d.output("halo_done", sync & (served.q | !found));
    d.counter("halo_tokens_received", token);
    d.counter("halo_packets_sent", at(4) & fire);
    d.counter("halo_elements_received", element_ends);
    // A data packet for a node not at a refresh step: the token protocol rules it out.
    d.counter("halo_unexpected", header_now & !token & at(0));
    Ok(d.finish())
}
