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
    for sub in ["generate", "check", "bench"] {
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
