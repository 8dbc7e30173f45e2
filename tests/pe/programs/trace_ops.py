"""A small traced job (run with PYSHMEM_TRACE=dir): every PE puts 32 bytes and
put_signals 64 bytes to its right-hand neighbour, adds 1 to a counter on PE 0, waits for
its own signal, then a sum_reduce and a barrier. tests/pe/test_trace.py checks the
merged timeline against exactly these operations. Prints OK pe=<k>."""

import numpy as np

import pyshmem as shmem

me, n = shmem.my_pe(), shmem.n_pes()
right = (me + 1) % n
x = shmem.zeros(16, np.int64)
ctr = shmem.zeros(1, np.int64)
sig = shmem.new_signal()
shmem.barrier_all()
shmem.put(x[:4], np.full(4, me, np.int64), right)
shmem.atomic_add(ctr, 1, 0)
shmem.put_signal(x[8:], np.arange(8, dtype=np.int64), right, sig, 1, shmem.SIGNAL_ADD)
shmem.signal_wait_until(sig, shmem.CMP.GE, 1)
y = shmem.zeros(16, np.int64)
shmem.sum_reduce(y, x)
shmem.barrier_all()
if me == 0:
    assert ctr[0] == n, ctr
print(f"OK pe={me}", flush=True)
