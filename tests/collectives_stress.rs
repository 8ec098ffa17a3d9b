//! Randomized collectives on the generated nodes in Verilator ([`weft::bench::stress`]):
//! mixed collectives, operators, roots and sizes, on the collective unit (several operations in
//! flight) and striped over the torus's chains, random back-pressure on every host stream, bit
//! errors on every cable and one cable pulled for a while; every result against the software
//! reference, every engine's counters against what the hosts sent and took. The default run does 600 operations on torus_4x2x1 (binary32) and
//! torus_2x2x2 (int32); `-- --ignored` runs 50,000 on each, 10⁵ in all.

use weft::bench::stress::stress;
use weft::ip::system::allreduce::ElementType;

fn run(which: usize, ty: ElementType, operations: usize, seed: u64) {
    let system = &weft::system::shipped()[which];
    let work = std::env::temp_dir().join(format!("weft-test-stress-{}-{}", system.name, std::process::id()));
    let report = stress(system, ty, operations, 2e-6, seed, &work, &mut |line| eprintln!("{line}"));
    let _ = std::fs::remove_dir_all(&work);
    let r = report.unwrap();
    eprintln!(
        "{} ({}): {} operations ({} striped) in {} batches, {} elements, {} cycles; {} bits flipped, {} frames retransmitted, {} cable pulled",
        r.system, r.element, r.operations, r.striped, r.batches, r.elements, r.cycles, r.flipped_bits, r.retransmissions, r.cuts
    );
    assert_eq!(r.operations, operations);
    assert!(r.striped > 0, "{r:?}: no striped operation");
    assert!(r.flipped_bits > 0 && r.retransmissions > 0 && r.cuts == 1, "{r:?}: the faults did not happen");
}

#[test]
fn torus_4x2x1_binary32_collectives_under_faults() {
    run(0, ElementType::F32, 600, 1);
}

#[test]
fn torus_2x2x2_int32_collectives_under_faults() {
    run(1, ElementType::I32, 600, 2);
}

#[test]
#[ignore = "about 40 minutes in Verilator: run with -- --ignored"]
fn a_hundred_thousand_collectives_under_faults() {
    run(0, ElementType::F32, 50_000, 3);
    run(1, ElementType::I32, 50_000, 4);
}
