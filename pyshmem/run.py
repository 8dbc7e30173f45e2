"""SPMD launcher for pyshmem: ``shmemrun -n N prog [args...]``.

Starts N copies ("PEs") of one program on this host (or, with ``--hosts``, on
several: see run_hosts.py), wires them up for the pyshmem bootstrap, supervises
them and folds their exits into one exit code.
The launcher itself uses only the standard library: run as a file
(``python pyshmem/run.py``) it works without the compiled ``pyshmem._C``. As
``shmemrun`` or ``python -m pyshmem.run`` it is a module of the package, imported after
``pyshmem/__init__.py``, which loads the compiled core: those need a built pyshmem.

Environment contract (read by the C++ bootstrap)
------------------------------------------------
Every PE k of N gets the launcher's environment plus:

* ``PYSHMEM_PE=k`` and ``PYSHMEM_NPES=N``.
* ``PYSHMEM_BOOTSTRAP_ADDR=host:port``: the rendezvous address; PE 0 serves it.
* ``PYSHMEM_BOOTSTRAP_FD=fd`` (PE 0 only): an already-listening TCP socket
  bound to ``PYSHMEM_BOOTSTRAP_ADDR``; PE 0 accepts the other PEs on it.
* ``PYSHMEM_JOB_SECRET`` (64 hex chars) and ``PYSHMEM_JOB_ID`` (16 hex chars),
  fresh per job, so the bootstrap can reject peers from other jobs.
* ``PYSHMEM_LAUNCHER=shmemrun``.
* every ``-x NAME=VALUE`` given on the command line (the contract variables
  above always win; stale ones inherited from an outer job are removed).
* ``PYTHONUNBUFFERED=1`` when the launcher's stdout is a terminal and the variable
  is unset: a PE's output goes through a pipe (below), where Python would buffer
  stdout in blocks instead of lines.

Why the listening socket is passed by fd: if the launcher merely picked a
"free" port for PE 0 to bind later, another process could take the port in
between, and PEs 1..N-1 could try to connect before PE 0 listens. Instead the
launcher binds and listens itself (port 0, so the kernel picks a free port)
and hands that socket to PE 0 through ``subprocess.Popen(pass_fds=...)``. The
port is owned from the start, and connections that arrive before PE 0 calls
``accept()`` simply wait in the listen backlog.

Output
------
Every PE's stdout and stderr are pipes that the launcher forwards onto its own a
whole line at a time, ``[pe K] ``-prefixed with ``--tag-output``, so the lines of
several PEs never mix; each Python stack it asks for comes as one block naming its
PE (run_output.py).

Supervision
-----------
Each PE runs in its own session/process group (so whole process trees can be
ended with ``os.killpg``) and with ``PR_SET_PDEATHSIG=SIGKILL`` (so the PEs
die if the launcher is SIGKILLed). When a PE fails, the launcher reports it
on stderr, sends SIGTERM to the other groups and SIGKILL after about 1 s.
SIGINT/SIGTERM received by the launcher are forwarded to every group; a
second one, or PEs still running 2 s later, get SIGKILL.

Exit code: 0 if all PEs exit 0; else the code of the first PE seen failing
(128+S if it was killed by signal S); 124 on ``--timeout``; 130/143 after a
forwarded SIGINT/SIGTERM; 126/127 if the program cannot be started.
"""

from __future__ import annotations

import os
import sys

if __name__ == "__main__" and not __package__ and sys.path and os.path.abspath(
        sys.path[0] or ".") == os.path.dirname(os.path.abspath(__file__)):
    # Run as a file: sys.path[0] is pyshmem/ itself, whose modules (e.g.
    # pyshmem/signal.py) would shadow the standard library modules below.
    del sys.path[0]

import argparse
import ctypes
import secrets
import signal
import socket
import subprocess
import time



