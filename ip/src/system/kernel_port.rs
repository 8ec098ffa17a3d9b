//! A kernel wired to an IntraNode port (APEIRON-style): packets tagged with the kernel's input
//! tag feed it, its results leave as packets with its output tag to a destination the register
//! window holds.
//!
//! Inside (`<node>_kernel_p<p>`):
//! `s_axis` (the router's output p) → dispatcher (tag = `input_tag`; other tags dropped whole,
//! counted in `dropped`) → gearbox (port words → the kernel's input beat) → kernel → answer
//! framing → gearbox (the kernel's output beat → port words) → aggregator (header: `dst`,
//! `output_tag`, length) → `m_axis` (the router's input p). With `kernel_clock`, the gearboxes,
//! the kernel and the answer framing run on `kernel_clk`, behind a clock-crossing FIFO each way;
//! everything else, the destination and the counters stay on `clk`.
//!
//! Framing: each input packet is a frame of kernel beats; a payload that is not a whole number of
//! beats is padded with zero words. A per-beat kernel answers each input packet of `n` beats with
//! one packet of its `n` output beats (the count, from the header, rides with the payload and
//! waits in a queue beside the kernel); a per-vector or stream-offset kernel treats each packet as
//! one vector. A packet without payload is answered by nothing.
//!
//! Ports: `clk`, `rst` (and `kernel_clk`, `kernel_rst`), `s_axis_*` (port width, `tkeep`, `tlast`), `m_axis_*` (port width,
//! `tlast`; the router reads the length from the header), `dst` (22 bits: `x | y << 6 | z << 12
//! | port << 18`), counters `packets_in`, `packets_out`, `dropped`.

use crate::Error;
use std::rc::Rc;

use weft_hdl::netlist::verilog::ports;
use weft_hdl::netlist::{Axis, AxisShape, Design, Netlist, Source};
use weft_hdl::pipeline::{dsl, Kernel, Stages};
use weft_hdl::sig;

use crate::axis::gearbox::{from_words, gearbox};
use crate::axis::packetize::{aggregate, dispatch, sideband};
use crate::router::header::field;

/// A kernel on an IntraNode port, as a system description gives it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelPort {
    /// The IntraNode port the kernel sits on, below the router's `local_ports`.
    pub port: usize,
    /// The kernel's DSL source (a shipped kernel's or a user's file).
    pub source: String,
    /// Where the source came from, for messages.
    pub origin: String,
    /// Packets with this tag feed the kernel.
    pub input_tag: u16,
    /// Its result packets carry this tag.
    pub output_tag: u16,
    /// The destination register's value after reset: `x | y << 6 | z << 12 | port << 18`.
    pub dst: u32,
    /// The kernel runs on `kernel_clk` (its own clock), behind a clock-crossing FIFO each way.
    pub kernel_clock: bool,
}

/// The destination packed as the register and the header's low bits hold it.
pub fn pack_dst(x: usize, y: usize, z: usize, port: usize) -> u32 {
    (x | y << 6 | z << 12 | port << 18) as u32
}

impl KernelPort {
    /// The kernel parsed from `source`; errors name `origin` and the line and column.
    pub fn kernel(&self) -> Result<Kernel, Error> {
        dsl::parse(&self.source).map_err(Error::kernel(&self.origin))
    }

    /// The kernel's netlist at balanced operator depths and its latency in cycles.
    fn netlist(&self) -> Result<(Kernel, Netlist, usize), Error> {
        let k = self.kernel()?;
        let (net, schedule) = k.netlist(&Stages::balanced(k.format)).map_err(|e| e.context(&self.origin))?;
        Ok((k, net, schedule.latency))
    }
}

/// Bits of a stream port of `net` (`s_axis_tdata`, …), 0 when absent.
pub(crate) fn port_width(net: &Netlist, name: &str) -> usize {
    ports(net).iter().find(|p| p.name == name).map_or(0, |p| p.width)
}

