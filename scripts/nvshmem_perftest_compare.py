#!/usr/bin/env python3
"""NVIDIA's NVSHMEM perftest against pyshmem and against NVIDIA's NVSHMEM, side by side
on one GPU machine: each program built twice from the same unchanged source (with
``pyshmem-nvcc --gpu``, and with nvcc against an NVSHMEM install), run alternately on 2
PEs ``--repeats`` times, and the medians of each row put next to each other with their
ratio (pyshmem / NVSHMEM: above 1 means pyshmem takes longer, or moves more for a
bandwidth). Markdown on stdout, JSON lines with ``--json``.

    python scripts/nvshmem_perftest_compare.py nvshmem_src --nvshmem-home /opt/nvshmem

The NVSHMEM source tree (the folder holding ``perftest/``) is yours: NVIDIA's licence
forbids redistributing it, so pyshmem carries none of it (scripts/gpu_check.sh reads it
from the git-ignored folder ``nvshmem_src/``). ``--nvshmem-home`` is an NVSHMEM install
(``include/``, ``lib/`` with libnvshmem_host and libnvshmem_device, ``bin/nvshmrun*``,
e.g. the ``nvidia-nvshmem-cu13`` wheel's folder); without one, or without its launcher,
only pyshmem's column is measured and the reason is printed.
"""

import argparse
import json
import os
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

DEFAULT_PROGRAMS = {  # program: arguments (short runs: the GPU machine's minutes are few)
    "device/pt-to-pt/shmem_put_latency": "-e 64K -n 200 -w 20",
    "device/pt-to-pt/shmem_p_latency": "-n 200 -w 20",
    "device/pt-to-pt/shmem_put_bw": "-b 64K -e 16M -n 20 -w 5",
}
ROW = re.compile(r"^\s*(\d+)\s+(\w+)\s+([0-9.]+)\s*$")
BUILD = ["-std=c++17", "-rdc=true", "-O3", "-DNDEBUG"]


def run(cmd, timeout, env=None, cwd=None):
    """(exit status, output); 124 on timeout."""
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env, cwd=cwd,
                           start_new_session=True)
        return p.returncode, p.stdout + p.stderr
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
        return 124, out + f"\n[timed out after {timeout} s]"


def rows(text):
    """{(scope, size): value} of a perftest's tables."""
    found = {}
    for line in text.splitlines():
        m = ROW.match(line)
        if m:
            found[(m.group(2), int(m.group(1)))] = float(m.group(3))
    return found


