//! The Airfoil accelerator in the built-in simulator: both schedules bit-exact to the C reference
//! on a small mesh; and the two rules a schedule must keep (λ rows between updates of a cell, one
//! update per bank a row) are the accelerator's real limits: a schedule that breaks either is
//! refused by VALID_SCHEDULE, counted by the hardware and gives wrong residuals.

use weft_ip::airfoil::reference::{self, Fields};
use weft_ip::airfoil::{generate, Params};
use weft_ip::app::layout::layout;
use weft_ip::app::schedule::{first_conflict_rows, list_rows, Rows};
use weft_sim::airfoil::{netlist_device, run, testbench};

#[test]
fn one_and_two_pipelines_match_the_c_reference_on_both_schedules() {
    for p in [Params { pipelines: 1, banks: 4, cell_bits: 8, node_bits: 8 }, Params { pipelines: 2, banks: 4, cell_bits: 8, node_bits: 8 }] {
        let said = testbench(&p, 8, 3).unwrap_or_else(|e| panic!("{e}"));
        println!("{}: {said}", p.name());
    }
}

#[test]
fn a_schedule_one_row_short_of_lambda_or_sharing_a_bank_is_caught() {
    let p = Params { pipelines: 2, banks: 4, cell_bits: 8, node_bits: 8 };
    let (mut dev, timing) = netlist_device(&p).unwrap();
    let mesh = generate(8, 3, 5).unwrap();
    let fields = Fields::seeded(&mesh, 6);
    let cells = mesh.interior_cells();
    let l = layout(mesh.cells.len(), &cells, p.banks, 1 << p.cell_bits).unwrap();
    let rows = Rows { pipelines: 2, banks: Some(&l.bank) };
    // λ − 1 rows apart: refused by VALID_SCHEDULE, a hazard in hardware, a wrong residual.
    let short = list_rows(&cells, timing.lambda - 1, 64, rows).unwrap();
    assert!(first_conflict_rows(&short, &cells, timing.lambda, rows).is_some(), "the λ−1 schedule has a pair λ−1 rows apart");
    let r = run(&mut dev, &p, &timing, &mesh, &fields, &l, &short).unwrap();
    assert!(r.counters[1] > 0, "hazards counted: {:?}", r.counters);
    assert_ne!(r.res, reference::run(&mesh, &fields, &short), "a residual lost an update");
    // The bank rule ignored: two updates of one bank in a row.
    let crowded = list_rows(&cells, timing.lambda, 64, Rows { pipelines: 2, banks: None }).unwrap();
    assert!(first_conflict_rows(&crowded, &cells, timing.lambda, rows).is_some(), "some row shares a bank");
    let r = run(&mut dev, &p, &timing, &mesh, &fields, &l, &crowded).unwrap();
    assert!(r.counters[2] > 0, "bank conflicts counted: {:?}", r.counters);
    assert_ne!(r.res, reference::run(&mesh, &fields, &crowded), "a residual lost an update");
}
