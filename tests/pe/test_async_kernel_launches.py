"""Examples stay correct when kernel launches are asynchronous, as on a GPU.

The Numba CUDA simulator runs a kernel to completion inside the launch, which hides a
missing synchronise. ``tests/pe/async_sim`` (a ``sitecustomize`` put first on the PEs'
PYTHONPATH) makes launches return at once and run later on a background thread in
launch order, with synchronising calls waiting for them. First the mode itself is
checked, then examples/numba_ring.py runs under it, and a copy of the example with its
``cuda.synchronize()`` removed (the old example) must fail there.
"""

import os
import subprocess
import sys

import pytest

from conftest import REPO, run_pes

pytest.importorskip("numba.cuda", reason="numba-cuda is not installed (pip install 'pyshmem[numba]')")

ASYNC_SIM = REPO / "tests" / "pe" / "async_sim"
EXAMPLE = REPO / "examples" / "numba_ring.py"
# 60 laps with short launch delays: the old example failed 15 runs of 15 on 2 PEs here.
LAPS = "60"


def _env(seed=1):
    return {"PYTHONPATH": f"{ASYNC_SIM}{os.pathsep}{REPO}", "ASYNC_SIM_MAX_DELAY": "0.002",
            "ASYNC_SIM_SEED": str(seed), "NUMBA_ENABLE_CUDASIM": "1"}


PROBE = r'''
import time
import numpy as np
from numba import cuda

a = cuda.to_device(np.zeros(4))

@cuda.jit
def fill(x, v):
    x[cuda.threadIdx.x] = v

fill[1, 4](a, 7.0)
print("AFTER LAUNCH", a._ary.tolist())           # the kernel has not run yet
cuda.synchronize()
print("AFTER SYNC", a._ary.tolist())
fill[1, 4](a, 8.0)
print("COPY", a.copy_to_host().tolist())         # a copy waits for the kernel
fill[1, 4](a, 9.0)
cuda.stream().synchronize()
print("STREAM", a._ary.tolist())
host = np.zeros(4)
fill[1, 4](host, 5.0)                            # host arrays: Numba copies back, so it waits
print("HOST ARG", host.tolist())

@cuda.jit
def out_of_bounds(x):
    x[100] = 1

out_of_bounds[1, 1](a)
fill[1, 4](a, 1.0)                               # skipped: the error is sticky
try:
    cuda.synchronize()
except RuntimeError as exc:
    print("RAISED", "asynchronous simulated kernel failed" in str(exc), a._ary.tolist())
'''


def test_async_mode_defers_launches_until_a_synchronising_call():
    env = dict(os.environ, **_env())
    env["ASYNC_SIM_MAX_DELAY"] = "0.2"
    proc = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = proc.stdout.splitlines()
    assert lines == ["AFTER LAUNCH [0.0, 0.0, 0.0, 0.0]", "AFTER SYNC [7.0, 7.0, 7.0, 7.0]",
                     "COPY [8.0, 8.0, 8.0, 8.0]", "STREAM [9.0, 9.0, 9.0, 9.0]", "HOST ARG [5.0, 5.0, 5.0, 5.0]",
                     "RAISED True [9.0, 9.0, 9.0, 9.0]"], proc.stdout + proc.stderr[-3000:]


@pytest.mark.parametrize("sync", ["host", "device"])
@pytest.mark.parametrize("npes", [2, 3])
def test_numba_ring_is_correct_when_launches_are_asynchronous(sync, npes):
    proc = run_pes(EXAMPLE, npes, "--laps", LAPS, "--sync", sync, timeout=120, env=_env(npes),
                   launcher_args=("--sim",))
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    assert f"{LAPS} laps of 32-element blocks around {npes} PEs" in out and f"{sync} barrier): OK" in out, out


def test_without_the_synchronise_the_ring_fails_when_launches_are_asynchronous(tmp_path):
    """The old example (host barrier straight after the launch) under the same mode: a
    fast PE's next lap overwrites its neighbour's inbox before the check. Proves the
    test above would catch it; a few seeds, since it is a race."""
    source = EXAMPLE.read_text()
    lines = source.splitlines(keepends=True)
    sync = [k for k, text in enumerate(lines) if text.strip().startswith("cuda.synchronize()  ")
            and "checked lap" in text]
    assert len(sync) == 1, "the per-lap cuda.synchronize() of examples/numba_ring.py moved"
    lines[sync[0]] = lines[sync[0]].split("cuda.")[0] + "pass\n"
    old = tmp_path / "numba_ring_old.py"
    old.write_text("".join(lines))
    outs = []
    for seed in (1, 2, 3):
        proc = run_pes(old, 2, "--laps", LAPS, timeout=120, env=_env(seed), launcher_args=("--sim",))
        outs.append(proc.stdout + proc.stderr)
        if proc.returncode != 0 and "numba_ring: FAILED" in proc.stdout:
            return
    pytest.fail("the example without cuda.synchronize() passed every run:\n" + "\n".join(outs))
