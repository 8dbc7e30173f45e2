"""What a torch tensor costs as an argument of a host-API call: the 8-byte put + quiet
from Python with NumPy arrays, with a torch source, and with a torch source and target
(a view of the same symmetric memory), side by side in one run.

The three forms alternate within each repeat (so all see the same machine minute); a
figure is the median over repeats of the best-of-3 mean per put + quiet pair on PE 0,
and the ratios are against the NumPy figure in the same repeat. The job runs twice:
with the stable-ABI fast path (csrc/python/torch_abi.cpp) and with
PYSHMEM_TORCH_FAST_PATH=0 (torch's DLPack exporter), each with its own NumPy column.

Usage (from the repository root; it starts the PEs itself):
    python benchmarks/bench_torch_args.py                 # 9 repeats of 100,000 pairs
    python benchmarks/bench_torch_args.py --repeats 3 --iters 20000 --json out.json
Prints a Markdown table; --json writes the figures.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
FORMS = ("numpy", "torch_source", "torch_source_target")


def _worker(repeats, iters):
    import numpy as np
    import torch

    import pyshmem

    pyshmem.init()
    me = pyshmem.my_pe()
    sym = pyshmem.zeros(1, np.float64)
    src = np.ones(1)
    tsrc, tsym = torch.ones(1, dtype=torch.float64), torch.from_numpy(sym)
    peer = (me + 1) % pyshmem.n_pes()
    put, quiet = pyshmem.put, pyshmem.quiet
    args = {"numpy": (sym, src), "torch_source": (sym, tsrc), "torch_source_target": (tsym, tsrc)}

    def run(dst, s):
        # A plain function and a local loop: the figure is the calls, not the harness.
        t0 = time.perf_counter()
        for _ in range(iters):
            put(dst, s, peer)
            quiet()
        return (time.perf_counter() - t0) / iters * 1e9

    rows = {f: [] for f in FORMS}
    for _ in range(repeats):
        for form in FORMS:
            rows[form].append(min(run(*args[form]) for _ in range(3)))
    pyshmem.barrier_all()
    torch_put_ok = float(sym[0]) == 1.0
    from pyshmem._lib import lib

    path = lib._torch_fast_path()["enabled"]
    pyshmem.finalize()
    if me == 0:
        ratios = {f: statistics.median(a / b for a, b in zip(rows[f], rows["numpy"])) for f in FORMS}
        print("RESULT " + json.dumps({"ns": {f: statistics.median(v) for f, v in rows.items()}, "ratio": ratios,
                                      "values_ok": torch_put_ok, "torch": torch.__version__,
                                      "fast_path": path}), flush=True)


def main(argv=None):
    """Runs the benchmark on 2 PEs and prints the table.

    Args:
        argv: command-line arguments (default sys.argv[1:]).

    Returns:
        int: the exit status (0 when both runs succeeded, took the path asked for, and
        the tensor puts landed).
    """
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=9)
    ap.add_argument("--iters", type=int, default=100_000)
    ap.add_argument("--json", help="write the figures here")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.worker:
        _worker(a.repeats, a.iters)
        return 0
    runs = {}
    for label, flag in (("fast path", "1"), ("DLPack", "0")):
        cmd = [sys.executable, "-m", "pyshmem.run", "-n", "2", sys.executable, __file__, "--worker",
               "--repeats", str(a.repeats), "--iters", str(a.iters)]
        env = dict(os.environ, PYSHMEM_TORCH_FAST_PATH=flag)
        out = subprocess.run(cmd, capture_output=True, text=True, cwd=REPO, env=env, timeout=1800)
        lines = [ln for ln in out.stdout.splitlines() if "RESULT " in ln]
        if out.returncode != 0 or not lines:
            sys.stderr.write(out.stdout + out.stderr)
            return out.returncode or 1
        runs[label] = json.loads(lines[0].split("RESULT ", 1)[1])
        if runs[label]["fast_path"] != (flag == "1") or not runs[label]["values_ok"]:
            sys.stderr.write(f"{label}: fast path {runs[label]['fast_path']}, values ok {runs[label]['values_ok']}\n")
            return 1
    fast, slow = runs["fast path"], runs["DLPack"]
    print(f"8-byte put + quiet to PE 1, 2 PEs, torch {fast['torch']}, median of {a.repeats} repeats "
          f"of {a.iters} pairs\n")
    print("| arguments | fast path (ns) | / NumPy | DLPack, PYSHMEM_TORCH_FAST_PATH=0 (ns) | / NumPy |")
    print("|---|---|---|---|---|")
    for f in FORMS:
        print(f"| {f.replace('_', ' ')} | {fast['ns'][f]:.0f} | {fast['ratio'][f]:.2f}x | {slow['ns'][f]:.0f} | "
              f"{slow['ratio'][f]:.2f}x |")
    if a.json:
        Path(a.json).write_text(json.dumps(runs, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
