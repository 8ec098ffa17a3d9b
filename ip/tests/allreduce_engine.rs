//! The allreduce engine alone in the built-in simulator, as the root and as a chain node: random
//! packets on every input, random gaps and back-pressure on every stream; every output beat
//! against software in the documented order ([`ReduceOp::apply`]), and the host's packets as the
//! packet format delivers them (every header field and its check bits, the last beat's `tkeep`).

use weft_ip::system::allreduce::check::check_engine;
use weft_ip::system::allreduce::{ElementType, ReduceOp, ELEMENT_TYPES, REDUCE_OPS};

#[test]
fn the_root_delivers_well_formed_results() {
    for seed in [5, 11, 12] {
        check_engine(ElementType::F32, ReduceOp::Sum, true, 300, seed).unwrap();
    }
}

#[test]
fn a_chain_node_delivers_well_formed_results() {
    for seed in [6, 13, 14] {
        check_engine(ElementType::F32, ReduceOp::Sum, false, 300, seed).unwrap();
    }
}

/// Every element type with every operator, at the root (three operands) and at a chain node.
#[test]
fn every_element_type_and_operator_is_bit_exact() {
    for (i, ty) in ELEMENT_TYPES.into_iter().enumerate() {
        for (j, op) in REDUCE_OPS.into_iter().enumerate() {
            for root in [true, false] {
                let seed = 100 + 10 * i as u64 + 2 * j as u64 + root as u64;
                println!("{}", check_engine(ty, op, root, 150, seed).unwrap());
            }
        }
    }
}

/// A partial whose operation id differs from the contribution it joins is counted, once per
/// joined beat of that packet.
#[test]
fn a_partial_of_another_operation_is_counted() {
    use weft_ip::system::allreduce::check::check_wrong_id;
    for seed in [21, 22] {
        let (mismatches, beats) = check_wrong_id(seed).unwrap();
        assert!(beats > 0 && mismatches == beats, "seed {seed}: {mismatches} id mismatches over a packet of {beats} beats");
    }
}

/// A chain node whose receiver grants nothing stops once its next partial packet would not fit
/// the receiver's buffer, never before and never after, and goes on when the grants come.
#[test]
fn a_chain_node_sends_no_partial_its_receiver_has_no_room_for() {
    use weft_ip::system::allreduce::check::check_credit;
    for seed in [31, 32] {
        let ungranted = check_credit(seed).unwrap();
        println!("seed {seed}: stopped with {ungranted} beats ungranted");
    }
}
