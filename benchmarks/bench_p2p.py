"""Point-to-point micro-benchmark of the host API (issue 2's "Measure").

Run on 2 PEs:  shmemrun -n 2 python benchmarks/bench_p2p.py [--iters N] [--json FILE]

Prints, from PE 0, medians over repeated batches:
  - 8-byte put + quiet latency, from Python (what a Python user pays per small put);
  - ping-pong one-way latency: PE 0 puts a counter into PE 1's flag and waits for PE 1
    to put it back (put + wait_until), one-way = round trip / 2;
  - barrier_all latency; atomic_fetch_add latency (PE 0 to PE 1);
  - put bandwidth for 1 KiB, 64 KiB, 1 MiB, 4 MiB: a window of 64 put_nbi then quiet,
    next to a single-thread NumPy copy (np.copyto) of the same size in the same run.
Figures include the Python call overhead. Timings are medians of batch means; the
machine is shared, so compare ratios taken in one run, not absolute numbers across runs.
"""

import argparse
import json
import statistics
import sys
import time

import numpy as np

import pyshmem as shmem

WINDOW = 64
SIZES = [1 << 10, 64 << 10, 1 << 20, 4 << 20]


def median_batches(fn, iters, batches):
    """Median over `batches` of the mean time per call (seconds) of fn(iters)."""
    samples = []
    for _ in range(batches):
        t0 = time.perf_counter()
        fn(iters)
        samples.append((time.perf_counter() - t0) / iters)
    return statistics.median(samples)


def put_quiet_latency(me, iters, batches):
    dst = shmem.zeros(1, np.int64)
    src = np.ones(1, np.int64)
    result = None
    if me == 0:

        def run(n):
            put, quiet = shmem.put, shmem.quiet
            for _ in range(n):
                put(dst, src, 1)
                quiet()

        run(iters)  # warm-up
        result = median_batches(run, iters, batches)
    shmem.barrier_all()
    shmem.free(dst)
    return result


def ping_pong_latency(me, iters, batches):
    flag = shmem.zeros(1, np.int64)
    val = np.zeros(1, np.int64)
    counter = [0]

    def run(n):
        put, wait, eq = shmem.put, shmem.wait_until, shmem.CMP.EQ
        start = counter[0]
        for i in range(start + 1, start + n + 1):
            if me == 0:
                val[0] = i
                put(flag, val, 1)
                wait(flag, eq, i)
            else:
                wait(flag, eq, i)
                val[0] = i
                put(flag, val, 0)
        counter[0] = start + n

    run(iters)  # warm-up
    shmem.barrier_all()
    rtt = median_batches(run, iters, batches)
    shmem.barrier_all()
    shmem.free(flag)
    return rtt / 2 if me == 0 else None


def barrier_latency(me, iters, batches):
    def run(n):
        b = shmem.barrier_all
        for _ in range(n):
            b()

    run(iters)
    t = median_batches(run, iters, batches)
    return t if me == 0 else None


def bandwidth(me, size, batches):
    dst = shmem.zeros(size, np.uint8)
    src = np.random.default_rng(0).integers(0, 255, size, dtype=np.uint8)
    local = np.empty(size, np.uint8)
    out = None
    if me == 0:

        def run_put(_):
            put_nbi = shmem.put_nbi
            for _ in range(WINDOW):
                put_nbi(dst, src, 1)
            shmem.quiet()

        def run_copy(_):
            for _ in range(WINDOW):
                np.copyto(local, src)

        run_put(1)
        run_copy(1)
        t_put = median_batches(run_put, 1, batches)
        t_copy = median_batches(run_copy, 1, batches)
        out = (size * WINDOW / t_put / 1e9, size * WINDOW / t_copy / 1e9)
    shmem.barrier_all()
    if me == 1:
        assert (dst == np.random.default_rng(0).integers(0, 255, size, dtype=np.uint8)).all(), "put delivered wrong data"
    shmem.barrier_all()
    shmem.free(dst)
    return out


def atomic_latency(me, iters, batches):
    """fetch_add of an int64 on the other PE, from PE 0 (PE 1 only answers, if its
    transport needs it, from inside the barrier's waits)."""
    ctr = shmem.zeros(1, np.int64)
    shmem.barrier_all()
    out = 0.0
    if me == 0:
        def run(k):
            for _ in range(k):
                shmem.atomic_fetch_add(ctr, 1, 1)
        run(min(iters, 1000))
        out = median_batches(run, iters, batches)
    shmem.barrier_all()
    shmem.free(ctr)
    return out


def main(argv=None):
    """Run the benchmark; PE 0 prints the table. Returns the exit code."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--iters", type=int, default=20000, help="calls per batch for latency tests")
    ap.add_argument("--batches", type=int, default=15, help="batches; the median batch is reported")
    ap.add_argument("--json", help="also write the results to this JSON file (PE 0)")
    args = ap.parse_args(argv)
    me, n = shmem.my_pe(), shmem.n_pes()
    if n != 2:
        if me == 0:
            print(f"bench_p2p needs exactly 2 PEs (got {n}); run: shmemrun -n 2 python {sys.argv[0]}")
        return 2
    res = {
        "put8_quiet_us": put_quiet_latency(me, args.iters, args.batches),
        "pingpong_oneway_us": ping_pong_latency(me, args.iters // 4, args.batches),
        "barrier_all_us": barrier_latency(me, args.iters // 4, args.batches),
        "fetch_add_us": atomic_latency(me, args.iters // 4, args.batches),
    }
    bw = {size: bandwidth(me, size, max(5, args.batches // 2)) for size in SIZES}
    if me != 0:
        return 0
    for k in ("put8_quiet_us", "pingpong_oneway_us", "barrier_all_us", "fetch_add_us"):
        res[k] *= 1e6
    print(f"pyshmem {shmem.__version__} host API, 2 PEs, CPU backend (medians of {args.batches} batches)")
    print(f"  8-byte put + quiet      {res['put8_quiet_us']:8.3f} us   (target <= 0.5)")
    print(f"  ping-pong one-way       {res['pingpong_oneway_us']:8.3f} us   (target <= 1.5)")
    print(f"  barrier_all             {res['barrier_all_us']:8.3f} us")
    print(f"  atomic_fetch_add        {res['fetch_add_us']:8.3f} us")
    print(f"  {'size':>8}  {'put_nbi x64 + quiet':>20}  {'numpy copy':>11}  {'ratio':>6}")
    res["bandwidth_GBps"] = {}
    for size, (put_bw, copy_bw) in bw.items():
        label = f"{size >> 10} KiB" if size < (1 << 20) else f"{size >> 20} MiB"
        print(f"  {label:>8}  {put_bw:14.2f} GB/s  {copy_bw:6.2f} GB/s  {put_bw / copy_bw:6.2f}")
        res["bandwidth_GBps"][str(size)] = {"put": put_bw, "numpy_copy": copy_bw, "ratio": put_bw / copy_bw}
    if args.json:
        with open(args.json, "w") as f:
            json.dump(res, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
