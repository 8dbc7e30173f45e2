"""Collective allocation with a different size on one PE, under PYSHMEM_DEBUG=1.

argv: <odd PE>. That PE asks for twice the bytes. Every PE must get
CollectiveMismatchError (printed as ``MISMATCH pe=<k> <type>: <message>``); the
check runs before anything is allocated, so the job then goes on: a matched
allocation, a put around the ring and a barrier (``OK pe=<k>``).
"""

import sys

import numpy as np

import pyshmem as shmem

odd = int(sys.argv[1])
me, npes = shmem.my_pe(), shmem.n_pes()
try:
    shmem.zeros(8 * (2 if me == odd else 1), dtype=np.int64)
except shmem.CollectiveMismatchError as exc:
    bases = ",".join(c.__name__ for c in type(exc).__mro__)
    print(f"MISMATCH pe={me} [{bases}]: {exc}", flush=True)
else:
    print(f"NO-MISMATCH pe={me}", flush=True)

a = shmem.zeros(4, dtype=np.int64)
shmem.put(a, np.full(4, me, dtype=np.int64), (me + 1) % npes)
shmem.barrier_all()
assert (a == (me - 1) % npes).all(), f"PE {me}: {a}"
shmem.barrier_all()
shmem.free(a)
print(f"OK pe={me}", flush=True)
