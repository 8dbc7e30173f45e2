"""Device-API waits in Numba-simulator kernels that only a later block could end.

Numba's CUDA simulator (numba/cuda/simulator/kernel.py, ``FakeCUDAKernel.__call__``)
runs the blocks of a launch one after another, in ``np.ndindex(*gridDim)`` order: the
threads of the next block start only once every thread of this one has ended. A wait in
a block whose condition a later block of the same launch would make true therefore
never ends. :func:`wait` turns that hang into a :class:`pyshmem.KernelError`.

The rule (all must hold, else the call is the plain host-API wait, unchanged):

1. the caller is a thread of a simulated kernel, in a launch of more than one block, and
   its block is not the launch's last one (so later blocks exist and have not started);
2. ``PYSHMEM_SIM_BLOCK_WAIT_TIMEOUT`` (seconds, default 30) is not 0;
3. for that long the waited-on value has not changed (any change restarts the clock)...
4. ...and at the end of it every other thread of the block has ended or waits (at
   ``cuda.syncthreads``, a ``_warp``/``_block`` variant's barrier, a device-API wait,
   barrier or collective; a thread that still runs restarts the clock), and no thread
   of another block is alive (a simulator that ran blocks concurrently, or a thread left
   in a C++ wait by an earlier failed launch, turns the call into the plain wait).

Such a wait polls (``pyshmem.test``, short sleeps) instead of blocking in C++, so the
thread also notices when the simulator aborts the block after another thread failed.
When the condition holds it calls the real wait, which returns at once with the host
API's result. A wait that another PE (or another host thread) satisfies later than the
timeout, with no change to the value before, is reported too: the message says so.
"""

import math
import threading
import time

import pyshmem
from pyshmem.errors import InvalidArgumentError, KernelError
from pyshmem.runtime import env_setting, where

_VAR = "PYSHMEM_SIM_BLOCK_WAIT_TIMEOUT"
_DEFAULT = 30.0


def timeout():
    """Seconds of PYSHMEM_SIM_BLOCK_WAIT_TIMEOUT (0: never report)."""
    text = env_setting(_VAR)
    if not text:
        return _DEFAULT
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not value >= 0:
        raise InvalidArgumentError(f"{where('device')}: {_VAR}={text!r} is not a number of seconds >= 0")
    return value


def kernel_thread():
    """The calling simulator thread (numba's BlockThread), or None outside a kernel."""
    t = threading.current_thread()
    return t if hasattr(t, "_manager") and hasattr(t, "blockIdx") else None


def _later_blocks(t):
    """Blocks after t's in the simulator's order (np.ndindex: z fastest), or 0."""
    gx, gy, gz = t._manager._grid_dim
    b = t.blockIdx
    return gx * gy * gz - 1 - ((b.x * gy + b.y) * gz + b.z)


class waiting:
    """Marks the calling simulator thread as waiting (for the rule's sibling check)."""

    def __init__(self, t):
        self.t = t

    def __enter__(self):
        if self.t is not None:
            self.t._pyshmem_waiting = True

    def __exit__(self, *exc):
        if self.t is not None:
            self.t._pyshmem_waiting = False


def _others(t):
    """(threads of t's block that still run, whether a thread of another block is alive)."""
    running, other_block = [], False
    for o in threading.enumerate():
        m = getattr(o, "_manager", None)
        if m is None or o is t:
            continue
        if m is not t._manager:
            other_block = True
        elif not (o.syncthreads_blocked or getattr(o, "_pyshmem_waiting", False)):
            running.append(o)
    return running, other_block


def _cmp_name(cmp):
    try:
        return "CMP_" + pyshmem.CMP(int(cmp)).name
    except (TypeError, ValueError):
        return repr(cmp)


def wait(call, view, cmp, value, real, test=None):
    """``real()`` (a blocking host-API wait on the array ``view``: one element, or the
    ivars of a wait_until_all/any/some), bounded by the rule above when the caller is a
    block that later blocks of its launch follow. ``test()`` says whether the wait's
    condition holds (default: ``pyshmem.test(view, cmp, value)``)."""
    t = kernel_thread()
    if t is None:
        return real()
    later = _later_blocks(t)
    limit = timeout() if later else 0
    if not limit:
        return real()
    if test is None:
        def test():
            return pyshmem.test(view, cmp, value)
    try:
        done = test()
    except Exception:
        return real()  # an argument error: the real wait raises it with its own message
    since, last, pause = time.monotonic(), view.tobytes(), 0.0
    with waiting(t):
        while not done:
            if getattr(t, "abort", False):  # another thread of the block failed
                raise RuntimeError(f"{call} abandoned: the simulator aborted the block")
            time.sleep(pause)
            pause = min(0.002, pause * 2 or 0.00005)
            now, cur = time.monotonic(), view.tobytes()
            if cur != last:
                since, last = now, cur
            elif now - since >= limit:
                running, other_block = _others(t)
                if other_block:  # blocks run concurrently after all: a plain wait can end
                    break
                if running:
                    since = now
                else:
                    raise KernelError(_message(t, call, view, cmp, value, limit, later))
            done = test()
    return real()


def _message(t, call, view, cmp, value, limit, later):
    m = t._manager
    name = getattr(m._f, "__name__", "?")
    grid, block = tuple(m._grid_dim), tuple(t.blockIdx)
    return (
        f"{where('device.' + call)}: kernel {name!r}, block {block} of grid {grid}, thread {tuple(t.threadIdx)}: "
        f"{call}(..., {_cmp_name(cmp)}, {value}) found the value{'' if view.size == 1 else 's'} "
        f"{view[0] if view.size == 1 else list(view)} for {limit:g} s, unchanged, and no "
        f"other thread of its block can change it (each has ended or waits), while the {later} later block(s) of "
        "this launch have not started. The Numba CUDA simulator (shmemrun --sim) runs a launch's blocks one after "
        "another, so a wait that a later block of the same launch would end never completes. Fix: launch one block "
        "that does both sides, write the kernel in CUDA C++ and run it through pyshmem.cuda.Module (its CPU build "
        "runs all blocks at once), or run on a GPU. If another PE sets the value, only later than that, raise "
        f"{_VAR} (0: no limit)."
    )


__all__ = ["timeout", "kernel_thread", "waiting", "wait"]
