"""Port of shmem4py's demo/lock.py: a counter on PE 0 updated with get + put under a lock.

The read-modify-write is not atomic, so only the lock keeps updates from being lost:
after ROUNDS increments by every PE the counter is exactly ROUNDS * n_pes().
Prints ``OK pe=<me>``.
"""

import numpy as np

import pyshmem as shmem

ROUNDS = 25
mype, npes = shmem.my_pe(), shmem.n_pes()

lock = shmem.new_lock()
val = np.array([0], dtype='i')          # local
count = shmem.array([0], dtype='i')     # symmetric; PE 0's copy is the counter

shmem.barrier_all()
for _ in range(ROUNDS):
    shmem.set_lock(lock)
    shmem.get(val, count, 0)
    val[0] += 1
    shmem.put(count, val, 0)
    shmem.clear_lock(lock)              # quiet, then release: the put is visible to the next holder

shmem.barrier_all()
if mype == 0:
    assert count[0] == ROUNDS * npes, f"counter is {count[0]}, expected {ROUNDS * npes}"
    print(f"count = {count[0]}", flush=True)

shmem.barrier_all()
shmem.del_lock(lock)
shmem.free(count)
print(f"OK pe={mype}", flush=True)
