"""The MoE example's kernels at 128 threads per block next to the one-thread-per-block
version they replaced (issue 17), side by side in one run, on the CPU build.

Run on 4 PEs (from the repository root):
    shmemrun -n 4 python benchmarks/bench_moe_threads.py
    shmemrun -n 4 python benchmarks/bench_moe_threads.py --tokens 16 --hidden 1024 --rounds 30 --json out.json

Variants, each one dispatch launch + one combine launch per round:
  - "1 thread":  the kernels of examples/moe_alltoall.cu before issue 17 (kept below as
    OLD_SOURCE, commit ee86835), launched with block=1: what the CPU build ran before
    blocks had real threads (one host thread per block did the whole copy);
  - "128 threads": today's examples/moe_alltoall.cu, block=128 (4 warps, counts and
    offsets in shared memory, one put_nbi_warp per token per warp);
  - "old at 128": the old kernels launched with block=128 (their _block copies shared
    out over 128 fibers), for reference;
  - "empty, 1" and "empty, 128": two launches of an empty kernel on the same grid at
    1 and 128 threads per block, the runtime's floor (host threads, fibers, stacks).
Each timed launch starts after a barrier; the time is the launch call (the kernel runs
synchronously on the CPU build), per PE. Rounds interleave the variants, order
alternating, after warm-up rounds; every round's results are checked as the example
checks them. PE 0 prints, per variant, the median over rounds of the slowest PE's
dispatch + combine time, the median of PE 0's own, and the ratio to "1 thread".
"""

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

import pyshmem as shmem
import pyshmem.cuda as pcuda

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "examples"))
from moe_alltoall import token_count, token_values  # noqa: E402

# examples/moe_alltoall.cu at commit ee86835 (before issue 17), comments shortened.
OLD_SOURCE = r"""
#include <pyshmem/device.cuh>

extern "C" __global__ void dispatch(float* recv, const float* send, const int* send_counts, uint64_t* recv_signals,
                                    int max_tokens, int hidden) {
  const int me = pyshmem::my_pe(), n = pyshmem::n_pes();
  const size_t slot = static_cast<size_t>(max_tokens) * hidden;
  for (int pe = blockIdx.x; pe < n; pe += gridDim.x) {
    const size_t bytes = static_cast<size_t>(send_counts[pe]) * hidden * sizeof(float);
    pyshmem::putmem_signal_nbi_block(recv + me * slot, send + pe * slot, bytes, recv_signals + me,
                                     static_cast<uint64_t>(send_counts[pe]) + 1, PYSHMEM_SIGNAL_SET, pe);
  }
  for (int src = blockIdx.x; src < n; src += gridDim.x)
    if (threadIdx.x == 0) pyshmem::signal_wait_until(recv_signals + src, PYSHMEM_CMP_NE, 0);
  pyshmem::quiet();
}

extern "C" __global__ void combine(float* combined, const float* expert_out, const uint64_t* recv_signals,
                                   uint64_t* back_signals, int max_tokens, int hidden) {
  const int me = pyshmem::my_pe(), n = pyshmem::n_pes();
  const size_t slot = static_cast<size_t>(max_tokens) * hidden;
  for (int src = blockIdx.x; src < n; src += gridDim.x) {
    const uint64_t count = pyshmem::signal_fetch(recv_signals + src) - 1;
    pyshmem::putmem_signal_nbi_block(combined + me * slot, expert_out + src * slot, count * hidden * sizeof(float),
                                     back_signals + me, count + 1, PYSHMEM_SIGNAL_SET, src);
  }
  for (int dst = blockIdx.x; dst < n; dst += gridDim.x)
    if (threadIdx.x == 0) pyshmem::signal_wait_until(back_signals + dst, PYSHMEM_CMP_NE, 0);
  pyshmem::quiet();
}
"""

EMPTY_SOURCE = r"""
#include <pyshmem/device.cuh>
extern "C" __global__ void empty(int* x) { if (threadIdx.x == 0 && blockIdx.x == 0) x[0] = 1; }
"""

