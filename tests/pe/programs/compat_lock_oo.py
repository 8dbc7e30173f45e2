"""Port of shmem4py's demo/lock_oo.py: the same locked counter with the ``Lock`` class.

Uses acquire()/release(), the non-blocking acquire(False) (True when acquired) and the
``with lock:`` form, then destroy() (twice: the second call does nothing).
Prints ``OK pe=<me>``.
"""

import numpy as np

import pyshmem as shmem

ROUNDS = 10
mype, npes = shmem.my_pe(), shmem.n_pes()

lock = shmem.Lock()
val = np.array([0], dtype='i')
count = shmem.array([0], dtype='i')


def bump():
    shmem.get(val, count, 0)
    val[0] += 1
    shmem.put(count, val, 0)


shmem.barrier_all()
for _ in range(ROUNDS):
    assert lock.acquire() is True
    bump()
    lock.release()

    while not lock.acquire(False):      # try-lock: True only when acquired
        pass
    bump()
    lock.release()

    with lock as entered:
        assert entered is None, "Lock.__enter__ returns None in shmem4py"
        bump()

shmem.barrier_all()
if mype == 0:
    assert count[0] == 3 * ROUNDS * npes, f"counter is {count[0]}, expected {3 * ROUNDS * npes}"
    print(f"count = {count[0]}", flush=True)

shmem.barrier_all()
lock.destroy()
lock.destroy()
shmem.free(count)
print(f"OK pe={mype}", flush=True)
