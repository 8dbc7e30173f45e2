"""Hangs that explain themselves: PYSHMEM_TIMEOUT's report from every PE, shmemrun's
stack dumps (--timeout, SIGUSR1), under the real launcher."""

import os
import re
import signal
import subprocess
import sys
import time

import pytest

from conftest import REPO, run_pes, ucx_unavailable
from latency_bounds import assert_within

HANG = "hang_signal.py"


def _report_checks(out, same_node=True):
    assert out.count("pyshmem: PYSHMEM_TIMEOUT=2.00 s expired on PE ") == 1, out  # one report per job
    assert "PE 0: waits in pyshmem.signal_wait_until" in out, out
    # the signal object: the job's second allocation, the condition and its value now
    assert "on allocation #2 (64 bytes at heap offset" in out and "until it is >= 1; it holds 0" in out, out
    assert "PE 1: waits in pyshmem.barrier_all" in out and "needs PE 0 to act" in out, out
    # what the others last issued toward PE 0: the data, not the signal
    assert "put of 32 bytes to PE 0 on allocation #1 (64 bytes at heap offset" in out, out
    assert "PE 0: waits in pyshmem.signal_wait_until for 2." in out or not same_node
    # every PE's Python stack, from faulthandler
    assert f'{HANG}", line 16 in <module>' in out and f'{HANG}", line 19 in <module>' in out, out
    assert "unreachable on PE" not in out


def test_timeout_reports_who_waits_for_what():
    t0 = time.monotonic()
    proc = run_pes(HANG, 3, timeout=60, env={"PYSHMEM_TIMEOUT": "2"})
    elapsed = time.monotonic() - t0
    out = proc.stdout + proc.stderr
    assert proc.returncode == 124, out
    assert_within("hang_report", elapsed, "the job took that long to end")
    _report_checks(out)
    assert "a wait outlasted PYSHMEM_TIMEOUT" in out


def test_timeout_covers_waits_in_device_code():
    """The same deadlock inside CUDA C++ kernels on the CPU build of the device API: the
    device waits (signal_wait_until, the device barrier) report like host waits."""
    t0 = time.monotonic()
    proc = run_pes("hang_device.py", 3, timeout=120, env={"PYSHMEM_TIMEOUT": "2"})
    elapsed = time.monotonic() - t0
    out = proc.stdout + proc.stderr
    assert proc.returncode == 124, out
    assert_within("hang_device", elapsed, "the job took that long to end")
    assert out.count("pyshmem: PYSHMEM_TIMEOUT=2.00 s expired on PE ") == 1, out
    assert "after waiting 2." in out and "in pyshmem::" in out, out
    assert "PE 0: waits in pyshmem::signal_wait_until for 2." in out, out
    assert "on allocation #2 (64 bytes at heap offset" in out and "until it is >= 1; it holds 0" in out, out
    assert "PE 1: waits in pyshmem::barrier_all" in out and "needs PE 0 to act" in out, out
    # what the other PEs' kernels last issued toward PE 0: the data, not the signal
    assert "put of 32 bytes to PE 0 on allocation #1 (64 bytes at heap offset" in out, out
    assert 'hang_device.py", line 33 in <module>' in out, out  # the launch, in every PE's stack
    assert "unreachable on PE" not in out


@pytest.mark.skipif(ucx_unavailable() is not None, reason=str(ucx_unavailable()))
def test_timeout_report_reads_remote_pes_over_ucx():
    proc = run_pes(HANG, 3, timeout=90, env={"PYSHMEM_TIMEOUT": "2", "PYSHMEM_REMOTE_ONLY": "1"})
    out = proc.stdout + proc.stderr
    assert proc.returncode == 124, out
    _report_checks(out, same_node=False)


def test_waits_are_unbounded_without_the_variable_and_shmemrun_dumps_stacks_on_timeout():
    proc = run_pes(HANG, 2, timeout=60, launcher_args=("--timeout", "4"))
    out = proc.stdout + proc.stderr
    assert proc.returncode == 124, out
    assert "PYSHMEM_TIMEOUT" not in out.replace("a wait outlasted PYSHMEM_TIMEOUT", "")
    assert "timeout after 4 s; every PE prints its Python stack, then 2 PEs end" in out, out
    assert f'{HANG}", line 16 in <module>' in out and f'{HANG}", line 19 in <module>' in out
    quiet = run_pes(HANG, 2, timeout=60, launcher_args=("--timeout", "3", "--no-dump-on-timeout"))
    assert quiet.returncode == 124 and "most recent call first" not in quiet.stdout + quiet.stderr


def test_sigusr1_to_shmemrun_dumps_every_stack_and_the_job_goes_on():
    env = dict(os.environ, PYTHONPATH=str(REPO), PYTHONUNBUFFERED="1", PYSHMEM_SYMMETRIC_SIZE="64M")
    prog = ("import time, pyshmem as shmem\n"
            "shmem.barrier_all()\n"
            "print('ready', flush=True)\n"
            "time.sleep(3)\n"
            "shmem.barrier_all()\n"
            "print('done', shmem.my_pe(), flush=True)\n")
    launcher = subprocess.Popen([sys.executable, "-m", "pyshmem.run", "-n", "2", "--tag-output", "--timeout", "60",
                                 sys.executable, "-c", prog], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True, env=env, cwd=str(REPO))
    try:
        early = [launcher.stdout.readline() for _ in range(2)]  # both PEs past the barrier
        assert all("ready" in line for line in early), early
        launcher.send_signal(signal.SIGUSR1)
        out, err = launcher.communicate(timeout=60)
    finally:
        launcher.kill()
    assert launcher.returncode == 0, out + err
    assert "done 0" in out and "done 1" in out
    assert "SIGUSR1: every PE prints its Python stack" in err
    # Each PE's stack is in the program: in its sleep, or (on a loaded machine) still
    # returning from the print before it.
    for pe in (0, 1):
        assert re.search(rf'\[pe {pe}\]   File "<string>", line [34] in <module>', err), err


def _run_stopped(npes, **kwargs):
    """hang_stopped.py on `npes` PEs; kills its PEs if any is left (PE 1 is SIGSTOPped)."""
    proc = None
    try:
        proc = run_pes("hang_stopped.py", npes, timeout=60, env={"PYSHMEM_TIMEOUT": "2"}, **kwargs)
        return proc, proc.stdout + proc.stderr
    finally:
        for pid in re.findall(r"pid \d+ (\d+)", proc.stdout if proc else ""):
            try:
                os.kill(int(pid), signal.SIGKILL)
            except ProcessLookupError:
                pass


def test_timeout_report_tells_a_stopped_pe_from_a_running_one():
    proc, out = _run_stopped(3)
    assert proc.returncode == 124, out
    assert "PE 0: waits in pyshmem.barrier_all" in out, out
    assert "PE 1: is stopped (SIGSTOP or a debugger): it cannot act until continued" in out, out
    assert "PE 2: not waiting in pyshmem (running its own code, or already past the wait)" in out, out


def test_launcher_names_the_pe_of_each_stack_and_counts_the_others_right():
    proc, out = _run_stopped(2, tag_output=False)
    assert proc.returncode == 124, out
    assert ("PE 0 exited with code 124: a wait outlasted PYSHMEM_TIMEOUT (the report above says who waits for "
            "what); the other PE prints its Python stack, then ends") in out, out
    assert "shmemrun: PE 0's Python stack:\nCurrent thread 0x" in proc.stderr, out
    assert 'hang_stopped.py", line 17 in <module>' in out, out
