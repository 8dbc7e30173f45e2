"""Collective allocation and free that differ on one PE, under PYSHMEM_DEBUG=1.

argv: <odd PE>. That PE asks for twice the bytes, and later frees another array than
the others. Every PE must get CollectiveMismatchError each time (printed as
``MISMATCH pe=<k> [<classes>]: <message>`` and ``FREE-MISMATCH pe=<k> ...``). The checks
run before anything changes, so the job then goes on: matched frees, a put around the
ring and a barrier (``OK pe=<k>``).
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
b = shmem.zeros(4, dtype=np.int64)
try:
    shmem.free(b if me == odd else a)
except shmem.CollectiveMismatchError as exc:
    print(f"FREE-MISMATCH pe={me}: {exc}", flush=True)
else:
    print(f"NO-MISMATCH pe={me} (free)", flush=True)
shmem.free(b)
shmem.put(a, np.full(4, me, dtype=np.int64), (me + 1) % npes)
shmem.barrier_all()
assert (a == (me - 1) % npes).all(), f"PE {me}: {a}"
shmem.barrier_all()
shmem.free(a)
print(f"OK pe={me}", flush=True)
