"""What a whole NVSHMEM program built with pyshmem-nvcc --cpu costs (issue 19's measure):
benchmarks/nvshmem_put_perf.cu built with NVSHMEM's names and with pyshmem's own names
(-DPYSHMEM_NAMES), next to pyshmem's device-API perftest, on the CPU build, in one run.

Run from the repository root (no GPU needed):
    python benchmarks/bench_nvshmem_program.py [--reps 7] [--iters 20000]

Two PEs under shmemrun; the reps alternate the three so that the machine's state is
shared. Per rep:
  nvshmem_*  ./prog ITERS   put_lat: ns per 8-byte put + quiet from one thread (a loop of
                            ITERS in one kernel, timed with CUDA events);
                            put_bw: GB/s of a 128-thread block's 64 KiB putmem_block, ITERS/20 times
  pyshmem::  the same source with pyshmem's device-API names
  perftest   python -m pyshmem.perftest put_latency --api device -b 8 -e 8 -n ITERS and
             put_bw --api device --scope block -b 64K -e 64K (pyshmem.cuda kernels from Python)
Prints the medians side by side and the ratios nvshmem/pyshmem (1.0: the names cost nothing).
"""

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SOURCE = REPO / "benchmarks" / "nvshmem_put_perf.cu"


def _env():
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env.setdefault("PYSHMEM_SYMMETRIC_SIZE", "64M")
    return env


def _run(cmd):
    proc = subprocess.run([sys.executable, "-m", "pyshmem.run", "-n", "2", "--timeout", "300", *cmd],
                          capture_output=True, text=True, timeout=330, env=_env(), cwd=str(REPO))
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{proc.stdout}{proc.stderr}")
    return proc.stdout


def _program(path, iters):
    fields = _run([str(path), str(iters)]).split()
    return float(fields[fields.index("put_lat_ns") + 1]), float(fields[fields.index("put_bw_GBps") + 1])


def _perftest(iters):
    lat = json.loads(_run(["python", "-m", "pyshmem.perftest", "put_latency", "--api", "device", "-b", "8", "-e", "8",
                           "-n", str(iters), "--json"]).strip().splitlines()[-1])
    bw = json.loads(_run(["python", "-m", "pyshmem.perftest", "put_bw", "--api", "device", "--scope", "block", "-b",
                          "64K", "-e", "64K", "-n", str(max(1, iters // 20)), "--json"]).strip().splitlines()[-1])
    return lat["lat_avg_us"] * 1e3, bw["bw_gbps"]


def _same_machine_code(a, b):
    """Whether the kernels put_lat and put_bw of binaries a and b disassemble the same
    (addresses aside), or None without objdump."""
    if not shutil.which("objdump"):
        return None

    def body(path, symbol):
        asm = subprocess.run(["objdump", "-d", "--no-show-raw-insn", str(path)], capture_output=True, text=True).stdout
        m = re.search(rf"<{symbol}>:\n(.*?)\n\n", asm, re.S)
        return [re.sub(r"^\s*[0-9a-f]+:|[0-9a-f]{4,} <[^>]*>", "", line) for line in m.group(1).splitlines()] if m else None

    return all(body(a, s) is not None and body(a, s) == body(b, s) for s in ("_Z7put_latPxPKxx", "_Z6put_bwPcPKcmx"))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--iters", type=int, default=20000)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench_nvshmem_program_") as tmp:
        progs = {"nvshmem": Path(tmp) / "put_perf_nvshmem", "pyshmem": Path(tmp) / "put_perf_pyshmem"}
        builds = [subprocess.Popen([sys.executable, "-m", "pyshmem.nvcc", "--cpu", str(SOURCE), "-o", str(progs[names]),
                                    *extra], stderr=subprocess.PIPE, text=True, env=_env())
                  for names, extra in (("nvshmem", []), ("pyshmem", ["-DPYSHMEM_NAMES"]))]  # both at once
        for b in builds:
            err = b.communicate(timeout=600)[1]
            if b.returncode != 0:
                raise SystemExit(f"pyshmem-nvcc failed:\n{err}")
        same = _same_machine_code(progs["nvshmem"], progs["pyshmem"])
        runs = {"nvshmem": [], "pyshmem": [], "perftest": []}
        for _ in range(args.reps):
            for names in ("nvshmem", "pyshmem"):
                runs[names].append(_program(progs[names], args.iters))
            runs["perftest"].append(_perftest(args.iters))
    med = {k: (statistics.median(r[0] for r in v), statistics.median(r[1] for r in v)) for k, v in runs.items()}
    print(f"{args.reps} reps, {args.iters} iterations, 2 PEs, CPU build; medians")
    print(f"{'':<24} {'nvshmem_* program':>18} {'pyshmem:: program':>18} {'ratio':>6} {'perftest --api device':>22}")
    print(f"{'put_lat (ns/put+quiet)':<24} {med['nvshmem'][0]:18.1f} {med['pyshmem'][0]:18.1f} "
          f"{med['nvshmem'][0] / med['pyshmem'][0]:6.3f} {med['perftest'][0]:22.1f}")
    print(f"{'put_bw 64 KiB (GB/s)':<24} {med['nvshmem'][1]:18.2f} {med['pyshmem'][1]:18.2f} "
          f"{med['pyshmem'][1] / med['nvshmem'][1]:6.3f} {med['perftest'][1]:22.2f}")
    if same is not None:
        print(f"the two programs' kernels are the same machine code: {'yes' if same else 'no'}")


if __name__ == "__main__":
    main()
