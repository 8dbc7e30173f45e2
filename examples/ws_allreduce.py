"""Warp-specialised one-shot all-reduce in CUDA C++: sender warps and reducer warps.

Every PE holds a float32 vector; after the call every PE holds the sum over the PEs.
The kernel in examples/ws_allreduce.cu splits the vector into one chunk per block and
gives the warps of each block (128 threads: 4 warps) two roles that run at the same
time: the first `--send-warps` warps put this PE's chunk into every peer's symmetric
staging buffer with warp-cooperative put_signal_nbi_warp (the signal names the source
PE and the block), the other warps wait for the peers' signals, one lane per warp, and
sum the chunks into the output in PE order. A kernel of this shape needs real threads:
the reducers wait while the senders of the same block go on. Every call is checked
bit for bit against NumPy (the PEs summed in the same order), with fresh inputs each time.

Shows: warp specialisation (roles by warp index), put_signal_nbi_warp, signal_wait_until
by one lane + __syncwarp, __syncthreads before a single thread's quiet, signals that
count calls (epochs) so nothing is reset between calls.

How to run. With a GPU on every PE (cuda backend) the kernel runs on the GPU on
pyshmem.cuda arrays; without one it is compiled with the host C++ compiler, each block
on a host thread and its CUDA threads as fibers (needs g++ and the libcu++ headers of
the CUDA toolkit or `pip install nvidia-cuda-cccl`):
    shmemrun -n 4 python examples/ws_allreduce.py --elems 65536 --blocks 4 --iters 10
    shmemrun -n 2 python examples/ws_allreduce.py --send-warps 1
Add PYSHMEM_PROXY_ALL=1 to send every kernel transfer through the proxy thread.
"""

import argparse
import functools
import sys
import time
from pathlib import Path

import numpy as np

import pyshmem as shmem
import pyshmem.cuda as pcuda

SOURCE = Path(__file__).with_suffix(".cu")
THREADS = 128  # threads per block: 4 warps


def contribution(pe, call, nelems):
    """PE pe's input vector for call `call` (every PE can compute every PE's input)."""
    return np.random.default_rng(1000 * call + pe).standard_normal(nelems).astype(np.float32)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--elems", type=int, default=1 << 16, help="float32 elements in the vector")
    ap.add_argument("--blocks", type=int, default=2, help="grid size: one chunk of the vector per block")
    ap.add_argument("--send-warps", type=int, default=2, help=f"sender warps per block (1 to {THREADS // 32 - 1})")
    ap.add_argument("--iters", type=int, default=5, help="all-reduces, each checked")
    args = ap.parse_args()
    if not 1 <= args.send_warps < THREADS // 32:
        sys.exit(f"--send-warps must be 1 to {THREADS // 32 - 1}: a block needs both senders and reducers")

    me, n = shmem.my_pe(), shmem.n_pes()
    module = pcuda.Module(SOURCE.read_text(), name="ws_allreduce")
    kernel = module.get_kernel("ws_allreduce")
    on_gpu = module.target == "gpu"
    N, grid = args.elems, args.blocks

    def buffer(shape, dtype):
        return pcuda.zeros(shape, dtype) if on_gpu else shmem.zeros(shape, dtype)

    def to_host(a):
        return a.copy_to_host() if on_gpu else np.array(a)

    def from_host(a, values):
        if on_gpu:
            a.copy_from_host(np.ascontiguousarray(values))
        else:
            a[...] = values

    x = buffer(N, np.float32)
    out = buffer(N, np.float32)
    stage = buffer((n, N), np.float32)     # slot s: PE s's vector
    signals = buffer((n, grid), np.uint64)  # (s, b) = the last call whose chunk b from PE s arrived

    times = []
    for call in range(1, args.iters + 1):
        inputs = [contribution(pe, call, N) for pe in range(n)]
        want = functools.reduce(np.add, inputs)  # PE order, like the kernel
        from_host(x, inputs[me])
        from_host(out, np.full(N, np.nan, np.float32))  # every element must be written
        shmem.barrier_all()  # every PE has read its stage of the last call and set its x
        t0 = time.perf_counter()
        pcuda.launch(kernel, grid, THREADS, out, x, stage, signals, np.uint64(N), np.int32(args.send_warps),
                     np.uint64(call))
        times.append(time.perf_counter() - t0)
        got = to_host(out)
        if not np.array_equal(got, want):
            bad = int(np.count_nonzero(got != want))
            sys.exit(f"PE {me} call {call}: {bad} of {N} elements differ from NumPy "
                     f"(first at {int(np.argmax(got != want))})")
        sig = to_host(signals)
        if n > 1 and not (np.delete(sig, me, axis=0) == call).all():
            sys.exit(f"PE {me} call {call}: signals are {sig.tolist()}, expected {call} from every peer")

    shmem.barrier_all()
    if me == 0:
        med = float(np.median(times))
        print(f"warp-specialised all-reduce of {N} float32 over {n} PE(s): grid {grid} x {THREADS} threads, "
              f"{args.send_warps} sender + {THREADS // 32 - args.send_warps} reducer warps per block; "
              f"{args.iters} calls, median {med * 1e6:.0f} us with the launch "
              f"({'GPU' if on_gpu else 'CPU build'})")
        print("every call matches NumPy bit for bit on every PE")


if __name__ == "__main__":
    main()
