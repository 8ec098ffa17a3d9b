//! The combining datapath both of a node's reduction units share: per beat and lane
//! `(a ∘ h) ∘ b`, `∘` the operation's [`ReduceOp`] in the system's [`ElementType`] (the sum in
//! two IEEE adders of [`ADD_STAGES`] stages each; `minimum`/`maximum` in comparators; int32 and
//! `or` in one register stage beside them). An operand a unit does not have is given as the
//! operator's identity, which leaves the others unchanged.

use std::rc::Rc;

use super::element::{ElementType, ReduceOp, REDUCE_OPS};
use crate::axis::gearbox::from_words;
use crate::Error;

use weft_hdl::float::FloatOperator;
use weft_hdl::netlist::{AxisShape, Design, Netlist, Sig};
use weft_hdl::pipeline::{dsl, Stages};

use crate::system::kernel_port::port_width;

/// Stages of each binary32 adder: 6 LUT levels (the router's), 12 cycles for the pair. Measured
/// with `weft bench allreduce` on torus_4x2x1 at 4096 elements (256-byte packets): 4 stages 1715
/// cycles, 5 stages 1961, 6 stages 1736, 7 stages 1978. The chain's rate is set by the links'
/// credit round trips with traffic both ways, which the engine's latency shifts.
pub const ADD_STAGES: usize = 6;

/// The combining kernel's DSL: lanes `a`, then `h`, then `b` (with `three` operands), then `x`
/// (bit patterns the join computed: the OR, and on int32 the operation's result, which the kernel
/// only delays); for lane `i` the outputs `s_i = (a_i + h_i) + b_i`, then every
/// `lo_i = min(min(a_i, h_i), b_i)`, then every `hi_i = max(…)`, then every `p_i = x_i` (without
/// `b`: `a_i + h_i`, `min(a_i, h_i)`, `max(a_i, h_i)`). For floating-point elements only (int32
/// is combined at the join, in a register stage).
pub fn combine_kernel(ty: ElementType, lanes: usize, three: bool) -> String {
    let names = |p: &str| (0..lanes).map(|i| format!("{p}{i}")).collect::<Vec<_>>();
    // A fixed-point lane holds at most 32 bits: a binary64 pattern travels as two halves.
    let (part, parts) = delayed_parts(ty);
    let x: Vec<String> = (0..lanes * parts).map(|k| format!("x{k}: ufix<{part},0>")).collect();
    let through: Vec<String> = (0..lanes * parts).map(|k| format!("p{k} = x{k}")).collect();
    let with_b = |v: String, f: &str, i: usize| if three { format!("{f}({v}, b{i})") } else { v };
    let mut outputs: Vec<String> = (0..lanes).map(|i| if three { format!("s{i} = (a{i} + h{i}) + b{i}") } else { format!("s{i} = a{i} + h{i}") }).collect();
    outputs.extend((0..lanes).map(|i| format!("lo{i} = {}", with_b(format!("ah_min{i}"), "min", i))));
    outputs.extend((0..lanes).map(|i| format!("hi{i} = {}", with_b(format!("ah_max{i}"), "max", i))));
    outputs.extend(through);
    let lets: String = (0..lanes).map(|i| format!("let ah_min{i} = min(a{i}, h{i})\nlet ah_max{i} = max(a{i}, h{i})\n")).collect();
    let operands = if three { [names("a"), names("h"), names("b")].concat() } else { [names("a"), names("h")].concat() };
    let inputs = [operands, x].concat().join(", ");
    let name = if three { format!("allreduce_{}_x{lanes}", ty.name()) } else { format!("combine2_{}_x{lanes}", ty.name()) };
    format!("kernel {name}: {}\ninput {inputs}\n{lets}output {}\n", ty.name(), outputs.join(", "))
}

/// The int32 combiner's stage: the join's results through a register slice, with the float
/// kernel's stream ports (`s_axis_*`, `m_axis_*`), so the join's ready never waits on its own
/// output.
fn int_stage(width: usize) -> Netlist {
    let d = Design::new();
    let input = d.axis_in("s_axis", AxisShape::data(width));
    let out = d.register_slice("stage", &input);
    d.connect(&out, &d.axis_out("m_axis", AxisShape::data(width))).expect("same shape");
    d.finish()
}

/// How the kernel carries an element's delayed bit pattern: parts of `.0` bits (at most 32, a
/// fixed-point lane's limit), `.1` of them, each in its own lane slot.
fn delayed_parts(ty: ElementType) -> (usize, usize) {
    let part = ty.bits().min(32);
    (part, ty.bits() / part)
}

/// The value of `values` (indexed by register value) that `op` selects.
pub(super) fn by_op<'d>(op: Sig<'d>, values: [Sig<'d>; 4]) -> Sig<'d> {
    op.bit(1).mux(op.bit(0).mux(values[3], values[2]), op.bit(0).mux(values[1], values[0]))
}

/// A `width`-bit word whose every lane is the identity of the operator `op` selects.
pub(super) fn identity_word<'d>(d: &'d Design, ty: ElementType, width: usize, op: Sig<'d>) -> Sig<'d> {
    let words = REDUCE_OPS.map(|o| d.lit((0..width / ty.bits()).fold(0u128, |w, i| w | o.identity(ty) << (i * ty.bits())), width));
    by_op(op, words).named("identity")
}

/// The combiner's output: a beat of `(a ∘ h) ∘ b` per beat taken, in order, a fixed number of
/// cycles later while `out_ready` is held.
pub(super) struct Combined<'d> {
    /// The combiner takes a beat in a cycle with `fire`; it may only fire while this is high.
    pub ready: Sig<'d>,
    pub valid: Sig<'d>,
    pub last: Sig<'d>,
    pub data: Sig<'d>,
}

