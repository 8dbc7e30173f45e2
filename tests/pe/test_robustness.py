"""Failure paths found in review: none may hang the job or crash a PE."""

import os
import socket
import subprocess
import sys
import time

from conftest import PROGRAMS, REPO, assert_ok, run_pes
from latency_bounds import assert_within


def test_global_exit_zero_ends_every_pe():
    # the event: the job ends (a PE left in the barrier would run into run_pes' timeout)
    proc = run_pes("robust_global_exit.py", 4, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "PASSED-BARRIER" not in proc.stdout, proc.stdout


def test_sys_exit_nonzero_is_not_stuck_in_finalize():
    # the event: the job ends with PE 1's code (stuck in finalize, it would time out)
    proc = run_pes("robust_sys_exit.py", 2, timeout=120)
    assert proc.returncode == 3, proc.stdout + proc.stderr
    assert "PE 1 exited with code 3" in proc.stderr


def test_interrupted_set_lock_does_not_wedge_the_lock():
    proc = run_pes("robust_lock_interrupt.py", 2, timeout=60)
    assert_ok(proc, 2)
    assert "INTERRUPTED pe=1" in proc.stdout and "UNEXPECTED" not in proc.stdout


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_silent_connections_do_not_stall_the_rendezvous():
    """Other local users can connect to PE 0's port; idle connections must not delay
    or break the start of the job."""
    addr = f"127.0.0.1:{_free_port()}"
    env = dict(os.environ, PYTHONPATH=str(REPO), PYSHMEM_NPES="2", PYSHMEM_BOOTSTRAP_ADDR=addr,
               PYSHMEM_JOB_SECRET="cd" * 32, PYSHMEM_BOOTSTRAP_TIMEOUT="20", PYSHMEM_SYMMETRIC_SIZE="16M")
    env.pop("PYSHMEM_BOOTSTRAP_FD", None)
    code = "import pyshmem as s; s.barrier_all(); print('OK pe=%d' % s.my_pe(), flush=True)"
    pe0 = subprocess.Popen([sys.executable, "-c", code], env=dict(env, PYSHMEM_PE="0"),
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    silent = []
    try:
        host, port = addr.split(":")
        deadline = time.monotonic() + 15
        while len(silent) < 4 and time.monotonic() < deadline:
            c = socket.socket()
            try:
                c.connect((host, int(port)))
                silent.append(c)
            except ConnectionRefusedError:
                c.close()
                time.sleep(0.05)
        assert len(silent) == 4, "PE 0 never listened"
        t0 = time.monotonic()
        pe1 = subprocess.run([sys.executable, "-c", code], env=dict(env, PYSHMEM_PE="1"),
                             capture_output=True, text=True, timeout=30)
        out0, err0 = pe0.communicate(timeout=30)
        assert pe1.returncode == 0 and pe0.returncode == 0, (pe1.stderr, err0)
        assert "OK pe=1" in pe1.stdout and "OK pe=0" in out0
        # cap: under PE 0's PYSHMEM_BOOTSTRAP_TIMEOUT=20, which a stalled rendezvous would reach
        assert_within("rendezvous", time.monotonic() - t0, "the silent connections delayed the job", cap=20)
    finally:
        for c in silent:
            c.close()
        if pe0.poll() is None:
            pe0.kill()
            pe0.wait()
