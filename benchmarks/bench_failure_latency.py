"""How fast pyshmem ends a job that fails, hangs or is interrupted (issue 18): the typical
values behind the bounds the tests assert (tests/latency_bounds.py, docs/performance.md).

Run from the repository root (no GPU needed):
    python benchmarks/bench_failure_latency.py [--reps 5] [--cases kill_to_exit,sigint_to_exit]

Each case runs a small job under shmemrun (the programs of tests/pe/programs, or a few
lines written to a temporary directory) and times the event the tests time; the median,
min and max over --reps runs are printed, one row per case, in seconds:

    kill_to_exit        a PE of 4 SIGKILLs itself in a barrier -> the launcher has exited
    raise_to_exit       a PE of 4 raises while the others wait in a barrier -> exit
    failing_job         4 PEs start, PE 2 fails, the others sleep 60 s: the whole job
    sigterm_ignored     a PE ignores the launcher's SIGTERM: the whole 2-PE job (grace + SIGKILL)
    launcher_timeout    --timeout 3 on a deadlocked 4-PE job: the whole job, less the 3 s
    timeout_job         --timeout 1 on 4 sleeping PEs: the whole job
    hang_report         PYSHMEM_TIMEOUT=2 on a deadlocked 3-PE job (report + exit): the whole job
    sigint_to_exit      Ctrl-C (SIGINT) to the launcher of 2 PEs blocked in wait_until -> exit
    second_sigint       the second SIGINT to a launcher whose 2 PEs ignore SIGINT -> exit
    bootstrap_timeout   a PE whose rendezvous nobody serves (PYSHMEM_BOOTSTRAP_TIMEOUT=2):
                        how long init() takes past the 2 s
    bootstrap_reject    a PE with the wrong job secret: init() until it is turned away
    rendezvous          2 hand-made PEs with 4 idle connections on PE 0's port: PE 1's start
                        to both PEs done
    hang_device         hang_report with the deadlock inside CUDA C++ kernels on the CPU build
                        (needs the CPU kernel toolchain; the first run also compiles)
    sim_uncaught        an inter-block wait in the Numba simulator past
                        PYSHMEM_SIM_BLOCK_WAIT_TIMEOUT=2 ends the 2-PE job (needs numba-cuda)
    notebook_failure    pyshmem.notebook: one PE of 3 raises, run() returns (needs ipyparallel)
"""

import argparse
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PROGRAMS = REPO / "tests" / "pe" / "programs"
NPES = 4


def _env(**extra):
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    env.setdefault("PYSHMEM_SYMMETRIC_SIZE", "64M")
    env["PYTHONUNBUFFERED"] = "1"
    env.update(extra)
    return env


def _launcher(npes, *args):
    return [sys.executable, "-m", "pyshmem.run", "-n", str(npes), "--tag-output", *map(str, args)]


def _run(cmd, env=None, timeout=120):
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env or _env(), cwd=str(REPO))


def _script(tmp, body):
    """A PE program: `mark(name, text)` writes tmp/name; PE is this PE's number."""
    path = Path(tmp) / "child.py"
    path.write_text(textwrap.dedent('''
        import os, signal, sys, time
        OUT, PE = sys.argv[1], int(os.environ["PYSHMEM_PE"])
        def mark(name, text=""):
            with open(os.path.join(OUT, name + ".tmp"), "w") as f:
                f.write(str(text))
            os.replace(os.path.join(OUT, name + ".tmp"), os.path.join(OUT, name))
        def wait_for_all(prefix, n):
            while len([f for f in os.listdir(OUT) if f.startswith(prefix + ".")]) < n:
                time.sleep(0.01)
        ''') + textwrap.dedent(body))
    return path


def _wait(pred, timeout=60):
    end = time.monotonic() + timeout
    while not pred():
        if time.monotonic() > end:
            raise RuntimeError("the job did not get ready")
        time.sleep(0.01)


