"""A distributed histogram: bins spread over the PEs, filled with remote atomic adds.

What it shows
    * Block distribution of a global array over PEs: with B bins and P PEs,
      each PE owns ``per_pe = ceil(B / P)`` consecutive bins (the last owners may
      own fewer, or none), stored in a symmetric array of ``per_pe`` counters.
      Global bin ``b`` lives on PE ``b // per_pe`` at index ``b % per_pe``.
    * ``atomic_add`` into another PE's memory: every PE bins its own samples
      locally with NumPy, then adds each non-zero count into the owning PE's
      counter. Many PEs update the same counter at once; the atomics make sure
      no update is lost.
    * ``get`` to gather: after a barrier, PE 0 reads every PE's slice into one
      local array and prints it as a small bar chart.

    Checking: every PE's samples come from a NumPy generator seeded with
    (seed, PE), so anyone can regenerate all of them. Each PE recomputes the
    histogram of all samples and checks the slice it owns; PE 0 also checks the
    gathered histogram as a whole. Both must match ``numpy.histogram`` exactly.

How to run
    shmemrun -n 4 python examples/histogram_atomics.py [--bins 20] [--samples 100000] [--seed 7]
    PYTHONPATH=. python -m pyshmem.run -n 3 python examples/histogram_atomics.py
"""

import argparse
import math
import sys

import numpy as np

import pyshmem as shmem

RANGE = (-4.0, 4.0)  # samples outside the range are not counted (as in numpy.histogram)


def samples_of(pe, seed, count):
    """The samples PE `pe` bins: normally distributed, reproducible from (seed, pe)."""
    return np.random.default_rng([seed, pe]).normal(0.0, 1.0, count)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bins", type=int, default=20, help="bins in the whole histogram (default 20)")
    parser.add_argument("--samples", type=int, default=100_000, help="samples per PE (default 1e5)")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()

    me, npes = shmem.my_pe(), shmem.n_pes()
    per_pe = math.ceil(args.bins / npes)                # bins owned by each PE (at most)
    my_first = min(me * per_pe, args.bins)              # my global bins: my_first .. my_last-1
    my_last = min(my_first + per_pe, args.bins)

    # My slice of the global histogram. Every PE allocates the same size (symmetric
    # allocations must match); slots past the last bin stay unused. The allocation
    # ends with a barrier: every slice is zeroed before anybody adds into it.
    counts = shmem.zeros(per_pe, dtype=np.int64)

    # Bin my samples locally, then add each count into the bin's owner.
    local, _ = np.histogram(samples_of(me, args.seed, args.samples), bins=args.bins, range=RANGE)
    for b in np.flatnonzero(local):
        owner, slot = divmod(int(b), per_pe)
        shmem.atomic_add(counts[slot:slot + 1], int(local[b]), owner)

    shmem.barrier_all()  # every atomic add is complete and visible after this

    # Reference: regenerate everybody's samples and let NumPy count them all at once.
    everything = np.concatenate([samples_of(pe, args.seed, args.samples) for pe in range(npes)])
    reference, edges = np.histogram(everything, bins=args.bins, range=RANGE)
    ok = np.array_equal(counts[:my_last - my_first], reference[my_first:my_last])
    if not ok:
        print(f"PE {me}: FAILED bins {my_first}..{my_last - 1}: {counts[:my_last - my_first].tolist()}, "
              f"expected {reference[my_first:my_last].tolist()}")

    if me == 0:
        # Gather: get each owner's slice into the matching part of one local array.
        gathered = np.zeros(args.bins, dtype=np.int64)
        for pe in range(npes):
            first, last = min(pe * per_pe, args.bins), min((pe + 1) * per_pe, args.bins)
            if last > first:
                shmem.get(gathered[first:last], counts, pe)   # size = min of both lengths
        if not np.array_equal(gathered, reference):
            print(f"FAILED: gathered histogram {gathered.tolist()} != numpy {reference.tolist()}")
            ok = False
        else:
            print(f"histogram of {npes} x {args.samples} samples, {args.bins} bins over {npes} PE(s) "
                  f"({per_pe} per PE), matches numpy.histogram:")
            scale = 50 / max(1, gathered.max())
            for b in range(args.bins):
                owner = b // per_pe
                bar = "#" * round(gathered[b] * scale)
                print(f"  [{edges[b]:+5.1f}, {edges[b + 1]:+5.1f})  PE {owner}  {gathered[b]:7d} {bar}")

    shmem.barrier_all()  # keep `counts` alive until PE 0 has read every slice
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
