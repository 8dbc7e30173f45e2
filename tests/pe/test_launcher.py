"""Tests for the ``shmemrun`` SPMD launcher (pyshmem/run.py).

The launcher is run for real, as a subprocess, on small child scripts written
to tmp_path. The child scripts use only the standard library (never pyshmem),
and the launcher is started by file path so that these tests do not depend on
the compiled extension or on ``pyshmem/__init__.py``.
"""

import importlib.util
import json
import os
import re
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from latency_bounds import assert_within  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
RUN_PY = REPO / "pyshmem" / "run.py"
LAUNCHER = [sys.executable, str(RUN_PY)]
TIMEOUT = 30  # hard limit for every launcher run

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="launcher tests need Linux /proc")

# Shared prelude of the child scripts: sys.argv[1] is a directory for marker
# files, written atomically so the test never reads a half-written file.
PRELUDE = '''\
import os, signal, sys, time
PE = int(os.environ["PYSHMEM_PE"])
NPES = int(os.environ["PYSHMEM_NPES"])
OUT = sys.argv[1] if len(sys.argv) > 1 else "."

def say(*words):  # one write per line: PEs share the launcher's stdout
    os.write(1, (" ".join(map(str, words)) + "\\n").encode())

def mark(name, text=""):
    path = os.path.join(OUT, name)
    with open(path + ".tmp", "w") as f:
        f.write(str(text))
    os.replace(path + ".tmp", path)

def wait_for_all(prefix, timeout=15):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if all(os.path.exists(os.path.join(OUT, f"{prefix}.{k}")) for k in range(NPES)):
            return
        time.sleep(0.01)
'''


def script(tmp_path, body, name="child.py"):
    """Write PRELUDE + body to tmp_path/name and return its path."""
    path = tmp_path / name
    path.write_text(PRELUDE + textwrap.dedent(body))
    return path


def shmemrun(*args, env=None, timeout=TIMEOUT):
    """Run the launcher to completion and return the CompletedProcess."""
    return subprocess.run(LAUNCHER + [str(a) for a in args], env=env,
                          capture_output=True, timeout=timeout)


def start_shmemrun(*args, output=subprocess.PIPE):
    """Start the launcher in the background (caller must wait/kill it)."""
    return subprocess.Popen(LAUNCHER + [str(a) for a in args],
                            stdout=output, stderr=output)


def wait_for(predicate, timeout=60.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.02)
    return predicate()


