"""put_nbi from Python: over UCX (PYSHMEM_REMOTE_ONLY=1) it returns before the source is
read, so pyshmem holds the source until quiet/barrier_all; over load/store it copies at
once. Checks values with temporaries as sources, that the hold is released by each
completing call, and that a long run of put_nbi without quiet holds a bounded number
of sources. Prints "OK pe=<k>"."""

import os
import sys

import numpy as np

import pyshmem as shmem
from pyshmem.runtime import order_check_seed

me, n = shmem.my_pe(), shmem.n_pes()
peer = (me + 1) % n
# Sources are read after put_nbi returns over UCX, and under the ordering check.
deferred = (os.environ.get("PYSHMEM_REMOTE_ONLY") == "1" or order_check_seed() != "") and n > 1
x = shmem.zeros(64, dtype=np.int64)
shmem.barrier_all()

# temporaries as sources: freed by Python at once, unless pyshmem holds them
for i in range(64):
    shmem.put_nbi(x[i:i + 1], np.array([1000 * me + i], dtype=np.int64), peer)
shmem.quiet()
shmem.barrier_all()
left = (me - 1) % n
assert (x == 1000 * left + np.arange(64)).all(), x
shmem.barrier_all()  # everyone checked before x is overwritten below

# the hold: +1 reference while in flight, released by quiet, barrier_all, clear_lock
src = np.full(64, 7, dtype=np.int64)
base = sys.getrefcount(src)
for complete in (shmem.quiet, shmem.barrier_all):
    shmem.put_nbi(x, src, peer)
    assert sys.getrefcount(src) == base + (1 if deferred else 0), (sys.getrefcount(src), base)
    complete()
    assert sys.getrefcount(src) == base, (complete.__name__, sys.getrefcount(src), base)
lock = shmem.zeros(1, dtype=np.int64)
shmem.set_lock(lock)
shmem.put_nbi(x, src, peer)
shmem.clear_lock(lock)
assert sys.getrefcount(src) == base
shmem.barrier_all()

# many in flight without quiet: bounded (pyshmem completes them early past its limit)
for i in range(5000):
    shmem.put_nbi(x[:1], src[:1], peer)
held = sys.getrefcount(src) - base  # each held slice view keeps src alive
assert held <= 4096, held
shmem.barrier_all()
assert sys.getrefcount(src) == base

# a bytearray source cannot be resized while held
ba = bytearray(np.arange(8, dtype=np.int64).tobytes())
shmem.put_nbi(x[:8], np.frombuffer(ba, dtype=np.int64), peer)
shmem.quiet()
shmem.barrier_all()
assert (x[:8] == np.arange(8)).all(), x[:8]
print(f"OK pe={me}")
