"""Symmetric memory: allocation (collective) and symmetric NumPy arrays.

Every allocation is collective: all PEs call it with the same size, in the same order,
and get the object at the same offset of their heap, so "``x`` on PE 3" is meaningful.
Memory is released only by :func:`free` / :func:`del_array` (also collective) or at
finalize, never by garbage collection, whose timing differs between PEs.
"""

import ctypes
import math

import numpy as np

from pyshmem._lib import lib
from pyshmem.errors import InvalidArgumentError, ShmemTypeError, ValueOverflowError
from pyshmem.runtime import as_pe, ensure_started, where

_live = {}  # address -> bytes requested, for every live allocation of this process


def _address(a):
    return a.__array_interface__["data"][0] if isinstance(a, np.ndarray) else ctypes.addressof(a)


def _owner(obj):
    """The ctypes array behind a memoryview/ndarray made by this module, or None."""
    seen = 0
    while obj is not None and seen < 64:
        if isinstance(obj, ctypes.Array):
            return obj
        obj = obj.obj if isinstance(obj, memoryview) else getattr(obj, "base", None)
        seen += 1
    return None


def _view(addr, nbytes):
    return memoryview((ctypes.c_ubyte * nbytes).from_address(addr)).cast("B")


def alloc(count, size=1, align=None, hints=None, clear=True):
    """Allocate ``count * size`` bytes of symmetric memory (collective).

    Args:
        count: number of elements.
        size: bytes per element.
        align: optional power-of-two alignment in bytes.
        hints: allocation hints (``MALLOC_*``); accepted and not needed by this heap.
        clear: zero the memory (the default).

    Returns:
        memoryview: a writable byte view of the new memory; pass it to
        :func:`fromalloc` for an array, and to :func:`free` to release it.

    Raises:
        HeapExhaustedError: not enough symmetric heap (raise ``PYSHMEM_SYMMETRIC_SIZE``).
        InvalidArgumentError: negative sizes or a bad alignment.
    """
    count, size = int(count), int(size)
    if count < 0 or size < 0:
        raise InvalidArgumentError(f"{where('alloc')}: count ({count}) and size ({size}) must be >= 0")
    if align is not None and (int(align) < 0):
        raise InvalidArgumentError(f"{where('alloc')}: align must be a positive power of two, got {align}")
    ensure_started("alloc")
    nbytes = count * size
    addr = lib.malloc(nbytes, int(align or 0), bool(clear), "pyshmem.alloc")
    _live[addr] = nbytes
    return _view(addr, nbytes)


