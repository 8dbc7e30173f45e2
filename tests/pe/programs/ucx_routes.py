"""Under PYSHMEM_REMOTE_ONLY=1 no peer is load/store reachable: ptr() is None for peers,
pe_accessible() is True (UCX reaches them), and the core says it uses UCX."""

import numpy as np

import pyshmem as shmem
from pyshmem._lib import lib

me, n = shmem.my_pe(), shmem.n_pes()
x = shmem.zeros(4, np.int64)
for pe in range(n):
    assert shmem.pe_accessible(pe)
    assert (shmem.ptr(x, pe) is None) == (pe != me), (pe, shmem.ptr(x, pe))
assert "ucx: available" in lib.transports()
# one put and one atomic across the "network", checked
shmem.put(x, np.full(4, me, np.int64), (me + 1) % n)
shmem.fence()  # the put before the add on the same element (UCX may deliver them in either order otherwise)
shmem.atomic_add(x[3:], 10, (me + 1) % n)
shmem.barrier_all()
assert x.tolist() == [(me - 1) % n] * 3 + [(me - 1) % n + 10], x
print(f"OK pe={me}")
