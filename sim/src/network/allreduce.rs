//! One allreduce on a torus of nodes that have the engine ([`weft_ip::system::allreduce`]): the
//! harness writes every node's program into its register window, then each node's host streams
//! its vector into port `a` as packets (a header whose `length` counts, then the payload) and
//! takes the result packets, with random gaps and back-pressure on the host streams if asked.
//! Every result packet must obey the packet format: clean check bits, addressed to that node and
//! port, hops equal to the distance from its source, `tkeep` marking exactly the bytes its
//! `length` counts.

use crate::link::Value;
use crate::Error;
use weft_ip::regmap::{allreduce_stripe_addr, ALLREDUCE};
use weft_ip::router::header::{check, Checked, Header};
use weft_ip::router::route::distance;
use weft_ip::system::allreduce::unit::MORE;
use weft_ip::system::allreduce::{packet_sizes, plan, stripes, Collective, ElementType, Program, ReduceOp, Striping, ERROR_TAG, RESULT_TAG};
use weft_ip::weft_hdl::testbench::Rng;

use super::{bits as field, scalar, value, Torus};
use crate::link::Device;

/// What one allreduce took and gave.
#[derive(Clone, Debug)]
pub struct AllreduceRun {
    /// Cycles from the first contribution beat offered to the last result beat taken.
    pub cycles: u64,
    /// Each node's result, as element bits.
    pub results: Vec<Vec<u128>>,
    /// The nodes whose host received the engine's timeout packet (tag [`ERROR_TAG`]) instead of
    /// a whole result.
    pub timed_out: Vec<usize>,
}

/// What operations of one collective run back to back took and gave.
#[derive(Clone, Debug)]
pub struct Batch {
    /// Cycles from the first contribution beat offered to the last result beat taken.
    pub cycles: u64,
    /// Each operation's results, `[operation][node]` (empty where a node gets nothing).
    pub results: Vec<Vec<Vec<u128>>>,
    /// The nodes whose host received the engine's timeout packet.
    pub timed_out: Vec<usize>,
}

/// A host: its contribution as beats (data chunks, last), the next beat, and what came back.
struct Host {
    beats: Vec<(Vec<u128>, bool)>,
    next: usize,
    offered: bool,
    result: Vec<u128>,
    /// Elements still to come in the packet being received (`None` between packets).
    receiving: Option<usize>,
    /// The engine reported a timeout to this host.
    timed_out: bool,
    /// Result packets received.
    packets: usize,
}

impl<D: Device> Torus<D> {
    /// Writes every node's allreduce program ([`plan()`]) for the engine on ports `[a, b]`, and
    /// the operator `op` (register `allreduce_op`, the same on every node).
    pub fn program_allreduce(&mut self, ports: [usize; 2], op: ReduceOp) -> Result<(), Error> {
        let programs = plan(&self.config, ports);
        self.write_programs(&programs, op)
    }

    /// Writes every node's program of the collective `c` ([`Collective::programs`]: the butterfly
    /// for short vectors where it applies) for the unit on ports `[a, b]`, and the operator `op`.
    pub fn program_collective(&mut self, c: Collective, ports: [usize; 2], op: ReduceOp) -> Result<(), Error> {
        let programs = c.programs(&self.config, ports).map_err(|e| Error::Config(e.to_string()))?;
        self.write_programs(&programs, c.operator(op))
    }

    /// Writes node `n`'s `programs[n]` (flags, destinations, the butterfly's size limit) and the
    /// operator `op` into its register window.
    fn write_programs(&mut self, programs: &[Program], op: ReduceOp) -> Result<(), Error> {
        for (n, p) in programs.iter().enumerate() {
            for (k, v) in [p.flags, p.dst_a, p.dst_b, op.code()].into_iter().enumerate() {
                self.axil_write(n, ALLREDUCE + 4 * k as u32, v)?;
            }
            self.axil_write(n, ALLREDUCE + 24, p.small_bytes)?;
        }
        Ok(())
    }

    /// Runs one collective `c` of the user's vectors `inputs` (one per node, equal lengths, elements
    /// of `ty` as bits) with the operator `op` (broadcast, allgather and barrier run `or`), on the
    /// engine at ports `[a, b]`: writes every node's program, sends each host's contribution as
    /// packets of at most `packet_bytes`, and returns each node's result as the user sees it
    /// ([`Collective::result`]); `pressure` and `limit` as in [`Torus::allreduce`].
    pub fn collective(
        &mut self,
        c: Collective,
        ports: [usize; 2],
        ty: ElementType,
        op: ReduceOp,
        inputs: &[Vec<u128>],
        packet_bytes: usize,
        pressure: Option<u64>,
        limit: u64,
    ) -> Result<AllreduceRun, Error> {
        let run = self.collectives(c, ports, ty, op, &[inputs.to_vec()], packet_bytes, pressure, limit, &mut |_| {})?;
        Ok(AllreduceRun { results: run.results.into_iter().next().unwrap_or_default(), cycles: run.cycles, timed_out: run.timed_out })
    }

