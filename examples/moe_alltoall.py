"""MoE dispatch and combine: an all-to-all of variable-size token blocks in CUDA C++.

Every PE routes a different number of tokens (rows of `hidden` floats, zero included)
to every PE. The `dispatch` kernel in examples/moe_alltoall.cu is written as for a GPU:
128 threads per block, the per-destination counts and their prefix sums (the offsets
of each destination's tokens in the packed send buffer) shared through __shared__
memory with __syncthreads, each warp copying tokens with warp-cooperative puts, and one
thread per block signalling each destination, the token count riding in the signal
value. Each PE's "expert" transforms what it received; the `combine` kernel sends the
results back to where each token came from. Every round is checked element by element
against NumPy, and the rows past each count must be left untouched.

Shows: pyshmem.cuda.Module / launch of CUDA C++ kernels that use <pyshmem/device.cuh>,
warp-level put_nbi_warp, dynamic shared memory (launch(shared_mem=)), fence then
signal_op with data-carrying signals, signal_wait_until, quiet in a kernel; the same
script on a GPU (symmetric GPU arrays) and without one.

How to run. With a GPU on every PE (cuda backend) the kernels run on the GPU on
pyshmem.cuda arrays. Without one, the kernels are compiled with the host C++ compiler;
each block runs on a host thread and its 128 CUDA threads as fibers there, on
symmetric NumPy arrays (needs g++ and the libcu++ headers of the CUDA toolkit or
`pip install nvidia-cuda-cccl`):
    shmemrun -n 4 python examples/moe_alltoall.py --tokens 16 --hidden 64 --rounds 3
Add PYSHMEM_PROXY_ALL=1 to send every kernel transfer through the proxy thread (the
path to PEs on other nodes).
"""

import argparse
import sys
from pathlib import Path

import numpy as np

import pyshmem as shmem
import pyshmem.cuda as pcuda

SOURCE = Path(__file__).with_suffix(".cu")


def token_count(src, dst, rnd, max_tokens):
    """Tokens PE src routes to PE dst in round rnd (0 happens: an expert may get none)."""
    return (src * 7 + dst * 3 + rnd * 5) % (max_tokens + 1)


def token_values(src, dst, rnd, count, hidden):
    """The tokens themselves: every element names its source, destination, row and column."""
    rows = np.arange(count, dtype=np.float32)[:, None]
    cols = np.arange(hidden, dtype=np.float32)[None, :]
    return src * 1000 + dst * 100 + rnd * 10 + rows * 0.5 + cols * 0.001


THREADS = 128   # threads per block: 4 warps
SENTINEL = -7.0  # receive rows past a count must keep it (no kernel writes past a count)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tokens", type=int, default=16, help="most tokens one PE sends to another")
    ap.add_argument("--hidden", type=int, default=64, help="floats per token")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--blocks", type=int, default=0, help="grid size (default: one block per PE)")
    args = ap.parse_args()

    me, n = shmem.my_pe(), shmem.n_pes()
    module = pcuda.Module(SOURCE.read_text(), name="moe_alltoall")
    dispatch, combine = module.get_kernel("dispatch"), module.get_kernel("combine")
    on_gpu = module.target == "gpu"
    grid = args.blocks or n
    T, H = args.tokens, args.hidden
    smem = 2 * n * np.dtype(np.int32).itemsize  # counts and offsets, per block

    # Kernels read and write these: GPU arrays on a GPU, symmetric NumPy arrays on the CPU.
    def buffer(shape, dtype):
        return pcuda.zeros(shape, dtype) if on_gpu else shmem.zeros(shape, dtype)

    def to_host(x):
        return x.copy_to_host() if on_gpu else np.array(x)

    def from_host(x, values):
        if on_gpu:
            x.copy_from_host(np.ascontiguousarray(values))
        else:
            x[...] = values

    send = buffer((n * T, H), np.float32)       # packed: the tokens for PE 0, then for PE 1, ...
    recv = buffer((n, T, H), np.float32)        # slot s: tokens from PE s
    expert_out = buffer((n, T, H), np.float32)  # the expert's results, same slots as recv
    combined = buffer((n, T, H), np.float32)    # slot d: my tokens back from PE d
    send_counts = buffer(n, np.int32)
    recv_signals = buffer(n, np.uint64)
    back_signals = buffer(n, np.uint64)

    def reset():
        """Signals to zero, receive buffers to the sentinel: before a barrier, so no PE
        sends into them before their owner is done."""
        from_host(recv_signals, np.zeros(n, np.uint64))
        from_host(back_signals, np.zeros(n, np.uint64))
        from_host(recv, np.full((n, T, H), SENTINEL, np.float32))
        from_host(combined, np.full((n, T, H), SENTINEL, np.float32))

    reset()
    shmem.barrier_all()

    moved = 0
    for rnd in range(args.rounds):
        counts = np.array([token_count(me, d, rnd, T) for d in range(n)], np.int32)
        tokens = [token_values(me, d, rnd, counts[d], H) for d in range(n)]
        packed = np.zeros((n * T, H), np.float32)
        packed[:counts.sum()] = np.concatenate(tokens)  # as routing leaves them: grouped by destination
        from_host(send, packed)
        from_host(send_counts, counts)

        pcuda.launch(dispatch, grid, THREADS, recv, send, send_counts, recv_signals, np.int32(T), np.int32(H),
                     shared_mem=smem)
        got, signals = to_host(recv), to_host(recv_signals)
        out = np.zeros((n, T, H), np.float32)
        for s in range(n):
            c = token_count(s, me, rnd, T)
            if signals[s] != c + 1:
                sys.exit(f"PE {me} round {rnd}: signal from PE {s} is {signals[s]}, expected {c + 1}")
            if not np.array_equal(got[s, :c], token_values(s, me, rnd, c, H)):
                sys.exit(f"PE {me} round {rnd}: tokens from PE {s} are wrong")
            if not (got[s, c:] == SENTINEL).all():
                sys.exit(f"PE {me} round {rnd}: PE {s} wrote past its {c} tokens")
            out[s, :c] = got[s, :c] * 2 + 1  # the "expert"
            moved += c
        from_host(expert_out, out)

        pcuda.launch(combine, grid, THREADS, combined, expert_out, recv_signals, back_signals, np.int32(T),
                     np.int32(H), shared_mem=smem)
        back, back_sig = to_host(combined), to_host(back_signals)
        for d in range(n):
            c = counts[d]
            if back_sig[d] != c + 1 or not np.array_equal(back[d, :c], tokens[d] * 2 + 1):
                sys.exit(f"PE {me} round {rnd}: combined tokens from PE {d} are wrong")
            if not (back[d, c:] == SENTINEL).all():
                sys.exit(f"PE {me} round {rnd}: PE {d} combined past my {c} tokens")

        reset()  # all traffic to me for this round has arrived
        shmem.barrier_all()  # nobody dispatches the next round before every PE reset

    total = np.array([moved], np.int64)
    everyone = shmem.zeros(1, np.int64)
    shmem.atomic_add(everyone, int(total[0]), 0)
    shmem.barrier_all()
    if me == 0:
        print(f"{args.rounds} rounds of MoE dispatch/combine over {n} PE(s), grid {grid}, {THREADS} threads per "
              f"block: {int(everyone[0])} tokens of {H} floats moved each way, every element verified "
              f"({'GPU' if on_gpu else 'CPU build'})")


if __name__ == "__main__":
    main()
