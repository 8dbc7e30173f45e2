"""pyshmem.notebook: N PEs behind a Jupyter notebook, on ipyparallel.

In a notebook::

    import pyshmem.notebook as nb
    nb.start(4)                 # 4 PEs (ipyparallel engines started by shmemrun)
    nb.run("x = pyshmem.zeros(4)")   # a cell's code on every PE; output labelled [PE k]
    nb.pull("x")                # [x on PE 0, x on PE 1, ...]
    nb.stop()

or with the magics (``%load_ext pyshmem``): ``%shmem_start 4 [--sim]``, ``%%shmem``
(the cell on every PE), ``%shmem_stop``. ipyparallel's own ``%%px`` works on the same
engines too (``start`` makes them its default target when running in IPython).

Each PE is an ipyparallel engine inside one shmemrun job, so its variables live on
across cells. When a cell fails on one PE, the error is shown with that PE's number at
once, and the PEs still running the cell (likely waiting for the failed one in a
barrier) are interrupted instead of left to hang; their collective state may then be
out of step, so restart (``stop`` + ``start``) before the next collective.
"""

import os
import signal
import sys
import time

__all__ = ["Session", "start", "stop", "run", "pull", "current"]

_session = None


def _launcher_class(sim):
    from ipyparallel.cluster.launcher import MPIEngineSetLauncher
    from traitlets import List

    class ShmemrunEngineSetLauncher(MPIEngineSetLauncher):
        """Starts the engines as the PEs of one shmemrun job (-n N engines)."""

        mpi_cmd = List([sys.executable, "-m", "pyshmem.run"], config=True)
        mpi_args = List(["--sim"] if sim else [], config=True)

        @property
        def program(self):
            # Not ipyparallel's "--mpi": the engines must not start MPI (pyshmem is the
            # runtime here, and an MPI singleton leaves segments in /dev/shm when killed).
            return self.engine_cmd

    return ShmemrunEngineSetLauncher


def _whoami():  # runs on every engine: starts pyshmem there (collective)
    import os as _os

    from pyshmem import runtime as _shmem  # the module, not the package's names (no import cycle)

    _shmem.init()
    return _shmem.my_pe(), _os.getpid()


def _leave():  # runs on every engine at stop()
    import os as _os
    import sys as _sys

    from pyshmem import runtime as _shmem  # the module, not the package's names (no import cycle)

    _sys.stdout.flush()
    _sys.stderr.flush()
    _shmem.finalize()
    _os._exit(0)


class Session:
    """A running set of PEs: the ipyparallel cluster, its client and the engines by PE.

    Attributes:
        n: number of PEs.
        cluster: the ipyparallel Cluster.
        client: its ipyparallel Client.
        engines: engine ids in PE order (``engines[k]`` is PE k).
        view: a DirectView on all engines, in PE order.
    """

    def __init__(self, n, cluster, client, engines, pids):
        self.n, self.cluster, self.client, self.engines, self._pids = n, cluster, client, engines, pids
        self.view = client[engines]

    def run(self, code, *, interrupt_after=1.0, quiet=False):
        """Runs `code` on every PE and shows each PE's output, labelled.

        Args:
            code: Python source, run in each PE's namespace (its variables persist).
            interrupt_after: seconds the other PEs get to finish once one PE failed,
                before they are interrupted (KeyboardInterrupt).
            quiet: do not print the PEs' output.

        Returns:
            list: per PE, None on success or the error (ipyparallel RemoteError).
        """
        pending = {pe: self.client[e].execute(code, block=False, silent=False) for pe, e in enumerate(self.engines)}
        errors, failed_at, first_failed, interrupted, done = {}, None, None, set(), {}
        while True:
            for pe, ar in list(pending.items()):
                if ar.ready():
                    try:
                        ar.get()
                    except Exception as exc:  # the PE's own exception, forwarded
                        errors[pe] = exc
                        if first_failed is None:
                            first_failed, failed_at = pe, time.monotonic()
                    done[pe] = ar
                    del pending[pe]
            if not pending:
                break
            if failed_at is not None and not interrupted and time.monotonic() - failed_at > interrupt_after:
                # The others most likely wait for the failed PE (a barrier, a signal):
                # interrupt them rather than leave the notebook hanging.
                for pe in pending:
                    interrupted.add(pe)
                    try:
                        os.kill(self._pids[pe], signal.SIGINT)
                    except ProcessLookupError:
                        pass
            time.sleep(0.01)
        if not quiet:  # in PE order, whatever order they finished in
            for pe in range(self.n):
                note = f"interrupted after PE {first_failed} failed" if pe in interrupted else None
                _show(pe, done[pe], errors.get(pe), note)
        return [errors.get(pe) for pe in range(self.n)]

    def pull(self, name):
        """The value of variable `name` on every PE, as a list in PE order."""
        return [self.client[e].pull(name, block=True) for e in self.engines]

    def stop(self):
        """Stops the PEs (the shmemrun job) and the ipyparallel controller."""
        try:
            # The PEs leave by themselves: finalize (collective) and exit 0, so the
            # shmemrun job ends cleanly (an engine's own shutdown exits with status 1,
            # and stopping the engine set would end shmemrun with SIGTERM).
            self.client[self.engines].apply_async(_leave)
            deadline = time.monotonic() + 30
            while any(_alive(p) for p in self._pids) and time.monotonic() < deadline:
                time.sleep(0.05)
            self.client.close()
        finally:
            self.cluster.stop_cluster_sync()


