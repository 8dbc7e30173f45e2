"""pyshmem's host calls on GPU arrays while a user kernel still runs on the legacy
default stream (tests/gpu): the kernel spins until the host's atomic arrives, so the
host atomic, copies, waits and tests must not queue behind it (they use pyshmem's
private stream); launch(stream=None) waits for the legacy stream, not for a kernel
spinning on another stream. Prints "OK pe=<k>"."""

import threading
import time

import numpy as np

import pyshmem as shmem
import pyshmem.cuda as pc

SOURCE = r"""
#include <pyshmem/device.cuh>
extern "C" __global__ void wait_for_host(long long* flag, long long want, long long* done) {
  if (threadIdx.x == 0) {
    pyshmem::wait_until(flag, PYSHMEM_CMP_GE, want);
    *done = 1;
  }
}
extern "C" __global__ void store(long long* where, long long value) {
  if (threadIdx.x == 0) *where = value;
}
"""

me, n = shmem.my_pe(), shmem.n_pes()
mod = pc.Module(SOURCE, name="gpu_streams")
flag = pc.zeros(1, np.int64)
done = pc.zeros(1, np.int64)
g = pc.zeros(8, np.int64)
shmem.barrier_all()

# A kernel on the legacy default stream waits for this PE's host atomic.
pc.launch(mod.get_kernel("wait_for_host"), 1, 32, flag, np.int64(1), done, stream=0)
finished = []


def host_calls():
    pc.put(g, np.arange(8, dtype=np.int64), me)
    back = np.zeros(8, np.int64)
    pc.get(back, g, me)
    assert np.array_equal(back, np.arange(8)), back
    assert shmem.test(g[1:2], shmem.CMP_EQ, 1)
    shmem.wait_until(g[2:3], shmem.CMP_EQ, 2)
    shmem.atomic_add(flag, 1, me)  # releases the kernel
    finished.append(time.monotonic())


worker = threading.Thread(target=host_calls, daemon=True)
worker.start()
worker.join(60)
assert finished, "host calls on GPU arrays queued behind a kernel on the legacy stream (or it never saw the atomic)"
pc.synchronize(0)
assert int(done.copy_to_host()[0]) == 1

# launch(stream=None) waits for the legacy stream only: a kernel spinning on another
# (non-blocking) stream keeps running meanwhile.
try:
    from cuda.core import Device
except ImportError:
    Device = None
if Device is not None:
    dev = Device()
    dev.set_current()
    other = dev.create_stream()
    flag2, done2, cell = pc.zeros(1, np.int64), pc.zeros(1, np.int64), pc.zeros(1, np.int64)
    pc.launch(mod.get_kernel("wait_for_host"), 1, 32, flag2, np.int64(1), done2, stream=other)
    t0 = time.monotonic()
    pc.launch(mod.get_kernel("store"), 1, 32, cell, np.int64(7))  # stream=None
    waited = time.monotonic() - t0
    shmem.atomic_add(flag2, 1, me)
    other.sync()
    assert int(cell.copy_to_host()[0]) == 7 and int(done2.copy_to_host()[0]) == 1
    assert waited < 10, waited
shmem.barrier_all()
print(f"OK pe={me}", flush=True)
