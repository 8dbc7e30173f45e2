"""The device API under the Numba CUDA simulator: each call goes to the CPU backend.

With ``NUMBA_ENABLE_CUDASIM=1`` (``shmemrun --sim``), a ``@cuda.jit`` kernel runs as
Python threads, one per CUDA thread; the functions here are what its calls to
``pyshmem.device.*`` execute. They take the kernel's array arguments (or slices of
them), unwrap the simulator's array objects to the NumPy views of the symmetric heap
and call the host API, so results are identical to the host API's.

What the simulator gives (docs/design.md, "The Numba CUDA simulator"): a block's
threads run together (interleaved under the GIL) with a real ``cuda.syncthreads``, but
the blocks of a launch run one after another, each once the previous one has ended. So
a block cannot wait for a later block of the same launch: :func:`wait_until` and
:func:`signal_wait_until` in a block that later blocks follow raise
:class:`pyshmem.KernelError` once the value has stayed unchanged for
``PYSHMEM_SIM_BLOCK_WAIT_TIMEOUT`` seconds with the block's other threads ended or
waiting (``_sim_blocks.py`` has the exact rule); waits that another PE ends work as
usual. Python spins on a flag, barriers and collectives are not watched and hang.
Kernels whose blocks wait for each other need one block, a CUDA C++ kernel through
``pyshmem.cuda.Module`` (its CPU build runs all blocks at once), or a GPU.

Pass symmetric arrays to kernels through :func:`array` (``kernel[g, b](device.array(x))``):
the simulator copies plain NumPy arguments, and a copy is not symmetric memory.
Cooperative variants (``_warp``/``_block``) must be called by every thread of the warp
or block with the same arguments; one thread does the work between two barriers.
Calls made outside a kernel behave as a single thread.
"""

import functools
import inspect
import threading

import numpy as np

import pyshmem
from pyshmem.device import _sim_blocks
from pyshmem.device._table import OPS, REDUCE_OPS
from pyshmem.errors import InvalidArgumentError, ShmemTypeError
from pyshmem.runtime import where


def array(x):
    """Wrap a symmetric NumPy array for a simulated kernel launch, without a copy.

    Args:
        x: a symmetric array (``pyshmem.zeros(...)`` ...), or a view of one.

    Returns:
        An array object the simulator passes to the kernel as is, so the kernel's
        writes land in the symmetric heap.
    """
    from numba.cuda.simulator.cudadrv.devicearray import FakeCUDAArray

    if not isinstance(x, np.ndarray):
        raise ShmemTypeError(f"{where('device.array')}: expected a NumPy array, got {type(x).__name__}")
    return FakeCUDAArray(x)


def _arr(x, role):
    """The NumPy array behind a kernel argument (simulator wrappers are unwrapped)."""
    if isinstance(x, np.ndarray):
        return x
    d = getattr(x, "__dict__", None)
    if d is not None and "_item" in d:  # FakeWithinKernelCUDAArray
        x = d["_item"]
    ary = getattr(x, "_ary", None)  # FakeCUDAArray
    if isinstance(ary, np.ndarray):
        return ary
    raise ShmemTypeError(
        f"{where('device')}: {role} must be an array (a kernel argument or a slice of one), not {type(x).__name__}"
    )


def _one(x, role):
    """A 1-element view of x[0] (atomics, waits and signals act on the first element)."""
    a = _arr(x, role).reshape(-1)
    return a[:1]


# ---- cooperation: warps and blocks of the simulated kernel ----
_warp_barriers = {}
_warp_lock = threading.Lock()


def _warp_barrier(t):
    dims = tuple(t._manager._block_dim)
    nthreads = dims[0] * dims[1] * dims[2]
    warp = t.thread_id // 32
    key = (id(t._manager), dims, warp)
    with _warp_lock:
        b = _warp_barriers.get(key)
        if b is None:
            b = _warp_barriers[key] = threading.Barrier(min(32, nthreads - warp * 32))
    return b


def _abort_group(kind):
    t = threading.current_thread()
    if kind == "warp" and hasattr(t, "_manager"):
        b = _warp_barrier(t)
        with _warp_lock:  # a broken barrier stays broken: the next launch gets a new one
            for key, value in list(_warp_barriers.items()):
                if value is b:
                    del _warp_barriers[key]
        b.abort()


