"""Symmetric memory: allocation (collective) and symmetric NumPy arrays.

Every allocation is collective: all PEs call it with the same size, in the same order,
and get the object at the same offset of their heap, so "``x`` on PE 3" is meaningful.
Memory is released only by :func:`free` / :func:`del_array` (also collective) or at
finalize, never by garbage collection, whose timing differs between PEs.
"""

import ctypes
import math

import numpy as np

from pyshmem._foreign import host_view, like
from pyshmem._lib import lib
from pyshmem.errors import HeapExhaustedError, InvalidArgumentError, ShmemError, ShmemTypeError, ValueOverflowError
from pyshmem.runtime import as_bool, as_int, as_pe, collective_failed, ensure_started, where

# address -> the SymmetricBlock exporting every live allocation of this process. free()
# releases the block, so arrays over it are refused even once the memory is reused.
_live = {}


def _address(a):
    return a.__array_interface__["data"][0]


def _owner(obj):
    """The SymmetricBlock behind a memoryview/ndarray made by this module, or None."""
    seen = 0
    while obj is not None and seen < 64:
        if isinstance(obj, lib.SymmetricBlock):
            return obj
        obj = obj.obj if isinstance(obj, memoryview) else getattr(obj, "base", None)
        seen += 1
    return None


def _reject_alloc(call, exc):
    """Raises ``exc`` for a collective allocation this PE rejected before asking the
    heap, after meeting the other PEs in it so that they raise too."""
    ensure_started(call)
    collective_failed(exc, lambda: lib.malloc_reject(f"pyshmem.{call}"))


def _reject_free(call, exc):
    """Raises ``exc`` for a collective free this PE rejected, after meeting the others."""
    ensure_started(call)
    collective_failed(exc, lambda: lib.free(0, f"pyshmem.{call}"))


def _dtype(call, dtype):
    """np.dtype(dtype) for symmetric memory (no object fields), or a ShmemTypeError."""
    try:
        dt = np.dtype(dtype)
    except (TypeError, ValueError) as exc:
        raise ShmemTypeError(f"{where(call)}: {dtype!r} is not a NumPy dtype ({exc}); pass e.g. np.float64") from None
    if dt.hasobject:
        raise ShmemTypeError(f"{where(call)}: object arrays cannot live in symmetric memory; use a numeric or "
                             "fixed-size record dtype")
    return dt


def _shape(call, shape):
    """A tuple of non-negative ints from an int or a sequence of ints."""
    if np.ndim(shape) == 0:
        shape = (shape,)
    try:
        dims = tuple(shape)
    except TypeError:
        raise ShmemTypeError(f"{where(call)}: shape must be an int or a tuple of ints, not {type(shape).__name__}") from None
    if len(dims) > 32:  # what every NumPy routine supports
        raise InvalidArgumentError(f"{where(call)}: shape has {len(dims)} dimensions; at most 32 are supported")
    dims = tuple(as_int(call, "shape", d, 0, 2**63 - 1) for d in dims)
    if math.prod(max(d, 1) for d in dims) >= 2**62:  # NumPy's own limit, even with a zero dimension
        raise InvalidArgumentError(f"{where(call)}: shape {dims} is too large for an array")
    return dims


def _order(call, order, allowed="CF"):
    if not isinstance(order, str) or order not in allowed or len(order) != 1:
        raise InvalidArgumentError(f"{where(call)}: order must be one of {', '.join(repr(c) for c in allowed)}, "
                                   f"not {order!r}")
    return order


def _view(addr, nbytes):
    """A writable byte view of memory pyshmem does not own (a peer's copy, for ptr)."""
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
    return _alloc("alloc", count, size, align, clear)


