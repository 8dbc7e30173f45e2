"""CUDA C++ that uses the device API (``#include <pyshmem/device.cuh>``), from Python.

- ``Module(source)`` builds the source for where this PE's symmetric heap lives and
  ``launch(module.get_kernel(name), grid, block, *args)`` runs a kernel. With the
  ``cuda`` backend the source is compiled with NVRTC and launched on the GPU; with the
  ``cpu`` backend it is compiled with the host C++ compiler against the CPU build of the
  device API, each block of the grid runs on its own host thread and its CUDA threads
  as fibers there (real ``threadIdx``/``blockDim``, ``__syncthreads``, shared memory):
  communication kernels can be developed and tested without a GPU.
- ``compile(source)`` runs NVRTC through ``cuda.core`` with pyshmem's and libcu++'s
  include directories set and returns GPU code (cubin, PTX or LTO-IR); it needs no GPU.
- ``include_paths()`` (or ``python -m pyshmem info --includes``) gives the flags for your
  own nvcc/CMake build.
- ``empty``/``zeros`` make symmetric arrays in GPU memory (``PYSHMEM_BACKEND=cuda``, the
  default when every PE has a GPU) and ``put``/``get`` copy to and from other PEs' copies,
  optionally on a CUDA stream (``stream=``); ``synchronize(stream)`` waits for a stream.
- ``watch_stream(stream)`` tells the proxy thread that kernels pyshmem did not launch
  (Numba, CuPy) may send requests to other nodes, so it polls until they finish.
"""

from pyshmem import _gpu_coll, _gpu_host_ops  # noqa: F401 - the host API's GPU routes (collectives, atomics)
from pyshmem._gpu_arrays import GpuArray, empty, free, get, put, synchronize, watch_stream, zeros
from pyshmem._gpu_kernels import (Kernel, Module, compile, include_paths, launch, nvshmem_include_path,  # noqa: A004
                                   nvshmem_tree_path)

__all__ = ["GpuArray", "Kernel", "Module", "compile", "empty", "free", "get", "include_paths", "launch",
           "nvshmem_include_path", "nvshmem_tree_path", "put", "synchronize", "watch_stream", "zeros"]