def alive(pid):
    """True if pid is a running (non-zombie) process."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return False
    state = stat.rsplit(")", 1)[1].split()[0]
    return state not in ("Z", "X")


def read_pids(out_dir):
    # not mark()'s pid.K.tmp, which may still be empty
    return [int(p.read_text()) for p in sorted(out_dir.glob("pid.*")) if p.suffix != ".tmp"]


def assert_all_gone(pids, grace=5.0):
    assert pids, "no child pids were recorded"
    assert wait_for(lambda: not any(alive(p) for p in pids), grace), \
        f"surviving PEs: {[p for p in pids if alive(p)]}"


@pytest.fixture(autouse=True)
def _kill_leftover_pes(tmp_path):
    """Whatever a test asserts, never leave its child PEs running."""
    yield
    for pid_file in tmp_path.glob("pid.*"):
        try:
            pid = int(pid_file.read_text())
            if alive(pid):
                os.kill(pid, signal.SIGKILL)
        except (ValueError, OSError):
            pass


def launcher_lines(stderr):
    return [l for l in stderr.decode(errors="replace").splitlines()
            if l.startswith("shmemrun:")]


# --------------------------------------------------------------------------
# Environment contract and bootstrap socket

def test_env_contract_and_rendezvous_socket(tmp_path):
    child = script(tmp_path, '''
        import json, socket
        info = {k: os.environ.get(k) for k in (
            "PYSHMEM_PE", "PYSHMEM_NPES", "PYSHMEM_BOOTSTRAP_ADDR",
            "PYSHMEM_BOOTSTRAP_FD", "PYSHMEM_JOB_SECRET", "PYSHMEM_JOB_ID",
            "PYSHMEM_LAUNCHER")}
        host, port = os.environ["PYSHMEM_BOOTSTRAP_ADDR"].rsplit(":", 1)
        if PE == 0:  # rendezvous server on the inherited listening socket
            srv = socket.socket(fileno=int(os.environ["PYSHMEM_BOOTSTRAP_FD"]))
            srv.settimeout(20)
            info["listening_on"] = "%s:%d" % srv.getsockname()[:2]
            conn, _ = srv.accept()
            data = b""
            while chunk := conn.recv(4096):
                data += chunk
            info["received"] = data.decode()
            conn.sendall(b"welcome")
            conn.close()
        elif PE == 1:  # client: connects to the advertised address
            c = socket.create_connection((host, int(port)), timeout=20)
            c.sendall(("hello from 1 " + os.environ["PYSHMEM_JOB_SECRET"]).encode())
            c.shutdown(socket.SHUT_WR)
            info["reply"] = c.recv(100).decode()
        say(json.dumps(info))
        ''')
    env = dict(os.environ, PYSHMEM_BOOTSTRAP_FD="99", PYSHMEM_PE="7")  # stale outer job
    res = shmemrun("-n", 4, child, tmp_path, env=env)
    assert res.returncode == 0, res.stderr.decode()
    infos = [json.loads(l) for l in res.stdout.decode().splitlines()]
    assert sorted(int(i["PYSHMEM_PE"]) for i in infos) == [0, 1, 2, 3]
    by_pe = {int(i["PYSHMEM_PE"]): i for i in infos}
    for key in ("PYSHMEM_NPES", "PYSHMEM_BOOTSTRAP_ADDR", "PYSHMEM_JOB_SECRET",
                "PYSHMEM_JOB_ID", "PYSHMEM_LAUNCHER"):
        assert len({i[key] for i in infos}) == 1, key
    first = by_pe[0]
    assert first["PYSHMEM_NPES"] == "4"
    assert first["PYSHMEM_LAUNCHER"] == "shmemrun"
    assert re.fullmatch(r"[0-9a-f]{64}", first["PYSHMEM_JOB_SECRET"])
    assert re.fullmatch(r"[0-9a-f]{16}", first["PYSHMEM_JOB_ID"])
    assert re.fullmatch(r"127\.0\.0\.1:\d+", first["PYSHMEM_BOOTSTRAP_ADDR"])
    assert first["PYSHMEM_BOOTSTRAP_FD"] is not None
    assert int(first["PYSHMEM_BOOTSTRAP_FD"]) >= 3
    assert all(by_pe[k]["PYSHMEM_BOOTSTRAP_FD"] is None for k in (1, 2, 3))
    # The fd really is the listening socket behind BOOTSTRAP_ADDR.
    assert first["listening_on"] == first["PYSHMEM_BOOTSTRAP_ADDR"]
    assert first["received"] == "hello from 1 " + first["PYSHMEM_JOB_SECRET"]
    assert by_pe[1]["reply"] == "welcome"


def test_fresh_secret_and_port_per_job(tmp_path):
    child = script(tmp_path, '''
        print(os.environ["PYSHMEM_JOB_SECRET"], os.environ["PYSHMEM_JOB_ID"],
              os.environ["PYSHMEM_BOOTSTRAP_ADDR"])
        ''')
    a = shmemrun("-n", 1, child).stdout.split()
    b = shmemrun("-n", 1, "--bind", "0.0.0.0", child).stdout.split()
    assert len(a) == len(b) == 3
    assert a[0] != b[0] and a[1] != b[1]
    # A wildcard bind still advertises a connectable address.
    assert b[2].startswith(b"127.0.0.1:") and b[2] != b"127.0.0.1:0"


def test_env_overrides_with_x(tmp_path):
    child = script(tmp_path, '''
        say(PE, repr(os.environ.get("FOO")), repr(os.environ.get("EMPTY")),
            repr(os.environ.get("PASSED")))
        ''')
    env = dict(os.environ, PASSED="from-launcher")
    res = shmemrun("-n", 2, "-x", "FOO=bar=baz", "-x", "EMPTY=", "-x", "PASSED",
                   "-x", "PYSHMEM_PE=99", child, env=env)
    assert res.returncode == 0, res.stderr.decode()
    lines = sorted(res.stdout.decode().splitlines())
    # Contract variables cannot be overridden by -x.
    assert lines == ["0 'bar=baz' '' 'from-launcher'",
                     "1 'bar=baz' '' 'from-launcher'"]


def test_bad_command_lines(tmp_path):
    child = script(tmp_path, "pass\n")
    assert shmemrun("-n", 0, child).returncode == 2
    assert shmemrun("--timeout", "-1", child).returncode == 2
    assert shmemrun("-x", "=oops", child).returncode == 2
    assert shmemrun().returncode == 2


def test_missing_program_exits_127(tmp_path):
    res = shmemrun("-n", 2, tmp_path / "no-such-program")
    assert res.returncode == 127
    assert b"no-such-program" in res.stderr


# --------------------------------------------------------------------------
# Program forms and output

def test_py_program_runs_with_current_python_and_gets_trailing_options(tmp_path):
    child = script(tmp_path, '''
        say(PE, sys.executable, sys.argv[1:])
        ''')
    # Options after the program belong to the program, not to shmemrun.
    res = shmemrun("-n", 2, child, "-n", "5", "--tag-output")
    assert res.returncode == 0, res.stderr.decode()
    lines = sorted(res.stdout.decode().splitlines())
    assert lines == [f"{k} {sys.executable} ['-n', '5', '--tag-output']"
                     for k in (0, 1)]


def test_explicit_interpreter_form(tmp_path):
    child = script(tmp_path, "say('pe', PE, 'of', NPES)\n", name="child_noext")
    res = shmemrun("-n", 3, sys.executable, child)
    assert res.returncode == 0, res.stderr.decode()
    assert sorted(res.stdout.decode().splitlines()) == [
        "pe 0 of 3", "pe 1 of 3", "pe 2 of 3"]


def test_module_invocation(tmp_path):
    env = dict(os.environ, PYTHONPATH=str(REPO))
    if (REPO / "pyshmem" / "__init__.py").exists():
        probe = subprocess.run([sys.executable, "-c", "import pyshmem"], env=env,
                               capture_output=True, timeout=TIMEOUT)
        if probe.returncode != 0:
            pytest.skip("pyshmem package is not importable (extension not built?)")
    child = script(tmp_path, "say('pe', PE)\n")
    res = subprocess.run([sys.executable, "-m", "pyshmem.run", "-n", "2", str(child)],
                         env=env, cwd=tmp_path, capture_output=True, timeout=TIMEOUT)
    assert res.returncode == 0, res.stderr.decode()
    assert sorted(res.stdout.decode().splitlines()) == ["pe 0", "pe 1"]


def test_tag_output_prefixes_every_line(tmp_path):
    child = script(tmp_path, '''
        print(f"out-a {PE}")
        print(f"out-b {PE}", flush=True)
        print(f"err {PE}", file=sys.stderr, flush=True)
        sys.stdout.write(f"no-newline {PE}")
        ''')
    res = shmemrun("-n", 3, "--tag-output", child)
    assert res.returncode == 0, res.stderr.decode()
    out = res.stdout.decode().splitlines()
    err = res.stderr.decode().splitlines()
    assert len(out) == 9 and len(err) == 3
    for line in out + err:
        m = re.fullmatch(r"\[pe (\d)\] (out-a|out-b|err|no-newline) (\d)", line)
        assert m and m.group(1) == m.group(3), line
    assert sorted(l.split("] ")[1] for l in err) == ["err 0", "err 1", "err 2"]
    for k in range(3):  # per-PE order is kept
        mine = [l for l in out if l.startswith(f"[pe {k}] ")]
        assert mine == [f"[pe {k}] out-a {k}", f"[pe {k}] out-b {k}",
                        f"[pe {k}] no-newline {k}"]


def test_successful_job_prints_nothing_extra(tmp_path):
    child = script(tmp_path, "say('ok', PE)\n")
    res = shmemrun("-n", 4, child)
    assert res.returncode == 0
    assert res.stderr == b""
    assert sorted(res.stdout.decode().splitlines()) == [f"ok {k}" for k in range(4)]


# --------------------------------------------------------------------------
# Failure propagation

FAILURES = {
    "exit3": ("sys.exit(3)", 3, "PE 2 exited with code 3; ending the other 3 PEs"),
    "sigkill": ("os.kill(os.getpid(), signal.SIGKILL)", 137,
                "PE 2 was killed by signal SIGKILL (9); ending the other 3 PEs"),
    "exception": ("raise RuntimeError('boom')", 1,
                  "PE 2 exited with code 1; ending the other 3 PEs"),
}


@pytest.mark.parametrize("mode", sorted(FAILURES))
def test_failing_pe_ends_job(tmp_path, mode):
    action, code, message = FAILURES[mode]
    child = script(tmp_path, f'''
        mark(f"pid.{{PE}}", os.getpid())
        if PE == 2:
            wait_for_all("pid")  # make sure everyone is up before failing
            {action}
        time.sleep(60)
        ''')
    t0 = time.monotonic()
    res = shmemrun("-n", 4, child, tmp_path)
    elapsed = time.monotonic() - t0
    assert res.returncode == code, res.stderr.decode()
    assert_within("failing_job", elapsed, res.stderr.decode(), cap=TIMEOUT)  # the others sleep 60 s
    assert launcher_lines(res.stderr) == [f"shmemrun: {message}"]
    if mode == "exception":
        assert b"Traceback" in res.stderr and b"RuntimeError: boom" in res.stderr
    assert len(read_pids(tmp_path)) == 4
    assert_all_gone(read_pids(tmp_path))


def test_pe_ignoring_sigterm_is_killed(tmp_path):
    child = script(tmp_path, '''
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        mark(f"pid.{PE}", os.getpid())
        if PE == 0:
            wait_for_all("pid")
            sys.exit(5)
        time.sleep(60)
        ''')
    t0 = time.monotonic()
    res = shmemrun("-n", 2, child, tmp_path)
    assert res.returncode == 5
    assert_within("sigterm_ignored", time.monotonic() - t0, res.stderr.decode(), cap=TIMEOUT)
    assert_all_gone(read_pids(tmp_path))


def test_timeout_ends_job(tmp_path):
    child = script(tmp_path, '''
        mark(f"pid.{PE}", os.getpid())
        time.sleep(60)
        ''')
    t0 = time.monotonic()
    res = shmemrun("-n", 4, "--timeout", 1, child, tmp_path)
    elapsed = time.monotonic() - t0
    assert res.returncode == 124
    assert elapsed > 0.9  # not before its --timeout
    assert_within("timeout_job", elapsed, res.stderr.decode(), cap=TIMEOUT)
    assert launcher_lines(res.stderr) == ["shmemrun: timeout after 1 s; every PE prints its Python stack, then 4 PEs end"]
    assert_all_gone(read_pids(tmp_path))


# --------------------------------------------------------------------------
# Signals sent to the launcher

def _signal_launcher(tmp_path, sig, handler_body):
    child = script(tmp_path, f'''
        mark(f"pid.{{PE}}", os.getpid())
        {handler_body}
        mark(f"ready.{{PE}}")
        try:
            time.sleep(60)
        except KeyboardInterrupt:
            mark(f"got.{{PE}}", "SIGINT")
            sys.exit(1)
        ''')
    proc = start_shmemrun("-n", 4, child, tmp_path)
    try:
        ready = lambda: len(list(tmp_path.glob("ready.*"))) == 4
        assert wait_for(ready), "PEs did not start"
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=TIMEOUT)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    markers = sorted(p.read_text() for p in tmp_path.glob("got.*"))
    return proc.returncode, markers, err


def test_sigterm_is_forwarded(tmp_path):
    handler = ('signal.signal(signal.SIGTERM, '
               'lambda s, f: (mark(f"got.{PE}", "SIGTERM"), os._exit(0)))')
    code, markers, err = _signal_launcher(tmp_path, signal.SIGTERM, handler)
    assert code == 143, err.decode()
    assert markers == ["SIGTERM"] * 4
    assert_all_gone(read_pids(tmp_path))


def test_sigint_is_forwarded(tmp_path):
    code, markers, err = _signal_launcher(tmp_path, signal.SIGINT, "")
    assert code == 130, err.decode()
    assert markers == ["SIGINT"] * 4  # each PE saw KeyboardInterrupt
    assert_all_gone(read_pids(tmp_path))


def test_second_sigint_kills_stubborn_pes(tmp_path):
    child = script(tmp_path, '''
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        mark(f"pid.{PE}", os.getpid())
        time.sleep(60)
        ''')
    proc = start_shmemrun("-n", 2, child, tmp_path)
    try:
        assert wait_for(lambda: len(read_pids(tmp_path)) == 2)
        pids = read_pids(tmp_path)
        proc.send_signal(signal.SIGINT)
        time.sleep(0.3)
        assert proc.poll() is None  # PEs ignore SIGINT; grace period runs
        t0 = time.monotonic()
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=TIMEOUT)
        # cap: the 2 s grace the first SIGINT started ends 1.7 s after the second
        assert_within("second_sigint", time.monotonic() - t0, cap=1.5)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 130
    assert_all_gone(pids)


def test_pes_die_with_sigkilled_launcher(tmp_path):
    child = script(tmp_path, '''
        mark(f"pid.{PE}", os.getpid())
        time.sleep(60)
        ''')
    # No pipes: orphaned PEs would keep them open and block communicate().
    proc = start_shmemrun("-n", 3, child, tmp_path, output=subprocess.DEVNULL)
    try:
        assert wait_for(lambda: len(read_pids(tmp_path)) == 3)
        pids = read_pids(tmp_path)
        assert all(alive(p) for p in pids)
    finally:
        proc.kill()  # SIGKILL: the launcher gets no chance to clean up
        proc.wait(timeout=TIMEOUT)
    assert_all_gone(pids)  # PR_SET_PDEATHSIG did it


# --------------------------------------------------------------------------
# Library API

def _load_run_module():
    spec = importlib.util.spec_from_file_location("shmemrun_under_test", RUN_PY)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_launch_function_in_process(tmp_path, capfd):
    run = _load_run_module()
    # Every PE prints before PE 1 fails, otherwise PE 0 may be ended before it prints.
    child = script(tmp_path, '''
        print("v", os.environ["V"], PE, flush=True)
        mark(f"printed.{PE}")
        wait_for_all("printed")
        sys.exit(4 if PE == 1 else 0)
        ''')
    handlers = {s: signal.getsignal(s)
                for s in (signal.SIGINT, signal.SIGTERM, signal.SIGCHLD)}
    assert run.launch([str(child), str(tmp_path)], 2, tag_output=True, env={"V": "x"}) == 4
    # launch() must leave the caller's signal handlers as they were.
    assert handlers == {s: signal.getsignal(s) for s in handlers}
    out, err = capfd.readouterr()
    assert "[pe 0] v x 0" in out and "[pe 1] v x 1" in out
    assert "PE 1 exited with code 4" in err
    with pytest.raises(ValueError):
        run.launch([str(child)], 0)
    with pytest.raises(FileNotFoundError):
        run.launch([str(tmp_path / "missing")], 2)


def test_launch_from_worker_thread(tmp_path, capfd):
    run = _load_run_module()
    child = script(tmp_path, "say('thread', PE)\n")
    result = {}
    worker = threading.Thread(
        target=lambda: result.setdefault("rc", run.launch([str(child)], 3)))
    worker.start()
    worker.join(TIMEOUT)
    assert result.get("rc") == 0
    out, _ = capfd.readouterr()
    assert sorted(out.splitlines()) == ["thread 0", "thread 1", "thread 2"]
