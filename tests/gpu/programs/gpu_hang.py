"""PYSHMEM_TIMEOUT in a GPU kernel: one thread waits for a signal nobody sends. With
PYSHMEM_TIMEOUT=2 the thread prints what it waits for and traps; the synchronous launch
raises. Prints "TRAPPED <message>" (tests/gpu/test_cuda_backend_gpu.py). The CUDA context
is unusable after a trap, so the PE leaves without finalizing the GPU heap (leave())."""

import ctypes
import os
import sys

import numpy as np

import pyshmem as shmem
import pyshmem.cuda as pcuda

SOURCE = r"""
#include <pyshmem/device.cuh>

extern "C" __global__ void wait_forever(uint64_t* sig) {
  if (threadIdx.x == 0 && blockIdx.x == 0) pyshmem::signal_wait_until(sig, PYSHMEM_CMP_GE, 1);
}
"""


def leave(status):
    """End the process now (no finalize), losing no output: os._exit skips every flush,
    so Python's streams and C stdio's buffers (where the kernel's printf text lands)
    are flushed first."""
    sys.stdout.flush()
    sys.stderr.flush()
    ctypes.CDLL(None).fflush(None)
    os._exit(status)


def main():
    sig = pcuda.zeros(1, np.uint64)
    mod = pcuda.Module(SOURCE, name="gpu_hang", target="gpu")
    try:
        pcuda.launch(mod.get_kernel("wait_forever"), 1, 32, sig)
    except shmem.ShmemError as exc:
        print("TRAPPED", exc, flush=True)
    else:
        print("NOT TRAPPED", flush=True)
    leave(0)


if __name__ == "__main__":
    main()