def _group(kind):
    """(rank in the group, barrier function) for the calling simulator thread."""
    t = threading.current_thread()
    if not hasattr(t, "thread_id") or not hasattr(t, "_manager"):
        return 0, lambda: None  # not in a kernel: a group of one
    if kind == "block":
        return t.thread_id, t.syncthreads
    barrier = _warp_barrier(t)

    def sync():
        with _sim_blocks.waiting(t):  # a thread here cannot end another's wait
            barrier.wait()

    return t.thread_id % 32, sync


def _cooperative(fn, kind):
    def variant(*args):
        rank, sync = _group(kind)
        sync()
        try:
            result = fn(*args) if rank == 0 else None
        except BaseException:
            _abort_group(kind)  # the other threads would wait forever at the next sync
            raise
        sync()
        return result

    variant.__name__ = f"{fn.__name__}_{kind}"
    variant.__doc__ = f"{fn.__name__} by a whole {kind}: every thread calls it with the same arguments."
    return variant


# ---- the operations (names and parameters: pyshmem/device/_table.py) ----
def my_pe():
    """This PE's number."""
    return pyshmem.my_pe()


def n_pes():
    """Number of PEs."""
    return pyshmem.n_pes()


def put(dest, src, pe):
    """Copy src into symmetric dest on pe."""
    pyshmem.put(_arr(dest, "dest"), _arr(src, "src"), pe)


def get(dest, src, pe):
    """Copy symmetric src on pe into dest."""
    pyshmem.get(_arr(dest, "dest"), _arr(src, "src"), pe)


def put_nbi(dest, src, pe):
    """Non-blocking put; complete after quiet()."""
    pyshmem.put_nbi(_arr(dest, "dest"), _arr(src, "src"), pe)


def get_nbi(dest, src, pe):
    """Non-blocking get; complete after quiet()."""
    pyshmem.get_nbi(_arr(dest, "dest"), _arr(src, "src"), pe)


def p(dest, value, pe):
    """Store value into dest[0] on pe."""
    d = _one(dest, "dest")
    pyshmem.put(d, np.asarray([value]).astype(d.dtype), pe)


def g(src, pe):
    """Return src[0] on pe."""
    s = _one(src, "src")
    out = np.empty(1, s.dtype)
    pyshmem.get(out, s, pe)
    return out[0]


def iput(dest, src, dst, sst, nelems, pe):
    """Strided put: src[i*sst] -> dest[i*dst] on pe, i < nelems."""
    pyshmem.iput(_arr(dest, "dest"), _arr(src, "src"), pe, dst, sst, nelems)


def iget(dest, src, dst, sst, nelems, pe):
    """Strided get: src[i*sst] on pe -> dest[i*dst], i < nelems."""
    pyshmem.iget(_arr(dest, "dest"), _arr(src, "src"), pe, dst, sst, nelems)


def put_signal(dest, src, sig, signal, sig_op, pe):
    """Put, then update sig on pe; the data is visible before the signal."""
    pyshmem.put_signal(_arr(dest, "dest"), _arr(src, "src"), pe, _one(sig, "sig"), signal, sig_op)


def put_signal_nbi(dest, src, sig, signal, sig_op, pe):
    """Non-blocking put_signal."""
    pyshmem.put_signal_nbi(_arr(dest, "dest"), _arr(src, "src"), pe, _one(sig, "sig"), signal, sig_op)


def signal_op(sig, signal, sig_op, pe):
    """Update sig on pe: SIGNAL_SET stores, SIGNAL_ADD adds."""
    s = _one(sig, "sig")
    pyshmem.put_signal(s[:0], s[:0], pe, s, signal, sig_op)


def signal_fetch(sig):
    """The local value of sig (acquire)."""
    return pyshmem.signal_fetch(_one(sig, "sig"))


def signal_wait_until(sig, cmp, value):
    """Wait until the local sig compares cmp to value; returns its value."""
    s = _one(sig, "sig")
    return _sim_blocks.wait("signal_wait_until", s, cmp, value, lambda: pyshmem.signal_wait_until(s, cmp, value))


def wait_until(ivar, cmp, value):
    """Wait until the local ivar[0] compares cmp to value (acquire)."""
    v = _one(ivar, "ivar")
    _sim_blocks.wait("wait_until", v, cmp, value, lambda: pyshmem.wait_until(v, cmp, value))


def test(ivar, cmp, value):
    """1 when ivar[0] compares cmp to value, else 0."""
    return 1 if pyshmem.test(_one(ivar, "ivar"), cmp, value) else 0


