"""Runs CUDA C++ kernels that use <pyshmem/device.cuh> on a real GPU, without the
CUDA backend: one PE whose "symmetric heap" is a device allocation made here, and a
pyshmem_device_state uploaded into the module's `pyshmem_d_state` by hand.

This checks that device-API code executes correctly on GPU hardware (every call
targets PE 0 = this PE, by direct load/store) and gives single-GPU figures for
device p/put costs. Multi-PE GPU runs go through the CUDA backend (the GPU heap
exported between processes; the other tests/gpu programs). Uses only the CUDA driver
API (cuda-bindings).
Importing this module needs no GPU; GpuPE() does.
"""

import ctypes
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
KERNELS = HERE / "device_kernels_gpu.cu"
SYS_AREA_BYTES = 64 * 1024  # kSysAreaBytes in csrc/core/state.h


class DeviceState(ctypes.Structure):
    """pyshmem_device_state (csrc/include/pyshmem/device_state.h), byte for byte."""
    _fields_ = [
        ("version", ctypes.c_uint32), ("my_pe", ctypes.c_int32), ("n_pes", ctypes.c_int32),
        ("flags", ctypes.c_uint32), ("heap_base", ctypes.c_uint64), ("heap_stride", ctypes.c_uint64),
        ("heap_size", ctypes.c_uint64), ("user_offset", ctypes.c_uint64), ("peer_flags", ctypes.c_uint64),
        ("proxy", ctypes.c_uint64), ("teams", ctypes.c_uint64), ("team_pool_offset", ctypes.c_uint64),
        ("team_slot_bytes", ctypes.c_uint32), ("max_teams", ctypes.c_uint32), ("team_rounds", ctypes.c_uint32),
        ("pad0", ctypes.c_uint32), ("wait_timeout_ns", ctypes.c_uint64), ("wait_hook", ctypes.c_void_p),
        ("note_op", ctypes.c_void_p), ("progress", ctypes.c_void_p),
    ]


STATE_VERSION = 6  # PYSHMEM_DEVICE_STATE_VERSION
PEER_LOAD_STORE = 1
STATE_DEBUG = 1


def gpu_available():
    """(True, description) when a CUDA device can be used, else (False, reason)."""
    try:
        from cuda.bindings import driver as cu
    except ImportError as exc:
        return False, f"cuda-bindings is not installed ({exc})"
    try:
        err, = cu.cuInit(0)
        if err != cu.CUresult.CUDA_SUCCESS:
            return False, f"cuInit failed: {err}"
        err, count = cu.cuDeviceGetCount()
        if err != cu.CUresult.CUDA_SUCCESS or count < 1:
            return False, "no CUDA device"
        err, name = cu.cuDeviceGetName(256, 0)
        return True, name.split(b"\0", 1)[0].decode()
    except Exception as exc:  # no driver library at all
        return False, f"no usable CUDA driver ({exc})"


def _check(result):
    from cuda.bindings import driver as cu

    err, *rest = result if isinstance(result, tuple) else (result,)
    if err != cu.CUresult.CUDA_SUCCESS:
        _, name = cu.cuGetErrorName(err)
        raise RuntimeError(f"CUDA driver call failed: {name.decode() if name else err}")
    return rest[0] if len(rest) == 1 else rest


class GpuPE:
    """One PE on GPU 0 with `heap_bytes` of device memory as its symmetric heap."""

    def __init__(self, heap_bytes=256 << 20, debug=False):
        from cuda.bindings import driver as cu

        self.cu = cu
        _check(cu.cuInit(0))
        self.dev = _check(cu.cuDeviceGet(0))
        self.ctx = _check(cu.cuDevicePrimaryCtxRetain(self.dev))
        _check(cu.cuCtxSetCurrent(self.ctx))
        A = cu.CUdevice_attribute
        major = _check(cu.cuDeviceGetAttribute(A.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, self.dev))
        minor = _check(cu.cuDeviceGetAttribute(A.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, self.dev))
        self.arch = f"sm_{major}{minor}"
        self.heap_bytes = heap_bytes
        self.heap = int(_check(cu.cuMemAlloc(heap_bytes)))
        _check(cu.cuMemsetD8(self.heap, 0, heap_bytes))
        self.flags = int(_check(cu.cuMemAlloc(8)))
        _check(cu.cuMemsetD8(self.flags, PEER_LOAD_STORE, 1))
        self.state = DeviceState(STATE_VERSION, 0, 1, STATE_DEBUG if debug else 0, self.heap, heap_bytes,
                                 heap_bytes, SYS_AREA_BYTES, self.flags, 0)
        self._next = SYS_AREA_BYTES
        self.module = None

    def load(self, cubin):
        """Loads a cubin and uploads this PE's state into its pyshmem_d_state."""
        cu = self.cu
        self.module = _check(cu.cuModuleLoadData(cubin))
        ptr, size = _check(cu.cuModuleGetGlobal(self.module, b"pyshmem_d_state"))
        assert size == ctypes.sizeof(DeviceState), size
        _check(cu.cuMemcpyHtoD(ptr, ctypes.addressof(self.state), size))
        return self

    def alloc(self, nbytes, align=256):
        """Bump allocation in the heap's user area; returns the device address."""
        off = -(-self._next // align) * align
        if off + nbytes > self.heap_bytes:
            raise MemoryError("test heap exhausted")
        self._next = off + nbytes
        return self.heap + off

    def scratch(self, nbytes):
        """A device allocation outside the heap (a local, non-symmetric buffer)."""
        return int(_check(self.cu.cuMemAlloc(nbytes)))

    def to_device(self, dptr, array):
        _check(self.cu.cuMemcpyHtoD(dptr, array.ctypes.data, array.nbytes))

    def from_device(self, dptr, shape, dtype):
        out = np.empty(shape, dtype)
        _check(self.cu.cuMemcpyDtoH(out.ctypes.data, dptr, out.nbytes))
        return out

    def launch(self, name, grid, block, *args):
        """Runs kernel `name` and waits. args: (value, ctypes type) pairs; pointers as
        (address, ctypes.c_uint64)."""
        cu = self.cu
        fn = _check(cu.cuModuleGetFunction(self.module, name.encode()))
        values = tuple(v for v, _ in args)
        types = tuple(t for _, t in args)
        _check(cu.cuLaunchKernel(fn, grid, 1, 1, block, 1, 1, 0, 0, (values, types) if args else 0, 0))
        _check(cu.cuCtxSynchronize())

    def memcpy_d2d(self, dst, src, nbytes, times=1):
        """`times` device-to-device copies, then waits (the GPU's own copy, for comparison)."""
        for _ in range(times):
            _check(self.cu.cuMemcpyDtoD(dst, src, nbytes))
        _check(self.cu.cuCtxSynchronize())


def compile_kernels(arch):
    """The test kernels as a cubin for `arch` (NVRTC through pyshmem.cuda; no GPU needed)."""
    import pyshmem.cuda as pcuda

    return pcuda.compile(KERNELS.read_text(), arch=arch, output="cubin", name="device_kernels_gpu").code


def ptr(address):
    return (address, ctypes.c_uint64)


def i32(value):
    return (value, ctypes.c_int32)


def u64(value):
    return (value, ctypes.c_uint64)
