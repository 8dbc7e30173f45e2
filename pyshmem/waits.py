"""Point-to-point synchronisation and ordering: waits, tests, fence, quiet, barriers.

Argument order follows shmem4py: ``(ivar(s), cmp, value(s)[, status])``. ``cmp`` is a
:class:`CMP` member, its int value, or a string (``'=='``, ``'ne'`` ...). Waits are
acquire operations; see docs/memory_model.md. ``status`` entries that are non-zero
exclude the matching element; ``*_any`` return an index or None, ``*_some`` a list.
"""

import operator

import numpy as np

from pyshmem._foreign import host_view
from pyshmem._lib import lib
from pyshmem.errors import ShmemTypeError, ValueOverflowError
from pyshmem.runtime import where

wait_until = lib.wait_until
test = lib.test
fence = lib.fence
quiet = lib.quiet
barrier_all = lib.barrier_all
sync_all = lib.sync_all

_ALL, _ANY, _SOME = 0, 1, 2


def _element(call, role, v, info):
    """One comparison value as an int of the ivars' type: the rule scalar test() applies
    (integers only, no floats such as 0.5 that would be truncated, range-checked)."""
    try:
        iv = operator.index(v)
    except TypeError:
        raise ShmemTypeError(f"{where(call)}: {role} must be an integer for an integer array, not "
                             f"{type(v).__name__}") from None
    if not info.min <= iv <= info.max:
        raise ValueOverflowError(f"{where(call)}: {role} {iv} does not fit in the array's element type ({info.dtype}: "
                                 f"{info.min}..{info.max}); pass a value in that range or use a wider dtype")
    return iv


def _values(call, dtype, value, vector):
    """The comparison value(s) as a contiguous array of ``dtype``."""
    if dtype.kind not in "iu":
        return np.zeros(1, dtype)  # the compiled side rejects such ivars with its own message
    info = np.iinfo(dtype)
    if not vector:
        return np.array([_element(call, "value", value, info)], dtype=dtype)
    if isinstance(value, np.ndarray) and value.dtype.kind in "iu":
        flat = value.reshape(-1)
        if flat.size and (int(flat.min()) < info.min or int(flat.max()) > info.max):
            bad = flat[(flat < info.min) | (flat > info.max)][0]
            _element(call, "values", int(bad), info)  # raises with the message
        return np.ascontiguousarray(flat, dtype=dtype)
    if isinstance(value, (str, bytes)) or np.ndim(value) == 0 and not isinstance(value, np.ndarray):
        raise ShmemTypeError(f"{where(call)}: values must be a sequence with one integer per ivar, not "
                             f"{type(value).__name__}")
    if isinstance(value, np.ndarray):
        raise ShmemTypeError(f"{where(call)}: values is a {value.dtype} array; pass integers (an integer array)")
    try:
        items = list(value)
    except TypeError:
        raise ShmemTypeError(f"{where(call)}: values must be a sequence with one integer per ivar, not "
                             f"{type(value).__name__}") from None
    return np.array([_element(call, "values", v, info) for v in items], dtype=dtype)


def _status(call, status):
    """None, or the status sequence as C ints (non-zero: skip that ivar)."""
    if status is None:
        return None
    try:
        st = np.asarray(status)
    except (TypeError, ValueError):
        st = np.asarray(None)
    if st.ndim == 0 or st.dtype.kind not in "iub":
        raise ShmemTypeError(f"{where(call)}: status must be a sequence of ints, one per ivar (0 = include it), not "
                             f"{type(status).__name__}")
    return np.ascontiguousarray((st.reshape(-1) != 0).astype(np.intc))


def _vector(call, mode, blocking, ivars, cmp, value, vector, status):
    on_gpu = hasattr(ivars, "__cuda_array_interface__") and not isinstance(ivars, np.ndarray)
    if on_gpu:  # a symmetric GPU array: the compiled side polls it with copies
        from pyshmem._gpu_arrays import _dtype_of

        dtype = np.dtype(_dtype_of(ivars))
    elif isinstance(host := host_view(call, "ivars", ivars), np.ndarray):
        dtype = host.dtype
    else:
        raise ShmemTypeError(f"{where(call)}: ivars must be a symmetric NumPy or GPU array or torch tensor, got "
                             f"{type(ivars).__name__}")
    values = _values(call, dtype, host_view(call, "values", value) if vector else value, vector)
    return lib.wait_vector("pyshmem." + call, mode, blocking, ivars, cmp, values, vector, _status(call, status))


def wait_until_all(ivars, cmp, value, status=None):
    """Block until every (non-excluded) element of ``ivars`` compares ``cmp`` to ``value``."""
    _vector("wait_until_all", _ALL, True, ivars, cmp, value, False, status)


def wait_until_any(ivars, cmp, value, status=None):
    """Block until some element satisfies the comparison.

    Returns:
        int or None: its index; None when ``status`` excludes every element.
    """
    return _vector("wait_until_any", _ANY, True, ivars, cmp, value, False, status)


def wait_until_some(ivars, cmp, value, status=None):
    """Block until at least one element satisfies the comparison.

    Returns:
        list[int]: indices of all elements satisfying it (empty if all are excluded).
    """
    return _vector("wait_until_some", _SOME, True, ivars, cmp, value, False, status)


def wait_until_all_vector(ivars, cmp, values, status=None):
    """Like :func:`wait_until_all` with one comparison value per element."""
    _vector("wait_until_all_vector", _ALL, True, ivars, cmp, values, True, status)


def wait_until_any_vector(ivars, cmp, values, status=None):
    """Like :func:`wait_until_any` with one comparison value per element."""
    return _vector("wait_until_any_vector", _ANY, True, ivars, cmp, values, True, status)


def wait_until_some_vector(ivars, cmp, values, status=None):
    """Like :func:`wait_until_some` with one comparison value per element."""
    return _vector("wait_until_some_vector", _SOME, True, ivars, cmp, values, True, status)


def test_all(ivars, cmp, value, status=None):
    """Returns True when every (non-excluded) element satisfies the comparison now."""
    return _vector("test_all", _ALL, False, ivars, cmp, value, False, status)


def test_any(ivars, cmp, value, status=None):
    """Returns the index of an element satisfying the comparison now, or None."""
    return _vector("test_any", _ANY, False, ivars, cmp, value, False, status)


def test_some(ivars, cmp, value, status=None):
    """Returns the indices of all elements satisfying the comparison now (maybe empty)."""
    return _vector("test_some", _SOME, False, ivars, cmp, value, False, status)


def test_all_vector(ivars, cmp, values, status=None):
    """:func:`test_all` with one comparison value per element."""
    return _vector("test_all_vector", _ALL, False, ivars, cmp, values, True, status)


def test_any_vector(ivars, cmp, values, status=None):
    """:func:`test_any` with one comparison value per element."""
    return _vector("test_any_vector", _ANY, False, ivars, cmp, values, True, status)


def test_some_vector(ivars, cmp, values, status=None):
    """:func:`test_some` with one comparison value per element."""
    return _vector("test_some_vector", _SOME, False, ivars, cmp, values, True, status)


__all__ = [
    "wait_until", "wait_until_all", "wait_until_any", "wait_until_some",
    "wait_until_all_vector", "wait_until_any_vector", "wait_until_some_vector",
    "test", "test_all", "test_any", "test_some", "test_all_vector", "test_any_vector", "test_some_vector",
    "fence", "quiet", "barrier_all", "sync_all",
]
