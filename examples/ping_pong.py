"""Ping-pong latency between PE 0 and PE 1 with put_signal / signal_wait_until.

What it shows
    The classic latency test written with put-with-signal, the NVSHMEM-style way
    to send a message and say "it is there" in one call:

        PE 0                                   PE 1
        put_signal(msg, payload, 1, sig, i) -> signal_wait_until(sig, EQ, i)
        signal_wait_until(sig, EQ, i)       <- put_signal(msg, msg, 0, sig, i)

    Round ``i`` sets the signal to ``i``, so a PE waits for exactly the message
    of the current round. PE 1 echoes what it received, and PE 0 checks that the
    echo equals what it sent, so every round verifies the payload both ways.
    PE 0 times each round trip; the report gives the median round trip and half
    of it as the one-way latency. PEs other than 0 and 1 just wait at the final
    barrier.

How to run
    shmemrun -n 2 python examples/ping_pong.py [--iters 2000] [--elems 1] [--warmup 100]
    PYTHONPATH=. python -m pyshmem.run -n 2 python examples/ping_pong.py

Needs at least 2 PEs; with one PE it says so and exits successfully. Latency is
best when each PE has a core to itself; with more PEs than cores, waiting PEs
back off (yield, then sleep) and the numbers mostly measure the scheduler.
"""

import argparse
import statistics
import sys
import time

import numpy as np

import pyshmem as shmem


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iters", type=int, default=2000, help="timed round trips (default 2000)")
    parser.add_argument("--warmup", type=int, default=100, help="untimed round trips first (default 100)")
    parser.add_argument("--elems", type=int, default=1, help="int64 elements per message (default 1)")
    args = parser.parse_args()

    me, npes = shmem.my_pe(), shmem.n_pes()
    if npes < 2:
        print("ping_pong needs at least 2 PEs, e.g. shmemrun -n 2 python examples/ping_pong.py; nothing to do")
        return 0

    # Symmetric (collective) allocations; they end with a barrier, so both PEs have
    # them before the first put.
    msg = shmem.zeros(args.elems, dtype=np.int64)   # PE 1's copy receives pings, PE 0's the pongs
    sig = shmem.new_signal()                        # set to the round number on arrival
    payload = np.empty(args.elems, dtype=np.int64)  # PE 0's outgoing message (local memory)
    base = np.arange(args.elems, dtype=np.int64)
    rounds = args.warmup + args.iters
    round_trips_ns = []
    bad_rounds = 0

    if me == 0:
        for i in range(1, rounds + 1):
            payload[:] = base + i * 1000        # different contents every round
            t0 = time.perf_counter_ns()
            shmem.put_signal(msg, payload, 1, sig, i, shmem.SIGNAL_SET)
            shmem.signal_wait_until(sig, shmem.CMP.EQ, i)
            t1 = time.perf_counter_ns()
            # Outside the timed region: the echo must equal what we sent.
            if not np.array_equal(msg, payload):
                bad_rounds += 1
                if bad_rounds <= 3:
                    print(f"FAILED round {i}: sent {payload[:4]}..., echo {msg[:4]}...")
            if i > args.warmup:
                round_trips_ns.append(t1 - t0)
    elif me == 1:
        for i in range(1, rounds + 1):
            shmem.signal_wait_until(sig, shmem.CMP.EQ, i)
            # Echo the received message straight back, from the symmetric buffer itself.
            # (PE 0 does not send round i+1 before it has this echo, so msg is stable.)
            shmem.put_signal(msg, msg, 0, sig, i, shmem.SIGNAL_SET)
    shmem.barrier_all()  # PEs 2, 3, ... wait here for the whole exchange

    if me == 0:
        if bad_rounds:
            print(f"FAILED: {bad_rounds} of {rounds} echoes differed from what was sent")
            return 1
        rtt_us = statistics.median(round_trips_ns) / 1e3
        best_us = min(round_trips_ns) / 1e3
        print(f"ping-pong PE 0 <-> PE 1, {args.elems * 8} bytes, {args.iters} rounds (+{args.warmup} warm-up), "
              f"all echoes verified")
        print(f"round trip: median {rtt_us:.2f} us (min {best_us:.2f} us); one-way latency: median {rtt_us / 2:.2f} us")
    return 0


if __name__ == "__main__":
    sys.exit(main())
