"""What the NVSHMEM names cost against pyshmem's own (issue 19's measure): the same
put-latency and put-bandwidth kernels written once with nvshmem_* (<nvshmem.h>) and once
with pyshmem::*, on the CPU build, in one run.

Run from the repository root (no GPU needed):
    python benchmarks/bench_nvshmem_compat.py [--reps 7] [--iters 20000]

Two PEs under shmemrun. Per rep, PE 0 launches each kernel once (alternating), timing
the launch on the host (a launch costs ~0.1 ms; the loops run --iters times inside):
  put_lat   one thread: 8-byte put + quiet to PE 1, --iters times (after NVSHMEM's
            shmem_put_latency): ns per put + quiet
  put_bw    a 128-thread block: 64 KiB block put to PE 1, --iters / 20 times, then quiet
            (after shmem_put_bw): GB/s
Prints the medians side by side and the ratio nvshmem/pyshmem (1.0: no cost), and
whether the compiler made the two kernels one machine code (objdump).
"""

import argparse
import os
import subprocess
import sys
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

KERNELS = r"""
#include <nvshmem.h>
#include <nvshmemx.h>

extern "C" __global__ void lat_nvshmem(long long* dst, const long long* src, long long iters) {
  for (long long i = 0; i < iters; ++i) { nvshmem_longlong_put(dst, src, 1, 1); nvshmem_quiet(); }
}
extern "C" __global__ void lat_pyshmem(long long* dst, const long long* src, long long iters) {
  for (long long i = 0; i < iters; ++i) { pyshmem::put(dst, src, 1, 1); pyshmem::quiet(); }
}
extern "C" __global__ void bw_nvshmem(char* dst, const char* src, unsigned long long bytes, long long iters) {
  for (long long i = 0; i < iters; ++i) nvshmemx_putmem_block(dst, src, bytes, 1);
  if (threadIdx.x == 0) nvshmem_quiet();
}
extern "C" __global__ void bw_pyshmem(char* dst, const char* src, unsigned long long bytes, long long iters) {
  for (long long i = 0; i < iters; ++i) pyshmem::putmem_block(dst, src, bytes, 1);
  if (threadIdx.x == 0) pyshmem::quiet();
}
"""

PROGRAM = textwrap.dedent("""
    import statistics, sys, time
    import numpy as np
    import pyshmem as shmem
    import pyshmem.cuda as pcuda
    reps, iters = int(sys.argv[1]), int(sys.argv[2])
    module = pcuda.Module(open(sys.argv[3]).read(), name="nvshmem_compat", target="cpu")
    k = {n: module.get_kernel(n) for n in ("lat_nvshmem", "lat_pyshmem", "bw_nvshmem", "bw_pyshmem")}
    BYTES = 64 * 1024
    src8, dst8 = shmem.zeros(1, np.int64), shmem.zeros(1, np.int64)
    srcb, dstb = shmem.zeros(BYTES, np.uint8), shmem.zeros(BYTES, np.uint8)
    bw_iters = max(1, iters // 20)
    t = {n: [] for n in k}
    shmem.barrier_all()
    if shmem.my_pe() == 0:
        for _ in range(reps):
            for api in ("nvshmem", "pyshmem"):
                s = time.perf_counter(); pcuda.launch(k["lat_" + api], 1, 1, dst8, src8, np.int64(iters))
                t["lat_" + api].append((time.perf_counter() - s) / iters * 1e9)
                s = time.perf_counter(); pcuda.launch(k["bw_" + api], 1, 128, dstb, srcb, np.uint64(BYTES), np.int64(bw_iters))
                t["bw_" + api].append(BYTES * bw_iters / (time.perf_counter() - s) / 1e9)
        med = {n: statistics.median(v) for n, v in t.items()}
        print(f"{'kernel':<22} {'nvshmem_*':>10} {'pyshmem::':>10} {'ratio':>6}")
        print(f"{'put_lat (ns)':<22} {med['lat_nvshmem']:10.1f} {med['lat_pyshmem']:10.1f} "
              f"{med['lat_nvshmem'] / med['lat_pyshmem']:6.3f}")
        print(f"{'put_bw 64 KiB (GB/s)':<22} {med['bw_nvshmem']:10.2f} {med['bw_pyshmem']:10.2f} "
              f"{med['bw_pyshmem'] / med['bw_nvshmem']:6.3f}")
        # The exact answer: the host compiler folds identical functions, one into a jump
        # to the other; objdump shows whether it did (when objdump is installed).
        import shutil, subprocess
        if shutil.which("objdump"):
            asm = subprocess.run(["objdump", "-d", str(module._path)], capture_output=True, text=True).stdout
            for api in ("lat", "bw"):
                body = asm.split(f"<{api}_pyshmem>:", 1)[1].split("\\n\\n", 1)[0]
                same = f"<{api}_nvshmem>" in body.splitlines()[1] if len(body.splitlines()) > 1 else False
                print(f"{api}: machine code of the two kernels identical (folded into one): {'yes' if same else 'no'}")
    shmem.barrier_all()
""")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--iters", type=int, default=20000)
    args = ap.parse_args()
    tmp = Path(os.environ.get("TMPDIR", "/tmp")) / f"bench_nvshmem_compat_{os.getpid()}"
    tmp.mkdir(parents=True, exist_ok=True)
    (tmp / "kernels.cu").write_text(KERNELS)
    (tmp / "prog.py").write_text(PROGRAM)
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env.setdefault("PYSHMEM_SYMMETRIC_SIZE", "64M")
    proc = subprocess.run([sys.executable, "-m", "pyshmem.run", "-n", "2", "--timeout", "600", str(tmp / "prog.py"),
                           str(args.reps), str(args.iters), str(tmp / "kernels.cu")], env=env, cwd=str(REPO),
                          capture_output=True, text=True, timeout=660)
    sys.stdout.write(proc.stdout)
    if proc.returncode != 0:
        sys.stderr.write(proc.stderr)
        raise SystemExit(proc.returncode)


if __name__ == "__main__":
    main()
