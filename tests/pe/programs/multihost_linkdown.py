"""tests/pe/test_multihost.py: PEs on two hosts stream operations to each other until the
test takes the link between the hosts down; every PE must then stop with an error naming
the PE it can no longer reach (PYSHMEM_TRANSPORT_TIMEOUT), never hang. TEST_LINKDOWN_OP
picks the operation: put (+ quiet, the default), get, or fetch_add (the last two wait
for the peer's answer)."""

import os

import numpy as np

import pyshmem as shmem

me, n = shmem.my_pe(), shmem.n_pes()
peer = (me + 1) % n
buf = shmem.zeros(1 << 18, dtype=np.float32)  # 1 MiB
src = np.full(buf.shape, me, dtype=np.float32)
shmem.barrier_all()
op = os.environ.get("TEST_LINKDOWN_OP", "put")
word = shmem.zeros(1, dtype=np.int64)
local = np.empty_like(buf)
for it in range(10**9):
    if op == "put":
        shmem.put(buf, src, peer)
        shmem.quiet()
    elif op == "get":
        shmem.get(local, buf, peer)
    else:
        shmem.atomic_fetch_add(word, 1, peer)
    if it == 20:
        print(f"TRANSFERRING pe={me}", flush=True)
print(f"UNEXPECTED pe={me}")
