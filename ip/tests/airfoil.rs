//! Airfoil meshes and edge schedules against independent rules: the mesh's topology (Euler's
//! formula for an annulus, four sides per cell, every edge a side of its cells, positive
//! areas), OP2's file format round trip, and seed 002's VALID_SCHEDULE on both schedules with
//! every edge issued exactly once.

use weft_ip::airfoil::mesh::{read_op2, write_op2};
use weft_ip::airfoil::{generate, Mesh};
use weft_ip::app::schedule::{colouring, first_conflict, list, noops, valid};

fn area(m: &Mesh, c: &[u32; 4]) -> f64 {
    (0..4)
        .map(|k| {
            let (a, b) = (m.x[c[k] as usize], m.x[c[(k + 1) % 4] as usize]);
            a[0] * b[1] - b[0] * a[1]
        })
        .sum::<f64>()
        / 2.0
}

fn is_side(c: &[u32; 4], n: [u32; 2]) -> bool {
    (0..4).any(|k| (c[k], c[(k + 1) % 4]) == (n[0], n[1]) || (c[k], c[(k + 1) % 4]) == (n[1], n[0]))
}

#[test]
fn generated_meshes_are_valid_quadrilateral_annuli() {
    for (around, out) in [(40, 25), (200, 50), (500, 200)] {
        let m = generate(around, out, 9).unwrap();
        let cells = around * out;
        assert_eq!(m.cells.len(), cells);
        // Euler characteristic of an annulus: V − E + F = 0.
        assert_eq!(m.x.len() as i64 - (m.edges.len() + m.bedges.len()) as i64 + cells as i64, 0);
        let mut sides = vec![0; cells];
        for e in &m.edges {
            assert_ne!(e.cells[0], e.cells[1]);
            for c in e.cells {
                assert!(is_side(&m.cells[c as usize], e.nodes), "edge {e:?} is not a side of cell {c}");
                sides[c as usize] += 1;
            }
        }
        for b in &m.bedges {
            assert!(is_side(&m.cells[b.cell as usize], b.nodes));
            sides[b.cell as usize] += 1;
        }
        assert!(sides.iter().all(|s| *s == 4), "every cell has four sides");
        assert_eq!(m.bedges.iter().filter(|b| b.bound == 1).count(), around, "wall edges");
        let signs: Vec<bool> = m.cells.iter().map(|c| area(&m, c) > 0.0).collect();
        assert!(m.cells.iter().all(|c| area(&m, c).abs() > 1e-12), "no degenerate cell");
        assert!(signs.iter().all(|s| *s == signs[0]), "jitter folded a cell over");
        // Renumbered: neighbouring cells are not neighbours in memory.
        let far = m.edges.iter().filter(|e| (e.cells[0] as i64 - e.cells[1] as i64).abs() > 8).count();
        assert!(far * 2 > m.edges.len(), "numbering is not shuffled");
    }
    assert!(generate(3, 5, 1).unwrap_err().to_string().contains("around = 3"));
}

#[test]
fn op2_format_round_trips_and_names_bad_lines() {
    let m = generate(12, 4, 2).unwrap();
    assert_eq!(read_op2(&write_op2(&m)).unwrap(), m);
    let bad = "2 1 0 0\n0 0\n1 1\n0 1 2 9\n";
    let err = read_op2(bad).unwrap_err();
    assert_eq!(err, weft_ip::Error::Input { what: "new_grid.dat", line: Some(4), message: "node 2 is out of range: allowed 0..2".into() });
    assert_eq!(err.to_string(), "new_grid.dat:4: node 2 is out of range: allowed 0..2");
}

#[test]
fn both_schedules_pass_valid_schedule_and_the_list_schedule_needs_fewer_noops() {
    let lambda = 6; // seed 002's pipeline depth
    for (around, out) in [(40, 25), (125, 80)] {
        let m = generate(around, out, 4).unwrap();
        let cells = m.edge_cells();
        let (greedy, colours) = colouring(&cells, lambda);
        let listed = list(&cells, lambda, 64);
        for (name, s) in [("colouring", &greedy), ("list", &listed)] {
            assert!(valid(s, &cells, lambda), "{name}: conflict at {:?}", first_conflict(s, &cells, lambda));
            let mut seen = vec![0; cells.len()];
            for e in s.iter().flatten() {
                seen[*e as usize] += 1;
            }
            assert!(seen.iter().all(|n| *n == 1), "{name}: every edge exactly once");
        }
        assert_eq!(noops(&greedy), lambda * colours, "seed 002: λ no-ops per colour group");
        assert!(noops(&listed) <= noops(&greedy));
        println!("{} cells, {} edges: colouring {colours} colours, {} no-ops; list {} no-ops", around * out, cells.len(), noops(&greedy), noops(&listed));
    }
}

#[test]
fn valid_schedule_refuses_two_updates_of_a_cell_inside_the_window() {
    let cells = vec![vec![0, 1], vec![1, 2], vec![3]];
    let s = [Some(0), Some(2), None, Some(1), None];
    assert!(!valid(&s, &cells, 6), "edges 0 and 1 share cell 1, 3 slots apart");
    assert!(valid(&s, &cells, 2), "and 2 slots apart across the wrap");
    // Cyclic: the last slot and the first are neighbours in the next iteration.
    assert!(!valid(&[Some(0), None, None, None, None, Some(1)], &cells, 3));
}

#[test]
fn cells_spread_over_banks_with_no_edge_inside_one_bank() {
    use weft_ip::app::layout::layout;
    for (around, out) in [(40, 25), (200, 50), (500, 200)] {
        let m = generate(around, out, 0xA1 ^ around as u64).unwrap();
        let cells = m.interior_cells();
        for banks in [4, 8] {
            let l = layout(m.cells.len(), &cells, banks, 1 << 17).unwrap_or_else(|e| panic!("{} cells, {banks} banks: {e}", m.cells.len()));
            assert!(cells.iter().all(|c| l.bank[c[0] as usize] != l.bank[c[1] as usize]), "an edge inside one bank");
            let mut addresses = l.address.clone();
            addresses.sort();
            addresses.dedup();
            assert_eq!(addresses.len(), m.cells.len(), "addresses are distinct");
            assert!(l.address.iter().zip(&l.bank).all(|(a, b)| *a as usize % banks == *b as usize), "the bank is the address's low bits");
            let fill: Vec<usize> = (0..banks).map(|b| l.bank.iter().filter(|x| **x == b as u32).count()).collect();
            println!("{} cells, {banks} banks: {fill:?}", m.cells.len());
        }
    }
}