    /// Runs operations of one collective back to back, as many as `ops` holds (each the user's
    /// vectors, one per node, equal lengths within an operation): every host streams the
    /// contributions of all of them without waiting, each operation in its own packets, so
    /// several are in flight along the chain. Returns each operation's results (indexed
    /// `[operation][node]`); `at_each` runs every cycle (to pull a cable, say).
    pub fn collectives(
        &mut self,
        c: Collective,
        ports: [usize; 2],
        ty: ElementType,
        op: ReduceOp,
        ops: &[Vec<Vec<u128>>],
        packet_bytes: usize,
        pressure: Option<u64>,
        limit: u64,
        at_each: &mut dyn FnMut(&mut Self),
    ) -> Result<Batch, Error> {
        let config = self.config.clone();
        let nodes = config.nodes();
        let programs = c.programs(&config, ports).map_err(|e| Error::Config(e.to_string()))?;
        self.write_programs(&programs, c.operator(op))?;
        let (mut sends, mut expects, mut packets, mut ids) = (vec![vec![]; nodes], vec![0; nodes], vec![], vec![]);
        let mut delivered = vec![];
        for (k, inputs) in ops.iter().enumerate() {
            let contributions = c.contributions(&config, inputs);
            let n = inputs.first().map_or(0, |v| v.len());
            let counts: Vec<usize> = (0..nodes).map(|node| c.delivered(&config, node, n)).collect();
            let bytes = contributions.iter().map(|v| v.len()).max().unwrap_or(0) * ty.bytes();
            let sizes = c.packets(&config, bytes, packet_bytes);
            // Operation k's packets carry id k + 1 in the header's user word.
            ids.extend(sizes.iter().map(|_| k as u32 + 1));
            packets.extend(sizes);
            for node in 0..nodes {
                sends[node].extend(&contributions[node]);
                expects[node] += counts[node];
            }
            delivered.push(counts);
        }
        let run = self.engine_operation(ports[0], ty.bits(), &sends, &expects, &packets, &ids, pressure, limit, at_each)?;
        // Each host's results in operation order, cut back into operations.
        let mut at = vec![0; nodes];
        let results = delivered
            .iter()
            .map(|counts| {
                (0..nodes)
                    .map(|node| {
                        let got = run.results[node][at[node]..(at[node] + counts[node]).min(run.results[node].len())].to_vec();
                        at[node] += counts[node];
                        if got.is_empty() {
                            got
                        } else {
                            c.result(&config, node, got)
                        }
                    })
                    .collect()
            })
            .collect();
        Ok(Batch { cycles: run.cycles, results, timed_out: run.timed_out })
    }

