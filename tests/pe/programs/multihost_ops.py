"""Run by tests/pe/test_multihost.py on PEs split over two "hosts" (network namespaces).

Checks that PEs of the same host share memory (ptr is an address) and PEs of the other
host do not (ptr is None, UCX reaches them), then put/get/atomics/signals and a barrier
across the hosts, then allocations (each one a barrier) interleaved with puts to the
other host. The first remote operation of the first PE of each host is an arrival it
waits for (the allocation barrier's first round goes to a PE of its own host), so an
arrival that UCX leaves unprogressed hangs here. Prints "OK pe=<k> host=<node id>".
"""

import os

import numpy as np

import pyshmem as shmem

me, n = shmem.my_pe(), shmem.n_pes()
per_host = int(os.environ["TEST_PES_PER_HOST"])
host = me // per_host
x = shmem.zeros(8, np.int64)
for pe in range(n):
    same = pe // per_host == host
    assert (shmem.ptr(x, pe) is not None) == same, (me, pe, same)
    assert shmem.pe_accessible(pe)

other = (me + per_host) % n  # the same slot on the other host
shmem.put(x[:4], np.arange(4, dtype=np.int64) + 100 * me, other)
sig = shmem.new_signal()
shmem.barrier_all()
assert x[:4].tolist() == [100 * other + i for i in range(4)], x
got = np.zeros(4, np.int64)
shmem.get(got, x[:4], other)
assert got.tolist() == [100 * me + i for i in range(4)], got
counter = shmem.zeros(1, np.int64)
shmem.barrier_all()
for _ in range(50):
    shmem.atomic_add(counter, 1, 0)
assert shmem.atomic_compare_swap(x[4:5], 0, me + 1, other) in (0, other + 1)
shmem.put_signal(x[5:6], np.array([7 + me], np.int64), other, sig, 1, shmem.SIGNAL_ADD)
shmem.signal_wait_until(sig, shmem.CMP_GE, 1)
assert x[5] == 7 + other, x
shmem.barrier_all()
if me == 0:
    assert counter[0] == 50 * n, counter
for round_ in range(3):
    y = shmem.zeros(16, np.int32)
    shmem.put(y[:2], np.array([me, round_], np.int32), other)
    shmem.barrier_all()
    assert y[:2].tolist() == [other, round_], (round_, y)
    shmem.free(y)
print(f"OK pe={me} host={host}")
