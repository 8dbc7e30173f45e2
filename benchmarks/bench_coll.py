"""Collective latency: pyshmem (host API from Python, and the compiled device API) side by
side with Open MPI's OpenSHMEM, in one run, plus the barrier's growth with the PE count.

Every system runs the same loop: `iters` calls of the collective over all PEs, each
followed by barrier_all (OpenSHMEM 1.4's active-set collectives need a barrier before
their pSync is reused, and Open MPI 4.1 has no 1.5 teams), timed on PE 0, mean per
iteration, median of 3 loops. So each figure is "collective + barrier_all"; the
barrier_all row gives the barrier alone. Sizes are bytes per PE (a block of fcollect
and alltoall, the whole array of broadcast and sum_reduce, int64 elements).

Usage (from the repository root):
    python benchmarks/bench_coll.py                        # 2, 4 and 8 PEs, barrier fit 2..16
    python benchmarks/bench_coll.py --pes 2 --sizes 8,1024 --barrier-pes 2,4 --quick
Peers that are not installed (oshcc/oshrun; g++ and the libcu++ headers for the
compiled path) are reported as skipped. Prints a Markdown table and writes
--json (default: benchmarks/results/coll.json).
"""

import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
OPS = ("barrier_all", "broadcast", "fcollect", "alltoall", "sum_reduce")
DEFAULT_SIZES = (8, 64, 1024, 8192, 65536, 524288, 4194304)


