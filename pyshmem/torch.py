"""Symmetric PyTorch tensors: ``pyshmem.torch.zeros(shape, dtype=torch.float32)`` is a
``torch.Tensor`` over symmetric memory, usable by torch like any tensor and by every
pyshmem call as a symmetric target.

On the CPU a tensor is a view of the host heap; on the cuda backend, with
``device="cuda"``, of the GPU heap (``pyshmem.cuda``). Allocation and :func:`free` are
collective, as for :func:`pyshmem.zeros`. A tensor's memory stays valid until
:func:`free` (or finalize): torch does not own it, so a tensor (or a view of one) used
after its allocation is freed reads or writes whatever reuses the memory; pyshmem
refuses it only while nothing does.

Importing this module imports torch and registers the ``torch.distributed`` backend
``pyshmem`` (pyshmem/torch_backend.py); ``import pyshmem`` does neither.
"""

import math

import numpy as np
import torch

from pyshmem import memory
from pyshmem._foreign import host_view
from pyshmem.errors import InvalidArgumentError, ShmemTypeError
from pyshmem.runtime import where

# data_ptr -> (nbytes, the pyshmem object owning the memory: a NumPy array or GpuArray)
_owners = {}


def _device(call, device):
    """'cpu' or 'cuda' for a ``device=`` argument (None: torch's default device)."""
    dev = torch.device(device) if device is not None else torch.get_default_device()
    if dev.type not in ("cpu", "cuda"):
        raise InvalidArgumentError(f"{where(call)}: device {dev} is not one pyshmem has a heap on; pass 'cpu' or "
                                   "(cuda backend) 'cuda'")
    return dev.type


def _shape(call, shape):
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    if not all(isinstance(n, int) and n >= 0 for n in shape):
        raise InvalidArgumentError(f"{where(call)}: shape must be a non-negative int or a tuple of them, not {shape!r}")
    return shape


def _alloc(call, shape, dtype, device, clear):
    shape = _shape(call, shape)
    if not isinstance(dtype, torch.dtype):
        raise ShmemTypeError(f"{where(call)}: dtype must be a torch.dtype (torch.float32, ...), not {dtype!r}")
    nbytes = math.prod(shape) * dtype.itemsize
    if _device(call, device) == "cuda":
        from pyshmem import _gpu_arrays

        owner = (_gpu_arrays.zeros if clear else _gpu_arrays.empty)((nbytes,), np.uint8)
        raw = torch.as_tensor(owner, device="cuda")
    else:
        owner = memory.new_array((nbytes,), np.uint8, clear=clear)
        raw = torch.from_numpy(owner)
    t = raw.view(dtype).view(shape)
    _owners[t.data_ptr()] = (nbytes, owner)
    return t


def empty(shape, dtype=torch.float32, device=None):
    """Collective: an uninitialised symmetric tensor (every PE, same shape and dtype).

    Args:
        shape: int or tuple of ints.
        dtype: a torch.dtype (any: float32, bfloat16, int64, complex64, bool ...).
        device: ``'cpu'`` (the host heap) or, on the cuda backend, ``'cuda'`` (the GPU
            heap); None: torch's default device.

    Returns:
        torch.Tensor: C-contiguous, over symmetric memory.

    Raises:
        InvalidArgumentError: a bad shape or device.
        ShmemTypeError: dtype is not a torch.dtype.
        HeapExhaustedError: the heap is full (raise PYSHMEM_SYMMETRIC_SIZE).
    """
    return _alloc("torch.empty", shape, dtype, device, False)


def zeros(shape, dtype=torch.float32, device=None):
    """Collective: like :func:`empty`, filled with zeros."""
    return _alloc("torch.zeros", shape, dtype, device, True)


def ones(shape, dtype=torch.float32, device=None):
    """Collective: like :func:`empty`, filled with ones."""
    return full(shape, 1, dtype, device)


def full(shape, fill_value, dtype=torch.float32, device=None):
    """Collective: like :func:`empty`, filled with ``fill_value``.

    Args:
        shape, dtype, device: as for :func:`empty`.
        fill_value: a number torch can store in ``dtype``.

    Returns:
        torch.Tensor.
    """
    t = _alloc("torch.full", shape, dtype, device, False)
    t.fill_(fill_value)
    return t


