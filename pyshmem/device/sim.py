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

import inspect
import threading

import numpy as np

import pyshmem
from pyshmem._foreign import host_view, is_tensor
from pyshmem.device import _sim_blocks
from pyshmem.device._table import OPS
from pyshmem.errors import InvalidArgumentError, ShmemTypeError
from pyshmem.runtime import where


def array(x):
    """Wrap a symmetric NumPy array for a simulated kernel launch, without a copy.

    Args:
        x: a symmetric array (``pyshmem.zeros(...)`` ...), a symmetric torch tensor
            (``pyshmem.torch.zeros(...)``), or a view of one.

    Returns:
        An array object the simulator passes to the kernel as is, so the kernel's
        writes land in the symmetric heap.

    Raises:
        ShmemTypeError: ``x`` is not an array.
    """
    from numba.cuda.simulator.cudadrv.devicearray import FakeCUDAArray

    x = host_view("device.array", "x", x)
    if not isinstance(x, np.ndarray):
        raise ShmemTypeError(f"{where('device.array')}: expected a NumPy array, got {type(x).__name__}")
    return FakeCUDAArray(x)


def _arr(x, role):
    """The NumPy array behind a kernel argument (simulator wrappers are unwrapped)."""
    if isinstance(x, np.ndarray):
        return x
    if is_tensor(x):  # a torch tensor passed straight to the kernel: the simulator hands it over as is
        return host_view("device", role, x)
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


# ---- the operations: one factory per lowering kind of pyshmem/device/_table.py ----
# A factory takes the op's row and returns the body, a function of the row's arguments in
# the row's order; _from_row gives it the row's name, parameters and doc. Each body calls
# the host-API verb of the same name (pyshmem.<name>) on the kernel's arrays.
def _host(op):
    return getattr(pyshmem, op.name)


def _sim_call(op):
    """query, noarg, team_sync: the host verb (a team handle made a Team)."""
    host = _host(op)
    if op.args == ("team",):
        return lambda team: host(_team(team))
    return lambda: host()


def _sim_bytes(op):
    host = _host(op)
    return lambda dest, src, pe: host(_arr(dest, "dest"), _arr(src, "src"), pe)


def _sim_value_put(op):
    def p(dest, value, pe):
        d = _one(dest, "dest")
        pyshmem.put(d, np.asarray([value]).astype(d.dtype), pe)

    return p


def _sim_value_get(op):
    def g(src, pe):
        s = _one(src, "src")
        out = np.empty(1, s.dtype)
        pyshmem.get(out, s, pe)
        return out[0]

    return g


def _sim_strided(op):
    host = _host(op)
    return lambda dest, src, dst, sst, nelems, pe: host(_arr(dest, "dest"), _arr(src, "src"), pe, dst, sst, nelems)


def _sim_signal_put(op):
    host = _host(op)
    return lambda dest, src, sig, signal, sig_op, pe: host(_arr(dest, "dest"), _arr(src, "src"), pe,
                                                           _one(sig, "sig"), signal, sig_op)


def _sim_one_word(op):
    """wait, signal, amo: the host verb on the first element of the row's first argument
    (ivar, sig, dest or src). A wait goes through _sim_blocks.wait; signal_op, which the
    host API has as put_signal of no data, is that."""
    role = op.args[0]
    if op.name == "signal_op":
        def signal_op(sig, signal, sig_op, pe):
            s = _one(sig, role)
            pyshmem.put_signal(s[:0], s[:0], pe, s, signal, sig_op)

        return signal_op
    host = _host(op)
    if "wait" in op.name:
        def waits(var, cmp, value):
            v = _one(var, role)
            return _sim_blocks.wait(op.name, v, cmp, value, lambda: host(v, cmp, value))

        return waits
    return lambda var, *rest: host(_one(var, role), *rest)


def _sim_team_query(op):
    from pyshmem._lib import lib

    if op.name == "team_translate_pe":
        return lambda src_team, pe, dest_team: _team(src_team).translate_pe(pe, _team(dest_team))
    query = getattr(lib, op.name)
    return lambda team: query(int(team))


def _sim_broadcast(op):
    host = _host(op)
    return lambda team, dest, src, root: host(_arr(dest, "dest"), _arr(src, "src"), root, team=_team(team))


