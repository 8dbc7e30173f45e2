"""MoE dispatch and combine: an all-to-all of variable-size token blocks in CUDA C++.

Every PE routes a different number of tokens (rows of `hidden` floats, zero included)
to every PE. The `dispatch` kernel in examples/moe_alltoall.cu sends them with
block-cooperative put_signal, the token count riding in the signal value; each PE's
"expert" transforms what it received; the `combine` kernel sends the results back to
where each token came from. Every round is checked element by element.

Shows: pyshmem.cuda.Module / launch of CUDA C++ kernels that use <pyshmem/device.cuh>,
put_signal with data-carrying signals, signal_wait_until, quiet in a kernel.

How to run (no GPU needed: with the cpu backend the kernels are compiled with the
host C++ compiler and each block runs as a host thread; needs g++ and the libcu++
headers of the CUDA toolkit or `pip install nvidia-cuda-cccl`):
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
    grid = args.blocks or n
    T, H = args.tokens, args.hidden

    send = shmem.zeros((n, T, H), np.float32)        # slot d: tokens for PE d
    recv = shmem.zeros((n, T, H), np.float32)        # slot s: tokens from PE s
    expert_out = shmem.zeros((n, T, H), np.float32)  # the expert's results, same slots as recv
    combined = shmem.zeros((n, T, H), np.float32)    # slot d: my tokens back from PE d
    recv_signals = shmem.zeros(n, np.uint64)
    back_signals = shmem.zeros(n, np.uint64)
    shmem.barrier_all()

    moved = 0
    for rnd in range(args.rounds):
        counts = np.array([token_count(me, d, rnd, T) for d in range(n)], np.int32)
        for d in range(n):
            send[d, :counts[d]] = token_values(me, d, rnd, counts[d], H)

        pcuda.launch(dispatch, grid, 128, recv, send, counts, recv_signals, np.int32(T), np.int32(H))
        for s in range(n):
            c = token_count(s, me, rnd, T)
            if recv_signals[s] != c + 1:
                sys.exit(f"PE {me} round {rnd}: signal from PE {s} is {recv_signals[s]}, expected {c + 1}")
            if not np.array_equal(recv[s, :c], token_values(s, me, rnd, c, H)):
                sys.exit(f"PE {me} round {rnd}: tokens from PE {s} are wrong")
            expert_out[s, :c] = recv[s, :c] * 2 + 1  # the "expert"
            moved += c

        pcuda.launch(combine, grid, 128, combined, expert_out, recv_signals, back_signals, np.int32(T), np.int32(H))
        for d in range(n):
            c = counts[d]
            if back_signals[d] != c + 1 or not np.array_equal(combined[d, :c], send[d, :c] * 2 + 1):
                sys.exit(f"PE {me} round {rnd}: combined tokens from PE {d} are wrong")

        recv_signals[:] = 0  # all traffic to me for this round has arrived (the kernels waited)
        back_signals[:] = 0
        shmem.barrier_all()  # nobody dispatches the next round before every PE reset

    total = np.array([moved], np.int64)
    everyone = shmem.zeros(1, np.int64)
    shmem.atomic_add(everyone, int(total[0]), 0)
    shmem.barrier_all()
    if me == 0:
        print(f"{args.rounds} rounds of MoE dispatch/combine over {n} PE(s), grid {grid}: "
              f"{int(everyone[0])} tokens of {H} floats moved each way, every element verified")


if __name__ == "__main__":
    main()
