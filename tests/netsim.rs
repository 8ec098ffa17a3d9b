//! `weft netsim` over MPI: a 4×4×4 torus of generated nodes (Verilator) with bit errors on every
//! cable and one cable pulled for a while gives the same packet log, every packet in the same
//! cycles, in one process and split over two MPI ranks, and with any window; each run checks
//! every packet against its source (exactly once, intact, over a minimal path). Nodes on clocks
//! of their own, each within ±300 ppm, are the same on one and two ranks too.

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

const RUN: [&str; 12] = ["netsim", "--config", "examples/torus_2x2x2.toml", "--rate", "0.02", "--cycles", "1000", "--drain", "1500", "--ber", "1e-5", "--seed"];
/// The cable leaving node 0 in X+ pulled for 400 cycles from the 200th cycle of traffic.
const CUT: [&str; 2] = ["--cut", "0,xp,200,400"];

/// Runs `weft netsim` on a 4×4×4 torus (under `mpirun -n ranks` when `ranks` is given) with
/// `extra` options and the log into `log`; returns its output.
fn netsim(ranks: Option<usize>, extra: &[&str], log: &Path) -> String {
    netsim_on("4,4,4", ranks, extra, log)
}

/// [`netsim`] on a torus of `dims`.
fn netsim_on(dims: &str, ranks: Option<usize>, extra: &[&str], log: &Path) -> String {
    let weft = env!("CARGO_BIN_EXE_weft");
    let mut cmd = match ranks {
        None => Command::new(weft),
        Some(r) => {
            let mut c = Command::new("mpirun");
            // Open MPI refuses root without these; a machine of two cores has two slots.
            c.env("OMPI_ALLOW_RUN_AS_ROOT", "1").env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1").args(["--oversubscribe", "-n", &r.to_string(), weft]);
            c
        }
    };
    let out = cmd
        .args(RUN)
        .arg("7")
        .args(["--dims", dims])
        .args(extra)
        .arg("--log")
        .arg(log)
        .current_dir(root())
        .output()
        .unwrap_or_else(|e| panic!("mpirun: {e} (install Open MPI: scripts/setup.sh, or apt-get install openmpi-bin libopenmpi-dev)"));
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "weft netsim {ranks:?} {extra:?} failed:\n{text}");
    text
}

fn temp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("weft-netsim-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

#[test]
fn a_4x4x4_torus_with_bit_errors_and_a_pulled_cable_is_the_same_on_one_and_two_ranks_and_any_window() {
    let (one, two, narrow, whole) = (temp("one.log"), temp("two.log"), temp("narrow.log"), temp("whole.log"));
    netsim(None, &CUT, &one);
    let text = netsim(Some(2), &CUT, &two);
    assert!(text.contains("2 rank(s) ([32, 32] nodes each)"), "{text}");
    // Swaps every 4 cycles instead of every 15: the cables' errors and delays are the same.
    netsim(Some(2), &[&CUT[..], &["--window", "4"]].concat(), &narrow);
    // With the cable in place every packet arrives too, and the packets' cycles differ.
    netsim(None, &[], &whole);
    let log = std::fs::read_to_string(&one).unwrap();
    assert_eq!(log, std::fs::read_to_string(&two).unwrap(), "one process and two ranks differ");
    assert_eq!(log, std::fs::read_to_string(&narrow).unwrap(), "windows of 15 and 4 cycles differ");
    assert!(log.contains("# cable xp of node 0 pulled from traffic cycle 200 for 400 cycles"), "the log does not record the cut");
    let packets = |log: &str| log.lines().filter(|l| !l.starts_with('#')).map(String::from).collect::<Vec<_>>();
    assert_ne!(packets(&log), packets(&std::fs::read_to_string(&whole).unwrap()), "pulling the cable changed nothing");
    // The totals line: enough packets, and errors that the links had to repair.
    let last = log.lines().last().unwrap();
    let words: Vec<u64> = last.split_whitespace().filter_map(|w| w.parse().ok()).collect();
    let [packets, flipped, cycles] = words[..] else { panic!("{last}") };
    assert!(packets > 1000 && flipped > 100 && cycles == 16 + 1500 + 1000 + 1500, "{last}");
    assert_eq!(log.lines().filter(|l| !l.starts_with('#')).count() as u64, packets);
    let _ = std::fs::remove_dir_all(one.parent().unwrap());
}

#[test]
fn nodes_on_their_own_clocks_300_ppm_apart_are_the_same_on_one_and_two_ranks() {
    let (one, two, common) = (temp("ppm_one.log"), temp("ppm_two.log"), temp("ppm_common.log"));
    let ppm = [&CUT[..], &["--ppm", "300"]].concat();
    netsim_on("4,2,2", None, &ppm, &one);
    netsim_on("4,2,2", Some(2), &[&ppm[..], &["--window", "4"]].concat(), &two);
    netsim_on("4,2,2", None, &CUT, &common);
    let log = std::fs::read_to_string(&one).unwrap();
    assert_eq!(log, std::fs::read_to_string(&two).unwrap(), "one process and two ranks (window 4) differ with clocks of their own");
    assert!(log.contains("within ±300 ppm"), "the log does not record the clocks");
    // The same packets arrive (each run checks them all), in other cycles.
    let packets = |log: &str| log.lines().filter(|l| !l.starts_with('#')).map(String::from).collect::<Vec<_>>();
    let common = std::fs::read_to_string(&common).unwrap();
    assert_eq!(packets(&log).len(), packets(&common).len());
    assert_ne!(packets(&log), packets(&common), "clocks of their own changed nothing");
}

#[test]
fn impossible_runs_are_refused_naming_the_option() {
    let weft = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_weft")).args(args).current_dir(root()).output().unwrap();
        assert!(!out.status.success());
        String::from_utf8_lossy(&out.stderr).to_string()
    };
    let e = weft(&["netsim", "--config", "examples/torus_2x2x2.toml", "--window", "16"]);
    assert!(e.contains("window = 16") && e.contains("1 ..= 15"), "{e}");
    let e = weft(&["netsim", "--config", "examples/torus_2x2x2.toml", "--dims", "4,4"]);
    assert!(e.contains("--dims") && e.contains("X,Y,Z"), "{e}");
    let e = weft(&["netsim", "--config", "examples/torus_2x2x2.toml", "--cut", "8,xp,0,10"]);
    assert!(e.contains("cut 0: node 8 is out of range: allowed 0..=7"), "{e}");
    let e = weft(&["netsim", "--config", "examples/torus_2x2x2.toml", "--cut", "0,xq,0,10"]);
    assert!(e.contains("`--cut` = 0,xq,0,10") && e.contains("xp, xn, yp, yn, zp, zn"), "{e}");
    let e = weft(&["netsim", "--config", "examples/torus_2x2x2.toml", "--dims", "4,4,1", "--cut", "0,zp,0,10"]);
    assert!(e.contains("cut 0: direction zp has no cable"), "{e}");
    let e = weft(&["netsim", "--config", "examples/torus_2x2x2.toml", "--ppm", "900"]);
    assert!(e.contains("ppm off the nominal frequency: allowed ±801"), "{e}");
    let e = weft(&["netsim", "--config", "examples/torus_2x2x2.toml", "--pattern", "diagonal"]);
    assert!(e.contains("--pattern") && e.contains("uniform, transpose, neighbour"), "{e}");
    let e = weft(&["netsim", "--config", "examples/torus_2x2x2.toml", "--bytes", "64..16"]);
    assert!(e.contains("payload bytes 64 ..= 16") && e.contains("max_packet_bytes"), "{e}");
}
