"""Ring exchange from inside a Numba CUDA kernel with pyshmem.device.

Each PE's kernel puts its block to the right neighbour with put_signal_nbi (the whole
thread block shares the copy), and one thread waits with signal_wait_until for the
block coming from the left, for several laps; the kernel checks what arrived.

Shows: pyshmem.device in @cuda.jit kernels, device.zeros() for symmetric kernel arrays
(no copies at launch), device.linkable() on a GPU, block-cooperative put_signal, signal
waits.

How to run (no GPU needed: the kernel runs in Numba's CUDA simulator against the CPU
backend; needs `pip install 'pyshmem[numba]'`):
    shmemrun -n 4 --sim python examples/numba_ring.py
This example turns the simulator on by itself when NUMBA_ENABLE_CUDASIM is unset. On
GPUs (cuda backend), the same source runs as real kernels:
    NUMBA_ENABLE_CUDASIM=0 shmemrun -n 2 python examples/numba_ring.py
"""

import os
import sys

os.environ.setdefault("NUMBA_ENABLE_CUDASIM", "1")  # before numba is imported

import numpy as np  # noqa: E402
from numba import cuda  # noqa: E402

import pyshmem  # noqa: E402
from pyshmem import device  # noqa: E402

THREADS = 32
LAPS = 3


def ring_step(inbox, outbox, sig, lap, errors):
    """One lap: send outbox to the right neighbour, wait for the left one's block."""
    i = cuda.threadIdx.x
    me, n = device.my_pe(), device.n_pes()
    outbox[i] = me * 1000 + lap * 100 + i
    cuda.syncthreads()
    device.put_signal_nbi_block(inbox, outbox, sig, 1, pyshmem.SIGNAL_ADD, (me + 1) % n)
    if i == 0:
        device.signal_wait_until(sig, pyshmem.CMP_GE, lap)
    cuda.syncthreads()
    left = (me - 1 + n) % n
    if inbox[i] != left * 1000 + lap * 100 + i:
        device.atomic_inc(errors, me)


def main():
    me, n = pyshmem.my_pe(), pyshmem.n_pes()
    # On a GPU the kernel links pyshmem's device library, whose setup callback gives
    # the module this PE's device state; the simulator needs nothing.
    kernel = cuda.jit(ring_step) if device.SIMULATOR else cuda.jit(link=[device.linkable()])(ring_step)
    # device.zeros: symmetric GPU arrays on a GPU, symmetric host arrays in the simulator.
    inbox = device.zeros(THREADS, np.int64)
    outbox = device.zeros(THREADS, np.int64)
    sig = device.zeros(1, np.uint64)
    errors = device.zeros(1, np.int64)
    for lap in range(1, LAPS + 1):
        kernel[1, THREADS](inbox, outbox, sig, lap, errors)
        pyshmem.barrier_all()  # nobody sends lap+1 before everyone checked lap
    total = pyshmem.zeros(1, np.int64)
    pyshmem.atomic_add(total, int(errors.copy_to_host()[0]), 0)
    pyshmem.barrier_all()
    if me == 0:
        if total[0]:
            print(f"numba_ring: FAILED, {total[0]} wrong elements")
            return 1
        mode = "simulator" if device.SIMULATOR else "GPU"
        print(f"numba_ring: {LAPS} laps of {THREADS}-element blocks around {n} PEs from Numba kernels ({mode}): OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
