"""scripts/gpu_check.sh without a GPU: it must parse, stop fast, say why, print its one
summary table and exit non-zero (the GPU machine's time is too short for a script that
hangs or fails silently). Each run here is forced to the no-GPU path with
GPU_CHECK_NVIDIA_SMI and skips the build (GPU_CHECK_SKIP_BUILD=1)."""

import os
import re
import subprocess
import time
from pathlib import Path

from latency_bounds import assert_within

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "scripts" / "gpu_check.sh"


def _run(tmp_path, **env):
    full = dict(os.environ, OUT=str(tmp_path / "out"), GPU_CHECK_CACHE=str(tmp_path / "cache"),
                GPU_CHECK_SKIP_BUILD="1", **env)
    t0 = time.monotonic()
    proc = subprocess.run(["bash", str(SCRIPT)], capture_output=True, text=True, timeout=60, env=full,
                          cwd=str(tmp_path))
    return proc, time.monotonic() - t0


def test_script_parses_and_is_executable():
    assert SCRIPT.stat().st_mode & 0o111, "scripts/gpu_check.sh must be executable"
    proc = subprocess.run(["bash", "-n", str(SCRIPT)], capture_output=True, text=True, timeout=30)
    assert proc.returncode == 0, proc.stderr


def test_every_step_has_a_timeout_within_the_budget():
    text = SCRIPT.read_text()
    budgets = dict(re.findall(r'run_step "([^"]+)" (\d+) ', text))
    assert set(budgets) >= {"machine", "build", "pyshmem info", "CUDA driver", "tests/gpu", "perftest gpu",
                            "bench_device"}, budgets
    # Two modes, each within the deadline (which also clips every step): the GPU check, and
    # the NVIDIA perftest comparison, which takes the place of the tests and benchmarks.
    compare = "NVIDIA perftest side by side"
    assert sum(int(v) for k, v in budgets.items() if k != compare) <= 450, budgets
    assert sum(int(v) for k, v in budgets.items() if k not in ("tests/gpu", "perftest gpu", "bench_device")) <= 450
    assert "nvshmem_src" in text and "nvshmem_src/" in (SCRIPT.parents[1] / ".gitignore").read_text()
    assert 'DEADLINE="${GPU_CHECK_DEADLINE:-450}"' in text
    assert "export PYSHMEM_TIMEOUT=" in text and "-m pytest -x" in text and "--timeout=" in text


def test_no_gpu_stops_at_once_with_a_reason_and_the_summary(tmp_path):
    proc, took = _run(tmp_path, GPU_CHECK_NVIDIA_SMI=str(tmp_path / "no-such-nvidia-smi"))
    out = proc.stdout
    assert proc.returncode == 2, out + proc.stderr
    print(f"no GPU: {took:.2f} s")
    assert_within("gpu_check_no_gpu", took, out, cap=60)  # cap: _run's timeout
    assert "=== summary" in out and "| check" in out, out
    assert "| tests/gpu" in out and "| perftest gpu" in out and "no figures" in out, out
    assert "NO GPU (exit 2): no GPU:" in out and "no-such-nvidia-smi not found" in out, out
    assert (tmp_path / "out" / "steps.tsv").read_text().startswith("machine\tno GPU"), out


def test_a_step_that_hangs_is_cut_at_its_timeout_and_reported(tmp_path):
    smi = tmp_path / "nvidia-smi"
    smi.write_text("#!/bin/sh\nexec sleep 60\n")
    smi.chmod(0o755)
    # the deadline clips the machine step's own 10 s to 6 s
    proc, took = _run(tmp_path, GPU_CHECK_NVIDIA_SMI=str(smi), GPU_CHECK_DEADLINE="6")
    out = proc.stdout
    assert proc.returncode == 2, out + proc.stderr
    print(f"hung step: {took:.2f} s")
    assert_within("gpu_check_deadline", took - 6, out, cap=50)  # past the deadline; cap: _run's timeout
    # Whole seconds left of the deadline when the step starts: 6, or 5 on a loaded machine.
    assert "| step: machine" in out and re.search(r"TIMEOUT after [56] s", out), out
    assert re.search(r"machine: timed out after [56] s", out) and "found no usable GPU" in out, out
