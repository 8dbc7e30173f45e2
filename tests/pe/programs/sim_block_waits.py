"""Device-API waits across blocks under the Numba CUDA simulator (shmemrun --sim).

The simulator runs a launch's blocks one after another, so a wait in block 0 for
something block 1 does never ends: it must raise KernelError after
PYSHMEM_SIM_BLOCK_WAIT_TIMEOUT seconds. Waits another PE satisfies must still work.

argv[1]: "caught" (checks the error and the working cases, prints OK pe=<k>) or
"uncaught" (the failing launch only: the job must end with the error, not hang).
"""
import os
import sys
import time

import numpy as np
from numba import cuda

import pyshmem
from pyshmem import device

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))  # tests/
from latency_bounds import assert_within  # noqa: E402

assert device.SIMULATOR, "run with shmemrun --sim (NUMBA_ENABLE_CUDASIM=1)"
me, n = pyshmem.my_pe(), pyshmem.n_pes()
right, left = (me + 1) % n, (me - 1) % n
LIMIT = float(os.environ["PYSHMEM_SIM_BLOCK_WAIT_TIMEOUT"])
T = 8  # threads per block
A = device.array
sig = pyshmem.new_signal()
ivar = pyshmem.zeros(1, np.int32)


@cuda.jit
def k_signal_from_later_block(sig):
    if cuda.blockIdx.x == 0:
        if cuda.threadIdx.x == 0:
            device.signal_wait_until(sig, pyshmem.CMP_EQ, 1)
        cuda.syncthreads()  # the block's other threads wait here
    elif cuda.threadIdx.x == 0:
        device.signal_op(sig, 1, pyshmem.SIGNAL_SET, device.my_pe())


@cuda.jit
def k_flag_from_later_block(ivar):
    if cuda.blockIdx.x == 0:
        device.wait_until(ivar, pyshmem.CMP_NE, 0)  # every thread of block 0 waits
    elif cuda.threadIdx.x == 0:
        device.p(ivar, 1, device.my_pe())


def expect_kernel_error(launch, kernel, call):
    t0 = time.monotonic()
    try:
        launch()
    except pyshmem.KernelError as e:
        took, msg, err = time.monotonic() - t0, str(e), e
    else:
        raise AssertionError(f"{kernel}: no KernelError")
    print(f"TOOK {kernel} {took:.3f}", flush=True)  # the typical value in tests/latency_bounds.py
    # The feature is a time: no progress for LIMIT seconds raises, not sooner, and soon after.
    assert took >= LIMIT, (kernel, took, "raised before the limit")
    assert_within("sim_wait_raise", took - LIMIT, f"{kernel}: past PYSHMEM_SIM_BLOCK_WAIT_TIMEOUT={LIMIT}")
    for part in (f"pyshmem.device.{call} on PE {me}", f"kernel {kernel!r}", "block (0, 0, 0) of grid (2, 1, 1)",
                 "thread (", "1 later block(s)", "one after another", "pyshmem.cuda.Module", "one block",
                 "GPU", "PYSHMEM_SIM_BLOCK_WAIT_TIMEOUT"):
        assert part in msg, (part, msg)
    assert isinstance(err, pyshmem.ShmemError) and isinstance(err, RuntimeError)


if sys.argv[1] == "uncaught":
    k_signal_from_later_block[2, T](A(sig))
    raise AssertionError("the launch returned")

# 1. Waits in block 0 that only block 1 would end: KernelError, bounded.
expect_kernel_error(lambda: k_signal_from_later_block[2, T](A(sig)), "k_signal_from_later_block",
                    "signal_wait_until")
expect_kernel_error(lambda: k_flag_from_later_block[2, T](A(ivar)), "k_flag_from_later_block", "wait_until")
assert pyshmem.signal_fetch(sig) == 0 and ivar[0] == 0  # block 1 never ran
# The other way round works: the later block waits for an earlier one.


@cuda.jit
def k_earlier_block(ivar):
    if cuda.blockIdx.x == 1:
        device.wait_until(ivar, pyshmem.CMP_EQ, 5)
    elif cuda.threadIdx.x == 0:
        device.p(ivar, 5, device.my_pe())


k_earlier_block[2, T](A(ivar))
assert ivar[0] == 5, ivar
pyshmem.barrier_all()

# 2. Block 0 of a 2-block kernel waits for a signal another PE's kernel sends: works.
ring = pyshmem.zeros(2, np.int64)
sigs = pyshmem.zeros(2, np.uint64)


@cuda.jit
def k_ring(ring, sigs, rnd):
    b = cuda.blockIdx.x
    if cuda.threadIdx.x == 0:
        me, n = device.my_pe(), device.n_pes()
        device.put_signal(ring[b:b + 1], ring[b:b + 1], sigs[b:], 1, pyshmem.SIGNAL_ADD, (me + 1) % n)
        device.signal_wait_until(sigs[b:], pyshmem.CMP_GE, rnd)
    cuda.syncthreads()


for rnd in range(1, 4):
    pyshmem.barrier_all()
    k_ring[2, T](A(ring), A(sigs), rnd)
assert (sigs == 3).all(), sigs

# 3. Block 0 waits longer than the limit for another PE's host, which keeps adding to the
#    signal: every change restarts the clock, so the wait ends normally.
slow = pyshmem.new_signal()
STEPS, GAP = 8, max(0.25, LIMIT / 4)


@cuda.jit
def k_slow(slow):
    if cuda.blockIdx.x == 0 and cuda.threadIdx.x == 0:
        device.signal_wait_until(slow, pyshmem.CMP_GE, STEPS)


pyshmem.barrier_all()
t0 = time.monotonic()
if me == 0:
    k_slow[2, T](A(slow))
    assert pyshmem.signal_fetch(slow) == STEPS
    assert time.monotonic() - t0 > LIMIT, "the producer was not slower than the limit"
elif me == 1:
    for _ in range(STEPS):
        time.sleep(GAP)
        pyshmem.put_signal(slow[:0], slow[:0], 0, slow, 1, pyshmem.SIGNAL_ADD)
pyshmem.barrier_all()
print(f"OK pe={me}", flush=True)
