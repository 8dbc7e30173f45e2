"""CUDA C++ kernels on the CPU build with real thread blocks (fibers), on every PE.

Usage: cpu_block_threads.py MODE
  blocks     shared-memory block reductions (static and dynamic shared memory) at
             32/128/256/1024 threads, 2-D and 3-D blocks, __syncthreads_count/_and/_or,
             __syncwarp with full and partial masks, an intra-block flag wait through the
             device API, and a second launch that must not see the first one's shared
             memory
  signal     put_signal_nbi_block from 128-thread blocks to the right-hand PE: the data,
             and the signal added exactly once per block
  missed     a __syncthreads that half the block never reaches: KernelError, no hang
  overflow   a thread that overflows its stack: the process ends with a report
  measure    prints the cost of a __syncthreads per thread (256-thread block) and the
             resident memory per idle thread of a 96 x 1024 grid
Prints "OK pe=<k>".
"""

import os
import sys
import threading
import time

import numpy as np

import pyshmem as shmem
import pyshmem.cuda as pcuda

SOURCE = r"""
#include <pyshmem/device.cuh>

// The textbook reduction: one partial sum per block, blockDim.x a power of two <= 1024.
extern "C" __global__ void reduce_static(const float* x, float* out) {
  __shared__ float s[1024];
  const unsigned t = threadIdx.x;
  s[t] = x[blockIdx.x * blockDim.x + t];
  __syncthreads();
  for (unsigned stride = blockDim.x / 2; stride > 0; stride >>= 1) {
    if (t < stride) s[t] += s[t + stride];
    __syncthreads();
  }
  if (t == 0) out[blockIdx.x] = s[0];
}

extern "C" __global__ void reduce_dynamic(const float* x, float* out) {
  extern __shared__ float sdata[];
  const unsigned t = threadIdx.x;
  sdata[t] = x[blockIdx.x * blockDim.x + t];
  __syncthreads();
  for (unsigned stride = blockDim.x / 2; stride > 0; stride >>= 1) {
    if (t < stride) sdata[t] += sdata[t + stride];
    __syncthreads();
  }
  if (t == 0) out[blockIdx.x] = sdata[0];
}

// Every thread records its (x, y, z) at its linear index in its block's slice.
extern "C" __global__ void coords(int* out) {
  const unsigned b = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
  const unsigned n = blockDim.x * blockDim.y * blockDim.z;
  const unsigned lin = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  out[b * n + lin] = threadIdx.x + 100 * threadIdx.y + 10000 * threadIdx.z;
}

extern "C" __global__ void vote(int* out) {
  const unsigned t = threadIdx.x;
  const int c = __syncthreads_count(t % 3 == 0);
  const int a = __syncthreads_and(t < blockDim.x);
  const int a0 = __syncthreads_and(t != 5);
  const int o = __syncthreads_or(t == blockDim.x - 1);
  const int o0 = __syncthreads_or(0);
  if (t == 7) {
    out[0] = c; out[1] = a; out[2] = a0; out[3] = o; out[4] = o0;
  }
}

// Lanes meet at __syncwarp: a full warp, then the two halves of each warp separately.
extern "C" __global__ void warps(int* out) {
  __shared__ int s[256];
  const unsigned t = threadIdx.x, lane = t % 32;
  s[t] = t;
  __syncwarp();
  int v = s[(t & ~31u) + (31 - lane)];  // another lane's value, after the warp met
  __syncwarp();                         // every lane read before any lane writes
  const unsigned half = lane < 16 ? 0x0000ffffu : 0xffff0000u;
  s[t] = v * 2;
  __syncwarp(half);
  v = s[(t & ~15u) + (15 - t % 16)];
  out[t] = v;
}

// Thread 0 waits (device API) for a flag thread 33 sets: thread 0 must let the others run.
extern "C" __global__ void flag_wait(int64_t* flag, int* out) {
  if (threadIdx.x == 0) {
    pyshmem::wait_until(flag, PYSHMEM_CMP_EQ, int64_t(1));
    out[blockIdx.x] = 1;
  } else if (threadIdx.x == 33) {
    pyshmem::atomic_set(flag, int64_t(1), pyshmem::my_pe());
  }
  __syncthreads();
}

// Static shared memory is per block: a block sees neither another block's nor an
// earlier launch's values (every block starts from zero here).
extern "C" __global__ void shared_fresh(int* out) {
  __shared__ int seen;
  __syncthreads();
  if (threadIdx.x == 0) {
    out[blockIdx.x] = seen;
    seen = 1000 + blockIdx.x;
  }
  __syncthreads();
}

// Each block puts its chunk to the right-hand PE and adds 1 to the signal there, with
// every thread of the block calling the _block variant; block 0's thread 0 waits for
// all of the left-hand PE's blocks.
extern "C" __global__ void put_signal_blocks(double* src, double* dst, uint64_t* sig, int chunk, int64_t* ran) {
  const int me = pyshmem::my_pe(), right = (me + 1) % pyshmem::n_pes();
  pyshmem::atomic_add(ran, int64_t(1), me);  // every thread of every block runs
  double* mine = src + blockIdx.x * chunk;
  for (int i = threadIdx.x; i < chunk; i += blockDim.x) mine[i] = me * 1000000.0 + blockIdx.x * 1000.0 + i;
  __syncthreads();
  pyshmem::put_signal_nbi_block(dst + blockIdx.x * chunk, mine, chunk, sig, uint64_t(1), PYSHMEM_SIGNAL_ADD, right);
  pyshmem::quiet();
  if (blockIdx.x == 0 && threadIdx.x == 0) pyshmem::signal_wait_until(sig, PYSHMEM_CMP_GE, uint64_t(gridDim.x));
}

extern "C" __global__ void missed(int* out) {
  if (threadIdx.x >= 64) return;
  __syncthreads();
  out[threadIdx.x] = 1;
}

__device__ int deep(int n) {
  volatile char buf[2048];
  buf[0] = static_cast<char>(n);
  return n ? deep(n - 1) + buf[0] : 0;
}
extern "C" __global__ void overflow(int* out) {
  if (threadIdx.x == 5) out[0] = deep(1000);  // ~2 MiB of frames
}

extern "C" __global__ void sync_loop(int iters, int* out) {
  for (int i = 0; i < iters; ++i) __syncthreads();
  if (threadIdx.x == 0) out[blockIdx.x] = iters;
}

// Every thread but the last of each block waits at a __syncthreads while the last one
// polls `go` (device API): the host samples the resident memory meanwhile.
extern "C" __global__ void idle_grid(int64_t* go, int64_t* arrived) {
  if (threadIdx.x == blockDim.x - 1) {
    pyshmem::atomic_add(arrived, int64_t(1), pyshmem::my_pe());
    pyshmem::wait_until(go, PYSHMEM_CMP_EQ, int64_t(1));
  }
  __syncthreads();
}
"""