def _alloc(call, count, size, align, clear):
    try:
        count = as_int(call, "count", count, 0, 2**63 - 1)
        size = as_int(call, "size", size, 0, 2**63 - 1)
        align = 0 if align is None else as_int(call, "align", align, 0, 2**63 - 1)
        nbytes = count * size
        if nbytes >= 2**63:
            raise HeapExhaustedError(f"{where(call)}: {count} x {size} bytes is larger than any symmetric heap; "
                                     "ask for less (PYSHMEM_SYMMETRIC_SIZE sets the heap's size)")
        clear = as_bool(call, "clear", clear)
    except ShmemError as exc:
        _reject_alloc(call, exc)
    ensure_started(call)
    addr = lib.malloc(nbytes, align, clear, f"pyshmem.{call}")
    block = lib.SymmetricBlock(addr, nbytes)
    _live[addr] = block
    return memoryview(block)


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
    dtype = _dtype("fromalloc", dtype)
    try:
        nbytes = memoryview(mem).nbytes
    except TypeError:
        raise ShmemTypeError(f"{where('fromalloc')}: mem must be the memoryview pyshmem.alloc returned, not "
                             f"{type(mem).__name__}") from None
    if shape is None:
        shape = (nbytes // max(dtype.itemsize, 1),)
    shape = _shape("fromalloc", shape)
    order = _order("fromalloc", order)
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
    try:
        addr = _free_address(mem)
    except ShmemError as exc:
        _reject_free("free", exc)
    lib.free(addr, "pyshmem.free")
    _live.pop(addr).release()


def _free_address(mem):
    """The address of the live allocation ``mem`` is, or an InvalidArgumentError."""
    view = host_view("free", "mem", mem)
    if view is not mem:  # a torch tensor or another foreign array: by its address and size
        addr, owner = _address(view), _live.get(_address(view))
        if owner is None:
            raise InvalidArgumentError(f"{where('free')}: the {type(mem).__name__} is not a live symmetric allocation "
                                       "(not symmetric memory, a view into one, or freed already)")
        if view.nbytes != owner.nbytes:
            raise InvalidArgumentError(
                f"{where('free')}: the {type(mem).__name__} is a view of {view.nbytes} bytes into a symmetric "
                f"allocation of {owner.nbytes} bytes; free the whole allocation")
        return addr
    owner = _owner(mem)
    if owner is None:
        addr = _address(mem) if isinstance(mem, np.ndarray) else None
        if addr is None or not lib.is_symmetric(addr, 0):
            raise InvalidArgumentError(
                f"{where('free')}: the object is not symmetric memory; free only what pyshmem.alloc/array/"
                "empty/zeros/ones/full/new_array returned"
            )
    else:
        addr = owner.address
        if _live.get(addr) is not owner:  # freed, maybe with the memory reused since
            raise InvalidArgumentError(f"{where('free')}: the object was freed already (double free)")
        if isinstance(mem, np.ndarray):
            # An array made from the allocation itself (new_array, fromalloc(mem, any
            # shape)) has the allocation's buffer as its base (NumPy collapses the
            # memoryview to its exporter); a slice or view has another array as base.
            whole = mem.base is owner and _address(mem) == addr
        else:
            whole = memoryview(mem).nbytes == owner.nbytes
        if not whole:
            raise InvalidArgumentError(
                f"{where('free')}: the array is a view into a symmetric allocation of {owner.nbytes} bytes; "
                "free the array the allocator returned"
            )
    if addr not in _live:
        raise InvalidArgumentError(
            f"{where('free')}: the object is not a live symmetric allocation (double free?)"
        )
    return addr


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
    return _new_array("new_array", shape, dtype, order, align, clear)


def _new_array(call, shape, dtype, order, align, clear):
    try:
        dtype = _dtype(call, dtype)
        shape = _shape(call, shape)
        order = _order(call, order)
    except ShmemError as exc:
        _reject_alloc(call, exc)
    mem = _alloc(call, math.prod(shape), dtype.itemsize, align, clear)
    return np.ndarray(shape, dtype=dtype, buffer=mem, order=order)


def del_array(a):
    """Release an array made by :func:`new_array` and friends (collective).

    Args:
        a: the symmetric array.
    """
    if not isinstance(a, np.ndarray):
        _reject_free("del_array", ShmemTypeError(f"{where('del_array')}: expected the NumPy array new_array returned, "
                                                 f"got {type(a).__name__}"))
    free(a)


def empty(shape, dtype=float, order="C", *, align=None, hints=None):
    """Uninitialised symmetric array (collective). Args as in :func:`new_array`."""
    return _new_array("empty", shape, dtype, order, align, False)


def zeros(shape, dtype=float, order="C", *, align=None, hints=None):
    """Zero-filled symmetric array (collective). Args as in :func:`new_array`."""
    return _new_array("zeros", shape, dtype, order, align, True)


def ones(shape, dtype=float, order="C", *, align=None, hints=None):
    """Symmetric array of ones (collective; ends with sync_all)."""
    a = _new_array("ones", shape, dtype, order, align, False)
    np.copyto(a, 1, casting="unsafe")
    lib.sync_all()
    return a


def _asarray(call, role, obj, dtype=None):
    """np.asarray(obj, dtype), or a ShmemTypeError naming ``role`` (ragged lists ...)."""
    try:
        return np.asarray(obj, dtype=dtype)
    except (TypeError, ValueError, OverflowError) as exc:
        raise ShmemTypeError(f"{where(call)}: cannot make an array of {role} {type(obj).__name__} ({exc})") from None


def _fill_source(fill_value, dtype, shape, call):
    """``fill_value`` converted to ``dtype`` as shmem4py's ``np.copyto(..., casting="unsafe")``
    does, before anything is allocated: a value that does not fit wraps as in C (``-1``
    as ``uint8`` is 255; NumPy >= 2 refuses a bare Python int there, a 0-d array casts).

    Raises:
        ValueOverflowError: an integer too large for any NumPy integer type.
        ShmemTypeError: a value NumPy cannot convert to ``dtype``.
        InvalidArgumentError: an array ``fill_value`` that does not broadcast to ``shape``.
    """
    value = _asarray(call, "fill_value", fill_value)
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
    # Convert first, so a bad value fails (on every PE) before the collective allocation.
    try:
        if dtype is None:
            dtype = _asarray("full", "fill_value", fill_value).dtype
        dtype = _dtype("full", dtype)
        dims = _shape("full", shape)
        order = _order("full", order)
        src = _fill_source(fill_value, dtype, dims, "full")
    except ShmemError as exc:
        _reject_alloc("full", exc)
    a = _new_array("full", dims, dtype, order, align, False)
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
    try:
        order = _order("array", order, "KACF")
        if dtype is not None:
            dtype = _dtype("array", dtype)
        tmp = _asarray("array", "obj", obj, dtype)
        _dtype("array", tmp.dtype)
    except ShmemError as exc:
        _reject_alloc("array", exc)
    layout = "F" if order == "F" or (order in "KA" and tmp.flags.f_contiguous and not tmp.flags.c_contiguous) else "C"
    a = _new_array("array", tmp.shape, tmp.dtype, layout, align, False)
    np.copyto(a, tmp, casting="no")
    lib.sync_all()
    return a


def ptr(target, pe):
    """Direct load/store view of ``target`` as it lives on PE ``pe``.

    Args:
        target: a symmetric array (or a view into one): a NumPy array, a torch
            tensor or another host array (DLPack, __array_interface__).
        pe: the PE whose copy to view.

    Returns:
        numpy.ndarray or None: an array of the same dtype, shape and strides over the
        peer's memory when it is reachable by load/store (same node), else None; a
        torch tensor for a torch tensor.
        Reads/writes through it are plain loads/stores: order them with
        fence/quiet/barrier like any put.
    """
    original, target = target, host_view("ptr", "target", target)
    if not isinstance(target, np.ndarray):
        raise ShmemTypeError(f"{where('ptr')}: target must be a NumPy array or a torch tensor, got "
                             f"{type(target).__name__}")
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
    return like(original, out)


def addr_accessible(addr, pe):
    """Returns True when ``addr`` (an array) is symmetric and PE ``pe`` is reachable.

    Args:
        addr: a NumPy array, a torch tensor or another host array.
        pe: a PE number.

    Returns:
        bool.

    Raises:
        ShmemTypeError: ``addr`` is not an array.
    """
    addr = host_view("addr_accessible", "addr", addr)
    if not isinstance(addr, np.ndarray):
        raise ShmemTypeError(f"{where('addr_accessible')}: addr must be a NumPy array or a torch tensor, got "
                             f"{type(addr).__name__}")
    pe = as_pe("addr_accessible", pe)
    ensure_started("addr_accessible")
    return 0 <= pe < lib.n_pes() and bool(lib.addr_accessible(_address(addr), pe))


__all__ = [
    "alloc", "free", "fromalloc", "new_array", "del_array",
    "array", "empty", "zeros", "ones", "full", "ptr", "addr_accessible",
]
