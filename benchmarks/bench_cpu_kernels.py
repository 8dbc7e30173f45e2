"""CUDA C++ kernels on the CPU build next to the Numba CUDA simulator (issue 17), in one run.

Run on 1 PE (from the repository root):
    python benchmarks/bench_cpu_kernels.py
    python benchmarks/bench_cpu_kernels.py --reps 7 --json out.json

What it measures, the same kernel shape (256 threads per block, a grid-stride loop that
sums into one float per thread, then a block reduction) on both:
  (a) tree:  a shared-memory tree reduction (__syncthreads between the 8 steps);
  (b) warp:  a __shfl_down_sync tree per warp, the warps' sums across shared memory,
      then a shuffle tree in the first warp. The Numba simulator has no warp shuffles
      (nor __syncwarp): its version does the same per-warp step in shared memory, a
      cuda.syncthreads() between steps; the output says which it ran;
  (s) __syncthreads: one 256-thread block looping k barriers, the difference of two k
      values, per thread per barrier.
The CPU build sums all of --elements (64 MiB of float32 by default, grid --grid); the
simulator (a Python thread per CUDA thread) only slices (--sim-elements, grid = slice /
(256 x --sim-per-thread)), and the CPU build also runs each slice at the simulator's
exact launch. Per-element throughput (elements/s) is compared; the full run's ratio is
to the fastest simulator row. Thread switches are the kernel library's count
(pyshmem_cpu_switches) read around each launch. Repetitions interleave the CPU build
and the simulator (order alternating) after --warmup rounds; medians are printed.
Results are checked against NumPy (exactly: integer-valued floats) before timing and
after every timed launch.

The simulator is enabled here (NUMBA_ENABLE_CUDASIM=1 before numba is imported), in the
same process; where numba is already imported without it, the simulator part runs in a
subprocess of this script (--sim-only) and its figures are collected.
(c) the 4-PE MoE dispatch/combine at 128 threads per block is benchmarks/bench_moe_threads.py.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

BLOCK = 256
CPU_SOURCE = r"""
// (a) shared-memory tree reduction: one partial sum per block.
extern "C" __global__ void tree_sum(const float* x, float* out, long long n) {
  __shared__ float s[256];
  float v = 0.f;
  const long long stride = (long long)blockDim.x * gridDim.x;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) v += x[i];
  s[threadIdx.x] = v;
  __syncthreads();
  for (unsigned d = blockDim.x / 2; d > 0; d >>= 1) {
    if (threadIdx.x < d) s[threadIdx.x] += s[threadIdx.x + d];
    __syncthreads();
  }
  if (threadIdx.x == 0) out[blockIdx.x] = s[0];
}

// (b) warp-shuffle reduction: a shuffle tree per warp, the warps' sums in shared memory.
extern "C" __global__ void warp_sum(const float* x, float* out, long long n) {
  __shared__ float warp_sums[32];
  float v = 0.f;
  const long long stride = (long long)blockDim.x * gridDim.x;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) v += x[i];
  for (int d = 16; d > 0; d >>= 1) v += __shfl_down_sync(0xffffffffu, v, d);
  if ((threadIdx.x & 31) == 0) warp_sums[threadIdx.x / 32] = v;
  __syncthreads();
  if (threadIdx.x < 32) {
    v = threadIdx.x < blockDim.x / 32 ? warp_sums[threadIdx.x] : 0.f;
    for (int d = 16; d > 0; d >>= 1) v += __shfl_down_sync(0xffffffffu, v, d);
    if (threadIdx.x == 0) out[blockIdx.x] = v;
  }
}

