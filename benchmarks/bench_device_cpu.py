"""Device API on the CPU build: direct load/store path next to the proxy path.

Run on 2 PEs, once as is and once with every device call through the proxy:
    shmemrun -n 2 python benchmarks/bench_device_cpu.py
    PYSHMEM_PROXY_ALL=1 shmemrun -n 2 python benchmarks/bench_device_cpu.py

A CUDA C++ kernel (built for the CPU with pyshmem.cuda.Module, one block) times, with
the device API's own clock, medians over batches of:
  - p + quiet to the other PE;
  - ping-pong one-way latency (p + wait_until, round trip / 2);
  - put bandwidth of 64 KiB and 1 MiB (a window of 16 put_nbi then quiet), next to
    memcpy of the same bytes in the same kernel (the ceiling for a load/store put).
No Python in the timed loops. PE 0 prints a table; --json writes it.
"""

import argparse
import json
import os
import statistics

import numpy as np

import pyshmem as shmem
import pyshmem.cuda as pcuda

SOURCE = r"""
#include <pyshmem/device.cuh>
#include <string.h>

// out[i] = mean ns per operation of batch i.
extern "C" __global__ void p_quiet(int64_t* flag, int peer, int iters, int batches, double* out) {
  for (int b = 0; b < batches; ++b) {
    const uint64_t t0 = pyshmem::detail::now_ns();
    for (int i = 0; i < iters; ++i) {
      pyshmem::p(flag, int64_t(i), peer);
      pyshmem::quiet();
    }
    out[b] = double(pyshmem::detail::now_ns() - t0) / iters;
  }
}

extern "C" __global__ void ping_pong(int64_t* flag, int peer, int iters, int batches, double* out) {
  const int me = pyshmem::my_pe();
  int64_t v = 0;
  for (int b = 0; b < batches; ++b) {
    const uint64_t t0 = pyshmem::detail::now_ns();
    for (int i = 0; i < iters; ++i) {
      ++v;
      if (me == 0) {
        pyshmem::p(flag, v, peer);
        pyshmem::wait_until(flag, PYSHMEM_CMP_EQ, v);
      } else {
        pyshmem::wait_until(flag, PYSHMEM_CMP_EQ, v);
        pyshmem::p(flag, v, peer);
      }
    }
    out[b] = double(pyshmem::detail::now_ns() - t0) / iters / 2;  // one way
  }
}

// out[2b] = ns per put_nbi (window, then quiet); out[2b+1] = ns per memcpy of the same size.
extern "C" __global__ void put_bw(char* dst, const char* src, char* local, unsigned long long nbytes, int peer,
                                  int window, int batches, double* out) {
  for (int b = 0; b < batches; ++b) {
    uint64_t t0 = pyshmem::detail::now_ns();
    for (int i = 0; i < window; ++i) pyshmem::putmem_nbi(dst, src, nbytes, peer);
    pyshmem::quiet();
    out[2 * b] = double(pyshmem::detail::now_ns() - t0) / window;
    t0 = pyshmem::detail::now_ns();
    for (int i = 0; i < window; ++i) {
      memcpy(local, src, nbytes);
      __asm__ __volatile__("" ::: "memory");  // keep every copy
    }
    out[2 * b + 1] = double(pyshmem::detail::now_ns() - t0) / window;
  }
}
"""

SIZES = [64 << 10, 1 << 20]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--iters", type=int, default=20000)
    ap.add_argument("--batches", type=int, default=9)
    ap.add_argument("--json")
    args = ap.parse_args()
    me, n = shmem.my_pe(), shmem.n_pes()
    if n != 2:
        raise SystemExit("bench_device_cpu: run on exactly 2 PEs")
    peer = 1 - me
    mod = pcuda.Module(SOURCE, name="bench_device_cpu", target="cpu")
    flag = shmem.zeros(1, np.int64)
    out = np.zeros(2 * args.batches)
    rows = []
    path = "proxy" if os.environ.get("PYSHMEM_PROXY_ALL") == "1" else "direct"

    shmem.barrier_all()
    pcuda.launch(mod.get_kernel("p_quiet"), 1, 1, flag, np.int32(peer), np.int32(args.iters),
                 np.int32(args.batches), out)
    rows.append(("p + quiet (us)", statistics.median(out[:args.batches]) / 1000, None))
    shmem.barrier_all()
    flag[0] = 0
    shmem.barrier_all()
    pcuda.launch(mod.get_kernel("ping_pong"), 1, 1, flag, np.int32(peer), np.int32(args.iters // 4),
                 np.int32(args.batches), out)
    rows.append(("ping-pong one-way (us)", statistics.median(out[:args.batches]) / 1000, None))
    shmem.barrier_all()

    big = max(SIZES)
    dst = shmem.zeros(big, np.uint8)
    src = shmem.full(big, 7, np.uint8)
    local = np.zeros(big, np.uint8)
    for size in SIZES:
        shmem.barrier_all()
        pcuda.launch(mod.get_kernel("put_bw"), 1, 1, dst, src, local, np.uint64(size), np.int32(peer),
                     np.int32(16), np.int32(args.batches), out)
        put_ns = statistics.median(out[0::2])
        copy_ns = statistics.median(out[1::2])
        rows.append((f"put_nbi {size >> 10} KiB (GB/s)", size / put_ns, size / put_ns / (size / copy_ns)))
    shmem.barrier_all()
    if not np.all(dst == 7):
        raise SystemExit(f"PE {me}: put_bw moved wrong data")
    if me == 0:
        print(f"device API, CPU build, {path} path, 2 PEs, medians of {args.batches} batches")
        print("| figure | value | vs memcpy |\n|---|---|---|")
        for name, value, ratio in rows:
            print(f"| {name} | {value:.3f} | {'' if ratio is None else f'{ratio:.2f}'} |")
        if args.json:
            with open(args.json, "w") as f:
                json.dump({"path": path, "rows": [list(r) for r in rows]}, f, indent=2)


if __name__ == "__main__":
    main()
