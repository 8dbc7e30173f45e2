"""Ctrl-C reaches PEs blocked inside pyshmem waits: the wait raises KeyboardInterrupt
(the core polls for Python signals while it sleeps) instead of hanging until SIGKILL."""

import os
import signal
import subprocess
import sys
import time

import pytest

from conftest import PROGRAMS, REPO
from latency_bounds import assert_within


@pytest.mark.parametrize("where", ["wait_until", "barrier", "signal"])
def test_sigint_interrupts_a_blocked_wait(where):
    env = dict(os.environ, PYTHONPATH=str(REPO), PYTHONUNBUFFERED="1", PYSHMEM_SYMMETRIC_SIZE="16M")
    cmd = [sys.executable, "-m", "pyshmem.run", "-n", "2", "--tag-output", "--timeout", "60",
           sys.executable, str(PROGRAMS / "wait_forever.py"), where]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=REPO)
    try:
        ready = 0
        deadline = time.monotonic() + 30
        while ready < 2 and time.monotonic() < deadline:
            line = proc.stdout.readline()
            ready += "READY" in line
        assert ready == 2, "PEs did not start"
        time.sleep(0.5)  # let them enter the wait and reach the sleeping phase
        t0 = time.monotonic()
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
        elapsed = time.monotonic() - t0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    # Both PEs left the wait through KeyboardInterrupt (printed INTERRUPTED), not through
    # the launcher's SIGKILL escalation 2 s later; and the job ended promptly.
    assert out.count("INTERRUPTED") == 2, out + err
    assert_within("sigint_to_exit", elapsed, out + err)
    assert proc.returncode in (3, 130), (proc.returncode, err)
