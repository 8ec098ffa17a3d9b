//! In-network collectives: every node contributes a vector and receives the element-wise sum,
//! minimum, maximum or bitwise OR ([`mod@element`]: binary32, binary64, binary16, bfloat16 or
//! int32 elements), reduced in the fabric by an engine beside the router ([`mod@engine`]) along
//! a chain of neighbours ([`mod@plan`]); allreduce, reduce, broadcast, allgather,
//! reduce-scatter and barrier are programs of that engine ([`mod@collective`]). A node may carry
//! further engines that reduce slices of a long vector along other chains at once
//! ([`mod@stripes`]).

pub mod butterfly;
pub mod check;
pub mod collective;
pub mod combine;
pub mod element;
pub mod engine;
pub mod issue;
pub mod packets;
pub mod plan;
pub mod stripes;
pub mod unit;

pub use collective::Collective;
pub use element::{ElementType, ReduceOp, ELEMENT_TYPES, REDUCE_OPS};
pub use engine::{engine, module_name, COUNTERS, ERROR_TAG, FLAGS, FLAG_MEANINGS, GRANT_TAG, PARTIAL_TAG, RESULT_TAG};
pub use plan::{chain, chain_around, packet_sizes, plan, plan_on, plan_rooted, reference, reference_f32, reference_on, reference_rooted, Program};
pub use stripes::{Striping, MAX_STRIPES};

/// The engine and the butterfly as shipped modules (`weft check allreduce_w128`,
/// `weft check butterfly_w128`).
pub fn shipped() -> Vec<crate::shipped::Shipped> {
    use weft_hdl::export::{export_netlist, ModuleSpec};
    let spec = ModuleSpec {
        family: "allreduce",
        name: "allreduce_w128".into(),
        summary: "allreduce engine beside the router: (a op host) op b per binary32 lane (op: sum, min or max), partials toward the root, results to the host and on along the chain".into(),
        parameters: vec![("data_width".into(), "128".into()), ("partial_tag".into(), format!("{PARTIAL_TAG:#06x}")), ("result_tag".into(), format!("{RESULT_TAG:#06x}"))],
        hidden_ports: vec![],
    };
    let butterfly_spec = ModuleSpec {
        family: "allreduce",
        name: "butterfly_w128".into(),
        summary: "recursive-doubling allreduce of one packet of up to 256 bytes on a 4×2×1 torus: partner exchanges per coordinate bit, (partner op own) per binary32 lane".into(),
        parameters: vec![("data_width".into(), "128".into()), ("dims".into(), "4x2x1".into()), ("exchange_tag".into(), format!("{:#06x}", butterfly::EXCHANGE_TAG))],
        hidden_ports: vec![],
    };
    vec![
        crate::shipped::Shipped::new(
            spec,
            |spec| export_netlist(spec, &engine(128, ElementType::F32, crate::router::RouterConfig::default().max_packet_bytes)?),
            || Ok::<_, crate::Error>(format!("{}; {}", check::check_engine(ElementType::F32, ReduceOp::Sum, true, 300, 5)?, check::check_engine(ElementType::F32, ReduceOp::Max, false, 300, 6)?)),
        ),
        crate::shipped::Shipped::new(
            butterfly_spec,
            |spec| export_netlist(spec, &butterfly::butterfly(128, ElementType::F32, [4, 2, 1])?),
            || check::check_butterfly(ElementType::F32, ReduceOp::Sum, [4, 2, 1], 8, 7),
        ),
    ]
}