# name, source, threads per block, packed send buffer (the new kernel) or slots
VARIANTS = (("1 thread", "old", 1, False), ("128 threads", "new", 128, True), ("old at 128", "old", 128, False),
            ("empty, 1", "empty", 1, False), ("empty, 128", "empty", 128, False))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tokens", type=int, default=16, help="most tokens one PE sends to another")
    ap.add_argument("--hidden", type=int, default=64, help="floats per token")
    ap.add_argument("--rounds", type=int, default=20, help="timed rounds per variant")
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--json", help="write the figures here (PE 0)")
    args = ap.parse_args()

    me, n = shmem.my_pe(), shmem.n_pes()
    T, H = args.tokens, args.hidden
    modules = {"old": pcuda.Module(OLD_SOURCE, name="moe_alltoall_1thread"),
               "new": pcuda.Module((REPO / "examples" / "moe_alltoall.cu").read_text(), name="moe_alltoall")}
    if modules["new"].target != "cpu":
        sys.exit("this benchmark measures the CPU build (run it without a GPU)")
    kernels = {k: (m.get_kernel("dispatch"), m.get_kernel("combine")) for k, m in modules.items()}
    empty = pcuda.Module(EMPTY_SOURCE, name="moe_bench_empty").get_kernel("empty")

    send = shmem.zeros((n, T, H), np.float32)
    recv = shmem.zeros((n, T, H), np.float32)
    expert_out = shmem.zeros((n, T, H), np.float32)
    combined = shmem.zeros((n, T, H), np.float32)
    send_counts = shmem.zeros(n, np.int32)
    recv_signals = shmem.zeros(n, np.uint64)
    back_signals = shmem.zeros(n, np.uint64)
    times = shmem.zeros((n, 2), np.float64)  # PE 0 gathers every PE's (dispatch, combine)
    shmem.barrier_all()

    def timed(kernel, threads, *kargs):
        """Seconds of one launch on this PE, started after a barrier."""
        shmem.barrier_all()
        t0 = time.perf_counter()
        pcuda.launch(kernel, n, threads, *kargs, shared_mem=2 * n * 4)  # the new kernels' counts + offsets
        return time.perf_counter() - t0

    def gather(spent):
        """Every PE's two launch times, on PE 0 (None elsewhere)."""
        shmem.put(times[me], np.array(spent), 0)
        shmem.barrier_all()
        return times.copy() if me == 0 else None

    def one_round(rnd, source, threads, packed):
        if source == "empty":  # as many launches as dispatch + combine
            return gather([timed(empty, threads, send_counts) for _ in range(2)])
        dispatch, combine = kernels[source]
        counts = np.array([token_count(me, d, rnd, T) for d in range(n)], np.int32)
        tokens = [token_values(me, d, rnd, counts[d], H) for d in range(n)]
        send[...] = 0
        if packed:
            send.reshape(n * T, H)[:counts.sum()] = np.concatenate(tokens)
        else:
            for d in range(n):
                send[d, :counts[d]] = tokens[d]
        send_counts[...] = counts
        t_dispatch = timed(dispatch, threads, recv, send, send_counts, recv_signals, np.int32(T), np.int32(H))
        for s in range(n):
            c = token_count(s, me, rnd, T)
            if recv_signals[s] != c + 1 or not np.array_equal(recv[s, :c], token_values(s, me, rnd, c, H)):
                sys.exit(f"PE {me}: {source} kernel at {threads} threads: dispatch from PE {s} is wrong")
        expert_out[...] = recv * 2 + 1
        t_combine = timed(combine, threads, combined, expert_out, recv_signals, back_signals, np.int32(T), np.int32(H))
        for d in range(n):
            if back_signals[d] != counts[d] + 1 or not np.array_equal(combined[d, :counts[d]], tokens[d] * 2 + 1):
                sys.exit(f"PE {me}: {source} kernel at {threads} threads: combine from PE {d} is wrong")
        recv_signals[...] = 0
        back_signals[...] = 0
        return gather([t_dispatch, t_combine])

    results = {name: [] for name, *_ in VARIANTS}
    for rnd in range(args.warmup + args.rounds):
        order = VARIANTS if rnd % 2 == 0 else VARIANTS[::-1]
        for name, source, threads, packed in order:
            t = one_round(rnd, source, threads, packed)
            if me == 0 and rnd >= args.warmup:
                results[name].append(t)

    if me == 0:
        base = None
        rows = []
        print(f"MoE dispatch + combine kernels, {n} PEs, grid {n}, up to {T} tokens x {H} floats per PE pair, "
              f"{args.rounds} interleaved rounds (medians; us per round, dispatch + combine launches)")
        print("| variant | slowest PE | PE 0 | dispatch (slowest) | combine (slowest) | ratio to 1 thread |")
        print("|---|---|---|---|---|---|")
        for name, *_ in VARIANTS:
            r = np.array(results[name])  # rounds x PEs x (dispatch, combine)
            slowest = float(np.median(r.sum(axis=2).max(axis=1))) * 1e6
            pe0 = float(np.median(r[:, 0].sum(axis=1))) * 1e6
            disp = float(np.median(r[:, :, 0].max(axis=1))) * 1e6
            comb = float(np.median(r[:, :, 1].max(axis=1))) * 1e6
            base = base or slowest
            rows.append({"variant": name, "slowest_us": slowest, "pe0_us": pe0, "dispatch_us": disp,
                         "combine_us": comb, "ratio": slowest / base})
            print(f"| {name} | {slowest:.0f} | {pe0:.0f} | {disp:.0f} | {comb:.0f} | {slowest / base:.2f} |")
        if args.json:
            Path(args.json).write_text(json.dumps({"npes": n, "tokens": T, "hidden": H, "rounds": args.rounds,
                                                   "rows": rows}, indent=2))


if __name__ == "__main__":
    main()
