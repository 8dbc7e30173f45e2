"""Multi-PE errors and failure handling, under the real launcher (or hand-made PE envs).

* Errors that involve several PEs: a collective allocation that differs between PEs
  (PYSHMEM_DEBUG=1), a PE presenting the wrong job secret, a rendezvous nobody serves.
* A job whose PEs fail: SIGKILL, an uncaught exception, global_exit, a deadlock ended by
  ``--timeout``, everything (launcher included) killed with SIGKILL. Each time the job
  must end promptly with the right exit code, name the failing PE, leave no PE process
  behind and add nothing to /dev/shm.

The programs live in tests/pe/programs (err_*.py, fail_*.py); those that take a
directory write ``pid.<pe>`` files there so the test can check every PE is gone.
"""

import importlib.util
import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

_CONFTEST = Path(__file__).resolve().parents[1] / "conftest.py"
_spec = importlib.util.spec_from_file_location("_pyshmem_tests_conftest", _CONFTEST)
_conftest = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_conftest)
run_pes, assert_ok, shm_entries = _conftest.run_pes, _conftest.assert_ok, _conftest.shm_entries
ucx_unavailable = _conftest.ucx_unavailable
REPO, PROGRAMS = _conftest.REPO, _conftest.PROGRAMS
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from latency_bounds import assert_within  # noqa: E402

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="needs Linux /proc and /dev/shm")

NPES = 4


# --------------------------------------------------------------------------- helpers

def _pid_alive(pid):
    """True while `pid` runs (a zombie counts as gone: it holds no memory or heap)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False
    return state not in ("Z", "X")


def _read_pids(tmp_path, npes=NPES):
    pids = {}
    for pe in range(npes):
        path = tmp_path / f"pid.{pe}"
        if path.exists():
            pids[pe] = int(path.read_text())
    return pids


def _wait_until(pred, timeout):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if pred():
            return True
        time.sleep(0.02)
    return pred()


def _assert_pes_gone(pids, timeout=30.0):
    assert pids, "no PE wrote its pid"
    _wait_until(lambda: not any(_pid_alive(p) for p in pids.values()), timeout)
    alive = {pe: pid for pe, pid in pids.items() if _pid_alive(pid)}
    for pid in alive.values():  # never leave them behind, even when failing
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    assert not alive, f"PE processes survived the job: {alive}"


def _assert_no_shm_leak(before):
    """Nothing new in /dev/shm. Entries that vanish within a moment belong to some
    other process on the machine and are ignored; a leak stays."""
    new = shm_entries() - before
    if new:
        time.sleep(0.5)
        new &= shm_entries()
    assert not new, f"/dev/shm gained entries: {sorted(new)}"


def _stamp(tmp_path, name):
    return float((tmp_path / name).read_text())


def _out(proc):
    return f"exit code {proc.returncode}\n--- stdout\n{proc.stdout}\n--- stderr\n{proc.stderr}"


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _pe_env(pe, npes, addr, secret, timeout):
    """The environment shmemrun would give PE `pe`, made by hand."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYSHMEM_")}
    env.update(
        PYTHONPATH=str(REPO) + os.pathsep + env.get("PYTHONPATH", ""),
        PYTHONUNBUFFERED="1",
        PYSHMEM_SYMMETRIC_SIZE="16M",
        PYSHMEM_PE=str(pe),
        PYSHMEM_NPES=str(npes),
        PYSHMEM_BOOTSTRAP_ADDR=addr,
        PYSHMEM_JOB_SECRET=secret,
        PYSHMEM_BOOTSTRAP_TIMEOUT=str(timeout),
    )
    return env


def _start_pe(pe, npes, addr, secret, timeout):
    return subprocess.Popen(
        [sys.executable, str(PROGRAMS / "err_bootstrap.py")], env=_pe_env(pe, npes, addr, secret, timeout),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=str(REPO))


def _finish(proc, timeout=120):
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        pytest.fail(f"PE process hung\n{out}\n{err}")
    return proc.returncode, out + err


# --------------------------------------------------------------------------- multi-PE errors

