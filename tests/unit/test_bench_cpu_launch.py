"""benchmarks/bench_cpu_launch.py in a tiny configuration, so the script cannot rot: both
builds launch and every shape gets a row. Timings are not asserted."""

import os
import re
import subprocess
import sys

import pytest

from conftest import REPO, cpu_kernel_toolchain_missing


def test_bench_cpu_launch_runs():
    reason = cpu_kernel_toolchain_missing()
    if reason is not None:
        pytest.skip(str(reason))
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.run([sys.executable, str(REPO / "benchmarks" / "bench_cpu_launch.py"), "--reps", "2",
                           "--shapes", "2x1,2x64"], capture_output=True, text=True, timeout=300, env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    for shape in ("2x1", "2x64"):
        assert re.search(rf"^{shape}\s+\d+\s+\d+\s+\d+\.\d$", proc.stdout, re.M), proc.stdout