def free(tensor):
    """Collective: releases a tensor made by this module (the whole tensor, not a view).

    Args:
        tensor: what :func:`empty`/:func:`zeros`/:func:`ones`/:func:`full` returned.

    Raises:
        InvalidArgumentError: not such a tensor, a view into one, or freed already.
    """
    if not isinstance(tensor, torch.Tensor):
        memory._reject_free("torch.free", ShmemTypeError(f"{where('torch.free')}: expected a tensor from "
                                                         f"pyshmem.torch, got {type(tensor).__name__}"))
    entry = _owners.get(tensor.data_ptr())
    if entry is None or tensor.numel() * tensor.element_size() != entry[0]:
        memory._reject_free("torch.free", InvalidArgumentError(
            f"{where('torch.free')}: the tensor is not one pyshmem.torch allocated (or a view into one, or freed "
            "already); free the tensor empty/zeros/ones/full returned"))
    del _owners[tensor.data_ptr()]
    owner = entry[1]
    if isinstance(owner, np.ndarray):
        memory.free(owner)
    else:
        from pyshmem import _gpu_arrays

        _gpu_arrays.free(owner)


def from_array(array):
    """A tensor over an existing symmetric array's memory (no copy).

    Args:
        array: a symmetric NumPy array (pyshmem.zeros ...) or GPU array
            (pyshmem.cuda.zeros), or a view into one.

    Returns:
        torch.Tensor: same shape and element type; writes through either are seen by
        both. Free the array (pyshmem.free), not the tensor.

    Raises:
        ShmemTypeError: not an array.
    """
    if hasattr(array, "__cuda_array_interface__") and not isinstance(array, np.ndarray):
        return torch.as_tensor(array, device="cuda")
    view = host_view("torch.from_array", "array", array)
    if not isinstance(view, np.ndarray):
        raise ShmemTypeError(f"{where('torch.from_array')}: expected a symmetric NumPy or GPU array, got "
                             f"{type(array).__name__}")
    return torch.from_numpy(view)


def init_process_group(**kwargs):
    """``torch.distributed.init_process_group("pyshmem")`` for a program started by
    torchrun (or with torch's ``MASTER_ADDR``/``RANK``/``WORLD_SIZE`` set) or by
    shmemrun: there pyshmem starts first, PE 0 opens torch's TCP store (on loopback
    when every PE is on its node) and broadcasts its address over pyshmem, and torch's
    ranks are the PEs.

    Args:
        **kwargs: passed to ``torch.distributed.init_process_group`` (``timeout`` ...).

    Raises:
        RuntimeError: torch.distributed is not available in this torch build.
    """
    import os

    dist = torch.distributed
    if not dist.is_available():
        raise RuntimeError("pyshmem.torch.init_process_group: this torch build has no torch.distributed")
    if "RANK" in os.environ and "MASTER_ADDR" in os.environ:
        return dist.init_process_group("pyshmem", **kwargs)
    import pyshmem as shmem
    from pyshmem.bootstrap_rendezvous import listen_address

    shmem.init()
    me, n = shmem.my_pe(), shmem.n_pes()
    where_to = shmem.zeros(256, np.uint8)  # "host:port" of PE 0's store
    store = None
    if me == 0:
        host, _ = listen_address(shmem.team_n_pes(shmem.TEAM_SHARED) == n)
        store = dist.TCPStore(host, 0, n, is_master=True, wait_for_workers=False)
        text = f"{host}:{store.port}".encode()
        where_to[:len(text)] = np.frombuffer(text, np.uint8)
    shmem.broadcast(where_to, where_to, 0)
    if me != 0:
        host, _, port = bytes(where_to).rstrip(b"\0").decode().rpartition(":")
        store = dist.TCPStore(host, int(port), n, is_master=False)
    shmem.free(where_to)
    return dist.init_process_group("pyshmem", store=store, rank=me, world_size=n, **kwargs)


if torch.distributed.is_available():  # registers the "pyshmem" torch.distributed backend
    from pyshmem import torch_backend

    torch_backend.register()

__all__ = ["empty", "zeros", "ones", "full", "free", "from_array", "init_process_group"]
