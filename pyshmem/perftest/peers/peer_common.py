"""What every peer program of ``perftest compare`` shares: options, batch sizes, data.

Imported by the peer programs as a sibling file (they run as scripts, and the shmem4py
one must not import pyshmem), so it depends on NumPy only.
"""

import argparse
import json
import sys

import numpy as np


def parse_args(doc, argv, extra=None):
    """The options every peer takes; `extra(ap)` adds the program's own."""
    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    if extra:
        extra(ap)
    ap.add_argument("--sizes", required=True, help="comma-separated message sizes in bytes")
    ap.add_argument("--figures", default="put_latency,ping_pong,put_bw")
    ap.add_argument("--iters", type=int, default=2000, help="iterations per batch up to 4 KiB")
    ap.add_argument("--batches", type=int, default=7)
    ap.add_argument("--window", type=int, default=64, help="non-blocking puts per quiet in put_bw")
    ap.add_argument("--inject-error", action="store_true", help=argparse.SUPPRESS)  # compare's self-test
    ap.add_argument("--out", required=True, help="JSON lines written by PE 0")
    a = ap.parse_args(argv)
    a.sizes = [int(s) for s in a.sizes.split(",")]
    a.figures = a.figures.split(",")
    return a


def iterations(base, nbytes):
    """Iterations of one batch: `base` up to 4 KiB, fewer for larger messages (>= 4)."""
    return max(4, base * 4096 // max(nbytes, 4096))


def pattern(nbytes, salt):
    """The bytes a figure moves (different for every size)."""
    return ((np.arange(nbytes, dtype=np.uint32) * 131 + salt * 7 + 1) & 0xFF).astype(np.uint8)


def received(a, arr):
    """What the check compares: the data, or with --inject-error a copy with a flipped bit."""
    arr = np.array(arr, copy=True)
    if a.inject_error:
        arr[0] ^= 0x40
    return arr


def finish(a, who, rank, bad, results):
    """Reports wrong data (`bad`: what failed), writes the results on rank 0.

    Returns:
        int: the exit status, 1 when data was wrong.
    """
    if bad:
        print(f"{who} on rank {rank}: wrong data after " + ", ".join(bad), file=sys.stderr, flush=True)
    if rank == 0:
        with open(a.out, "w") as f:
            for r in results:  # {"figure", "bytes", "value", "unit"}
                f.write(json.dumps(r) + "\n")
    return 1 if bad else 0
