"""Numba-simulator kernels whose blocks wait for each other fail with KernelError
instead of hanging (the simulator runs blocks one after another); waits that another
PE satisfies still work."""

import time

import pytest

from conftest import assert_ok, run_pes
from latency_bounds import assert_within

pytest.importorskip("numba.cuda", reason="numba-cuda is not installed (pip install 'pyshmem[numba]')")


def test_inter_block_waits_raise_and_cross_pe_waits_work():
    proc = run_pes("sim_block_waits.py", 2, "caught", timeout=150, launcher_args=("--sim",),
                   env={"PYSHMEM_SIM_BLOCK_WAIT_TIMEOUT": "3"})
    assert_ok(proc, 2)


def test_uncaught_inter_block_wait_ends_the_job():
    t0 = time.monotonic()
    proc = run_pes("sim_block_waits.py", 2, "uncaught", timeout=150, launcher_args=("--sim",),
                   env={"PYSHMEM_SIM_BLOCK_WAIT_TIMEOUT": "2"})
    took = time.monotonic() - t0
    assert proc.returncode != 0, proc.stdout + proc.stderr
    assert "KernelError" in proc.stderr and "runs a launch's blocks one after another" in proc.stderr, proc.stderr
    assert "launch returned" not in proc.stderr
    assert_within("sim_uncaught", took, "the job should end soon after the 2 s limit", cap=140)
