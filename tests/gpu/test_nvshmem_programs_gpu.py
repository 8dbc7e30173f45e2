"""Whole NVSHMEM programs built for the GPU (pyshmem-nvcc --gpu) and run on a real GPU
under shmemrun, 2 PEs (tests/gpu: skipped without a GPU; scripts/gpu_check.sh runs it).
The same sources run on the CPU in tests/pe/test_nvshmem_programs.py; here every program
checks its own results and prints "PE k of n: ... OK"."""

import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))
from harness import gpu_available  # noqa: E402
from conftest import REPO, run_pes  # noqa: E402

AVAILABLE, WHY = gpu_available()
pytestmark = pytest.mark.skipif(not AVAILABLE, reason=f"needs a GPU: {WHY}")

PROGRAMS = REPO / "tests" / "nvshmem_programs"
# errors.cu checks the CPU runtime subset's own refusals; it is only compiled for the GPU.
RUNNABLE = {"ring_bcast": PROGRAMS / "ring_bcast.cu", "ring_reduce": PROGRAMS / "ring_reduce.cu",
            "collective_launch": PROGRAMS / "collective_launch.cu", "moe_shuffle": PROGRAMS / "moe_shuffle.cu",
            "half_reduce": PROGRAMS / "half_reduce.cu", "wait_sets": PROGRAMS / "wait_sets.cu",
            "maxloc_reduce": PROGRAMS / "maxloc_reduce.cu",
            "alltoall": REPO / "examples" / "nvshmem" / "alltoall.cu"}


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    from pyshmem.nvcc import find_nvcc

    if find_nvcc() is None:
        pytest.skip("needs nvcc (the CUDA toolkit) to build the programs")
    out = tmp_path_factory.mktemp("nvshmem_gpu")
    env = dict(os.environ, PYTHONPATH=str(REPO))

    def build(item):
        name, src = item
        return name, subprocess.run([sys.executable, "-m", "pyshmem.nvcc", "--gpu", str(src), "-o", str(out / name),
                                     "-arch=sm_90", "-O2"], capture_output=True, text=True, timeout=300, env=env)

    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        for name, proc in pool.map(build, RUNNABLE.items()):
            assert proc.returncode == 0, f"pyshmem-nvcc --gpu failed for {name}:\n{proc.stderr}"
    return out


@pytest.mark.parametrize("name", sorted(RUNNABLE))
def test_program_runs_on_the_gpu(built, name):
    proc = run_pes(built / name, 2, timeout=120,
                   env={"PYSHMEM_BACKEND": "cuda", "PYSHMEM_CUDA_SYMMETRIC_SIZE": "256M", "PYSHMEM_TIMEOUT": "30"})
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    for pe in range(2):
        assert re.search(rf"PE {pe} of 2: .*OK$", proc.stdout, re.M), out
    assert "FAILED" not in out