def test_collective_allocation_mismatch_raises_on_every_pe():
    proc = run_pes("err_mismatch.py", 2, 1, env={"PYSHMEM_DEBUG": "1"}, timeout=40)
    assert_ok(proc, 2)  # after the mismatch the job is still usable and ends normally
    for pe, other in ((0, 1), (1, 0)):
        lines = [ln for ln in proc.stdout.splitlines() if f"MISMATCH pe={pe} " in ln]
        assert lines, f"PE {pe} did not raise CollectiveMismatchError\n{_out(proc)}"
        line = lines[0]
        assert "CollectiveMismatchError,ShmemError,RuntimeError" in line, line
        assert f"pyshmem.zeros on PE {pe}" in line, line
        assert f"PE {other} passed a different size" in line, line
        mine, theirs = (64, 128) if pe == 0 else (128, 64)  # PE 1 asks for twice as much
        assert f"(PE {other}: {theirs} bytes; this PE: {mine} bytes)" in line, line
        assert "PYSHMEM_DEBUG=1" in line, line
        want = (f"FREE-MISMATCH pe={pe}: pyshmem.free on PE {pe}: collective call mismatch: "
                f"PE {other} passed a different object to free")
        assert want in proc.stdout, _out(proc)
    assert "NO-MISMATCH" not in proc.stdout


def test_collective_allocation_mismatch_one_pe_of_four():
    proc = run_pes("err_mismatch.py", NPES, 2, env={"PYSHMEM_DEBUG": "1"}, timeout=40)
    assert_ok(proc, NPES)
    for pe in range(NPES):
        assert f"MISMATCH pe={pe} [CollectiveMismatchError" in proc.stdout, _out(proc)
    # the odd PE names one that differs from it, the others name the odd one
    assert "pyshmem.zeros on PE 0: collective call mismatch: PE 2 passed" in proc.stdout, _out(proc)


def test_hand_made_environment_works():
    """Control for the two tests below: the same hand-made env with one secret rendezvouses."""
    addr, secret = f"127.0.0.1:{_free_port()}", "ab" * 32
    pe0 = _start_pe(0, 2, addr, secret, 10)
    pe1 = _start_pe(1, 2, addr, secret, 10)
    for pe, proc in ((0, pe0), (1, pe1)):
        rc, out = _finish(proc)
        assert rc == 0 and f"INIT-OK pe={pe}" in out, out


def test_wrong_job_secret_is_rejected():
    addr = f"127.0.0.1:{_free_port()}"
    pe0 = _start_pe(0, 2, addr, "aa" * 32, 3)
    impostor = _start_pe(1, 2, addr, "bb" * 32, 30)  # long: it must be turned away, not time out
    rc1, out1 = _finish(impostor)
    rc0, out0 = _finish(pe0)

    assert rc1 == 3, out1
    assert "ERR BootstrapError [BootstrapError,ShmemError,ConnectionError" in out1, out1
    assert "rejected this PE" in out1 and "PYSHMEM_JOB_SECRET" in out1, out1
    t_impostor = float(out1.split(" t=")[1].split(":")[0])
    assert_within("bootstrap_reject", t_impostor, f"the impostor was not turned away promptly: {out1}", cap=30)

    assert rc0 == 3, out0
    assert "ERR ShmemTimeoutError [ShmemTimeoutError,ShmemError,TimeoutError" in out0, out0
    assert "PEs 1 did not reach the rendezvous" in out0, out0
    assert "PYSHMEM_BOOTSTRAP_TIMEOUT=3" in out0, out0
    t_pe0 = float(out0.split(" t=")[1].split(":")[0])
    assert t_pe0 > 2.9, out0  # not before its PYSHMEM_BOOTSTRAP_TIMEOUT=3
    assert_within("bootstrap_timeout", t_pe0 - 3, out0)


def test_rendezvous_that_never_comes_times_out_quickly():
    addr = f"127.0.0.1:{_free_port()}"  # nobody listens here
    rc, out = _finish(_start_pe(1, 2, addr, "cd" * 32, 2))
    assert rc == 3, out
    assert "ERR ShmemTimeoutError [ShmemTimeoutError,ShmemError,TimeoutError" in out, out
    assert f"cannot reach the rendezvous at {addr}" in out, out
    assert "PYSHMEM_BOOTSTRAP_TIMEOUT=2" in out and "is PE 0 running?" in out, out
    t_init = float(out.split(" t=")[1].split(":")[0])
    assert t_init > 1.9, out  # not before its PYSHMEM_BOOTSTRAP_TIMEOUT=2
    assert_within("bootstrap_timeout", t_init - 2, out)


