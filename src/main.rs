use clap::{Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;

use weft::flow::{check, generate, select, Stages};

/// weft: describe FPGA hardware for multi-FPGA HPC systems, check it in the built-in simulator,
/// and export Verilog for vendor flows, Verilator and Yosys.
#[derive(Parser)]
#[command(name = "weft", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Write every shipped module as Verilog to <out>/<family>/<module>.v
    Generate {
        /// Output folder
        #[arg(long, default_value = "generated")]
        out: PathBuf,
    },
    /// Check shipped modules: built-in testbench, Verilator lint (-Wall), Yosys synth_xilinx
    /// (report in <generated>/reports/<module>.json), Icarus compile
    Check {
        /// A module name, or `all`
        #[arg(default_value = "all")]
        module: String,
        /// Folder holding the generated Verilog
        #[arg(long, default_value = "generated")]
        generated: PathBuf,
    },
    /// Measure and print performance figures
    Bench {
        #[command(subcommand)]
        what: Bench,
    },
}

#[derive(Subcommand)]
enum Bench {
    /// Simulated cycles per second of the built-in simulator and the Verilator harness on the
    /// same FIFO with the same stimulus
    SimSpeed {
        /// Cycles to simulate in each simulator
        #[arg(long, default_value_t = 200_000, value_parser = clap::value_parser!(u64).range(1000..))]
        cycles: u64,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result: Result<(), String> = match cli.command {
        Command::Generate { out } => generate(&out).map_err(|e| e.to_string()).map(|files| {
            for file in files {
                println!("wrote {}", file.display());
            }
        }),
        Command::Check { module, generated } => run_check(&module, &generated),
        Command::Bench { what: Bench::SimSpeed { cycles } } => weft::sim::speed::report(cycles).map(|text| print!("{text}")),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::FAILURE
        }
    }
}

fn run_check(selection: &str, generated: &PathBuf) -> Result<(), String> {
    let modules = select(selection)?;
    let reports = generated.join("reports");
    println!("{:<28} {:>6} {:>6} {:>7} {:>6} {:>5}  testbench", "module", "LUT", "FF", "LUTRAM", "BRAM", "depth");
    for module in &modules {
        let done = check(module, generated, Some(&reports), Stages::ALL).map_err(|e| e.to_string())?;
        let s = &done.synth;
        println!(
            "{:<28} {:>6} {:>6} {:>7} {:>6} {:>5}  {}",
            done.module, s.luts, s.flip_flops, s.lut_rams, s.brams, s.logic_depth, done.testbench
        );
    }
    println!("checked {} module(s): built-in testbench, verilator lint, yosys synthesis, icarus compile all passed", modules.len());
    Ok(())
}
