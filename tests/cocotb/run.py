"""Runs a cocotb test module on Icarus against one generated module:
python3 run.py <module> [<test module, default test_axis>] [<generated family, default axis>]."""
import sys
from pathlib import Path

from cocotb.runner import get_results, get_runner

here = Path(__file__).resolve().parent
root = here.parent.parent
module = sys.argv[1]
test_module = sys.argv[2] if len(sys.argv) > 2 else "test_axis"
family = sys.argv[3] if len(sys.argv) > 3 else "axis"
build_dir = root / "target" / "cocotb" / module
runner = get_runner("icarus")
runner.build(
    verilog_sources=[root / "generated" / family / f"{module}.v"],
    hdl_toplevel=module,
    build_dir=build_dir,
    always=True,
)
# Results per module: two benches run in parallel, and a shared results.xml in test_dir races.
results = runner.test(hdl_toplevel=module, test_module=test_module, test_dir=here, build_dir=build_dir, results_xml=str(build_dir / "results.xml"))
total, failed = get_results(results)
print(f"{module}: {total - failed} passed, {failed} failed")
sys.exit(1 if failed or total == 0 else 0)
