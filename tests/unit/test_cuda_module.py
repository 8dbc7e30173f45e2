"""pyshmem.cuda.Module / launch on the CPU build: argument passing, caching, and a
clear exception for every kind of bad input (one PE, in the test process)."""

import ctypes
import os
import stat

import numpy as np
import pytest

import pyshmem
import pyshmem.cuda as pcuda
from conftest import cpu_kernel_toolchain_missing

REASON = cpu_kernel_toolchain_missing()
pytestmark = pytest.mark.skipif(REASON is not None, reason=str(REASON))

SOURCE = r"""
#include <pyshmem/device.cuh>
extern "C" __global__ void scalars(double* out, float f, double d, int i, long long ll, unsigned long long u,
                                   bool b, const int* null_ptr, signed char c) {
  out[0] = f; out[1] = d; out[2] = i; out[3] = double(ll); out[4] = double(u); out[5] = b ? 1 : 0;
  out[6] = null_ptr == nullptr ? 1 : 0; out[7] = c;
}
extern "C" __global__ void fill(float* x, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) x[i] = 2.0f * i;
}
extern "C" __global__ void scale(float* x, int n, float f) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) x[i] *= f;
}
// Declared by a macro: its parameters are not read from the source, arguments go as given.
#define RAW_KERNEL(NAME) extern "C" __global__ void NAME(float* x, int n) {}
RAW_KERNEL(raw)
"""


@pytest.fixture(scope="module")
def module():
    return pcuda.Module(SOURCE, name="unit_cuda_module", target="cpu")


def test_scalar_arguments_reach_the_kernel_with_their_c_types(module):
    out = np.zeros(8)
    pcuda.launch(module.get_kernel("scalars"), 1, 1, out, np.float32(1.5), 2.25, np.int32(-7), -(2**40),
                 np.uint64(2**63 + 2**12), True, None, np.int8(-3))
    assert out.tolist() == [1.5, 2.25, -7.0, float(-(2**40)), float(2**63 + 2**12), 1.0, 1.0, -3.0]
    out[:] = 0
    pcuda.launch(module.get_kernel("scalars"), 1, 1, out, ctypes.c_float(0.25), ctypes.c_double(4.0),
                 ctypes.c_int(3), 5, 6, False, None, np.int8(1))
    assert out.tolist() == [0.25, 4.0, 3.0, 5.0, 6.0, 0.0, 1.0, 1.0]


def test_grid_stride_kernel_on_symmetric_and_local_arrays(module):
    sym = pyshmem.zeros(1000, np.float32)
    local = np.zeros(999, np.float32)
    for arr in (sym, local):
        pcuda.launch(module.get_kernel("fill"), 7, 256, arr, np.int32(arr.size))
        assert np.array_equal(arr, 2.0 * np.arange(arr.size, dtype=np.float32))
    view = sym[10:20]  # a contiguous slice passes a pointer to its first element
    view[:] = 0
    pcuda.launch(module.get_kernel("fill"), 1, 1, view, np.int32(10))
    assert np.array_equal(view, 2.0 * np.arange(10, dtype=np.float32))
    pyshmem.free(sym)


def test_library_is_cached_and_private(module):
    again = pcuda.Module(SOURCE, name="unit_cuda_module", target="cpu")
    assert again._path == module._path
    mode = stat.S_IMODE(os.stat(module._path.parent).st_mode)
    assert mode & 0o022 == 0, oct(mode)
    assert repr(module) == "<pyshmem.cuda.Module unit_cuda_module target=cpu>"
    assert "fill" in repr(module.get_kernel("fill"))


def test_compile_error_carries_the_compiler_log(module):
    with pytest.raises(pyshmem.InvalidArgumentError,
                       match=r"(?s)bad_kernel does not compile for the CPU build.*bad_kernel\.cu:2.*error"):
        pcuda.Module('#include <pyshmem/device.cuh>\nextern "C" __global__ void k() { pyshmem::nope(); }',
                     name="bad_kernel", target="cpu")
    assert not list(module._path.parent.glob(f".*.{os.getpid()}.tmp"))  # the failed build left nothing


def test_builds_killed_midway_leave_nothing_behind(module):
    """A PE killed while compiling (the launcher ends the others when one fails) leaves
    only a partial library named after its pid; the next build removes it."""
    import subprocess
    import sys

    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                          text=True).stdout.strip()
    orphan = module._path.parent / f".unit_cuda_module-0123.so.{dead}.tmp"
    orphan.write_bytes(b"partial")
    live = module._path.parent / f".unit_cuda_module-0123.so.{os.getpid()}.tmp"  # a build in progress
    live.write_bytes(b"partial")
    try:
        pcuda.Module(SOURCE + "\n// changed: a new build\n", name="unit_cuda_module_2", target="cpu")
        assert not orphan.exists() and live.exists()
    finally:
        live.unlink(missing_ok=True)
        orphan.unlink(missing_ok=True)


@pytest.mark.parametrize("source, name, match", [
    ("", "x", "source must be a non-empty string"),
    (None, "x", "source must be a non-empty string"),
    ("int x;", "../evil", "name must be letters, digits and _"),
    ("int x;", 7, "name must be letters, digits and _"),
])
def test_bad_module_arguments(source, name, match):
    with pytest.raises(pyshmem.InvalidArgumentError, match=match):
        pcuda.Module(source, name=name)
    with pytest.raises(pyshmem.ShmemTypeError, match="options must be a list of compiler flags, not str '-O3'"):
        pcuda.Module("int x;", options="-O3", target="cpu")


def test_missing_kernel(module):
    with pytest.raises(pyshmem.InvalidArgumentError, match=r"has no kernel 'nope'.*extern \"C\""):
        module.get_kernel("nope")


