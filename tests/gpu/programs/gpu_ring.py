"""Several PEs sharing one GPU (or one GPU each) through the cuda backend: symmetric GPU
arrays, a CUDA C++ kernel that sends a block to the right neighbour with
put_signal_nbi_block and waits for the left one's, an all-to-all of p() from one
thread per PE, fetching atomics and g toward PE 0, host-API atomics and waits on GPU
arrays, put_signal into GPU arrays, and host put/get on a stream.
Prints "OK pe=<k>" (tests/gpu)."""

import numpy as np

import pyshmem as shmem
import pyshmem.cuda as pc
from pyshmem._lib import lib

SOURCE = r"""
#include <pyshmem/device.cuh>
extern "C" __global__ void ring(float* inbox, const float* outbox, unsigned long long n, uint64_t* sig, int laps) {
  const int me = pyshmem::my_pe(), npes = pyshmem::n_pes();
  for (int lap = 1; lap <= laps; ++lap) {
    pyshmem::put_signal_nbi_block(inbox, outbox, n, sig, 1, PYSHMEM_SIGNAL_ADD, (me + 1) % npes);
    if (threadIdx.x == 0) pyshmem::signal_wait_until(sig, PYSHMEM_CMP_GE, uint64_t(lap));
    __syncthreads();
    pyshmem::barrier_all_block();  // nobody overwrites an inbox before its owner is done
  }
}
extern "C" __global__ void all_to_all(long long* slots) {
  const int me = pyshmem::my_pe(), npes = pyshmem::n_pes();
  for (int pe = threadIdx.x; pe < npes; pe += blockDim.x) pyshmem::p(&slots[me], (long long)(me * 10 + pe), pe);
  pyshmem::quiet();
}
extern "C" __global__ void fetch_ops(long long* counter, long long* out) {
  if (threadIdx.x == 0) {  // fetched values come back in the proxy's result cells when PE 0 is remote
    const int me = pyshmem::my_pe();
    out[0] = pyshmem::atomic_fetch_add(counter, (long long)(me + 1), 0);
    out[1] = pyshmem::g(counter, 0);
    pyshmem::quiet();
  }
}
"""

me, n = shmem.my_pe(), shmem.n_pes()
assert lib.gpu_active(), lib.gpu_describe()
N = 1 << 16
inbox = pc.zeros(N, np.float32)
outbox = pc.empty(N, np.float32)
outbox.copy_from_host(np.arange(N, dtype=np.float32) + 1000 * me)
sig = pc.zeros(1, np.uint64)
slots = pc.zeros(n, np.int64)
mod = pc.Module(SOURCE, name="gpu_ring")
assert mod.target == "gpu"
shmem.barrier_all()
pc.launch(mod.get_kernel("ring"), 1, 256, inbox, outbox, np.uint64(N), sig, np.int32(3))
left = (me - 1) % n
assert np.array_equal(inbox.copy_to_host(), np.arange(N, dtype=np.float32) + 1000 * left)
assert int(sig.copy_to_host()[0]) == 3
assert shmem.signal_fetch(sig) == 3 and shmem.signal_wait_until(sig, shmem.CMP_GE, 3) == 3  # host waits on GPU memory
pc.launch(mod.get_kernel("all_to_all"), 1, 64, slots)
shmem.barrier_all()
assert slots.copy_to_host().tolist() == [pe * 10 + me for pe in range(n)]
assert shmem.test_all_vector(slots, shmem.CMP_EQ, [pe * 10 + me for pe in range(n)])  # vector test on GPU memory
# Atomics on PE 0's GPU heap: from the same node always; from another node only through
# a UCX transport whose NIC does atomics (not the wheel's tcp/shared memory), else the
# host API refuses them naming the transports (a kernel's request would trap).
problem = lib.gpu_atomics_problem(0)
expected = shmem.zeros(2, np.int64)  # [sum of me + 1, count] over the PEs that can: host atomics, host memory
shmem.barrier_all()
shmem.atomic_add(expected[:1], 0 if problem else me + 1, 0)
shmem.atomic_add(expected[1:], 0 if problem else 1, 0)
shmem.barrier_all()
counter = pc.zeros(1, np.int64)
fetched = pc.zeros(2, np.int64)
shmem.barrier_all()
if not problem:
    pc.launch(mod.get_kernel("fetch_ops"), 1, 32, counter, fetched)
    old, seen = fetched.copy_to_host().tolist()
    assert 0 <= old and seen >= old + me + 1, (old, seen)
shmem.barrier_all()
if me == 0:
    assert int(counter.copy_to_host()[0]) == int(expected[0]), (counter.copy_to_host(), expected)
# host-API atomics on GPU arrays (a one-thread kernel of pyshmem/kernels/host_amo.cu)
hc = pc.zeros(1, np.int64)
shmem.barrier_all()
if problem:
    assert "run atomics in software on the target's CPU" in problem, problem
    try:
        shmem.atomic_fetch_add(hc, me + 1, 0)
        raise AssertionError("an atomic on another node's GPU memory over a software-atomic transport did not raise")
    except NotImplementedError as exc:
        assert f"an atomic on PE 0's GPU memory: UCX reaches that PE through" in str(exc), exc
else:
    olds = [shmem.atomic_fetch_add(hc, me + 1, 0) for _ in range(3)]
    shmem.atomic_inc(hc, 0)
    assert all(0 <= o < 4 * n * (n + 1) for o in olds), olds
shmem.barrier_all()
if me == 0:
    total = 3 * int(expected[0]) + int(expected[1])
    assert shmem.atomic_fetch(hc, 0) == total
    assert shmem.atomic_compare_swap(hc, total, -1, 0) == total
    assert int(hc.copy_to_host()[0]) == -1
shmem.barrier_all()
# host put_signal into a GPU array with a GPU signal: the data is there when the signal is
box = pc.zeros(16, np.int64)
hs = pc.zeros(1, np.uint64)
shmem.barrier_all()
if not lib.gpu_atomics_problem((me + 1) % n) and not lib.gpu_atomics_problem(left):
    shmem.put_signal(box, np.arange(16, dtype=np.int64) + me, (me + 1) % n, hs, 1, shmem.SIGNAL_ADD)
    assert shmem.signal_wait_until(hs, shmem.CMP_GE, 1) == 1
    assert np.array_equal(box.copy_to_host(), np.arange(16) + left)
shmem.barrier_all()
host = np.zeros(N, np.float32)
pc.get(host, inbox, (me + 1) % n, stream=0)
pc.synchronize(0)  # a stream= copy completes in stream order
assert np.array_equal(host, np.arange(N, dtype=np.float32) + 1000 * me)
shmem.barrier_all()
print(f"OK pe={me}")
