"""Tensor-parallel all-reduce: the partial outputs of a row-parallel linear layer summed
over the PEs, from the host API and from a device kernel.

A row-parallel layer splits the input features over the PEs: PE p holds X[:, p-th
slice] and W[p-th slice, :] and computes the partial output X_p @ W_p. The layer's
output is the sum of the partials over the group: an all-reduce. Every PE checks its
result against NumPy, bit for bit (pyshmem sums the PEs in team order, and so does
the check), and PE 0 reports the all-reduce time and bus bandwidth.

Shows: pyshmem.sum_reduce in place over a team (TEAM_WORLD or the halves of a
split), the device API's sum_reduce_block in a CUDA C++ kernel (tp_allreduce.cu)
launched with pyshmem.cuda (on the CPU build without a GPU: needs g++ and the
libcu++ headers), and that both give the same bits.

How to run:
    shmemrun -n 4 python examples/tp_allreduce.py --rows 64 --hidden 1024 --out 512
    shmemrun -n 4 python examples/tp_allreduce.py --groups 2     # two TP groups of 2
    shmemrun -n 4 python examples/tp_allreduce.py --api host    # skip the kernel
"""

import argparse
import functools
import os
import sys
import time
from pathlib import Path

# One BLAS thread per PE: shmemrun starts a PE per core, and BLAS threads that spin
# after a matmul would steal the cores the all-reduce runs on. (Before NumPy loads.)
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402

import pyshmem as shmem  # noqa: E402


def shard(group_rank, group_size, rows, hidden, out, seed):
    """(X_p, W_p) of one group member: its slice of the input features."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((rows, hidden), dtype=np.float32)
    w = rng.standard_normal((hidden, out), dtype=np.float32) / np.float32(np.sqrt(hidden))
    lo, hi = hidden * group_rank // group_size, hidden * (group_rank + 1) // group_size
    return x[:, lo:hi], w[lo:hi]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=64, help="tokens in the batch")
    ap.add_argument("--hidden", type=int, default=1024, help="input features (split over the group)")
    ap.add_argument("--out", type=int, default=512, help="output features")
    ap.add_argument("--groups", type=int, default=1, help="independent TP groups (a split of the world)")
    ap.add_argument("--iters", type=int, default=5, help="timed all-reduces")
    ap.add_argument("--api", choices=("host", "device", "both"), default="both")
    args = ap.parse_args()

    me, n = shmem.my_pe(), shmem.n_pes()
    if n % args.groups:
        sys.exit(f"--groups {args.groups} must divide the number of PEs ({n})")
    size = n // args.groups
    # Group g holds PEs g*size ... (g+1)*size-1: a strided split of the world per group.
    group = me // size
    teams = [shmem.TEAM_WORLD.split_strided(g * size, 1, size) for g in range(args.groups)]
    team = teams[group]
    rank = team.my_pe()
    seed = 1000 + group  # each group runs its own layer

    x, w = shard(rank, size, args.rows, args.hidden, args.out, seed)
    y = shmem.zeros((args.rows, args.out), np.float32)  # collective: every PE allocates
    partials = [np.matmul(*shard(r, size, args.rows, args.hidden, args.out, seed)) for r in range(size)]
    want = functools.reduce(np.add, partials)  # team order, like pyshmem

    y[...] = partials[rank]
    shmem.sum_reduce(y, y, team=team)
    if not np.array_equal(y, want):
        sys.exit(f"PE {me}: host all-reduce differs from NumPy by {np.abs(y - want).max()}")
    times = []
    for _ in range(args.iters):
        y[...] = np.matmul(x, w)
        team.sync()
        t0 = time.perf_counter()
        shmem.sum_reduce(y, y, team=team)
        times.append(time.perf_counter() - t0)
    if not np.array_equal(y, want):
        sys.exit(f"PE {me}: timed host all-reduce is wrong")
    med = float(np.median(times))
    nbytes = y.nbytes
    lines = [f"host API: {args.rows}x{args.out} float32 ({nbytes / 2**20:.2f} MiB) summed over {size} PE(s) "
             f"x {args.groups} group(s): {med * 1e6:.0f} us, busbw {2 * (size - 1) / size * nbytes / med / 1e9:.2f} GB/s"]

    if args.api in ("device", "both"):
        import pyshmem.cuda as pcuda

        module = pcuda.Module((Path(__file__).with_suffix(".cu")).read_text(), name="tp_allreduce")
        kernel = module.get_kernel("allreduce")
        on_gpu = module.target == "gpu"
        yd = pcuda.zeros((args.rows, args.out), np.float32) if on_gpu else shmem.zeros((args.rows, args.out), np.float32)
        if on_gpu:
            yd.copy_from_host(np.ascontiguousarray(partials[rank]))
        else:
            yd[...] = partials[rank]
        shmem.barrier_all()
        t0 = time.perf_counter()
        pcuda.launch(kernel, 1, 128, yd, np.uint64(args.rows * args.out), np.int32(int(team)))
        dt = time.perf_counter() - t0
        got = yd.copy_to_host() if on_gpu else np.array(yd)
        if not np.array_equal(got, want):
            sys.exit(f"PE {me}: device all-reduce differs from NumPy by {np.abs(got - want).max()}")
        lines.append(f"device API ({'GPU' if on_gpu else 'CPU build'}): sum_reduce_block in a kernel, "
                     f"{dt * 1e6:.0f} us with the launch, same bits as the host API")
    shmem.barrier_all()
    for t in teams:
        t.destroy()
    if me == 0:
        print("\n".join(lines))
        print("tensor-parallel all-reduce: every PE matches NumPy bit for bit")


if __name__ == "__main__":
    main()
