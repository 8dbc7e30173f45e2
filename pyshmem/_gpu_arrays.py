"""Symmetric arrays in the GPU heap (cuda backend) and host-initiated GPU transfers.

Public through :mod:`pyshmem.cuda`: ``empty``, ``zeros``, ``free``, ``put``, ``get``.
A :class:`GpuArray` is a plain, C-contiguous device array that exports
``__cuda_array_interface__``, so CuPy (``cupy.asarray(a)``), PyTorch
(``torch.as_tensor(a, device="cuda")``) and Numba (``cuda.as_cuda_array(a)``) wrap it
without a copy, and GPU kernels receive its device address.
"""

import numpy as np

from pyshmem._lib import lib
from pyshmem.errors import InvalidArgumentError, ShmemTypeError
from pyshmem.runtime import where

_LEGACY_STREAM = lib.LEGACY_STREAM  # CU_STREAM_LEGACY: the legacy default stream as a stream handle


class GpuArray:
    """A C-contiguous array in this PE's GPU symmetric heap (or a view of one).

    Attributes:
        ptr: device address of the first element.
        shape, dtype, size, nbytes, ndim: as for NumPy.
    """

    def __init__(self, ptr, shape, dtype, base=None):
        self.ptr = int(ptr)
        self.shape = tuple(int(n) for n in shape)
        self.dtype = np.dtype(dtype)
        self.base = base  # the allocation this is a view of (None: this owns it)

    size = property(lambda self: int(np.prod(self.shape, dtype=np.int64)))
    nbytes = property(lambda self: self.size * self.dtype.itemsize)
    ndim = property(lambda self: len(self.shape))

    @property
    def __cuda_array_interface__(self):
        return {"shape": self.shape, "typestr": self.dtype.str, "data": (self.ptr, False), "strides": None,
                "version": 3, "stream": None}

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of a 0-d GpuArray")
        return self.shape[0]

    def __getitem__(self, key):
        """Contiguous views only: an int or a step-1 slice on the first axis."""
        if not self.shape:
            raise IndexError("a 0-d GpuArray cannot be indexed")
        row = self.nbytes // self.shape[0] if self.shape[0] else 0
        if isinstance(key, (int, np.integer)):
            i = int(key) + (self.shape[0] if key < 0 else 0)
            if not 0 <= i < self.shape[0]:
                raise IndexError(f"index {key} is out of bounds for axis 0 with size {self.shape[0]}")
            return GpuArray(self.ptr + i * row, self.shape[1:], self.dtype, self.base or self)
        if isinstance(key, slice):
            start, stop, step = key.indices(self.shape[0])
            if step != 1:
                raise IndexError("GpuArray views must be contiguous (slice step 1); use CuPy for strided views: "
                                 "cupy.asarray(a)[...]")
            n = max(0, stop - start)
            return GpuArray(self.ptr + start * row, (n,) + self.shape[1:], self.dtype, self.base or self)
        raise IndexError("GpuArray supports an int or a slice on the first axis; wrap it with CuPy, PyTorch or "
                         "Numba for other indexing")

    def copy_to_host(self):
        """Returns a NumPy copy of this PE's data.

        Like Numba's and CuPy's default: the copy runs on the legacy default stream, so it
        comes after kernels launched there (and on blocking streams) and returns with the
        data. (pyshmem.get without stream= does not wait for kernels.)
        """
        out = np.empty(self.shape, self.dtype)
        lib.gpu_get(out.ctypes.data, self.ptr, self.nbytes, lib.my_pe(), _LEGACY_STREAM, "GpuArray.copy_to_host")
        lib.gpu_stream_synchronize(_LEGACY_STREAM, "GpuArray.copy_to_host")
        return out

    def copy_from_host(self, array):
        """Overwrites this PE's data with `array` (same number of bytes), in legacy-stream
        order like :meth:`copy_to_host`; complete on return."""
        src = np.ascontiguousarray(array, dtype=self.dtype)
        if src.nbytes != self.nbytes:
            raise InvalidArgumentError(f"{where('GpuArray.copy_from_host')}: {src.nbytes} bytes given for a "
                                       f"{self.nbytes}-byte array; pass a host array of the same size")
        lib.gpu_put(self.ptr, src.ctypes.data, self.nbytes, lib.my_pe(), _LEGACY_STREAM, "GpuArray.copy_from_host")
        lib.gpu_stream_synchronize(_LEGACY_STREAM, "GpuArray.copy_from_host")

    def __repr__(self):
        return f"<pyshmem.cuda.GpuArray shape={self.shape} dtype={self.dtype} ptr=0x{self.ptr:x}>"


