"""Monte-Carlo estimate of pi, summed with remote atomics on PE 0.

What it shows
    * ``atomic_fetch_add`` as a shared work queue: the darts are cut into chunks,
      and a PE takes the next chunk number with ``atomic_fetch_add(next_chunk, 1, 0)``
      (one counter on PE 0, returning its previous value). Fast PEs take more
      chunks; no chunk is taken twice.
    * ``atomic_add`` as a global sum: each PE adds the hits of every chunk it
      threw into a counter on PE 0, and its chunk count into its own slot of a
      per-PE tally there.
    * ``barrier_all`` completes all atomics before PE 0 reads the counters.
    Atomic targets are 1-element views of symmetric arrays, ``a[i:i + 1]``.

    Every chunk draws from its own NumPy generator seeded with (seed, chunk
    number), so the result does not depend on which PE threw which chunk. That
    makes the check exact: PE 0 re-throws every chunk itself and compares the
    total with the atomically summed one; it also checks the estimate against
    pi with a statistical tolerance (6 standard deviations).

How to run
    shmemrun -n 4 python examples/pi_atomics.py [--darts 2000000] [--chunk 50000] [--seed 2024]
    PYTHONPATH=. python -m pyshmem.run -n 4 python examples/pi_atomics.py
"""

import argparse
import math
import sys

import numpy as np

import pyshmem as shmem


def throw(seed, chunk, ndarts):
    """Throws `ndarts` darts of chunk `chunk` at the unit square; returns how many land in the quarter circle."""
    rng = np.random.default_rng([seed, chunk])
    x, y = rng.random((2, ndarts))
    return int(np.count_nonzero(x * x + y * y <= 1.0))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--darts", type=int, default=2_000_000, help="darts in total (default 2e6)")
    parser.add_argument("--chunk", type=int, default=50_000, help="darts per chunk (default 5e4)")
    parser.add_argument("--seed", type=int, default=2024)
    args = parser.parse_args()

    me, npes = shmem.my_pe(), shmem.n_pes()
    nchunks = math.ceil(args.darts / args.chunk)

    def chunk_size(c):  # the last chunk may be short
        return min(args.chunk, args.darts - c * args.chunk)

    # Symmetric counters; only PE 0's copies are used. Allocation is collective and
    # ends with a barrier, so they are zero on PE 0 before anyone adds to them.
    next_chunk = shmem.zeros(1, dtype=np.int64)
    hits = shmem.zeros(1, dtype=np.int64)
    chunks_by_pe = shmem.zeros(npes, dtype=np.int64)

    taken = 0
    while True:
        chunk = shmem.atomic_fetch_add(next_chunk, 1, 0)   # returns the value before the add
        if chunk >= nchunks:
            break
        shmem.atomic_add(hits, throw(args.seed, chunk, chunk_size(chunk)), 0)
        taken += 1
    shmem.atomic_add(chunks_by_pe[me:me + 1], taken, 0)

    shmem.barrier_all()  # all atomics are complete and visible on PE 0 after this

    if me == 0:
        total_hits = int(hits[0])
        estimate = 4.0 * total_hits / args.darts
        # The estimate is 4 * (binomial fraction): its standard deviation is 4*sqrt(p(1-p)/N).
        p = math.pi / 4
        sigma = 4.0 * math.sqrt(p * (1 - p) / args.darts)
        serial_hits = sum(throw(args.seed, c, chunk_size(c)) for c in range(nchunks))
        print(f"pi ~ {estimate:.6f} from {args.darts} darts on {npes} PE(s) "
              f"(error {estimate - math.pi:+.6f}, sigma {sigma:.6f})")
        print(f"chunks thrown per PE: {chunks_by_pe.tolist()}")
        errors = []
        if int(chunks_by_pe.sum()) != nchunks:
            errors.append(f"{int(chunks_by_pe.sum())} chunks thrown, expected {nchunks}")
        if total_hits != serial_hits:
            errors.append(f"atomic sum of hits {total_hits} != serial recount {serial_hits}")
        if abs(estimate - math.pi) > 6 * sigma:
            errors.append(f"estimate {estimate} is more than 6 sigma from pi")
        if errors:
            print("FAILED: " + "; ".join(errors))
            return 1
        print("hits match a serial recount exactly")
    return 0


if __name__ == "__main__":
    sys.exit(main())
