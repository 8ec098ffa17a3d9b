//! Seed 000's DG halo exchange on the 2×2×2 torus, in Verilator on the generated nodes and the
//! generated `dg_surface_flux` and `dg_rk_update`: every node's state after each of 3 time steps
//! (15 halo exchanges over cables with bit errors) equals, bit for bit, the software model of the
//! whole mesh stepped without partition or fabric; then a 4th step with one halo value perturbed
//! after the fabric must differ from the model.

use weft::bench::dg::{run, Options};

/// Opt-in (`-- --ignored`; `weft bench --check`, run by the docs test, steps the same exchange
/// once).
#[test]
#[ignore]
fn torus_2x2x2_dg_step_is_bit_exact_under_bit_errors_and_a_wrong_halo_value_shows() {
    let system = weft::system::shipped().into_iter().find(|s| s.name == "torus_2x2x2").unwrap();
    let options = Options { cells: 8, steps: 4, bit_error_rate: 1e-5, perturb: Some(3) };
    let work = std::env::temp_dir().join(format!("weft-test-dg-halo-{}", std::process::id()));
    let report = run(&system, &options, &work, &mut |line| eprintln!("{line}"));
    let _ = std::fs::remove_dir_all(&work);
    let report = report.unwrap();
    assert_eq!(report.steps.len(), 4);
    for s in &report.steps[..3] {
        assert_eq!(s.mismatches, 0, "step {}", s.step);
        assert!(s.halo_bytes > 0 && s.exchange_cycles > 0);
    }
    assert!(report.steps[3].perturbed && report.steps[3].mismatches > 0, "a perturbed halo value went unseen");
    assert!(report.flipped_bits > 0, "no bit was flipped on the cables");
    eprintln!("{} bits flipped", report.flipped_bits);
}

#[test]
fn bad_options_name_their_field() {
    let system = weft::system::shipped().into_iter().find(|s| s.name == "torus_2x2x2").unwrap();
    let work = std::env::temp_dir().join("weft-test-dg-halo-bad");
    for (options, field) in [
        (Options { cells: 6, steps: 1, bit_error_rate: 0.0, perturb: None }, "`cells`"),
        (Options { cells: 8, steps: 0, bit_error_rate: 0.0, perturb: None }, "`steps`"),
        (Options { cells: 8, steps: 1, bit_error_rate: 0.5, perturb: None }, "`ber`"),
        (Options { cells: 8, steps: 2, bit_error_rate: 0.0, perturb: Some(2) }, "`perturb`"),
    ] {
        let e = run(&system, &options, &work, &mut |_| {}).unwrap_err();
        assert!(e.to_string().contains(field), "{e}");
    }
    let other = weft::system::shipped().into_iter().find(|s| s.name == "torus_4x2x1").unwrap();
    let e = run(&other, &Options { cells: 8, steps: 1, bit_error_rate: 0.0, perturb: None }, &work, &mut |_| {}).unwrap_err();
    assert!(e.to_string().contains("2×2×2"), "{e}");
}

#[test]
fn the_command_refuses_a_bad_mesh_size_naming_it() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_weft")).args(["bench", "dg", "--cells", "10", "--out", "/nonexistent"]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && text.contains("`cells` = 10") && text.contains("4..=64"), "{text}");
}
