"""The cost of launching a CUDA C++ kernel on the CPU build (issue 17), with and without
the pool of thread-stack mappings (pyshmem/cpu_stacks.h), side by side in one run.

Run on 1 PE (from the repository root):
    python benchmarks/bench_cpu_launch.py [--reps 25] [--shapes 4x1,4x128,4x1024,16x256]

Two builds of the same kernel (one __syncthreads, so every thread runs), one with
-DPYSHMEM_CPU_NO_STACK_POOL; each repetition launches both, order alternating, and the
medians of the launch times after 3 warm-up rounds are printed per grid x block shape,
with the ratio. The first launch of a shape maps its stacks either way.
"""

import argparse
import statistics
import time

import numpy as np

import pyshmem
import pyshmem.cuda as pcuda

SOURCE = '#include <pyshmem/device.cuh>\nextern "C" __global__ void touch(int* x) { __syncthreads(); }\n'


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=25)
    ap.add_argument("--shapes", default="4x1,4x128,4x1024,16x256", help="GRIDxBLOCK,...")
    args = ap.parse_args()
    pyshmem.init()
    builds = {"pool": pcuda.Module(SOURCE, name="bench_launch_pool", target="cpu"),
              "no pool": pcuda.Module(SOURCE, name="bench_launch_nopool", target="cpu",
                                      options=["-DPYSHMEM_CPU_NO_STACK_POOL"])}
    x = np.zeros(1, np.int32)
    warmup = min(3, args.reps - 1)
    print("shape         pool (us)  no pool (us)  ratio")
    for shape in args.shapes.split(","):
        grid, block = (int(v) for v in shape.split("x"))
        times = {name: [] for name in builds}
        for r in range(args.reps):
            order = list(builds.items()) if r % 2 == 0 else list(builds.items())[::-1]
            for name, mod in order:
                t0 = time.perf_counter()
                pcuda.launch(mod.get_kernel("touch"), grid, block, x)
                times[name].append(time.perf_counter() - t0)
        med = {name: statistics.median(v[warmup:]) * 1e6 for name, v in times.items()}
        print(f"{shape:12s} {med['pool']:10.0f} {med['no pool']:13.0f} {med['no pool'] / med['pool']:6.1f}")
    pyshmem.finalize()


if __name__ == "__main__":
    main()
