//! A testbench for a netlist design that passes one stream through (`s_axis_*` in, `m_axis_*`
//! out) on one clock or across two: random beats under random `tvalid`/`tready`, checked against
//! a software queue.

use std::collections::VecDeque;

use num_bigint::BigUint;

use super::eval::{Clocks, Evaluator};
use super::stream::AxisShape;
use super::Netlist;
use crate::stream::Beat;
use crate::testbench::{Rng, StreamRun, StreamStimulus};
use crate::Error;

/// The two sides' clock domains and periods (any unit; equal domains: one clock).
#[derive(Clone, Copy, Debug)]
pub struct StreamClocks {
    /// Domain index and clock period of `s_axis`.
    pub input: (usize, u64),
    /// Domain index and clock period of `m_axis`.
    pub output: (usize, u64),
}

impl StreamClocks {
    /// Both sides on domain 0.
    pub const ONE: StreamClocks = StreamClocks { input: (0, 1), output: (0, 1) };
}

fn random_beat(rng: &mut Rng, shape: AxisShape) -> Beat {
    let mut data = BigUint::default();
    for k in 0..shape.data.div_ceil(64) {
        data |= BigUint::from(rng.next_u64()) << (64 * k);
    }
    data &= (BigUint::from(1u8) << shape.data) - 1u8;
    let keep = if shape.keep { rng.next_u64() & ((1u128 << (shape.data / 8)) - 1) as u64 } else { 0 };
    let user = if shape.user > 0 { rng.next_u64() & ((1u128 << shape.user) - 1) as u64 } else { 0 };
    Beat { data, keep, last: shape.last && rng.chance(15), user }
}

/// Drives `stimulus.beats` random beats into `s_axis` of `net` (fields as `shape`) and takes
/// them from `m_axis`, with random `tvalid` and `tready`. Checks that every beat leaves intact,
/// in order, exactly once, and that a beat the output offers stays offered and unchanged until
/// taken. After every edge `observe` sees the design and the number of beats inside it (accepted
/// and not yet taken). Returns the output side's edges and the first beat's edge.
pub fn check_stream_path(
    net: Netlist,
    shape: AxisShape,
    clocks: StreamClocks,
    stimulus: StreamStimulus,
    observe: &mut dyn FnMut(&mut Evaluator, usize) -> Result<(), String>,
) -> Result<StreamRun, Error> {
    let seed = stimulus.seed;
    let mut eval = Evaluator::new(net);
    let mut rng = Rng::new(seed);
    let (din, dout) = (clocks.input.0, clocks.output.0);
    let mut schedule = Clocks::new(&[clocks.input.1, clocks.output.1], &[0, clocks.output.1 / 3]);
    let port = |eval: &Evaluator, name: &str| eval.input(name).ok_or_else(|| Error::Design(format!("the design has no input `{name}`")));
    let data_in = port(&eval, "s_axis_tdata")?;
    let drive = |eval: &mut Evaluator, beat: &Option<Beat>| {
        let b = beat.clone().unwrap_or_default();
        eval.set_big(data_in, &b.data);
        eval.set_input("s_axis_tvalid", u128::from(beat.is_some()));
        if shape.keep {
            eval.set_input("s_axis_tkeep", b.keep as u128);
        }
        if shape.last {
            eval.set_input("s_axis_tlast", u128::from(b.last));
        }
        if shape.user > 0 {
            eval.set_input("s_axis_tuser", b.user as u128);
        }
    };
    let sample = |eval: &Evaluator| Beat {
        data: eval.get_output_big("m_axis_tdata"),
        keep: if shape.keep { eval.get_output("m_axis_tkeep") as u64 } else { 0 },
        last: shape.last && eval.get_output("m_axis_tlast") == 1,
        user: if shape.user > 0 { eval.get_output("m_axis_tuser") as u64 } else { 0 },
    };
    drive(&mut eval, &None);
    eval.set_input("m_axis_tready", 0);
    eval.reset(2);
    let fail = |edge: u64, what: String| Error::Mismatch(format!("seed {seed}, output edge {edge}: {what}"));
    let (mut offered, mut stalled): (Option<Beat>, Option<Beat>) = (None, None);
    let mut expected: VecDeque<Beat> = VecDeque::new();
    let (mut sent, mut received, mut edges, mut ready) = (0, 0, 0u64, false);
    let mut first_out = None;
    let limit = 100 * stimulus.beats as u64 * 100 / stimulus.valid_percent.min(stimulus.ready_percent).max(1) + 1000;
    while received < stimulus.beats {
        let rising = if din == dout { vec![0, 1] } else { schedule.advance() };
        let (at_in, at_out) = (rising.contains(&0), rising.contains(&1));
        eval.settle();
        if at_in && offered.is_some() && eval.get_output("s_axis_tready") == 1 {
            expected.push_back(offered.take().unwrap());
            sent += 1;
        }
        if at_out {
            edges += 1;
            if edges > limit {
                return Err(fail(edges, format!("{received} of {} beats out; the design stopped moving", stimulus.beats)));
            }
            let valid = eval.get_output("m_axis_tvalid") == 1;
            if let Some(held) = stalled.take() {
                if !valid || sample(&eval) != held {
                    return Err(fail(edges, "a beat offered and not taken was withdrawn or changed".into()));
                }
            }
            if valid && ready {
                let got = sample(&eval);
                let want = expected.pop_front().ok_or_else(|| fail(edges, "a beat out that never went in".into()))?;
                if got != want {
                    return Err(fail(edges, format!("beat {received}: {got:?}, sent {want:?}")));
                }
                received += 1;
                first_out.get_or_insert(edges);
            } else if valid {
                stalled = Some(sample(&eval));
            }
        }
        let mut domains = vec![];
        if at_in {
            domains.push((din, false));
        }
        if at_out && dout != din {
            domains.push((dout, false));
        }
        eval.clock_domains(&domains);
        if at_in {
            if offered.is_none() && sent < stimulus.beats && rng.chance(stimulus.valid_percent) {
                offered = Some(random_beat(&mut rng, shape));
            }
            drive(&mut eval, &offered);
        }
        if at_out {
            ready = rng.chance(stimulus.ready_percent);
            eval.set_input("m_axis_tready", u128::from(ready));
        }
        eval.settle();
        observe(&mut eval, sent - received).map_err(|e| fail(edges, e))?;
    }
    Ok(StreamRun { cycles: edges, beats: received, first_out })
}
