"""CUDA C++ kernels on the CPU build, launched with pyshmem.cuda on every PE.

Checks: block coordinates (and blockDim: 64x2 threads run per block), blocks running concurrently (block 0 waits for a value the
last block stores), contended device atomics from every block of every PE, get/put
across PEs from a kernel, a device barrier, and a second launch of the same kernel.
Prints "OK pe=<k>".
"""

import numpy as np

import pyshmem as shmem
import pyshmem.cuda as pcuda

SOURCE = r"""
#include <pyshmem/device.cuh>

extern "C" __global__ void coords(int* out) {
  if (threadIdx.x + threadIdx.y + threadIdx.z != 0) return;  // one thread per block writes
  const int b = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
  out[4 * b + 0] = blockIdx.x * 100 + blockIdx.y * 10 + blockIdx.z;
  out[4 * b + 1] = gridDim.x * 100 + gridDim.y * 10 + gridDim.z;
  out[4 * b + 2] = blockDim.x * blockDim.y * blockDim.z;
  out[4 * b + 3] = threadIdx.x + threadIdx.y + threadIdx.z;
}

// Block 0 can only finish if the last block runs at the same time.
extern "C" __global__ void handshake(int64_t* flag, int64_t* seen) {
  const int me = pyshmem::my_pe();
  if (blockIdx.x == 0) {
    pyshmem::wait_until(flag, PYSHMEM_CMP_EQ, int64_t(gridDim.x));
    seen[0] = 1;
  } else if (blockIdx.x == gridDim.x - 1) {
    pyshmem::p(flag, int64_t(gridDim.x), me);
  }
}

extern "C" __global__ void count(int64_t* counter, int per_block, int64_t* mine) {
  for (int i = 0; i < per_block; ++i) {
    const int64_t old = pyshmem::atomic_fetch_add(counter, int64_t(1), 0);
    if (old < 0) mine[0] = -1;  // impossible: values only grow
  }
  pyshmem::atomic_add(&mine[1], int64_t(1), pyshmem::my_pe());
}

extern "C" __global__ void exchange(double* box, double* got, double scale) {
  const int me = pyshmem::my_pe(), n = pyshmem::n_pes();
  const int right = (me + 1) % n;
  if (blockIdx.x == 0) {
    double mine[4];
    for (int i = 0; i < 4; ++i) mine[i] = scale * (me * 10 + i);
    pyshmem::put(box, mine, 4, right);
    pyshmem::barrier_all();  // one thread per PE takes part
    pyshmem::get(got, box, 4, right);  // right's box holds what right's left (me) put
  }
}
"""

me, n = shmem.my_pe(), shmem.n_pes()
mod = pcuda.Module(SOURCE, name="cpu_kernels_test", target="cpu")

out = np.full(4 * 3 * 2 * 2, -1, np.int32)
pcuda.launch(mod.get_kernel("coords"), (3, 2, 2), (64, 2), out)
rows = out.reshape(-1, 4)
want = [(x * 100 + y * 10 + z, 322, 128, 0) for z in range(2) for y in range(2) for x in range(3)]
assert [tuple(r) for r in rows] == want, rows

flag = shmem.zeros(1, np.int64)
seen = np.zeros(1, np.int64)
pcuda.launch(mod.get_kernel("handshake"), 8, 1, flag, seen)
assert seen[0] == 1 and flag[0] == 8

counter = shmem.zeros(1, np.int64)
mine = shmem.zeros(2, np.int64)
shmem.barrier_all()
for _ in range(2):  # the same kernel twice
    pcuda.launch(mod.get_kernel("count"), 6, 32, counter, np.int32(50), mine)
shmem.barrier_all()
assert mine[0] == 0 and mine[1] == 12 * 32, mine  # every thread of every block
if me == 0:
    assert counter[0] == n * 2 * 6 * 32 * 50, counter

box = shmem.zeros(4, np.float64)
got = np.zeros(4, np.float64)
pcuda.launch(mod.get_kernel("exchange"), 2, 1, box, got, 0.5)
assert np.array_equal(got, 0.5 * (me * 10 + np.arange(4))), got
left = (me - 1) % n
assert np.array_equal(box, 0.5 * (left * 10 + np.arange(4))), box
shmem.barrier_all()

# Symmetric torch tensors (pyshmem.torch) and plain CPU tensors as kernel arguments.
try:
    import torch
except ImportError:
    torch = None
if torch is not None:
    import pyshmem.torch as st

    tbox = st.zeros(4, dtype=torch.float64)
    tgot = torch.zeros(4, dtype=torch.float64)
    shmem.barrier_all()
    pcuda.launch(mod.get_kernel("exchange"), 2, 1, tbox, tgot, 2.0)
    assert torch.equal(tgot, 2.0 * (me * 10 + torch.arange(4, dtype=torch.float64))), tgot
    assert torch.equal(tbox, 2.0 * (left * 10 + torch.arange(4, dtype=torch.float64))), tbox
    shmem.barrier_all()
    st.free(tbox)
print(f"OK pe={me}")