    /// Runs one collective `c` of the user's vectors `inputs` (one per node, equal lengths,
    /// elements of `ty` as bits) with the operator `op` (broadcast, allgather and barrier run
    /// `or`), striped over the engines on `engines` (ports `[a, b]` each, the collective unit's
    /// first; [`stripes::chains`] may use fewer): writes every engine's program for its chain,
    /// sends slice k of each host's contribution to engine k as packets of at most
    /// `packet_bytes`, and returns the striping and each node's result as the user sees it
    /// ([`Collective::result`]); `pressure` and `limit` as in [`Torus::allreduce`]. An engine
    /// whose slice is empty (a vector shorter than the chains are many) has no part.
    #[allow(clippy::too_many_arguments)]
    pub fn collective_striped(
        &mut self,
        c: Collective,
        engines: &[[usize; 2]],
        ty: ElementType,
        op: ReduceOp,
        inputs: &[Vec<u128>],
        packet_bytes: usize,
        pressure: Option<u64>,
        limit: u64,
    ) -> Result<(Striping, AllreduceRun), Error> {
        let config = self.config.clone();
        let nodes = config.nodes();
        let striping = stripes::chains(&config, engines.len()).map_err(|e| Error::Config(e.to_string()))?;
        let k = striping.chains.len();
        let plans = stripes::plans(&config, &striping, c, engines).map_err(|e| Error::Config(e.to_string()))?;
        // The unit's program as for a plain chain (`small_bytes` 0: never the butterfly), with the
        // operator; each stripe's role and destinations in its own registers.
        self.write_programs(&plans[0], c.operator(op))?;
        for (s, programs) in plans.iter().enumerate().skip(1) {
            for (n, p) in programs.iter().enumerate() {
                for (i, v) in [p.flags, p.dst_a, p.dst_b].into_iter().enumerate() {
                    self.axil_write(n, allreduce_stripe_addr(s) + 4 * i as u32, v)?;
                }
            }
        }
        let contributions = c.contributions(&config, inputs);
        let len = contributions.iter().map(|v| v.len()).max().unwrap_or(0);
        let n = inputs.first().map_or(0, |v| v.len());
        let cut: Vec<Vec<Vec<u128>>> = (0..k).map(|s| contributions.iter().map(|v| if v.is_empty() { vec![] } else { v[stripes::slice(len, s, k)].to_vec() }).collect()).collect();
        // Engine k delivers slice k of what the unit alone would deliver.
        let expects: Vec<Vec<usize>> = (0..k).map(|s| (0..nodes).map(|node| stripes::slice(c.delivered(&config, node, n), s, k).len()).collect()).collect();
        let packets: Vec<Vec<usize>> = (0..k).map(|s| packet_sizes(ty.bytes() * stripes::slice(len, s, k).len(), packet_bytes)).collect();
        let ids: Vec<Vec<u32>> = packets.iter().map(|p| vec![0; p.len()]).collect();
        let lanes: Vec<Lane> = (0..k).map(|s| Lane { port: engines[s][0], vectors: &cut[s], expects: &expects[s], packets: &packets[s], ids: &ids[s] }).collect();
        let (cycles, results, timed_out) = self.engine_lanes(&lanes, ty.bits(), pressure, limit, &mut |_| {})?;
        let results = (0..nodes)
            .map(|node| {
                let whole: Vec<u128> = results.iter().flat_map(|r| r[node].iter().copied()).collect();
                if whole.is_empty() {
                    whole
                } else {
                    c.result(&config, node, whole)
                }
            })
            .collect();
        Ok((striping, AllreduceRun { cycles, results, timed_out }))
    }

    /// Sets every node's watchdog (register `allreduce_timeout`): `cycles` without progress after
    /// which an operation in flight is reported; 0 never.
    pub fn set_allreduce_timeout(&mut self, cycles: u32) -> Result<(), Error> {
        for n in 0..self.config.nodes() {
            self.axil_write(n, ALLREDUCE + 20, cycles)?;
        }
        Ok(())
    }

    /// Runs one allreduce of `vectors` (one per node, equal lengths; elements of `bits` bits, 16,
    /// 32 or 64) through port `a`, each vector sent as packets of `packets` bytes (non-zero
    /// multiples of the element's bytes, summing to the vector's); `pressure` (a seed) adds random
    /// gaps to the hosts' streams and random back-pressure on their results. A node given an
    /// empty vector sends nothing (so the operation cannot complete): the run then ends when
    /// every other host has its result or the engine's timeout packet. Fails after `limit`
    /// cycles.
    pub fn allreduce(&mut self, a: usize, bits: usize, vectors: &[Vec<u128>], packets: &[usize], pressure: Option<u64>, limit: u64) -> Result<AllreduceRun, Error> {
        let len = vectors.iter().map(|v| v.len()).max().unwrap_or(0);
        let expects: Vec<usize> = vectors.iter().map(|v| if v.is_empty() { 0 } else { len }).collect();
        self.engine_operation(a, bits, vectors, &expects, packets, &vec![0; packets.len()], pressure, limit, &mut |_| {})
    }

    /// Runs one operation of the engine: each node's host sends `vectors[n]` (empty: nothing) as
    /// packets of `packets` bytes and takes `expects[n]` result elements (0: none). The run ends
    /// when every host that expects a result has it whole or has the engine's timeout packet.
    /// Packet `k` of every host carries operation id `ids[k]` in its header's user word (and
    /// [`MORE`] in its tag when the next packet carries the same id); the `k`-th result packet a
    /// host receives must carry the same id.
    #[allow(clippy::too_many_arguments)]
    fn engine_operation(
        &mut self,
        a: usize,
        bits: usize,
        vectors: &[Vec<u128>],
        expects: &[usize],
        packets: &[usize],
        ids: &[u32],
        pressure: Option<u64>,
        limit: u64,
        at_each: &mut dyn FnMut(&mut Self),
    ) -> Result<AllreduceRun, Error> {
        let lane = Lane { port: a, vectors, expects, packets, ids };
        let (cycles, mut results, timed_out) = self.engine_lanes(&[lane], bits, pressure, limit, at_each)?;
        Ok(AllreduceRun { cycles, results: results.remove(0), timed_out })
    }