def _wait_set(op):
    """The simulator's wait/test on an array of variables (op: its _table.py row): the
    host API's function of the same name (pyshmem/waits.py) on the kernel's arrays, with
    the device API's results (-1 for no index, indices written to an array) and the GPU
    path's checks, made before anything waits: contiguous arrays, an int32 status, values
    of ivars' type, int64/uint64 indices, none of them shorter than ivars."""
    name = op.name
    host = getattr(pyshmem, name)
    test_form = getattr(pyshmem, name.replace("wait_until", "test"))
    sig = inspect.Signature([inspect.Parameter(a, inspect.Parameter.POSITIONAL_OR_KEYWORD,
                                               default=None if a == "status" else inspect.Parameter.empty)
                             for a in op.args])

    def flat(role, x, dtypes, want, n=None):
        a = _arr(x, role)
        if a.dtype not in dtypes:
            raise ShmemTypeError(f"{where('device.' + name)}: {role} must be {want}, not an array of {a.dtype}")
        if not (a.flags.c_contiguous or a.flags.f_contiguous):
            raise ShmemTypeError(f"{where('device.' + name)}: {role} is not contiguous; pass a contiguous array or slice")
        a = a.reshape(-1, order="A")  # a view: writes to indices land in the kernel's array
        if n is not None and a.size < n:
            raise InvalidArgumentError(f"{where('device.' + name)}: {role} is shorter than ivars ({a.size} < {n})")
        return a if n is None else a[:n]

    def fn(*args, **kwargs):
        a = sig.bind(*args, **kwargs).arguments
        ivars = flat("ivars", a["ivars"], _INT_DTYPES, "an array of int32/int64/uint32/uint64")
        n = ivars.size
        value = flat("values", a["values"], (ivars.dtype,), f"an array of {ivars.dtype} (ivars' type)", n) \
            if "values" in a else a["value"]
        status = None if a.get("status") is None else flat("status", a["status"], (np.dtype(np.int32),),
                                                           "None or an int32 array", n)
        out = flat("indices", a["indices"], _INDEX_DTYPES, "an int64 or uint64 array", n) if "indices" in a else None
        if name.startswith("wait_until"):
            def over():  # the wait's condition, or nothing left to wait for
                if n == 0 or (status is not None and status.all()):
                    return True
                r = test_form(ivars, a["cmp"], value, status)
                return bool(r) if "_all" in name else (r is not None if "_any" in name else len(r) > 0)

            r = _sim_blocks.wait(name, ivars, a["cmp"], value, lambda: host(ivars, a["cmp"], value, status), over)
        else:
            r = host(ivars, a["cmp"], value, status)
        if out is not None:
            out[:len(r)] = r
            return len(r)
        if "_any" in name:
            return -1 if r is None else int(r)
        return None if r is None else int(bool(r))

    fn.__name__ = fn.__qualname__ = name
    fn.__signature__ = sig
    fn.__doc__ = op.doc
    return fn


_INT_DTYPES = tuple(np.dtype(t) for t in (np.int32, np.int64, np.uint32, np.uint64))  # _shims.INT_TAGS
_INDEX_DTYPES = (np.dtype(np.int64), np.dtype(np.uint64))
globals().update({op.name: _wait_set(op) for op in OPS if op.lowering == "wait_set"})


def atomic_fetch(src, pe):
    """Atomically read src[0] on pe."""
    return pyshmem.atomic_fetch(_one(src, "src"), pe)


def atomic_set(dest, value, pe):
    """Atomically store value into dest[0] on pe."""
    pyshmem.atomic_set(_one(dest, "dest"), value, pe)


def atomic_swap(dest, value, pe):
    """Store value, return the previous value."""
    return pyshmem.atomic_swap(_one(dest, "dest"), value, pe)


def atomic_compare_swap(dest, cond, value, pe):
    """Store value if dest[0] == cond on pe; return the previous value."""
    return pyshmem.atomic_compare_swap(_one(dest, "dest"), cond, value, pe)


def atomic_fetch_add(dest, value, pe):
    """Add value, return the previous value."""
    return pyshmem.atomic_fetch_add(_one(dest, "dest"), value, pe)


def atomic_add(dest, value, pe):
    """Add value."""
    pyshmem.atomic_add(_one(dest, "dest"), value, pe)


def atomic_fetch_inc(dest, pe):
    """Add 1, return the previous value."""
    return pyshmem.atomic_fetch_inc(_one(dest, "dest"), pe)


def atomic_inc(dest, pe):
    """Add 1."""
    pyshmem.atomic_inc(_one(dest, "dest"), pe)