def _stamped(program, stamp, *args):
    with tempfile.TemporaryDirectory() as tmp:
        _run(_launcher(NPES, "--timeout", 60, sys.executable, PROGRAMS / program, tmp, *args))
        ended = time.time()
        return ended - float((Path(tmp) / stamp).read_text())


def kill_to_exit():
    return _stamped("fail_sigkill.py", "killed_at", 2)


def raise_to_exit():
    return _stamped("fail_raise.py", "raised_at", 1, "barrier")


def _whole(cmd, env=None):
    t0 = time.monotonic()
    _run(cmd, env)
    return time.monotonic() - t0


def failing_job():
    with tempfile.TemporaryDirectory() as tmp:
        child = _script(tmp, '''
            mark(f"pid.{PE}", os.getpid())
            if PE == 2:
                wait_for_all("pid", 4)
                raise RuntimeError("boom")
            time.sleep(60)
            ''')
        return _whole(_launcher(4, "--timeout", 90, sys.executable, child, tmp))


def sigterm_ignored():
    with tempfile.TemporaryDirectory() as tmp:
        child = _script(tmp, '''
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
            mark(f"pid.{PE}", os.getpid())
            if PE == 0:
                wait_for_all("pid", 2)
                sys.exit(5)
            time.sleep(60)
            ''')
        return _whole(_launcher(2, "--timeout", 90, sys.executable, child, tmp))


def launcher_timeout():
    return _whole(_launcher(NPES, "--timeout", 3, sys.executable, PROGRAMS / "fail_deadlock.py")) - 3


def timeout_job():
    with tempfile.TemporaryDirectory() as tmp:
        child = _script(tmp, 'time.sleep(60)\n')
        return _whole(_launcher(4, "--timeout", 1, sys.executable, child, tmp))


def hang_report():
    return _whole(_launcher(3, "--timeout", 60, sys.executable, PROGRAMS / "hang_signal.py"),
                  _env(PYSHMEM_TIMEOUT="2"))


def _interrupted(cmd, ready, first=None):
    """Starts `cmd`, waits until ready(proc) is true, sends SIGINT (after `first`, one more
    SIGINT 0.3 s earlier) and returns the seconds from the last SIGINT to the exit."""
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env(), cwd=str(REPO))
    try:
        ready(proc)
        if first:
            proc.send_signal(signal.SIGINT)
            time.sleep(0.3)
        t0 = time.monotonic()
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=60)
        return time.monotonic() - t0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()


def sigint_to_exit():
    def ready(proc):
        count = 0
        while count < 2:
            line = proc.stdout.readline()
            if not line:
                raise RuntimeError("the PEs did not start")
            count += "READY" in line
        time.sleep(0.5)  # as tests/pe/test_interrupt.py: the PEs are asleep in the wait

    return _interrupted(_launcher(2, "--timeout", 60, sys.executable, PROGRAMS / "wait_forever.py", "wait_until"), ready)


def second_sigint():
    with tempfile.TemporaryDirectory() as tmp:
        child = _script(tmp, '''
            signal.signal(signal.SIGINT, signal.SIG_IGN)
            mark(f"pid.{PE}", os.getpid())
            time.sleep(60)
            ''')
        return _interrupted(_launcher(2, "--timeout", 90, sys.executable, child, tmp),
                            lambda proc: _wait(lambda: len(list(Path(tmp).glob("pid.*"))) == 2), first=True)


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _pe_env(pe, npes, addr, secret, timeout):
    env = {k: v for k, v in _env().items() if not k.startswith("PYSHMEM_")}
    env.update(PYSHMEM_SYMMETRIC_SIZE="16M", PYSHMEM_PE=str(pe), PYSHMEM_NPES=str(npes), PYSHMEM_BOOTSTRAP_ADDR=addr,
               PYSHMEM_JOB_SECRET=secret, PYSHMEM_BOOTSTRAP_TIMEOUT=str(timeout))
    return env


def _init_time(out):
    """The t= that tests/pe/programs/err_bootstrap.py prints: how long init() took."""
    return float(out.split(" t=")[1].split(":")[0])


