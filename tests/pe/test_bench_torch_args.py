"""benchmarks/bench_torch_args.py in a small configuration, so the script cannot rot: both
runs (fast path and DLPack) take the path they ask for, the tensor puts land, and every
row is printed. Timings are not asserted."""

import os
import re
import subprocess
import sys

import pytest

from conftest import REPO

pytest.importorskip("torch")
BENCH = REPO / "benchmarks" / "bench_torch_args.py"


def test_bench_torch_args_runs():
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.run([sys.executable, str(BENCH), "--repeats", "1", "--iters", "200"], capture_output=True,
                          text=True, timeout=300, env=env, cwd=str(REPO))
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    for row in ("numpy", "torch source", "torch source target"):
        assert re.search(rf"^\| {row} \| \d+ \| \d+\.\d\dx \| \d+ \| \d+\.\d\dx \|$", proc.stdout, re.M), out
