//! The allreduce engine alone in the built-in simulator, as the root and as a chain node: random
//! packets on every input, random gaps and back-pressure on every stream; every output beat
//! against software sums in the documented order, and the host's packets as the packet format
//! delivers them (every header field and its check bits, the last beat's `tkeep`).

use weft_ip::system::allreduce::check::check_engine;

#[test]
fn the_root_delivers_well_formed_results() {
    for seed in [5, 11, 12] {
        check_engine(true, 300, seed).unwrap();
    }
}

#[test]
fn a_chain_node_delivers_well_formed_results() {
    for seed in [6, 13, 14] {
        check_engine(false, 300, seed).unwrap();
    }
}
