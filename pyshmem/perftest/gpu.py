"""``shmemrun -n 2 python -m pyshmem.perftest gpu``: the device API on a GPU, in one run.

What scripts/gpu_check.sh records on a GPU machine (both PEs on the one GPU):
  - put_latency (putmem + quiet, by size), p_latency and g_latency (8 bytes), one thread;
  - put_bw (a window of putmem_nbi + quiet) at thread, warp and block scope, by size;
  - the GPU's own device-to-device copy bandwidth (``pt_copy`` over the whole GPU,
    timed around the launch) at each size, and put_bw / copy ratios;
  - stream collectives: ``sum_reduce``/``fcollect``/``alltoall``/``broadcast`` with
    ``stream=`` on symmetric GPU arrays, per call (enqueue + stream sync).
Without a GPU it runs the same kernels as the CPU build (the copy is one thread's
memcpy) and reports the stream collectives as skipped. Data is checked after each
figure (exit status 1 when wrong). PE 0 prints a Markdown report; --json writes rows.
"""

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np

import pyshmem as shmem
from pyshmem.perftest.sizes import parse_size
from pyshmem.perftest.device import _SCOPE, _THREADS

__all__ = ["main"]


def _parser():
    ap = argparse.ArgumentParser(prog="shmemrun -n 2 python -m pyshmem.perftest gpu", description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="8,4K,64K,1M,16M", help="message sizes (K/M suffixes)")
    ap.add_argument("-n", "--iters", type=int, default=200, help="timed iterations per figure")
    ap.add_argument("-w", "--warmup", type=int, default=20)
    ap.add_argument("--json", help="also write the rows here (JSON lines, PE 0)")
    ap.add_argument("--inject-error", action="store_true", help=argparse.SUPPRESS)
    return ap