@pytest.mark.parametrize("grid, block, match", [
    (0, 1, "grid must be a positive int"),
    ((1, 2, 3, 4), 1, "grid must be a positive int"),
    ("4", 1, "grid must be a positive int"),
    (True, 1, "grid must be a positive int"),
    (5000, 1, "grid 5000 has 5000 entries; at most 4096"),
    (1, (32, 64), "block \\(32, 64\\) has 2048 entries; at most 1024"),
    (1, -1, "block must be a positive int"),
])
def test_bad_launch_shapes(module, grid, block, match):
    with pytest.raises(pyshmem.InvalidArgumentError, match=match):
        pcuda.launch(module.get_kernel("fill"), grid, block, np.zeros(4, np.float32), np.int32(4))


def test_bad_launch_arguments(module):
    """Arguments a kernel cannot take at all, for a kernel whose parameters are unknown
    (the checks against known parameters are below)."""
    k = module.get_kernel("raw")
    assert k.params is None and [p.text for p in module.get_kernel("fill").params] == ["float* x", "int n"]
    with pytest.raises(pyshmem.InvalidArgumentError, match="stream= is for GPU launches"):
        pcuda.launch(k, 1, 1, np.zeros(4, np.float32), np.int32(4), stream=object())
    with pytest.raises(ValueError, match="argument 0 is not C-contiguous"):
        pcuda.launch(k, 1, 1, np.zeros((4, 4), np.float32)[:, 1], np.int32(4))
    with pytest.raises(TypeError, match="argument 1 of type dict cannot be passed"):
        pcuda.launch(k, 1, 1, np.zeros(4, np.float32), {})
    with pytest.raises(TypeError, match="argument 1 has unsupported scalar type float16"):
        pcuda.launch(k, 1, 1, np.zeros(4, np.float32), np.float16(1))
    with pytest.raises(OverflowError, match="argument 1 .* does not fit 64 bits"):
        pcuda.launch(k, 1, 1, np.zeros(4, np.float32), 2**64)
    with pytest.raises(TypeError, match="kernel must come from Module.get_kernel"):
        pcuda.launch("fill", 1, 1)

    class GpuOnly:
        __cuda_array_interface__ = {"shape": (4,), "typestr": "<f4", "data": (0, False), "version": 3}

    with pytest.raises(TypeError, match="argument 0 is a GPU array, but this kernel runs on the CPU build"):
        pcuda.launch(k, 1, 1, GpuOnly(), np.int32(4))


def test_python_scalars_take_the_parameters_c_types(module):
    """`int n` and `float f` given as Python int/float (before: 64-bit int and double,
    which the kernel read as garbage)."""
    x = np.ones(5, np.float32)
    pcuda.launch(module.get_kernel("scale"), 1, 1, x, 4, 2.5)
    assert x.tolist() == [2.5, 2.5, 2.5, 2.5, 1.0]
    pcuda.launch(module.get_kernel("scale"), 1, 1, x, np.int32(5), 2)  # an int for a float parameter
    assert x.tolist() == [5.0, 5.0, 5.0, 5.0, 2.0]


@pytest.mark.parametrize("args, error, match", [
    ((np.ones(4, np.float32), np.int32(4)), pyshmem.ShmemTypeError,
     r"takes 3 arguments \(float\* x, int n, float f\), got 2; missing 'f'$"),
    ((np.ones(4, np.float32),), pyshmem.ShmemTypeError, r"takes 3 arguments .*, got 1; missing 'n', 'f'$"),
    ((np.ones(4, np.float32), 4, 1.0, 7), pyshmem.ShmemTypeError, r"takes 3 arguments .*, got 4; pass exactly 3$"),
    ((1.5, 4, 1.0), pyshmem.ShmemTypeError, r"argument 0 \(float\* x\) is a float; pass an array"),
    ((np.ones(4, np.float32), np.ones(4, np.int32), 1.0), pyshmem.ShmemTypeError,
     r"argument 1 \(int n\) is an array \(ndarray\); pass a Python int"),
    ((np.ones(4, np.float32), 4.0, 1.0), pyshmem.ShmemTypeError, r"argument 1 \(int n\) is a float; pass a Python int"),
    ((np.ones(4, np.float32), 4, None), pyshmem.ShmemTypeError, r"argument 2 \(float f\) is None; pass a Python float"),
    ((np.ones(4, np.float32), np.int64(4), 1.0), pyshmem.ShmemTypeError,
     r"argument 1 \(int n\) is a NumPy int64 \(8 bytes; the parameter has 4\)"),
    ((np.ones(4, np.float32), 4, np.float64(1)), pyshmem.ShmemTypeError,
     r"argument 2 \(float f\) is a NumPy float64 .*np\.float32 for float"),
    ((np.ones(4, np.float32), 4, np.int32(1)), pyshmem.ShmemTypeError, r"argument 2 \(float f\) is a NumPy int32"),
    ((np.ones(4, np.float32), 2**31, 1.0), pyshmem.ValueOverflowError,
     r"argument 1 \(int n\) is 2147483648, which does not fit 32-bit signed"),
])
def test_launch_checks_arguments_against_the_kernels_parameters(module, args, error, match):
    x = args[0] if isinstance(args[0], np.ndarray) else None
    before = None if x is None else x.copy()
    with pytest.raises(error, match=r"^pyshmem\.cuda\.launch on PE 0: kernel 'scale' " + match):
        pcuda.launch(module.get_kernel("scale"), 1, 1, *args)
    assert x is None or np.array_equal(x, before)  # the kernel did not run