def fromalloc(mem, shape=None, dtype=None, order="C"):
    """View memory from :func:`alloc` as a NumPy array, without copying.

    Args:
        mem: a memoryview returned by :func:`alloc`.
        shape: array shape; default: as many elements as fit, 1-D.
        dtype: element type (default float64, as in shmem4py).
        order: ``'C'`` or ``'F'``.

    Returns:
        numpy.ndarray: a symmetric array over ``mem``.
    """
    dtype = np.dtype(dtype)
    if dtype.hasobject:
        raise ShmemTypeError(f"{where('fromalloc')}: object arrays cannot live in symmetric memory; "
                             "use a numeric or fixed-size record dtype")
    nbytes = memoryview(mem).nbytes
    if shape is None:
        shape = (nbytes // dtype.itemsize,)
    shape = (int(shape),) if np.ndim(shape) == 0 else tuple(int(s) for s in shape)
    need = math.prod(shape) * dtype.itemsize
    if need > nbytes:
        raise InvalidArgumentError(
            f"{where('fromalloc')}: shape {shape} of {dtype} needs {need} bytes but the allocation has {nbytes}; "
            "pass a shape and dtype that fit"
        )
    return np.ndarray(shape, dtype=dtype, buffer=mem, order=order)


def free(mem):
    """Release symmetric memory (collective: every PE frees the same object).

    Args:
        mem: the memoryview from :func:`alloc` or an array from :func:`new_array`,
            :func:`array`, :func:`empty` ... (the array itself, not a slice of it).

    Raises:
        InvalidArgumentError: ``mem`` is not symmetric memory, a view into an
            allocation, or was freed already.
    """
    owner = _owner(mem)
    if owner is None:
        addr = _address(mem) if isinstance(mem, np.ndarray) else None
        if addr is None or not lib.is_symmetric(addr, 0):
            raise InvalidArgumentError(
                f"{where('free')}: the object is not symmetric memory; free only what pyshmem.alloc/array/"
                "empty/zeros/ones/full/new_array returned"
            )
    else:
        addr = ctypes.addressof(owner)
        if isinstance(mem, np.ndarray):
            # An array made from the allocation itself (new_array, fromalloc(mem, any
            # shape)) has the allocation's buffer as its base (NumPy collapses the
            # memoryview to its exporter); a slice or view has another array as base.
            whole = mem.base is owner and _address(mem) == addr
        else:
            whole = memoryview(mem).nbytes == _live.get(addr)
        if addr in _live and not whole:
            raise InvalidArgumentError(
                f"{where('free')}: the array is a view into a symmetric allocation of {_live[addr]} bytes; "
                "free the array the allocator returned"
            )
    if addr not in _live:
        raise InvalidArgumentError(
            f"{where('free')}: the object is not a live symmetric allocation (double free?)"
        )
    lib.free(addr, "pyshmem.free")
    del _live[addr]


def new_array(shape, dtype=float, order="C", *, align=None, hints=None, clear=True):
    """Allocate a symmetric array (collective); zeroed unless ``clear=False``.

    Args:
        shape: int or tuple of ints.
        dtype: NumPy dtype (ints, uints, floats, complex, ...; not object).
        order: ``'C'`` or ``'F'``.
        align, hints, clear: as in :func:`alloc`.

    Returns:
        numpy.ndarray: the symmetric array.
    """
    dtype = np.dtype(dtype)
    if dtype.hasobject:
        raise ShmemTypeError(f"{where('new_array')}: object arrays cannot live in symmetric memory; use a numeric or "
                             "fixed-size record dtype")
    shape = (int(shape),) if np.ndim(shape) == 0 else tuple(int(s) for s in shape)
    if any(s < 0 for s in shape):
        raise InvalidArgumentError(f"{where('new_array')}: negative dimensions in shape {shape}")
    mem = alloc(math.prod(shape), dtype.itemsize, align, hints, clear)
    return fromalloc(mem, shape, dtype, order)


def del_array(a):
    """Release an array made by :func:`new_array` and friends (collective).

    Args:
        a: the symmetric array.
    """
    if not isinstance(a, np.ndarray):
        raise ShmemTypeError(f"{where('del_array')}: expected the NumPy array new_array returned, "
                             f"got {type(a).__name__}")
    free(a)


def empty(shape, dtype=float, order="C", *, align=None, hints=None):
    """Uninitialised symmetric array (collective). Args as in :func:`new_array`."""
    return new_array(shape, dtype, order, align=align, hints=hints, clear=False)


def zeros(shape, dtype=float, order="C", *, align=None, hints=None):
    """Zero-filled symmetric array (collective). Args as in :func:`new_array`."""
    return new_array(shape, dtype, order, align=align, hints=hints, clear=True)


def ones(shape, dtype=float, order="C", *, align=None, hints=None):
    """Symmetric array of ones (collective; ends with sync_all)."""
    a = new_array(shape, dtype, order, align=align, hints=hints, clear=False)
    np.copyto(a, 1, casting="unsafe")
    lib.sync_all()
    return a


def _fill_source(fill_value, dtype, shape, call):
    """``fill_value`` converted to ``dtype`` as shmem4py's ``np.copyto(..., casting="unsafe")``
    does, before anything is allocated: a value that does not fit wraps as in C (``-1``
    as ``uint8`` is 255; NumPy >= 2 refuses a bare Python int there, a 0-d array casts).

    Raises:
        ValueOverflowError: an integer too large for any NumPy integer type.
        ShmemTypeError: a value NumPy cannot convert to ``dtype``.
        InvalidArgumentError: an array ``fill_value`` that does not broadcast to ``shape``.
    """
    value = np.asarray(fill_value)
    try:
        fits = np.broadcast_shapes(value.shape, shape) == shape
    except ValueError:
        fits = False
    if not fits:
        raise InvalidArgumentError(f"{where(call)}: fill_value of shape {value.shape} does not broadcast to the "
                                   f"array's shape {shape}; pass a scalar or an array of a broadcastable "
                                   "shape") from None
    src = np.empty(value.shape, dtype)
    try:
        np.copyto(src, value, casting="unsafe")
    except OverflowError:
        raise ValueOverflowError(f"{where(call)}: fill_value {fill_value!r} is too large for {dtype} (or any NumPy "
                                 "integer); pass a value that fits 64 bits") from None
    except (TypeError, ValueError) as exc:
        raise ShmemTypeError(f"{where(call)}: fill_value {fill_value!r} cannot be converted to {dtype} ({exc}); "
                             "pass a number or an array of numbers") from None
    return src


def full(shape, fill_value, dtype=None, order="C", *, align=None, hints=None):
    """Symmetric array filled with ``fill_value`` (collective; ends with sync_all).

    The value is cast as shmem4py casts it (``casting="unsafe"``): a value outside the
    dtype's range wraps as in C, so ``full(n, -1, dtype=np.uint8)`` holds 255.

    Args:
        shape: int or tuple.
        fill_value: the value (or an array that broadcasts to ``shape``); its type gives
            the dtype when ``dtype`` is None.
        dtype, order, align, hints: as in :func:`new_array`.

    Returns:
        numpy.ndarray: the symmetric array.

    Raises:
        ValueOverflowError: an integer too large for any NumPy integer type.
        ShmemTypeError: a fill value that cannot be converted to ``dtype``.
        InvalidArgumentError: an array fill value that does not broadcast to ``shape``.
    """
    if dtype is None:
        dtype = np.array(fill_value).dtype
    dtype = np.dtype(dtype)
    dims = (int(shape),) if np.ndim(shape) == 0 else tuple(int(s) for s in shape)
    # Convert first, so a bad value fails before the collective allocation (new_array
    # itself reports object dtypes and negative dimensions).
    valid = not dtype.hasobject and all(d >= 0 for d in dims)
    src = _fill_source(fill_value, dtype, dims, "full") if valid else None
    a = new_array(shape, dtype, order, align=align, hints=hints, clear=False)
    np.copyto(a, src)
    lib.sync_all()
    return a


def array(obj, dtype=None, *, order="K", align=None, hints=None):
    """Symmetric copy of ``obj`` (collective; ends with sync_all).

    Args:
        obj: anything ``numpy.asarray`` accepts.
        dtype: element type (default: inferred).
        order: ``'K'``, ``'A'``, ``'C'`` or ``'F'`` memory layout of the result.
        align, hints: as in :func:`alloc`.
    """
    tmp = np.asarray(obj, dtype=dtype)
    layout = "F" if order == "F" or (order in "KA" and tmp.flags.f_contiguous and not tmp.flags.c_contiguous) else "C"
    a = new_array(tmp.shape, tmp.dtype, layout, align=align, hints=hints, clear=False)
    np.copyto(a, tmp, casting="no")
    lib.sync_all()
    return a


def ptr(target, pe):
    """Direct load/store view of ``target`` as it lives on PE ``pe``.

    Args:
        target: a symmetric array (or a view into one).
        pe: the PE whose copy to view.

    Returns:
        numpy.ndarray or None: an array of the same dtype, shape and strides over the
        peer's memory when it is reachable by load/store (same node), else None.
        Reads/writes through it are plain loads/stores: order them with
        fence/quiet/barrier like any put.
    """
    if not isinstance(target, np.ndarray):
        raise ShmemTypeError(f"{where('ptr')}: target must be a NumPy array, got {type(target).__name__}")
    pe = as_pe("ptr", pe)
    ensure_started("ptr")
    if not 0 <= pe < lib.n_pes():
        raise InvalidArgumentError(
            f"{where('ptr')}: PE {pe} is out of range; valid PEs are 0..{lib.n_pes() - 1} (n_pes() == {lib.n_pes()})"
        )
    addr = _address(target)
    peer = lib.ptr(addr, pe, "pyshmem.ptr")
    if peer is None:
        return None
    item = target.dtype.itemsize
    lo = sum(min(0, (n - 1) * s) for n, s in zip(target.shape, target.strides)) if target.size else 0
    hi = sum(max(0, (n - 1) * s) for n, s in zip(target.shape, target.strides)) + item if target.size else 0
    buf = _view(peer + lo, hi - lo) if hi > lo else _view(peer, 0)
    out = np.ndarray(target.shape, dtype=target.dtype, buffer=buf, offset=-lo, strides=target.strides)
    if not target.flags.writeable:
        out.flags.writeable = False
    return out


def addr_accessible(addr, pe):
    """Returns True when ``addr`` (a NumPy array) is symmetric and PE ``pe`` is reachable.

    Args:
        addr: a NumPy array.
        pe: a PE number.
    """
    if not isinstance(addr, np.ndarray):
        raise ShmemTypeError(f"{where('addr_accessible')}: addr must be a NumPy array, got {type(addr).__name__}")
    pe = as_pe("addr_accessible", pe)
    ensure_started("addr_accessible")
    return 0 <= pe < lib.n_pes() and bool(lib.addr_accessible(_address(addr), pe))


__all__ = [
    "alloc", "free", "fromalloc", "new_array", "del_array",
    "array", "empty", "zeros", "ones", "full", "ptr", "addr_accessible",
]
