"""pyshmem.init(mpi=comm): PEs bootstrapped through an mpi4py communicator under mpiexec."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import PROGRAMS, REPO


def _mpiexec():
    try:
        import mpi4py  # noqa: F401
    except ImportError:
        pytest.skip("mpi4py is not installed (pip install -e .[test] installs it with Open MPI)")
    exe = shutil.which("mpiexec", path=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    if exe is None:
        pytest.skip("no mpiexec on PATH")
    return exe


def _run(nranks, split=1):
    env = dict(os.environ, PYTHONPATH=str(REPO), TEST_SPLIT=str(split), OMPI_MCA_osc="^rdma")
    for k in [k for k in env if k.startswith("PYSHMEM_")]:
        del env[k]
    cmd = [_mpiexec(), "--allow-run-as-root", "--oversubscribe", "-n", str(nranks), sys.executable,
           str(PROGRAMS / "mpi_init.py")]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120, env=env, cwd=str(REPO))


@pytest.mark.parametrize("nranks", [1, 2, 3])
def test_ranks_of_comm_world_become_pes(nranks):
    proc = _run(nranks)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    for r in range(nranks):
        assert f"OK world={r} pe={r} n={nranks} left={(r - 1) % nranks}" in proc.stdout, out


def test_each_split_communicator_is_its_own_job():
    proc = _run(4, split=2)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    # colour = world rank % 2: job {0, 2} and job {1, 3}; the left neighbour is in the same job
    for world, pe, left in ((0, 0, 2), (2, 1, 0), (1, 0, 3), (3, 1, 1)):
        assert f"OK world={world} pe={pe} n=2 left={left}" in proc.stdout, out


def test_mpi_argument_must_be_a_communicator():
    _mpiexec()
    code = "import pyshmem\ntry:\n    pyshmem.init(mpi=42)\nexcept pyshmem.ShmemTypeError as e:\n    print('ERR', e)\n"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                          env=dict(os.environ, PYTHONPATH=str(REPO)))
    assert "ERR pyshmem.init: mpi= must be an mpi4py intracommunicator" in proc.stdout, proc.stdout + proc.stderr
