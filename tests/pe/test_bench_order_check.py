"""benchmarks/bench_order_check.py in a small configuration, so the script cannot rot: one
run of each part, every row printed. Timings are not asserted."""

import os
import re
import subprocess
import sys

from conftest import REPO

BENCH = REPO / "benchmarks" / "bench_order_check.py"


def test_bench_order_check_runs():
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.run([sys.executable, str(BENCH), "--reps", "1"], capture_output=True, text=True,
                          timeout=300, env=env, cwd=str(REPO))
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    for row in ("memory_model.py", "oneway host rules"):
        assert re.search(rf"^{row}\s+\d+\.\d\d\s+\d+\.\d\d\s+\d+\.\d\d$", proc.stdout, re.M), out
    assert re.search(r"^this build\s+\d+\.\d\s+\d+\.\d\s+1 ", proc.stdout, re.M), out
