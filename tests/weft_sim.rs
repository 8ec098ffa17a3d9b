//! `weft sim` as a user runs it: input files written by NumPy (the independent .npy and float
//! formatter), the outputs read back by NumPy and compared with a software reference of the
//! kernel written here in NumPy float32 arithmetic, in both simulators; per-vector kernels with a
//! tlast column; the one-line errors for a missing file, a wrong lane count and a bad number.

use std::path::{Path, PathBuf};
use std::process::Command;

fn weft(args: &[&str]) -> (bool, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_weft")).args(args).current_dir(env!("CARGO_MANIFEST_DIR")).output().unwrap();
    (out.status.success(), format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr)))
}

fn python(script: &str) -> String {
    let out = Command::new("python3").args(["-c", script]).output().expect("python3 is needed");
    assert!(out.status.success(), "python failed (scripts/setup.sh installs NumPy):\n{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

fn temp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("weft_sim_test_{}_{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// dg_rk_update (examples/kernels/dg_rk_update.wk) in NumPy float32, in the DSL's order:
/// res' = a·res + dt·rhs, q' = q + b·res'.
const RK_NUMPY: &str = "
def rk(x):
    q, res, rhs, a, b, dt = [x[:, i] for i in range(6)]
    r = a * res + dt * rhs
    return np.stack([q + b * r, r], axis=1)
";

fn check_rk(dir: &Path, extra: &[&str]) {
    let (input, output) = (dir.join("x.npy"), dir.join("y.npy"));
    python(&format!(
        "import numpy as np\nrng = np.random.default_rng(5)\nx = (rng.uniform(0.06, 16, (3000, 6)) * rng.choice([-1, 1], (3000, 6))).astype(np.float32)\nnp.save('{}', x)",
        input.display()
    ));
    let mut args = vec!["sim", "dg_rk_update", "--input", input.to_str().unwrap(), "--output", output.to_str().unwrap(), "--ready-percent", "60", "--valid-percent", "80"];
    args.extend(extra);
    let (ok, log) = weft(&args);
    assert!(ok && log.contains("0 mismatches"), "{log}");
    let verdict = python(&format!(
        "import numpy as np\n{RK_NUMPY}\nx = np.load('{}')\ny = np.load('{}')\nm = np.load('{}')\nassert y.dtype == np.float32 and y.shape == (3000, 2), (y.dtype, y.shape)\nprint(int((y.view(np.uint32) != rk(x).view(np.uint32)).sum()), int((m.view(np.uint32) != y.view(np.uint32)).sum()))",
        input.display(),
        output.display(),
        dir.join("y.model.npy").display()
    ));
    assert_eq!(verdict, "0 0", "lanes differing from NumPy's float32, and from the model file");
}

#[test]
fn npy_in_and_out_match_numpy_in_the_built_in_simulator() {
    let dir = temp("builtin");
    let vcd = dir.join("rk.vcd");
    check_rk(&dir, &["--vcd", vcd.to_str().unwrap()]);
    let text = std::fs::read_to_string(&vcd).unwrap();
    assert!(text.contains("$scope module dg_rk_update $end") && text.contains("$enddefinitions $end"));
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn npy_in_and_out_match_numpy_in_verilator() {
    let dir = temp("verilator");
    check_rk(&dir, &["--verilator"]);
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_vector_kernel_takes_a_tlast_column_from_csv() {
    let dir = temp("vector");
    let (input, output) = (dir.join("v.csv"), dir.join("s.csv"));
    // 5 columns: 4 lanes and tlast; the sums per vector computed in float64 by NumPy.
    let expected = python(&format!(
        "import numpy as np\nrng = np.random.default_rng(3)\nx = rng.uniform(-2, 2, (400, 4)).astype(np.float32)\nlast = (rng.uniform(0, 1, 400) < 0.25).astype(np.float32)\nlast[-1] = 1\nnp.savetxt('{}', np.column_stack([x, last]), delimiter=',', fmt='%.9g')\nends = np.flatnonzero(last) + 1\nsums = [x[a:b].astype(np.float64).sum() for a, b in zip(np.r_[0, ends[:-1]], ends)]\nprint(' '.join(repr(float(s)) for s in sums))",
        input.display()
    ));
    let (ok, log) = weft(&["sim", "reduce_f32x4", "--input", input.to_str().unwrap(), "--output", output.to_str().unwrap(), "--ready-percent", "50"]);
    assert!(ok && log.contains("0 mismatches"), "{log}");
    let got: Vec<f64> = std::fs::read_to_string(&output).unwrap().lines().map(|l| l.parse::<f32>().unwrap() as f64).collect();
    let want: Vec<f64> = expected.split(' ').map(|s| s.parse().unwrap()).collect();
    assert_eq!(got.len(), want.len(), "one output row per vector");
    for (g, w) in got.iter().zip(&want) {
        // Four lanes of up to 2 each, vectors of a few beats: well inside 1e-5 relative of 32.
        assert!((g - w).abs() <= 1e-5 * w.abs().max(1.0), "sum {g} against NumPy's {w}");
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn bad_input_gets_a_one_line_error_naming_the_file() {
    let dir = temp("errors");
    let bad = dir.join("bad.csv");
    std::fs::write(&bad, "1,2,3,4,5,6\n1,2,0x3f80000z,4,5,6\n").unwrap();
    let narrow = dir.join("narrow.csv");
    std::fs::write(&narrow, "1,2,3\n").unwrap();
    let out = dir.join("o.csv");
    let missing = dir.join("missing.npy");
    let cases = [
        (bad.clone(), format!("{}:2:5: `0x3f80000z` is not a number", bad.display())),
        (narrow.clone(), format!("{}: row 1 has 3 columns; kernel `dg_rk_update` takes 6 lanes (q, res, rhs, a, b, dt)", narrow.display())),
        (missing.clone(), format!("{}: No such file", missing.display())),
    ];
    for (input, message) in cases {
        let (ok, log) = weft(&["sim", "dg_rk_update", "--input", input.to_str().unwrap(), "--output", out.to_str().unwrap()]);
        assert!(!ok, "{log}");
        assert!(log.contains(&message), "want `{message}` in:\n{log}");
        assert_eq!(log.trim().lines().count(), 1, "one line:\n{log}");
    }
    std::fs::remove_dir_all(&dir).ok();
}
