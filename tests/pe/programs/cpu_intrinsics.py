"""CUDA's atomic functions and integer intrinsics in CUDA C++ kernels on the CPU build:
every atomic under contention from all threads of many blocks (global and __shared__
memory, every CUDA overload), the wrapping atomicInc/atomicDec, CAS, float/double
atomicAdd, the integer intrinsics against Python's reference, and a __nanosleep spin on
a flag another thread of the same block sets. The same source compiles for sm_90
(tests/unit/test_cpu_intrinsics_source.py). Prints "OK pe=<k>".
"""

import numpy as np

import pyshmem as shmem
import pyshmem.cuda as pcuda

SOURCE = r"""
#include <pyshmem/device.cuh>

// Every thread of every block hits the same counters.
extern "C" __global__ void contend(int* i, unsigned* u, unsigned long long* ull, long long* ll, float* f,
                                   double* d, unsigned* wrap, int* shared_total) {
  __shared__ int block_sum;
  if (threadIdx.x == 0) block_sum = 0;
  __syncthreads();
  const int t = blockIdx.x * blockDim.x + threadIdx.x;
  atomicAdd(&i[0], 1);
  atomicSub(&i[1], 2);
  atomicAdd(&u[0], 3u);
  atomicAdd(&ull[0], 1ull << 33);
  atomicAdd(&f[0], 0.5f);
  atomicAdd(&d[0], 0.25);
  atomicMax(&i[2], t);
  atomicMin(&i[3], -t);
  atomicMax(&ll[0], (long long)t << 35);
  atomicMin(&ull[1], (unsigned long long)(t + 7));
  atomicOr(&u[1], 1u << (t % 32));
  atomicAnd(&u[2], ~(1u << (t % 32)));
  atomicXor(&u[3], 1u << (t % 5));
  atomicInc(&wrap[0], 9u);   // counts 0..9 then wraps to 0
  atomicDec(&wrap[1], 9u);
  atomicAdd_block(&block_sum, 1);
  atomicAdd_system(&i[4], 1);
  int seen = atomicCAS(&i[5], -1, t);  // the first thread to come claims it
  if (seen == -1) atomicExch(&i[6], t);
  __syncthreads();
  if (threadIdx.x == 0) atomicAdd(shared_total, block_sum);
}

extern "C" __global__ void intrinsics(const unsigned* x, unsigned long long* out, int n) {
  for (int k = threadIdx.x; k < n; k += blockDim.x) {
    const unsigned v = x[k];
    const unsigned long long w = ((unsigned long long)v << 32) | (v ^ 0x5a5a5a5au);
    unsigned long long* o = out + 12 * k;
    o[0] = __popc(v);
    o[1] = __popcll(w);
    o[2] = __clz((int)v);
    o[3] = __clzll((long long)w);
    o[4] = __ffs((int)v);
    o[5] = __ffsll((long long)w);
    o[6] = __brev(v);
    o[7] = __brevll(w);
    o[8] = __umulhi(v, 0x9e3779b9u);
    o[9] = __umul64hi(w, 0x9e3779b97f4a7c15ull);
    o[10] = (unsigned)min((int)v, 1000) + max(v, 5u);
    o[11] = warpSize;
  }
}

// Thread 0 spins on a flag thread 40 of its block sets: __nanosleep lets the others run.
extern "C" __global__ void nanosleep_spin(int* done) {
  __shared__ int flag;
  if (threadIdx.x == 0) flag = 0;
  __syncthreads();
  if (threadIdx.x == 0) {
    long long t0 = clock64();
    while (atomicAdd(&flag, 0) == 0) __nanosleep(100);
    done[blockIdx.x] = clock64() >= t0 ? 1 : -1;
  } else if (threadIdx.x == 40) {
    atomicExch(&flag, 1);
  }
}
"""


def brev(v, bits):
    return int(format(v, f"0{bits}b")[::-1], 2)


def clz(v, bits):
    return bits - v.bit_length()


def ffs(v):
    return (v & -v).bit_length()


me = shmem.my_pe()
mod = pcuda.Module(SOURCE, name="cpu_intrinsics")
blocks, threads = 8, 128
total = blocks * threads
i = np.array([0, 0, -1, 1, 0, -1, -1], np.int32)
u = np.array([0, 0, 0xFFFFFFFF, 0], np.uint32)
ull = np.array([0, 2**64 - 1], np.uint64)
ll = np.array([-(2**62)], np.int64)
f, d = np.zeros(1, np.float32), np.zeros(1, np.float64)
wrap = np.array([0, 0], np.uint32)
shared_total = np.zeros(1, np.int32)
pcuda.launch(mod.get_kernel("contend"), blocks, threads, i, u, ull, ll, f, d, wrap, shared_total)
assert i[0] == total and i[1] == -2 * total and i[4] == total, i
assert i[2] == total - 1 and i[3] == -(total - 1), i
assert 0 <= i[5] < total and i[6] == i[5], i  # exactly one thread claimed it, and recorded itself
assert u[0] == 3 * total and u[1] == 0xFFFFFFFF and u[2] == 0, u
want_xor = 0
for t in range(total):
    want_xor ^= 1 << (t % 5)
assert u[3] == want_xor, u
assert int(ull[0]) == total << 33 and int(ull[1]) == 7, ull
assert int(ll[0]) == (total - 1) << 35, ll
assert f[0] == 0.5 * total and d[0] == 0.25 * total, (f, d)
inc = dec = 0
for _ in range(total):
    inc = 0 if inc >= 9 else inc + 1
    dec = 9 if dec == 0 or dec > 9 else dec - 1
assert (int(wrap[0]), int(wrap[1])) == (inc, dec), (wrap, inc, dec)
assert shared_total[0] == total, shared_total

rng = np.random.default_rng(5 + me)
x = np.concatenate([np.array([0, 1, 0x80000000, 0xFFFFFFFF], np.uint32), rng.integers(0, 2**32, 60, dtype=np.uint32)])
out = np.zeros((x.size, 12), np.uint64)
pcuda.launch(mod.get_kernel("intrinsics"), 1, 32, x, out, np.int32(x.size))
for k, v in enumerate(int(a) for a in x):
    w = (v << 32) | (v ^ 0x5A5A5A5A)
    sv = v - (1 << 32) if v >= 1 << 31 else v
    want = [bin(v).count("1"), bin(w).count("1"), clz(v, 32), clz(w, 64), ffs(v), ffs(w), brev(v, 32), brev(w, 64),
            (v * 0x9E3779B9) >> 32, (w * 0x9E3779B97F4A7C15) >> 64, (min(sv, 1000) + max(v, 5)) % 2**32, 32]
    got = [int(g) for g in out[k]]
    assert got == want, (hex(v), got, want)

done = np.zeros(4, np.int32)
pcuda.launch(mod.get_kernel("nanosleep_spin"), 4, 64, done)
assert done.tolist() == [1, 1, 1, 1], done
shmem.barrier_all()
print(f"OK pe={me}", flush=True)
