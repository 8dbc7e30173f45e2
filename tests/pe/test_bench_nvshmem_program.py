"""benchmarks/bench_nvshmem_program.py in a small configuration, so the script cannot rot:
one rep, both rows printed, and the two builds' kernels compared. Timings are not asserted."""

import os
import re
import shutil
import subprocess
import sys

import pytest

from conftest import REPO, cpu_kernel_toolchain_missing


def test_bench_nvshmem_program_runs():
    reason = cpu_kernel_toolchain_missing()
    if reason:
        pytest.skip(reason)
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.run([sys.executable, str(REPO / "benchmarks" / "bench_nvshmem_program.py"), "--reps", "1",
                           "--iters", "200"], capture_output=True, text=True, timeout=600, env=env, cwd=str(REPO))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    for row in (r"put_lat \(ns/put\+quiet\)", r"put_bw 64 KiB \(GB/s\)"):
        assert re.search(rf"^{row}\s+\d+\.\d+\s+\d+\.\d+\s+\d+\.\d+\s+\d+\.\d+$", proc.stdout, re.M), proc.stdout
    if shutil.which("objdump"):  # the names are one inline call: the same machine code
        assert "the two programs' kernels are the same machine code: yes" in proc.stdout, proc.stdout
