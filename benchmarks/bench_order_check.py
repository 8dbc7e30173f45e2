"""What the ordering check (PYSHMEM_ORDER_CHECK=1, docs/memory_model.md) costs, and what it
costs the normal mode (issue 18).

Run from the repository root (no GPU needed):
    python benchmarks/bench_order_check.py [--reps 5] [--baseline DIR] [--parts programs,put_quiet]

programs   wall time of whole 2-PE jobs (launch included) in the normal mode and under the
           check, alternating, --reps runs each: memory_model.py (the symmetric
           program), memory_model_oneway.py host (every host-API rule) and, when CPU
           kernels build here, memory_model_oneway.py with the device rules.
           Columns: median normal s, median check s, ratio.
put_quiet  the normal mode's 8-byte put + quiet from Python on 2 PEs (PE 0 -> PE 1):
           median ns per pair over 21 batches of 4000 in each of --reps jobs (PE 1
           sleeps meanwhile, so no poller shares the CPUs); with
           --baseline DIR (a checkout of the previous commit with its extension built
           in place), the same program on that build, jobs alternating, and the ratio
           this/baseline. Both columns in one run on the same machine, so the ratio is
           what to read; single figures move with the machine's load.
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PROGRAMS = REPO / "tests" / "pe" / "programs"

PUT_QUIET = textwrap.dedent("""
    import os
    import time
    import numpy as np
    import pyshmem as shmem
    x = shmem.zeros(1, np.int64)
    v = np.ones(1, np.int64)
    me = shmem.my_pe()
    shmem.barrier_all()
    if me == 0:
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})  # no migrations mid-run
        per = []
        for _ in range(21):
            t = time.perf_counter_ns()
            for _ in range(4000):
                shmem.put(x, v, 1)
                shmem.quiet()
            per.append((time.perf_counter_ns() - t) / 4000)
        per.sort()
        print(f"NS {per[len(per) // 2]:.1f}", flush=True)
    else:
        time.sleep(1.0)  # not polling in a barrier meanwhile: PE 0 has the CPUs to itself
    shmem.barrier_all()
""")


def _env(root, **extra):
    env = dict(os.environ)
    env["PYTHONPATH"] = str(root) + os.pathsep + env.get("PYTHONPATH", "")
    env.setdefault("PYSHMEM_SYMMETRIC_SIZE", "64M")
    env.pop("PYSHMEM_ORDER_CHECK", None)
    env.update(extra)
    return env


def _job(root, npes, argv, **env):
    cmd = [sys.executable, "-m", "pyshmem.run", "-n", str(npes), "--timeout", "300", *map(str, argv)]
    t = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=330, env=_env(root, **env), cwd=str(root))
    took = time.perf_counter() - t
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(map(str, argv))} failed ({proc.returncode}):\n{proc.stdout}{proc.stderr}")
    return took, proc.stdout


def _device_rules_build():
    sys.path[:0] = [str(REPO), str(REPO / "tests")]
    from conftest import cpu_kernel_toolchain_missing  # noqa: E402

    return cpu_kernel_toolchain_missing() is None


def bench_programs(reps):
    cases = [("memory_model.py", [PROGRAMS / "memory_model.py"]),
             ("oneway host rules", [PROGRAMS / "memory_model_oneway.py", "host"])]
    if _device_rules_build():
        cases.append(("oneway device rules", [PROGRAMS / "memory_model_oneway.py",
                                              "device_fence,device_quiet,device_put_signal,device_put_nbi_quiet"]))
    print(f"{'program (2 PEs, whole job)':<30} {'normal s':>9} {'check s':>9} {'ratio':>6}")
    for label, argv in cases:
        normal, check = [], []
        for rep in range(reps):
            normal.append(_job(REPO, 2, argv)[0])
            check.append(_job(REPO, 2, argv, PYSHMEM_ORDER_CHECK="1", PYSHMEM_ORDER_CHECK_SEED=str(rep + 1))[0])
        n, c = statistics.median(normal), statistics.median(check)
        print(f"{label:<30} {n:9.2f} {c:9.2f} {c / n:6.2f}", flush=True)


def bench_put_quiet(reps, baseline):
    with tempfile.TemporaryDirectory() as tmp:
        prog = Path(tmp) / "put_quiet.py"
        prog.write_text(PUT_QUIET)
        roots = [("this build", REPO)] + ([("baseline", Path(baseline).resolve())] if baseline else [])
        figures = {label: [] for label, _ in roots}
        for _ in range(reps):
            for label, root in roots:
                out = _job(root, 2, [prog])[1]
                figures[label].append(float(next(l for l in out.splitlines() if l.startswith("NS ")).split()[1]))
    print(f"{'8-byte put + quiet (normal mode)':<34} {'median ns':>10} {'min ns':>8} {'runs':>5}")
    for label, vals in figures.items():
        print(f"{label:<34} {statistics.median(vals):10.1f} {min(vals):8.1f} {len(vals):5d}  "
              f"{' '.join(f'{v:.0f}' for v in vals)}")
    if baseline:
        this, base = figures["this build"], figures["baseline"]
        print(f"{'ratio this/baseline':<34} {statistics.median(this) / statistics.median(base):10.3f} "
              f"{min(this) / min(base):8.3f}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--baseline", help="checkout of the previous commit, extension built in place")
    ap.add_argument("--parts", default="programs,put_quiet")
    args = ap.parse_args()
    parts = args.parts.split(",")
    if "programs" in parts:
        bench_programs(args.reps)
    if "put_quiet" in parts:
        bench_put_quiet(args.reps, args.baseline)


if __name__ == "__main__":
    main()