def _in_ipython():
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    return get_ipython() is not None


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _show(pe, ar, error, note=None):
    out = ar.stdout or ""
    err = ar.stderr or ""
    for line in out.splitlines():
        print(f"[PE {pe}] {line}")
    for line in err.splitlines():
        print(f"[PE {pe}] {line}", file=sys.stderr)
    try:
        from IPython.display import publish_display_data

        for output in ar.outputs or []:
            publish_display_data(output.get("data", {}), output.get("metadata", {}))
    except ImportError:
        pass
    if error is not None:
        lines = error.render_traceback() if hasattr(error, "render_traceback") else [str(error)]
        name = getattr(error, "ename", type(error).__name__)
        print(f"[PE {pe}] {note or 'failed with ' + name}:", file=sys.stderr)
        for line in lines:
            print(f"[PE {pe}] {line}", file=sys.stderr)


def start(n=4, *, sim=False, timeout=120):
    """Starts `n` PEs for this notebook (one shmemrun job of ipyparallel engines).

    Args:
        n: number of PEs.
        sim: run Numba CUDA kernels in the simulator on the PEs (shmemrun --sim), so
            ``pyshmem.device`` kernels work without a GPU.
        timeout: seconds to wait for the engines.

    Returns:
        Session: also the module's current session (``current()``).

    Raises:
        RuntimeError: PEs are already running (call ``stop()`` first).
        ImportError: ipyparallel is not installed (``pip install ipyparallel``).
    """
    global _session
    if _session is not None:
        raise RuntimeError(f"pyshmem.notebook.start: {_session.n} PEs are already running; call "
                           "pyshmem.notebook.stop() (or %shmem_stop) first")
    if not isinstance(n, int) or n < 1:
        raise ValueError(f"pyshmem.notebook.start: n must be a positive int, not {n!r}")
    try:
        import ipyparallel as ipp
    except ImportError as exc:
        raise ImportError("pyshmem.notebook needs ipyparallel: pip install ipyparallel") from exc
    cluster = ipp.Cluster(n=n, engine_launcher_class=_launcher_class(sim), log_level=30)
    cluster.start_cluster_sync(n=n)
    try:
        client = cluster.connect_client_sync()
        client.wait_for_engines(n, timeout=timeout, interactive=False)
        ids = client.ids
        who = client[ids].apply_sync(_whoami)
        by_pe = sorted(zip(who, ids))
        engines = [e for _, e in by_pe]
        pids = [pid for (_, pid), _ in by_pe]
        if [pe for (pe, _), _ in by_pe] != list(range(n)):
            raise RuntimeError(f"pyshmem.notebook.start: the engines report PEs {who}, not 0..{n - 1}")
        client[engines].execute("import numpy as np\nimport pyshmem", block=True)  # names every cell has
        if _in_ipython():
            px = client[engines]
            px.block = True  # %%px prints the PEs' output in the cell, like %%shmem
            px.activate()
    except BaseException:
        cluster.stop_cluster_sync()
        raise
    _session = Session(n, cluster, client, engines, pids)
    print(f"pyshmem: {n} PEs running (ipyparallel engines {engines} = PEs 0..{n - 1})")
    return _session


def current():
    """The running Session, or None."""
    return _session


def _need(call):
    if _session is None:
        raise RuntimeError(f"pyshmem.notebook.{call}: no PEs are running; call pyshmem.notebook.start(n) "
                           "(or %shmem_start n) first")
    return _session


def run(code, **kw):
    """Runs `code` on every PE of the current session (see Session.run)."""
    return _need("run").run(code, **kw)


def pull(name):
    """The value of `name` on every PE of the current session, in PE order."""
    return _need("pull").pull(name)


def stop():
    """Stops the current session's PEs (a no-op when none run)."""
    global _session
    if _session is not None:
        s, _session = _session, None
        s.stop()
        print(f"pyshmem: {s.n} PEs stopped")


def load_ipython_extension(ipython):
    """``%load_ext pyshmem``: the %shmem_start, %%shmem and %shmem_stop magics."""
    from IPython.core.magic import Magics, cell_magic, line_magic, magics_class

    @magics_class
    class ShmemMagics(Magics):
        @line_magic
        def shmem_start(self, line):
            """%shmem_start [N] [--sim]: start N PEs (default 4)."""
            words = line.split()
            n = next((int(w) for w in words if w.isdigit()), 4)
            start(n, sim="--sim" in words)

        @cell_magic
        def shmem(self, line, cell):
            """%%shmem: run the cell on every PE; output labelled [PE k]."""
            errors = run(cell)
            failed = [pe for pe, e in enumerate(errors) if e is not None]
            if failed:
                print(f"pyshmem: the cell failed on PE{'s' * (len(failed) > 1)} {', '.join(map(str, failed))}",
                      file=sys.stderr)

        @line_magic
        def shmem_stop(self, line):
            """%shmem_stop: stop the PEs."""
            stop()

    ipython.register_magics(ShmemMagics)
