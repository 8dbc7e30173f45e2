"""Test-only "asynchronous simulator": Numba CUDA simulator kernel launches behave as on a GPU.

Put this directory first on PYTHONPATH (Python imports ``sitecustomize`` at start-up)
of processes that run kernels under ``NUMBA_ENABLE_CUDASIM=1``. The simulator runs a
kernel to completion inside the launch call, which hides a missing synchronise: host
code after a launch always sees the kernel done. Here, as on a GPU:

- a launch (``kernel[grid, block](...)``, any stream) returns at once; the kernel runs
  later on one background thread per process, in launch order (one stream), after a
  small random delay (up to ASYNC_SIM_MAX_DELAY seconds, default 0.02; seeded by
  ASYNC_SIM_SEED and the PE's rank, so a run can be repeated);
- ``cuda.synchronize()``, ``stream.synchronize()`` / ``auto_synchronize``, event
  ``synchronize``/``wait``, and the host-side copies and element accesses of simulator
  device arrays (``copy_to_host``, ``copy_to_device``, indexing to a scalar, item
  assignment) wait for every pending launch;
- a launch with plain NumPy arguments (which Numba copies in and back) waits for its
  kernel, as Numba's does;
- an exception in a kernel is sticky: later launches are skipped and the next
  synchronising call raises it (a pending one is reported at exit, which then fails).

Nothing is patched until ``numba.cuda`` is imported with the simulator on, so programs
that set NUMBA_ENABLE_CUDASIM themselves work too. The simulator points the kernel
module's global ``cuda`` at its per-launch fake module while a kernel runs; host code
of that module running meanwhile (now possible) looks attributes the fake module lacks
(``cuda.synchronize`` ...) up in the real ``numba.cuda``.
"""

import atexit
import collections
import importlib.abc
import os
import random
import sys
import threading
import traceback

_TARGET = "numba.cuda"


class _Stream:
    """One in-order queue of launches run by one daemon thread."""

    def __init__(self):
        self.cv = threading.Condition()
        self.queue = collections.deque()
        self.pending = 0
        self.error = None       # (exception, formatted traceback) of the first failed kernel
        self.reported = False
        self.thread = None
        seed = os.environ.get("ASYNC_SIM_SEED", "0") + ":" + os.environ.get("PYSHMEM_PE", "")
        self.rng = random.Random(seed)
        self.max_delay = float(os.environ.get("ASYNC_SIM_MAX_DELAY", "0.02"))

    def submit(self, job):
        with self.cv:
            if self.thread is None:
                self.thread = threading.Thread(target=self._run, name="async-sim-stream", daemon=True)
                self.thread.start()
                atexit.register(_at_exit)  # after pyshmem's own: runs before its finalize
            self.queue.append(job)
            self.pending += 1
            self.cv.notify_all()

    def _run(self):
        import time

        while True:
            with self.cv:
                while not self.queue:
                    self.cv.wait()
                job = self.queue.popleft()
                skip = self.error is not None
            try:
                if not skip:
                    time.sleep(self.rng.uniform(0, self.max_delay))
                    job()
            except BaseException as exc:  # noqa: BLE001 - reported at the next synchronise
                with self.cv:
                    if self.error is None:
                        self.error = (exc, traceback.format_exc())
            finally:
                with self.cv:
                    self.pending -= 1
                    self.cv.notify_all()

    def wait(self):
        """Wait for every pending launch (a no-op on the kernel threads themselves)."""
        if _on_kernel_thread() or self.thread is None:
            return
        with self.cv:
            while self.pending:
                self.cv.wait()
            if self.error is not None and not self.reported:
                self.reported = True
                exc, text = self.error
                raise RuntimeError(f"asynchronous simulated kernel failed:\n{text}") from exc


STREAM = _Stream()


def _on_kernel_thread():
    from numba.cuda.simulator.kernel import BlockThread

    t = threading.current_thread()
    return t is STREAM.thread or isinstance(t, BlockThread)


def _at_exit():
    try:
        STREAM.wait()
    except RuntimeError as exc:
        sys.stderr.write(f"{exc}\n")
        sys.stderr.flush()
        sys.stdout.flush()
        os._exit(1)


def _patch():
    import copy

    import numpy as np
    from numba.cuda.simulator import api, kernel, kernelapi
    from numba.cuda.simulator.cudadrv import devicearray

    real_cuda = sys.modules[_TARGET]
    launch = kernel.FakeCUDAKernel.__call__

    def call(self, *args):
        if self._device or _on_kernel_thread():
            return launch(self, *args)
        configured = copy.copy(self)  # the grid/block of this launch, not of a later one
        STREAM.submit(lambda: launch(configured, *args))
        if any(isinstance(a, np.ndarray) for a in args):
            STREAM.wait()  # Numba copies host arrays back: such a launch is synchronous

    kernel.FakeCUDAKernel.__call__ = call

    def synchronize():
        STREAM.wait()

    for mod in (api, real_cuda, sys.modules.get("numba.cuda.simulator")):
        if mod is not None and hasattr(mod, "synchronize"):
            mod.synchronize = synchronize

    api.stream.synchronize = lambda self: STREAM.wait()
    original_auto = api.stream.auto_synchronize

    def auto_synchronize(self):
        class _Ctx:
            def __enter__(ctx):
                ctx.inner = original_auto(self)
                return ctx.inner.__enter__()

            def __exit__(ctx, *exc):
                STREAM.wait()
                return ctx.inner.__exit__(*exc)

        return _Ctx()

    api.stream.auto_synchronize = auto_synchronize
    api.Event.synchronize = lambda self: STREAM.wait()
    api.Event.wait = lambda self, stream=0: STREAM.wait()

    fake = devicearray.FakeCUDAArray
    for name in ("copy_to_host", "copy_to_device", "__setitem__"):
        def waiting(*a, _orig=getattr(fake, name), **k):
            STREAM.wait()
            return _orig(*a, **k)
        setattr(fake, name, waiting)
    getitem = fake.__getitem__

    def get(self, idx):
        ret = getitem(self, idx)
        if not isinstance(ret, fake):  # a scalar read on the host is a synchronous copy
            STREAM.wait()
            ret = getitem(self, idx)
        return ret

    fake.__getitem__ = get

    def fallback(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(real_cuda, name)

    kernelapi.FakeCUDAModule.__getattr__ = fallback


class _Loader(importlib.abc.Loader):
    def __init__(self, inner):
        self.inner = inner

    def create_module(self, spec):
        return self.inner.create_module(spec)

    def exec_module(self, module):
        self.inner.exec_module(module)
        from numba.cuda.core import config

        if config.ENABLE_CUDASIM:
            _patch()


class _Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path, target=None):
        if fullname != _TARGET:
            return None
        sys.meta_path.remove(self)
        for finder in sys.meta_path:  # whoever would find it (numba-cuda redirects numba.cuda)
            spec = finder.find_spec(fullname, path, target) if hasattr(finder, "find_spec") else None
            if spec is not None:
                if spec.loader is not None:
                    spec.loader = _Loader(spec.loader)
                return spec
        return None


sys.meta_path.insert(0, _Finder())