// (s) k barriers.
extern "C" __global__ void sync_loop(int k, int* out) {
  for (int i = 0; i < k; ++i) __syncthreads();
  if (threadIdx.x == 0) out[blockIdx.x] = k;
}
"""


def parse_ints(text):
    return [int(v) for v in text.split(",")]


def data(n, per_block):
    """n integer-valued float32s, small enough that every block's sum is exact in float32."""
    hi = min(7, (2**24 - 1) // max(per_block, 1))
    if hi < 1:
        raise SystemExit(f"bench_cpu_kernels: {per_block} elements per block is too many for an exact float32 check")
    return np.random.default_rng(17).integers(0, hi + 1, n).astype(np.float32)


def reference(x, grid):
    """Each block's sum under the grid-stride loop (block b sums x[i], i % (grid*256) // 256 == b)."""
    per = grid * BLOCK
    padded = np.zeros(-(-len(x) // per) * per, np.float64)
    padded[:len(x)] = x
    return padded.reshape(-1, grid, BLOCK).sum(axis=(0, 2))


def check(name, who, out, ref):
    if not np.array_equal(out.astype(np.float64), ref):
        raise SystemExit(f"bench_cpu_kernels: {name} on the {who} is wrong: {out[:4]} ... vs NumPy {ref[:4]} ...")


# ---- the CPU build ----

class CpuBuild:
    def __init__(self):
        import pyshmem.cuda as pcuda

        self.pcuda = pcuda
        self.mod = pcuda.Module(CPU_SOURCE, name="bench_cpu_kernels", target="cpu")
        self.kernels = {k: self.mod.get_kernel(k) for k in ("tree_sum", "warp_sum", "sync_loop")}

    def switches(self):
        return self.mod._lib.pyshmem_cpu_switches()

    def launch(self, kernel, grid, *args):
        """(seconds, thread switches) of one launch."""
        s0 = self.switches()
        t0 = time.perf_counter()
        self.pcuda.launch(self.kernels[kernel], grid, BLOCK, *args)
        dt = time.perf_counter() - t0
        return dt, self.switches() - s0

    def reduce(self, kernel, x, grid, out):
        return self.launch(kernel, grid, x, out, np.int64(len(x)))

    def sync(self, k, out):
        return self.launch("sync_loop", 1, np.int32(k), out)


# ---- the Numba simulator ----

def sim_kernels():
    """The simulator's kernels and whether (b) uses real warp shuffles."""
    global cuda, float32  # module globals: the simulator swaps the kernels' global `cuda` for its fake module
    from numba import cuda, float32
    from numba.cuda.simulator.kernelapi import FakeCUDAModule

    @cuda.jit(device=True)
    def thread_sum(x, n):  # the grid-stride loop: this thread's share of x, summed
        v = float32(0)
        i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
        stride = cuda.blockDim.x * cuda.gridDim.x
        while i < n:
            v += x[i]
            i += stride
        return v

    @cuda.jit(device=True)
    def shared_tree(s, t, rank, d):  # s[t] += s[t + d] for rank < d, d halving to 1, a barrier after each step
        while d > 0:
            if rank < d:
                s[t] += s[t + d]
            cuda.syncthreads()
            d //= 2

    @cuda.jit
    def tree_sum(x, out, n):
        s = cuda.shared.array(256, float32)
        t = cuda.threadIdx.x
        v = thread_sum(x, n)
        s[t] = v
        cuda.syncthreads()
        shared_tree(s, t, t, cuda.blockDim.x // 2)
        if t == 0:
            out[cuda.blockIdx.x] = s[0]

    @cuda.jit
    def warp_sum_shfl(x, out, n):  # used only where the simulator has shuffles
        warp_sums = cuda.shared.array(32, float32)
        t = cuda.threadIdx.x
        v = thread_sum(x, n)
        d = 16
        while d > 0:
            v += cuda.shfl_down_sync(0xFFFFFFFF, v, d)
            d //= 2
        if t % 32 == 0:
            warp_sums[t // 32] = v
        cuda.syncthreads()
        if t < 32:
            v = warp_sums[t] if t < cuda.blockDim.x // 32 else float32(0)
            d = 16
            while d > 0:
                v += cuda.shfl_down_sync(0xFFFFFFFF, v, d)
                d //= 2
            if t == 0:
                out[cuda.blockIdx.x] = v

    @cuda.jit
    def warp_sum_shared(x, out, n):  # the same per-warp tree in shared memory
        s = cuda.shared.array(256, float32)
        warp_sums = cuda.shared.array(32, float32)
        t = cuda.threadIdx.x
        lane = t % 32
        v = thread_sum(x, n)
        s[t] = v
        cuda.syncthreads()
        shared_tree(s, t, lane, 16)  # per warp
        if lane == 0:
            warp_sums[t // 32] = s[t]
        cuda.syncthreads()
        if t < 32:
            s[t] = warp_sums[t] if t < cuda.blockDim.x // 32 else float32(0)
        cuda.syncthreads()
        shared_tree(s, t, t, 16)  # across the warps' sums
        if t == 0:
            out[cuda.blockIdx.x] = s[0]

    @cuda.jit
    def sync_loop(k, out):
        for _ in range(k):
            cuda.syncthreads()
        if cuda.threadIdx.x == 0:
            out[cuda.blockIdx.x] = k

    shfl = hasattr(FakeCUDAModule, "shfl_down_sync")
    return {"tree_sum": tree_sum, "warp_sum": warp_sum_shfl if shfl else warp_sum_shared,
            "sync_loop": sync_loop}, shfl


class Simulator:
    def __init__(self):
        self.kernels, self.shfl = sim_kernels()

    def reduce(self, kernel, x, grid, out):
        t0 = time.perf_counter()
        self.kernels[kernel][grid, BLOCK](x, out, len(x))
        return time.perf_counter() - t0, None

    def sync(self, k, out):
        t0 = time.perf_counter()
        self.kernels["sync_loop"][1, BLOCK](k, out)
        return time.perf_counter() - t0, None


def simulator_in_process():
    """True when this process can run the simulator (numba not imported yet, or imported with it)."""
    if "numba" not in sys.modules:
        os.environ["NUMBA_ENABLE_CUDASIM"] = "1"
        return True
    from numba import config

    return bool(config.ENABLE_CUDASIM)


# ---- the measurements ----

def cases(args):
    """(name, kernel, side, x, grid, out, ref) of every reduction run."""
    full = data(args.elements, -(-args.elements // args.grid))
    runs = []
    for kernel in ("tree_sum", "warp_sum"):
        if "cpu" in args.sides:
            runs.append(("full", kernel, "cpu", full, args.grid))
        for n in args.sim_elements:
            grid = max(1, n // (BLOCK * args.sim_per_thread))
            x = full[:n] if n <= len(full) else data(n, -(-n // grid))
            for side in args.sides:
                runs.append((f"slice {n}", kernel, side, x, grid))
    return [(name, kernel, side, x, grid, np.zeros(grid, np.float32), reference(x, grid))
            for name, kernel, side, x, grid in runs]


def measure(args, sides):
    """Raw timings: {key: [(seconds, switches), ...]} over the timed repetitions."""
    runs = cases(args)
    sync_ks = {"cpu": args.sync_k, "sim": args.sim_sync_k}
    sync_out = np.zeros(1, np.int32)
    # correctness first, untimed
    for name, kernel, side, x, grid, out, ref in runs:
        out[...] = -1
        sides[side].reduce(kernel, x, grid, out)
        check(kernel, side, out, ref)
    for side in args.sides:
        for k in sync_ks[side]:
            sync_out[...] = -1
            sides[side].sync(k, sync_out)
            if sync_out[0] != k:
                raise SystemExit(f"bench_cpu_kernels: sync_loop({k}) on the {side} is wrong: {sync_out[0]}")
    results = {}
    for rep in range(args.warmup + args.reps):
        order = list(args.sides) if rep % 2 == 0 else list(args.sides)[::-1]
        for side in order:
            for name, kernel, s, x, grid, out, ref in runs:
                if s != side:
                    continue
                out[...] = -1
                t = sides[side].reduce(kernel, x, grid, out)
                check(kernel, side, out, ref)
                if rep >= args.warmup:
                    results.setdefault(f"{kernel}|{name}|{side}", []).append(t)
            for k in sync_ks[side]:
                t = sides[side].sync(k, sync_out)
                if rep >= args.warmup:
                    results.setdefault(f"sync|{k}|{side}", []).append(t)
    return results


def measure_sim_subprocess(args):
    cmd = [sys.executable, str(Path(__file__).resolve()), "--sim-only", *args.forward]
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1")
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        raise SystemExit(f"bench_cpu_kernels: the simulator subprocess failed:\n{proc.stdout}{proc.stderr}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def med(samples, i=0):
    return statistics.median(s[i] for s in samples)


def report(args, results, shfl):
    def row(kernel, name, side):
        key = f"{kernel}|{name}|{side}"
        if key not in results:
            return None
        seconds = med(results[key])
        n = args.elements if name == "full" else int(name.split()[1])
        grid = args.grid if name == "full" else max(1, n // (BLOCK * args.sim_per_thread))
        sw = None if side == "sim" else med([(s / t,) for t, s in results[key]])
        return {"kernel": kernel, "run": name, "side": side, "elements": n, "grid": grid,
                "per_thread": -(-n // (grid * BLOCK)), "median_s": seconds, "elements_per_s": n / seconds,
                "switches_per_s": sw, "switches": None if side == "sim" else med([(s,) for _, s in results[key]])}

    label = {"cpu": "CPU build", "sim": "Numba simulator"}
    titles = {"tree_sum": "(a) shared-memory tree block reduction",
              "warp_sum": "(b) warp-shuffle block reduction" + (
                  "" if shfl else " (simulator: no shfl_down_sync in numba.cuda.simulator, so its kernel does the "
                                  "same per-warp tree in shared memory with cuda.syncthreads() between steps)")}
    load = os.getloadavg()
    print(f"CUDA C++ kernels on the CPU build vs the Numba CUDA simulator, {BLOCK} threads per block, "
          f"{args.reps} interleaved repetitions (medians), load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}, "
          f"{os.cpu_count()} CPUs")
    print(f"results checked against NumPy (exact) before timing and after every launch: correct")
    rows, summary = [], {}
    for kernel in ("tree_sum", "warp_sum"):
        print()
        print(titles[kernel])
        print("| run | elements | grid | per thread | median ms | elements/s | thread switches/s | vs simulator |")
        print("|---|---|---|---|---|---|---|---|")
        sims = [r for r in (row(kernel, f"slice {n}", "sim") for n in args.sim_elements) if r]
        best_sim = max((r["elements_per_s"] for r in sims), default=None)
        order = [("full", "cpu")] + [(f"slice {n}", s) for n in args.sim_elements for s in ("cpu", "sim")]
        for name, side in order:
            r = row(kernel, name, side)
            if r is None:
                continue
            if side == "sim":
                ratio = 1.0
            elif name == "full":
                ratio = r["elements_per_s"] / best_sim if best_sim else None
            else:
                sim = row(kernel, name, "sim")
                ratio = r["elements_per_s"] / sim["elements_per_s"] if sim else None
            r["ratio"] = ratio
            rows.append(r)
            what = f"{label[side]}, {'full' if name == 'full' else 'slice'}"
            sw = "n/a" if r["switches_per_s"] is None else f"{r['switches_per_s']:.3g}"
            rt = "n/a" if ratio is None else f"{ratio:,.0f}x"
            print(f"| {what} | {r['elements']:,} | {r['grid']} | {r['per_thread']} | {r['median_s'] * 1e3:,.2f} | "
                  f"{r['elements_per_s']:.3g} | {sw} | {rt} |")
            if name == "full" and ratio is not None:
                summary[kernel] = ratio
    print()
    print(f"(s) __syncthreads, one block of {BLOCK} threads, k barriers (difference of two k)")
    print("| side | k | median ms | ns per thread per barrier | thread switches/s |")
    print("|---|---|---|---|---|")
    sync_rows = {}
    for side, ks in (("cpu", args.sync_k), ("sim", args.sim_sync_k)):
        if side not in args.sides:
            continue
        a, b = (results[f"sync|{k}|{side}"] for k in ks)
        ns = (med(b) - med(a)) / ((ks[1] - ks[0]) * BLOCK) * 1e9
        sw = "n/a" if side == "sim" else f"{(med(b, 1) - med(a, 1)) / (med(b) - med(a)):.3g}"
        sync_rows[side] = ns
        print(f"| {label[side]} | {ks[0]}, {ks[1]} | {med(a) * 1e3:,.2f}, {med(b) * 1e3:,.2f} | {ns:,.1f} | {sw} |")
    print()
    for kernel, ratio in summary.items():
        print(f"target >= 100x the simulator on {kernel}: {ratio:,.0f}x, {'met' if ratio >= 100 else 'NOT met'}")
    if "cpu" in sync_rows:
        ns = sync_rows["cpu"]
        print(f"target __syncthreads <= 50 ns per thread: {ns:.1f} ns, {'met' if ns <= 50 else 'NOT met'}")
    print("memory per idle kernel thread (target <= 8 KiB): measured by "
          "tests/pe/test_cpu_block_threads.py::test_measure_block_threads (4.07 KiB, docs/performance.md)")
    print("(c) 4-PE MoE dispatch/combine at 128 threads per block: shmemrun -n 4 python benchmarks/bench_moe_threads.py "
          "(docs/performance.md, 'MoE example at 128 threads per block')")
    if args.json:
        Path(args.json).write_text(json.dumps({"elements": args.elements, "grid": args.grid, "reps": args.reps,
                                               "load_average": load, "simulator_shfl": shfl, "rows": rows,
                                               "sync_ns_per_thread": sync_rows, "ratios": summary}, indent=2))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--elements", type=int, default=16 << 20, help="float32s the CPU build sums (default 64 MiB)")
    ap.add_argument("--grid", type=int, default=16, help="blocks of the CPU build's full run")
    ap.add_argument("--sim-elements", type=parse_ints, default=[65536, 262144],
                    help="slice sizes both run at the simulator's launch (comma-separated)")
    ap.add_argument("--sim-per-thread", type=int, default=256, help="elements per thread of a slice's launch")
    ap.add_argument("--sync-k", type=parse_ints, default=[1000, 11000], help="two barrier counts, CPU build")
    ap.add_argument("--sim-sync-k", type=parse_ints, default=[2, 42], help="two barrier counts, simulator")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--warmup", type=int, default=1)
    ap.add_argument("--json", help="write the figures here")
    ap.add_argument("--sim-only", action="store_true", help=argparse.SUPPRESS)  # the subprocess's part
    raw = sys.argv[1:] if argv is None else list(argv)
    args = ap.parse_args(raw)
    args.forward = [a for a in raw if a != "--sim-only"]
    if len(args.sync_k) != 2 or len(args.sim_sync_k) != 2:
        ap.error("--sync-k and --sim-sync-k take two values")

    if args.sim_only:
        args.sides = ("sim",)
        sim = Simulator()
        res = measure(args, {"sim": sim})
        print(json.dumps({"shfl": sim.shfl, "results": res}))
        return
    if simulator_in_process():
        args.sides = ("cpu", "sim")
        sim = Simulator()
        results = measure(args, {"cpu": CpuBuild(), "sim": sim})
        shfl = sim.shfl
    else:  # numba already imported for a GPU: the simulator in a subprocess, after the CPU build
        args.sides = ("cpu",)
        results = measure(args, {"cpu": CpuBuild()})
        sub = measure_sim_subprocess(args)
        results.update({k: [tuple(t) for t in v] for k, v in sub["results"].items()})
        shfl = sub["shfl"]
        args.sides = ("cpu", "sim")
        print("(the simulator ran in a subprocess: numba was already imported without NUMBA_ENABLE_CUDASIM)")
    report(args, results, shfl)


if __name__ == "__main__":
    main()