/// Builds the combiner for `width`-bit beats of `ty` into `d` (instance `instance`): it takes
/// the words `a`, `h` and, if given, `b` with `last` in a cycle with `fire` and offers each
/// result until `out_ready`.
#[allow(clippy::too_many_arguments)]
pub(super) fn combiner<'d>(
    d: &'d Design,
    instance: &str,
    ty: ElementType,
    width: usize,
    op: Sig<'d>,
    words: (Sig<'d>, Sig<'d>, Option<Sig<'d>>),
    fire: Sig<'d>,
    last: Sig<'d>,
    out_ready: Sig<'d>,
) -> Result<Combined<'d>, Error> {
    let three = words.2.is_some();
    let words: Vec<Sig<'d>> = [Some(words.0), Some(words.1), words.2].into_iter().flatten().collect();
    let (bits, lanes) = (ty.bits(), width / ty.bits());
    let (net, module) = match ty.float() {
        Some(_) => {
            let kernel = dsl::parse(&combine_kernel(ty, lanes, three)).map_err(Error::kernel("allreduce combiner"))?;
            // Adders of ADD_STAGES stages: the unit sits in every node, so it keeps to the
            // router's LUT levels rather than the kernels' balanced (shallower, deeper-logic) split.
            let mut stages = Stages::balanced(kernel.format);
            stages.depth.insert(FloatOperator::Add.name(), ADD_STAGES);
            let (net, _) = kernel.netlist(&stages)?;
            (net, kernel.name)
        }
        None => (int_stage(width), if three { format!("allreduce_i32_x{lanes}") } else { format!("combine2_i32_x{lanes}") }),
    };
    let data_in = port_width(&net, "s_axis_tdata");
    let (keep, user, has_last) = (port_width(&net, "s_axis_tkeep"), port_width(&net, "s_axis_tuser"), port_width(&net, "s_axis_tlast") > 0);
    if !has_last {
        return Err(Error::Config("allreduce adder: the kernel carries no tlast".to_string()));
    }
    let sum = d.instance(&Rc::new(net), &module, instance);
    let is = |o: ReduceOp| op.eq(o.code()).named(&format!("{instance}_op_{}", o.name()));
    let (is_min, is_max, is_or) = (is(ReduceOp::Min), is(ReduceOp::Max), is(ReduceOp::Or));
    let lane = |w: Sig<'d>, i: usize| w.bits(bits * i, bits);
    // The bit patterns the kernel only delays: the OR (the identity is 0), and on int32 the
    // operation's result in the same order, (a op h) op b.
    let x: Vec<Sig> = (0..lanes)
        .map(|i| {
            let v: Vec<Sig> = words.iter().map(|w| lane(*w, i)).collect();
            let or = v[1..].iter().fold(v[0], |x, y| x | *y).named(&format!("{instance}_or{i}"));
            if ty.float().is_some() {
                return or;
            }
            let sum = v[1..].iter().fold(v[0], |x, y| x + *y).named(&format!("{instance}_sum{i}"));
            let lo = v[1..].iter().fold(v[0], |x, y| y.slt(x).mux(*y, x)).named(&format!("{instance}_min{i}"));
            let hi = v[1..].iter().fold(v[0], |x, y| x.slt(*y).mux(*y, x)).named(&format!("{instance}_max{i}"));
            by_op(op, [sum, lo, hi, or]).named(&format!("{instance}_int{i}"))
        })
        .collect();
    let (part, parts) = delayed_parts(ty);
    let x: Vec<Sig> = x.iter().flat_map(|v| (0..parts).map(move |k| v.bits(part * k, part).zext(bits))).collect();
    let inputs: Vec<Sig> = if ty.float().is_some() { words.iter().flat_map(|w| (0..lanes).map(move |i| lane(*w, i))).chain(x).collect() } else { x };
    // The kernel's input port ends at its last used bit (a delayed half's slot is half used).
    sum.input("s_axis_tdata").define(from_words(d, &inputs).bits(0, data_in));
    sum.input("s_axis_tvalid").define(fire);
    if keep > 0 {
        sum.input("s_axis_tkeep").define(d.lit((1u128 << keep) - 1, keep));
    }
    if user > 0 {
        sum.input("s_axis_tuser").define(d.lit(0, user));
    }
    sum.input("s_axis_tlast").define(last);
    sum.input("m_axis_tready").define(out_ready);
    // The kernel's outputs: every sum, then every minimum, then every maximum, then the delayed
    // bit patterns (on int32 only these).
    let all = sum.output("m_axis_tdata");
    let from = if ty.float().is_some() { 3 * width } else { 0 };
    let delayed: Vec<Sig> = (0..lanes * parts).map(|k| all.bits(from + bits * k, part)).collect();
    let delayed = from_words(d, &delayed).named(&format!("{instance}_delayed"));
    let data = if ty.float().is_some() {
        let (sums, minima, maxima) =
            (all.bits(0, width).named(&format!("{instance}_sums")), all.bits(width, width).named(&format!("{instance}_minima")), all.bits(2 * width, width).named(&format!("{instance}_maxima")));
        let not_min = is_max.mux(maxima, sums);
        let not_or = is_min.mux(minima, not_min);
        is_or.mux(delayed, not_or).named(&format!("{instance}_combined"))
    } else {
        delayed.named(&format!("{instance}_combined"))
    };
    Ok(Combined { ready: sum.output("s_axis_tready"), valid: sum.output("m_axis_tvalid"), last: sum.output("m_axis_tlast"), data })
}