def _sim_gather(op):
    host = _host(op)
    if op.name == "alltoall":  # a block is len(src) / team size elements (the row's doc)
        def alltoall(team, dest, src):
            s, t = _arr(src, "src"), _team(team)
            host(_arr(dest, "dest"), s, s.size // t.n_pes(), team=t)

        return alltoall
    return lambda team, dest, src: host(_arr(dest, "dest"), _arr(src, "src"), team=_team(team))


def _sim_reduce(op):
    reduction = op.name[: -len("_reduce")]
    return lambda team, dest, src: pyshmem.reduce(_arr(dest, "dest"), _arr(src, "src"), reduction, team=_team(team))


# The NumPy combine of each reduction operator (REDUCE_OPS' names).
_COMBINE = {"sum": np.add, "prod": np.multiply, "max": np.maximum, "min": np.minimum, "and": np.bitwise_and,
            "or": np.bitwise_or, "xor": np.bitwise_xor}


def _sim_reducescatter(op):
    """dest = op over the team's members of their src block (my team PE): the device
    API's algorithm with host calls (a team barrier, a get of each member's block, a
    barrier before src may be reused), in team order as the device API combines."""
    reduction = op.name[: -len("_reducescatter")]
    combine = _COMBINE[reduction]
    call = where("device." + op.name)

    def reducescatter(team, dest, src):
        d, s, t = _arr(dest, "dest"), _arr(src, "src"), _team(team)
        n, size = d.size, t.n_pes()
        if d.dtype != s.dtype:
            raise ShmemTypeError(f"{call}: dest and src must have the same element type ({d.dtype} vs {s.dtype})")
        if s.size < n * size:
            raise InvalidArgumentError(f"{call}: src has {s.size} elements; it needs len(dest) * team size = "
                                       f"{n * size}")
        if np.shares_memory(d, s):
            raise InvalidArgumentError(f"{call}: dest and src overlap; pass distinct arrays")
        block = s.reshape(-1)[t.my_pe() * n:(t.my_pe() + 1) * n]
        t.sync()
        acc, part = np.empty_like(d.reshape(-1)), np.empty_like(d.reshape(-1))
        for j in range(size):
            pyshmem.get(acc if j == 0 else part, block, t.translate_pe(j))
            if j:
                combine(acc, part, out=acc)
        t.sync()
        d.reshape(-1)[:] = acc

    return reducescatter


def _team(team):
    from pyshmem.team import Team

    return Team._from_handle(int(team))


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

_FACTORIES = {
    "query": _sim_call, "noarg": _sim_call, "team_sync": _sim_call, "bytes": _sim_bytes,
    "value_put": _sim_value_put, "value_get": _sim_value_get, "strided": _sim_strided,
    "signal_put": _sim_signal_put, "signal": _sim_one_word, "wait": _sim_one_word, "amo": _sim_one_word,
    "team_query": _sim_team_query, "broadcast": _sim_broadcast, "gather": _sim_gather, "reduce": _sim_reduce,
    "reducescatter": _sim_reducescatter,
}


def _from_row(op):
    """The simulator's function of one table row: the factory's body under the row's name,
    parameters and doc; an int32 result as an int (test: 1 or 0); and for a collective (a
    cooperative op with no target PE) the calling kernel thread counted as waiting while it
    runs: a thread in a barrier or collective cannot end another thread's wait of its block
    before other PEs let it go (_sim_blocks)."""
    if op.lowering == "wait_set":
        return _wait_set(op)
    body = _FACTORIES[op.lowering](op)
    sig = inspect.Signature([inspect.Parameter(a, inspect.Parameter.POSITIONAL_OR_KEYWORD) for a in op.args])
    to_int = op.result == "int32"
    collective = op.coop and "pe" not in op.args

    def fn(*args, **kwargs):
        if kwargs:
            args = sig.bind(*args, **kwargs).args
        if collective:
            with _sim_blocks.waiting(_sim_blocks.kernel_thread()):
                return body(*args)
        result = body(*args)
        return int(result) if to_int else result

    fn.__name__ = fn.__qualname__ = op.name
    fn.__signature__ = sig
    fn.__doc__ = op.doc
    return fn


for _op in OPS:
    globals()[_op.name] = _from_row(_op)
    if _op.coop:
        globals()[_op.name + "_warp"] = _cooperative(globals()[_op.name], "warp")
        globals()[_op.name + "_block"] = _cooperative(globals()[_op.name], "block")
del _op