def _sibling(name: str):
    """A module next to this file, also when run as a file (no package import, so the
    launcher keeps working without the compiled extension)."""
    if __package__:
        import importlib

        return importlib.import_module(f"{__package__}.{name}")
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        f"_shmemrun_{name}", os.path.join(os.path.dirname(os.path.abspath(__file__)), f"{name}.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


run_hosts = _sibling("run_hosts")
_Signals = _sibling("run_signals").Signals
run_output = _sibling("run_output")
_say = run_output.say

__all__ = ["launch", "main"]

_CONTRACT_VARS = (
    "PYSHMEM_PE", "PYSHMEM_NPES", "PYSHMEM_BOOTSTRAP_ADDR",
    "PYSHMEM_BOOTSTRAP_FD", "PYSHMEM_JOB_SECRET", "PYSHMEM_JOB_ID",
    "PYSHMEM_LAUNCHER",
)
_TERM_GRACE_S = 1.0     # PE failure / timeout: SIGTERM, then SIGKILL after this
_DUMP_S = 1.0           # --timeout: time the PEs get to print their Python stacks
_SIGNAL_GRACE_S = 2.0   # forwarded SIGINT/SIGTERM: SIGKILL after this
_MAX_WAIT_S = 0.5       # safety net even with SIGCHLD wake-ups
_DRAIN_S = 3.0          # max wait for the PEs' output after all PEs exited
_HANG_EXIT = 124        # a PE's exit status when PYSHMEM_TIMEOUT stopped the job (core/hang.h)


def _describe_exit(pe: int, returncode: int) -> str:
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = f"signal {-returncode}"
        return f"PE {pe} was killed by signal {name} ({-returncode})"
    if returncode == _HANG_EXIT:
        return (f"PE {pe} exited with code {returncode}: a wait outlasted PYSHMEM_TIMEOUT "
                "(the report above says who waits for what)")
    return f"PE {pe} exited with code {returncode}"


def _is_terminal(stream) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, OSError, ValueError):  # a notebook stream, a closed one
        return False


def _plural(n: int, one: str, many: str) -> str:
    """`one` for n == 1, else `many` with {n} filled in."""
    return one if n == 1 else many.format(n=n)


def _exit_status(returncode: int) -> int:
    """Map a Popen returncode to a shell-style exit status (128+S for signals)."""
    return 128 - returncode if returncode < 0 else returncode


def _pdeathsig_preexec():
    """Build a preexec_fn setting PR_SET_PDEATHSIG=SIGKILL (None off Linux).

    Everything is resolved before fork; the child only makes two syscalls.
    """
    if not sys.platform.startswith("linux"):
        return None
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    launcher_pid = os.getpid()

    def preexec() -> None:
        prctl(1, 9)  # PR_SET_PDEATHSIG, SIGKILL
        if os.getppid() != launcher_pid:  # launcher died before prctl ran
            os._exit(137)
    return preexec


