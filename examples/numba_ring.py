"""Ring exchange from inside a Numba CUDA kernel with pyshmem.device.

Each PE's kernel puts its block to the right neighbour with put_signal_nbi (the whole
thread block shares the copy), and one thread waits with signal_wait_until for the
block coming from the left, for several laps; the kernel checks what arrived.

A kernel launch returns before the kernel has run, and the host's barrier_all does not
wait for GPU work: a host barrier right after the launch would let a fast PE's next
lap overwrite a slow PE's inbox before that PE checked it. The two correct ways:
    --sync host    (default) cuda.synchronize() (the kernel is done), then barrier_all
    --sync device  the kernel ends each lap with device.barrier_all_block(), so laps
                   launch back to back and the host synchronises once, before reading

Shows: pyshmem.device in @cuda.jit kernels, device.zeros() for symmetric kernel arrays
(no copies at launch), device.linkable() on a GPU, block-cooperative put_signal, signal
waits, ordering kernels against each other across PEs (host or device barrier).

How to run (no GPU needed: the kernel runs in Numba's CUDA simulator against the CPU
backend; needs `pip install 'pyshmem[numba]'`):
    shmemrun -n 4 --sim python examples/numba_ring.py [--laps N] [--sync host|device]
This example turns the simulator on by itself when NUMBA_ENABLE_CUDASIM is unset. On
GPUs (cuda backend), the same source runs as real kernels:
    NUMBA_ENABLE_CUDASIM=0 shmemrun -n 2 python examples/numba_ring.py
"""

import argparse
import os
import sys

os.environ.setdefault("NUMBA_ENABLE_CUDASIM", "1")  # before numba is imported

import numpy as np  # noqa: E402
from numba import cuda  # noqa: E402

import pyshmem  # noqa: E402
from pyshmem import device  # noqa: E402

THREADS = 32


def ring_step(inbox, outbox, sig, lap, errors, device_barrier):
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
    if device_barrier:  # every PE checked this lap before any PE's next kernel sends
        device.barrier_all_block()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--laps", type=int, default=3)
    parser.add_argument("--sync", choices=("host", "device"), default="host",
                        help="order the laps with a host barrier after cuda.synchronize(), or a barrier in the kernel")
    args = parser.parse_args()
    laps, device_barrier = args.laps, args.sync == "device"
    me, n = pyshmem.my_pe(), pyshmem.n_pes()
    # On a GPU the kernel links pyshmem's device library, whose setup callback gives
    # the module this PE's device state; the simulator needs nothing.
    kernel = cuda.jit(ring_step) if device.SIMULATOR else cuda.jit(link=[device.linkable()])(ring_step)
    # device.zeros: symmetric GPU arrays on a GPU, symmetric host arrays in the simulator.
    inbox = device.zeros(THREADS, np.int64)
    outbox = device.zeros(THREADS, np.int64)
    sig = device.zeros(1, np.uint64)
    errors = device.zeros(1, np.int64)
    for lap in range(1, laps + 1):
        kernel[1, THREADS](inbox, outbox, sig, lap, errors, device_barrier)  # returns before the kernel ran
        if not device_barrier:
            cuda.synchronize()    # this PE's kernel has checked lap (barrier_all does not wait for kernels)
            pyshmem.barrier_all()  # so nobody sends lap+1 before everyone checked lap
    cuda.synchronize()  # the host reads what the kernels wrote only once they are done
    total = pyshmem.zeros(1, np.int64)
    pyshmem.atomic_add(total, int(errors.copy_to_host()[0]), 0)
    pyshmem.barrier_all()
    if me == 0:
        if total[0]:
            print(f"numba_ring: FAILED, {total[0]} wrong elements")
            return 1
        mode = "simulator" if device.SIMULATOR else "GPU"
        print(f"numba_ring: {laps} laps of {THREADS}-element blocks around {n} PEs from Numba kernels ({mode}, "
              f"{args.sync} barrier): OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