/// Builds the wrapper of `kp` for a port of `width` bits that carries packets of at most
/// `max_packet_bytes` payload bytes.
pub fn kernel_port(width: usize, max_packet_bytes: usize, kp: &KernelPort) -> Result<Netlist, Error> {
    let (k, net, latency) = kp.netlist()?;
    let what = format!("the kernel `{}` on port {} ({})", k.name, kp.port, kp.origin);
    let (kin, kout) = (port_width(&net, "s_axis_tdata"), port_width(&net, "m_axis_tdata"));
    if kin % 32 != 0 || kout % 32 != 0 {
        return Err(Error::Config(format!("{what}: beats of {kin} bits in and {kout} out; a wired kernel needs whole 32-bit words each way")));
    }
    let (in_bytes, out_bytes) = (kin / 8, kout / 8);
    // The longest answer: one output beat per input beat of the longest packet.
    let answer = if k.per_vector { out_bytes } else { max_packet_bytes.div_ceil(in_bytes) * out_bytes };
    if answer > max_packet_bytes {
        return Err(Error::Config(format!(
            "{what}: a packet of `max_packet_bytes` = {max_packet_bytes} is up to {} beats of {in_bytes} bytes, answered by {answer} bytes, more than a packet holds: raise `node.max_packet_bytes` to at least {answer}",
            max_packet_bytes.div_ceil(in_bytes)
        )));
    }
    let net = Rc::new(net);
    let d = Design::new();
    let fabric = 0;
    let kernel_side = if kp.kernel_clock { d.net().domain_named("kernel_clk") } else { fabric };
    let packets = d.axis_in("s_axis", AxisShape::data(width).with_keep());
    let dst = d.input("dst", 22);

    d.section("packets with the kernel's tag, payload only (other tags dropped and counted), each beat with its packet's beat count");
    // A packet of `length` bytes is ceil(ceil(length / 4) / words) kernel beats (a per-beat
    // kernel answers with as many): division by the word count as a multiply by 2^26 / words
    // rounded up, exact below 2^13 words. Taken from the header as it passes, it rides with
    // the payload, so the answer's framing never waits for input behind a stalled kernel.
    let words_in = (kin / 32) as u128;
    let length = packets.0.data.bits(field("length").0, 14);
    let words = (length.zext(16) + 3u32).bits(2, 14);
    let beats = ((words.zext(40) + d.lit(words_in - 1, 40)).mul(d.lit((1u128 << 26).div_ceil(words_in), 40))).bits(26, 14);
    let (mut channels, header) = dispatch(&d, "", &packets, &[kp.input_tag]);
    let payload = channels.remove(0);
    let frame_beats = d.reg("frame_beats", 14, 0);
    frame_beats.next_when(header, beats);
    d.counter("packets_in", payload.fire() & payload.0.last.unwrap());
    let payload = Source(Axis { shape: payload.0.shape.with_user(14), user: Some(frame_beats.q), ..payload.0.clone() });
    let payload = if kp.kernel_clock { d.stream_crossing("to_kernel", 16, &payload, fabric, kernel_side) } else { payload };
    d.net().set_domain(kernel_side);

    d.section("framing: each frame's beat count waits beside the kernel for its output beats");
    let (payload, counts) = if k.per_vector {
        (payload, None)
    } else {
        let f = payload.0.clone();
        let pop = d.later(1);
        let push = d.later(1);
        let counts = d.queue("answer", (latency + 8).next_power_of_two(), push, &[f.user.unwrap().named("packet_beats")], pop);
        // A frame's first beat enters only when its count has a place in the queue.
        let in_frame = d.reg("framing_in_frame", 1, 0);
        let gate = in_frame.q | counts.space;
        let ready = d.later(1);
        payload.ready(ready & gate);
        let taken = f.valid & gate & ready;
        push.define(taken & !in_frame.q);
        in_frame.set_when(taken & !f.last.unwrap()).clear_when(taken & f.last.unwrap());
        (Source(Axis { valid: f.valid & gate, ready: Some(ready), ..f }), Some((counts, pop)))
    };
    let payload = Source(Axis { shape: payload.0.shape.with_user(0), user: None, ..payload.0.clone() });
    let beats = gearbox(&d, "in_gear", &payload, kin / 32, None);

    d.section(&format!("the kernel: {kin} bits in, {kout} bits out, {latency} cycles"));
    let kernel = d.instance_clocked(&net, &k.name, "kernel", &|c| if c == "clk" && kp.kernel_clock { "kernel_clk".to_string() } else { c.to_string() });
    let b = &beats.0;
    let data_in = kernel.input("s_axis_tdata");
    data_in.define(b.data.bits(0, data_in.width));
    if port_width(&net, "s_axis_tkeep") > 0 {
        kernel.input("s_axis_tkeep").define(d.lit((1u128 << (kin / 8)) - 1, kin / 8));
    }
    if port_width(&net, "s_axis_tuser") > 0 {
        kernel.input("s_axis_tuser").define(d.lit(0, port_width(&net, "s_axis_tuser")));
    }
    if port_width(&net, "s_axis_tlast") > 0 {
        kernel.input("s_axis_tlast").define(b.last.expect("gearbox beats carry tlast"));
    }
    kernel.input("s_axis_tvalid").define(b.valid);
    beats.ready(kernel.output("s_axis_tready"));
    let out_valid = kernel.output("m_axis_tvalid");
    let out_ready = d.later(1);

    d.section("the answer's last beat: a per-vector kernel's one beat, else the queued count's");
    let (out_last, answer_bytes, out_valid) = match counts {
        None => (d.lit(1, 1), d.lit(out_bytes as u128, 14), out_valid),
        Some((counts, pop)) => {
            let out_beats = d.reg("out_beats", 14, 0);
            sig!(answer_last = (out_beats.q + 1u32).eq(counts.head[0]));
            let to_kernel = out_ready & counts.valid;
            let out_fire = out_valid & to_kernel;
            out_beats.next_when(out_fire, answer_last.mux(d.lit(0, 14), out_beats.q + 1u32));
            pop.define(out_fire & answer_last);
            kernel.input("m_axis_tready").define(to_kernel);
            (answer_last, counts.head[0].mul(d.lit(out_bytes as u128, 14)).bits(0, 14), out_valid & counts.valid)
        }
    };
    if k.per_vector {
        kernel.input("m_axis_tready").define(out_ready);
    }

    d.section("results to packets: port words, then a header to the destination register");
    let results = Source(Axis {
        name: "kernel.m_axis".into(),
        shape: AxisShape::data(kout),
        data: from_words(&d, &(0..kout / 32).map(|j| kernel.output("m_axis_tdata").bits(32 * j, 32)).collect::<Vec<_>>()),
        keep: None,
        last: Some(out_last),
        user: None,
        valid: out_valid,
        ready: Some(out_ready),
    });
    let words = gearbox(&d, "out_gear", &results, width / 32, Some(answer_bytes));
    let words = if kp.kernel_clock { d.stream_crossing("from_kernel", 16, &words, kernel_side, fabric) } else { words };
    d.net().set_domain(fabric);
    let length = words.0.user.expect("the length rides the gearbox");
    let frames = Source(Axis { shape: words.0.shape.with_user(0), user: None, ..words.0.clone() });
    let answers = aggregate(&d, "out_", &frames, sideband(dst, d.lit(kp.output_tag as u128, 16), length));
    let m = d.axis_out("m_axis", AxisShape::data(width));
    d.counter("packets_out", answers.fire() & answers.0.last.unwrap());
    d.connect(&answers, &m)?;
    Ok(d.finish())
}
