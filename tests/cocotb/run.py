"""Runs test_axis.py on Icarus against one generated module: python3 run.py <module>."""
import sys
from pathlib import Path

from cocotb.runner import get_results, get_runner

here = Path(__file__).resolve().parent
root = here.parent.parent
module = sys.argv[1]
build_dir = root / "target" / "cocotb" / module
runner = get_runner("icarus")
runner.build(
    verilog_sources=[root / "generated" / "axis" / f"{module}.v"],
    hdl_toplevel=module,
    build_dir=build_dir,
    always=True,
)
results = runner.test(hdl_toplevel=module, test_module="test_axis", test_dir=here, build_dir=build_dir)
total, failed = get_results(results)
print(f"{module}: {total - failed} passed, {failed} failed")
sys.exit(1 if failed or total == 0 else 0)
