"""Single-GPU figures for the device API (one PE, heap in device memory; harness.py):
p + quiet latency from one thread, and put bandwidth at thread/warp/block scope next to
the GPU's own device-to-device copy (cuMemcpyDtoD) measured in the same run.

    python tests/gpu/bench_device.py [--json out.json]

Medians of 7 runs, each moving 10 x 256 MiB (bandwidth counts bytes copied once).
Prints a Markdown table.
"""

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402

from harness import GpuPE, compile_kernels, i32, ptr, u64, gpu_available  # noqa: E402

REPS = 7


def median_time(fn):
    times = []
    for _ in range(REPS):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", help="also write the figures here")
    args = ap.parse_args()
    ok, what = gpu_available()
    if not ok:
        sys.exit(f"bench_device: {what}")
    pe = GpuPE(heap_bytes=1 << 30)
    pe.load(compile_kernels(pe.arch))
    rows = []

    sym, ns = pe.alloc(8), pe.scratch(8)
    iters = 100000
    lat = []
    for _ in range(REPS):
        pe.launch("p_latency", 1, 1, ptr(sym), i32(iters), ptr(ns))
        lat.append(int(pe.from_device(ns, 1, np.uint64)[0]) / iters / 1000.0)
    rows.append({"figure": "p + quiet, one thread (us)", "value": round(statistics.median(lat), 4)})

    n = 256 << 20
    src, dst = pe.alloc(n), pe.alloc(n)
    pe.launch("put_scoped", 132, 512, ptr(dst), ptr(src), u64(n), i32(2), i32(1))  # warm up
    reps = 10  # per timing: launch overhead stays small next to 2.5 GiB moved
    copy_s = median_time(lambda: pe.memcpy_d2d(dst, src, n, reps))
    copy_gbs = reps * n / copy_s / 1e9
    rows.append({"figure": "cuMemcpyDtoD 256 MiB (GB/s)", "value": round(copy_gbs, 1)})
    for scope, name in ((0, "thread"), (1, "warp"), (2, "block")):
        t = median_time(lambda: pe.launch("put_scoped", 132, 512, ptr(dst), ptr(src), u64(n), i32(scope), i32(reps)))
        gbs = reps * n / t / 1e9
        rows.append({"figure": f"putmem {name} scope 256 MiB (GB/s)", "value": round(gbs, 1),
                     "vs_memcpy": round(gbs / copy_gbs, 2)})

    print(f"device API on {what} ({pe.arch}), one PE, medians of {REPS}")
    print("| figure | value | vs cuMemcpyDtoD |\n|---|---|---|")
    for r in rows:
        print(f"| {r['figure']} | {r['value']} | {r.get('vs_memcpy', '')} |")
    if args.json:
        Path(args.json).write_text(json.dumps({"gpu": what, "arch": pe.arch, "rows": rows}, indent=2))


if __name__ == "__main__":
    main()
