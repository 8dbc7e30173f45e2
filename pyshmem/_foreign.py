"""Arrays that are not NumPy arrays in the host API's Python-level calls: PyTorch
tensors, DLPack exporters (JAX, CuPy on the host) and ``__array_interface__`` objects,
seen as NumPy views of the same memory (never copies).

The compiled verbs read such arrays themselves (csrc/python/dlpack.cpp); this module is
for the few calls written in Python (``ptr``, ``free``, the vector waits). pyshmem never
imports torch: a tensor can only exist once the program has.
"""

import sys

import numpy as np

from pyshmem.errors import ShmemTypeError
from pyshmem.runtime import where


def is_tensor(obj):
    """True when ``obj`` is a torch.Tensor (False without importing torch)."""
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(obj, torch.Tensor)


def host_view(call, role, obj):
    """A NumPy array over ``obj``'s memory, or ``obj`` itself when it is a NumPy array
    or no array pyshmem knows (the caller reports those).

    Args:
        call: the pyshmem call, for messages.
        role: the argument's name, for messages.
        obj: the argument.

    Returns:
        numpy.ndarray, or ``obj`` unchanged.

    Raises:
        ShmemTypeError: a tensor NumPy cannot view (a CUDA tensor here, bfloat16, a
            lazily negated/conjugated view) or an export that fails.
    """
    if isinstance(obj, np.ndarray) or isinstance(obj, np.generic):
        return obj
    if is_tensor(obj):
        if obj.is_neg() or obj.is_conj():
            raise ShmemTypeError(f"{where(call)}: {role} is a torch tensor with the negative or conjugate bit set (a "
                                 "lazy view whose memory does not hold its values); pass x.resolve_neg()/"
                                 "x.resolve_conj() (a copy)")
        try:
            t = obj.detach()
            if t.dtype.is_floating_point and t.element_size() in (1, 2) and t.dtype not in _NUMPY_FLOATS():
                t = t.view(_UINT[t.element_size()]())  # bfloat16, float8: NumPy has no such type; the same bytes
            return t.numpy()
        except (TypeError, RuntimeError) as exc:
            raise ShmemTypeError(f"{where(call)}: {role} is a torch tensor this call cannot view as host memory "
                                 f"({exc}); pass a CPU tensor of a NumPy element type") from None
    if hasattr(obj, "__dlpack__") and not hasattr(obj, "__cuda_array_interface__"):
        try:
            return np.from_dlpack(obj)
        except (TypeError, RuntimeError, BufferError, ValueError) as exc:
            raise ShmemTypeError(f"{where(call)}: {role} ({type(obj).__name__}) exports DLPack that NumPy cannot view "
                                 f"({exc})") from None
    if hasattr(obj, "__array_interface__"):
        return np.asarray(obj)
    return obj


def _NUMPY_FLOATS():
    torch = sys.modules["torch"]
    return (torch.float16, torch.float32, torch.float64)


_UINT = {1: lambda: sys.modules["torch"].uint8, 2: lambda: sys.modules["torch"].uint16}


def like(original, view):
    """``view`` (a NumPy array) as the kind of array ``original`` is: a torch tensor over
    the same memory, of the tensor's dtype, for a tensor; else the NumPy array."""
    if is_tensor(original):
        t = sys.modules["torch"].from_numpy(view)
        return t if t.dtype == original.dtype else t.view(original.dtype)
    return view


__all__ = ["is_tensor", "host_view", "like"]
