//! The butterfly (recursive doubling) of every node, in the built-in simulator, against the
//! software reference: exchange packets delivered after random delays, random gaps and
//! back-pressure on every stream.

use weft_ip::system::allreduce::check::check_butterfly;
use weft_ip::system::allreduce::{ElementType, ReduceOp, ELEMENT_TYPES, REDUCE_OPS};

#[test]
fn eight_nodes_of_a_4x2x1_torus_reduce_every_type_bit_exact() {
    for (k, ty) in ELEMENT_TYPES.into_iter().enumerate() {
        for (j, op) in REDUCE_OPS.into_iter().enumerate() {
            let report = check_butterfly(ty, op, [4, 2, 1], 6, 10 * k as u64 + j as u64).unwrap_or_else(|e| panic!("{} {}: {e}", ty.name(), op.name()));
            eprintln!("{report}");
        }
    }
}

#[test]
fn a_2x2x2_torus_and_a_ring_of_eight_run_many_operations_back_to_back() {
    for (dims, seed) in [([2, 2, 2], 1), ([8, 1, 1], 2)] {
        eprintln!("{}", check_butterfly(ElementType::F32, ReduceOp::Sum, dims, 30, seed).unwrap_or_else(|e| panic!("{dims:?}: {e}")));
    }
}

#[test]
fn dimensions_that_are_not_powers_of_two_are_refused_by_name() {
    let Err(e) = weft_ip::system::allreduce::butterfly::butterfly(128, ElementType::F32, [3, 2, 1]) else { panic!("a ring of 3 has no butterfly") };
    assert!(e.to_string().contains("[3, 2, 1]") && e.to_string().contains("power of two"), "{e}");
}