def rss_kib():
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmRSS:"))


def blocks(mod):
    for nt in (32, 128, 256, 1024):
        grid = 4
        x = np.ones(grid * nt, np.float32)
        out = np.zeros(grid, np.float32)
        pcuda.launch(mod.get_kernel("reduce_static"), grid, nt, x, out)
        assert np.all(out == nt), (nt, out)
        out[:] = 0
        pcuda.launch(mod.get_kernel("reduce_dynamic"), grid, nt, x, out, shared_mem=4 * nt)
        assert np.all(out == nt), (nt, out)
    # The example: 4 blocks of 128 threads give 128.0 each.
    x = np.ones(512, np.float32)
    out = np.zeros(4, np.float32)
    pcuda.launch(mod.get_kernel("reduce_static"), 4, 128, x, out)
    assert out.tolist() == [128.0] * 4, out

    for grid, block in (((2, 1, 1), (16, 8, 1)), ((2, 2, 1), (4, 4, 4)), ((1, 1, 1), (8, 4, 32))):
        n = block[0] * block[1] * block[2]
        nb = grid[0] * grid[1] * grid[2]
        out = np.full(nb * n, -1, np.int32)
        pcuda.launch(mod.get_kernel("coords"), grid, block, out)
        want = [x + 100 * y + 10000 * z for z in range(block[2]) for y in range(block[1]) for x in range(block[0])]
        for b in range(nb):
            assert out[b * n:(b + 1) * n].tolist() == want, (grid, block, b)

    out = np.zeros(5, np.int32)
    pcuda.launch(mod.get_kernel("vote"), 1, 100, out)
    assert out.tolist() == [34, 1, 0, 1, 0], out

    out = np.zeros(256, np.int32)
    pcuda.launch(mod.get_kernel("warps"), 1, 256, out)
    want = []
    for t in range(256):
        u = (t & ~15) + (15 - t % 16)  # the lane whose value t reads second
        want.append(2 * ((u & ~31) + (31 - u % 32)))
    assert out.tolist() == want, out

    flag = shmem.zeros(1, np.int64)
    out = np.zeros(1, np.int32)
    pcuda.launch(mod.get_kernel("flag_wait"), 1, 64, flag, out)
    assert out[0] == 1 and flag[0] == 1

    for _ in range(2):
        out = np.full(3, -1, np.int32)
        pcuda.launch(mod.get_kernel("shared_fresh"), 3, 32, out)
        assert out.tolist() == [0, 0, 0], out
    out = np.full(1, -1, np.int32)
    pcuda.launch(mod.get_kernel("shared_fresh"), 1, 32, out)  # one block: a new thread too
    assert out.tolist() == [0], out
    shmem.free(flag)