def _bootstrap_pe(pe, npes, addr, secret, timeout):
    return subprocess.Popen([sys.executable, str(PROGRAMS / "err_bootstrap.py")],
                            env=_pe_env(pe, npes, addr, secret, timeout), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=str(REPO))


def bootstrap_timeout():
    out, _ = _bootstrap_pe(1, 2, f"127.0.0.1:{_free_port()}", "cd" * 32, 2).communicate(timeout=60)
    return _init_time(out) - 2


def bootstrap_reject():
    addr = f"127.0.0.1:{_free_port()}"
    pe0 = _bootstrap_pe(0, 2, addr, "aa" * 32, 3)
    impostor = _bootstrap_pe(1, 2, addr, "bb" * 32, 10)
    out, _ = impostor.communicate(timeout=60)
    pe0.communicate(timeout=60)
    return _init_time(out)


def rendezvous():
    addr = f"127.0.0.1:{_free_port()}"
    code = "import pyshmem as s; s.barrier_all(); print('OK pe=%d' % s.my_pe(), flush=True)"
    env = dict(_env(), PYSHMEM_NPES="2", PYSHMEM_BOOTSTRAP_ADDR=addr, PYSHMEM_JOB_SECRET="cd" * 32,
               PYSHMEM_BOOTSTRAP_TIMEOUT="20", PYSHMEM_SYMMETRIC_SIZE="16M")
    env.pop("PYSHMEM_BOOTSTRAP_FD", None)
    pe0 = subprocess.Popen([sys.executable, "-c", code], env=dict(env, PYSHMEM_PE="0"), stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True)
    silent = []
    try:
        host, port = addr.split(":")
        while len(silent) < 4:
            c = socket.socket()
            try:
                c.connect((host, int(port)))
                silent.append(c)
            except ConnectionRefusedError:
                c.close()
                time.sleep(0.05)
        t0 = time.monotonic()
        subprocess.run([sys.executable, "-c", code], env=dict(env, PYSHMEM_PE="1"), capture_output=True, timeout=60)
        pe0.communicate(timeout=60)
        return time.monotonic() - t0
    finally:
        for c in silent:
            c.close()
        if pe0.poll() is None:
            pe0.kill()
            pe0.communicate()


def hang_device():
    return _whole(_launcher(3, "--timeout", 110, sys.executable, PROGRAMS / "hang_device.py"),
                  _env(PYSHMEM_TIMEOUT="2"))


def sim_uncaught():
    return _whole(_launcher(2, "--timeout", 140, "--sim", sys.executable, PROGRAMS / "sim_block_waits.py", "uncaught"),
                  _env(PYSHMEM_SIM_BLOCK_WAIT_TIMEOUT="2"))


def notebook_failure():
    sys.path.insert(0, str(REPO))
    import pyshmem.notebook as nb

    nb.start(3)
    try:
        nb.run("y = 1", quiet=True)
        t0 = time.monotonic()
        nb.run("if pyshmem.my_pe() == 1:\n    raise ValueError('boom on PE 1')\npyshmem.barrier_all()", quiet=True)
        return time.monotonic() - t0
    finally:
        nb.stop()


CASES = {f.__name__: f for f in (kill_to_exit, raise_to_exit, failing_job, sigterm_ignored, launcher_timeout,
                                 timeout_job, hang_report, sigint_to_exit, second_sigint, bootstrap_timeout,
                                 bootstrap_reject, rendezvous, hang_device, sim_uncaught, notebook_failure)}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--cases", default=",".join(CASES), help="comma-separated, from: " + ", ".join(CASES))
    args = ap.parse_args()
    names = args.cases.split(",")
    unknown = [n for n in names if n not in CASES]
    if unknown:
        ap.error(f"unknown cases {unknown}; known: {', '.join(CASES)}")
    print("case                 median (s)   min (s)   max (s)  runs")
    for name in names:
        times = [CASES[name]() for _ in range(args.reps)]
        print(f"{name:20s} {statistics.median(times):10.3f} {min(times):9.3f} {max(times):9.3f} {len(times):5d}",
              flush=True)


if __name__ == "__main__":
    main()
