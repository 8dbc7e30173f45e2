"""Linking and loading GPU kernels that use pyshmem.device (Numba on a GPU).

``library()`` is the device library (the extern "C" shims as LTO-IR), ``linkable()`` the
same with the module setup callback that numba-cuda runs when it loads a kernel's module
(it uploads this PE's device state), and ``link()`` compiles and links a kernel with no
GPU. ``pyshmem.device.gpu`` re-exports them.
"""

from pyshmem.device import _shims
from pyshmem.errors import ShmemTypeError


def library(arch="sm_90"):
    """The device library (the shims as LTO-IR) to link kernels with."""
    return _shims.library(arch)


_SETUP_CALL = "pyshmem.device (Numba module setup)"


def _describe(obj):
    text = repr(obj)
    return f"{type(obj).__name__} {text if len(text) <= 60 else text[:57] + '...'}"


def _loaded_handle(obj, outer=None):
    """(handle as int, is_library) of what numba-cuda handed the setup callback.

    The forms numba-cuda versions pass: a ``cuda.core`` ObjectCode (its ``handle`` a
    ``CUlibrary``, or a ``CUmodule`` in cuda.core before libraries; ``get_module()`` a
    ``CUmodule``), a numba module object with ``handle``, or the raw handle as a
    ``cuda.bindings`` ``CUmodule`` / ``CUlibrary`` (older numba-cuda) or a ctypes
    ``c_void_p`` CUmodule (its ctypes binding). Handles are told apart by their type,
    never guessed: a bare integer could be either, and reading a library as a module
    (or the reverse) would upload to a wrong address, so it is refused.
    """
    import ctypes

    kind = type(obj).__name__
    if kind in ("CUlibrary", "CUmodule"):  # cuda.bindings.driver (or cuda.cuda) handle objects
        return int(obj), kind == "CUlibrary"
    if isinstance(obj, ctypes.c_void_p):  # numba's ctypes binding loads with cuModuleLoadDataEx
        if obj.value:
            return int(obj.value), False
    elif outer is None and not isinstance(obj, (int, str, bytes)):
        handle = getattr(obj, "handle", None)
        get_module = getattr(obj, "get_module", None)
        if handle is not None and (type(handle).__name__ in ("CUlibrary", "CUmodule") or not callable(get_module)):
            return _loaded_handle(handle, obj)
        if callable(get_module):  # a CUmodule for the current context
            return _loaded_handle(get_module(), obj)
    got = _describe(obj) if outer is None else f"{_describe(outer)} whose handle is {_describe(obj)}"
    raise ShmemTypeError(
        f"{_SETUP_CALL}: numba-cuda passed the module setup callback {got}, which is not a loaded "
        "module pyshmem can use (expected a cuda.core ObjectCode, or a CUmodule or CUlibrary handle "
        "object); the kernel's pyshmem device state was not uploaded. Use a numba-cuda version "
        "pyshmem supports (pip install 'pyshmem[numba]')")


def _setup_module(obj, *rest):
    """numba-cuda calls this once per loaded module, before the module's first launch:
    copy this PE's device state into the module's ``pyshmem_d_state``.

    ``obj`` is what this numba-cuda version passes for the loaded module (see
    ``_loaded_handle``; any further arguments are ignored). The upload goes to the
    module as loaded in the CUDA context that is current during the callback, which is
    the context numba-cuda loaded the module in (not necessarily the one pyshmem made
    its heap in): a CUlibrary's global is looked up for the current context, and a
    CUmodule from ``get_module()`` already belongs to it.
    """
    from pyshmem._lib import lib

    handle, is_library = _loaded_handle(obj)
    lib.gpu_state_upload(handle, is_library, _SETUP_CALL)


def linkable(arch=None):
    """The device library for ``@cuda.jit(link=[...])`` kernels run on a GPU.

    Kernels that call ``pyshmem.device`` functions link this LTO-IR; numba-cuda then
    calls pyshmem's setup callback when it loads the kernel's module, which uploads this
    PE's device state (needs the cuda backend: ``pyshmem.cuda`` arrays are what such
    kernels operate on)::

        @cuda.jit(link=[pyshmem.device.linkable()])
        def ring(inbox, outbox, sig): ...
        ring[1, 128](cuda.as_cuda_array(inbox), cuda.as_cuda_array(outbox), cuda.as_cuda_array(sig))

    Args:
        arch: e.g. ``"sm_90"``; default: this PE's GPU (``"sm_90"`` without one).

    Returns:
        numba.cuda.LTOIR: the shims' LTO-IR with the setup callback attached.
    """
    from numba import cuda

    from pyshmem._lib import lib

    arch = arch or (lib.gpu_arch() if lib.gpu_active() else "sm_90")
    return cuda.LTOIR(bytes(library(arch).code), name=f"pyshmem_device_{arch}.ltoir", setup_callback=_setup_module)


def link(kernel, signature, arch="sm_90", output="cubin"):
    """Compile a Python kernel that uses pyshmem.device and link it into a cubin.

    Args:
        kernel: the kernel's Python function (not decorated).
        signature: its Numba argument types, e.g. ``(int64[::1], int64[::1])``.
        arch: ``"sm_80"``, ``"sm_90"`` ...
        output: ``"cubin"`` or ``"ptx"``.

    Returns:
        cuda.core.ObjectCode: the linked kernel (needs no GPU to produce).
    """
    from cuda.core import Linker, LinkerOptions, ObjectCode
    from numba import cuda

    major, minor = divmod(int(arch[3:]), 10)
    # device=False: compile a kernel (.entry); as a device function LTO would drop it.
    ltoir, _ = cuda.compile(kernel, signature, output="ltoir", cc=(major, minor), device=False, abi="numba")
    return Linker(ObjectCode.from_ltoir(ltoir, name=getattr(kernel, "__name__", "kernel")), library(arch),
                  options=LinkerOptions(arch=arch, link_time_optimization=True, ptx=(output == "ptx"))).link(output)


__all__ = ["library", "link", "linkable"]