    /// [`Torus::engine_operation`] on several engines at once, one [`Lane`] each (every lane's
    /// hosts at its own port `a`): the cycles, each lane's results per node, and the nodes
    /// whose host on some lane received the timeout packet.
    fn engine_lanes(&mut self, lanes: &[Lane], bits: usize, pressure: Option<u64>, limit: u64, at_each: &mut dyn FnMut(&mut Self)) -> Result<(u64, Vec<Vec<Vec<u128>>>, Vec<usize>), Error> {
        let config = self.config.clone();
        let nodes = config.nodes();
        let size = bits / 8;
        let lanes_per_beat = config.width / bits;
        if ![16, 32, 64].contains(&bits) {
            return Err(Error::Config(format!("allreduce elements of {bits} bits: allowed 16, 32, 64")));
        }
        let mut hosts: Vec<Host> = vec![];
        let mut handles = vec![];
        for lane in lanes {
            let Lane { port: a, vectors, packets, ids, .. } = *lane;
            let len = vectors.iter().map(|v| v.len()).max().unwrap_or(0);
            if packets.iter().any(|p| p % size != 0 || *p == 0) || packets.iter().sum::<usize>() != size * len {
                return Err(Error::Config(format!("packets {packets:?}: want non-zero multiples of {size} summing to {} bytes", size * len)));
            }
            for n in 0..nodes {
                let mut beats = vec![];
                let mut at = 0;
                let per_chunk = 128 / bits;
                for (k, (p, id)) in packets.iter().zip(ids).enumerate().filter(|_| !vectors[n].is_empty()) {
                    let chunk = &vectors[n][at..at + p / size];
                    at += p / size;
                    let c = config.coords(n);
                    // Every packet of an operation but its last says more follow.
                    let more = ids.get(k + 1) == Some(id);
                    let tag = if more { MORE } else { 0 };
                    let header = Header { dst: c, dst_port: a, length: size * chunk.len(), tag, user: *id, ..Header::default() };
                    let mut head = vec![header.pack()];
                    head.resize(config.width / 128, 0);
                    beats.push((head, false));
                    let words: Vec<&[u128]> = chunk.chunks(lanes_per_beat).collect();
                    for (i, w) in words.iter().enumerate() {
                        let data = (0..config.width / 128).map(|k| (0..per_chunk).fold(0u128, |acc, j| acc | w.get(per_chunk * k + j).copied().unwrap_or(0) << (bits * j))).collect();
                        beats.push((data, i + 1 == words.len()));
                    }
                }
                hosts.push(Host { beats, next: 0, offered: false, result: vec![], receiving: None, timed_out: false, packets: 0 });
                handles.push(self.local[n].iter().find(|l| l.0 == a).map(|l| (l.1, l.2)).ok_or_else(|| Error::Config(format!("node {n} has no stream port {a}")))?);
            }
        }
        // Host `i` is lane `i / nodes`'s host on node `i % nodes`.
        let expect = |i: usize| lanes[i / nodes].expects[i % nodes];
        let mut rng = Rng::new(pressure.unwrap_or(0));
        let start = self.cycle;
        loop {
            if hosts.iter().enumerate().all(|(i, h)| expect(i) == 0 || h.timed_out || h.result.len() == expect(i) && h.receiving.is_none()) {
                break;
            }
            if self.cycle - start > limit {
                let got: Vec<usize> = hosts.iter().map(|h| h.result.len()).collect();
                let sent: Vec<usize> = hosts.iter().map(|h| h.next).collect();
                let want: Vec<usize> = (0..hosts.len()).map(expect).collect();
                return Err(Error::Stuck(format!("collective not complete after {limit} cycles: beats sent {sent:?}, elements received {got:?} of {want:?}")));
            }
            let active = self.next_instant();
            let mut ready = vec![false; hosts.len()];
            for (i, host) in hosts.iter_mut().enumerate() {
                let (dev, h) = handles[i];
                if !host.offered && host.next < host.beats.len() && pressure.is_none_or(|_| rng.chance(80)) {
                    host.offered = true;
                }
                let (data, last) = if host.offered { (value(&host.beats[host.next].0), host.beats[host.next].1) } else { (Value::default(), false) };
                let d = &mut self.devices[dev];
                d.set(h.s_tdata, &data);
                d.set(h.s_tlast, &scalar(last as u64));
                d.set(h.s_tvalid, &scalar(host.offered as u64));
                ready[i] = pressure.is_none_or(|_| rng.chance(70));
                d.set(h.m_tready, &scalar(ready[i] as u64));
            }
            for d in self.devices.iter_mut() {
                d.settle();
            }
            for (i, host) in hosts.iter_mut().enumerate() {
                let (dev, h) = handles[i];
                let (n, a, ids) = (i % nodes, lanes[i / nodes].port, lanes[i / nodes].ids);
                let d = &mut self.devices[dev];
                if host.offered && d.get(h.s_tready)[0] & 1 == 1 {
                    host.next += 1;
                    host.offered = false;
                }
                if !(ready[i] && d.get(h.m_tvalid)[0] & 1 == 1) {
                    continue;
                }
                let data = d.get(h.m_tdata);
                let keep = field(&d.get(h.m_tkeep), 0, config.width / 8);
                let last = d.get(h.m_tlast)[0] & 1 == 1;
                let all = (1u128 << (config.width / 8)) - 1;
                match host.receiving {
                    None => {
                        let raw = field(&data, 0, 128);
                        let header = Header::unpack(raw);
                        if header.tag == ERROR_TAG && header.length == 0 && last && check(raw) == Checked::Clean(raw) && header.dst == config.coords(n) {
                            host.timed_out = true;
                            continue;
                        }
                        if header.tag != RESULT_TAG || !header.length.is_multiple_of(size) || last || keep != all {
                            return Err(Error::Mismatch(format!(
                                "node {n} at cycle {}: a result header with tag {:#x}, length {}, last {last}, tkeep {keep:#x}",
                                self.cycle, header.tag, header.length
                            )));
                        }
                        let hops = distance(&config, header.src, header.dst);
                        if check(raw) != Checked::Clean(raw) || header.dst != config.coords(n) || header.dst_port != a || header.src_port >= config.local_ports || header.hops != hops {
                            return Err(Error::Mismatch(format!("node {n} at cycle {}: a malformed result header {header:?} (at port {a}; {hops} hops from its source)", self.cycle)));
                        }
                        if ids.get(host.packets) != Some(&header.user) {
                            return Err(Error::Mismatch(format!(
                                "node {n} at cycle {}: result packet {} carries operation id {:#x}, want {:?}",
                                self.cycle,
                                host.packets,
                                header.user,
                                ids.get(host.packets)
                            )));
                        }
                        host.packets += 1;
                        host.receiving = Some(header.length / size);
                    }
                    Some(left) => {
                        let take = left.min(lanes_per_beat);
                        let want = if take == lanes_per_beat { all } else { (1u128 << (size * take)) - 1 };
                        if keep != want {
                            return Err(Error::Mismatch(format!("node {n} at cycle {}: a result beat of {take} elements with tkeep {keep:#x}", self.cycle)));
                        }
                        host.result.extend((0..take).map(|i| field(&data, bits * i, bits)));
                        if last != (take == left) {
                            return Err(Error::Mismatch(format!("node {n} at cycle {}: a result packet's tlast disagrees with its length", self.cycle)));
                        }
                        host.receiving = (!last).then_some(left - take);
                    }
                }
            }
            at_each(self);
            self.clock_instant(&active);
        }
        for (i, h) in hosts.iter().enumerate() {
            if !h.timed_out && h.result.len() != expect(i) {
                return Err(Error::Mismatch(format!("node {} (port {}): {} result elements, want {}", i % nodes, lanes[i / nodes].port, h.result.len(), expect(i))));
            }
        }
        let mut timed_out: Vec<usize> = hosts.iter().enumerate().filter(|(_, h)| h.timed_out).map(|(i, _)| i % nodes).collect();
        timed_out.sort();
        timed_out.dedup();
        let mut results = vec![];
        let mut hosts = hosts.into_iter();
        for _ in lanes {
            results.push(hosts.by_ref().take(nodes).map(|h| h.result).collect());
        }
        Ok((self.cycle - start, results, timed_out))
    }
}

/// One engine's hosts in [`Torus::engine_lanes`]: the port they use, what each node sends
/// (packets of `packets` bytes, ids `ids`) and how many result elements each expects.
#[derive(Clone, Copy)]
struct Lane<'a> {
    port: usize,
    vectors: &'a [Vec<u128>],
    expects: &'a [usize],
    packets: &'a [usize],
    ids: &'a [u32],
}
