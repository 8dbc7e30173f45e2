"""Compile time of CUDA programs built for the CPU (``pyshmem-nvcc --cpu -c``), next to
the same translation unit compiled by plain g++ without the precompiled prelude (the
CUDA runtime, driver and NVSHMEM headers parsed again, as every compile would without
the PCH), and next to ``nvcc`` for the GPU (``pyshmem-nvcc --gpu -c``), medians of
``--repeats`` runs, the precompiled prelude already built.

    python benchmarks/bench_cpu_compile.py FILE.cu [FILE.cu ...] [--flags "-O3 -DNDEBUG"]

Prints a markdown table: seconds per step (preprocess, rewrite, compile with the PCH),
the total, the no-PCH compile of the same rewritten source, and nvcc's; ratios to the
total. Nothing here is asserted: timings on shared machines are noisy (docs/performance.md
records them with the machine).
"""

import argparse
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def timed(cmd):
    t0 = time.monotonic()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"failed: {shlex.join(cmd)}\n{proc.stderr[-3000:]}")
    return time.monotonic() - t0


def measure(src, flags, repeats, gpu):
    from pyshmem._cpu_build import PRELUDE_END
    from pyshmem._cuda_source import after_prelude, rewrite_program

    with tempfile.TemporaryDirectory() as tmp:
        obj = str(Path(tmp) / "x.o")
        show = subprocess.run([sys.executable, "-m", "pyshmem.nvcc", "--cpu", "--show", "-c", str(src), "-o", obj,
                               *flags], capture_output=True, text=True, check=True).stdout.splitlines()
        pre, _, comp = show[0], show[1], show[2]
        pre_cmd, comp_cmd = shlex.split(pre), shlex.split(comp)
        ii, cpp = pre_cmd[pre_cmd.index("-o") + 1], comp_cmd[comp_cmd.index("-c") + 1]
        # --show names the wrapper's scratch folder, which it removed on exit: this run's own.
        scratch = Path(ii).parent
        scratch.mkdir(parents=True, exist_ok=True)
        rows = {"preprocess": [], "rewrite": [], "compile (PCH)": [], "total pyshmem-nvcc": [],
                "same TU, no PCH": [], "nvcc --gpu -c": []}
        no_pch = list(comp_cmd)
        no_pch[no_pch.index("-include") + 1] = "pyshmem/cpu_program.h"  # the header itself, parsed
        for _ in range(repeats):
            rows["preprocess"].append(timed(pre_cmd))
            t0 = time.monotonic()
            Path(cpp).write_text(rewrite_program(after_prelude(Path(ii).read_text(), PRELUDE_END), str(src)))
            rows["rewrite"].append(time.monotonic() - t0)
            rows["compile (PCH)"].append(timed(comp_cmd))
            rows["total pyshmem-nvcc"].append(timed([sys.executable, "-m", "pyshmem.nvcc", "--cpu", "-c", str(src),
                                                     "-o", obj, *flags]))
            rows["same TU, no PCH"].append(timed(no_pch))
            if gpu:
                rows["nvcc --gpu -c"].append(timed([sys.executable, "-m", "pyshmem.nvcc", "--gpu", "-c", str(src),
                                                    "-o", obj, "-arch=sm_90", *flags]))
        shutil.rmtree(scratch, ignore_errors=True)
        return {k: statistics.median(v) for k, v in rows.items() if v}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("sources", nargs="+", type=Path)
    ap.add_argument("--flags", default="-std=c++17 -O3 -DNDEBUG", help="compile flags (NVSHMEM's release build's)")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--no-gpu", action="store_true", help="skip nvcc")
    opts = ap.parse_args()
    flags = shlex.split(opts.flags)
    print("| source | preprocess | rewrite | compile (PCH) | total | same TU, no PCH | nvcc --gpu -c | "
          "no PCH / total | nvcc / total |\n|---|---|---|---|---|---|---|---|---|")
    for src in opts.sources:
        r = measure(src, flags, opts.repeats, not opts.no_gpu)
        total = r["total pyshmem-nvcc"]
        nv = r.get("nvcc --gpu -c")
        print(f"| {src.name} | {r['preprocess']:.2f} | {r['rewrite']:.2f} | {r['compile (PCH)']:.2f} | {total:.2f} | "
              f"{r['same TU, no PCH']:.2f} | {'-' if nv is None else f'{nv:.2f}'} | "
              f"{r['same TU, no PCH'] / total:.2f} | {'-' if nv is None else f'{nv / total:.2f}'} |", flush=True)


if __name__ == "__main__":
    main()