def _open_listener(bind: str, npes: int) -> tuple[socket.socket, str]:
    """Bind+listen the rendezvous socket; return it and its ``host:port``."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((bind, 0))
        sock.listen(npes + 16)
        sock.setblocking(True)  # PE 0's C++ code expects a blocking fd
    except BaseException:
        sock.close()
        raise
    host, port = sock.getsockname()[:2]
    if host == "0.0.0.0":  # all PEs are local; advertise something connectable
        host = "127.0.0.1"
    return sock, f"{host}:{port}"


class _Job:
    """The started PEs and the process-group signalling done on them."""

    def __init__(self, npes: int, verbose: bool) -> None:
        self.procs: list[subprocess.Popen] = []
        self.live: set[int] = set()
        self.npes = npes
        self.verbose = verbose

    def still_running(self) -> int:
        return sum(1 for k in self.live if self.procs[k].poll() is None)

    def dump_stacks(self) -> None:
        """SIGUSR1 to every live PE process itself (not its group: a compiler or other
        child would die of it): pyshmem's faulthandler prints the PE's Python stack."""
        for k in sorted(self.live):
            try:
                os.kill(self.procs[k].pid, signal.SIGUSR1)
            except ProcessLookupError:
                pass

    def signal_all(self, sig: int, include_exited: bool = False) -> None:
        """Send ``sig`` to the process group of every live (or every) PE."""
        targets = range(len(self.procs)) if include_exited else sorted(self.live)
        if self.verbose and targets:
            _say(f"sending {signal.Signals(sig).name} to PEs {list(targets)}")
        for k in targets:
            proc = self.procs[k]
            try:
                os.killpg(proc.pid, sig)
            except ProcessLookupError:
                if k in self.live:  # PE left its group (setsid): hit it directly
                    try:
                        os.kill(proc.pid, sig)
                    except ProcessLookupError:
                        pass
            except PermissionError:
                pass


def _start(job: _Job, argv: list[str], env: dict[str, str], listener,
           hosts=None, rsh=None, exports=None) -> None:
    """Start every PE; raises OSError (after ending started PEs) on failure.

    With `hosts` (one host per PE), PEs on other hosts start through the `rsh`
    template and read the job secret from their stdin (run_hosts.py)."""
    preexec = _pdeathsig_preexec()
    for pe in range(job.npes):
        pe_env = dict(env, PYSHMEM_PE=str(pe))
        pass_fds: tuple[int, ...] = ()
        remote = hosts is not None and hosts[pe] not in run_hosts.LOCAL_HOSTS
        pe_argv = argv
        if remote:
            pe_argv = run_hosts.remote_argv(rsh, hosts[pe], run_hosts.forwarded_env(pe_env, exports or {}),
                                            argv)
            pe_env.pop("PYSHMEM_JOB_SECRET")
        elif pe == 0 and listener is not None:
            pe_env["PYSHMEM_BOOTSTRAP_FD"] = str(listener.fileno())
            pass_fds = (listener.fileno(),)
        try:
            proc = subprocess.Popen(
                pe_argv, env=pe_env, pass_fds=pass_fds, start_new_session=True,
                preexec_fn=preexec, stdout=subprocess.PIPE, stderr=subprocess.PIPE,  # run_output.py
                # stdin goes to PE 0 only, like mpirun; remote PEs get the secret on it
                stdin=subprocess.PIPE if remote else (None if pe == 0 else subprocess.DEVNULL))
            if remote:
                proc.stdin.write((env["PYSHMEM_JOB_SECRET"] + "\n").encode())
                proc.stdin.close()
        except OSError:
            job.signal_all(signal.SIGKILL)
            for proc in job.procs:
                proc.communicate()  # reap, and close any output pipes
            raise
        finally:
            if pe == 0 and listener is not None:
                listener.close()  # PE 0 owns the rendezvous socket now
        job.procs.append(proc)
        job.live.add(pe)
        if job.verbose:
            _say(f"started PE {pe} (pid {proc.pid})")


def _supervise(job: _Job, sigs: _Signals, timeout: float | None, dump_on_timeout: bool = True,
               can_dump: bool = True) -> int:
    """Wait for all PEs, ending the job on failure/timeout/signal.

    On timeout every PE first prints its Python stack (SIGUSR1, when dump_on_timeout);
    a SIGUSR1 to shmemrun asks for the same at any time. can_dump: the PEs are local
    processes (a remote PE's ssh would die of SIGUSR1).

    Returns the job's exit code.
    """
    deadline = None if timeout is None else time.monotonic() + timeout
    failure_code = None  # first PE failure, or 124 for timeout
    signal_code = None   # 130/143 after a forwarded SIGINT/SIGTERM
    stopping = False
    kill_at = None       # when to escalate to SIGKILL

    def stop(sig: int, grace: float) -> None:
        nonlocal stopping, kill_at
        stopping, kill_at = True, time.monotonic() + grace
        job.signal_all(sig)

    dump_until = None    # timeouts: the PEs print their stacks until then, then end
    hang_dump_at = None  # PYSHMEM_TIMEOUT: when to ask PEs still running for their stacks
    now_s = time.monotonic

    while job.live:
        for signum in sigs.take():
            if signum == signal.SIGUSR1:  # a request for stacks, not for an end
                if can_dump:
                    _say("SIGUSR1: every PE prints its Python stack")
                    job.dump_stacks()
                continue
            if signal_code is None:
                signal_code = 128 + signum
            if stopping:  # second signal, or a signal while already ending
                job.signal_all(signal.SIGKILL)
            else:
                if job.verbose:
                    _say(f"received {signal.Signals(signum).name}; forwarding")
                stop(signum, _SIGNAL_GRACE_S)
        for pe in sorted(job.live):
            returncode = job.procs[pe].poll()
            if returncode is None:
                continue
            job.live.discard(pe)
            msg = _describe_exit(pe, returncode)
            if returncode != 0 and not stopping and dump_until is None:
                failure_code = _exit_status(returncode)
                others = job.still_running()
                if returncode == _HANG_EXIT and others and can_dump:
                    # PYSHMEM_TIMEOUT: PEs waiting in pyshmem exit by themselves (printing
                    # their stacks); the others are asked for theirs before the end.
                    msg += "; " + _plural(others, "the other PE prints its Python stack, then ends",
                                          "the other {n} PEs print their Python stacks, then end")
                    hang_dump_at, dump_until = now_s() + _DUMP_S / 2, now_s() + _DUMP_S
                elif others:
                    msg += "; ending the other " + _plural(others, "PE", "{n} PEs")
                _say(msg)
                if dump_until is None:
                    stop(signal.SIGTERM, _TERM_GRACE_S)
            elif job.verbose:
                _say(msg)
        now = time.monotonic()
        if deadline is not None and not stopping and dump_until is None and now >= deadline and job.live:
            failure_code = 124
            if dump_on_timeout and can_dump:
                _say(f"timeout after {timeout:g} s; every PE prints its Python stack, then "
                     + _plural(len(job.live), "the PE ends", "{n} PEs end"))
                job.dump_stacks()
                dump_until = now + _DUMP_S
            else:
                _say(f"timeout after {timeout:g} s; ending " + _plural(len(job.live), "the PE", "{n} PEs"))
                stop(signal.SIGTERM, _TERM_GRACE_S)
        if hang_dump_at is not None and now >= hang_dump_at:
            hang_dump_at = None
            job.dump_stacks()
        if dump_until is not None and not stopping and now >= dump_until and job.live:
            stop(signal.SIGTERM, _TERM_GRACE_S)
        if kill_at is not None and now >= kill_at:
            job.signal_all(signal.SIGKILL)
            kill_at = None
        if job.live:
            wake = [_MAX_WAIT_S]
            wake += [t - now for t in (kill_at, None if stopping else deadline,
                                       None if stopping else dump_until, hang_dump_at)
                     if t is not None and t > now]
            sigs.wait(min(wake))
    if stopping:  # also end leftovers in groups of PEs that had exited
        job.signal_all(signal.SIGKILL, include_exited=True)
    if failure_code is not None:
        return failure_code
    return signal_code if signal_code is not None else 0


def launch(argv_list, npes, *, tag_output=False, timeout=None,
           bind="127.0.0.1", env=None, verbose=False, hosts=None, rsh=None,
           dump_on_timeout=True) -> int:
    """Run ``npes`` copies of a program as one pyshmem job and wait for it.

    Args:
        argv_list: command line of the program; if ``argv_list[0]`` ends with
            ``.py`` it is run with ``sys.executable``.
        npes: number of PEs (>= 1).
        tag_output: prefix each output line of PE k with ``[pe k] `` (stdout
            and stderr). With or without it, output is forwarded a whole line
            at a time (run_output.py). Note that Python PEs block-buffer piped
            stdout; pass ``PYTHONUNBUFFERED=1`` in ``env`` for live output
            (the default when the launcher's stdout is a terminal).
        timeout: seconds after which all PEs are ended (exit code 124).
        dump_on_timeout: on timeout, every PE first prints its Python stack
            (faulthandler on SIGUSR1), local PEs only.
        bind: IPv4 address for the bootstrap listening socket.
        env: extra environment variables for every PE.
        verbose: print progress messages on stderr.
        hosts: ``"h1:4,h2:4"``: place PEs on these hosts in order (run_hosts.py);
            ``bind`` must then be an address of the first PE's host.
        rsh: remote-start template for PEs not on localhost (default: ssh).

    Returns:
        The job's exit code (see the module docstring).

    Raises:
        ValueError: bad ``argv_list``, ``npes`` or ``timeout``.
        OSError: the rendezvous socket cannot be created or bound, or the
            program cannot be started (``FileNotFoundError``, ...); PEs
            already started are killed first.
    """
    argv, npes = [str(a) for a in argv_list], int(npes)
    if not argv or npes < 1 or (timeout is not None and not timeout > 0):
        raise ValueError(f"need a program, npes >= 1 and timeout > 0; got "
                         f"{argv_list!r}, {npes}, {timeout}")
    if argv[0].endswith(".py"):
        argv = [sys.executable] + argv
    base_env = {k: v for k, v in os.environ.items() if k not in _CONTRACT_VARS}
    base_env.update({str(k): str(v) for k, v in (env or {}).items()})
    if "PYTHONUNBUFFERED" not in base_env and _is_terminal(sys.stdout):
        base_env["PYTHONUNBUFFERED"] = "1"  # piped now, yet live as on the terminal
    order_seed = _order_check_seed(base_env)
    placed = run_hosts.placement(hosts, npes) if hosts else None
    if placed:  # PE 0 may be elsewhere: it listens itself, on an address of its host
        listener, addr = None, f"{bind}:{run_hosts.rendezvous_port()}"
    else:
        listener, addr = _open_listener(bind, npes)
    base_env.update(
        PYSHMEM_NPES=str(npes), PYSHMEM_BOOTSTRAP_ADDR=addr,
        PYSHMEM_JOB_SECRET=secrets.token_hex(32),
        PYSHMEM_JOB_ID=secrets.token_hex(8), PYSHMEM_LAUNCHER="shmemrun")
    if verbose:
        _say(f"job {base_env['PYSHMEM_JOB_ID']}: {npes} PEs of {argv}; "
             f"bootstrap {addr}")
    job = _Job(npes, verbose)
    with _Signals() as sigs:
        try:
            _start(job, argv, base_env, listener, placed, rsh or run_hosts.DEFAULT_RSH, env)
        finally:
            if listener is not None:
                listener.close()  # no-op if PE 0 started (already closed)
        output = run_output.Forwarder(job.procs, tag_output)  # after all forks (preexec_fn + threads)
        try:
            code = _supervise(job, sigs, timeout, dump_on_timeout, can_dump=hosts is None)
        except BaseException:  # never leave PEs behind on an internal error
            job.signal_all(signal.SIGKILL, include_exited=True)
            raise
    output.join(_DRAIN_S)
    if code != 0 and order_seed is not None:
        _say(f"the job ran under the ordering check (PYSHMEM_ORDER_CHECK=1) with seed {order_seed}; "
             f"PYSHMEM_ORDER_CHECK_SEED={order_seed} replays its choices")
    return code


def _order_check_seed(env):
    """The ordering check's seed for the job (drawn into ``env`` when unset), or None
    when PYSHMEM_ORDER_CHECK is off (an unparsable value is left for init to reject)."""
    if env.get("PYSHMEM_ORDER_CHECK", "").strip().lower() not in ("1", "y", "yes", "true", "on"):
        return None
    if not env.get("PYSHMEM_ORDER_CHECK_SEED", "").strip():
        env["PYSHMEM_ORDER_CHECK_SEED"] = str(secrets.randbits(63))
    return env["PYSHMEM_ORDER_CHECK_SEED"].strip()


def _positive(kind):
    """argparse type: ``kind(text)`` that must be > 0."""
    def convert(text: str):
        value = kind(text)
        if not value > 0:
            raise argparse.ArgumentTypeError(f"must be > 0, got {text}")
        return value
    convert.__name__ = kind.__name__  # argparse names the type in errors
    return convert


def _build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="shmemrun",
        description="Launch N PEs of a pyshmem program on this host.",
        epilog="Options after PROG are passed to the program. "
               "PROG ending in .py is run with the current Python.")
    parser.add_argument("-n", "--npes", type=_positive(int), default=None,
                        help="number of PEs (default 1, or every slot of --hosts)")
    parser.add_argument("--tag-output", action="store_true",
                        help="prefix every output line with '[pe K] '")
    parser.add_argument("--timeout", type=_positive(float), metavar="S",
                        help="end the job after S seconds (exit code 124), printing every PE's "
                             "Python stack first")
    parser.add_argument("--dump-on-timeout", action=argparse.BooleanOptionalAction, default=True,
                        help="print every PE's Python stack before --timeout ends them (default: yes); "
                             "a SIGUSR1 to shmemrun prints them at any time")
    parser.add_argument("--bind", default="127.0.0.1", metavar="ADDR",
                        help="IPv4 address of the bootstrap socket")
    parser.add_argument("--hosts", metavar="H1:N1,H2:N2",
                        help="place PEs on hosts in order; needs --bind = an address of the first host")
    parser.add_argument("--rsh", metavar="TEMPLATE", default=None,
                        help="remote start for --hosts: {host} and optionally {cmd} "
                             "(default: 'ssh -o BatchMode=yes {host} {cmd}'; e.g. 'ip netns exec {host}')")
    parser.add_argument("-x", dest="exports", action="append", default=[],
                        metavar="NAME=VALUE",
                        help="set an environment variable in every PE "
                             "(bare NAME exports the launcher's value)")
    parser.add_argument("--sim", action="store_true",
                        help="run Numba CUDA kernels in the simulator on every PE "
                             "(sets NUMBA_ENABLE_CUDASIM=1; pyshmem.device then uses the CPU backend)")
    parser.add_argument("-v", "--verbose", action="store_true")
    parser.add_argument("prog", help="program to run")
    parser.add_argument("args", nargs=argparse.REMAINDER,
                        help="arguments of the program")
    return parser


def main(argv=None) -> int:
    """Command-line entry point of ``shmemrun``.

    Args:
        argv: arguments without the program name (default ``sys.argv[1:]``).

    Returns:
        The job's exit code, suitable for ``sys.exit``.

    Raises:
        SystemExit: on invalid command-line arguments (code 2).
    """
    parser = _build_parser()
    args = parser.parse_args(argv)
    env = {}
    for item in args.exports:
        name, has_value, value = item.partition("=")
        if not name:
            parser.error(f"-x {item!r}: expected NAME=VALUE")
        if not has_value:
            if name not in os.environ:
                parser.error(f"-x {name}: not set in the launcher's environment; export it first, "
                             f"or write -x {name}=VALUE")
            value = os.environ[name]
        env[name] = value
    if args.sim:
        env["NUMBA_ENABLE_CUDASIM"] = "1"
    try:
        npes = args.npes
        if npes is None:  # -n defaults to every slot of --hosts, else 1
            npes = sum(n for _, n in run_hosts.parse_hosts(args.hosts)) if args.hosts else 1
        return launch([args.prog] + args.args, npes,
                      tag_output=args.tag_output, timeout=args.timeout,
                      bind=args.bind, env=env, verbose=args.verbose, hosts=args.hosts, rsh=args.rsh,
                      dump_on_timeout=args.dump_on_timeout)
    except ValueError as exc:
        _say(f"error: {exc}")
        return 2
    except (FileNotFoundError, PermissionError) as exc:  # shell conventions
        fix = "check the path (or PATH)" if isinstance(exc, FileNotFoundError) else "check its execute permission"
        _say(f"cannot start {args.prog!r}: {exc.strerror}; {fix}")
        return 127 if isinstance(exc, FileNotFoundError) else 126
    except OSError as exc:
        _say(f"error: {exc}; if it concerns the rendezvous socket, pass --bind with an IPv4 address of this "
             "host (default 127.0.0.1)")
        return 1


if __name__ == "__main__":
    sys.exit(main())