def main(argv=None):
    """Runs the GPU section on 2 PEs; PE 0 prints the report.

    Returns:
        int: 0; 1 when a transfer moved wrong data; 2 on bad arguments or not 2 PEs.
    """
    import pyshmem.cuda as pcuda

    a = _parser().parse_args(argv)
    sizes = sorted({parse_size(s) for s in a.sizes.split(",")})
    me = shmem.my_pe()
    if shmem.n_pes() != 2 or a.iters < 1 or not sizes or min(sizes) < 8:
        if me == 0:
            print("perftest gpu: needs 2 PEs, -n >= 1 and sizes >= 8 bytes", file=sys.stderr)
        return 2
    mod = pcuda.Module((Path(__file__).with_name("kernels.cu")).read_text(), name="pyshmem_perftest")
    gpu = mod.target == "gpu"
    zeros = pcuda.zeros if gpu else shmem.zeros
    big = max(sizes)
    src, dst = zeros(big, np.uint8), zeros(big, np.uint8)
    host = (lambda x: x.copy_to_host()) if gpu else np.array
    pattern = ((np.arange(big, dtype=np.uint32) * 131 + 7) & 0xFF).astype(np.uint8)
    (src.copy_from_host(pattern) if gpu else src.__setitem__(Ellipsis, pattern))
    out = (pcuda.zeros if gpu else np.zeros)(max(a.iters, 1), np.float64)
    rows, bad = [], []

    def run_p2p(kernel, *args, threads=1):
        shmem.barrier_all()
        if me == 0:
            pcuda.launch(mod.get_kernel(kernel), 1, threads, *args)
        shmem.barrier_all()
        return host(out)

    def record(figure, scope, n, value, unit):  # PE 0 timed it; PE 1 only checks data
        if me == 0:
            rows.append({"figure": figure, "scope": scope, "bytes": n, "value": value, "unit": unit})

    def check(what, n):
        if me == 1:
            got = np.array(host(dst[:n]), copy=True)
            if a.inject_error:  # the suite's self-test: a flipped bit must fail the run
                got[0] ^= 0x40
            if not np.array_equal(got, pattern[:n]):
                bad.append(f"{what} {n} B")

    for n in sizes:
        ns = run_p2p("pt_latency", np.int32(0), dst, src, np.uint64(n), np.int32(1), np.int32(a.warmup),
                     np.int32(a.iters), np.int32(0), out)
        check("put_latency", n)
        record("put_latency", "thread", n, float(np.median(ns)) / 1e3, "us")
    for kind, fig in ((2, "p_latency"), (3, "g_latency")):
        ns = run_p2p("pt_latency", np.int32(kind), dst, src, np.uint64(8), np.int32(1), np.int32(a.warmup),
                     np.int32(a.iters), np.int32(0), out)
        record(fig, "thread", 8, float(np.median(ns)) / 1e3, "us")
    for scope in ("thread", "warp", "block"):
        for n in sizes:
            ns = run_p2p("pt_bandwidth", np.int32(0), dst, src, np.uint64(n), np.int32(1), np.int32(a.iters),
                         np.int32(_SCOPE[scope]), out, threads=_THREADS[scope])
            check(f"put_bw ({scope})", n)
            record("put_bw", scope, n, n * a.iters / float(ns[0]) if me == 0 else 0.0, "GB/s")
    # The copy ceiling, on PE 0 alone (both PEs share the GPU: one copy at a time).
    local = zeros(big, np.uint8)  # symmetric allocation: every PE
    shmem.barrier_all()
    if me == 0:
        copy = mod.get_kernel("pt_copy")
        grid, block = (1024, 256) if gpu else (1, 1)
        for n in sizes:
            reps = max(1, min(1 << 20, (256 << 20) // n))  # ~256 MiB a launch: launch cost vanishes
            pcuda.launch(copy, grid, block, local, src, np.uint64(n), np.int32(1))  # warm-up
            samples = []
            for _ in range(5):
                t0 = time.perf_counter()
                pcuda.launch(copy, grid, block, local, src, np.uint64(n), np.int32(reps))
                samples.append(n * reps / (time.perf_counter() - t0) / 1e9)
            record("copy_bw", "grid" if gpu else "memcpy", n, statistics.median(samples), "GB/s")
    shmem.barrier_all()
    (pcuda.free if gpu else shmem.free)(local)
    rows += _stream_collectives(a, pcuda, sizes) if gpu else []
    shmem.barrier_all()
    if bad:
        print(f"perftest gpu on PE {me}: wrong data after " + ", ".join(bad), file=sys.stderr, flush=True)
        return 1
    if me == 0:
        print(report(rows, gpu), flush=True)
        if a.json:
            Path(a.json).write_text("".join(json.dumps(r) + "\n" for r in rows))
    return 0


def _stream_collectives(a, pcuda, sizes):
    """Per-call time of the host collectives with stream= on GPU arrays (enqueue + sync)."""
    from cuda.core import Device  # the cuda backend's stream objects

    dev = Device()
    dev.set_current()
    stream = dev.create_stream()
    me, n_pes, rows = shmem.my_pe(), shmem.n_pes(), []
    for n in [s for s in sizes if s % 8 == 0]:
        elems = n // 8
        src = pcuda.zeros(elems * n_pes, np.int64)
        dst = pcuda.zeros(elems * n_pes, np.int64)
        src.copy_from_host(np.arange(elems * n_pes, dtype=np.int64) + 1000 * me)
        calls = {"sum_reduce": lambda: shmem.sum_reduce(dst[:elems], src[:elems], stream=stream),
                 "broadcast": lambda: shmem.broadcast(dst[:elems], src[:elems], 0, stream=stream),
                 "fcollect": lambda: shmem.fcollect(dst, src[:elems], stream=stream),
                 "alltoall": lambda: shmem.alltoall(dst, src, stream=stream)}
        for name, call in calls.items():
            call()
            stream.sync()
            shmem.barrier_all()
            t0 = time.perf_counter()
            for _ in range(a.iters):
                call()
            stream.sync()
            rows.append({"figure": f"stream_{name}", "scope": "block", "bytes": n,
                         "value": (time.perf_counter() - t0) / a.iters * 1e6, "unit": "us"})
        got = dst.copy_to_host()
        want = np.concatenate([np.arange(elems * n_pes, dtype=np.int64)[me * elems:(me + 1) * elems] + 1000 * p
                               for p in range(n_pes)])
        if not np.array_equal(got, want):
            raise AssertionError(f"perftest gpu on PE {me}: stream alltoall of {n} B per PE moved wrong data")
        shmem.barrier_all()
        pcuda.free(dst)
        pcuda.free(src)
    return rows


def report(rows, gpu):
    """Markdown tables of the rows (PE 0)."""
    idx = {(r["figure"], r["scope"], r["bytes"]): r["value"] for r in rows}
    copy = {r["bytes"]: r["value"] for r in rows if r["figure"] == "copy_bw"}
    where = "one GPU, 2 PEs" if gpu else "no GPU: the CPU build of the same kernels, 2 PEs"
    lines = [f"### perftest gpu ({where})", "", "| size | put + quiet (us) | put_bw thread | put_bw warp | "
             "put_bw block | copy (GB/s) | block / copy |", "|---|---|---|---|---|---|---|"]
    for n in sorted(copy):
        vals = [idx.get(("put_latency", "thread", n))] + [idx.get(("put_bw", s, n)) for s in ("thread", "warp", "block")]
        ratio = idx.get(("put_bw", "block", n), 0) / copy[n] if copy[n] else 0
        lines.append(f"| {n} | " + " | ".join("–" if v is None else f"{v:.3g}" for v in vals) +
                     f" | {copy[n]:.3g} | {ratio:.2f} |")
    lines += ["", f"p + quiet: {idx[('p_latency', 'thread', 8)]:.3g} us, g: {idx[('g_latency', 'thread', 8)]:.3g} us "
              "(one thread, 8 bytes)", ""]
    stream = sorted({r["figure"] for r in rows if r["figure"].startswith("stream_")})
    if stream:
        lines += ["| size | " + " | ".join(f"{s[7:]} (us)" for s in stream) + " |", "|---" * (1 + len(stream)) + "|"]
        for n in sorted({r["bytes"] for r in rows if r["figure"].startswith("stream_")}):
            lines.append(f"| {n} | " + " | ".join(f"{idx[(s, 'block', n)]:.3g}" for s in stream) + " |")
    else:
        lines.append("stream collectives: skipped (they need GPU arrays, i.e. a GPU)")
    return "\n".join(lines)