def launcher_of(home):
    """NVSHMEM's launcher in its install, or None."""
    for name in ("nvshmrun", "nvshmrun.hydra"):
        if home and (Path(home) / "bin" / name).is_file():
            return str(Path(home) / "bin" / name)
    return None


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("tree", type=Path, help="NVSHMEM source tree (holds perftest/)")
    ap.add_argument("--nvshmem-home", type=Path, default=os.environ.get("NVSHMEM_HOME"),
                    help="NVSHMEM install to compare with (default $NVSHMEM_HOME)")
    ap.add_argument("--programs", help="comma-separated perftest programs, e.g. device/pt-to-pt/shmem_put_latency "
                                       f"(default: {', '.join(DEFAULT_PROGRAMS)})")
    ap.add_argument("--gpu-arch", default="sm_90")
    ap.add_argument("--repeats", type=int, default=3, help="runs of each build, alternating (medians)")
    ap.add_argument("--timeout", type=int, default=60, help="seconds per build or run")
    ap.add_argument("--out", type=Path, default=Path("nvshmem-compare-build"))
    ap.add_argument("--nvcc-flag", action="append", default=[], help="one more flag for every compile")
    ap.add_argument("--json", type=Path, help="also write JSON lines here")
    opts = ap.parse_args(argv)
    tree = opts.tree.resolve()
    common = tree / "perftest" / "common"
    if not (common / "utils.cu").is_file():
        ap.error(f"{tree} has no perftest/common/utils.cu: give the root of an NVSHMEM source tree")
    programs = ({p: DEFAULT_PROGRAMS.get(p, "") for p in opts.programs.split(",")} if opts.programs
                else dict(DEFAULT_PROGRAMS))
    out = opts.out.resolve()
    nvcc = shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
    home = opts.nvshmem_home
    why_not = None
    if not home or not (Path(home) / "include" / "nvshmem.h").is_file():
        why_not = "no NVSHMEM install (--nvshmem-home or $NVSHMEM_HOME with include/nvshmem.h)"
    elif not launcher_of(home):
        why_not = f"no nvshmrun in {home}/bin"
    flavours = {"pyshmem": [sys.executable, "-m", "pyshmem.nvcc", "--gpu", f"-arch={opts.gpu_arch}"]}
    if not why_not:
        flavours["nvshmem"] = [nvcc, f"-arch={opts.gpu_arch}", f"-I{home}/include"]
    link = {"pyshmem": ["-lcuda"],
            "nvshmem": [f"-L{home}/lib", "-lnvshmem_host", "-lnvshmem_device", "-lcuda", "-Xlinker",
                        f"-rpath,{home}/lib"]}

    def build(job):
        flavour, prog = job
        exe = out / flavour / Path(prog).name
        exe.parent.mkdir(parents=True, exist_ok=True)
        cmd = [*flavours[flavour], *BUILD, *opts.nvcc_flag, f"-I{common}", str(tree / "perftest" / f"{prog}.cu"),
               str(common / "utils.cu"), "-o", str(exe), *link[flavour]]
        rc, text = run(cmd, opts.timeout * 3)
        return job, rc, text

    t0 = time.monotonic()
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        built = {job: (rc, text) for job, rc, text in pool.map(build, [(f, p) for f in flavours for p in programs])}
    print(f"built in {time.monotonic() - t0:.0f} s: " + ", ".join(
        f"{f}/{Path(p).name} {'ok' if rc == 0 else 'FAILED'}" for (f, p), (rc, _) in built.items()), flush=True)
    for (f, p), (rc, text) in built.items():
        if rc != 0:
            print(f"--- build of {p} with {f} failed:\n{text[-3000:]}", file=sys.stderr)
    env = dict(os.environ, PYSHMEM_BACKEND="cuda", PYSHMEM_CUDA_SYMMETRIC_SIZE=os.environ.get(
        "PYSHMEM_CUDA_SYMMETRIC_SIZE", "512M"))
    results = {}  # (flavour, prog) -> {(scope, size): [values]}
    for prog, args in programs.items():
        for _ in range(opts.repeats):
            for flavour in flavours:
                if built[(flavour, prog)][0] != 0:
                    continue
                exe = str(out / flavour / Path(prog).name)
                cmd = (["shmemrun", "-n", "2", "--timeout", str(opts.timeout), exe] if flavour == "pyshmem"
                       else [launcher_of(home), "-n", "2", exe]) + shlex.split(args)
                rc, text = run(cmd, opts.timeout + 10, env=env)
                if rc != 0:
                    print(f"--- {flavour} {prog} failed (exit {rc}):\n{text[-2000:]}", file=sys.stderr)
                    continue
                for key, value in rows(text).items():
                    results.setdefault((flavour, prog), {}).setdefault(key, []).append(value)
    print(f"\n| program | scope | size (B) | NVSHMEM | pyshmem | pyshmem / NVSHMEM |\n|---|---|---|---|---|---|")
    records = []
    for prog in programs:
        mine = results.get(("pyshmem", prog), {})
        theirs = results.get(("nvshmem", prog), {})
        for key in sorted(set(mine) | set(theirs), key=lambda k: (k[0], k[1])):
            a = statistics.median(mine[key]) if key in mine else None
            b = statistics.median(theirs[key]) if key in theirs else None
            ratio = f"{a / b:.2f}" if a is not None and b else "-"
            print(f"| {Path(prog).name} | {key[0]} | {key[1]} | {'-' if b is None else f'{b:.3g}'} | "
                  f"{'-' if a is None else f'{a:.3g}'} | {ratio} |")
            records.append({"program": prog, "scope": key[0], "bytes": key[1], "nvshmem": b, "pyshmem": a,
                            "runs": opts.repeats})
    if why_not:
        print(f"\nNVSHMEM column empty: {why_not}")
    if opts.json:
        opts.json.write_text("".join(json.dumps(r) + "\n" for r in records))
    ok = all(rc == 0 for rc, _ in built.values()) and bool(records)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
