//! The command line: help explains itself, bad arguments fail with a clear message.

use std::process::Command;

fn weft(args: &[&str]) -> (bool, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_weft")).args(args).current_dir(env!("CARGO_MANIFEST_DIR")).output().unwrap();
    (out.status.success(), format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr)))
}

#[test]
fn help_describes_every_subcommand() {
    let (ok, text) = weft(&["--help"]);
    assert!(ok);
    for sub in ["generate", "check", "app", "bench"] {
        assert!(text.contains(sub), "{text}");
        let (ok, text) = weft(&[sub, "--help"]);
        assert!(ok && text.contains("Usage"), "{sub}: {text}");
    }
}

#[test]
fn an_unknown_module_is_rejected_naming_the_choices() {
    let (ok, text) = weft(&["check", "axis_fifo_w999"]);
    assert!(!ok);
    assert!(text.contains("unknown module `axis_fifo_w999`") && text.contains("axis_fifo_w128_d32"), "{text}");
}

#[test]
fn a_bad_option_value_is_rejected() {
    let (ok, text) = weft(&["bench", "sim-speed", "--cycles", "5"]);
    assert!(!ok);
    assert!(text.contains("--cycles"), "{text}");
    let (ok, _) = weft(&["frobnicate"]);
    assert!(!ok);
}

#[test]
fn a_system_name_without_config_gets_a_hint() {
    let (ok, text) = weft(&["check", "my_torus"]);
    assert!(!ok);
    assert!(text.contains("unknown module `my_torus`") && text.contains("weft check --config <file.toml>") && text.contains("torus_4x2x1"), "{text}");
    let (ok, text) = weft(&["check", "mine.toml"]);
    assert!(!ok && text.contains("weft check --config mine.toml"), "{text}");
}

#[test]
fn a_name_with_config_must_be_one_of_the_described_systems() {
    let (ok, text) = weft(&["check", "fp32_add", "--config", "examples/torus_2x2x2.toml"]);
    assert!(!ok);
    assert!(text.contains("`fp32_add` is not a system the --config files describe (`torus_2x2x2`)") && text.contains("weft check fp32_add"), "{text}");
}