def _iters(nbytes, npes, budget):
    return max(5, min(2000, budget // (nbytes * npes + 4096)))


# ------------------------------------------------------------------ workers (run on every PE)

def worker_host(sizes, budget):
    """pyshmem's host API from Python."""
    import numpy as np

    import pyshmem as shmem

    me, n = shmem.my_pe(), shmem.n_pes()
    big = max(sizes)
    src = shmem.full(big * n // 8, me + 1, np.int64)
    dst = shmem.zeros(big * n // 8, np.int64)
    calls = {
        "barrier_all": lambda b: None,
        "broadcast": lambda b: shmem.broadcast(dst, src, 0, b // 8),
        "fcollect": lambda b: shmem.fcollect(dst, src, b // 8),
        "alltoall": lambda b: shmem.alltoall(dst, src, b // 8),
        "sum_reduce": lambda b: shmem.sum_reduce(dst, src, b // 8),
    }
    for op in OPS:
        for nbytes in (sizes[:1] if op == "barrier_all" else sizes):
            fn, barrier = calls[op], shmem.barrier_all
            iters = _iters(nbytes, n, budget)
            loops = []
            for r in range(4):
                barrier()
                t0 = time.perf_counter()
                for _ in range(iters):
                    fn(nbytes)
                    barrier()
                if r:
                    loops.append((time.perf_counter() - t0) / iters * 1e6)
            if me == 0:
                print(json.dumps({"system": "pyshmem-python", "op": op, "npes": n,
                                  "bytes": 0 if op == "barrier_all" else nbytes,
                                  "us": round(sorted(loops)[1], 3), "iters": iters}), flush=True)
    shmem.barrier_all()


def worker_device(sizes, budget):
    """pyshmem's device API compiled: pt_collective of pyshmem/perftest/kernels.cu (the CPU
    build), in its collective-then-barrier_all mode."""
    import numpy as np

    import pyshmem as shmem
    import pyshmem.cuda as pcuda

    me, n = shmem.my_pe(), shmem.n_pes()
    module = pcuda.Module((REPO / "pyshmem" / "perftest" / "kernels.cu").read_text(), name="perftest_kernels")
    kernel = module.get_kernel("pt_collective")
    op_code = {"barrier_all": 0, "broadcast": 2, "fcollect": 3, "alltoall": 4, "sum_reduce": 5}
    big = max(sizes)
    src = shmem.full(big * n // 8, me + 1, np.int64)
    dst = shmem.zeros(big * n // 8, np.int64)
    for op in OPS:
        for nbytes in (sizes[:1] if op == "barrier_all" else sizes):
            iters = _iters(nbytes, n, budget)
            out = np.zeros(iters, np.float64)
            loops = []
            for _ in range(3):
                pcuda.launch(kernel, 1, 1, np.int32(op_code[op]), dst, src, np.uint64(nbytes), np.int32(0),
                             np.int32(1), np.int32(iters), np.int32(1), out)
                loops.append(float(out.mean()) / 1e3)
            if me == 0:
                print(json.dumps({"system": "pyshmem-compiled", "op": op, "npes": n,
                                  "bytes": 0 if op == "barrier_all" else nbytes,
                                  "us": round(sorted(loops)[1], 3), "iters": iters}), flush=True)
    shmem.barrier_all()


# ------------------------------------------------------------------ driver

def _json_lines(text):
    rows = []
    for line in text.splitlines():
        line = line.split("] ", 1)[-1].strip()  # a --tag-output prefix
        if line.startswith("{") and '"system"' in line:
            rows.append(json.loads(line))
    return rows


def run_pyshmem(kind, npes, sizes, budget, timeout):
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""),
               OPENBLAS_NUM_THREADS="1")
    cmd = [sys.executable, "-m", "pyshmem.run", "-n", str(npes), "--timeout", str(timeout), sys.executable,
           str(Path(__file__).resolve()), "--worker", kind, "--sizes", ",".join(map(str, sizes)),
           "--budget", str(budget)]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout + 30)
    if proc.returncode != 0:
        raise RuntimeError(f"pyshmem {kind} on {npes} PEs failed:\n{proc.stdout[-2000:]}{proc.stderr[-2000:]}")
    return _json_lines(proc.stdout)


def build_oshmem(tmp):
    """The OpenSHMEM peer program, or (None, reason)."""
    oshcc, oshrun = shutil.which("oshcc"), shutil.which("oshrun")
    if not (oshcc and oshrun):
        return None, "Open MPI's OpenSHMEM is not installed (apt install openmpi-bin libopenmpi-dev)"
    exe = Path(tmp) / "oshmem_coll"
    proc = subprocess.run([oshcc, "-O2", str(HERE / "peers" / "oshmem_coll.c"), "-o", str(exe)],
                          capture_output=True, text=True, timeout=300)
    if proc.returncode != 0:
        return None, f"oshcc failed: {proc.stderr[-500:]}"
    return exe, None


def run_oshmem(exe, npes, sizes, budget, timeout):
    cmd = ["oshrun", "--allow-run-as-root", "--oversubscribe", "--mca", "osc", "^rdma", "-np", str(npes), str(exe),
           str(budget), *map(str, sizes)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    if proc.returncode != 0:
        raise RuntimeError(f"oshrun on {npes} PEs failed:\n{proc.stdout[-2000:]}{proc.stderr[-2000:]}")
    return _json_lines(proc.stdout)


def _fit(points, f):
    """Least squares t = a + b f(P); returns (a, b, R^2)."""
    xs = [f(p) for p, _ in points]
    ys = [t for _, t in points]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    sxx = sum((x - mx) ** 2 for x in xs)
    b = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx if sxx else 0.0
    a = my - b * mx
    ss_res = sum((y - (a + b * x)) ** 2 for x, y in zip(xs, ys))
    ss_tot = sum((y - my) ** 2 for y in ys) or 1e-30
    return a, b, 1 - ss_res / ss_tot


def _fmt(us):
    return "—" if us is None else (f"{us:.2f}" if us < 100 else f"{us:.0f}")


def report(rows, pes, sizes, skipped, barrier_rows):
    get = {(r["system"], r["op"], r["npes"], r["bytes"]): r["us"] for r in rows}
    out = []
    out.append("| op | PEs | bytes/PE | pyshmem Python µs | pyshmem compiled µs | OpenSHMEM (Open MPI) µs | "
               "Python / OpenSHMEM | compiled / OpenSHMEM |")
    out.append("|---|---|---|---|---|---|---|---|")
    for op in OPS:
        for p in pes:
            for b in ((0,) if op == "barrier_all" else sizes):
                py, cc, osh = (get.get((s, op, p, b)) for s in ("pyshmem-python", "pyshmem-compiled", "oshmem"))
                r1 = f"{py / osh:.2f}" if py and osh else "—"
                r2 = f"{cc / osh:.2f}" if cc and osh else "—"
                out.append(f"| {op} | {p} | {b or '—'} | {_fmt(py)} | {_fmt(cc)} | {_fmt(osh)} | {r1} | {r2} |")
    text = "\n".join(out)
    if barrier_rows:
        text += "\n\nbarrier_all latency vs PEs (µs):\n\n| system | " + " | ".join(
            f"P={p}" for p, _ in barrier_rows[next(iter(barrier_rows))]) + " | fit a+b·log2 P (R²) | fit a+b·P (R²) |\n"
        text += "|---|" + "---|" * (len(barrier_rows[next(iter(barrier_rows))]) + 2) + "\n"
        for system, pts in barrier_rows.items():
            a, b, r2 = _fit(pts, math.log2)
            a2, b2, r2l = _fit(pts, float)
            text += (f"| {system} | " + " | ".join(_fmt(t) for _, t in pts) +
                     f" | {a:.2f} + {b:.2f}·log2 P ({r2:.3f}) | {a2:.2f} + {b2:.3f}·P ({r2l:.3f}) |\n")
    for what, why in skipped.items():
        text += f"\nskipped: {what}: {why}"
    return text


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--worker", choices=("host", "device"), help=argparse.SUPPRESS)
    ap.add_argument("--pes", default="2,4,8")
    ap.add_argument("--sizes", default=",".join(map(str, DEFAULT_SIZES)), help="bytes per PE, multiples of 8")
    ap.add_argument("--barrier-pes", default="2,3,4,6,8,12,16", help="PE counts of the barrier fit")
    ap.add_argument("--budget", type=int, default=1 << 24, help="bytes moved per timed loop (sets iterations)")
    ap.add_argument("--quick", action="store_true", help="small budget (a smoke run)")
    ap.add_argument("--no-compiled", action="store_true", help="skip the compiled device-API path")
    ap.add_argument("--json", default=str(HERE / "results" / "coll.json"))
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    if any(s % 8 or s <= 0 for s in sizes):
        sys.exit("--sizes must be positive multiples of 8 (int64 elements)")
    budget = (1 << 18) if args.quick else args.budget
    if args.worker == "host":
        return worker_host(sizes, budget)
    if args.worker == "device":
        return worker_device(sizes, budget)

    pes = [int(p) for p in args.pes.split(",")]
    rows, skipped = [], {}
    compiled = not args.no_compiled
    if compiled:
        sys.path.insert(0, str(REPO))
        from pyshmem.cuda import include_paths

        try:
            include_paths()
        except FileNotFoundError as exc:
            compiled, skipped["pyshmem compiled"] = False, str(exc)
    with tempfile.TemporaryDirectory() as tmp:
        osh, why = build_oshmem(tmp)
        if osh is None:
            skipped["OpenSHMEM (Open MPI)"] = why
        for p in pes:
            timeout = 600
            rows += run_pyshmem("host", p, sizes, budget, timeout)
            if compiled:
                rows += run_pyshmem("device", p, sizes, budget, timeout)
            if osh is not None:
                rows += run_oshmem(osh, p, sizes, budget, timeout)
            print(f"... {p} PEs done", file=sys.stderr, flush=True)
        barrier_rows = {}
        for p in [int(x) for x in args.barrier_pes.split(",") if x]:
            for r in run_pyshmem("host", p, sizes[:1], budget, 600):
                if r["op"] == "barrier_all":
                    barrier_rows.setdefault("pyshmem-python", []).append((p, r["us"]))
            if osh is not None:
                for r in run_oshmem(osh, p, sizes[:1], budget, 600):
                    if r["op"] == "barrier_all":
                        barrier_rows.setdefault("oshmem", []).append((p, r["us"]))
    text = report(rows, pes, sizes, skipped, barrier_rows)
    print(text)
    Path(args.json).parent.mkdir(parents=True, exist_ok=True)
    Path(args.json).write_text(json.dumps({"rows": rows, "barrier": barrier_rows, "skipped": skipped,
                                           "machine": os.uname().nodename, "cpus": os.cpu_count()}, indent=1))


if __name__ == "__main__":
    main()
