//! The shipped stream buffers at the fabric's packet width (tdata, tkeep, tlast): register
//! slice, FIFO and clock-crossing FIFO, as netlist designs, with their built-in-simulator
//! testbenches.

use weft_hdl::netlist::stream_check::{check_stream_path, StreamClocks};
use weft_hdl::netlist::{AxisShape, Design, Netlist, Reset};
use weft_hdl::testbench::StreamStimulus;

use crate::Error;

/// Bytes and their packet boundaries.
pub fn packet_shape(width: usize) -> AxisShape {
    AxisShape::data(width).with_keep()
}

/// `axis_register_slice_w<width>`.
pub fn register_slice(width: usize) -> Netlist {
    let d = Design::new();
    let input = d.axis_in("s_axis", packet_shape(width));
    let out = d.register_slice("slice", &input);
    d.connect(&out, &d.axis_out("m_axis", packet_shape(width))).expect("same shape");
    d.finish()
}

/// `axis_fifo_w<width>_d<depth>`: `depth + 2` beats; output `fill`, the beats held.
pub fn fifo(width: usize, depth: usize) -> Netlist {
    let d = Design::new();
    let input = d.axis_in("s_axis", packet_shape(width));
    let (out, fill) = d.stream_fifo("fifo", depth, &input);
    d.connect(&out, &d.axis_out("m_axis", packet_shape(width))).expect("same shape");
    d.output("fill", fill);
    d.finish()
}

/// `axis_async_fifo_w<width>_d<depth>`: `s_axis` on `s_clk`/`s_rst`, `m_axis` on
/// `m_clk`/`m_rst`.
pub fn async_fifo(width: usize, depth: usize) -> Netlist {
    let d = Design::new();
    d.net().set_domain_ports(0, "s_clk", Reset::Derived);
    let m = d.net().domain_named("m_clk");
    let input = d.axis_in("s_axis", packet_shape(width));
    let out = d.stream_crossing("cdc", depth, &input, 0, m);
    d.connect(&out, &d.axis_out("m_axis", packet_shape(width))).expect("same shape");
    d.finish()
}

/// Random valid/ready patterns on both sides, then both sides always ready.
fn stimuli(seed: u64) -> [StreamStimulus; 4] {
    [
        StreamStimulus { beats: 2000, valid_percent: 50, ready_percent: 50, seed },
        StreamStimulus { beats: 2000, valid_percent: 95, ready_percent: 25, seed: seed + 1 },
        StreamStimulus { beats: 2000, valid_percent: 25, ready_percent: 95, seed: seed + 2 },
        StreamStimulus { beats: 2000, valid_percent: 100, ready_percent: 100, seed: seed + 3 },
    ]
}

fn summary(runs: &[(StreamStimulus, u64)]) -> String {
    runs.iter().map(|(s, cycles)| format!("{} beats in {cycles} cycles (valid {}%, ready {}%)", s.beats, s.valid_percent, s.ready_percent)).collect::<Vec<_>>().join("; ")
}

/// Every beat intact, in order, once; `s_axis_tready` does not change with `m_axis_tready`
/// within a cycle (it comes from a register).
pub fn register_slice_testbench(width: usize) -> Result<String, Error> {
    let mut runs = vec![];
    for s in stimuli(100) {
        let run = check_stream_path(register_slice(width), packet_shape(width), StreamClocks::ONE, s, &mut |eval, _| {
            let before = eval.get_output("s_axis_tready");
            let ready = eval.input("m_axis_tready").expect("port");
            let was = eval.get(ready);
            eval.set(ready, was ^ 1);
            eval.settle();
            let after = eval.get_output("s_axis_tready");
            eval.set(ready, was);
            eval.settle();
            (before == after).then_some(()).ok_or_else(|| "s_axis_tready follows m_axis_tready in the same cycle".to_string())
        })?;
        runs.push((s, run.cycles));
    }
    Ok(summary(&runs))
}

/// Every beat intact, in order, once; `fill` equals the beats accepted and not yet taken after
/// every edge.
pub fn fifo_testbench(width: usize, depth: usize) -> Result<String, Error> {
    let mut runs = vec![];
    let mut most = 0;
    for s in stimuli(200) {
        let run = check_stream_path(fifo(width, depth), packet_shape(width), StreamClocks::ONE, s, &mut |eval, inside| {
            most = most.max(inside);
            let fill = eval.get_output("fill") as usize;
            (fill == inside).then_some(()).ok_or_else(|| format!("fill {fill}, {inside} beats inside"))
        })?;
        runs.push((s, run.cycles));
    }
    if most != depth + 2 {
        return Err(Error::Mismatch(format!("the FIFO held at most {most} beats; it holds {}", depth + 2)));
    }
    Ok(format!("{}; full at {most} beats", summary(&runs)))
}

/// Write clock slower, equal, faster, at awkward ratios, with random handshakes.
pub fn async_fifo_testbench(width: usize, depth: usize) -> Result<String, Error> {
    let mut summary = vec![];
    for (s, m) in [(10, 10), (10, 7), (7, 10), (10, 31), (31, 10), (13, 17)] {
        let stimulus = StreamStimulus { beats: 1000, valid_percent: 70, ready_percent: 70, seed: s * 100 + m };
        let clocks = StreamClocks { input: (0, s), output: (1, m) };
        let run = check_stream_path(async_fifo(width, depth), packet_shape(width), clocks, stimulus, &mut |_, _| Ok(()))?;
        summary.push(format!("{s}:{m} {} beats", run.beats));
    }
    Ok(format!("clock periods write:read {}", summary.join(", ")))
}
