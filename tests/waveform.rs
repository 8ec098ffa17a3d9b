//! Waveforms from the built-in simulator: `fp32_add` traced through its stream testbench, the
//! VCD read back by vcdvcd (an independent parser, installed by `scripts/setup.sh`), and the
//! results in the waveform checked against native f32 addition.

use std::process::Command;

use num_bigint::BigUint;
use weft_hdl::float::{operator_netlist, FloatFormat, FloatOperator};
use weft_hdl::rust_hdl::prelude::*;
use weft_hdl::testbench::{Bench, Rng};
use weft_ip::fp::{Fp32Binary, SHIPPED};

#[test]
fn fp32_add_waveform_reads_back_with_an_independent_parser() {
    let stages = SHIPPED.iter().find(|(op, _)| *op == FloatOperator::Add).unwrap().1;
    let net = operator_netlist(FloatOperator::Add, FloatFormat::BINARY32, stages).unwrap();
    let mut bench = Bench::new(Fp32Binary::new(net), |u| &mut u.clk).unwrap();
    let dir = std::env::temp_dir().join(format!("weft_vcd_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("fp32_add.vcd");
    bench.uut.trace(&path, "fp32_add").unwrap();

    // Reset, then one pair per cycle with the sink always ready.
    let mut rng = Rng::new(7);
    let pairs: Vec<(u32, u32)> = (0..40).map(|_| (rng.next_u64() as u32 & 0xC7FF_FFFF, rng.next_u64() as u32 & 0xC7FF_FFFF)).collect();
    bench.uut.rst.next = true;
    bench.tick();
    bench.uut.rst.next = false;
    bench.uut.m_axis.tready.next = true;
    for k in 0..pairs.len() + stages + 2 {
        let (a, b) = pairs.get(k).copied().unwrap_or((0, 0));
        bench.uut.s_axis.tdata.next = Bits::<64>::from(BigUint::from((b as u64) << 32 | a as u64));
        bench.uut.s_axis.tvalid.next = k < pairs.len();
        bench.tick();
    }
    bench.uut.finish_trace().unwrap();

    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/vcd/read.py");
    let out = Command::new("python3")
        .args([script, path.to_str().unwrap(), "fp32_add.m_axis_tdata", "fp32_add.m_axis_tvalid", "fp32_add.s_axis_tdata", "fp32_add.s_axis_tvalid"])
        .output()
        .expect("python3 is needed to read the VCD");
    assert!(out.status.success(), "vcdvcd could not read the VCD (run scripts/setup.sh to install it):\n{}", String::from_utf8_lossy(&out.stderr));
    let read: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();

    // Ports with their full widths, and named internal signals of the pipeline.
    let signals = read["signals"].as_object().unwrap();
    let width = |name: &str| signals.iter().find(|(k, _)| k.split('[').next() == Some(name)).map(|(_, v)| v.as_u64().unwrap());
    for (port, w) in [("s_axis_tdata", 64), ("s_axis_tvalid", 1), ("m_axis_tready", 1), ("m_axis_tdata", 32), ("m_axis_tvalid", 1), ("s_axis_tready", 1)] {
        assert_eq!(width(&format!("fp32_add.{port}")), Some(w), "port {port} in {:?}", signals.keys().collect::<Vec<_>>());
    }
    let internal = signals.keys().filter(|k| !k.contains("axis") && !k.ends_with(".clk")).count();
    assert!(internal >= 10, "only {internal} named internal signals: {:?}", signals.keys().collect::<Vec<_>>());
    assert!(width("fp32_add.out_valid").is_some() && width("fp32_add.advance").is_some());

    // The waveform's input and output beats, paired in order, are native f32 additions.
    let samples = &read["samples"];
    let column = |name: &str| -> Vec<u64> { samples[name].as_array().unwrap().iter().map(|v| v.as_u64().unwrap()).collect() };
    let (s_data, s_valid, m_data, m_valid) = (column("fp32_add.s_axis_tdata"), column("fp32_add.s_axis_tvalid"), column("fp32_add.m_axis_tdata"), column("fp32_add.m_axis_tvalid"));
    let ins: Vec<u64> = s_data.iter().zip(&s_valid).filter(|(_, v)| **v == 1).map(|(d, _)| *d).collect();
    let outs: Vec<u64> = m_data.iter().zip(&m_valid).filter(|(_, v)| **v == 1).map(|(d, _)| *d).collect();
    assert_eq!(ins.len(), pairs.len(), "input beats in the waveform");
    assert_eq!(outs.len(), pairs.len(), "output beats in the waveform");
    for (k, (i, o)) in ins.iter().zip(&outs).enumerate() {
        let (a, b) = (f32::from_bits(*i as u32), f32::from_bits((*i >> 32) as u32));
        let want = (a + b).to_bits();
        let want = if (a + b).is_nan() { 0x7FC0_0000 } else { want };
        assert_eq!(*o as u32, want, "beat {k}: {a:e} + {b:e}");
    }
    std::fs::remove_dir_all(&dir).ok();
}
