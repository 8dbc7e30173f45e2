"""Kernel parameters read from CUDA C++ source (pyshmem._kernel_args.parse), and the
GPU launch path's checks and argument packing, without a GPU: lib.gpu_launch is replaced
by a recorder of the bytes it would hand the driver."""

import ctypes

import numpy as np
import pytest

import pyshmem
import pyshmem.cuda as pcuda
from pyshmem import _kernel_args
from pyshmem._lib import lib
from pyshmem.runtime import ensure_started

SOURCE = r"""
#include <pyshmem/device.cuh>
// extern "C" __global__ void commented_out(int x) {}
/* __global__ void also_commented(int x) {} */
template <typename T> __global__ void templated(T* x, int n) {}
extern "C" __global__ void __launch_bounds__(256) bounded(float* __restrict__ x, unsigned int, const double d[],
                                                          signed char c, size_t len, bool b,
                                                          cuda::std::complex<float> z) {}
extern "C" {
__global__ void none(void) {}
__global__ void declared_twice(long long a);
}
__global__ void declared_twice(long long b) {}
__global__ void overloaded(int a) {}
__global__ void overloaded(float a) {}
#define MAKE(NAME) extern "C" __global__ void NAME(int x) {}
MAKE(from_macro)
extern "C" __global__ void scale(float* x, int n, float f) {}
"""


def test_parse_reads_names_kinds_and_sizes():
    found = _kernel_args.parse(SOURCE)
    assert sorted(found) == ["bounded", "declared_twice", "none", "overloaded", "scale", "templated"]
    assert found["templated"] is None and found["overloaded"] is None  # not checked: launched as given
    assert found["none"] == []
    bounded = [(p.text, p.name, p.kind, p.size, p.signed) for p in found["bounded"]]
    assert bounded == [("float* __restrict__ x", "x", "pointer", 8, False), ("unsigned int", "", "int", 4, False),
                       ("const double d[]", "d", "pointer", 8, False), ("signed char c", "c", "int", 1, True),
                       ("size_t len", "len", "int", 8, False), ("bool b", "b", "bool", 1, False),
                       ("cuda::std::complex<float> z", "z", None, 0, True)]
    assert [p.name for p in found["declared_twice"]] == ["b"]  # same types: one kernel


@pytest.fixture
def gpu_kernel(monkeypatch):
    """The `scale` kernel as a GPU module would give it, with launches recorded."""
    launched = []
    monkeypatch.setattr(lib, "gpu_launch", lambda func, grid, block, shmem, stream, packed, cooperative, call:
                        launched.append(packed if not cooperative else ("cooperative", packed)))

    class GpuModule:
        name, target = "fake_gpu", "gpu"

    ensure_started("cuda.launch")
    return pcuda.Kernel(GpuModule(), "scale", None, _kernel_args.parse(SOURCE)["scale"]), launched


class DeviceArray:
    def __init__(self, ptr):
        self.__cuda_array_interface__ = {"shape": (4,), "typestr": "<f4", "data": (ptr, False), "version": 3}


def test_gpu_launch_packs_each_parameter_at_its_size(gpu_kernel):
    kernel, launched = gpu_kernel
    pcuda.launch(kernel, 2, 64, DeviceArray(0x7F0000001000), 4, 2.5)
    pcuda.launch(kernel, 1, 1, 0x7F0000002000, np.int32(-1), np.float32(0.5))
    assert launched == [[(0x7F0000001000).to_bytes(8, "little"), (4).to_bytes(4, "little"),
                         bytes(ctypes.c_float(2.5))],
                        [(0x7F0000002000).to_bytes(8, "little"), (-1).to_bytes(4, "little", signed=True),
                         bytes(ctypes.c_float(0.5))]]


@pytest.mark.parametrize("args, match", [
    ((DeviceArray(16), np.int32(4)), r"takes 3 arguments \(float\* x, int n, float f\), got 2; missing 'f'"),
    ((1.5, 4, 1.0), r"argument 0 \(float\* x\) is a float; pass an array"),
    ((DeviceArray(16), DeviceArray(32), 1.0),
     r"argument 1 \(int n\) is a GPU array \(DeviceArray\); pass a Python int"),
    ((DeviceArray(16), 4, np.float64(1)), r"argument 2 \(float f\) is a NumPy float64"),
])
def test_gpu_launch_gets_the_same_checks_as_the_cpu(gpu_kernel, args, match):
    kernel, launched = gpu_kernel
    with pytest.raises(pyshmem.ShmemTypeError, match=r"^pyshmem\.cuda\.launch on PE 0: kernel 'scale' " + match):
        pcuda.launch(kernel, 1, 1, *args)
    assert launched == []


def test_gpu_launch_passes_cooperative(gpu_kernel):
    kernel, launched = gpu_kernel
    pcuda.launch(kernel, 1, 32, DeviceArray(0x1000), 4, np.float32(2), cooperative=True)
    assert launched[-1][0] == "cooperative"
    with pytest.raises(pyshmem.InvalidArgumentError, match="cooperative must be True or False"):
        pcuda.launch(kernel, 1, 32, DeviceArray(0x1000), 4, np.float32(2), cooperative="yes")
