"""The fake CUDA driver (tests/cpp/fake_cuda_driver.cpp) driven the way a framework
(Numba, CuPy, PyTorch) drives the real one, for PE programs on the cuda backend: the
library is the one pyshmem loads (same path, so the same handle), and entry points are
resolved as pyshmem resolves them."""

import ctypes
import os

FAKE = ctypes.CDLL(os.environ["PYSHMEM_CUDA_DRIVER"])
CU_STREAM_NON_BLOCKING = 1


def cu(name, *argtypes):
    """A driver entry point of the fake (returns a CUresult)."""
    fn = ctypes.c_void_p()
    status = ctypes.c_int()
    rc = FAKE.cuGetProcAddress_v2(name.encode(), ctypes.byref(fn), 13000, ctypes.c_uint64(0), ctypes.byref(status))
    assert rc == 0 and fn.value, name
    return ctypes.CFUNCTYPE(ctypes.c_int, *argtypes)(fn.value)


def framework_context():
    """This thread's current context, as a framework would have made it."""
    if FAKE.fake_cuda_current_device() < 0:
        assert FAKE.fake_cuda_set_current_device(0) == 0


def framework_stream():
    """A non-blocking stream the way a framework makes one (in the current context)."""
    framework_context()
    s = ctypes.c_void_p()
    assert cu("cuStreamCreate", ctypes.POINTER(ctypes.c_void_p), ctypes.c_uint)(ctypes.byref(s), CU_STREAM_NON_BLOCKING) == 0
    return s.value


def framework_sync(stream):
    """cuStreamSynchronize, as the framework that owns `stream` would call it."""
    framework_context()
    assert cu("cuStreamSynchronize", ctypes.c_void_p)(stream) == 0


def framework_launch(function, stream, *params):
    """cuLaunchKernel of a 1x1 grid with 64-bit parameters, as Numba or CuPy would call it:
    pyshmem does not see this launch."""
    framework_context()
    cells = [ctypes.c_uint64(p) for p in params]
    args = (ctypes.c_void_p * len(cells))(*[ctypes.addressof(c) for c in cells])
    launch = cu("cuLaunchKernel", ctypes.c_void_p, *[ctypes.c_uint] * 7, ctypes.c_void_p,
                ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(ctypes.c_void_p))
    assert launch(function, 1, 1, 1, 1, 1, 1, 0, stream, args, None) == 0