def signal(mod):
    me, n = shmem.my_pe(), shmem.n_pes()
    grid, chunk = 4, 1000
    src = shmem.zeros(grid * chunk, np.float64)
    dst = shmem.zeros(grid * chunk, np.float64)
    sig = shmem.zeros(1, np.uint64)
    ran = shmem.zeros(1, np.int64)
    shmem.barrier_all()
    for rep in range(2):  # the same launch twice
        pcuda.launch(mod.get_kernel("put_signal_blocks"), grid, 128, src, dst, sig, np.int32(chunk), ran)
        shmem.barrier_all()
        assert ran[0] == (rep + 1) * grid * 128, ran
        left = (me - 1) % n
        want = np.array([left * 1000000.0 + b * 1000.0 + i for b in range(grid) for i in range(chunk)])
        assert np.array_equal(dst, want), dst
        assert sig[0] == grid, f"signal {sig[0]}: expected one add per block ({grid})"
        shmem.barrier_all()
        sig[0] = 0
        dst[:] = 0
        shmem.barrier_all()


def missed(mod):
    out = np.zeros(128, np.int32)
    try:
        pcuda.launch(mod.get_kernel("missed"), 2, 128, out)
    except shmem.KernelError as exc:
        print(f"KernelError: {exc}")
        msg = str(exc)
        assert "missed" in msg and "threads 0-63 wait at __syncthreads()" in msg, msg
        assert "threads 64-127 ended" in msg and "PE " in msg and "block (" in msg, msg
    else:
        raise AssertionError("a missed __syncthreads was not reported")
    # The runtime still works afterwards.
    x = np.ones(128, np.float32)
    res = np.zeros(1, np.float32)
    pcuda.launch(mod.get_kernel("reduce_static"), 1, 128, x, res)
    assert res[0] == 128.0


def overflow(mod):
    out = np.zeros(1, np.int32)
    sys.stdout.flush()
    pcuda.launch(mod.get_kernel("overflow"), 2, 32, out)
    print("overflow not detected")  # not reached: the process ends


def measure(mod):
    out = np.zeros(1, np.int32)
    k = mod.get_kernel("sync_loop")
    pcuda.launch(k, 1, 256, np.int32(10), out)  # warm up
    iters = 4000
    t0 = time.perf_counter()
    pcuda.launch(k, 1, 256, np.int32(0), out)
    t1 = time.perf_counter()
    pcuda.launch(k, 1, 256, np.int32(iters), out)
    t2 = time.perf_counter()
    per = ((t2 - t1) - (t1 - t0)) / (iters * 256) * 1e9
    print(f"MEASURE syncthreads_ns_per_thread={per:.1f} (256-thread block, {iters} barriers)")

    grid, nt = 96, 1024
    go = shmem.zeros(1, np.int64)
    arrived = shmem.zeros(1, np.int64)
    before = rss_kib()
    t = threading.Thread(target=pcuda.launch, args=(mod.get_kernel("idle_grid"), grid, nt, go, arrived))
    t0 = time.perf_counter()
    t.start()
    deadline = time.time() + 120
    while arrived[0] < grid and time.time() < deadline:
        time.sleep(0.01)
    time.sleep(0.2)
    during = rss_kib()
    t1 = time.perf_counter()
    go[0] = 1
    t.join()
    t2 = time.perf_counter()
    assert arrived[0] == grid, arrived
    per_thread = (during - before) / (grid * nt)
    print(f"MEASURE grid {grid}x{nt}: RSS {before} KiB before, {during} KiB with every thread idle: "
          f"{per_thread:.2f} KiB per idle thread; start {t1 - t0:.2f} s, finish {t2 - t1:.2f} s")


mode = sys.argv[1]
mod = pcuda.Module(SOURCE, name="cpu_block_threads_test", target="cpu")
{"blocks": blocks, "signal": signal, "missed": missed, "overflow": overflow, "measure": measure}[mode](mod)
shmem.barrier_all()
print(f"OK pe={shmem.my_pe()}")
