//! The documentation: the book builds and its links resolve, its figure tables are what the
//! benchmarks' JSON gives, the benchmarks still measure those figures, and nothing points outside
//! the repository.

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn tool(program: &str, hint: &str) -> Command {
    if Command::new(program).arg("--version").output().is_err() {
        panic!("{program} is not installed: {hint}");
    }
    Command::new(program)
}

#[test]
fn the_book_builds_and_every_link_in_it_resolves() {
    let dest = std::env::temp_dir().join(format!("weft-book-{}", std::process::id()));
    let hint = "run scripts/setup.sh (cargo install mdbook mdbook-linkcheck)";
    tool("mdbook-linkcheck", hint);
    let out = tool("mdbook", hint).arg("build").arg(root().join("docs")).arg("--dest-dir").arg(&dest).output().unwrap();
    let _ = std::fs::remove_dir_all(&dest);
    let log = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "mdbook build docs failed:\n{log}");
    assert!(!log.contains("WARN"), "mdbook build docs warned:\n{log}");
}

#[test]
fn every_figure_table_in_the_docs_is_what_the_bench_json_gives() {
    let sources = weft::bench::tables::Sources { bench: root().join("bench"), generated: root().join("generated") };
    weft::bench::tables::command(&root().join("docs"), &sources, true).unwrap();
}

/// The same fill run on a table whose JSON says something else must differ: the check can fail.
#[test]
fn a_table_that_disagrees_with_its_json_is_rewritten() {
    let sources = weft::bench::tables::Sources { bench: root().join("bench"), generated: root().join("generated") };
    let stale = "before\n<!-- table: link-latency -->\n| lanes | cycles |\n| 1 | 3 |\n<!-- /table -->\nafter\n";
    let (filled, names) = weft::bench::tables::fill(stale, &sources).unwrap();
    assert_eq!(names, ["link-latency"]);
    assert_ne!(filled, stale);
    let json: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(root().join("bench/link.json")).unwrap()).unwrap();
    for row in json["latency"].as_array().unwrap() {
        let line = format!("| {} | {} | {} |", row["lanes"], row["cycles"], row["channel_cycles"]);
        assert!(filled.contains(&line), "{line} missing from\n{filled}");
    }
    assert!(filled.starts_with("before\n") && filled.ends_with("<!-- /table -->\nafter\n"));
    let unknown = weft::bench::tables::fill("<!-- table: nope -->\n<!-- /table -->\n", &sources).unwrap_err().to_string();
    assert!(unknown.contains("no table named `nope`"), "{unknown}");
}

#[test]
fn the_benchmarks_still_measure_the_committed_figures() {
    let out = Command::new(env!("CARGO_BIN_EXE_weft")).args(["bench", "--check"]).current_dir(root()).output().unwrap();
    let log = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "weft bench --check failed:\n{log}");
    assert!(log.contains("figures within tolerance"), "{log}");
}

fn text_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().to_string();
        if path.is_dir() {
            if !name.starts_with('.') && name != "target" {
                text_files(&path, out);
            }
        } else if ["rs", "md", "toml", "sh", "py", "wk", "app"].iter().any(|e| name.ends_with(&format!(".{e}"))) {
            out.push(path);
        }
    }
}

#[test]
fn the_readme_is_short_and_nothing_cites_a_file_outside_the_repository() {
    let readme = std::fs::metadata(root().join("README.md")).unwrap().len();
    assert!(readme <= 15 * 1024, "README.md is {readme} bytes; the book in docs/ holds the rest");
    let mut files = vec![];
    text_files(root(), &mut files);
    let outside = ["DESIGN", ".md"].concat();
    let cites: Vec<String> = files.iter().filter(|f| std::fs::read_to_string(f).is_ok_and(|t| t.contains(&outside))).map(|f| f.display().to_string()).collect();
    assert!(cites.is_empty(), "cite docs/contract.md instead of {outside}: {cites:?}");
}