#[test]
fn generate_with_out_writes_constraints_under_it() {
    let dir = std::env::temp_dir().join(format!("weft-cli-out-{}", std::process::id()));
    let out = dir.join("d");
    let (ok, text) = weft(&["generate", "--out", out.to_str().unwrap(), "--config", "examples/torus_2x2x2.toml"]);
    assert!(ok, "{text}");
    let xdc = out.join("constraints/s10_520n/torus_2x2x2.sdc");
    assert!(xdc.exists(), "{} missing; wrote:\n{text}", xdc.display());
    assert!(text.lines().all(|l| l.contains(out.to_str().unwrap())), "a file outside --out:\n{text}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `weft check` records each stage's result under the Verilog's hash and the tool's version:
/// a second run reuses them all, a changed file runs its tool stages again (the testbench, keyed
/// by the executable, is still reused), and `--force` runs everything.
#[test]
fn check_reuses_results_until_the_verilog_changes_or_force() {
    let dir = std::env::temp_dir().join(format!("weft-cli-cache-{}", std::process::id()));
    let module = "axis_register_slice_w128";
    let file = dir.join(format!("axis/{module}.v"));
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::copy(format!("generated/axis/{module}.v"), &file).unwrap();
    let check = |extra: &[&str]| {
        let mut args = vec!["check", module, "--generated", dir.to_str().unwrap(), "--jobs", "2"];
        args.extend(extra);
        let (ok, text) = weft(&args);
        assert!(ok, "{text}");
        text
    };
    let first = check(&[]);
    assert!(first.contains("ran testbench, lint, synth, icarus") && first.contains("reused 0 of 4"), "{first}");
    let report = std::fs::read_to_string(dir.join(format!("reports/{module}.json"))).unwrap();
    assert!(report.contains("\"checked\"") && report.contains("\"luts\""), "{report}");

    let second = check(&[]);
    assert!(second.contains("reused every stage") && second.contains("reused 4 of 4"), "{second}");
    // The figures come back from the report unchanged.
    let row = |text: &str| text.lines().find(|l| l.starts_with(module)).unwrap().to_string();
    assert_eq!(row(&first), row(&second));

    let text = std::fs::read_to_string(&file).unwrap();
    std::fs::write(&file, text + "// edited\n").unwrap();
    let edited = check(&[]);
    assert!(edited.contains("ran lint, synth, icarus; reused testbench") && edited.contains("reused 1 of 4"), "{edited}");

    let forced = check(&["--force"]);
    assert!(forced.contains("ran testbench, lint, synth, icarus") && forced.contains("reused 0 of 4"), "{forced}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A system's check is recorded under its files' contents (and the tools and executable): run
/// again unchanged it is reused; an edited constraint file checks it again. `check --generated d`
/// finds the constraints `generate --out d` wrote under `d`.
#[test]
fn a_system_check_is_reused_until_one_of_its_files_changes() {
    let dir = std::env::temp_dir().join(format!("weft-cli-system-cache-{}", std::process::id()));
    let out = dir.to_str().unwrap();
    let (ok, text) = weft(&["generate", "--out", out, "--config", "examples/torus_2x2x2.toml"]);
    assert!(ok, "{text}");
    let check = || {
        let (ok, text) = weft(&["check", "--config", "examples/torus_2x2x2.toml", "--generated", out]);
        assert!(ok, "{text}");
        text
    };
    let first = check();
    assert!(first.contains("system torus_2x2x2: passed\n") && first.contains("reused 0 of 1"), "{first}");
    let second = check();
    assert!(second.contains("passed (reused the recorded check)") && second.contains("reused 1 of 1"), "{second}");
    let sdc = dir.join("constraints/s10_520n/torus_2x2x2.sdc");
    let text = std::fs::read_to_string(&sdc).unwrap();
    std::fs::write(&sdc, text + "# edited\n").unwrap();
    let edited = check();
    assert!(edited.contains("reused 0 of 1"), "{edited}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A user's kernel files, read when the command runs: `generate --kernel` writes only them,
/// `check --kernel` runs the built-in testbench (random operands against the software model) and
/// the tool stages on them.
#[test]
fn a_user_kernel_file_is_generated_and_checked_without_a_rebuild() {
    let dir = std::env::temp_dir().join(format!("weft-user-kernel-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let axpy = dir.join("axpy.wk");
    std::fs::write(&axpy, "kernel my_axpy: f32\ninput a, x, y\noutput r = a * x + y\n").unwrap();
    let dot = dir.join("dot.wk");
    std::fs::write(&dot, "kernel my_dot: f32\ninput x0, y0, x1, y1\noutput d = vsum(x0 * y0 + x1 * y1)\n").unwrap();
    let out = dir.join("g");
    let (ok, text) = weft(&["generate", "--out", out.to_str().unwrap(), "--kernel", axpy.to_str().unwrap(), "--kernel", dot.to_str().unwrap()]);
    assert!(ok, "{text}");
    let mut written: Vec<String> = walk(&out);
    written.sort();
    assert_eq!(written, ["kernels/my_axpy.v", "kernels/my_dot.v"], "{text}");
    let verilog = std::fs::read_to_string(out.join("kernels/my_axpy.v")).unwrap();
    assert!(verilog.contains("module my_axpy(") && verilog.contains("input wire [95:0] s_axis_tdata;"), "{verilog}");

    let (ok, text) = weft(&["check", "--generated", out.to_str().unwrap(), "--kernel", axpy.to_str().unwrap(), "--kernel", dot.to_str().unwrap()]);
    assert!(ok, "{text}");
    assert!(text.contains("1000 beats match the software model"), "{text}");
    assert!(text.contains("600 vectors") && text.contains("within the summation bound"), "{text}");
    assert!(text.contains("checked 2 module(s)"), "{text}");
    // One of them by name; a name the files do not describe is refused, naming those they do.
    let (ok, text) = weft(&["check", "my_dot", "--generated", out.to_str().unwrap(), "--kernel", dot.to_str().unwrap()]);
    assert!(ok && text.contains("checked 1 module(s)"), "{text}");
    let (ok, text) = weft(&["check", "fp32_add", "--generated", out.to_str().unwrap(), "--kernel", dot.to_str().unwrap()]);
    assert!(!ok && text.contains("`fp32_add` is not a kernel the --kernel files describe") && text.contains("`my_dot`"), "{text}");

    // Products built with the multiplier whose subnormal shift is in LUTs, generated and checked
    // the same way; an unknown implementation is refused naming the choices.
    let lut = dir.join("lut");
    let (ok, text) = weft(&["generate", "--out", lut.to_str().unwrap(), "--kernel", axpy.to_str().unwrap(), "--multiplier", "lut-shift"]);
    assert!(ok, "{text}");
    let verilog = std::fs::read_to_string(lut.join("kernels/my_axpy.v")).unwrap();
    assert!(verilog.contains("module my_axpy_fp32_mul_lut_shift_s") && !verilog.contains("module my_axpy_fp32_mul_s"), "{verilog}");
    let (ok, text) = weft(&["check", "--generated", lut.to_str().unwrap(), "--kernel", axpy.to_str().unwrap(), "--multiplier", "lut-shift"]);
    assert!(ok && text.contains("1000 beats match the software model"), "{text}");
    let (ok, text) = weft(&["generate", "--out", lut.to_str().unwrap(), "--kernel", axpy.to_str().unwrap(), "--multiplier", "lut"]);
    assert!(!ok && text.contains("dsp-shift") && text.contains("lut-shift"), "{text}");

    // Errors name the file and the place.
    let bad = dir.join("bad.wk");
    std::fs::write(&bad, "kernel bad: f32\ninput a\noutput r = a +\n").unwrap();
    let (ok, text) = weft(&["generate", "--out", out.to_str().unwrap(), "--kernel", bad.to_str().unwrap()]);
    assert!(!ok && text.contains("bad.wk") && text.contains("line 3"), "{text}");
    let clash = dir.join("clash.wk");
    std::fs::write(&clash, "kernel fp32_add: f32\ninput a, b\noutput r = a + b\n").unwrap();
    let (ok, text) = weft(&["check", "--kernel", clash.to_str().unwrap()]);
    assert!(!ok && text.contains("clash.wk: kernel `fp32_add` has the name of a shipped module"), "{text}");
    let (ok, text) = weft(&["generate", "--kernel", dir.join("missing.wk").to_str().unwrap()]);
    assert!(!ok && text.contains("missing.wk"), "{text}");
    std::fs::remove_dir_all(&dir).ok();
}

/// Files under `dir` (not `reports/`), relative, with `/`.
fn walk(dir: &std::path::Path) -> Vec<String> {
    let mut files = vec![];
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        if path.is_dir() {
            files.extend(walk(&path).into_iter().map(|f| format!("{name}/{f}")));
        } else {
            files.push(name);
        }
    }
    files
}

#[test]
fn app_runs_an_application_file_and_names_bad_meshes() {
    let (ok, text) = weft(&["app", "examples/apps/jacobi.app", "--mesh", "graph:200,300,1"]);
    assert!(ok, "{text}");
    let iterations: Vec<&str> = text.lines().filter_map(|l| l.split_whitespace().next()).collect();
    assert_eq!(iterations, ["10", "20", "30", "40"], "{text}");
    let (ok, text) = weft(&["app", "examples/apps/jacobi.app", "--mesh", "graph:200,300"]);
    assert!(!ok && text.contains("expected 3 numbers"), "{text}");
    let (ok, text) = weft(&["app", "examples/apps/jacobi.app", "--mesh", "graph:200,300,1", "--precision", "f16"]);
    assert!(!ok && text.contains("--precision f16: allowed f64 or f32"), "{text}");
    let (ok, text) = weft(&["app", "examples/apps/jacobi.app", "--mesh", "naca0012:4,4"]);
    assert!(!ok && text.contains("line 7, column 5: the mesh has no map `ends`"), "{text}");
}

#[test]
fn app_compiles_a_loop_to_verilog_or_says_what_is_not_built() {
    let dir = std::env::temp_dir().join(format!("weft-cli-app-{}", std::process::id()));
    let out = dir.to_string_lossy().to_string();
    let (ok, text) = weft(&["app", "examples/apps/airfoil.app", "--mesh", "naca0012:2,2", "--precision", "f32", "--compile", "adt_calc", "--out", &out]);
    assert!(ok, "{text}");
    let verilog = std::fs::read_to_string(dir.join("airfoil_adt_calc.v")).unwrap();
    assert!(verilog.contains("module airfoil_adt_calc(") && verilog.contains("p_adt_rd_data"), "{text}");
    let (ok, text) = weft(&["app", "examples/apps/jacobi.app", "--mesh", "graph:30,5,1", "--compile", "update", "--out", &out]);
    assert!(ok, "{text}");
    let verilog = std::fs::read_to_string(dir.join("jacobi_update.v")).unwrap();
    assert!(verilog.contains("change_result"), "{text}");
    let (ok, text) = weft(&["app", "examples/apps/jacobi.app", "--mesh", "graph:30,5,1", "--pipelines", "2", "--out", &out, "--compile"]);
    assert!(ok, "{text}");
    let verilog = std::fs::read_to_string(dir.join("jacobi.v")).unwrap();
    assert!(verilog.contains("module jacobi(") && verilog.contains("print_log_rd_data") && verilog.contains("gather_schedule_wr_en") && verilog.contains("gather_kernel_p1"), "{text}");
    let (ok, text) = weft(&["app", "examples/apps/jacobi.app", "--mesh", "graph:30,5,1", "--pipelines", "9", "--compile"]);
    assert!(!ok && text.contains("pipelines = 9 is out of range: allowed 1 ..= 8"), "{text}");
    let (ok, text) = weft(&["app", "examples/apps/jacobi.app", "--mesh", "graph:30,5,1", "--compile", "solve", "--out", &out]);
    assert!(!ok && text.contains("solve"), "{text}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `--partition`: the written file gives every element one owner, and each node's import halo is
/// exactly what the other nodes say they send it; bad splits are refused with the reason.
#[test]
fn app_partition_writes_owners_and_halos_that_agree() {
    let dir = std::env::temp_dir().join(format!("weft-cli-partition-{}", std::process::id()));
    let out = dir.to_string_lossy().to_string();
    let (ok, text) = weft(&["app", "examples/apps/airfoil.app", "--mesh", "naca0012:10,12", "--partition", "3", "--out", &out]);
    assert!(ok, "{text}");
    let j: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(dir.join("airfoil_partition_3.json")).unwrap()).unwrap();
    assert_eq!(j["primary"], "cells");
    for set in j["sets"].as_array().unwrap() {
        let owner: Vec<u64> = set["owner"].as_array().unwrap().iter().map(|o| o.as_u64().unwrap()).collect();
        assert_eq!(owner.len() as u64, set["size"].as_u64().unwrap());
        let nodes = set["nodes"].as_array().unwrap();
        for (n, node) in nodes.iter().enumerate() {
            assert_eq!(node["owned"].as_u64().unwrap() as usize, owner.iter().filter(|&&o| o == n as u64).count());
            let import: Vec<u64> = node["import"].as_array().unwrap().iter().map(|e| e.as_u64().unwrap()).collect();
            let mut sent: Vec<u64> = nodes
                .iter()
                .flat_map(|m| m["sends"].as_array().unwrap().iter().filter(|s| s[0] == n).flat_map(|s| s[1].as_array().unwrap().iter().map(|e| e.as_u64().unwrap())).collect::<Vec<_>>())
                .collect();
            sent.sort_unstable();
            assert_eq!(sent, import, "set {}, node {n}", set["name"]);
            assert!(import.iter().all(|&e| owner[e as usize] != n as u64));
        }
    }
    let (ok, text) = weft(&["app", "examples/apps/airfoil.app", "--mesh", "naca0012:10,12", "--partition", "3", "--split", "coords:p_q", "--out", &out]);
    assert!(!ok && text.contains("`p_q` have dimension 4: allowed 2 or 3"), "{text}");
    let (ok, text) = weft(&["app", "examples/apps/airfoil.app", "--mesh", "naca0012:10,12", "--partition", "3", "--split", "random", "--out", &out]);
    assert!(!ok && text.contains("allowed `metis` or `coords:DAT`"), "{text}");
    let _ = std::fs::remove_dir_all(&dir);
}