def atomic_fetch_and(dest, value, pe):
    """Bitwise and, return the previous value."""
    return pyshmem.atomic_fetch_and(_one(dest, "dest"), value, pe)


def atomic_and(dest, value, pe):
    """Bitwise and."""
    pyshmem.atomic_and(_one(dest, "dest"), value, pe)


def atomic_fetch_or(dest, value, pe):
    """Bitwise or, return the previous value."""
    return pyshmem.atomic_fetch_or(_one(dest, "dest"), value, pe)


def atomic_or(dest, value, pe):
    """Bitwise or."""
    pyshmem.atomic_or(_one(dest, "dest"), value, pe)


def atomic_fetch_xor(dest, value, pe):
    """Bitwise xor, return the previous value."""
    return pyshmem.atomic_fetch_xor(_one(dest, "dest"), value, pe)


def atomic_xor(dest, value, pe):
    """Bitwise xor."""
    pyshmem.atomic_xor(_one(dest, "dest"), value, pe)


def fence():
    """Order this thread's operations to each PE."""
    pyshmem.fence()


def quiet():
    """Complete this thread's operations."""
    pyshmem.quiet()


def barrier_all():
    """quiet, then barrier over all PEs (call from one thread per PE)."""
    pyshmem.barrier_all()


def sync_all():
    """Barrier over all PEs without quiet (call from one thread per PE)."""
    pyshmem.sync_all()


def _team(team):
    from pyshmem.team import Team

    return Team._from_handle(int(team))


def team_my_pe(team):
    """This PE's number in team, or -1."""
    from pyshmem._lib import lib

    return lib.team_my_pe(int(team))


def team_n_pes(team):
    """Number of PEs in team, or -1."""
    from pyshmem._lib import lib

    return lib.team_n_pes(int(team))


def team_translate_pe(src_team, pe, dest_team):
    """PE pe of src_team numbered in dest_team, or -1."""
    return _team(src_team).translate_pe(pe, _team(dest_team))


def sync(team):
    """Barrier over the team's PEs without quiet (call from one thread per PE)."""
    pyshmem.sync(_team(team))


def barrier(team):
    """quiet, then barrier over the team's PEs (call from one thread per PE)."""
    pyshmem.barrier(_team(team))


def broadcast(team, dest, src, root):
    """dest on every member <- src on team PE root (min of both lengths)."""
    pyshmem.broadcast(_arr(dest, "dest"), _arr(src, "src"), root, team=_team(team))


def collect(team, dest, src):
    """dest <- the members' src back to back in team order (each member's length may differ)."""
    pyshmem.collect(_arr(dest, "dest"), _arr(src, "src"), team=_team(team))


def fcollect(team, dest, src):
    """dest[j*len(src):] <- member j's src."""
    pyshmem.fcollect(_arr(dest, "dest"), _arr(src, "src"), team=_team(team))


def alltoall(team, dest, src):
    """Block j of src (len(src) / team size elements) -> block (my team PE) of member j's dest."""
    s = _arr(src, "src")
    t = _team(team)
    pyshmem.alltoall(_arr(dest, "dest"), s, s.size // t.n_pes(), team=t)


def _reduction(op):
    def f(team, dest, src):
        pyshmem.reduce(_arr(dest, "dest"), _arr(src, "src"), op, team=_team(team))

    f.__name__ = f"{op}_reduce"
    f.__doc__ = f"dest[i] = {op} over the members of src[i] (min of both lengths)."
    return f


globals().update({f"{r}_reduce": _reduction(r) for r, _kind in REDUCE_OPS})


def _marks_waiting(fn):
    """fn, with the calling kernel thread counted as waiting while it runs (a thread in a
    barrier or collective cannot end another thread's wait of its block before other PEs
    let it go; see _sim_blocks)."""

    @functools.wraps(fn)
    def marked(*args):
        with _sim_blocks.waiting(_sim_blocks.kernel_thread()):
            return fn(*args)

    return marked


for _name in ("barrier_all", "sync_all", "sync", "barrier", "broadcast", "collect", "fcollect", "alltoall",
              *(f"{r}_reduce" for r, _kind in REDUCE_OPS)):
    globals()[_name] = _marks_waiting(globals()[_name])
del _name

for _op in OPS:
    if _op.coop:
        globals()[_op.name + "_warp"] = _cooperative(globals()[_op.name], "warp")
        globals()[_op.name + "_block"] = _cooperative(globals()[_op.name], "block")
del _op
