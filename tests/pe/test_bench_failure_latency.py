"""benchmarks/bench_failure_latency.py in a small configuration, so the script cannot rot:
a few cheap cases, one run each, every case gets a row. Timings are not asserted; every
case the bounds use (tests/latency_bounds.py) must exist in the benchmark."""

import os
import re
import subprocess
import sys

from conftest import REPO
from latency_bounds import TYPICAL

BENCH = REPO / "benchmarks" / "bench_failure_latency.py"
CASES = ("kill_to_exit", "raise_to_exit", "sigint_to_exit", "second_sigint", "bootstrap_timeout", "bootstrap_reject")


def test_bench_failure_latency_runs():
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.run([sys.executable, str(BENCH), "--reps", "1", "--cases", ",".join(CASES)],
                          capture_output=True, text=True, timeout=300, env=env, cwd=str(REPO))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.startswith("case "), proc.stdout
    for case in CASES:
        assert re.search(rf"^{case}\s+-?\d+\.\d{{3}}\s+-?\d+\.\d{{3}}\s+-?\d+\.\d{{3}}\s+1$", proc.stdout, re.M), \
            proc.stdout


def test_every_bounded_case_is_benchmarked():
    text = BENCH.read_text()
    # timed by the tests themselves (multihost: needs ip netns; the rest: unit-test fixtures and
    # sim_block_waits.py, which times each of its waits)
    measured_elsewhere = {"multihost_kill", "multihost_linkdown", "proxy_wake", "gpu_check_no_gpu", "gpu_check_deadline",
                          "fake_exit_pending", "kernel_fault_stop", "sim_wait_raise"}
    for case in set(TYPICAL) - measured_elsewhere:
        assert re.search(rf"^def {case}\(\):", text, re.M), case