def empty(shape, dtype=float):
    """Collective: a symmetric array in GPU memory (every PE, same shape and dtype).

    Args:
        shape: int or tuple of ints.
        dtype: NumPy dtype.

    Returns:
        GpuArray: uninitialised.

    Raises:
        ShmemNotImplementedError: the backend is not cuda (no GPU heap), with the reason.
        MemoryError: the GPU heap is full (raise PYSHMEM_CUDA_SYMMETRIC_SIZE).
    """
    return _alloc(shape, dtype, False, "cuda.empty")


def zeros(shape, dtype=float):
    """Collective: like :func:`empty`, filled with zeros."""
    return _alloc(shape, dtype, True, "cuda.zeros")


def _alloc(shape, dtype, clear, call):
    from pyshmem.runtime import ensure_started

    shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
    if any(int(n) < 0 for n in shape):
        raise InvalidArgumentError(f"{where(call)}: negative dimension in shape {shape}")
    dtype = np.dtype(dtype)
    ensure_started(call)
    nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    return GpuArray(lib.gpu_malloc(nbytes, max(dtype.alignment, 64), clear, f"pyshmem.{call}"), shape, dtype)


def free(array):
    """Collective: releases a GpuArray made by empty/zeros (not a view)."""
    if not isinstance(array, GpuArray) or array.base is not None:
        raise InvalidArgumentError(f"{where('cuda.free')}: pass the GpuArray returned by empty/zeros, not a view")
    lib.gpu_free(array.ptr, "pyshmem.cuda.free")


def _stream_handle(stream, call):
    """The CUstream of a ``stream=`` argument as an integer for the compiled calls (the
    binding's rule, csrc/python/args.h parse_stream: None is 0, no stream; handle 0 the
    legacy default stream)."""
    return lib.stream_handle(stream, f"pyshmem.{call}")


def _address(obj, call, role):
    """(address, nbytes) of a contiguous device array or NumPy array."""
    if isinstance(obj, GpuArray):
        return obj.ptr, obj.nbytes
    cai = getattr(obj, "__cuda_array_interface__", None)
    if cai is not None:
        dt = np.dtype(cai["typestr"])
        shape = tuple(cai["shape"])
        strides = cai.get("strides")
        if strides is not None and 0 not in shape and tuple(strides) != _c_strides(shape, dt.itemsize):
            raise InvalidArgumentError(f"{where(call)}: {role} is not C-contiguous; pass a contiguous array")
        return int(cai["data"][0]), int(np.prod(shape, dtype=np.int64)) * dt.itemsize
    if isinstance(obj, np.ndarray):
        if not obj.flags.c_contiguous:
            raise InvalidArgumentError(f"{where(call)}: {role} is not C-contiguous; pass np.ascontiguousarray(x)")
        return obj.ctypes.data, obj.nbytes
    raise ShmemTypeError(f"{where(call)}: {role} must be a GPU array (__cuda_array_interface__) or a NumPy array, "
                    f"not {type(obj).__name__}")


def _c_strides(shape, itemsize):
    strides, acc = [], itemsize
    for n in reversed(shape):
        strides.append(acc)
        acc *= n
    return tuple(reversed(strides))


def _operands(verb, sym_role, sym, local_role, local):
    """(symmetric address, local address, nbytes) of a put/get, checked."""
    if not isinstance(sym, GpuArray):
        raise ShmemTypeError(f"{where('cuda.' + verb)}: {sym_role} must be a symmetric GpuArray from pyshmem.cuda.empty/zeros")
    address, nbytes = _address(local, f"cuda.{verb}", local_role)
    if nbytes != sym.nbytes:
        raise InvalidArgumentError(f"{where('cuda.' + verb)}: {local_role} has {nbytes} bytes, {sym_role} {sym.nbytes}; "
                                   "pass arrays of the same size")
    return sym.ptr, address, nbytes


