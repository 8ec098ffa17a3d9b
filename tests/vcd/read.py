"""Reads a VCD with vcdvcd (an independent parser) and prints, as JSON, every variable's full
hierarchical name with its width, and the value of chosen signals at each clock edge."""
import json
import sys

from vcdvcd import VCDVCD

path, *wanted = sys.argv[1:]
vcd = VCDVCD(path)
names = {}
for ref in vcd.references_to_ids:
    names[ref] = int(vcd[ref].size)
clk = [r for r in names if r.endswith(".clk")][0]
edges = [t for t, v in vcd[clk].tv if v == "1"]
samples = {}
for ref in names:
    short = ref.split("[")[0]
    if short in wanted:
        signal = vcd[ref]
        samples[short] = [int(signal[t], 2) if "x" not in signal[t] else None for t in edges]
print(json.dumps({"signals": names, "samples": samples, "cycles": len(edges)}))