@pytest.mark.parametrize("pe, npes, extra, fragment", [
    (5, 2, {}, "PYSHMEM_PE=5 is outside 0..1 (PYSHMEM_NPES=2)"),
    (0, 0, {}, "PYSHMEM_NPES=0 must be >= 1"),
    (1, 2, {"PYSHMEM_BOOTSTRAP_ADDR": "nocolon"}, "PYSHMEM_BOOTSTRAP_ADDR='nocolon' must be host:port"),
    (1, 2, {"PYSHMEM_JOB_SECRET": "xyz"}, "PYSHMEM_JOB_SECRET must be 32 to 128 hex digits"),
])
def test_bad_launcher_variables(pe, npes, extra, fragment):
    env = _pe_env(pe, npes, "127.0.0.1:9", "ef" * 32, 2)
    env.update(extra)
    proc = subprocess.run([sys.executable, str(PROGRAMS / "err_bootstrap.py")], env=env, capture_output=True,
                          text=True, timeout=30, cwd=str(REPO))
    out = proc.stdout + proc.stderr
    assert proc.returncode == 3, out
    assert "ERR InvalidArgumentError [InvalidArgumentError,ShmemError,ValueError" in out, out
    assert fragment in out, out


# --------------------------------------------------------------------------- failing jobs

def test_sigkilled_pe_ends_the_job(tmp_path):
    before = shm_entries()
    proc = run_pes("fail_sigkill.py", NPES, tmp_path, 2, timeout=40, launcher_args=("--timeout", "20"))
    ended = time.time()
    assert proc.returncode == 137, _out(proc)
    assert "PE 2 was killed by signal SIGKILL" in proc.stderr, _out(proc)
    assert "PASSED" not in proc.stdout, _out(proc)
    took = ended - _stamp(tmp_path, "killed_at")
    print(f"job ended {took:.2f} s after the kill")
    assert_within("kill_to_exit", took, _out(proc), cap=20)  # cap: the job's --timeout
    _assert_pes_gone(_read_pids(tmp_path))
    _assert_no_shm_leak(before)


@pytest.mark.parametrize("mode, proxy", [("barrier", "0"), ("wait", "0"), ("wait", "1")])
def test_uncaught_exception_ends_the_job(tmp_path, mode, proxy):
    """Also with a proxy thread running (PYSHMEM_PROXY_ALL=1): the failing PE exits with
    its exception's code, the thread is stopped at exit rather than aborting the process."""
    before = shm_entries()
    proc = run_pes("fail_raise.py", NPES, tmp_path, 1, mode, timeout=40, launcher_args=("--timeout", "20"),
                   env={"PYSHMEM_PROXY_ALL": proxy})
    assert "terminate called" not in proc.stderr, _out(proc)
    ended = time.time()
    assert proc.returncode == 1, _out(proc)
    assert "[pe 1] Traceback (most recent call last):" in proc.stderr, _out(proc)
    assert "[pe 1] RuntimeError: deliberate failure on PE 1" in proc.stderr, _out(proc)
    assert "PE 1 exited with code 1" in proc.stderr, _out(proc)
    # no collective finalize on the failing PE: it would have released (barrier) or hung (wait)
    assert "PASSED" not in proc.stdout, _out(proc)
    took = ended - _stamp(tmp_path, "raised_at")
    print(f"job ended {took:.2f} s after the exception")
    assert_within("raise_to_exit", took, _out(proc), cap=20)  # cap: the job's --timeout
    _assert_pes_gone(_read_pids(tmp_path))
    _assert_no_shm_leak(before)