def put(dest, source, pe, stream=None):
    """Copies `source` into PE pe's copy of the symmetric GPU array `dest`.

    Args:
        dest: a GpuArray (or view) from pyshmem.cuda.empty/zeros.
        source: a contiguous GPU array (any __cuda_array_interface__ object) or NumPy array
            with the same number of bytes.
        pe: target PE.
        stream: None: the copy is done on return (`source` may be reused), on pyshmem's
            own stream, so it is not ordered after kernels still running on yours
            (synchronise them first when they produce `source`). A CUDA stream (0: the
            legacy default stream): the copy is enqueued on it and completes in stream
            order (see :func:`synchronize`).

    Raises:
        ValueError: sizes differ, non-contiguous arrays, PE out of range.
        TypeError: unsupported array or stream type.
    """
    sym, local, nbytes = _operands("put", "dest", dest, "source", source)
    lib.gpu_put(sym, local, nbytes, int(pe), _stream_handle(stream, "cuda.put"), "pyshmem.cuda.put")


def get(dest, source, pe, stream=None):
    """Copies PE pe's copy of the symmetric GPU array `source` into `dest`.

    Args:
        dest: a contiguous GPU array or NumPy array with as many bytes as `source`.
        source: a GpuArray (or view) from pyshmem.cuda.empty/zeros.
        pe: PE to read from.
        stream: None: returns with the data in `dest` (not ordered after your kernels, as
            for :func:`put`), or a CUDA stream (stream order).

    Raises:
        ValueError: sizes differ, non-contiguous arrays, PE out of range.
        TypeError: unsupported array or stream type.
    """
    sym, local, nbytes = _operands("get", "source", source, "dest", dest)
    lib.gpu_get(local, sym, nbytes, int(pe), _stream_handle(stream, "cuda.get"), "pyshmem.cuda.get")


def synchronize(stream=0):
    """Waits until the work enqueued on `stream` so far (kernels, ``stream=`` copies and
    collectives) is done.

    Args:
        stream: a CUDA stream (a CUstream handle or a cuda.core/CuPy/PyTorch stream);
            default 0, the legacy default stream.

    Raises:
        ShmemOSError: a kernel on the stream failed (a device-side trap included); the
            message has CUDA's error.
        TypeError: not a stream.
        NotImplementedError: no GPU heap (the backend is cpu).
    """
    if stream is None:
        raise ShmemTypeError(f"{where('cuda.synchronize')}: stream must be a CUDA stream (0: the legacy default "
                             "stream), not None")
    lib.gpu_stream_synchronize(_stream_handle(stream, "cuda.synchronize"), "pyshmem.cuda.synchronize")


def watch_stream(stream=0):
    """Tells this PE's proxy thread that GPU kernels enqueued on `stream` so far may
    issue device-API operations to PEs on other nodes (which go through the proxy).

    GPU kernels cannot wake a dozing proxy thread, so after a quiet period their first
    request would wait out its doze (up to ``PYSHMEM_PROXY_IDLE_SLEEP_MAX_US``). Kernels
    launched by :func:`pyshmem.cuda.launch` are watched already; call this after
    launching a kernel some other way (Numba's ``kernel[grid, block, stream](...)``,
    CuPy, PyTorch extensions): the proxy then polls without dozing until that stream's
    work enqueued so far completes (a CUDA event recorded on it). Costs one event
    record; nothing is done when no PE's GPU heap is on another node (no proxy ring for
    GPU kernels).

    Args:
        stream: a CUDA stream (a CUstream handle or a cuda.core/CuPy/PyTorch/Numba
            stream); default 0, the legacy default stream.

    Raises:
        TypeError: not a stream.
        NotImplementedError: no GPU heap (the backend is cpu).
        ShmemOSError: the CUDA driver refused to record the event.
    """
    if stream is None:
        raise ShmemTypeError(f"{where('cuda.watch_stream')}: stream must be a CUDA stream (0: the legacy default "
                             "stream), not None")
    lib.gpu_watch_user_stream(_stream_handle(stream, "cuda.watch_stream"), "pyshmem.cuda.watch_stream")


__all__ = ["GpuArray", "empty", "zeros", "free", "put", "get", "synchronize", "watch_stream"]


def _dtype_of(x):
    if isinstance(x, GpuArray):
        return x.dtype
    cai = getattr(x, "__cuda_array_interface__", None)
    return np.dtype(cai["typestr"]) if cai is not None else np.asarray(x).dtype
