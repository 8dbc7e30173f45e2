"""Ring communication: a block shift with put + barrier, then a token passed with signals.

What it shows
    1. Bulk one-sided ``put``: every PE writes a block into the symmetric array of
       its right-hand neighbour; ``barrier_all`` completes all puts and then every
       PE checks what its left-hand neighbour wrote.
    2. Point-to-point synchronisation with ``put_signal`` / ``signal_wait_until``:
       a token (a hop counter) travels around the ring ``--laps`` times. Each PE
       waits only for its left neighbour, increments the counter and sends it on.
       ``put_signal`` guarantees the token is visible before the signal, so a PE
       that sees the signal may read the token. No barrier is involved.

How to run
    shmemrun -n 4 python examples/ring_put.py [--laps 100] [--block 1024]
    PYTHONPATH=. python -m pyshmem.run -n 4 python examples/ring_put.py

Works on any number of PEs; with one PE, the PE is its own neighbour.
"""

import argparse
import sys
import time

import numpy as np

import pyshmem as shmem


def block_shift(me, npes, left, right, nelems):
    """Part 1: put a block to the right neighbour; returns True if ours arrived intact."""
    # Symmetric: exists on every PE. Allocation ends with a barrier, so the right
    # neighbour's copy is allocated and zeroed before anybody puts into it.
    received = shmem.zeros(nelems, dtype=np.int64)

    # Each PE's block is recognisable: PE k sends k * 1_000_000 + [0, 1, 2, ...].
    mine = me * 1_000_000 + np.arange(nelems, dtype=np.int64)
    shmem.put(received, mine, right)                  # (target, source, pe)

    # put returns as soon as `mine` may be reused; the barrier (which starts with
    # quiet) makes every PE's put complete and visible before anyone reads.
    shmem.barrier_all()

    expected = left * 1_000_000 + np.arange(nelems, dtype=np.int64)
    ok = np.array_equal(received, expected)
    if not ok:
        print(f"PE {me}: FAILED block from PE {left}: got {received[:4]}..., expected {expected[:4]}...")
    shmem.free(received)                              # collective, like the allocation
    return ok


def pass_token(me, npes, right, laps):
    """Part 2: pass a hop counter around the ring `laps` times; returns (ok, seconds)."""
    token = shmem.zeros(1, dtype=np.int64)    # where my left neighbour drops the token
    arrived = shmem.new_signal()              # set to the lap number when it arrives
    outgoing = np.zeros(1, dtype=np.int64)    # local (non-symmetric) source buffer
    ok = True

    start = time.perf_counter()
    for lap in range(1, laps + 1):
        if me == 0:
            # PE 0 starts each lap: after lap-1 full laps the counter is (lap-1)*npes.
            hops = (lap - 1) * npes
        else:
            # Wait until the left neighbour has signalled this lap; the signal is
            # set after the token is visible, so the token can be read now.
            shmem.signal_wait_until(arrived, shmem.CMP.EQ, lap)
            hops = int(token[0])
            if hops != (lap - 1) * npes + me:
                print(f"PE {me}: FAILED token in lap {lap}: {hops} hops, expected {(lap - 1) * npes + me}")
                ok = False

        outgoing[0] = hops + 1
        # Data and signal travel together. The neighbour's token buffer is free:
        # it has forwarded the previous token before this one can come round.
        shmem.put_signal(token, outgoing, right, arrived, lap, shmem.SIGNAL_SET)

        if me == 0:
            # The lap is over when the token comes back from PE npes-1.
            shmem.signal_wait_until(arrived, shmem.CMP.EQ, lap)
            if int(token[0]) != lap * npes:
                print(f"PE 0: FAILED lap {lap} ended after {int(token[0])} hops, expected {lap * npes}")
                ok = False
    elapsed = time.perf_counter() - start

    # Freeing is collective too, and starts with a barrier: nobody frees the
    # token while a neighbour could still be writing into it.
    shmem.del_signal(arrived)
    shmem.free(token)
    return ok, elapsed


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--laps", type=int, default=100, help="times the token goes round (default 100)")
    parser.add_argument("--block", type=int, default=1024, help="int64 elements in the shifted block")
    args = parser.parse_args()

    me, npes = shmem.my_pe(), shmem.n_pes()
    right = (me + 1) % npes           # where I send
    left = (me - 1) % npes            # who sends to me

    ok = block_shift(me, npes, left, right, args.block)
    token_ok, seconds = pass_token(me, npes, right, args.laps)
    ok = ok and token_ok

    # Combine every PE's verdict so PE 0 reports (and exits with) the job's result.
    failures = shmem.zeros(1, dtype=np.int64)
    if not ok:
        shmem.atomic_inc(failures, 0)
    shmem.barrier_all()

    if me == 0:
        hops = args.laps * npes
        if failures[0] == 0:
            print(f"block shift of {args.block} int64 to the right neighbour: ok on {npes} PE(s)")
            print(f"token made {args.laps} laps = {hops} hops in {seconds * 1e3:.1f} ms "
                  f"({seconds / hops * 1e6:.1f} us per hop)")
        else:
            print(f"FAILED on {int(failures[0])} PE(s)")
    # A PE that saw a bad value exits non-zero, and PE 0 also does if any PE did;
    # shmemrun exits non-zero when any PE does.
    return 0 if ok and failures[0] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