@pytest.mark.parametrize("remote", [False, True], ids=["shm", "ucx"])
def test_global_exit_sets_the_job_exit_code(tmp_path, remote):
    # ucx: every peer remote; the exit words go out as atomic sets, which complete at a
    # quiet, so global_exit completes them before the process ends.
    if remote and ucx_unavailable():
        pytest.skip(ucx_unavailable())
    before = shm_entries()
    proc = run_pes("fail_global_exit.py", NPES, tmp_path, 1, 3, timeout=40, launcher_args=("--timeout", "20"),
                   env={"PYSHMEM_REMOTE_ONLY": "1"} if remote else None)
    assert proc.returncode == 3, _out(proc)
    # Every PE leaves with the global_exit status (the waiters notice the global-exit
    # word), so the launcher may report any of them first.
    assert re.search(r"PE \d exited with code 3", proc.stderr), _out(proc)
    assert "[pe 1] EXITING pe=1" in proc.stdout, "global_exit lost buffered output\n" + _out(proc)
    assert "AFTER-GLOBAL-EXIT" not in proc.stdout and "PASSED" not in proc.stdout, _out(proc)
    _assert_pes_gone(_read_pids(tmp_path))
    _assert_no_shm_leak(before)


def test_pe_exiting_before_init_ends_the_job(tmp_path):
    proc = run_pes("fail_exit_before_init.py", NPES, tmp_path, 3, timeout=40, launcher_args=("--timeout", "20"))
    assert proc.returncode == 5, _out(proc)
    assert "PE 3 exited with code 5" in proc.stderr, _out(proc)
    assert "PASSED" not in proc.stdout, _out(proc)
    _assert_pes_gone(_read_pids(tmp_path))


def test_launcher_timeout_ends_a_deadlocked_job():
    before = shm_entries()
    t0 = time.monotonic()
    proc = run_pes("fail_deadlock.py", NPES, timeout=40, launcher_args=("--timeout", "3"))
    elapsed = time.monotonic() - t0
    assert proc.returncode == 124, _out(proc)
    assert "timeout after 3 s" in proc.stderr, _out(proc)
    for pe in range(NPES):
        assert f"WAITING pe={pe}" in proc.stdout, _out(proc)
    assert "PASSED" not in proc.stdout, _out(proc)
    assert elapsed > 3, f"took {elapsed:.1f} s"  # not before its --timeout
    assert_within("launcher_timeout", elapsed - 3, _out(proc))
    _assert_no_shm_leak(before)


@pytest.mark.parametrize("victims", ["everything", "launcher"])
def test_sigkill_of_the_whole_job_leaves_nothing(tmp_path, victims):
    """kill -9 of every PE and the launcher at once, or of the launcher alone (the PEs
    then die with it: PR_SET_PDEATHSIG)."""
    before = shm_entries()
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""),
               PYSHMEM_SYMMETRIC_SIZE="64M", PYTHONUNBUFFERED="1")
    cmd = [sys.executable, "-m", "pyshmem.run", "-n", str(NPES), "--timeout", "30", "--tag-output",
           sys.executable, str(PROGRAMS / "fail_busy.py"), str(tmp_path)]
    launcher = subprocess.Popen(cmd, env=env, cwd=str(REPO), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                text=True)
    try:
        started = _wait_until(lambda: len(_read_pids(tmp_path)) == NPES, 20)
        pids = _read_pids(tmp_path)
        assert started, f"only PEs {sorted(pids)} started: {launcher.poll()}"
        time.sleep(0.2)  # mid-run: puts and barriers in flight
        targets = [launcher.pid] + (list(pids.values()) if victims == "everything" else [])
        for pid in targets:
            os.kill(pid, signal.SIGKILL)
        assert launcher.wait(timeout=10) == -signal.SIGKILL
        _assert_pes_gone(pids, timeout=5.0)
    finally:
        if launcher.poll() is None:
            launcher.kill()
        launcher.communicate(timeout=10)
        for pid in _read_pids(tmp_path).values():
            if _pid_alive(pid):
                os.kill(pid, signal.SIGKILL)
    _assert_no_shm_leak(before)


def test_normal_run_leaves_dev_shm_unchanged(tmp_path):
    before = shm_entries()
    proc = run_pes("compat_lock.py", NPES, timeout=40)
    assert_ok(proc, NPES)
    _assert_no_shm_leak(before)
