"""Collectives on a CUDA stream: the host API's collectives on symmetric GPU arrays.

``pyshmem.sum_reduce(y, y, stream=s)`` (and every other collective: sync, barrier,
broadcast, collect, fcollect, alltoall, alltoalls, reduce) on ``pyshmem.cuda`` arrays launches a one-block kernel of
``pyshmem/kernels/coll.cu`` (built with NVRTC on first use, cached per process) that
runs the device API's block-cooperative collective. With a stream the call returns at
once and the collective runs in stream order (so it can be captured in a CUDA graph);
with ``stream=None`` it runs on the default stream and the call waits for it.

The compiled binding hands over every call that has GPU arrays or a ``stream=``; the
arguments are checked here, except what only the kernel can know: collect's total over
the members (the kernel traps with a message when target cannot hold it).
"""

import threading
from pathlib import Path

import numpy as np

from pyshmem._lib import lib
from pyshmem.collective import REDUCE_KINDS, reduce_defined
from pyshmem.errors import InvalidArgumentError, ShmemOSError, ShmemTypeError
from pyshmem.runtime import where

__all__ = ["collective"]

_SOURCE = Path(__file__).resolve().parent / "kernels" / "coll.cu"
_lock = threading.Lock()
_modules = {}  # reduction (op, type) or None (the other kernels) -> loaded Module
_load_error = None  # the driver refused a module once: it will again (NVRTC is slow)

# NumPy dtype -> (kernel name suffix, C++ element type) of the reductions.
_REDUCE_TYPES = {np.dtype(k): (k, c) for k, c in (
    ("int8", "signed char"), ("int16", "short"), ("int32", "int"), ("int64", "long long"),
    ("uint8", "unsigned char"), ("uint16", "unsigned short"), ("uint32", "unsigned int"),
    ("uint64", "unsigned long long"), ("float32", "float"), ("float64", "double"),
    ("complex64", "cuda::std::complex<float>"), ("complex128", "cuda::std::complex<double>"))}


def source(reduction=None):
    """coll.cu, with the one reduction kernel `reduction` = (op, dtype) instantiated."""
    text = _SOURCE.read_text()
    if reduction is not None:
        op, dtype = reduction
        name, ctype = _REDUCE_TYPES[np.dtype(dtype)]
        text += f"PYSHMEM_COLL_REDUCE({op}_reduce, {name}, {ctype})\n"
    return text


def _kernel(call, name, reduction=None):
    global _load_error
    with _lock:
        if _load_error is None and reduction not in _modules:
            from pyshmem.cuda import Module

            try:
                _modules[reduction] = Module(source(reduction), name="pyshmem_coll", target="gpu")
            except ShmemOSError as exc:
                _load_error = str(exc)
        if _load_error is not None:
            raise ShmemOSError(f"{where(call)}: the kernel that runs the collective on the stream "
                               f"(pyshmem/kernels/coll.cu) cannot be loaded: {_load_error}")
        return _modules[reduction].get_kernel(name)


def _gpu(call, role, x):
    from pyshmem._gpu_arrays import GpuArray

    if not isinstance(x, GpuArray):
        raise ShmemTypeError(f"{where(call)}: with stream= or GPU arrays, {role} must be a symmetric "
                             f"GPU array (pyshmem.cuda.empty/zeros), not {type(x).__name__}")
    return x


def _team_handle(call, team):
    if team is None:
        return lib.TEAM_WORLD
    handle = getattr(team, "_handle", None)
    if handle is None:
        raise ShmemTypeError(f"{where(call)}: team must be a pyshmem.Team or None, not {type(team).__name__}")
    if lib.team_my_pe(handle) < 0:
        lib.team_check(handle, call)  # raises for invalid/destroyed teams
        raise InvalidArgumentError(f"{where(call)}: this PE is not a member of the team")
    return handle


