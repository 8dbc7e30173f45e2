"""Host-API calls on symmetric GPU arrays that copies cannot do: atomics.

The host cannot do an atomic on device memory, so ``pyshmem.atomic_*`` on a GPU array
runs a one-thread kernel (``pyshmem/kernels/host_amo.cu``, built with NVRTC on first use
and cached for the process) that calls the device API: same-node PEs' GPU heaps by
load/store atomics, PEs on other nodes through the proxy ring of GPU kernels. The
compiled binding has checked every argument before it calls :func:`amo`.
"""

import ctypes
import threading
from pathlib import Path

import numpy as np

from pyshmem import _gpu_kernels
from pyshmem._lib import lib
from pyshmem.errors import ShmemOSError
from pyshmem.runtime import where

__all__ = ["amo"]

_SOURCE = Path(__file__).resolve().parent / "kernels" / "host_amo.cu"
_lock = threading.Lock()  # one result cell per process: one host atomic at a time
_kernel = None
_load_error = None  # the driver refused the module once: it will again (NVRTC is slow)


def _host_amo_kernel():
    global _kernel, _load_error
    if _load_error is not None:
        raise ShmemOSError(_load_error)
    if _kernel is None:
        try:
            module = _gpu_kernels.Module(_SOURCE.read_text(), name="pyshmem_host_amo", target="gpu")
        except ShmemOSError as exc:
            _load_error = str(exc)
            raise
        _kernel = module.get_kernel("pyshmem_host_amo")
    return _kernel


def amo(op, dtype, address, value_bits, cond_bits, pe, fetching, call="pyshmem.atomic"):
    """Runs atomic `op` (a ``PYSHMEM_AMO_*`` code) on PE `pe`'s copy of the GPU word at `address`.

    Args:
        op: operation code; dtype: pyshmem dtype code of the element.
        address: the element's address in this PE's GPU heap.
        value_bits, cond_bits: operands as zero-extended bit patterns.
        pe: target PE (checked by the caller).
        fetching: return the previous value.
        call: the API call, for error messages ("pyshmem.atomic_add").

    Returns:
        int: the previous value's bits when `fetching`, else None.

    Raises:
        ShmemOSError: the kernel could not be loaded or run (e.g. no usable GPU), with
            the driver's reason.
        ImportError: cuda-core (NVRTC) is not installed.
    """
    with _lock:
        try:
            kernel = _host_amo_kernel()
        except ShmemOSError as exc:
            raise ShmemOSError(f"{where(call)}: atomics on GPU arrays run a kernel (pyshmem/kernels/host_amo.cu) "
                               f"that cannot be loaded: {exc}") from None
        cell = lib.gpu_host_cell(call)
        stream = lib.gpu_private_stream(call)
        _gpu_kernels.launch(kernel, 1, 1, np.int32(op), np.int32(dtype), np.uint64(address), np.uint64(value_bits),
               np.uint64(cond_bits), np.int32(pe), np.int32(1 if fetching else 0), np.uint64(cell), stream=stream)
        lib.gpu_stream_synchronize(stream, call)
        return ctypes.c_uint64.from_address(cell).value if fetching else None


lib._set_gpu_amo(amo)
