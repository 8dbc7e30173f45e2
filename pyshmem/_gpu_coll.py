"""Collectives on a CUDA stream: the GPU route of the host API's collectives.

``pyshmem.sum_reduce(y, y, stream=s)`` (and every other collective: sync, barrier,
broadcast, collect, fcollect, alltoall, alltoalls, reduce) on ``pyshmem.cuda`` arrays launches a one-block kernel of
``pyshmem/kernels/coll.cu`` (built with NVRTC on first use, cached per process) that
runs the device API's block-cooperative collective. With a stream the call returns at
once and the collective runs in stream order (so it can be captured in a CUDA graph);
with ``stream=None`` it runs on the default stream and the call waits for it.

The compiled binding (csrc/python/coll_bind.cpp) checks every argument with the same
code as for host arrays and then calls :func:`launch` with the kernel and its
arguments; what only the kernel can know (collect's total over the members) it checks
itself and traps with a message.
"""

import threading
from pathlib import Path

import numpy as np

from pyshmem import _gpu_kernels
from pyshmem._lib import lib
from pyshmem.errors import ShmemOSError
from pyshmem.runtime import where

__all__ = ["launch"]

_SOURCE = Path(__file__).resolve().parent / "kernels" / "coll.cu"
_lock = threading.Lock()
_modules = {}  # reduction (op, type) or None (the other kernels) -> loaded Module
_load_error = None  # the driver refused a module once: it will again (NVRTC is slow)

# Element type name (as the binding names it) -> C++ element type of the reductions.
_REDUCE_TYPES = {"int8": "signed char", "int16": "short", "int32": "int", "int64": "long long",
                 "uint8": "unsigned char", "uint16": "unsigned short", "uint32": "unsigned int",
                 "uint64": "unsigned long long", "float32": "float", "float64": "double",
                 "complex64": "cuda::std::complex<float>", "complex128": "cuda::std::complex<double>"}


def source(reduction=None):
    """coll.cu, with the one reduction kernel `reduction` = (op, type name) instantiated."""
    text = _SOURCE.read_text()
    if reduction is not None:
        op, name = reduction
        text += f"PYSHMEM_COLL_REDUCE({op}_reduce, {name}, {_REDUCE_TYPES[name]})\n"
    return text


def _kernel(call, name, reduction=None):
    global _load_error
    with _lock:
        if _load_error is None and reduction not in _modules:
            try:
                _modules[reduction] = _gpu_kernels.Module(source(reduction), name="pyshmem_coll", target="gpu")
            except ShmemOSError as exc:
                _load_error = str(exc)
        if _load_error is not None:
            raise ShmemOSError(f"{where(call)}: the kernel that runs the collective on the stream "
                               f"(pyshmem/kernels/coll.cu) cannot be loaded: {_load_error}")
        return _modules[reduction].get_kernel(name)


def launch(call, kernel, reduction, team, args, stream):
    """Runs collective kernel `kernel` of coll.cu as one block of 256 threads.

    Args:
        call: the public name ("pyshmem.broadcast" ...), for messages.
        kernel: the kernel's name ("pyshmem_coll_broadcast", "pyshmem_coll_sum_reduce_float32").
        reduction: None, or (op, type name) of the reduction kernel to instantiate.
        team: the team handle (the kernel's first parameter).
        args: the kernel's other parameters as ints (addresses, byte or element counts,
            root, strides), checked by the binding.
        stream: None (the legacy default stream; returns when the collective is done)
            or a CUstream handle (enqueued; returns at once).

    Raises:
        ShmemOSError: the kernel cannot be loaded (no usable GPU), or it failed.
    """
    _gpu_kernels.launch(_kernel(call, kernel, reduction), 1, 256, np.int32(team), *args, stream=stream)


lib._set_gpu_coll(launch)
