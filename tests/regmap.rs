//! The register map files of each shipped system against the hardware: the generated SystemRDL
//! compiled by `systemrdl-compiler` (installed by `scripts/setup.sh`), the C header compiled by
//! the C compiler, and every register the RDL declares read through AXI4-Lite from the node's
//! netlist in the built-in simulator: its address answers, constants read as the RDL's reset
//! values, writable fields hold exactly their bits, read-only registers refuse writes, and every
//! address the RDL leaves out answers SLVERR.

use std::process::Command;

use weft::ip::axil::{Master, OKAY, SLVERR};
use weft::ip::system::node;
use weft::system::{generate, shipped};

struct RdlField {
    lsb: u32,
    msb: u32,
    reset: Option<u64>,
    writable: bool,
}

struct RdlReg {
    name: String,
    addr: u32,
    fields: Vec<RdlField>,
}

fn compile_rdl(path: &std::path::Path) -> Vec<RdlReg> {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/regmap/compile_rdl.py");
    let out = Command::new("python3").args([script, path.to_str().unwrap()]).output().expect("python3 is needed for systemrdl-compiler");
    assert!(out.status.success(), "systemrdl-compiler rejected {} (run scripts/setup.sh if it is missing):\n{}", path.display(), String::from_utf8_lossy(&out.stderr));
    let regs: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    regs.as_array()
        .unwrap()
        .iter()
        .map(|r| RdlReg {
            name: r["name"].as_str().unwrap().to_string(),
            addr: r["addr"].as_u64().unwrap() as u32,
            fields: r["fields"]
                .as_array()
                .unwrap()
                .iter()
                .map(|f| RdlField { lsb: f["lsb"].as_u64().unwrap() as u32, msb: f["msb"].as_u64().unwrap() as u32, reset: f["reset"].as_u64(), writable: f["sw_writable"].as_bool().unwrap() })
                .collect(),
        })
        .collect()
}

/// Compiles a program that includes `header` and prints `<PREFIX>_<REG>` for every register.
fn header_offsets(dir: &std::path::Path, header: &std::path::Path, prefix: &str, regs: &[RdlReg]) -> Vec<u32> {
    let prints: String = regs.iter().map(|r| format!("    printf(\"%u\\n\", (unsigned){prefix}_{});\n", r.name.to_uppercase())).collect();
    let program = format!("#include <stdio.h>\n#include \"{}\"\nint main(void) {{\n{prints}    return 0;\n}}\n", header.display());
    let (src, exe) = (dir.join("offsets.c"), dir.join("offsets"));
    std::fs::write(&src, program).unwrap();
    let cc = Command::new("cc").args(["-std=c99", "-Wall", "-Werror", "-o", exe.to_str().unwrap(), src.to_str().unwrap()]).output().expect("a C compiler (cc) is needed");
    assert!(cc.status.success(), "the C header does not compile:\n{}", String::from_utf8_lossy(&cc.stderr));
    let run = Command::new(&exe).output().unwrap();
    String::from_utf8(run.stdout).unwrap().lines().map(|l| l.parse().unwrap()).collect()
}

#[test]
fn rdl_and_c_header_agree_with_the_register_window() {
    for config in shipped() {
        let name = config.name.clone();
        let dir = std::env::temp_dir().join(format!("weft_regmap_{}_{name}", std::process::id()));
        generate(&config, &dir.join("generated"), &dir.join("constraints")).unwrap();
        let system = dir.join("generated/system");
        let regs = compile_rdl(&system.join(format!("{name}.rdl")));
        assert!(regs.len() >= 10, "{name}: only {} registers in the RDL", regs.len());

        let offsets = header_offsets(&dir, &system.join(format!("{name}_regs.h")), &name.to_uppercase(), &regs);
        assert_eq!(offsets, regs.iter().map(|r| r.addr).collect::<Vec<_>>(), "{name}: C header offsets against the RDL");

        let mut m = Master::new(node(&config.node).unwrap(), 3);
        for r in &regs {
            let (value, resp) = m.read(r.addr);
            assert_eq!(resp, OKAY, "{name}: {} at 0x{:03X} does not answer", r.name, r.addr);
            let mask = |f: &RdlField| (((1u64 << (f.msb - f.lsb + 1)) - 1) << f.lsb) as u32;
            let writable_bits = r.fields.iter().filter(|f| f.writable).fold(0u32, |acc, f| acc | mask(f));
            if writable_bits == 0 {
                for f in &r.fields {
                    if let Some(reset) = f.reset {
                        assert_eq!((value as u32 & mask(f)) >> f.lsb, reset as u32, "{name}: {} field at bit {}", r.name, f.lsb);
                    }
                }
                assert_eq!(m.write(r.addr, 0xFFFF_FFFF, 0xF, 0), SLVERR, "{name}: {} is read-only", r.name);
            } else {
                assert_eq!(value as u32, 0, "{name}: {} after reset", r.name);
                assert_eq!(m.write(r.addr, 0xFFFF_FFFF, 0xF, 0), OKAY);
                assert_eq!(m.read(r.addr), (writable_bits as u128, OKAY), "{name}: {} holds exactly its fields' bits", r.name);
                assert_eq!(m.write(r.addr, 0, 0xF, 0), OKAY);
            }
        }
        // Every other word up to the last register is unmapped.
        let last = regs.iter().map(|r| r.addr).max().unwrap();
        for addr in (0..=last + 4).step_by(4).filter(|a| !regs.iter().any(|r| r.addr == *a)) {
            assert_eq!(m.read(addr), (0, SLVERR), "{name}: 0x{addr:03X} is not in the RDL");
        }
        std::fs::remove_dir_all(&dir).ok();
    }
}
