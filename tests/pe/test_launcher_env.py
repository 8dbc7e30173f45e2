"""PEs started by other launchers (srun, mpirun/oshrun, Hydra/PMI, torchrun) find their
rank and size in those launchers' variables. The processes are started by hand here with
exactly those variables, as the launcher would set them, plus the rendezvous address and
job secret that pyshmem documents for this case."""

import os
import secrets
import socket
import subprocess
import sys

import pytest

from conftest import PROGRAMS, REPO

LAUNCHERS = {
    "slurm": lambda r, n: {"SLURM_JOB_ID": "4242", "SLURM_PROCID": str(r), "SLURM_NTASKS": str(n)},
    "openmpi": lambda r, n: {"OMPI_COMM_WORLD_RANK": str(r), "OMPI_COMM_WORLD_SIZE": str(n)},
    "pmi": lambda r, n: {"PMI_RANK": str(r), "PMI_SIZE": str(n)},
    "torchrun": lambda r, n: {"TORCHELASTIC_RUN_ID": "t1", "RANK": str(r), "WORLD_SIZE": str(n)},
}


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _env(extra):
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYSHMEM_")}
    env.update(PYTHONPATH=str(REPO), PYTHONUNBUFFERED="1", PYSHMEM_SYMMETRIC_SIZE="16M",
               PYSHMEM_BOOTSTRAP_TIMEOUT="30")
    env.update(extra)
    return env


def _run(launcher, npes, common):
    procs = [subprocess.Popen([sys.executable, str(PROGRAMS / "launcher_env_ring.py")],
                              env=_env({**common, **LAUNCHERS[launcher](r, npes), "EXPECT_LAUNCHER": launcher}),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=str(REPO))
             for r in range(npes)]
    outs = []
    for p in procs:
        try:
            outs.append(p.communicate(timeout=60))
        except subprocess.TimeoutExpired:
            for q in procs:
                q.kill()
            raise
    return procs, outs


@pytest.mark.parametrize("launcher", list(LAUNCHERS))
def test_rank_and_size_from_the_launcher(launcher):
    npes = 3
    common = {"PYSHMEM_JOB_SECRET": secrets.token_hex(32)}
    if launcher == "torchrun":  # rendezvous defaults to MASTER_ADDR:MASTER_PORT+1
        common.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(_free_port() - 1))
    else:
        common["PYSHMEM_BOOTSTRAP_ADDR"] = f"127.0.0.1:{_free_port()}"
    procs, outs = _run(launcher, npes, common)
    for r, (p, (out, err)) in enumerate(zip(procs, outs)):
        assert p.returncode == 0, out + err
        assert f"OK pe={r} of {npes} via {launcher}" in out, out + err


def test_missing_rendezvous_is_a_clear_error():
    procs, outs = _run("slurm", 2, {})
    for r, (p, (out, err)) in enumerate(zip(procs, outs)):
        assert p.returncode != 0
        assert f"started by slurm as rank {r} of 2: set PYSHMEM_BOOTSTRAP_ADDR=host:port" in err, err
        assert "PYSHMEM_JOB_SECRET" in err
