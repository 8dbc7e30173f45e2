"""tests/pe/test_multihost.py: PEs on two hosts stream puts to each other until the test
takes the link between the hosts down; every PE must then stop with an error naming the
PE it can no longer reach (PYSHMEM_TRANSPORT_TIMEOUT), never hang."""

import numpy as np

import pyshmem as shmem

me, n = shmem.my_pe(), shmem.n_pes()
peer = (me + 1) % n
buf = shmem.zeros(1 << 18, dtype=np.float32)  # 1 MiB
src = np.full(buf.shape, me, dtype=np.float32)
shmem.barrier_all()
for it in range(10**9):
    shmem.put(buf, src, peer)
    shmem.quiet()
    if it == 20:
        print(f"TRANSFERRING pe={me}", flush=True)
print(f"UNEXPECTED pe={me}")