def collective(call, kind, target, source, extra, size, team, stream):
    """Runs collective `kind` on GPU arrays as a kernel on `stream` (see the module doc).

    Args:
        call: the public name ("pyshmem.broadcast" ...); kind: "sync", "barrier",
            "broadcast", "fcollect", "collect", "alltoall", "alltoalls" or "reduce".
        target, source: symmetric GPU arrays (None for sync/barrier).
        extra: broadcast's root, reduce's op, alltoalls' (tst, sst).
        size: elements (None: shmem4py's default for the call).
        team: a pyshmem.Team or None; stream: None, a CUstream handle or a stream object.

    Raises:
        ShmemTypeError: host arrays with stream=, mismatched or unsupported dtypes.
        InvalidArgumentError: sizes that do not fit, a bad root or op.
        ShmemOSError: the kernel cannot be loaded (no usable GPU).
    """
    from pyshmem._gpu_arrays import _stream_handle
    from pyshmem.cuda import launch

    handle = _team_handle(call, team)
    npes = lib.team_n_pes(handle)
    sh = None if stream is None else _stream_handle(stream, call)
    if kind in ("sync", "barrier"):
        launch(_kernel(call, "pyshmem_coll_sync"), 1, 256, np.int32(handle), np.int32(kind == "barrier"), stream=sh)
        return None
    t, s = _gpu(call, "target", target), _gpu(call, "source", source)
    if t.dtype != s.dtype:
        raise ShmemTypeError(f"{where(call)}: target dtype {t.dtype} and source dtype {s.dtype} differ")
    item = t.dtype.itemsize
    if kind == "broadcast":
        n = min(t.size, s.size) if size is None else int(size)
        if n < 0 or n > t.size or n > s.size:
            raise InvalidArgumentError(f"{where(call)}: size={n} exceeds target ({t.size}) or source ({s.size}) elements")
        root = int(extra)
        if not 0 <= root < npes:
            raise InvalidArgumentError(f"{where(call)}: root {root} is not a PE of the team (0..{npes - 1}); "
                                           "pass the root's team-relative PE number")
        launch(_kernel(call, "pyshmem_coll_broadcast"), 1, 256, np.int32(handle), t, s, np.uint64(n * item),
               np.int32(root), stream=sh)
    elif kind == "collect":
        # The members' counts meet only inside the kernel: it traps when they overflow target.
        n = s.size if size is None else int(size)
        if not 0 <= n <= s.size:
            raise InvalidArgumentError(f"{where(call)}: size={n} exceeds source ({s.size} elements)")
        launch(_kernel(call, "pyshmem_coll_collect"), 1, 256, np.int32(handle), t, np.uint64(t.size * item), s,
               np.uint64(n * item), stream=sh)
    elif kind == "alltoalls":
        tst, sst = (1 if v is None else int(v) for v in (extra or (None, None)))
        if tst < 1 or sst < 1:
            raise InvalidArgumentError(f"{where(call)}: strides must be >= 1 (tst={tst}, sst={sst})")
        tcap, scap = -(-t.size // tst), -(-s.size // sst)  # elements reachable at each stride
        if size is None:
            if min(tcap, scap) % npes:
                raise InvalidArgumentError(f"{where(call)}: cannot infer size: {min(tcap, scap)} elements do not split "
                                           f"evenly over {npes} PEs; pass size=")
            n = min(tcap, scap) // npes
        else:
            n = int(size)
        if n < 0 or n * npes > min(tcap, scap):
            raise InvalidArgumentError(f"{where(call)}: size={n} per PE x {npes} PEs exceeds target ({tcap}) or source "
                                       f"({scap}) elements")
        launch(_kernel(call, "pyshmem_coll_alltoalls"), 1, 256, np.int32(handle), t, s, np.int64(tst), np.int64(sst),
               np.uint64(n), np.uint64(item), stream=sh)
    elif kind in ("fcollect", "alltoall"):
        if kind == "fcollect":
            n = s.size if size is None else int(size)
            ok = 0 <= n <= s.size and n * npes <= t.size
        else:
            if size is None:
                if min(t.size, s.size) % npes:
                    raise InvalidArgumentError(f"{where(call)}: cannot infer size: {min(t.size, s.size)} elements do not "
                                               f"split evenly over {npes} PEs; pass size=")
                n = min(t.size, s.size) // npes
            else:
                n = int(size)
            ok = 0 <= n and n * npes <= min(t.size, s.size)
        if not ok:
            raise InvalidArgumentError(f"{where(call)}: size={n} per PE x {npes} PEs does not fit target ({t.size}) / "
                                       f"source ({s.size}) elements")
        launch(_kernel(call, f"pyshmem_coll_{kind}"), 1, 256, np.int32(handle), t, s, np.uint64(n * item), stream=sh)
    elif kind == "reduce":
        op = str(extra if extra is not None else "sum").lower()
        if t.dtype not in _REDUCE_TYPES:
            raise ShmemTypeError(f"{where(call)}: reductions take int8..uint64, float32/64 and complex64/128, not {t.dtype}")
        if op not in REDUCE_KINDS:
            raise InvalidArgumentError(f"{where(call)}: unknown reduction op {op!r}; use OP.AND/OR/XOR/MAX/MIN/SUM/PROD")
        if not reduce_defined(op, t.dtype):
            raise ShmemTypeError(f"{where(call)}: the '{op}' reduction is not defined for {t.dtype}")
        n = min(t.size, s.size) if size is None else int(size)
        if n < 0 or n > t.size or n > s.size:
            raise InvalidArgumentError(f"{where(call)}: size={n} exceeds target ({t.size}) or source ({s.size}) elements")
        name = _REDUCE_TYPES[t.dtype][0]
        launch(_kernel(call, f"pyshmem_coll_{op}_reduce_{name}", (op, t.dtype)), 1, 256, np.int32(handle), t, s,
               np.uint64(n), stream=sh)
    else:  # pragma: no cover - the binding only passes the kinds above
        raise AssertionError(kind)
    return None


lib._set_gpu_coll(collective)
